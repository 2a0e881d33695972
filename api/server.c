/* Start-up wiring and the drain: the game store, the event hub, the
 * readiness watcher, the work pools, the request budgets and the service
 * keys, made from the settings. The transport (http/httpd.h) gets them
 * through its callbacks: routes, refusals as problems, metrics, the keys'
 * quotas, event streams and long polls. Signals are taken synchronously
 * with sigwait in the main thread; SIGTERM drains in two phases. */
#include "server.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../store/store.h"
#include "app.h"
#include "engine/pool.h"
#include "fiber_pool.h"
#include "game/deadlines.h"
#include "webhooks/worker.h"
#include "game/engine_turns.h"
#include "game/reviews.h"
#include "game/upgrade.h"
#include "../rules/base/clock.h"
#include "http/cors.h"
#include "http/httpd.h"
#include "http/membudget.h"
#include "http/mhd_version.h"
#include "http/ratelimit.h"
#include "http/workpool.h"
#include "live/events.h"
#include "metrics.h"
#include "problem.h"
#include "readiness.h"
#include "redis_memory.h"
#include "routes.h"
#include "service_keys.h"

enum {
    POOL_QUEUE_PER_THREAD = 16,
    POOL_NICENESS = 10,          /* perft yields the CPU to the connection threads */
    STORE_QUEUE_PER_THREAD = 64, /* game requests waiting for a fiber (or an export for a thread), per one */
    ENGINE_QUEUE_PER_WORKER = 4, /* analyses waiting for an engine route thread, per engine worker */
    FILE_LIMIT_SPARE = 256,      /* descriptors beyond the connections: the listeners, logs, the hub */
    REDIS_FILES_PER_THREAD = 8,  /* a thread's Redis connections: one a node (cluster masters), and a check's */
    BULK_GAMES_BURST = 1000,     /* games of bulks at once per address: two full rounds */
};

typedef struct server {
    const config_t *cfg;
    store_t *store; /* NULL with --redis none: no games */
    app_t app;      /* what handlers see: cfg and store */
    ratelimit_t *by_address, *by_token, *creations, *bulk_games;
    service_keys_t *keys; /* --service-keys-file's; NULL: none */
    workpool_t *pool;       /* perft */
    workpool_t *store_pool; /* exports read games there; NULL without a store */
    fiber_pool_t *fibers;   /* game requests run there, on their connection's loop; NULL without a store */
    workpool_t *engine_routes; /* analysis requests: one thread per engine worker */
    engine_pool_t *engines;
    engine_pool_t *variant_engines; /* --variant-engine's, for every variant but standard chess */
    engine_turns_t *turns; /* the computer's turns in games: with an engine and a store */
    reviews_t *reviews;    /* whole-game reviews: with an engine and a store, as the turns */
    deadlines_t *deadlines; /* the sweep of the games' deadlines: with a store */
    webhook_worker_t *webhooks; /* the webhook deliverer: with a store and --webhook-workers */
    upgrade_t *upgrade;     /* the pass that keeps the games of older versions: with a store, until done */
    events_t *events; /* NULL with --redis none */
    cors_t cors;      /* --cors-origins, read when set */
    httpd_t *httpd;
} server_t;

/* --- the transport's callbacks (httpd_app_t) --- */

static bool on_route(void *ctx, const char *raw, size_t length, target_t *target, api_request_t *req,
                     api_response_t *res)
{
    (void)ctx;
    return routes_parse_target(raw, length, target, res) && routes_find(req, res);
}

static void on_route_info(void *ctx, int route, unsigned *flags, int *pool)
{
    (void)ctx;
    *flags = routes_flags(route);
    *pool = routes_pool(route);
}

static void on_handle(void *ctx, const api_request_t *req, api_response_t *res)
{
    (void)ctx;
    routes_handle(req, res);
}

