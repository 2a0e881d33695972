/* store_game_clear() of store.h: what a loaded game owns, freed. In a file
 * of its own so that a program bringing its own store_* functions in place
 * of store_redis.c (the games fuzz target) frees loaded games with this
 * code, not a copy of it. */
#include <stdlib.h>
#include <string.h>

#include "store.h"

void store_game_clear(store_game_t *game)
{
    if (!game)
        return;
    free(game->state);
    free(game->history);
    free(game->moves);
    free(game->meta);
    free(game->legacy);
    memset(game, 0, sizeof *game);
}
