/* The remote mode of `chessd play` (see play_remote.h). */
#include "play_remote.h"

int play_remote_run(const char *server, const char *game_id, const char *token, const play_view_t *view)
{
    (void)server; (void)game_id; (void)token; (void)view;
    fprintf(stderr, "chessd play: the remote mode is not built yet\n");
    return 1;
}
