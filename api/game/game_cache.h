/* A replica's copies of the games it changed or read last, so that a change
 * made against the version it holds skips reading the game from the store.
 * A copy is only a guess: the compare-and-set still checks the version and
 * the write id in the store, and a change that fails on a copy is run again
 * on the game as read from the store. Fixed size: a slot per hash of the id,
 * a newer game replaces the one in its slot. Thread-safe. */
#ifndef CHESSD_API_GAME_GAME_CACHE_H
#define CHESSD_API_GAME_GAME_CACHE_H

#include <stdbool.h>

#include "../../store/game_record.h"

/* Sets the number of slots (0: no copies kept) on first use; later calls do nothing. */
void game_cache_setup(unsigned slots);

/* Copies the kept game id into *out; false when none is kept. A copy of
 * version V is the stored V when a write made on it succeeds: a version is
 * made by one write only, unless Redis lost writes, and the random write id
 * tells such twins apart. */
bool game_cache_get(const char *id, game_record_t *out);

/* Keeps a copy of r (its id and version set). */
void game_cache_put(const game_record_t *r);

/* Forgets game id. */
void game_cache_drop(const char *id);

typedef struct {
    unsigned long long hits, misses;
} game_cache_stats_t;

void game_cache_stats(game_cache_stats_t *out);

#endif
