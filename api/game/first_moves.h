/* The sweep of first-move deadlines: a thread on every replica with a store
 * that finds the timed games whose first-move grace has passed (the sorted
 * set store.h's store_first_move_due_* keep) and reads each through the game
 * service, which aborts it and announces the abort on its stream, whether or
 * not anyone follows or reads the game. A deadline that moved (a takeback
 * restarted the turn) is recorded again; one no longer pending is dropped.
 * Replicas sweep side by side: the compare-and-set makes a second abort a
 * no-op. */
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
