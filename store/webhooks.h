/* Webhooks in Redis (webhooks.c): the subscriptions, each game's outboxes
 * (one list per subscription, filled by the game's own write), the due
 * index that any replica's deliverer claims from, and each subscription's
 * delivery log. The protocol below says who calls what and why no event is
 * lost when a replica dies. */
#ifndef CHESSD_STORE_WEBHOOKS_H
#define CHESSD_STORE_WEBHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The keys of the {webhooks} slot: the due index (sorted set, members
 * "<game> <subscription>" scored by the Redis time they are due), the games
 * that have subscriptions (set), each subscription's record (hash) and
 * log (list), and each owner's subscriptions (set). */
#define STORE_WEBHOOKS_DUE_KEY "chessd:{webhooks}:due"
#define STORE_WEBHOOKS_GAMES_KEY "chessd:{webhooks}:games"
#define STORE_WEBHOOKS_SUB_PREFIX "chessd:{webhooks}:sub:"
#define STORE_WEBHOOKS_LOG_PREFIX "chessd:{webhooks}:log:"
#define STORE_WEBHOOKS_OWNER_PREFIX "chessd:{webhooks}:owner:"
#define STORE_WEBHOOKS_SWEEP_KEY "chessd:{webhooks}:sweep"

enum {
    STORE_WEBHOOK_ID_SIZE = 24,      /* "wh_" and 16 characters of base64url, and the NUL */
    STORE_WEBHOOK_URL_SIZE = 2049,   /* a destination of at most 2048 bytes */
    STORE_WEBHOOK_SECRET_SIZE = 96,  /* "whsec_" and the base64 of up to 64 bytes */
    STORE_WEBHOOK_OWNER_SIZE = 65,   /* a service key's name */
    STORE_WEBHOOK_SCOPE_SIZE = 8,    /* "game", "bulk" or "key" */
    STORE_WEBHOOK_TARGET_SIZE = 65,  /* the game, the bulk or the key */
    STORE_WEBHOOKS_PER_GAME = 8,     /* subscriptions one game carries at most */
    STORE_WEBHOOK_LOG_KEEP = 100,    /* attempts a log keeps, the newest */
    STORE_WEBHOOK_LOG_LINES_MAX = 16, /* log lines one settle writes at most */
    /* A game's or a bulk's subscription lives this long (s) after it was
     * made or last delivered to, longer than any game waits for a move. */
    STORE_WEBHOOK_GAME_SUB_TTL = 60 * 86400,
};

/* A subscription: where to, which kinds of event (a mask the caller
 * defines), the signing secret, who owns it (a service key's name), what
 * it covers (its scope and that scope's id) and when it was made. */
typedef struct {
    char id[STORE_WEBHOOK_ID_SIZE];
    char url[STORE_WEBHOOK_URL_SIZE];
    unsigned kinds;
    char secret[STORE_WEBHOOK_SECRET_SIZE];
    char owner[STORE_WEBHOOK_OWNER_SIZE];
    char scope[STORE_WEBHOOK_SCOPE_SIZE];
    char target[STORE_WEBHOOK_TARGET_SIZE];
    int64_t created_ms;
} store_webhook_sub_t;

/* The protocol.
 *   1. A game made with subscriptions: store_webhook_game_add(id), then its
 *      creation write carries their list (store_game_change_t.webhooks),
 *      kept in the game's hash and read back by every load.
 *   2. A change whose event a subscription wants: the write appends the
 *      event to that subscription's outbox (a list in the game's slot) in
 *      the same atomic step, and marks "<game> <sub>" due now in the index
 *      unless it is there (in the script on one node; on a Cluster, where
 *      the index is in another slot, by store_webhook_mark_due right after).
 *   3. Any replica: store_webhook_claim takes due entries, each moved to
 *      now + lease; for each, store_webhook_head, a delivery (or none when
 *      it is not yet time to retry), store_webhook_done (which may read
 *      the next event, delivered in turn while the lease leaves time for
 *      a whole attempt), then store_webhook_settle_log with when the entry
 *      is next due (0: nothing is left) and the attempts' log lines, and
 *      after a removal store_webhook_recheck.
 *   4. Now and then, one replica: store_webhook_sweep marks due every
 *      outbox that holds events, and forgets games whose outboxes are gone.
 * Why: the event is in the outbox once the move is, whatever happens next.
 * A replica that dies before step 2's marking leaves the outbox to the
 * sweep; one that dies mid-delivery leaves its claim to come due when its
 * lease passes, and the event is sent again with the same id. A marking
 * never moves an entry that is there: one claimed is being delivered, and
 * its deliverer goes on with the next event; one waiting for a retry
 * waits with the events behind it. A settle changes an entry only while
 * it still holds its claim. An event appended after the deliverer read the
 * outbox's length, and marked while the entry was still there, is found by
 * the recheck that follows a removal. */

/* The outbox of subscription sub in game id: "chessd:whout:{<id>}:<sub>";
 * false when it would not fit size. */
bool store_webhook_outbox_key(const char *id, const char *sub, char *key, size_t size);
/* The retry state of game id's subscriptions: "chessd:whretry:{<id>}". */
bool store_webhook_retry_key(const char *id, char *key, size_t size);

/* The scopes a subscription covers: one game, every game of a bulk, or
 * every game its owner's key creates. */
#define STORE_WEBHOOK_SCOPE_GAME "game"
#define STORE_WEBHOOK_SCOPE_BULK "bulk"
#define STORE_WEBHOOK_SCOPE_KEY "key"

