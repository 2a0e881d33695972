/* Metrics storage and the text exposition format (version 0.0.4). Statuses
 * are counted in a fixed set of slots, the rest under "other", so the label
 * set stays bounded whatever clients send. */
#include "metrics.h"

#include <stdatomic.h>
#include <stdio.h>

#include "../store/store.h"
#include "engine/pool.h"
#include "game/engine_turns.h"
#include "game/export.h"
#include "http/acceptor.h"
#include "http/buf.h"
#include "http/membudget.h"
#include "http/wire.h"
#include "redis_memory.h"

enum { ROUTE_SLOTS = 32, STATUS_SLOTS = 21 };

static const unsigned status_codes[STATUS_SLOTS - 1] = { 200, 201, 304, 400, 401, 403, 404, 405, 409, 412,
                                                        413, 415, 422, 428, 429, 500, 501, 503, 505, 507 };
static const double buckets[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                  0.5, 1, 2.5 };
enum { BUCKET_COUNT = sizeof buckets / sizeof buckets[0] };

static atomic_ullong requests[ROUTE_SLOTS + 1][STATUS_SLOTS]; /* last route row: unmatched */
static atomic_ullong latency_buckets[BUCKET_COUNT + 1];
static atomic_ullong latency_micros_sum, latency_count;
static atomic_ullong moves_applied, version_conflicts, store_full, outcomes_unknown;
static atomic_llong open_connections;
static atomic_ullong library_messages, framing_backstops;
static atomic_llong perft_waiting, store_waiting, analysis_waiting;
static atomic_ullong analysis_refused;
static atomic_ullong store_refused;
static atomic_llong streams_open;
static atomic_ullong stream_events, stream_resyncs, streams_stalled, pubsub_reconnects, flag_checks;
static atomic_ullong streams_closed[EVENTS_CLOSE_COUNT], buffer_refused[METRICS_REFUSED_COUNT];
static atomic_int redis_up = -1; /* the latest Redis check: 1 up, 0 down, -1 none yet */
/* Set once by metrics_init(), before the server's threads start. */
static int routes;
static metrics_route_name_fn route_names;
/* Set once by metrics_listeners(), before the accept threads start. */
static const acceptor_t *listeners[2];
static const char *const listener_names[2] = { "main", "probe" };

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
    atomic_fetch_add_explicit(&latency_count, 1, memory_order_relaxed);
}

void metrics_move_applied(void) { atomic_fetch_add_explicit(&moves_applied, 1, memory_order_relaxed); }
void metrics_version_conflict(void) { atomic_fetch_add_explicit(&version_conflicts, 1, memory_order_relaxed); }
void metrics_store_full(void) { atomic_fetch_add_explicit(&store_full, 1, memory_order_relaxed); }
void metrics_outcome_unknown(void) { atomic_fetch_add_explicit(&outcomes_unknown, 1, memory_order_relaxed); }
void metrics_http_library_message(void) { atomic_fetch_add_explicit(&library_messages, 1, memory_order_relaxed); }
void metrics_http_framing_backstop(void) { atomic_fetch_add_explicit(&framing_backstops, 1, memory_order_relaxed); }

void metrics_perft_waiting(int delta) { atomic_fetch_add_explicit(&perft_waiting, delta, memory_order_relaxed); }
void metrics_store_waiting(int delta) { atomic_fetch_add_explicit(&store_waiting, delta, memory_order_relaxed); }
void metrics_analysis_waiting(int delta) { atomic_fetch_add_explicit(&analysis_waiting, delta, memory_order_relaxed); }
static struct engine_turns *_Atomic engine_turns;
void metrics_engine_turns(struct engine_turns *turns) { atomic_store(&engine_turns, turns); }

