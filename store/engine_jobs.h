/* Engine jobs: the computer's turns in games against it, durable jobs in
 * Redis that any replica's worker may play (engine_jobs.c), and the
 * intents that find a turn lost (engine_due.c). The protocol below says
 * who calls what, in which order. */
#ifndef CHESSD_STORE_ENGINE_JOBS_H
#define CHESSD_STORE_ENGINE_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* The computer's turn in a game against it is a durable job in Redis, not a
 * thread on one replica: any replica's engine worker may do it, and one
 * that dies leaves it to another. A job is {game id, version v}: "the game
 * is at version v and the computer is to move" (game_record_engine_to_move
 * of the record at v). A job added waits in the backlog: one queue per
 * owner (the client whose request made the turn), served in turn, one job
 * of each owner in a round. A turn whose game would be lost within
 * STORE_ENGINE_URGENT_MS (its deadline) goes first, every other turn at
 * most. A claim moves the next one to a Redis Stream with one consumer
 * group (STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP), which holds the turns
 * being played and their leases. A turn is in the backlog or in the stream
 * once at most. An intent index finds the turns whose job was lost: a
 * sorted set (STORE_ENGINE_DUE_KEY) of members "<id>:<v>" scored by the
 * Redis time the move must be made by. A turn queued or claimed pushes its
 * intent STORE_ENGINE_RECHECK_MS on, so that one only waiting is not taken
 * for lost.
 *
 * The protocol, in this order:
 *   1. store_engine_due_set(id, v, due)  before the write that makes version
 *      v with the computer to move (due: that write's Redis time, a load's
 *      now_ms or store_engine_now, plus what the think may take and a margin);
 *   2. store_game_write(...)             the game at v, computer to move;
 *   3. store_engine_turn_add(id, v, turn) the job (store_engine_job_add: no owner).
 *   A worker: store_engine_job_claim; store_game_load, and unless the game
 *   is at v with the computer to move, ack and clear at once (the job is
 *   stale: a duplicate, a takeback, a resignation); else think, calling
 *   store_engine_job_touch within every lease (STORE_ENOT_FOUND: another
 *   worker has the job now; stop); write the move as v + 1 with
 *   expected_version v; then store_engine_job_ack and
 *   store_engine_due_clear(id, v) (after any outcome of the write but
 *   STORE_EUNAVAILABLE/STORE_EUNKNOWN: a conflict means another move won).
 *   Every replica, now and then: store_engine_now, store_engine_due_scan;
 *   for each intent due, load the game: at v with the computer to move, push
 *   the intent back (store_engine_due_set with a new due) and add the job
 *   again (a no-op when it is only waiting, or being played: *added says
 *   which); anything else (a later version, a game over or gone), clear it.
 * Why: the game write and the job cannot be one atomic step (on a cluster
 * they live in different slots), so a replica that dies between steps 2
 * and 3 leaves an intent without a job, which the scan finds; one that dies
 * between 1 and 2 leaves an intent for a version never made, which the scan
 * clears; a worker that dies while thinking leaves its job claimed, and
 * another claims it once its lease has passed. A job may so be done twice;
 * only one move lands, the one whose compare-and-set on v wins. Intents are
 * per version, so clearing v never drops the intent of a later turn.
 *
 * Every call goes over this thread's connection (store_command of
 * store_private.h): one node or the cluster node serving the keys' slot
 * (MOVED and ASK followed), TLS and AUTH as for games, the command timeout
 * and this thread's deadline (store_set_deadline) bound every wait. Ids are
 * game ids (1 to STORE_ENGINE_ID_SIZE - 1 characters of base64url) and
 * versions 1 to 2^53 - 1; any other is STORE_ENOT_FOUND, nothing sent. */
#define STORE_ENGINE_JOBS_KEY "chessd:{engine}:jobs"
#define STORE_ENGINE_GROUP "engines"
#define STORE_ENGINE_DUE_KEY "chessd:{engine}:due"
/* The backlog: turns queued (sorted set: member "<id>:<v>", its queued
 * time), the owners waiting (sorted set, scored by their place in the
 * round), each owner's queue (a sorted set under STORE_ENGINE_OWNER_PREFIX
 * and the owner's name, in the order queued), the urgent turns (sorted set
 * by deadline), each queued turn's owner (hash), the turns in flight (hash:
 * member, its entry id), the round's and the queues' counters, whether the
 * last turn served jumped the round, and the bell (a list a worker waits
 * on). */
