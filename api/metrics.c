/* Metrics as one table of rows (name, help, type, label, the value's source),
 * written by one loop in the text exposition format 0.0.4. Rows below
 * METRIC_COUNT are the values kept here, in metric_t's order; the rest are
 * read from their modules once per scrape, or left out when absent. */
#include "metrics.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../store/store.h"
#include "engine/pool.h"
#include "game/deadlines.h"
#include "game/engine_turns.h"
#include "game/export.h"
#include "http/acceptor.h"
#include "http/buf.h"
#include "http/membudget.h"
#include "http/wire.h"
#include "live/events.h"
#include "redis_memory.h"
#include "webhooks/worker.h"

/* The most samples a row has: a stream's close reasons. */
enum { LABELS_MAX = (int)EVENTS_CLOSE_COUNT > (int)WEBHOOK_OUTCOME_COUNT ? (int)EVENTS_CLOSE_COUNT : (int)WEBHOOK_OUTCOME_COUNT, FAULTS = STORE_FAULT_COUNT - 1 - STORE_FAULT_NONE };
_Static_assert(FAULTS <= LABELS_MAX, "a Redis fault is a label value of chessd_redis_fault");
/* A sample left out of this scrape (no store, no probe port, no check yet). */
#define ABSENT LLONG_MIN

/* --- what is kept here --- */

static atomic_llong kept[METRIC_COUNT][LABELS_MAX];
static atomic_int redis_up = -1; /* the latest Redis check: 1 up, 0 down, -1 none yet */
/* Set before the server's threads start (metrics_listeners, metrics_engine_turns). */
static const acceptor_t *listeners[2];
static struct engine_turns *_Atomic engine_turns;
static struct deadlines *_Atomic deadline_sweep;
static metrics_webhooks_t webhook_deliverer; /* under webhook_lock */
static pthread_mutex_t webhook_lock = PTHREAD_MUTEX_INITIALIZER;

/* Requests by route and status, and their latency: kept in slots of their
 * own, because a request carries two labels and a time. Statuses outside
 * status_codes count as "other", so the label set stays bounded whatever
 * clients send. */
enum { ROUTE_SLOTS = 32, STATUS_SLOTS = 21 };
static const unsigned status_codes[STATUS_SLOTS - 1] = { 200, 201, 304, 400, 401, 403, 404, 405, 409, 412,
                                                        413, 415, 422, 428, 429, 500, 501, 503, 505, 507 };
static const double buckets[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                  0.5, 1, 2.5 };
enum { BUCKET_COUNT = sizeof buckets / sizeof buckets[0] };
static atomic_ullong requests[ROUTE_SLOTS + 1][STATUS_SLOTS]; /* last route row: unmatched */
static atomic_ullong latency_buckets[BUCKET_COUNT + 1];
static atomic_ullong latency_micros_sum;
/* Set once by metrics_init(), before the server's threads start. */
static int routes;
static metrics_route_name_fn route_names;

/* --- one scrape --- */

/* What one scrape reads, each source once, so that its samples agree. */
typedef struct {
    struct store *store; /* NULL: no Redis configured */
    long long kept[METRIC_COUNT][LABELS_MAX];
    engine_pool_stats_t engine;
    engine_turns_stats_t turns;
    deadlines_stats_t deadlines;
    webhook_worker_stats_t webhooks;
    const char *(*webhook_outcome)(int outcome);
    wire_stats_t wire;
    acceptor_stats_t listener[2];
    bool listening[2];
    size_t buffered, budget;
    unsigned exports_open;
    unsigned long long exports_shed;
    store_stats_t redis; /* zero without a store */
    store_health_t health;
    bool full;
    redis_memory_t memory;
    int redis_up;
} scrape_t;

