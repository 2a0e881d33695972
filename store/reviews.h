/* Reviews: a game's whole-game review as durable state in Redis. Each
 * review is one hash in the game's own hash slot (its state and each
 * position's result, written as it is computed), and a job in a queue with
 * leases that any replica's review worker claims, touches and acks. The
 * protocol below says who calls what, in which order. */
#ifndef CHESSD_STORE_REVIEWS_H
#define CHESSD_STORE_REVIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* A review of game id at version v is the hash STORE_REVIEW_KEY_PREFIX
 * "{id}" (one slot with the game's keys and its event channel): the
 * version, the status, the search limit, who asked (the owner), the moves
 * (the game's line at v) and one field "p<k>" per position k analysed (0:
 * the start; k: after ply k), each an opaque text the api layer writes. Its
 * job is the member "<id>:<v>" of STORE_REVIEW_QUEUE_KEY, a sorted set
 * scored by when it may be claimed (Redis time, ms): its queued time while
 * it waits, its lease's end once claimed. A claim takes the lowest score
 * not in the future and sets it to now + lease: a worker that dies leaves
 * its job to be claimed again once the lease passes, and the next worker
 * resumes from the first position without a result.
 *
 * The protocol, in this order:
 *   1. store_review_begin: the hash made (or kept, when a review of that
 *      version is there and has not failed: *kept);
 *   2. store_review_enqueue: the job queued, with the owner's bound looked
 *      at (*reached: nothing queued; then store_review_drop of step 1's
 *      hash unless kept);
 *   A worker: store_review_claim; store_review_read; unless the hash is at
 *   the job's version and neither done nor failed, store_review_ack at
 *   once; else store_review_status_set running, then for each position
 *   without a result compute it and store_review_position_set (false: the
 *   review was replaced, stop), store_review_touch well within each lease
 *   (STORE_ENOT_FOUND: another worker has it, stop); then
 *   store_review_status_set done (or failed) and store_review_ack.
 * A write never lands on a review of another version: each names the
 * version and is a no-op when the hash holds another. The hash expires
 * STORE_REVIEW_TTL_S after its last write. */
#define STORE_REVIEW_KEY_PREFIX "chessd:review:"
#define STORE_REVIEW_QUEUE_KEY "chessd:{review}:queue"
#define STORE_REVIEW_HOLDER_KEY "chessd:{review}:holder"
#define STORE_REVIEW_OWNER_OF_KEY "chessd:{review}:owner-of"
#define STORE_REVIEW_OWNER_PREFIX "chessd:{review}:owner:"
#define STORE_REVIEW_OWNER_NONE "-"

enum {
    STORE_REVIEW_TTL_S = 30 * 86400,   /* a review is kept this long after its last write */
    STORE_REVIEW_OWNER_STALE_MS = 3600000, /* an owner's entry older than this no longer counts */
    STORE_REVIEW_TEXT_MAX = 4096,      /* bytes of a position's result */
    STORE_REVIEW_FIELD_MAX = 64,       /* bytes of a status, limit or owner */
};

/* A review as stored. positions[k] (count + 1 of them) is position k's
 * result, or NULL while it has none. */
typedef struct {
    uint64_t version;
    char status[STORE_REVIEW_FIELD_MAX]; /* "queued", "running", "done", "failed" */
    char limit[STORE_REVIEW_FIELD_MAX];  /* the search limit, as the api layer wrote it */
    char owner[STORE_REVIEW_FIELD_MAX];
    char error[STORE_REVIEW_FIELD_MAX * 4];
    char *line;                          /* the moves (malloc'd) */
    size_t line_length;
    int count;                           /* plies */
    char **positions;                    /* count + 1 (malloc'd, each malloc'd or NULL) */
} store_review_t;

/* Reads id's review. STORE_ENOT_FOUND: none. On STORE_OK free with
 * store_review_free. */
store_status_t store_review_read(store_t *store, const char *id, store_review_t *out);
void store_review_free(store_review_t *review);

/* Makes id's review at version (status queued, limit, owner, the line of
 * count plies) unless one at that version is there and has not failed
 * (*kept true: nothing changed). */
store_status_t store_review_begin(store_t *store, const char *id, uint64_t version, const char *limit,
                                  const char *owner, const char *line, size_t line_length, int count, bool *kept);
/* Drops id's review at version when it is still queued with no result. */
store_status_t store_review_drop(store_t *store, const char *id, uint64_t version);

/* Queues the job {id, version} for owner (NULL or "": none) unless owner
 * has per_owner (0: no bound) reviews queued or running: then *reached is
 * true and nothing is queued. A job queued or running already is kept as
 * it is (STORE_OK). */
store_status_t store_review_enqueue(store_t *store, const char *id, uint64_t version, const char *owner,
                                    unsigned per_owner, bool *reached);

/* A job as claimed, and how many times it has been handed out. */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    uint64_t version;
    unsigned deliveries;
} store_review_job_t;

/* Claims the job waiting longest, or one whose lease has passed, for
 * consumer for lease_ms. STORE_ENOT_FOUND: none. */
store_status_t store_review_claim(store_t *store, const char *consumer, unsigned lease_ms, store_review_job_t *job);
/* Extends consumer's lease on job by lease_ms. STORE_ENOT_FOUND: it is no
 * longer consumer's. */
store_status_t store_review_touch(store_t *store, const char *consumer, unsigned lease_ms,
                                  const store_review_job_t *job);
/* Removes job from the queue and from its owner's count. */
store_status_t store_review_ack(store_t *store, const store_review_job_t *job);

/* Sets position index's result of id's review at version. *current false:
 * the review is at another version or over (nothing written). */
store_status_t store_review_position_set(store_t *store, const char *id, uint64_t version, int index,
                                         const char *text, bool *current);
/* Sets the status (and an error text, "" for none) of id's review at
 * version unless it is at another version, or done. */
store_status_t store_review_status_set(store_t *store, const char *id, uint64_t version, const char *status,
                                       const char *error);

/* Publishes message on id's event channel (PUBLISH, SPUBLISH on a cluster). */
store_status_t store_review_publish(store_t *store, const char *id, const char *message);

#endif
