/* Prometheus metrics, as one table in metrics.c: each row a name, its help,
 * its type, its labels, and where its value comes from. What the server
 * counts itself is kept here (metric_t, lock-free atomics, safe from any
 * thread); the rest is read from its module when /metrics is scraped. */
#ifndef CHESSD_API_METRICS_H
#define CHESSD_API_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct engine_pool;
struct engine_turns;
struct deadlines;
struct acceptor;

/* What is counted here, each a row of the table (its name in the comment).
 * A labeled one takes its label's index in metrics_add, from the enum named;
 * the others take 0. The gauges move by +1 and -1. */
typedef enum {
    METRIC_MOVES_APPLIED = 0,     /* chessd_moves_applied_total */
    METRIC_VERSION_CONFLICTS,     /* chessd_version_conflicts_total */
    METRIC_STORE_FULL,            /* chessd_store_full_total: a write answered 507 store_full */
    METRIC_OUTCOME_UNKNOWN,       /* chessd_outcome_unknown_total: a write answered 503 outcome_unknown */
    METRIC_OPEN_CONNECTIONS,      /* chessd_open_connections, a gauge */
    METRIC_PERFT_WAITING,         /* chessd_perft_waiting, a gauge: queued for a pool thread */
    METRIC_STORE_WAITING,         /* chessd_store_waiting, a gauge: game requests queued for a store thread */
    METRIC_STORE_REFUSED,         /* chessd_store_refused_total: their queue full, or waited past the Redis timeout */
    METRIC_ANALYSIS_WAITING,      /* chessd_analysis_waiting, a gauge: queued for an engine route thread */
    METRIC_ANALYSIS_REFUSED,      /* chessd_analysis_refused_by_reason_total, by metrics_analysis_refused_t */
    METRIC_ENGINE_TURNS_REFUSED,  /* chessd_engine_turns_refused_total, by metrics_turn_refused_t */
    METRIC_STREAMS_OPEN,          /* chessd_streams_open, a gauge: event streams and long polls held */
    METRIC_STREAM_EVENTS,         /* chessd_stream_events_total */
    METRIC_STREAM_RESYNCS,        /* chessd_stream_resyncs_total */
    METRIC_STREAMS_STALLED,       /* chessd_streams_stalled_total */
    METRIC_STREAMS_CLOSED,        /* chessd_streams_closed_total, by events_close_t (live/events.h) */
    METRIC_BUFFER_REFUSALS,       /* chessd_buffer_refusals_total, by metrics_refused_t */
    METRIC_PUBSUB_RECONNECTS,     /* chessd_pubsub_reconnects_total */
    METRIC_FLAG_CHECKS,           /* chessd_flag_checks_total */
    METRIC_PRESENCE_READS,        /* chessd_presence_reads_total */
    METRIC_HTTP_FRAMING_BACKSTOP, /* chessd_http_framing_backstop_total */
    METRIC_HTTP_LIBRARY_MESSAGES, /* chessd_http_library_messages_total */
    METRIC_FINISHED_FEED_ADDED,   /* chessd_finished_feed_added_total: games this replica put on the feed */
    METRIC_COUNT
} metric_t;

/* The labels of METRIC_ANALYSIS_REFUSED: the engine routes' queue was full,
 * the client had its most (--engine-analyses-per-client), no engine came
 * free within a search's time. */
typedef enum {
    METRICS_ANALYSIS_REFUSED_QUEUE_FULL = 0,
    METRICS_ANALYSIS_REFUSED_PER_CLIENT,
    METRICS_ANALYSIS_REFUSED_BUSY,
    METRICS_ANALYSIS_REFUSED_COUNT
} metrics_analysis_refused_t;
/* The labels of METRIC_ENGINE_TURNS_REFUSED: a move or a creation would
 * queue a computer's turn past the client's bound (--engine-turns-per-client)
 * or everyone's (--engine-turns-max). */
typedef enum { METRICS_TURN_REFUSED_PER_CLIENT = 0, METRICS_TURN_REFUSED_BACKLOG, METRICS_TURN_REFUSED_COUNT } metrics_turn_refused_t;
/* The labels of METRIC_BUFFER_REFUSALS: the buffer budget spent
 * (buffers_full), or --max-exports running (too_many_exports). */
typedef enum { METRICS_REFUSED_BUFFERS_FULL = 0, METRICS_REFUSED_TOO_MANY_EXPORTS, METRICS_REFUSED_COUNT } metrics_refused_t;

/* Adds delta to a metric's value for one label (0 without labels). A metric
 * or a label out of range is ignored. */
void metrics_add(metric_t metric, int label, long long delta);
static inline void metrics_count(metric_t metric) { metrics_add(metric, 0, 1); }

/* The route labels: route_name(i) for 0 <= i < route_count (static strings).
 * The server calls this once, before its threads start; until then, and for
 * routes past the first 32, requests are counted as "unmatched". */
typedef const char *(*metrics_route_name_fn)(int route);
void metrics_init(int route_count, metrics_route_name_fn route_name);
/* A request answered. route: below metrics_init's route_count, or -1 when
 * none matched. Counted by route and status, its time in the histogram. */
void metrics_request(int route, unsigned status, uint64_t micros);

/* The modules each scrape reads besides the store and the engines it is
 * given. Set before their threads start; each must outlive every scrape
 * (NULL: none). The accept threads: the main port's and the probe port's
 * (api/http/acceptor.h). The computer's turns: api/game/engine_turns.h. */
void metrics_listeners(const struct acceptor *main_port, const struct acceptor *probe_port);
void metrics_engine_turns(struct engine_turns *turns);
/* The deadline sweep (api/game/deadlines.h): its counts and the feed's
 * length as it last read it. */
void metrics_deadlines(struct deadlines *sweep);
/* The webhook deliverer whose counts a scrape reads (worker NULL: none),
 * through functions given here, so that a program without the deliverer
 * (the games fuzz target) links none of it. */
struct webhook_worker;
struct webhook_worker_stats;
typedef struct {
    struct webhook_worker *worker;
    void (*stats)(struct webhook_worker *worker, struct webhook_worker_stats *out);
    const char *(*outcome)(int outcome); /* an outcome's name, the label's value */
} metrics_webhooks_t;
void metrics_webhooks(const metrics_webhooks_t *webhooks);
/* The outcome of the latest Redis check (api/readiness.c). A scrape never
 * asks Redis itself; chessd_redis_up is left out until the first check. */
void metrics_redis_up(bool up);

/* The exposition text (malloc'd, caller frees), or NULL on OOM. store NULL:
 * no Redis is configured (chessd_redis_configured 0, no Redis rows). */
char *metrics_render(struct store *store, struct engine_pool *engines, size_t *length);

/* The name of the table's row i, NULL past the last: for tests. */
const char *metrics_row_name(int row);

#endif