static void scrape_read(scrape_t *s, struct store *store, struct engine_pool *engines)
{
    memset(s, 0, sizeof *s);
    s->store = store;
    for (int m = 0; m < METRIC_COUNT; m++)
        for (int i = 0; i < LABELS_MAX; i++)
            s->kept[m][i] = atomic_load_explicit(&kept[m][i], memory_order_relaxed);
    engine_pool_stats(engines, &s->engine);
    engine_turns_stats(atomic_load(&engine_turns), &s->turns);
    deadlines_stats(atomic_load(&deadline_sweep), &s->deadlines);
    pthread_mutex_lock(&webhook_lock);
    if (webhook_deliverer.worker && webhook_deliverer.stats)
        webhook_deliverer.stats(webhook_deliverer.worker, &s->webhooks);
    s->webhook_outcome = webhook_deliverer.worker ? webhook_deliverer.outcome : NULL;
    pthread_mutex_unlock(&webhook_lock);
    wire_stats(&s->wire);
    for (int i = 0; i < 2; i++)
        if ((s->listening[i] = listeners[i] != NULL))
            acceptor_stats(listeners[i], &s->listener[i]);
    s->buffered = membudget_used();
    s->budget = membudget_limit();
    game_export_stats(&s->exports_open, &s->exports_shed);
    s->redis_up = atomic_load_explicit(&redis_up, memory_order_relaxed);
    if (!store)
        return;
    store_stats(store, &s->redis);
    store_health(store, &s->health);
    s->full = store_is_full(store);
    redis_memory_get(&s->memory);
}

/* --- the read functions: each fills a row's values, one per label value,
 * ABSENT for a sample this scrape leaves out --- */

typedef long long values_t[LABELS_MAX];

static void accepted(const scrape_t *s, values_t v)
{
    for (int i = 0; i < 2; i++)
        v[i] = s->listening[i] ? s->listener[i].open : ABSENT;
}
static void connections_waiting(const scrape_t *s, values_t v) { v[0] = s->listener[0].waiting; }
static void address_full(const scrape_t *s, values_t v) { v[0] = (long long)s->listener[0].refused; }
static void buffered(const scrape_t *s, values_t v) { v[0] = (long long)s->buffered; }
static void buffer_budget(const scrape_t *s, values_t v) { v[0] = (long long)s->budget; }
static void exports_open(const scrape_t *s, values_t v) { v[0] = s->exports_open; }
static void exports_shed(const scrape_t *s, values_t v) { v[0] = (long long)s->exports_shed; }

static void engine_workers(const scrape_t *s, values_t v) { v[0] = s->engine.workers; }
static void engine_up(const scrape_t *s, values_t v) { v[0] = s->engine.up; }
static void engine_busy(const scrape_t *s, values_t v) { v[0] = s->engine.busy; }
static void engine_waiting(const scrape_t *s, values_t v) { v[0] = s->engine.waiting; }
static void engine_jobs(const scrape_t *s, values_t v) { v[0] = (long long)s->engine.jobs; }
static void engine_jobs_failed(const scrape_t *s, values_t v) { v[0] = (long long)s->engine.jobs_failed; }
static void engine_jobs_retried(const scrape_t *s, values_t v) { v[0] = (long long)s->engine.jobs_retried; }
static void engine_restarts(const scrape_t *s, values_t v) { v[0] = (long long)s->engine.restarts; }
static void engine_start_failures(const scrape_t *s, values_t v) { v[0] = (long long)s->engine.start_failures; }
static void engine_failures(const scrape_t *s, values_t v)
{
    v[0] = (long long)s->engine.timeouts;
    v[1] = (long long)s->engine.crashes;
    v[2] = (long long)s->engine.garbage;
}
/* The unlabeled count of analyses refused for a full queue, as before the reasons. */
static void analysis_queue_full(const scrape_t *s, values_t v)
{
    v[0] = s->kept[METRIC_ANALYSIS_REFUSED][METRICS_ANALYSIS_REFUSED_QUEUE_FULL];
}

static void turns(const scrape_t *s, values_t v)
{
    v[0] = (long long)s->turns.played;
    v[1] = (long long)s->turns.stale;
    v[2] = (long long)s->turns.failed;
    v[3] = (long long)s->turns.recovered;
}
static void turns_requeue_skipped(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.requeue_skipped; }
static void consumers_removed(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.consumers_removed; }
static void turns_queued(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.queued; }
static void turns_in_flight(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.in_flight; }
static void turns_clients(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.owners; }
static void turns_oldest_ms(const scrape_t *s, values_t v) { v[0] = (long long)s->turns.oldest_age_ms; }