static atomic_ullong analysis_refused_by[METRICS_ANALYSIS_REFUSED_COUNT], turn_refused[METRICS_TURN_REFUSED_COUNT];
void metrics_analysis_refused(void) { metrics_analysis_refused_by(METRICS_ANALYSIS_REFUSED_QUEUE_FULL); }
void metrics_analysis_refused_by(metrics_analysis_refused_t why)
{
    if (why == METRICS_ANALYSIS_REFUSED_QUEUE_FULL)
        atomic_fetch_add_explicit(&analysis_refused, 1, memory_order_relaxed);
    if ((unsigned)why < METRICS_ANALYSIS_REFUSED_COUNT)
        atomic_fetch_add_explicit(&analysis_refused_by[why], 1, memory_order_relaxed);
}
void metrics_engine_turn_refused(metrics_turn_refused_t why)
{
    if ((unsigned)why < METRICS_TURN_REFUSED_COUNT)
        atomic_fetch_add_explicit(&turn_refused[why], 1, memory_order_relaxed);
}
void metrics_store_refused(void) { atomic_fetch_add_explicit(&store_refused, 1, memory_order_relaxed); }

void metrics_streams_open(int delta) { atomic_fetch_add_explicit(&streams_open, delta, memory_order_relaxed); }
void metrics_stream_event(void) { atomic_fetch_add_explicit(&stream_events, 1, memory_order_relaxed); }
void metrics_stream_resync(void) { atomic_fetch_add_explicit(&stream_resyncs, 1, memory_order_relaxed); }
void metrics_stream_stalled(void) { atomic_fetch_add_explicit(&streams_stalled, 1, memory_order_relaxed); }
void metrics_stream_closed(events_close_t why)
{
    if ((unsigned)why < EVENTS_CLOSE_COUNT)
        atomic_fetch_add_explicit(&streams_closed[why], 1, memory_order_relaxed);
}
void metrics_buffer_refused(metrics_refused_t why)
{
    if ((unsigned)why < METRICS_REFUSED_COUNT)
        atomic_fetch_add_explicit(&buffer_refused[why], 1, memory_order_relaxed);
}
void metrics_pubsub_reconnect(void) { atomic_fetch_add_explicit(&pubsub_reconnects, 1, memory_order_relaxed); }
void metrics_flag_check(void) { atomic_fetch_add_explicit(&flag_checks, 1, memory_order_relaxed); }

void metrics_redis_up(bool up) { atomic_store_explicit(&redis_up, up ? 1 : 0, memory_order_relaxed); }

void metrics_connection(int delta) { atomic_fetch_add_explicit(&open_connections, delta, memory_order_relaxed); }

void metrics_listeners(const acceptor_t *main_port, const acceptor_t *probe_port)
{
    listeners[0] = main_port;
    listeners[1] = probe_port;
}

void metrics_init(int route_count, metrics_route_name_fn route_name)
{
    routes = !route_name || route_count < 0 ? 0 : route_count < ROUTE_SLOTS ? route_count : ROUTE_SLOTS;
    route_names = route_name;
}

/* One metric without labels: its HELP and TYPE lines, then its value. */
static void write_counter(buf_t *b, const char *name, const char *help, unsigned long long value)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, value);
}

static void write_gauge(buf_t *b, const char *name, const char *help, long long value)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help, name, name, value);
}

/* Redis's memory policy as last read in the background (redis_memory.h),
 * and whether it refuses writes now (store_is_full). */
static void write_redis_memory(buf_t *b, struct store *store)
{
    redis_memory_t memory;
    redis_memory_get(&memory);
    write_gauge(b, "chessd_redis_eviction_possible",
        "1 when Redis's maxmemory-policy may evict games (any but noeviction, volatile-* too, or one that cannot "
        "be read), else 0.", memory.eviction_possible);
    buf_printf(b, "# HELP chessd_redis_maxmemory_policy_info Redis's maxmemory-policy, as last read (unknown: not "
                  "read).\n# TYPE chessd_redis_maxmemory_policy_info gauge\n"
                  "chessd_redis_maxmemory_policy_info{policy=\"%s\"} 1\n", memory.policy);
    write_gauge(b, "chessd_redis_maxmemory_bytes", "Redis's maxmemory, as last read (0: no limit).",
        (long long)memory.maxmemory);
    write_gauge(b, "chessd_redis_full",
        "1 while Redis refuses writes for lack of memory (it answered OOM since the last write it took, and no "
        "reading since found room), else 0.", store_is_full(store));
}