#define STORE_ENGINE_QUEUED_KEY "chessd:{engine}:queued"
#define STORE_ENGINE_OWNERS_KEY "chessd:{engine}:owners"
#define STORE_ENGINE_OWNER_PREFIX "chessd:{engine}:owner:"
#define STORE_ENGINE_URGENT_KEY "chessd:{engine}:urgent"
#define STORE_ENGINE_OWNER_OF_KEY "chessd:{engine}:owner-of"
#define STORE_ENGINE_INFLIGHT_KEY "chessd:{engine}:in-flight"
#define STORE_ENGINE_ROUND_KEY "chessd:{engine}:round"
#define STORE_ENGINE_SEQ_KEY "chessd:{engine}:seq"
#define STORE_ENGINE_JUMPED_KEY "chessd:{engine}:jumped"
#define STORE_ENGINE_BELL_KEY "chessd:{engine}:bell"
/* The owner of turns added with none (the sweep's, store_engine_job_add's). */
#define STORE_ENGINE_OWNER_NONE "-"

enum {
    STORE_ENGINE_ENTRY_SIZE = 48,     /* a stream entry id, "<ms>-<seq>", and its NUL */
    STORE_ENGINE_CONSUMER_MAX = 200,  /* bytes of a consumer's name */
    STORE_ENGINE_JOBS_MAX = 10000,    /* the stream is trimmed to about this many entries (XADD MAXLEN ~) */
    STORE_ENGINE_OWNER_MAX = 64,      /* bytes of an owner's name, the NUL included */
    STORE_ENGINE_URGENT_MS = 10000,   /* a turn whose game would be lost this soon is served first */
    STORE_ENGINE_RECHECK_MS = 60000,  /* a turn queued or claimed: its intent looked at again after this */
    STORE_ENGINE_BELL_MAX = 64,       /* the bell's length at most */
};

/* A job, as claimed: the game, the version it was made for, its entry in
 * the stream (what touch and ack name), and how many times it has been
 * handed out, this claim included (1 for a new job; more for one whose
 * workers went quiet: a caller may give up on a job that keeps killing its
 * workers; 0 when Redis could not say). */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    uint64_t version;
    char entry_id[STORE_ENGINE_ENTRY_SIZE];
    unsigned deliveries;
} store_engine_job_t;

/* Who a turn is for and by when it must be played. */
typedef struct {
    const char *owner;   /* the client's name (1 to STORE_ENGINE_OWNER_MAX - 1 printable bytes, no space); NULL or "": none */
    int64_t deadline_ms; /* Redis time (Unix ms) by which the game is lost unless the computer moves; 0: none */
} store_engine_turn_t;

/* Queues the job {id, version} in its owner's queue (turn NULL: no owner,
 * no deadline) and rings the bell, one step; *added (when not NULL) says
 * whether it was queued: false when that turn is queued or in flight
 * already (a duplicate is dropped). STORE_EUNAVAILABLE: Redis did not
 * answer (the intent's scan adds it again). STORE_EFULL: Redis is full.
 * STORE_ENOT_FOUND: not a game id, version or owner; nothing sent. */
store_status_t store_engine_turn_add(store_t *store, const char *id, uint64_t version, const store_engine_turn_t *turn,
                                     bool *added);
store_status_t store_engine_job_add(store_t *store, const char *id, uint64_t version);

/* The bounds on the backlog: turns one owner may have queued, and
 * everyone (0: no bound). */
typedef struct {
    unsigned per_owner, total;
} store_engine_bounds_t;

typedef enum { STORE_ENGINE_BOUND_NONE = 0, STORE_ENGINE_BOUND_OWNER, STORE_ENGINE_BOUND_TOTAL } store_engine_bound_t;

/* store_engine_due_set of the computer's turn at version, one step with a
 * look at the bounds: when owner (NULL or "": none) has bounds->per_owner
 * turns queued, or everyone bounds->total, nothing is recorded and
 * *reached names the bound (STORE_OK all the same). */
store_status_t store_engine_turn_intent(store_t *store, const char *id, uint64_t version, int64_t due_ms,
                                        const char *owner, const store_engine_bounds_t *bounds,
                                        store_engine_bound_t *reached);

/* The backlog as it stands: Redis's clock, the turns queued and in
 * flight, when the oldest queued one was queued (Redis time; 0: none), the
 * owners waiting, and owner's queued turns (owner NULL or "": 0). */
typedef struct {
    int64_t now_ms;
    uint64_t queued, in_flight, owners, owner_queued;
    int64_t oldest_queued_ms;
} store_engine_backlog_t;

store_status_t store_engine_backlog(store_t *store, const char *owner, store_engine_backlog_t *out);