/* The sweep's rows are absent without a store (no sweep runs). */
static void deadlines_claimed(const scrape_t *s, values_t v)
{
    v[0] = s->store ? (long long)s->deadlines.claimed : ABSENT;
}
static void feed_length(const scrape_t *s, values_t v)
{
    v[0] = s->store && s->deadlines.feed_known ? (long long)s->deadlines.feed_length : ABSENT;
}

/* The deliverer's rows are absent where none runs (no store, or
 * --webhook-workers 0). */
static void webhook_attempts(const scrape_t *s, values_t v)
{
    for (int i = 0; i < WEBHOOK_OUTCOME_COUNT; i++)
        v[i] = s->webhook_outcome ? (long long)s->webhooks.attempts[i] : ABSENT;
}
static void webhook_dropped(const scrape_t *s, values_t v)
{
    v[0] = s->webhook_outcome ? (long long)s->webhooks.dropped : ABSENT;
}
static void webhook_swept(const scrape_t *s, values_t v) { v[0] = s->webhook_outcome ? (long long)s->webhooks.swept : ABSENT; }

static void http_refused(const scrape_t *s, values_t v) { v[0] = (long long)s->wire.refused; }
static void deadline_closes(const scrape_t *s, values_t v)
{
    v[0] = (long long)s->wire.header_timeouts;
    v[1] = (long long)s->wire.body_timeouts;
}

/* The store's counts are 0 without a store; the rows after them are absent. */
static void redis_errors(const scrape_t *s, values_t v) { v[0] = (long long)s->redis.errors; }
static void redis_connects(const scrape_t *s, values_t v) { v[0] = (long long)s->redis.connects; }
static void redis_redirects(const scrape_t *s, values_t v) { v[0] = (long long)s->redis.redirects; }
static void redis_configured(const scrape_t *s, values_t v) { v[0] = s->store != NULL; }
static void redis_fast_failures(const scrape_t *s, values_t v) { v[0] = (long long)s->redis.fast_failures; }
static void redis_is_up(const scrape_t *s, values_t v) { v[0] = s->store && s->redis_up >= 0 ? s->redis_up : ABSENT; }
static void redis_fault(const scrape_t *s, values_t v)
{
    for (int i = 0; i < FAULTS; i++)
        v[i] = !s->store ? ABSENT : !s->health.up && s->health.fault == (store_fault_t)(STORE_FAULT_NONE + 1 + i);
}
static void eviction_possible(const scrape_t *s, values_t v) { v[0] = s->store ? s->memory.eviction_possible : ABSENT; }
static void policy_info(const scrape_t *s, values_t v) { v[0] = s->store ? 1 : ABSENT; }
static void maxmemory(const scrape_t *s, values_t v) { v[0] = s->store ? (long long)s->memory.maxmemory : ABSENT; }
static void redis_full(const scrape_t *s, values_t v) { v[0] = s->store ? s->full : ABSENT; }

/* --- the table --- */

typedef enum { COUNTER, GAUGE, HISTOGRAM } type_t;
static const char *const type_names[] = { [COUNTER] = "counter", [GAUGE] = "gauge", [HISTOGRAM] = "histogram" };

/* A row's label: its name, and its values' names from a list (in the order
 * of the enum that indexes them) or from a function of the scrape. */
typedef struct {
    const char *name; /* NULL: the row has one sample, without a label */
    int count;
    const char *const *values;
    const char *(*value)(const scrape_t *s, int i);
} label_t;
#define LIST(label_name, names) { label_name, (int)(sizeof names / sizeof names[0]), names, NULL }

/* Where a row's value comes from: its index below METRIC_COUNT (kept here),
 * else read or write. The requests and their latency have a writer each, as
 * their samples are a route by a status and a histogram's buckets. */
typedef struct {
    const char *name;
    const char *help;
    type_t type;
    label_t label;
    void (*read)(const scrape_t *s, values_t values);
    void (*write)(buf_t *b);
    bool thousandths; /* the value read is in thousandths, written with three decimals */
} row_t;