/* The accept threads' counts (acceptor.h), by listener. */
static void write_listeners(buf_t *b)
{
    acceptor_stats_t stats[2] = { { 0 }, { 0 } };
    for (int i = 0; i < 2; i++)
        if (listeners[i])
            acceptor_stats(listeners[i], &stats[i]);
    buf_printf(b, "# HELP chessd_accepted_connections Connections accepted and not yet closed (waiting for a place "
                  "and lingering ones included), by listening port: what --max-connections and "
                  "--per-ip-connections count.\n# TYPE chessd_accepted_connections gauge\n");
    for (int i = 0; i < 2; i++)
        if (listeners[i])
            buf_printf(b, "chessd_accepted_connections{listener=\"%s\"} %u\n", listener_names[i], stats[i].open);
    write_gauge(b, "chessd_connections_waiting",
        "Connections whose client address holds --per-ip-connections already, waiting a moment for one to close.",
        stats[0].waiting);
    write_counter(b, "chessd_address_full_closes_total",
        "Connections closed unserved because their client address kept --per-ip-connections full.",
        (unsigned long long)stats[0].refused);
}

/* The engine pool's state and counters. */
static void write_engine(buf_t *b, struct engine_pool *engines)
{
    engine_pool_stats_t st;
    engine_pool_stats(engines, &st);
    write_gauge(b, "chessd_engine_workers", "Engine processes this replica keeps (0: no engine configured).",
        st.workers);
    write_gauge(b, "chessd_engine_workers_up", "Engine processes running now.", st.up);
    write_gauge(b, "chessd_engine_workers_busy", "Engine processes running a job now.", st.busy);
    write_gauge(b, "chessd_engine_jobs_waiting", "Jobs waiting for a free engine now.", st.waiting);
    write_gauge(b, "chessd_analysis_waiting", "Analysis requests queued for an engine route thread now.",
        atomic_load_explicit(&analysis_waiting, memory_order_relaxed));
    write_counter(b, "chessd_analysis_refused_total",
        "Analysis requests answered 503 engine_busy unrun: the engine routes' queue was full.",
        atomic_load_explicit(&analysis_refused, memory_order_relaxed));
    write_counter(b, "chessd_engine_jobs_total", "Engine jobs run (a retry not counted again).", st.jobs);
    write_counter(b, "chessd_engine_jobs_failed_total",
        "Engine jobs that failed, after their retry: answered engine_failed, busy or unavailable.", st.jobs_failed);
    write_counter(b, "chessd_engine_jobs_retried_total", "Engine jobs run a second time after their engine failed.",
        st.jobs_retried);
    write_counter(b, "chessd_engine_restarts_total", "Engine processes started again after one failed.", st.restarts);
    write_counter(b, "chessd_engine_start_failures_total", "Engine starts that failed (the start is retried later).",
        st.start_failures);
    buf_printf(b, "# HELP chessd_engine_failures_total Engine jobs whose engine failed, by kind (timed out: past its "
                  "deadline; crashed: exited or closed its output; garbage: a protocol error or an illegal move).\n"
                  "# TYPE chessd_engine_failures_total counter\n"
                  "chessd_engine_failures_total{kind=\"timeout\"} %llu\n"
                  "chessd_engine_failures_total{kind=\"crashed\"} %llu\n"
                  "chessd_engine_failures_total{kind=\"garbage\"} %llu\n",
               (unsigned long long)st.timeouts, (unsigned long long)st.crashes, (unsigned long long)st.garbage);
    engine_turns_stats_t turns;
    engine_turns_stats(atomic_load(&engine_turns), &turns);
    buf_printf(b, "# HELP chessd_engine_turns_total The computer's turns in games taken by this replica, by outcome "
                  "(played; stale: the turn was gone, a later version or the game over; failed: left for another try; "
                  "recovered: a lost turn queued again by the sweep).\n"
                  "# TYPE chessd_engine_turns_total counter\n"
                  "chessd_engine_turns_total{outcome=\"played\"} %llu\n"
                  "chessd_engine_turns_total{outcome=\"stale\"} %llu\n"
                  "chessd_engine_turns_total{outcome=\"failed\"} %llu\n"
                  "chessd_engine_turns_total{outcome=\"recovered\"} %llu\n",
               (unsigned long long)turns.played, (unsigned long long)turns.stale, (unsigned long long)turns.failed,
               (unsigned long long)turns.recovered);
    write_counter(b, "chessd_engine_turns_requeue_skipped_total",
        "Overdue turns the sweep found still waiting or being played, so not queued again.", turns.requeue_skipped);
    write_counter(b, "chessd_engine_consumers_removed_total",
        "Engine job consumers of workers gone (idle, owning nothing) removed by this replica.", turns.consumers_removed);
    write_gauge(b, "chessd_engine_turns_queued",
        "The computer's turns waiting for an engine, from every replica (as this replica last read them; 0 when "
        "it runs no turns).", turns.queued);
    write_gauge(b, "chessd_engine_turns_in_flight", "The computer's turns being played now, on every replica.",
        turns.in_flight);
    write_gauge(b, "chessd_engine_turns_clients", "Clients with turns waiting.", turns.owners);
    buf_printf(b, "# HELP chessd_engine_turns_oldest_seconds How long the oldest waiting turn has waited.\n"
                  "# TYPE chessd_engine_turns_oldest_seconds gauge\n"
                  "chessd_engine_turns_oldest_seconds %.3f\n", (double)turns.oldest_age_ms / 1000.0);
    buf_printf(b, "# HELP chessd_engine_turns_refused_total Moves and creations refused because they would queue a "
                  "computer's turn past a bound (per_client: --engine-turns-per-client; backlog: "
                  "--engine-turns-max).\n"
                  "# TYPE chessd_engine_turns_refused_total counter\n"
                  "chessd_engine_turns_refused_total{reason=\"per_client\"} %llu\n"
                  "chessd_engine_turns_refused_total{reason=\"backlog\"} %llu\n",
               (unsigned long long)atomic_load(&turn_refused[METRICS_TURN_REFUSED_PER_CLIENT]),
               (unsigned long long)atomic_load(&turn_refused[METRICS_TURN_REFUSED_BACKLOG]));
    buf_printf(b, "# HELP chessd_analysis_refused_by_reason_total Analysis requests refused unrun, by reason "
                  "(queue_full: the engine routes' queue was full; per_client: --engine-analyses-per-client; busy: "
                  "no engine came free within a search's time).\n"
                  "# TYPE chessd_analysis_refused_by_reason_total counter\n"
                  "chessd_analysis_refused_by_reason_total{reason=\"queue_full\"} %llu\n"
                  "chessd_analysis_refused_by_reason_total{reason=\"per_client\"} %llu\n"
                  "chessd_analysis_refused_by_reason_total{reason=\"busy\"} %llu\n",
               (unsigned long long)atomic_load(&analysis_refused_by[METRICS_ANALYSIS_REFUSED_QUEUE_FULL]),
               (unsigned long long)atomic_load(&analysis_refused_by[METRICS_ANALYSIS_REFUSED_PER_CLIENT]),
               (unsigned long long)atomic_load(&analysis_refused_by[METRICS_ANALYSIS_REFUSED_BUSY]));
}

