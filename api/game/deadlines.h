/* The deadline sweep: a thread on every replica with a store claims the
 * games whose deadline has come (store/deadlines.h: a flag, a first-move
 * grace, any game_flag_deadline) and reads each through the game service.
 * The read ends the game and announces it, whether or not anyone follows it;
 * an ending whose feed step was missed is put on the feed. */
#ifndef CHESSD_API_GAME_DEADLINES_H
#define CHESSD_API_GAME_DEADLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "service.h"

typedef struct deadlines deadlines_t;

/* Starts the sweep over games's store every sweep_ms (0: 250). NULL when a
 * thread or memory runs out. */
deadlines_t *deadlines_start(const game_svc_config_t *games, unsigned sweep_ms);

/* Stops and joins the sweep, frees it. NULL is fine. */
void deadlines_stop(deadlines_t *sweep);

/* What the sweep counted, and the finished-games feed's length as it read
 * it last (every few seconds: a scrape never asks Redis). */
typedef struct {
    uint64_t claimed;     /* deadlines this replica took up */
    bool feed_known;      /* feed_length has been read */
    uint64_t feed_length; /* games on the feed */
} deadlines_stats_t;

/* sweep NULL: all zero. */
void deadlines_stats(deadlines_t *sweep, deadlines_stats_t *out);

#endif