static const char *const analysis_reasons[METRICS_ANALYSIS_REFUSED_COUNT] = {
    [METRICS_ANALYSIS_REFUSED_QUEUE_FULL] = "queue_full", [METRICS_ANALYSIS_REFUSED_PER_CLIENT] = "per_client",
    [METRICS_ANALYSIS_REFUSED_BUSY] = "busy",
};
static const char *const turn_reasons[METRICS_TURN_REFUSED_COUNT] = {
    [METRICS_TURN_REFUSED_PER_CLIENT] = "per_client", [METRICS_TURN_REFUSED_BACKLOG] = "backlog",
};
static const char *const buffer_reasons[METRICS_REFUSED_COUNT] = {
    [METRICS_REFUSED_BUFFERS_FULL] = "buffers_full", [METRICS_REFUSED_TOO_MANY_EXPORTS] = "too_many_exports",
};
static const char *const listener_names[] = { "main", "probe" }; /* as listeners[] */
static const char *const failure_kinds[] = { "timeout", "crashed", "garbage" };
static const char *const turn_outcomes[] = { "played", "stale", "failed", "recovered" };
static const char *const phases[] = { "head", "body" };

static const char *close_reason(const scrape_t *s, int i)
{
    (void)s;
    return events_close_name((events_close_t)i);
}
static const char *webhook_outcome(const scrape_t *s, int i)
{
    return s->webhook_outcome ? s->webhook_outcome(i) : "none"; /* no deliverer: its rows are absent */
}
static const char *fault_name(const scrape_t *s, int i)
{
    (void)s;
    return store_fault_name((store_fault_t)(STORE_FAULT_NONE + 1 + i));
}
static const char *policy_name(const scrape_t *s, int i)
{
    (void)i;
    return s->memory.policy;
}

static void write_requests(buf_t *b);
static void write_latency(buf_t *b);