/* The buffer budget (http/membudget.h) and why streams closed. */
static void write_buffers(buf_t *b)
{
    buf_printf(b, "# HELP chessd_streams_closed_total Game event streams closed, by why (client: it went; stalled: no "
                  "progress for --stream-stall-timeout; overflow: its bytes waiting passed their bound; idle: the "
                  "--timeout idle timeout; budget: shed to keep within --buffer-budget; shutdown; ended: its game "
                  "ended or is gone; error: out of memory).\n# TYPE chessd_streams_closed_total counter\n");
    for (int i = 0; i < EVENTS_CLOSE_COUNT; i++)
        buf_printf(b, "chessd_streams_closed_total{reason=\"%s\"} %llu\n", events_close_name((events_close_t)i),
                   (unsigned long long)atomic_load_explicit(&streams_closed[i], memory_order_relaxed));
    write_gauge(b, "chessd_buffered_bytes",
        "Bytes held now for clients that read slowly: event streams' queues, exports' text, long polls' answers.",
        (long long)membudget_used());
    write_gauge(b, "chessd_buffer_budget_bytes", "The most chessd_buffered_bytes may reach (--buffer-budget).",
        (long long)membudget_limit());
    static const char *const refused[METRICS_REFUSED_COUNT] = { "buffers_full", "too_many_exports" };
    buf_printf(b, "# HELP chessd_buffer_refusals_total New event streams, long polls and exports answered 503, by "
                  "problem code: the buffer budget spent, or --max-exports running.\n"
                  "# TYPE chessd_buffer_refusals_total counter\n");
    for (int i = 0; i < METRICS_REFUSED_COUNT; i++)
        buf_printf(b, "chessd_buffer_refusals_total{reason=\"%s\"} %llu\n", refused[i],
                   (unsigned long long)atomic_load_explicit(&buffer_refused[i], memory_order_relaxed));
    unsigned exports;
    unsigned long long shed;
    game_export_stats(&exports, &shed);
    write_gauge(b, "chessd_exports_open", "Exports (POST /v1/games/export) being answered now (--max-exports).", exports);
    write_counter(b, "chessd_exports_shed_total",
        "Exports cut to keep within --buffer-budget: their client had kept the most bytes waiting the longest.", shed);
}

