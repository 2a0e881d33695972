/* The finished-games feed (finished_feed.c): a Redis Stream that holds each
 * game once it has ended, once, with a summary that outlives the game, for
 * a backend to read from a cursor (GET /v1/games/finished). It shares the
 * {games} hash tag with the deadline index (deadlines.h), whose entry of an
 * ending game is its pending mark. */
#ifndef CHESSD_STORE_FINISHED_FEED_H
#define CHESSD_STORE_FINISHED_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* The stream (entries "<ms>-<seq>": id, status, result, termination,
 * ended_at), and the games on it (sorted set: id, by the Redis time added),
 * which makes an add happen once; both trimmed to the retention. */
#define STORE_FEED_KEY "chessd:{games}:finished"
#define STORE_FEED_IDS_KEY "chessd:{games}:finished-ids"

enum {
    STORE_FEED_CURSOR_SIZE = 44, /* "<ms>-<seq>", two 64-bit numbers, and its NUL */
    STORE_FEED_WORD_SIZE = 32,   /* a status, result or termination name and its NUL */
    STORE_FEED_READ_MAX = 1000,  /* entries one read returns at most */
};

/* A game as the feed keeps it: where it stands (its cursor, set by a read),
 * its id and how it ended ("" termination: none), at what Redis time. */
typedef struct {
    char cursor[STORE_FEED_CURSOR_SIZE];
    char id[STORE_ENGINE_ID_SIZE];
    char status[STORE_FEED_WORD_SIZE], result[STORE_FEED_WORD_SIZE], termination[STORE_FEED_WORD_SIZE];
    int64_t ended_at_ms;
} store_feed_entry_t;

/* The feed's step of an ending (deadlines.h, step 1 then 2 made it
 * pending), in one atomic step on the {games} slot:
 *   1. the game is appended to the stream unless it was within the
 *      retention (so twice never, whoever retries); the stream is trimmed
 *      to retention_ms (XADD MINID ~) and the ids with it;
 *   2. its deadline entry is removed if it still holds index_score (the
 *      score the ending write's lowering set, or a sweep's claim; 0: none).
 * Every write that ends a game calls it after the write; a sweep that finds
 * an ended game's entry due calls it again (the writer died, or Redis was
 * away), so a game reaches the feed once despite crashes, on one node or a
 * Cluster, where the game and the feed lie in different slots. *added says
 * whether this call appended it. */
store_status_t store_game_finished(store_t *store, const store_feed_entry_t *game, uint64_t retention_ms,
                                   int64_t index_score, bool *added);

/* Whether text is a cursor a read takes: "<ms>-<seq>", each 1 to 20
 * decimal digits within 64 bits. */
bool store_feed_cursor_ok(const char *text);

/* Up to max (at most STORE_FEED_READ_MAX) entries after the cursor after
 * (NULL: from the oldest kept; older than the oldest kept: the same) into
 * out, oldest first; *count says how many. An entry this code did not
 * write is deleted, not returned. STORE_ENOT_FOUND: after is no cursor. */
store_status_t store_feed_read(store_t *store, const char *after, unsigned max, store_feed_entry_t *out,
                               unsigned *count);

/* The stream's length (XLEN): games kept on the feed now. */
store_status_t store_feed_length(store_t *store, uint64_t *length);

#endif