static const row_t rows[] = {
    [METRIC_MOVES_APPLIED] = { "chessd_moves_applied_total", "Game moves written.", .type = COUNTER },
    [METRIC_VERSION_CONFLICTS] = { "chessd_version_conflicts_total", "Game changes refused for a stale version.",
                                   .type = COUNTER },
    [METRIC_STORE_FULL] = { "chessd_store_full_total", "Game writes refused because Redis is out of memory (507).",
                            .type = COUNTER },
    [METRIC_OUTCOME_UNKNOWN] = { "chessd_outcome_unknown_total",
                                 "Game writes sent to Redis that got no answer and could not be checked (503 "
                                 "outcome_unknown).",
                                 .type = COUNTER },
    [METRIC_OPEN_CONNECTIONS] = { "chessd_open_connections", "HTTP connections open now.", .type = GAUGE },
    [METRIC_PERFT_WAITING] = { "chessd_perft_waiting", "Perft requests queued for a pool thread now.", .type = GAUGE },
    [METRIC_STORE_WAITING] = { "chessd_store_waiting", "Game requests queued for a fiber of their server thread now.", .type = GAUGE },
    [METRIC_STORE_REFUSED] = { "chessd_store_refused_total",
                               "Game requests answered 503 unrun: their server thread's fiber queue was full, or they waited "
                               "past the Redis timeout.",
                               .type = COUNTER },
    [METRIC_ANALYSIS_WAITING] = { "chessd_analysis_waiting", "Analysis requests queued for an engine route thread now.",
                                  .type = GAUGE },
    [METRIC_ANALYSIS_REFUSED] = { "chessd_analysis_refused_by_reason_total",
                                  "Analysis requests refused unrun, by reason (queue_full: the engine routes' queue "
                                  "was full; per_client: --engine-analyses-per-client; busy: no engine came free "
                                  "within a search's time).",
                                  .type = COUNTER, .label = LIST("reason", analysis_reasons) },
    [METRIC_ENGINE_TURNS_REFUSED] = { "chessd_engine_turns_refused_total",
                                      "Moves and creations refused because they would queue a computer's turn past a "
                                      "bound (per_client: --engine-turns-per-client; backlog: --engine-turns-max).",
                                      .type = COUNTER, .label = LIST("reason", turn_reasons) },
    [METRIC_STREAMS_OPEN] = { "chessd_streams_open", "Game event streams and long-poll requests held now.",
                              .type = GAUGE },
    [METRIC_STREAM_EVENTS] = { "chessd_stream_events_total",
                               "Events queued on game event streams (snapshots included).", .type = COUNTER },
    [METRIC_STREAM_RESYNCS] = { "chessd_stream_resyncs_total",
                                "Snapshots sent to a stream that missed events (a gap, a new subscription, a lost "
                                "Redis connection, a silent game that moved).",
                                .type = COUNTER },
    [METRIC_STREAMS_STALLED] = { "chessd_streams_stalled_total",
                                 "Game event streams closed because their client stopped reading: it took none of "
                                 "the bytes waiting for it for --stream-stall-timeout seconds, or they passed their "
                                 "bound, or the --timeout idle timeout closed it.",
                                 .type = COUNTER },
    [METRIC_STREAMS_CLOSED] = { "chessd_streams_closed_total",
                                "Game event streams closed, by why (client: it went; stalled: no progress for "
                                "--stream-stall-timeout; overflow: its bytes waiting passed their bound; idle: the "
                                "--timeout idle timeout; budget: shed to keep within --buffer-budget; shutdown; "
                                "ended: its game ended or is gone; error: out of memory).",
                                .type = COUNTER, .label = { "reason", EVENTS_CLOSE_COUNT, NULL, close_reason } },
    [METRIC_BUFFER_REFUSALS] = { "chessd_buffer_refusals_total",
                                 "New event streams, long polls and exports answered 503, by problem code: the "
                                 "buffer budget spent, or --max-exports running.",
                                 .type = COUNTER, .label = LIST("reason", buffer_reasons) },
    [METRIC_PUBSUB_RECONNECTS] = { "chessd_pubsub_reconnects_total",
                                   "Redis Pub/Sub connections made again after one was lost.", .type = COUNTER },
    [METRIC_FLAG_CHECKS] = { "chessd_flag_checks_total",
                             "Games checked for a fallen flag when their clock's deadline came.", .type = COUNTER },
    [METRIC_PRESENCE_READS] = { "chessd_presence_reads_total",
                                "Reads that mark the players of this replica's streams present and judge whether "
                                "their opponents are gone: one a game with a player's stream here, every mark.",
                                .type = COUNTER },
    [METRIC_HTTP_FRAMING_BACKSTOP] = { "chessd_http_framing_backstop_total",
                                       "Requests refused (400) by the server's second framing check, behind the "
                                       "strict reader: any above 0 means the reader was bypassed (see "
                                       "api/http/interpose.c).",
                                       .type = COUNTER },
    [METRIC_HTTP_LIBRARY_MESSAGES] = { "chessd_http_library_messages_total",
                                       "Messages from libmicrohttpd (aborted connections and the like); a few a "
                                       "second are logged.",
                                       .type = COUNTER },
    [METRIC_FINISHED_FEED_ADDED] = { "chessd_finished_feed_added_total",
                                     "Finished games this replica put on the finished-games feed (each game is on "
                                     "it once, whichever replica adds it).",
                                     .type = COUNTER },

    [METRIC_COUNT] = { "chessd_http_requests_total", "HTTP requests by route and status.", .type = COUNTER,
                       .write = write_requests },
    { "chessd_http_request_duration_seconds", "Time from first byte to response queued.", .type = HISTOGRAM,
      .write = write_latency },

    { "chessd_accepted_connections",
      "Connections accepted and not yet closed (waiting for a place and lingering ones included), by listening "
      "port: what --max-connections and --per-ip-connections count.",
      .type = GAUGE, .label = LIST("listener", listener_names), .read = accepted },
    { "chessd_connections_waiting",
      "Connections whose client address holds --per-ip-connections already, waiting a moment for one to close.",
      .type = GAUGE, .read = connections_waiting },
    { "chessd_address_full_closes_total",
      "Connections closed unserved because their client address kept --per-ip-connections full.", .type = COUNTER,
      .read = address_full },
    { "chessd_buffered_bytes",
      "Bytes held now for clients that read slowly: event streams' queues, exports' text, long polls' answers.",
      .type = GAUGE, .read = buffered },
    { "chessd_buffer_budget_bytes", "The most chessd_buffered_bytes may reach (--buffer-budget).", .type = GAUGE,
      .read = buffer_budget },
    { "chessd_exports_open", "Exports (POST /v1/games/export) being answered now (--max-exports).", .type = GAUGE,
      .read = exports_open },
    { "chessd_exports_shed_total",
      "Exports cut to keep within --buffer-budget: their client had kept the most bytes waiting the longest.",
      .type = COUNTER, .read = exports_shed },

    { "chessd_engine_workers", "Engine processes this replica keeps (0: no engine configured).", .type = GAUGE,
      .read = engine_workers },
    { "chessd_engine_workers_up", "Engine processes running now.", .type = GAUGE, .read = engine_up },
    { "chessd_engine_workers_busy", "Engine processes running a job now.", .type = GAUGE, .read = engine_busy },
    { "chessd_engine_jobs_waiting", "Jobs waiting for a free engine now.", .type = GAUGE, .read = engine_waiting },
    { "chessd_analysis_refused_total",
      "Analysis requests answered 503 engine_busy unrun: the engine routes' queue was full.", .type = COUNTER,
      .read = analysis_queue_full },
    { "chessd_engine_jobs_total", "Engine jobs run (a retry not counted again).", .type = COUNTER,
      .read = engine_jobs },
    { "chessd_engine_jobs_failed_total",
      "Engine jobs that failed, after their retry: answered engine_failed, busy or unavailable.", .type = COUNTER,
      .read = engine_jobs_failed },
    { "chessd_engine_jobs_retried_total", "Engine jobs run a second time after their engine failed.",
      .type = COUNTER, .read = engine_jobs_retried },
    { "chessd_engine_restarts_total", "Engine processes started again after one failed.", .type = COUNTER,
      .read = engine_restarts },
    { "chessd_engine_start_failures_total", "Engine starts that failed (the start is retried later).",
      .type = COUNTER, .read = engine_start_failures },
    { "chessd_engine_failures_total",
      "Engine jobs whose engine failed, by kind (timed out: past its deadline; crashed: exited or closed its "
      "output; garbage: a protocol error or an illegal move).",
      .type = COUNTER, .label = LIST("kind", failure_kinds), .read = engine_failures },

    { "chessd_engine_turns_total",
      "The computer's turns in games taken by this replica, by outcome (played; stale: the turn was gone, a later "
      "version or the game over; failed: left for another try; recovered: a lost turn queued again by the sweep).",
      .type = COUNTER, .label = LIST("outcome", turn_outcomes), .read = turns },
    { "chessd_engine_turns_requeue_skipped_total",
      "Overdue turns the sweep found still waiting or being played, so not queued again.", .type = COUNTER,
      .read = turns_requeue_skipped },
    { "chessd_engine_consumers_removed_total",
      "Engine job consumers of workers gone (idle, owning nothing) removed by this replica.", .type = COUNTER,
      .read = consumers_removed },
    { "chessd_engine_turns_queued",
      "The computer's turns waiting for an engine, from every replica (as this replica last read them; 0 when it "
      "runs no turns).",
      .type = GAUGE, .read = turns_queued },
    { "chessd_engine_turns_in_flight", "The computer's turns being played now, on every replica.", .type = GAUGE,
      .read = turns_in_flight },
    { "chessd_engine_turns_clients", "Clients with turns waiting.", .type = GAUGE, .read = turns_clients },
    { "chessd_engine_turns_oldest_seconds", "How long the oldest waiting turn has waited.", .type = GAUGE,
      .read = turns_oldest_ms, .thousandths = true },

    { "chessd_deadlines_claimed_total",
      "Game deadlines (a flag, a first-move grace, an ending to put on the feed) this replica's sweep took up "
      "when they came due.",
      .type = COUNTER, .read = deadlines_claimed },
    { "chessd_finished_feed_length",
      "Games on the finished-games feed (GET /v1/games/finished), as this replica's sweep last read it (every "
      "5 s); trimmed to --finished-feed-retention.",
      .type = GAUGE, .read = feed_length },

    { "chessd_webhook_attempts_total",
      "Webhook deliveries this replica attempted, by outcome (delivered: a 2xx answer).", .type = COUNTER,
      .label = { "outcome", WEBHOOK_OUTCOME_COUNT, NULL, webhook_outcome }, .read = webhook_attempts },
    { "chessd_webhook_dropped_total",
      "Webhook events this replica gave up on: retried past --webhook-give-up-seconds, or their subscription "
      "deleted.",
      .type = COUNTER, .read = webhook_dropped },
    { "chessd_webhook_swept_total",
      "Webhook outboxes the sweep found with events but not due (a replica died between a move and its marking).",
      .type = COUNTER, .read = webhook_swept },

    { "chessd_http_refused_total",
      "Connections refused for malformed HTTP (400) or a chunked body over the cap (413) before any of the "
      "request ran.",
      .type = COUNTER, .read = http_refused },
    { "chessd_http_deadline_closes_total",
      "Connections closed because a request's head or body came too slowly.", .type = COUNTER,
      .label = LIST("phase", phases), .read = deadline_closes },

    { "chessd_redis_errors_total", "Redis commands that failed or timed out.", .type = COUNTER,
      .read = redis_errors },
    { "chessd_redis_connects_total", "Redis connections made (first and reconnects).", .type = COUNTER,
      .read = redis_connects },
    { "chessd_redis_redirects_total", "MOVED and ASK answers of a Redis Cluster followed (its slots moving).",
      .type = COUNTER, .read = redis_redirects },
    { "chessd_redis_configured", "1 when a Redis is configured (games on), 0 with --redis none.", .type = GAUGE,
      .read = redis_configured },
    { "chessd_redis_fast_failures_total",
      "Redis commands failed at once, unsent, because their node was held down (the breaker).", .type = COUNTER,
      .read = redis_fast_failures },
    { "chessd_redis_up",
      "1 when Redis answered the readiness watcher's latest probe and the player-token secret there is usable, "
      "else 0.",
      .type = GAUGE, .read = redis_is_up },
    { "chessd_redis_fault",
      "1 for what keeps Redis from being used now (the breaker's view; auth_refused, database_refused and "
      "tls_failed are settings to fix), else 0.",
      .type = GAUGE, .label = { "fault", FAULTS, NULL, fault_name }, .read = redis_fault },
    { "chessd_redis_eviction_possible",
      "1 when Redis's maxmemory-policy may evict games (any but noeviction, volatile-* too, or one that cannot be "
      "read), else 0.",
      .type = GAUGE, .read = eviction_possible },
    { "chessd_redis_maxmemory_policy_info", "Redis's maxmemory-policy, as last read (unknown: not read).",
      .type = GAUGE, .label = { "policy", 1, NULL, policy_name }, .read = policy_info },
    { "chessd_redis_maxmemory_bytes", "Redis's maxmemory, as last read (0: no limit).", .type = GAUGE,
      .read = maxmemory },
    { "chessd_redis_full",
      "1 while Redis refuses writes for lack of memory (it answered OOM since the last write it took, and no "
      "reading since found room), else 0.",
      .type = GAUGE, .read = redis_full },
};
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static int label_count(const row_t *row) { return row->label.name ? row->label.count : 1; }

