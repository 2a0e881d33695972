/* The deliverer: threads on every replica with a store that claim the due
 * outboxes (store/webhooks.h), sign each event and POST it (send.h). A
 * failure is retried with doubling waits for up to a day, then dropped.
 * Every attempt goes to its subscription's log. One thread sweeps now and
 * then for outboxes whose marking a dead replica missed. */
#ifndef CHESSD_API_WEBHOOKS_WORKER_H
#define CHESSD_API_WEBHOOKS_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "../../store/store.h"
#include "allow.h"
#include "send.h"

typedef struct {
    store_t *store;
    const webhook_allow_t *allow;
    unsigned threads;      /* deliveries at once (0: 8) */
    unsigned timeout_ms;   /* one attempt, every hop included */
    unsigned redirects;    /* hops followed (0: none) */
    const char *ca_file;   /* PEM CAs for https (NULL: the system's) */
    unsigned retry_ms;     /* the first wait after a failure, doubling after each */
    unsigned give_up_ms;   /* an event older than this is dropped, not tried (0: a day) */
    unsigned poll_ms;      /* how often an idle deliverer looks (0: 50) */
    unsigned sweep_ms;     /* how often the sweep looks at a page of games (0: 5 s) */
} webhook_worker_config_t;

typedef struct webhook_worker webhook_worker_t;

/* Starts the threads; NULL when memory or a thread runs out. */
webhook_worker_t *webhook_worker_start(const webhook_worker_config_t *config);
/* Stops and joins them (an attempt under way ends by its deadline); NULL is fine. */
void webhook_worker_stop(webhook_worker_t *worker);

/* What this replica's deliverer counted. */
typedef struct webhook_worker_stats {
    uint64_t attempts[WEBHOOK_OUTCOME_COUNT]; /* by webhook_outcome_t */
    uint64_t dropped;  /* events given up on (a day of failures, or their subscription gone) */
    uint64_t swept;    /* outboxes the sweep found unmarked */
} webhook_worker_stats_t;

/* worker NULL: all zero. */
void webhook_worker_stats(webhook_worker_t *worker, webhook_worker_stats_t *out);
/* webhook_outcome_code of an int, as metrics_webhooks_t takes it. */
const char *webhook_outcome_name(int outcome);

#endif
