/* `chessd play --server URL --game ID --token T`: one side of a stored game,
 * played through the HTTP API (moves by POST /v1/games/{id}/moves with
 * expected_version, the opponent's moves from GET /v1/games/{id}/events,
 * read while standard input is read, with poll()). The token is sent in the
 * Authorization header and never printed. */
#ifndef CHESSD_API_PLAY_REMOTE_H
#define CHESSD_API_PLAY_REMOTE_H

#include "play.h"

/* Runs the session on standard input and output. Returns the exit status:
 * 0 after quit, the end of input or the end of the game; 1 when the server
 * cannot be used (unreachable, the game or the token refused). */
int play_remote_run(const char *server, const char *game_id, const char *token, const play_view_t *view);

#endif