/* --- counting --- */

void metrics_add(metric_t metric, int label, long long delta)
{
    if ((unsigned)metric >= METRIC_COUNT || label < 0 || label >= label_count(&rows[metric]))
        return;
    atomic_fetch_add_explicit(&kept[metric][label], delta, memory_order_relaxed);
}

static int status_slot(unsigned status)
{
    for (int i = 0; i < STATUS_SLOTS - 1; i++)
        if (status_codes[i] == status)
            return i;
    return STATUS_SLOTS - 1;
}

void metrics_request(int route, unsigned status, uint64_t micros)
{
    int row = route >= 0 && route < routes ? route : ROUTE_SLOTS;
    atomic_fetch_add_explicit(&requests[row][status_slot(status)], 1, memory_order_relaxed);
    double seconds = (double)micros / 1e6;
    int b = 0;
    while (b < BUCKET_COUNT && seconds > buckets[b])
        b++;
    atomic_fetch_add_explicit(&latency_buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&latency_micros_sum, micros, memory_order_relaxed);
}

/* The table's own invariants, checked once: each row below METRIC_COUNT is
 * kept here, each other one is read or written, and no row has more samples
 * than a scrape holds. */
static void rows_check(void)
{
    for (int r = 0; r < ROW_COUNT; r++) {
        const row_t *row = &rows[r];
        assert(row->name && row->help && label_count(row) <= LABELS_MAX);
        assert(r < METRIC_COUNT ? !row->read && !row->write : !row->read != !row->write);
        assert(!row->label.name || !row->label.values != !row->label.value);
        (void)row;
    }
}

