/* A game that ended, put on the finished-games feed (finished.c): the
 * summary the feed keeps (store/finished_feed.h) made from its record, the
 * feed's step of store/deadlines.h's protocol, and the count of games
 * added. Called by the write that ends a game, and by the sweep. */
#ifndef CHESSD_API_GAME_FINISHED_H
#define CHESSD_API_GAME_FINISHED_H

#include <stdint.h>

#include "../../store/finished_feed.h"
#include "service.h"

/* When a sweep looks again at an ending whose feed step did not happen
 * (its writer died, or Redis was away): this long after the ending write. */
enum { GAME_FINISHED_RETRY_MS = 5000 };

/* The feed's summary of r (over): its id, state, result, termination and
 * the time of its last write, its end. */
void game_finished_entry(const game_record_t *r, store_feed_entry_t *out);

/* Puts r (a game over) on the feed unless it is there, and clears its
 * deadline entry if it still holds index_score (0: none), in one step;
 * counts it (GAME_SVC_COUNTER_FEED_ADDED) when this call added it. */
store_status_t game_finished_record(const game_svc_config_t *c, const game_record_t *r, int64_t index_score);

#endif