/* Stores a subscription (replacing one of its id); one of scope "key" is
 * added to its owner's set too, so the set lists only the key's own (a
 * game's or bulk's is read by its id). ttl_seconds 0 keeps it until
 * deleted. */
store_status_t store_webhook_sub_put(store_t *store, const store_webhook_sub_t *sub, unsigned ttl_seconds);
/* Pushes the expiry of subscription id (one of a game or bulk) to
 * ttl_seconds from now; one of a key (no expiry) is left as it is. */
store_status_t store_webhook_sub_touch(store_t *store, const char *id, unsigned ttl_seconds);
/* Reads subscription id; STORE_ENOT_FOUND when there is none. */
store_status_t store_webhook_sub_get(store_t *store, const char *id, store_webhook_sub_t *out);
/* Deletes subscription id, and its log, when owner owns it (STORE_ENOT_FOUND
 * otherwise: nothing is deleted). Its outboxes drain into nothing. */
store_status_t store_webhook_sub_delete(store_t *store, const char *id, const char *owner);
/* Up to max of owner's subscription ids of scope "key", into out; *count
 * says how many. */
store_status_t store_webhook_subs_of(store_t *store, const char *owner, char (*out)[STORE_WEBHOOK_ID_SIZE],
                                     unsigned max, unsigned *count);

/* Step 1: game id has subscriptions. */
store_status_t store_webhook_game_add(store_t *store, const char *id);
/* Step 1 for count games at once (a bulk's), in one command. */
store_status_t store_webhook_games_add(store_t *store, const char *const *ids, unsigned count);
/* Step 2 on a Cluster: the count subscriptions of subs marked due at now_ms
 * for game id (added when not there, else left as they are). */
store_status_t store_webhook_mark_due(store_t *store, const char *id, const char *const *subs, unsigned count,
                                      int64_t now_ms);

/* A due entry claimed: the game, the subscription, and its score now. */
typedef struct {
    char game[STORE_ENGINE_ID_SIZE];
    char sub[STORE_WEBHOOK_ID_SIZE];
    int64_t claim_ms;
} store_webhook_due_t;

/* Step 3: claims up to max entries due by Redis's clock (the most overdue
 * first), each moved to now + lease_ms. *now_ms is Redis's clock. */
store_status_t store_webhook_claim(store_t *store, unsigned lease_ms, unsigned max, store_webhook_due_t *out,
                                   unsigned *count, int64_t *now_ms);

/* Where an outbox's first event stands: how many times it was tried and
 * failed, when it first failed and when it is next to be tried (0 all:
 * never tried). */
typedef struct {
    unsigned attempts;
    int64_t first_failed_ms, next_ms;
} store_webhook_retry_t;

/* The first event of the outbox (malloc'd into *entry, NUL added; NULL
 * when the outbox is empty), how many it holds, and its retry state. */
store_status_t store_webhook_head(store_t *store, const char *id, const char *sub, char **entry, size_t *length,
                                  unsigned *held, store_webhook_retry_t *retry);
/* The first event of an outbox as head or done read it: entry malloc'd
 * (NUL added; NULL when the outbox is empty), held the outbox's length. */
typedef struct {
    char *entry;
    size_t length;
    unsigned held;
    store_webhook_retry_t retry;
} store_webhook_head_t;

/* After a try of the first event (entry, as head read it): removed when
 * retry is NULL (delivered, or dropped), else its retry state set. *left
 * says how many events the outbox holds after. A first event other than
 * entry (another replica got there first) is left as it is. When next is
 * not NULL, the outbox's first event after that is read into it, as
 * store_webhook_head would, in the same step (free next->entry). */
store_status_t store_webhook_done(store_t *store, const char *id, const char *sub, const char *entry,
                                  size_t length, const store_webhook_retry_t *retry, unsigned *left,
                                  store_webhook_head_t *next);
/* Settles a claimed entry: due again at due_ms, or removed (0), while it
 * still holds its claim (*settled, when not NULL, says whether it did);
 * and the line_count lines (at most STORE_WEBHOOK_LOG_LINES_MAX, oldest
 * first; "" lines skipped) prepended to the subscription's log, the newest
 * STORE_WEBHOOK_LOG_KEEP kept, expiring log_ttl_seconds later (0: never).
 * One step: both are of the {webhooks} slot. */
store_status_t store_webhook_settle_log(store_t *store, const char *id, const char *sub, int64_t claim_ms,
                                        int64_t due_ms, const char *const *lines, unsigned line_count,
                                        unsigned log_ttl_seconds, bool *settled);
/* After a removal: the outbox marked due again (*marked) when it holds an
 * event after all. */
store_status_t store_webhook_recheck(store_t *store, const char *id, const char *sub, bool *marked);

/* The newest max lines of the log, newest first (each malloc'd; free them
 * and the array with store_webhook_log_free). */
store_status_t store_webhook_log_read(store_t *store, const char *sub, unsigned max, char ***lines,
                                      unsigned *count);
void store_webhook_log_free(char **lines, unsigned count);

/* Step 4: one pass over up to max games from cursor (0: the start; *next
 * is 0 once the pass is over). Each outbox that holds events is marked due
 * (added when not there, never moved), and a game whose hash and outboxes
 * are gone is forgotten. *marked counts the outboxes marked. */
store_status_t store_webhook_sweep(store_t *store, uint64_t cursor, unsigned max, uint64_t *next,
                                   unsigned *marked);
/* Whether this caller holds the sweep for the next ttl_ms (one replica
 * sweeps at a time; *held false when another does). */
store_status_t store_webhook_sweep_lock(store_t *store, unsigned ttl_ms, bool *held);

#endif