/* Removes consumer from the group (XGROUP DELCONSUMER) unless it owns a
 * pending entry (a turn left for its lease to bring back): a worker's
 * clean stop. STORE_OK also when there was none, or it was kept. */
store_status_t store_engine_consumer_remove(store_t *store, const char *consumer);
/* Removes up to max consumers idle past idle_ms that own no pending entry
 * (workers gone without a clean stop); *removed says how many. */
store_status_t store_engine_consumers_prune(store_t *store, unsigned idle_ms, unsigned max, unsigned *removed);

/* A wait for the bell on a connection of its own, so that a long block
 * never holds a connection the other calls share, and a late reply is this
 * wait's failure only, never the store's (no breaker is tripped). One
 * thread at a time. */
typedef struct store_engine_bell store_engine_bell_t;
store_engine_bell_t *store_engine_bell_new(store_t *store);
/* Waits up to block_ms for a turn queued: STORE_OK rung (look now),
 * STORE_ENOT_FOUND not, STORE_EUNAVAILABLE no reply in the block and a
 * round trip (the connection is made again next time). */
store_status_t store_engine_bell_wait(store_engine_bell_t *bell, unsigned block_ms);
void store_engine_bell_free(store_engine_bell_t *bell);

/* Claims a job for consumer (a name unique to one worker of one replica,
 * 1 to STORE_ENGINE_CONSUMER_MAX bytes): first one whose worker has been
 * quiet (neither claimed, touched nor acked it) for lease_ms or more
 * (XAUTOCLAIM), else a new one (XREADGROUP), waiting up to block_ms for one
 * to be added (0: no wait). The job is the consumer's until it acks it or
 * lease_ms pass without a touch. On STORE_OK *job is set. STORE_ENOT_FOUND:
 * none within block_ms (or within this thread's deadline), or a consumer
 * name that is none or a lease_ms of 0. STORE_ECORRUPT: an entry this code
 * did not write was met (and removed: call again), or the key is no
 * stream. STORE_EUNAVAILABLE: Redis did not answer, or (with the breaker)
 * is held down, which fails at once: wait before calling again. The group
 * is made when missing (the stream deleted, or never made yet: its entries
 * from the first are then new to it).
 * The wait blocks this thread: call it from a worker thread, not one that
 * answers requests. Redis is asked to block for at most half the command
 * timeout at a time (BLOCK; and at least 150 ms less than it, or it polls
 * every 50 ms), so that every reply comes within the timeout (the rest is
 * for the round trip and Redis's timer, which ends a block up to 1000/hz
 * ms late: Redis's hz must be 10, the default, or more) and a silent Redis
 * is found as fast as by any other command; between the blocks, quiet jobs
 * are looked for again. A job added meanwhile wakes the wait at once. */
store_status_t store_engine_job_claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                                      store_engine_job_t *job);

/* Tells Redis consumer is still working on job (XCLAIM to itself, JUSTID:
 * its idle time back to 0, its delivery count unchanged), so no other
 * worker claims it for lease_ms more; call it well within every lease.
 * STORE_ENOT_FOUND: the job is no longer consumer's (its lease passed and
 * another worker claimed it, it was acked, or it is gone): stop working on
 * it. */
store_status_t store_engine_job_touch(store_t *store, const char *consumer, const store_engine_job_t *job);

/* Marks job done and removes it from the stream (XACK and XDEL, one step).
 * STORE_ENOT_FOUND: it was no longer pending (acked already, by this or
 * another worker); it is removed all the same. */
store_status_t store_engine_job_ack(store_t *store, const store_engine_job_t *job);

/* An intent, as scanned: the game, the version at which the computer is
 * to move, and the Redis time (Unix ms) its move is due by. */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    uint64_t version;
    int64_t due_ms;
} store_engine_due_t;

/* Redis's clock (TIME) on the node holding the engine keys, in Unix
 * milliseconds: the clock of due times. */
store_status_t store_engine_now(store_t *store, int64_t *now_ms);

/* Records (or moves to due_ms) the intent "the computer moves in game id
 * at version": ZADD of "<id>:<version>". */
store_status_t store_engine_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms);

/* Drops the intent of id at version only (ZREM): one of another version,
 * older or newer, stays. STORE_OK whether or not there was one. */
store_status_t store_engine_due_clear(store_t *store, const char *id, uint64_t version);

/* The intents due by now_ms (a time of store_engine_now), the most overdue
 * first, at most max of them into out[]; *count says how many. A member
 * this code did not write is removed and not returned. */
store_status_t store_engine_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                     unsigned *count);

#endif