void metrics_init(int route_count, metrics_route_name_fn route_name)
{
    rows_check();
    routes = !route_name || route_count < 0 ? 0 : route_count < ROUTE_SLOTS ? route_count : ROUTE_SLOTS;
    route_names = route_name;
}

void metrics_listeners(const acceptor_t *main_port, const acceptor_t *probe_port)
{
    listeners[0] = main_port;
    listeners[1] = probe_port;
}

void metrics_engine_turns(struct engine_turns *turns_now) { atomic_store(&engine_turns, turns_now); }

void metrics_deadlines(struct deadlines *sweep) { atomic_store(&deadline_sweep, sweep); }
void metrics_webhooks(const metrics_webhooks_t *webhooks)
{
    pthread_mutex_lock(&webhook_lock);
    webhook_deliverer = webhooks ? *webhooks : (metrics_webhooks_t){ 0 };
    pthread_mutex_unlock(&webhook_lock);
}

void metrics_redis_up(bool up) { atomic_store_explicit(&redis_up, up ? 1 : 0, memory_order_relaxed); }

const char *metrics_row_name(int row) { return row >= 0 && row < ROW_COUNT ? rows[row].name : NULL; }

/* --- writing --- */

/* Every route and status counted so far (none counted: no sample). */
static void write_requests(buf_t *b)
{
    for (int r = 0; r <= ROUTE_SLOTS; r++) {
        if (r < ROUTE_SLOTS && r >= routes)
            continue;
        const char *name = r < ROUTE_SLOTS ? route_names(r) : "unmatched";
        for (int s = 0; s < STATUS_SLOTS; s++) {
            unsigned long long n = atomic_load_explicit(&requests[r][s], memory_order_relaxed);
            if (!n)
                continue;
            char status[8];
            if (s < STATUS_SLOTS - 1)
                snprintf(status, sizeof status, "%u", status_codes[s]);
            else
                snprintf(status, sizeof status, "other");
            buf_printf(b, "chessd_http_requests_total{route=\"%s\",status=\"%s\"} %llu\n", name, status, n);
        }
    }
}