/* The transport's own refusals, as problems. */
static void on_refuse(void *ctx, httpd_refusal_t why, int pool, const char *detail, const httpd_limit_t *limit,
                      api_response_t *res)
{
    bool store = pool == ROUTES_POOL_STORE;
    switch (why) {
    case HTTPD_REFUSE_MALFORMED:
        api_problem(res, API_EBAD_REQUEST, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_TOO_LARGE:
        api_problem(res, API_EPAYLOAD_TOO_LARGE, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_DRAINING:
        api_problem(res, API_EUNAVAILABLE, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_RATE_LIMITED:
        if (limit)
            api_problem_quota(res, API_ERATE_LIMITED, detail, limit->name, limit->max, limit->retry_after);
        else
            api_problem(res, API_ERATE_LIMITED, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_BUFFERS_FULL:
        metrics_add(METRIC_BUFFER_REFUSALS, METRICS_REFUSED_BUFFERS_FULL, 1);
        api_problem(res, API_EBUFFERS_FULL,
                    "this replica holds as many bytes for slow readers as --buffer-budget allows; retry shortly",
                    NULL, NULL);
        break;
    case HTTPD_REFUSE_TOO_MANY_STREAMS:
        api_problem(res, API_ETOO_MANY_STREAMS,
                    "this replica holds as many event streams and long polls as it may, in all or from this address",
                    NULL, NULL);
        break;
    case HTTPD_REFUSE_POOL_FULL:
        if (pool == ROUTES_POOL_ENGINE) {
            metrics_add(METRIC_ANALYSIS_REFUSED, METRICS_ANALYSIS_REFUSED_QUEUE_FULL, 1);
            api_problem(res, API_EENGINE_BUSY, "every engine is busy and the analysis queue is full", NULL, NULL);
            res->retry_after = 1;
            break;
        }
        if (store)
            metrics_count(METRIC_STORE_REFUSED);
        api_problem(res, store ? API_ESTORE_UNAVAILABLE : API_EUNAVAILABLE,
                    store ? "the game store's threads are all busy and their queue is full; nothing was changed"
                          : "the perft workers are all busy; retry shortly",
                    NULL, NULL);
        res->retry_after = 1;
        break;
    case HTTPD_REFUSE_POOL_LATE:
        if (store)
            metrics_count(METRIC_STORE_REFUSED);
        api_problem(res, API_ESTORE_UNAVAILABLE,
                    "the game store's threads were all busy for longer than its timeout; nothing was changed", NULL,
                    NULL);
        break;
    case HTTPD_REFUSE_CLIENT_LEFT:
        api_problem(res, API_EUNAVAILABLE, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_POOL_ADDRESS: {
        unsigned max = ((server_t *)ctx)->app.config->engine_analyses_per_client;
        char text[200];
        snprintf(text, sizeof text,
                 "this client has %u analyses running or waiting on this replica, its most "
                 "(--engine-analyses-per-client)", max);
        metrics_add(METRIC_ANALYSIS_REFUSED, METRICS_ANALYSIS_REFUSED_PER_CLIENT, 1);
        api_problem_quota(res, API_ETOO_MANY_ANALYSES, text, "engine-analyses-per-client", max, 1);
        break;
    }
    case HTTPD_REFUSE_CORS:
        api_problem(res, API_ECORS_REFUSED, detail, NULL, NULL);
        break;
    case HTTPD_REFUSE_SPOOL_FULL:
        api_problem(res, API_EUNAVAILABLE, detail, NULL, NULL);
        res->retry_after = 5;
        break;
    case HTTPD_REFUSE_NO_MEMORY:
    default:
        api_problem(res, API_EINTERNAL, detail ? detail : "out of memory", NULL, NULL);
        break;
    }
}

static void on_completed(void *ctx, int route, unsigned status, uint64_t micros)
{
    (void)ctx;
    metrics_request(route, status, micros);
}

static void on_connection(void *ctx, int delta)
{
    (void)ctx;
    metrics_add(METRIC_OPEN_CONNECTIONS, 0, delta);
}

static void on_library_message(void *ctx)
{
    (void)ctx;
    metrics_count(METRIC_HTTP_LIBRARY_MESSAGES);
}

static void on_framing_backstop(void *ctx)
{
    (void)ctx;
    metrics_count(METRIC_HTTP_FRAMING_BACKSTOP);
}

static void on_pool_waiting(void *ctx, int pool, int delta)
{
    (void)ctx;
    metric_t waiting = pool == ROUTES_POOL_PERFT    ? METRIC_PERFT_WAITING
                       : pool == ROUTES_POOL_ENGINE ? METRIC_ANALYSIS_WAITING
                                                    : METRIC_STORE_WAITING;
    metrics_add(waiting, 0, delta);
}

/* The hub's counts go to /metrics, mapped by one table (as the game
 * service's, in config.c): the hub sits below the metrics it feeds. */
static void count_hub(events_counter_t counter, int label, long long delta)
{
    static const metric_t metrics[EVENTS_COUNTER_COUNT] = {
        [EVENTS_COUNTER_STREAMS_OPEN] = METRIC_STREAMS_OPEN,
        [EVENTS_COUNTER_EVENT] = METRIC_STREAM_EVENTS,
        [EVENTS_COUNTER_RESYNC] = METRIC_STREAM_RESYNCS,
        [EVENTS_COUNTER_STALLED] = METRIC_STREAMS_STALLED,
        [EVENTS_COUNTER_CLOSED] = METRIC_STREAMS_CLOSED,
        [EVENTS_COUNTER_PUBSUB_RECONNECT] = METRIC_PUBSUB_RECONNECTS,
        [EVENTS_COUNTER_FLAG_CHECK] = METRIC_FLAG_CHECKS,
        [EVENTS_COUNTER_PRESENCE_READ] = METRIC_PRESENCE_READS,
    };
    if ((unsigned)counter < EVENTS_COUNTER_COUNT)
        metrics_add(metrics[counter], label, delta);
}

/* Every Redis call of a game request within its budget, counted from its
 * arrival: the Redis timeout, and half as much again for a second round
 * trip (a write whose answer was lost, read back). */
static void on_pool_budget(void *ctx, int pool, bool begin, int64_t left_us)
{
    (void)ctx;
    if (pool != ROUTES_POOL_STORE)
        return;
    store_set_deadline(begin ? store_now_ms() + left_us / 1000 : 0);
}

/* A service key's quotas in place of the per-address and per-token
 * budgets: one request, and one creation on a creating route (a bulk's
 * games are taken by its handler). A key no line has is counted per
 * address, and refused at the route that needs a key. */
static httpd_quota_t on_quota(void *ctx, const char *authorization, bool creates, httpd_spent_t *spent)
{
    const unsigned counts[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_REQUESTS] = 1, [SERVICE_QUOTA_CREATES] = creates };
    service_keys_spent_t over;
    switch (service_keys_take(((server_t *)ctx)->keys, authorization, counts, clock_now_us(), &over)) {
    case SERVICE_KEYS_OK:
        return HTTPD_QUOTA_TAKEN;
    case SERVICE_KEYS_ESPENT:
        snprintf(spent->name, sizeof spent->name, "%s", over.limit);
        snprintf(spent->detail, sizeof spent->detail, "%s", over.detail);
        spent->max = over.max;
        spent->retry_after = over.retry_after;
        return HTTPD_QUOTA_SPENT;
    default:
        return HTTPD_QUOTA_NONE;
    }
}

/* --- event streams and long polls: the hub (httpd_live_t) --- */

static httpd_live_status_t live_status(events_status_t status)
{
    switch (status) {
    case EVENTS_OK:
        return HTTPD_LIVE_OK;
    case EVENTS_ETOO_MANY:
        return HTTPD_LIVE_ETOO_MANY;
    case EVENTS_EDRAINING:
        return HTTPD_LIVE_EDRAINING;
    case EVENTS_EBUDGET:
        return HTTPD_LIVE_EBUDGET;
    default:
        return HTTPD_LIVE_ENOMEM;
    }
}

static httpd_live_status_t live_admit(void *ctx, const void *address, size_t length)
{
    return live_status(events_admit(((server_t *)ctx)->events, address, length));
}

static void live_release(void *ctx, const void *address, size_t length)
{
    events_release(((server_t *)ctx)->events, address, length);
}

static httpd_live_status_t live_attach(void *ctx, void *stream, const void *address, size_t length,
                                       const httpd_conn_t *conn)
{
    return live_status(events_stream_attach(((server_t *)ctx)->events, stream, address, length, conn));
}

static ssize_t live_read(void *stream, char *out, size_t max) { return events_stream_read(stream, out, max); }

static void live_free(void *stream) { events_stream_release(stream); }

static void live_idle(void *stream) { events_stream_idle(stream); }

static httpd_live_status_t live_wait(void *ctx, const char *key, uint64_t version, unsigned seconds,
                                     const void *address, size_t length, const httpd_conn_t *conn)
{
    return live_status(events_wait(((server_t *)ctx)->events, key, version, seconds, address, length, conn));
}

static const httpd_live_t live_callbacks = { live_admit, live_release, live_attach, live_read,
                                             live_free,  live_idle,    live_wait };

/* --- start and stop --- */

static void server_free(server_t *srv)
{
    events_stop(srv->events);
    workpool_free(srv->pool);
    workpool_free(srv->store_pool);
    fiber_pool_free(srv->fibers); /* the loops have stopped, or never started */
    workpool_free(srv->engine_routes);
    reviews_stop(srv->reviews);
    engine_turns_stop(srv->turns);
    upgrade_stop(srv->upgrade);
    metrics_deadlines(NULL);
    deadlines_stop(srv->deadlines);
    metrics_webhooks(NULL);
    webhook_worker_stop(srv->webhooks);
    metrics_engine_turns(NULL);
    engine_pool_free(srv->engines);
    engine_pool_free(srv->variant_engines);
    readiness_stop();
    redis_memory_stop();
    httpd_free(srv->httpd);
    store_close(srv->store);
    ratelimit_free(srv->by_address);
    ratelimit_free(srv->by_token);
    ratelimit_free(srv->creations);
    ratelimit_free(srv->bulk_games);
    service_keys_free(srv->keys);
}

static void pause_briefly(void)
{
    struct timespec pause = { 0, 10 * 1000 * 1000 };
    nanosleep(&pause, NULL);
}

/* Raises the open-file limit to fit --max-connections (each is a
 * descriptor), the Redis connections of the threads (one per node each, a
 * few nodes on a cluster) and a few more, as far as the hard limit allows;
 * says so when it cannot (connections past it are refused at accept). */
static void fit_file_limit(unsigned max_connections, unsigned threads)
{
    struct rlimit limit;
    rlim_t want = (rlim_t)max_connections + FILE_LIMIT_SPARE + (rlim_t)threads * REDIS_FILES_PER_THREAD;
    if (getrlimit(RLIMIT_NOFILE, &limit) || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= want)
        return;
    rlim_t can = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > want ? want : limit.rlim_max;
    if (can > limit.rlim_cur) {
        limit.rlim_cur = can;
        (void)setrlimit(RLIMIT_NOFILE, &limit);
    }
    if (can < want)
        fprintf(stderr, "chessd: the open-file limit %llu is below --max-connections %u and what Redis needs: raise "
                        "it (ulimit -n) or lower --max-connections\n", (unsigned long long)can, max_connections);
}

/* The drain after SIGTERM: streams end and long polls are answered; phase 1
 * serves what comes, each answer closing its connection, until no connection
 * is left or none has had a request for a moment (an idle kept-alive
 * connection may never speak again), within half the grace; phase 2 refuses
 * new requests (503, no work done) and lets started ones finish. */
static void drain(server_t *srv)
{
    httpd_drain(srv->httpd);
    if (srv->events)
        events_drain(srv->events);
    uint64_t start = clock_now_us(), grace = (uint64_t)srv->cfg->shutdown_grace_seconds * 1000000u, quiet_since = start;
    while (httpd_connections(srv->httpd) > 0 && clock_now_us() - start < grace / 2) {
        if (httpd_in_flight(srv->httpd) > 0)
            quiet_since = clock_now_us();
        else if (clock_now_us() - quiet_since >= 200000)
            break;
        pause_briefly();
    }
    httpd_refuse_new(srv->httpd);
    while (httpd_in_flight(srv->httpd) > 0 && clock_now_us() - start < grace)
        pause_briefly();
}

/* Says on stderr which variants the variant engine plays, and which it
 * does not (Fairy-Stockfish 11.1 has no atomic). */
static void report_variant_engine(const config_t *cfg, const char *path, engine_pool_t *pool)
{
    if (!path) {
        fprintf(stderr, "chessd: no variant engine (--variant-engine %s): the computer plays no variant\n",
                cfg->variant_engine_path);
        return;
    }
    engine_pool_stats_t st;
    engine_pool_stats(pool, &st);
    if (!st.variants) {
        fprintf(stderr, "chessd: --variant-engine %s did not start; it is retried\n", path);
        return;
    }
    char plays[256] = "", lacks[256] = "";
    for (int v = VARIANT_STANDARD + 1; v < VARIANT_COUNT; v++) {
        char *list = st.variants & 1u << v ? plays : lacks;
        size_t used = strlen(list);
        snprintf(list + used, 256 - used, "%s%s", used ? ", " : "", variant_rules((variant_t)v)->key);
    }
    fprintf(stderr, "chessd: --variant-engine %s (%s) plays %s%s%s\n", path, st.name, plays[0] ? plays : "no variant",
            lacks[0] ? "; not " : "", lacks);
}

/* Says on stderr which pages may call this server from a browser, as
 * chessd matches their origins (lower case, no default port). */
static void report_cors(const cors_t *cors)
{
    if (cors->any) {
        fprintf(stderr, "chessd: pages of any origin may call this server (--cors-origins *)\n");
        return;
    }
    fprintf(stderr, "chessd: pages of these origins may call this server (--cors-origins):");
    for (int i = 0; i < cors->count; i++)
        fprintf(stderr, "%s %s", i ? "," : "", cors->origins[i]);
    fprintf(stderr, "\n");
}

/* Reads --service-keys-file into *keys (NULL without one, and for
 * `chessd engine`, which serves no route that needs a key). False, said on
 * stderr naming the line (never a key or a hash), when it is bad. */
static bool open_service_keys(const config_t *cfg, bool engine_only, service_keys_t **keys)
{
    *keys = NULL;
    if (!cfg->service_keys_file[0] || engine_only)
        return true;
    /* A line's '-' quota is the setting it replaces. */
    const service_keys_limits_t limits = { { [SERVICE_QUOTA_REQUESTS] = cfg->rate_limit_ip,
                                             [SERVICE_QUOTA_CREATES] = cfg->rate_limit_create,
                                             [SERVICE_QUOTA_BULK_GAMES] = cfg->rate_limit_bulk_games } };
    char err[512];
    *keys = service_keys_open(cfg->service_keys_file, &limits, err, sizeof err);
    if (!*keys) {
        fprintf(stderr, "chessd: %s; not starting\n", err);
        return false;
    }
    unsigned count = service_keys_count(*keys);
    fprintf(stderr, "chessd: --service-keys-file: %u service key%s; creating games, bulks, exports and analysis "
                    "need one\n", count, count == 1 ? "" : "s");
    return true;
}

static int run(const config_t *cfg, bool engine_only)
{
    char version_err[512];
    bool version_ok = http_mhd_version_check(cfg->allow_untested_libmicrohttpd, version_err, sizeof version_err);
    if (version_err[0])
        fprintf(stderr, "chessd: %s\n", version_err);
    if (!version_ok)
        return 2;
    if (!httpd_bind_ok(cfg->bind)) {
        fprintf(stderr, "chessd: --bind '%s' is not an IPv4 or IPv6 address\n", cfg->bind);
        return 2;
    }
    if (!routes_init()) {
        fprintf(stderr, "chessd: out of memory building the route table\n");
        return 2;
    }
    service_keys_t *keys = NULL;
    if (!open_service_keys(cfg, engine_only, &keys))
        return 2;

    /* Worker threads inherit this mask, so only sigwait below sees the signals. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    const char *engine_path = config_engine_path(cfg), *variant_path = config_variant_engine_path(cfg);
    unsigned engine_processes = cfg->engine_workers * (variant_path ? 2 : 1);
    unsigned loops = cfg->threads ? cfg->threads : 1;
    unsigned fibers_per_loop = (cfg->store_threads + loops - 1) / loops; /* --store-threads split over the loops */
    fit_file_limit(cfg->max_connections,
                   cfg->threads + cfg->store_threads + fibers_per_loop * loops + cfg->perft_threads + engine_processes);
    char err[256] = "";
    store_config_t store_cfg = { .password = cfg->redis_password,
                                 .password_file = cfg->redis_password_file,
                                 .connect_timeout_ms = cfg->redis_connect_timeout_ms,
                                 .command_timeout_ms = cfg->redis_timeout_ms,
                                 .tls_ca_file = cfg->redis_ca_file,
                                 .tls_cert_file = cfg->redis_cert_file,
                                 .tls_key_file = cfg->redis_key_file,
                                 .tls_server_name = cfg->redis_tls_server_name,
                                 .tls_insecure_no_verify = cfg->redis_tls_insecure_skip_verify,
                                 /* Held down until the readiness watcher's probe sees
                                  * it again: no request pays for a trial. */
                                 .breaker = true };
    snprintf(store_cfg.url, sizeof store_cfg.url, "%s", cfg->redis_url);
    bool games = config_redis_enabled(cfg); /* else no store and no events hub */
    if (cfg->active_game_ttl_seconds)
        fprintf(stderr, "chessd: WARNING: --active-ttl (CHESSD_ACTIVE_TTL) %u is ignored: an active game is kept "
                        "until it ends by a rule (its clock, its deadline); a finished one --finished-ttl\n",
                cfg->active_game_ttl_seconds);
    if (games && cfg->redis_tls_insecure_skip_verify)
        fprintf(stderr, "chessd: WARNING: --redis-tls-insecure-skip-verify: Redis's TLS certificate is NOT "
                        "verified; anyone on the network path can read and change every game\n");
    server_t srv = { .cfg = cfg, .store = games ? store_open(&store_cfg, err, sizeof err) : NULL,
                     .by_address = ratelimit_new(cfg->rate_limit_ip, cfg->rate_limit_burst),
                     .by_token = ratelimit_new(cfg->rate_limit_token, cfg->rate_limit_burst),
                     .creations = ratelimit_new(cfg->rate_limit_create, cfg->rate_limit_create * 5),
                     .bulk_games = ratelimit_new(cfg->rate_limit_bulk_games, BULK_GAMES_BURST),
                     .keys = keys,
                     .pool = workpool_new(cfg->perft_threads, cfg->perft_threads * POOL_QUEUE_PER_THREAD, POOL_NICENESS) };
    engine_pool_config_t engine_cfg = { .engine = { .path = engine_path, .hash_mb = (int)cfg->engine_hash_mb },
                                        .workers = cfg->engine_workers };
    srv.engines = engine_pool_new(&engine_cfg);
    engine_cfg.engine.path = variant_path;
    srv.variant_engines = engine_pool_new(&engine_cfg);
    /* A thread for each engine process: an analysis in a variant never waits behind one in chess. */
    srv.engine_routes = workpool_new(engine_processes, engine_processes * ENGINE_QUEUE_PER_WORKER, 0);
    srv.app = (app_t){ .config = cfg, .store = srv.store, .engines = srv.engines,
                       .variant_engines = srv.variant_engines, .engine_only = engine_only,
                       .bulk_games = srv.bulk_games, .service_keys = keys };
    metrics_init(routes_count(), routes_name);
    membudget_set_limit(config_buffer_budget(cfg));
    membudget_malloc_setup();
    events_config_t events_cfg = { .store = srv.store, .count = count_hub, .max_streams = cfg->max_streams,
                                   .max_per_address = cfg->max_streams_per_address,
                                   .heartbeat_seconds = cfg->heartbeat_seconds,
                                   .stall_seconds = cfg->stream_stall_seconds,
                                   .resync_seconds = cfg->resync_seconds,
                                   .presence_mark_ms = config_presence_mark_ms(cfg) };
    config_game_service(cfg, srv.store, &events_cfg.games);
    if (srv.store) {
        srv.store_pool = workpool_new(cfg->store_threads, cfg->store_threads * STORE_QUEUE_PER_THREAD, 0);
        srv.fibers = fiber_pool_new(fibers_per_loop, fibers_per_loop * STORE_QUEUE_PER_THREAD);
        srv.app.store_pool = srv.store_pool;
        srv.events = events_start(&events_cfg, err, sizeof err);
        srv.deadlines = deadlines_start(&events_cfg.games, 0);
        srv.upgrade = upgrade_start(&events_cfg.games);
        metrics_deadlines(srv.deadlines);
        /* A replica that may reach no destination delivers nothing: every
         * attempt would be refused, and spent, on another replica's events. */
        if (cfg->webhook_workers && webhook_allow_enabled(&cfg->webhook_policy)) {
            webhook_worker_config_t hooks = { .store = srv.store, .allow = &cfg->webhook_policy,
                                              .threads = cfg->webhook_workers, .timeout_ms = cfg->webhook_timeout_ms,
                                              .redirects = cfg->webhook_redirects,
                                              .ca_file = cfg->webhook_ca_file[0] ? cfg->webhook_ca_file : NULL,
                                              .retry_ms = cfg->webhook_retry_ms,
                                              .give_up_ms = cfg->webhook_give_up_seconds * 1000u };
            srv.webhooks = webhook_worker_start(&hooks);
            metrics_webhooks(&(metrics_webhooks_t){ srv.webhooks, webhook_worker_stats, webhook_outcome_name });
        }
    }
    bool turns = srv.store && (engine_path || variant_path);
    if (turns) {
        engine_turns_config_t turns_cfg = { .games = events_cfg.games, .engines = srv.engines,
                                            .variant_engines = srv.variant_engines, .workers = cfg->engine_workers,
                                            .max_think_ms = (int)cfg->engine_max_think_ms };
        srv.turns = engine_turns_start(&turns_cfg);
        srv.app.turns = srv.turns;
        metrics_engine_turns(srv.turns);
        reviews_config_t reviews_cfg = { .games = events_cfg.games, .engines = srv.engines,
                                         .variant_engines = srv.variant_engines, .workers = cfg->engine_workers,
                                         .lease_ms = config_engine_lease_ms(cfg),
                                         .max_think_ms = (int)cfg->engine_max_think_ms };
        srv.reviews = srv.turns ? reviews_start(&reviews_cfg) : NULL;
    }
    /* The first probe of Redis runs now, so /readyz answers from the start. */
    bool watching = readiness_start(srv.store) && redis_memory_start(srv.store, cfg->redis_memory_check_seconds);
    if ((games && (!srv.store || !srv.events || !srv.store_pool || !srv.fibers || !srv.deadlines || !srv.upgrade || (turns && (!srv.turns || !srv.reviews))
                   || (cfg->webhook_workers && webhook_allow_enabled(&cfg->webhook_policy) && !srv.webhooks)))
        || !srv.pool
        || !srv.engines || !srv.variant_engines || !srv.engine_routes || !watching) {
        if (games && !srv.store)
            fprintf(stderr, "chessd: --redis: %s\n", err);
        else
            fprintf(stderr, "chessd: out of memory or threads at start-up\n");
        server_free(&srv);
        return 2;
    }
    engine_pool_stats_t engine_stats;
    engine_pool_stats(srv.engines, &engine_stats);
    if (!engine_path)
        fprintf(stderr, "chessd: no engine (--engine %s): analysis answers 503 engine_unavailable\n",
                cfg->engine_path[0] ? cfg->engine_path : "''");
    else if (engine_stats.up < engine_stats.workers)
        fprintf(stderr, "chessd: --engine %s: %u of %u engines started; the rest are retried\n", engine_path,
                engine_stats.up, engine_stats.workers);
    report_variant_engine(cfg, variant_path, srv.variant_engines);
    if (!games)
        fprintf(stderr, "chessd: no Redis configured (--redis none): games are off (their routes answer 404 "
                        "games_disabled); the rules API serves\n");
    /* config_load has read the list already: it cannot fail here. */
    char cors_err[256];
    bool cors = cfg->cors_origins[0] && cors_parse(cfg->cors_origins, &srv.cors, cors_err, sizeof cors_err);
    if (cors)
        report_cors(&srv.cors);

    httpd_config_t http_cfg = {
        .bind = cfg->bind,
        .port = cfg->port,
        .probe_port = cfg->probe_port,
        .probes_only = engine_only,
        .threads = cfg->threads,
        .max_connections = cfg->max_connections,
        .per_address_connections = cfg->per_ip_connections,
        .idle_timeout_seconds = cfg->timeout_seconds,
        .header_timeout_us = (uint64_t)cfg->header_timeout_seconds * 1000000u,
        .body_timeout_us = (uint64_t)cfg->body_timeout_seconds * 1000000u,
        .max_body = cfg->max_body,
        .large_method = "POST",
        .large_path = "/v1/pgn",
        .spool_dir = cfg->spool_dir,
        .max_large_body = cfg->max_pgn_bytes > cfg->max_body ? cfg->max_pgn_bytes : cfg->max_body,
        .large_body_timeout_us = (uint64_t)cfg->pgn_timeout_seconds * 1000000u,
        .max_spool = cfg->max_spool_bytes,
        /* Each budget named as its setting is, in the words a client reads in its 429. */
        .by_address = { srv.by_address, "rate-limit-ip", "requests", "from one client address" },
        .by_token = { srv.by_token, "rate-limit-token", "requests", "with one player token" },
        .creations = { srv.creations, "rate-limit-create", "game creations", "from one client address" },
        .pools = {
            /* perft: a job whose client left while it waited is not run */
            [ROUTES_POOL_PERFT] = { .pool = srv.pool, .skip_gone = true },
            /* game requests: not started within the Redis timeout, refused
             * unrun (a game request is short, and its client may have only
             * half-closed, still reading) */
            [ROUTES_POOL_STORE] = { .submit = srv.fibers ? fiber_pool_submit : NULL, .runner = srv.fibers, .give_up_ms = cfg->redis_timeout_ms,
                                    .extra_ms = cfg->redis_timeout_ms / 2 },
            /* analysis: a job whose client left while it waited is not run */
            [ROUTES_POOL_ENGINE] = { .pool = srv.engine_routes, .skip_gone = true,
                                     .per_address_max = cfg->engine_analyses_per_client },
        },
        .pool_count = ROUTES_POOL_COUNT,
        .cors = cors ? &srv.cors : NULL,
        .app = { .ctx = &srv, .request_app = &srv.app, .route = on_route, .route_info = on_route_info,
                 .handle = on_handle, .refuse = on_refuse, .completed = on_completed, .connection = on_connection,
                 .library_message = on_library_message, .framing_backstop = on_framing_backstop, .pool_waiting = on_pool_waiting,
                 .pool_budget = on_pool_budget, .live = srv.events ? &live_callbacks : NULL,
                 .quota = keys ? on_quota : NULL },
    };
    int status = httpd_start(&http_cfg, &srv.httpd);
    if (status) {
        server_free(&srv);
        return status;
    }
    metrics_listeners(httpd_acceptor(srv.httpd, false), httpd_acceptor(srv.httpd, true));

    int received = 0;
    while (sigwait(&signals, &received) != 0 || (received != SIGTERM && received != SIGINT))
        ;
    fprintf(stderr, "chessd: signal %d: draining\n", received);
    drain(&srv);
    /* Queued pool work runs to its end and resumes its connections, which
     * must all be resumed before the daemon stops; a pool stopped takes no
     * more (a long poll woken late is answered 503 through the queue-full
     * path), and is freed once no server thread can reach it. */
    workpool_stop(srv.pool);
    workpool_stop(srv.store_pool);
    workpool_stop(srv.engine_routes);
    httpd_stop(srv.httpd);
    server_free(&srv);
    fprintf(stderr, "chessd: stopped\n");
    return 0;
}

int server_run(const config_t *cfg) { return run(cfg, false); }

int server_run_engine(const config_t *cfg)
{
    if (!config_redis_enabled(cfg) || !config_engine_path(cfg)) {
        fprintf(stderr, "chessd engine: needs %s: the computer's turns are games in Redis, played by an engine\n",
                !config_redis_enabled(cfg) ? "Redis (--redis URL)" : "an engine (--engine PATH)");
        return 2;
    }
    return run(cfg, true);
}