char *metrics_render(struct store *store, struct engine_pool *engines, size_t *length)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, 8192);
    buf_printf(&b, "# HELP chessd_http_requests_total HTTP requests by route and status.\n"
            "# TYPE chessd_http_requests_total counter\n");
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
            buf_printf(&b, "chessd_http_requests_total{route=\"%s\",status=\"%s\"} %llu\n", name, status, n);
        }
    }
    buf_printf(&b, "# HELP chessd_http_request_duration_seconds Time from first byte to response queued.\n"
            "# TYPE chessd_http_request_duration_seconds histogram\n");
    unsigned long long cumulative = 0;
    for (int i = 0; i <= BUCKET_COUNT; i++) {
        cumulative += atomic_load_explicit(&latency_buckets[i], memory_order_relaxed);
        if (i < BUCKET_COUNT)
            buf_printf(&b, "chessd_http_request_duration_seconds_bucket{le=\"%g\"} %llu\n", buckets[i], cumulative);
        else
            buf_printf(&b, "chessd_http_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n", cumulative);
    }
    buf_printf(&b, "chessd_http_request_duration_seconds_sum %.6f\n",
        (double)atomic_load_explicit(&latency_micros_sum, memory_order_relaxed) / 1e6);
    buf_printf(&b, "chessd_http_request_duration_seconds_count %llu\n", cumulative);
    write_counter(&b, "chessd_moves_applied_total", "Game moves written.",
        atomic_load_explicit(&moves_applied, memory_order_relaxed));
    write_counter(&b, "chessd_version_conflicts_total", "Game changes refused for a stale version.",
        atomic_load_explicit(&version_conflicts, memory_order_relaxed));
    write_counter(&b, "chessd_store_full_total", "Game writes refused because Redis is out of memory (507).",
        atomic_load_explicit(&store_full, memory_order_relaxed));
    write_counter(&b, "chessd_outcome_unknown_total",
        "Game writes sent to Redis that got no answer and could not be checked (503 outcome_unknown).",
        atomic_load_explicit(&outcomes_unknown, memory_order_relaxed));
    write_gauge(&b, "chessd_open_connections", "HTTP connections open now.",
        atomic_load_explicit(&open_connections, memory_order_relaxed));
    write_listeners(&b);
    write_gauge(&b, "chessd_perft_waiting", "Perft requests queued for a pool thread now.",
        atomic_load_explicit(&perft_waiting, memory_order_relaxed));
    write_gauge(&b, "chessd_store_waiting", "Game requests queued for a store thread now.",
        atomic_load_explicit(&store_waiting, memory_order_relaxed));
    write_counter(&b, "chessd_store_refused_total",
        "Game requests answered 503 unrun: the store threads' queue was full, or they waited past the Redis timeout.",
        atomic_load_explicit(&store_refused, memory_order_relaxed));
    write_gauge(&b, "chessd_streams_open", "Game event streams and long-poll requests held now.",
        atomic_load_explicit(&streams_open, memory_order_relaxed));
    write_counter(&b, "chessd_stream_events_total", "Events queued on game event streams (snapshots included).",
        atomic_load_explicit(&stream_events, memory_order_relaxed));
    write_counter(&b, "chessd_stream_resyncs_total",
        "Snapshots sent to a stream that missed events (a gap, a new subscription, a lost Redis "
        "connection, a silent game that moved).",
        atomic_load_explicit(&stream_resyncs, memory_order_relaxed));
    write_counter(&b, "chessd_streams_stalled_total",
        "Game event streams closed because their client stopped reading: it took none of the bytes waiting for it "
        "for --stream-stall-timeout seconds, or they passed their bound, or the --timeout idle timeout closed it.",
        atomic_load_explicit(&streams_stalled, memory_order_relaxed));
    write_buffers(&b);
    write_counter(&b, "chessd_pubsub_reconnects_total", "Redis Pub/Sub connections made again after one was lost.",
        atomic_load_explicit(&pubsub_reconnects, memory_order_relaxed));
    write_counter(&b, "chessd_flag_checks_total", "Games checked for a fallen flag when their clock's deadline came.",
        atomic_load_explicit(&flag_checks, memory_order_relaxed));
    write_engine(&b, engines);
    wire_stats_t wire;
    wire_stats(&wire);
    write_counter(&b, "chessd_http_refused_total",
        "Connections refused for malformed HTTP (400) or a chunked body over the cap (413) before any of "
        "the request ran.",
        (unsigned long long)wire.refused);
    buf_printf(&b, "# HELP chessd_http_deadline_closes_total Connections closed because a request's head or body came too "
            "slowly.\n# TYPE chessd_http_deadline_closes_total counter\n"
            "chessd_http_deadline_closes_total{phase=\"head\"} %llu\n"
            "chessd_http_deadline_closes_total{phase=\"body\"} %llu\n",
        (unsigned long long)wire.header_timeouts, (unsigned long long)wire.body_timeouts);
    write_counter(&b, "chessd_http_framing_backstop_total",
        "Requests refused (400) by the server's second framing check, behind the strict reader: any above 0 "
        "means the reader was bypassed (see api/http/interpose.c).",
        atomic_load_explicit(&framing_backstops, memory_order_relaxed));
    write_counter(&b, "chessd_http_library_messages_total",
        "Messages from libmicrohttpd (aborted connections and the like); a few a second are logged.",
        atomic_load_explicit(&library_messages, memory_order_relaxed));
    store_stats_t stats = { 0 };
    if (store)
        store_stats(store, &stats);
    write_counter(&b, "chessd_redis_errors_total", "Redis commands that failed or timed out.",
        (unsigned long long)stats.errors);
    write_counter(&b, "chessd_redis_connects_total", "Redis connections made (first and reconnects).",
        (unsigned long long)stats.connects);
    write_counter(&b, "chessd_redis_redirects_total",
        "MOVED and ASK answers of a Redis Cluster followed (its slots moving).", (unsigned long long)stats.redirects);
    write_gauge(&b, "chessd_redis_configured", "1 when a Redis is configured (games on), 0 with --redis none.",
        store != NULL);
    write_counter(&b, "chessd_redis_fast_failures_total",
        "Redis commands failed at once, unsent, because their node was held down (the breaker).",
        (unsigned long long)stats.fast_failures);
    int up = atomic_load_explicit(&redis_up, memory_order_relaxed);
    if (store && up >= 0)
        write_gauge(&b, "chessd_redis_up",
            "1 when Redis answered the readiness watcher's latest probe and the player-token secret there "
            "is usable, else 0.", up);
    if (store) {
        store_health_t health;
        store_health(store, &health);
        buf_printf(&b, "# HELP chessd_redis_fault 1 for what keeps Redis from being used now (the breaker's view; "
                       "auth_refused, database_refused and tls_failed are settings to fix), else 0.\n"
                       "# TYPE chessd_redis_fault gauge\n");
        for (int f = STORE_FAULT_NONE + 1; f < STORE_FAULT_COUNT; f++)
            buf_printf(&b, "chessd_redis_fault{fault=\"%s\"} %d\n", store_fault_name((store_fault_t)f),
                       !health.up && health.fault == (store_fault_t)f);
        write_redis_memory(&b, store);
    }
    return buf_finish(&b, length);
}