/* The latency histogram: cumulative buckets, the sum and the count. */
static void write_latency(buf_t *b)
{
    unsigned long long cumulative = 0;
    for (int i = 0; i <= BUCKET_COUNT; i++) {
        cumulative += atomic_load_explicit(&latency_buckets[i], memory_order_relaxed);
        if (i < BUCKET_COUNT)
            buf_printf(b, "chessd_http_request_duration_seconds_bucket{le=\"%g\"} %llu\n", buckets[i], cumulative);
        else
            buf_printf(b, "chessd_http_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n", cumulative);
    }
    buf_printf(b, "chessd_http_request_duration_seconds_sum %.6f\n",
               (double)atomic_load_explicit(&latency_micros_sum, memory_order_relaxed) / 1e6);
    buf_printf(b, "chessd_http_request_duration_seconds_count %llu\n", cumulative);
}

static void write_header(buf_t *b, const row_t *row)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", row->name, row->help, row->name, type_names[row->type]);
}

/* One row: HELP and TYPE (left out with every sample absent), then each sample. */
static void write_row(buf_t *b, int index, const scrape_t *s)
{
    const row_t *row = &rows[index];
    if (row->write) {
        write_header(b, row);
        row->write(b);
        return;
    }
    values_t values;
    if (index < METRIC_COUNT)
        memcpy(values, s->kept[index], sizeof values);
    else
        row->read(s, values);
    bool header = false;
    for (int i = 0; i < label_count(row); i++) {
        if (values[i] == ABSENT)
            continue;
        if (!header)
            write_header(b, row);
        header = true;
        buf_printf(b, "%s", row->name);
        if (row->label.name)
            buf_printf(b, "{%s=\"%s\"}", row->label.name,
                       row->label.values ? row->label.values[i] : row->label.value(s, i));
        if (row->thousandths)
            buf_printf(b, " %.3f\n", (double)values[i] / 1000.0);
        else
            buf_printf(b, " %lld\n", values[i]);
    }
}

char *metrics_render(struct store *store, struct engine_pool *engines, size_t *length)
{
    scrape_t s;
    scrape_read(&s, store, engines);
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, 8192);
    for (int r = 0; r < ROW_COUNT; r++)
        write_row(&b, r, &s);
    return buf_finish(&b, length);
}
