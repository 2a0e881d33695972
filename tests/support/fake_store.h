/* A fake store: store.h's functions over memory, no Redis, for tests that
 * drive the game service and check what it writes. Linked in place of
 * store/'s Redis code (before the archive of the rest), so the Makefile
 * keeps it out of the CUnit runner, which links the real store. */
#ifndef CHESSD_TESTS_SUPPORT_FAKE_STORE_H
#define CHESSD_TESTS_SUPPORT_FAKE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../store/store.h"

enum { FAKE_STORE_GAMES = 32, FAKE_STORE_LEGACY = 4, FAKE_STORE_ANSWERS = 64, FAKE_STORE_KEY_MAX = 400 };

/* The fake's modes, bits of store->mode: writes refused as Redis being
 * down; every write losing a version race; the clock moving
 * FAKE_STORE_CLOCK_STEP_MS at each load and each write. */
enum { FAKE_STORE_WRITES_UNAVAILABLE = 1, FAKE_STORE_WRITES_CONFLICT = 2, FAKE_STORE_CLOCK_MOVES = 4 };

/* How far the clock moves at each load and write under
 * FAKE_STORE_CLOCK_MOVES, and how far from a change's time a write may come
 * (store/game_write.c's script: a second). */
#define FAKE_STORE_CLOCK_STEP_MS 700
#define FAKE_STORE_WRITE_TOLERANCE_MS 1000

/* A malloc'd byte string (NULL: none yet, read as empty). */
typedef struct {
    char *bytes;
    size_t length;
} fake_store_text_t;

/* A game as store/ keeps it: the hash (version, state, hlen, meta), the
 * move list and the history. */
typedef struct {
    char id[FAKE_STORE_KEY_MAX];
    bool used;
    uint64_t version;
    fake_store_text_t state, moves, history, meta; /* meta: the hash's tags and metadata text */
    unsigned history_count;
    char write_id[STORE_WRITE_ID_SIZE];
    int64_t written_at_ms; /* the clock when it was last written */
} fake_store_game_t;

/* A kept answer (key: scope "\x1f" client key) or a record of the first
 * format (key: id). */
typedef struct {
    char key[FAKE_STORE_KEY_MAX];
    char *data; /* malloc'd, NUL-terminated; NULL: slot free */
    size_t length;
    uint64_t version;
} fake_store_slot_t;

/* Called with a write's game as stored before it (not a new game) and the
 * state text it writes, at now_ms; then with the game as written. */
typedef void (*fake_store_before_fn)(void *ctx, const fake_store_game_t *before, const char *state,
                                     size_t state_length, int64_t now_ms);
typedef void (*fake_store_after_fn)(void *ctx, const fake_store_game_t *after, const store_game_change_t *change);

/* The one fake store (store_open returns it; store_close empties it). A
 * test reads its slots and sets its mode, clock and checks directly. */
struct store {
    fake_store_game_t games[FAKE_STORE_GAMES];
    fake_store_slot_t legacy[FAKE_STORE_LEGACY];
    fake_store_slot_t answers[FAKE_STORE_ANSWERS];
    unsigned mode;
    int64_t now_ms; /* Redis's clock (TIME), Unix milliseconds */
    store_stats_t stats;
    fake_store_before_fn before_write;
    fake_store_after_fn after_write;
    void *check_ctx;
};

/* The game stored under id, or NULL. */
fake_store_game_t *fake_store_find_game(store_t *store, const char *id);

/* Stores a copy of a record of the first format (JSON) under id; false
 * when the slots are full or the id too long. */
bool fake_store_put_legacy(store_t *store, const char *id, const char *json, size_t length, uint64_t version);

#endif
