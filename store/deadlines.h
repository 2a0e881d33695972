/* The deadline index (deadlines.c): one sorted set of the games that end by
 * themselves at a time (a flag, a first-move grace, any deadline of
 * rules/game.h's game_flag_deadline), each scored no later than that time.
 * Every replica's sweep claims the entries due. The protocol below says who
 * calls what and why it never lets a deadline pass unseen. */
#ifndef CHESSD_STORE_DEADLINES_H
#define CHESSD_STORE_DEADLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* The index and the finished-games feed (finished_feed.h) share the hash
 * tag {games}, so one script may touch both on a Redis Cluster. A member is
 * a game id; its score a Redis time (Unix ms). */
#define STORE_DEADLINES_KEY "chessd:{games}:deadlines"
/* The first-move deadlines of the versions before the index (a member
 * "<id>:<version>" each): nothing writes them now; the upgrade pass
 * (game_upgrade.h) deletes the key once it has indexed every game. */
#define STORE_FIRST_MOVE_DUE_KEY "chessd:{first-move}:due"

/* The protocol. An entry's score is never later than its game's deadline
 * (the one of the game as stored now), so the sweep never finds a game too
 * late; it may find one early, and then only puts its entry right.
 *   1. Before a write that leaves the game with a deadline earlier than it
 *      had (or one where it had none), or that ends it:
 *      store_deadline_lower(id, due), due the new deadline, or for an
 *      ending a retry time (the feed's step, finished_feed.h, clears it).
 *      A write whose deadline is no earlier than the one before sends none.
 *   2. The game's write (store_game_write).
 *   3. Every replica, every round: store_deadline_claim takes the entries
 *      due and moves each to now + lease (its claim); for each, the game is
 *      read (which ends it when its deadline passed, and that write does 1
 *      and the feed's step), then store_deadline_settle(id, claim, d) with
 *      d its deadline now, or 0 once it is over (after the feed's step),
 *      gone, or has none.
 * Why: a lowering always changes the score (to less than it was), and a
 * settle changes an entry only while it still holds its claim, so a write
 * that lowered it meanwhile wins. A write that sent no lowering has a
 * deadline no earlier than the version before it; so the deadline a sweep
 * read is no later than any version written since. A replica that dies
 * mid-claim leaves its entries to come due again when the lease passes.
 * Ids are game ids (store_id_ok); any other is STORE_ENOT_FOUND, nothing
 * sent. */

/* Sets id's score to due, or to its score less 1 ms when that is earlier
 * (an entry is only ever lowered by a write); *score (when not NULL) is
 * the score set. */
store_status_t store_deadline_lower(store_t *store, const char *id, int64_t due_ms, int64_t *score);

/* An entry claimed: the game, and its score (its claim, now + lease). */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    int64_t claim_ms;
} store_deadline_t;

/* Claims up to max entries due by Redis's clock (the most overdue first):
 * each moved to now + lease_ms, in one step, so that no other replica takes
 * them meanwhile. *count says how many are in out; *now_ms (when not NULL)
 * is Redis's clock. A member that is no game id is removed. */
store_status_t store_deadline_claim(store_t *store, unsigned lease_ms, unsigned max, store_deadline_t *out,
                                    unsigned *count, int64_t *now_ms);

/* Moves id's entry to due_ms (0: removes it), only while it still holds
 * claim_ms; *settled (when not NULL) says whether it did. */
store_status_t store_deadline_settle(store_t *store, const char *id, int64_t claim_ms, int64_t due_ms,
                                     bool *settled);

/* Deletes STORE_FIRST_MOVE_DUE_KEY, once the upgrade pass has indexed
 * every game (game_upgrade.h). */
store_status_t store_deadline_drop_legacy(store_t *store);

/* The entry of id (STORE_ENOT_FOUND: none), for tests. */
store_status_t store_deadline_get(store_t *store, const char *id, int64_t *score);

#endif
