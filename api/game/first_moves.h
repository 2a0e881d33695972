/* The sweep of first-move deadlines: a thread on every replica with a store
 * finds the timed games whose first-move grace has passed (the sorted set of
 * store.h's store_first_move_due_*) and reads each through the game service.
 * The read aborts the game and announces it on its stream, whether or not
 * anyone follows or reads it. Replicas sweep side by side: the
 * compare-and-set makes a second abort a no-op. */
#ifndef CHESSD_API_GAME_FIRST_MOVES_H
#define CHESSD_API_GAME_FIRST_MOVES_H

#include "service.h"

typedef struct first_moves first_moves_t;

/* Starts the sweep over games's store every sweep_ms (0: 250). NULL when a
 * thread or memory runs out. */
first_moves_t *first_moves_start(const game_svc_config_t *games, unsigned sweep_ms);

/* Stops and joins the sweep, frees it. NULL is fine. */
void first_moves_stop(first_moves_t *sweep);

#endif
