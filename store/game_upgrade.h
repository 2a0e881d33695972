/* The store's part of the upgrade pass (game_upgrade.c): versions before
 * the deadline index gave every active game a TTL (--active-ttl, 7 days);
 * the pass walks every game key on every node, removes that TTL from the
 * active ones and indexes their deadlines. Claimed per Redis, twice. */
#ifndef CHESSD_STORE_GAME_UPGRADE_H
#define CHESSD_STORE_GAME_UPGRADE_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* A pass is named by its generation, 1 to STORE_UPGRADE_GENERATION_MAX - 1
 * characters of A-Z a-z 0-9 . : _ - (any other: STORE_ENOT_FOUND). Its
 * state, "<passes done> <Redis time the next may start>", is under
 * STORE_UPGRADE_KEY_PREFIX "pass:<generation>", and the lease of the
 * replica running one (its owner's name, with a PX) under "lease:...". A
 * new generation runs anew on every Redis: the caller names one for what
 * the index must hold (api/game/upgrade.h). */
#define STORE_UPGRADE_KEY_PREFIX "chessd:{upgrade}:deadline-"
enum { STORE_UPGRADE_GENERATION_MAX = 64 };

/* A walk over every game key of every node that holds games (each master
 * of a Cluster, in the order of the slots they serve), by SCAN: a key there
 * all along is met at least once, a key made meanwhile maybe not. Zero it
 * to start. */
typedef struct {
    unsigned node_slot; /* the first slot of the node being walked (0 on one node) */
    char cursor[24];    /* its SCAN cursor ("" : not begun) */
    bool done;
} store_game_scan_t;

/* One SCAN page (about count keys) of the walk: fn(ctx, id) for each game
 * met (a game of the first format by its id too), then the walk moves on;
 * scan->done once every node has been walked. */
store_status_t store_game_scan(store_t *store, store_game_scan_t *scan, unsigned count,
                               void (*fn)(void *ctx, const char *id), void *ctx);

/* Removes the expiry of game id's keys (PERSIST) while the game is at
 * version: STORE_OK, STORE_ECONFLICT (it moved on: read it again), or
 * STORE_ENOT_FOUND (gone). */
store_status_t store_game_keep(store_t *store, const char *id, uint64_t version);

/* What store_upgrade_claim found: run pass number `pass` (this replica
 * holds the lease now), wait wait_ms before asking again (the next pass is
 * not due, or another replica runs one), or nothing is left to do. */
typedef enum { STORE_UPGRADE_RUN = 0, STORE_UPGRADE_WAIT, STORE_UPGRADE_DONE } store_upgrade_step_t;

typedef struct {
    store_upgrade_step_t step;
    unsigned pass;
    int64_t wait_ms;
} store_upgrade_t;

/* Claims the next of generation's `passes` passes for owner (a name unique
 * to this replica) for lease_ms, when it is due; one step on the {upgrade}
 * slot. */
store_status_t store_upgrade_claim(store_t *store, const char *generation, const char *owner, unsigned lease_ms,
                                   unsigned passes, store_upgrade_t *out);
/* Holds owner's lease lease_ms more; STORE_ECONFLICT when it is not
 * owner's any more (it lapsed and another replica took it: stop). */
store_status_t store_upgrade_renew(store_t *store, const char *generation, const char *owner, unsigned lease_ms);
/* Records owner's pass `pass` done; the next may start gap_ms later.
 * STORE_ECONFLICT when the lease is not owner's (nothing recorded). */
store_status_t store_upgrade_done(store_t *store, const char *generation, const char *owner, unsigned pass,
                                  unsigned gap_ms);

#endif
