/* Server settings from defaults, CHESSD_* variables and flags. One table
 * row describes each setting (flag, variable, default, help, range), so
 * --help, the defaults, the environment and the flags cannot drift apart,
 * and a new setting is one row. A boolean setting's flag alone means true;
 * with a value (--flag=V) and in its variable it takes 1, 0, true or false. */
#define _GNU_SOURCE /* sched_getaffinity and CPU_COUNT, for the default thread count */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/uci.h"
#include "game/service.h"
#include "http/cors.h"
#include "http/membudget.h"
#include "metrics.h"
#include "render/pgn.h"
#include "../store/game_meta.h"

typedef enum { KIND_STRING, KIND_UINT, KIND_SIZE, KIND_BOOL } kind_t;

/* One setting: its flag, its variable, its default (the text a flag would
 * take; "" leaves a string empty; "N/core" is a thread count, N per core,
 * see default_threads), what --help says, its field in config_t and the
 * range of a number. */
typedef struct {
    const char *flag, *env, *initial, *help;
    kind_t kind;
    size_t offset, size;
    unsigned long long min, max;
} setting_t;

/* The default counts. A game request waits for Redis (a round trip, the
 * core idle meanwhile) on a fiber of its server thread, which serves the
 * others meanwhile; four game requests at once per core keep the cores busy
 * (tests/bench/game_compare.sh with BENCH_STORE_THREADS). A server thread is
 * an event loop that never waits, so one per core is enough: more only add
 * context switches. The cores are those this process may run on (its
 * affinity: taskset, a cpuset), not every core of the machine. */
enum { THREADS_DEFAULT_MAX = 256 };

static unsigned default_threads(unsigned per_core)
{
    long cores = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cores = CPU_COUNT(&set);
    if (cores <= 0)
        cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores <= 0)
        cores = 1;
    return cores >= (long)(THREADS_DEFAULT_MAX / per_core) ? THREADS_DEFAULT_MAX : (unsigned)cores * per_core;
}

#define FIELD(name) offsetof(config_t, name), sizeof(((config_t *)0)->name)

static const setting_t settings[] = {
    { "--bind", "CHESSD_BIND", "0.0.0.0", "address to listen on (IPv4 or IPv6)", KIND_STRING, FIELD(bind), 0, 0 },
    { "--port", "CHESSD_PORT", "8080", "TCP port (0: any free port)", KIND_UINT, FIELD(port), 0, 65535 },
    { "--probe-port", "CHESSD_PROBE_PORT", "0",
      "a second TCP port, on --bind, serving only /healthz, /readyz and /metrics on a thread of its own, "
      "without per-address limits: for probes and scrapes (0: none)",
      KIND_UINT, FIELD(probe_port), 0, 65535 },
    { "--threads", "CHESSD_THREADS", "1/core",
      "server threads (default: 1 per core this process may run on, at most 256)", KIND_UINT, FIELD(threads), 1, 1024 },
    { "--max-body", "CHESSD_MAX_BODY", "65536", "largest request body in bytes", KIND_SIZE, FIELD(max_body), 64,
      16u << 20 },
    { "--max-pgn-bytes", "CHESSD_MAX_PGN_BYTES", "1073741824",
      "largest POST /v1/pgn body in bytes; past --max-body it is kept in an unnamed file in --spool-dir and read "
      "as the answer is sent",
      KIND_SIZE, FIELD(max_pgn_bytes), 64, 1ull << 40 },
    { "--pgn-timeout", "CHESSD_PGN_TIMEOUT", "600",
      "seconds to send a POST /v1/pgn body after its head, and again to read its answer", KIND_UINT,
      FIELD(pgn_timeout_seconds), 1, 86400 },
    { "--spool-dir", "CHESSD_SPOOL_DIR", "/tmp", "where large request bodies are kept while read (unnamed files)",
      KIND_STRING, FIELD(spool_dir), 0, 0 },
    { "--max-spool-bytes", "CHESSD_MAX_SPOOL_BYTES", "2147483648",
      "bytes the large bodies' files in --spool-dir may hold at once, all requests together; past it 503",
      KIND_SIZE, FIELD(max_spool_bytes), 0, 1ull << 44 },
    { "--timeout", "CHESSD_TIMEOUT", "30", "idle connection timeout in seconds", KIND_UINT, FIELD(timeout_seconds), 1,
      3600 },
    { "--header-timeout", "CHESSD_HEADER_TIMEOUT", "10", "seconds to send a request's head (line and headers)",
      KIND_UINT, FIELD(header_timeout_seconds), 1, 3600 },
    { "--body-timeout", "CHESSD_BODY_TIMEOUT", "30", "seconds to send a request's body after its head", KIND_UINT,
      FIELD(body_timeout_seconds), 1, 3600 },
    /* Each event stream holds a connection: room for --max-streams of them and
     * ordinary requests besides (the open-file limit is raised to fit). */
    { "--max-connections", "CHESSD_MAX_CONNECTIONS", "16384", "most connections at once", KIND_UINT,
      FIELD(max_connections), 1, 60000 },
    /* One address cannot take every slot; behind a proxy, raise it (or 0). */
    { "--per-ip-connections", "CHESSD_PER_IP_CONNECTIONS", "256",
      "most connections from one client address, an IPv4 address or an IPv6 /64 (0: no limit)", KIND_UINT,
      FIELD(per_ip_connections), 0, 60000 },
    { "--max-perft-depth", "CHESSD_MAX_PERFT_DEPTH", "5", "deepest perft a client may ask for", KIND_UINT,
      FIELD(max_perft_depth), 1, 8 },
    { "--max-perft-nodes", "CHESSD_MAX_PERFT_NODES", "200000000", "most nodes one perft request may count", KIND_SIZE,
      FIELD(max_perft_nodes), 1000, 1000000000000ull },
    { "--perft-threads", "CHESSD_PERFT_THREADS", "1", "threads that run perft (queue: 16 per thread)", KIND_UINT,
      FIELD(perft_threads), 1, 64 },
    { "--engine", "CHESSD_ENGINE", CONFIG_ENGINE_AUTO,
      "the UCI chess engine for analysis and games against the computer (auto: " ENGINE_DEFAULT_PATH
      " when it is there; none: no engine, its routes answer 503 engine_unavailable)",
      KIND_STRING, FIELD(engine_path), 0, 0 },
    { "--variant-engine", "CHESSD_VARIANT_ENGINE", CONFIG_ENGINE_AUTO,
      "the UCI engine for the variants (auto: " ENGINE_VARIANT_DEFAULT_PATH " when it is there; none: "
      "the computer plays standard chess and Chess960 only); it plays the variants its UCI_Variant option "
      "lists, the others answer 422 variant_not_supported_by_engine (runs --engine-workers processes too)",
      KIND_STRING, FIELD(variant_engine_path), 0, 0 },
    { "--engine-workers", "CHESSD_ENGINE_WORKERS", "1",
      "engine processes (each one search at a time, one thread; analysis queue: 4 per worker)", KIND_UINT,
      FIELD(engine_workers), 1, 64 },
    { "--engine-hash", "CHESSD_ENGINE_HASH", "16", "each engine's hash table in MiB", KIND_UINT,
      FIELD(engine_hash_mb), 1, 1024 },
    { "--engine-max-think-ms", "CHESSD_ENGINE_MAX_THINK_MS", "5000",
      "the longest one engine search may take (an analysis's movetime_ms, and the deadline of any search)",
      KIND_UINT, FIELD(engine_max_think_ms), 10, 60000 },
    { "--engine-max-nodes", "CHESSD_ENGINE_MAX_NODES", "20000000", "the most nodes an analysis may ask for",
      KIND_SIZE, FIELD(engine_max_nodes), 1000, 1000000000000ull },
    { "--engine-job-lease-ms", "CHESSD_ENGINE_JOB_LEASE_MS", "15000",
      "a computer's turn in a game that its worker has not finished this long (a replica gone) is taken by "
      "another (at least --engine-max-think-ms and 2 s more)",
      KIND_UINT, FIELD(engine_job_lease_ms), 500, 600000 },
    /* One client must not take the computer from everyone: its turns wait in
     * a queue of its own, served in turn with the others', and are bounded. */
    { "--engine-turns-per-client", "CHESSD_ENGINE_TURNS_PER_CLIENT", "8",
      "the computer's turns one client address may have waiting at once, across its games; a move or creation "
      "that would queue one more is refused 429 too_many_engine_turns (0: no limit)",
      KIND_UINT, FIELD(engine_turns_per_client), 0, 100000 },
    { "--engine-turns-max", "CHESSD_ENGINE_TURNS_MAX", "2000",
      "the computer's turns waiting at once, from every client (shared by the replicas); past it a move or "
      "creation that would queue one more is refused 503 engine_busy (0: no limit)",
      KIND_UINT, FIELD(engine_turns_max), 0, 1000000 },
    { "--engine-analyses-per-client", "CHESSD_ENGINE_ANALYSES_PER_CLIENT", "2",
      "analyses one client address may have running or waiting on this replica at once; more are refused 429 "
      "too_many_analyses (0: no limit)",
      KIND_UINT, FIELD(engine_analyses_per_client), 0, 1024 },
    { "--store-threads", "CHESSD_STORE_THREADS", "4/core",
      "game requests run at once, split over the server threads as fibers whose Redis round trips never hold "
      "their thread (default: 4 per core this process may run on, at most 256; queue: 64 per fiber, 503 "
      "store_unavailable when full)",
      KIND_UINT, FIELD(store_threads), 1, 1024 },
    { "--shutdown-grace", "CHESSD_SHUTDOWN_GRACE", "10", "seconds to let requests finish on SIGTERM", KIND_UINT,
      FIELD(shutdown_grace_seconds), 0, 600 },
    { "--redis", "CHESSD_REDIS_URL", CONFIG_REDIS_NONE,
      "Redis for games: redis://[[user]:password@]host[:port][/db], rediss:// (TLS), "
      "redis+cluster://host:port[,host:port...] or rediss+cluster:// (Redis Cluster), or none (no games, the "
      "rules API only); the user and password percent-encoded (@ as %40, : as %3A, % as %25)",
      KIND_STRING, FIELD(redis_url), 0, 0 },
    { "--redis-password", "CHESSD_REDIS_PASSWORD", "",
      "the Redis password as it is (not encoded), instead of the URL's (a flag shows in ps: prefer the "
      "variable or the file)",
      KIND_STRING, FIELD(redis_password), 0, 0 },
    { "--redis-password-file", "CHESSD_REDIS_PASSWORD_FILE", "",
      "a file holding the Redis password (a mounted secret; one trailing newline dropped), instead of the URL's; "
      "not with --redis-password",
      KIND_STRING, FIELD(redis_password_file), 0, 0 },
    { "--redis-ca-file", "CHESSD_REDIS_CA_FILE", "",
      "rediss: PEM CAs that sign Redis's certificate (default: the system's)", KIND_STRING, FIELD(redis_ca_file), 0,
      0 },
    { "--redis-cert-file", "CHESSD_REDIS_CERT_FILE", "", "rediss: PEM client certificate, for mutual TLS", KIND_STRING,
      FIELD(redis_cert_file), 0, 0 },
    { "--redis-key-file", "CHESSD_REDIS_KEY_FILE", "", "rediss: the client certificate's PEM private key", KIND_STRING,
      FIELD(redis_key_file), 0, 0 },
    { "--redis-tls-server-name", "CHESSD_REDIS_TLS_SERVER_NAME", "",
      "rediss: the name Redis's certificates must carry, sent as SNI (default: each host's)", KIND_STRING,
      FIELD(redis_tls_server_name), 0, 0 },
    { "--redis-tls-insecure-skip-verify", "CHESSD_REDIS_TLS_INSECURE_SKIP_VERIFY", "false",
      "rediss: accept ANY certificate from Redis (no CA or name check): anyone on the path can read and change "
      "games; for tests only",
      KIND_BOOL, FIELD(redis_tls_insecure_skip_verify), 0, 1 },
    { "--embed-frame-ancestors", "CHESSD_EMBED_FRAME_ANCESTORS", "*",
      "the pages that may show GET /v1/games/{id}/embed in a frame: its Content-Security-Policy frame-ancestors "
      "sources, space-separated (* any; 'self'; https://example.com; 'none')",
      KIND_STRING, FIELD(embed_frame_ancestors), 0, 0 },
    /* Browsers send no cookie here: a page calls with a player token in
     * Authorization, so no credentials mode is answered. */
    { "--cors-origins", "CHESSD_CORS_ORIGINS", "",
      "the origins whose pages may call this server from a browser (CORS), comma-separated, each scheme://host"
      "[:port] (https://app.example,http://localhost:5173), or * for any page; unset: no CORS headers, and "
      "OPTIONS answers 405",
      KIND_STRING, FIELD(cors_origins), 0, 0 },
    { "--ready-requires-redis", "CHESSD_READY_REQUIRES_REDIS", "false",
      "/readyz answers 503 while Redis is down (else 200, reporting Redis in its body)", KIND_BOOL,
      FIELD(ready_requires_redis), 0, 1 },
    /* Off by default for a developer's Redis; on in k8s/ (k8s/README.md, "Redis memory"). */
    { "--require-noeviction", "CHESSD_REQUIRE_NOEVICTION", "false",
      "/readyz answers 503 store_may_evict while Redis's maxmemory-policy is not noeviction (or cannot be read): "
      "any other policy, volatile-* too, may evict the keys of games being played",
      KIND_BOOL, FIELD(require_noeviction), 0, 1 },
    { "--redis-memory-check", "CHESSD_REDIS_MEMORY_CHECK", "60",
      "seconds between reads of Redis's maxmemory-policy, maxmemory and used memory (in the background)", KIND_UINT,
      FIELD(redis_memory_check_seconds), 1, 3600 },
    { "--redis-connect-timeout-ms", "CHESSD_REDIS_CONNECT_TIMEOUT_MS", "1000", "Redis connect timeout", KIND_UINT,
      FIELD(redis_connect_timeout_ms), 10, 60000 },
    { "--redis-timeout-ms", "CHESSD_REDIS_TIMEOUT_MS", "1000", "Redis command timeout", KIND_UINT,
      FIELD(redis_timeout_ms), 10, 60000 },
    /* 30 days, 7 days and a day. */
    { "--finished-ttl", "CHESSD_FINISHED_TTL", "2592000", "seconds a finished game is kept after its end (0: forever)",
      KIND_UINT, FIELD(finished_game_ttl_seconds), 0, 0xffffffffu },
    /* Accepted so that deployments that set it still start; any value but 0 is a warning (server.c). */
    { "--active-ttl", "CHESSD_ACTIVE_TTL", "0",
      "ignored: an active game is kept until it ends by a rule (its clock, its deadline); accepted so that "
      "deployments that set it still start (a value other than 0 logs a warning)",
      KIND_UINT, FIELD(active_game_ttl_seconds), 0, 0xffffffffu },
    { "--idle-end", "CHESSD_IDLE_END", "2592000",
      "seconds without a move after which a game with neither clock nor correspondence days ends: lost by the side "
      "to move as on time, aborted before both players moved (0: never)",
      KIND_UINT, FIELD(idle_end_seconds), 0, 0xffffffffu },
    { "--spectator-delay-plies", "CHESSD_SPECTATOR_DELAY_PLIES", "0",
      "plies a spectator sees a game being played behind (0 to 20): the default of a creation's "
      "spectator_delay_plies; players and service keys with games:read-live see it live, and everyone once it ends",
      KIND_UINT, FIELD(spectator_delay_plies), 0, 20 },
    { "--correspondence-day", "CHESSD_CORRESPONDENCE_DAY", "86400",
      "seconds in a day of a game's days_per_move: 86400, or fewer to demonstrate or test correspondence games",
      KIND_UINT, FIELD(correspondence_day_seconds), 1, 86400 },
    { "--finished-feed-retention", "CHESSD_FINISHED_FEED_RETENTION", "604800",
      "seconds a finished game stays on the finished-games feed (GET /v1/games/finished): a reader must come back "
      "within it to miss none",
      KIND_UINT, FIELD(finished_feed_retention_seconds), 60, 31536000 },
    { "--idempotency-ttl", "CHESSD_IDEMPOTENCY_TTL", "86400", "seconds an Idempotency-Key answer is kept", KIND_UINT,
      FIELD(idempotency_ttl_seconds), 1, 0xffffffffu },
    { "--max-game-plies", "CHESSD_MAX_GAME_PLIES", "1000", "most moves (plies) one game may have", KIND_UINT,
      FIELD(max_game_plies), 1, 18000 },
    { "--game-cache", "CHESSD_GAME_CACHE", "4096", "games kept in memory to skip a read before a change (0: none)",
      KIND_UINT, FIELD(game_cache_slots), 0, 262144 },
    { "--rate-limit-ip", "CHESSD_RATE_LIMIT_IP", "0", "requests/s per client address (0: off)", KIND_UINT,
      FIELD(rate_limit_ip), 0, 1000000 },
    { "--rate-limit-token", "CHESSD_RATE_LIMIT_TOKEN", "0", "requests/s per player token (0: off)", KIND_UINT,
      FIELD(rate_limit_token), 0, 1000000 },
    { "--rate-limit-burst", "CHESSD_RATE_LIMIT_BURST", "0", "requests allowed at once (0: the rate)", KIND_UINT,
      FIELD(rate_limit_burst), 0, 1000000 },
    { "--rate-limit-create", "CHESSD_RATE_LIMIT_CREATE", "10", "games created/s per client address (0: off)", KIND_UINT,
      FIELD(rate_limit_create), 0, 1000000 },
    { "--rate-limit-bulk-games", "CHESSD_RATE_LIMIT_BULK_GAMES", "100",
      "games made by bulks (POST /v1/games/bulk)/s per client address, in bursts of 1000: two full rounds at once "
      "(0: off); a bulk is besides one creation of --rate-limit-create",
      KIND_UINT, FIELD(rate_limit_bulk_games), 0, 1000000 },
    /* Keys are for backends, never players: a key in a browser is a key given away. */
    { "--service-keys-file", "CHESSD_SERVICE_KEYS_FILE", "",
      "a file of service keys, a line each: NAME SCOPES QUOTAS SHA256 (chessd keys new makes one). With it, "
      "creating games, bulks, exports, the finished feed and analysis need a key with their scope "
      "(Authorization: Bearer chsk_...), and a key's quotas replace the per-address and per-token limits for "
      "its holder; the file is read again when it changes (none: every route open, limits per address)",
      KIND_STRING, FIELD(service_keys_file), 0, 0 },
    { "--max-streams", "CHESSD_MAX_STREAMS", "10000", "game event streams and long polls held at once", KIND_UINT,
      FIELD(max_streams), 1, 1000000 },
    { "--max-streams-per-address", "CHESSD_MAX_STREAMS_PER_ADDRESS", "100",
      "event streams and long polls from one client address (0: no limit)", KIND_UINT,
      FIELD(max_streams_per_address), 0, 1000000 },
    { "--heartbeat", "CHESSD_HEARTBEAT", "10", "seconds between heartbeats on an event stream", KIND_UINT,
      FIELD(heartbeat_seconds), 1, 15 },
    /* A client that reads keeps acknowledging bytes; 30 s without one, while
     * bytes wait, is a client that stopped (or a network that is gone). */
    { "--stream-stall-timeout", "CHESSD_STREAM_STALL_TIMEOUT", "30",
      "seconds an event stream may have bytes waiting that its client takes none of, before it is closed",
      KIND_UINT, FIELD(stream_stall_seconds), 1, 3600 },
    /* Lichess's base (RoundSocket.disconnectTimeout), scaled by the game's speed (rules/game.h). */
    { "--gone-after", "CHESSD_GONE_AFTER", "40",
      "seconds the side to move must be gone (no stream open with their token, no action) before the opponent "
      "may claim the win or a draw, for a bullet or blitz clock; twice for rapid, three times for slower clocks "
      "and games without one; never in correspondence games (0: no presence, no claims)",
      KIND_UINT, FIELD(gone_after_seconds), 0, 86400 },
    { "--resync-seconds", "CHESSD_RESYNC_SECONDS", "30",
      "seconds without a message after which a game with streams or long polls is read again (how long a lost "
      "Pub/Sub message can go unseen)",
      KIND_UINT, FIELD(resync_seconds), 1, 3600 },
    /* Slow readers' buffers are most of what a replica's memory can grow
     * by: a third of the container's limit leaves the rest to the process. */
    { "--buffer-budget", "CHESSD_BUFFER_BUDGET", "0",
      "bytes held at most for clients that read slowly (event streams, long polls, exports), in all; past it new "
      "ones get 503 buffers_full and the reader holding the most the longest is closed (0: a third of the "
      "cgroup's memory limit, 128 MiB without one)",
      KIND_SIZE, FIELD(buffer_budget), 0, 1ull << 40 },
    { "--max-exports", "CHESSD_MAX_EXPORTS", "16", "exports (POST /v1/games/export) at once; past it 503 too_many_exports",
      KIND_UINT, FIELD(max_exports), 1, 10000 },
    /* A game's own Event and Site tags win over these (POST /v1/games "tags"). */
    { "--pgn-event", "CHESSD_PGN_EVENT", "?",
      "the Event tag of a game's PGN when the game has none (at most 255 bytes, no control characters)",
      KIND_STRING, FIELD(pgn_event), 0, 0 },
    { "--pgn-site", "CHESSD_PGN_SITE", "?",
      "the Site tag of a game's PGN when the game has none, such as this service's address (at most 255 bytes, "
      "no control characters)",
      KIND_STRING, FIELD(pgn_site), 0, 0 },
    /* Webhooks reach only what this lists: no private, loopback or metadata address unless a range opens it. */
    { "--webhook-allow", "CHESSD_WEBHOOK_ALLOW", "",
      "where webhooks may be delivered, comma-separated: CIDR ranges (0.0.0.0/0,::/0 the public internet; a "
      "loopback, link-local, metadata or private address only through a range listed inside such space, as "
      "10.0.0.0/8 or 127.0.0.2/32), host names and *.suffixes; checked at subscription and again at each "
      "delivery and redirect, after the name is resolved (unset: webhooks off)",
      KIND_STRING, FIELD(webhook_allow), 0, 0 },
    { "--webhook-timeout-ms", "CHESSD_WEBHOOK_TIMEOUT_MS", "5000",
      "the most one webhook delivery may take: resolving, connecting, TLS, sending and reading the answer's head, "
      "redirects included",
      KIND_UINT, FIELD(webhook_timeout_ms), 100, 30000 },
    { "--webhook-redirects", "CHESSD_WEBHOOK_REDIRECTS", "0",
      "redirects (301, 302, 303, 307, 308) a webhook delivery follows, each target judged by --webhook-allow "
      "again (0: none, the delivery fails as redirect_not_followed)",
      KIND_UINT, FIELD(webhook_redirects), 0, 5 },
    { "--webhook-ca-file", "CHESSD_WEBHOOK_CA_FILE", "",
      "PEM CAs that sign https webhook destinations' certificates (default: the system's)", KIND_STRING,
      FIELD(webhook_ca_file), 0, 0 },
    { "--webhook-retry-ms", "CHESSD_WEBHOOK_RETRY_MS", "5000",
      "the wait after a webhook delivery fails, doubling after each failure; an event is dropped (and counted) "
      "once its next try would come more than --webhook-give-up-seconds after it happened",
      KIND_UINT, FIELD(webhook_retry_ms), 100, 3600000 },
    { "--webhook-give-up-seconds", "CHESSD_WEBHOOK_GIVE_UP_SECONDS", "86400",
      "how long an event is retried before it is dropped", KIND_UINT, FIELD(webhook_give_up_seconds), 1, 604800 },
    { "--webhook-workers", "CHESSD_WEBHOOK_WORKERS", "8",
      "webhook deliveries this replica makes at once (0: it delivers none, and other replicas do)", KIND_UINT,
      FIELD(webhook_workers), 0, 64 },
    { "--allow-untested-libmicrohttpd", "CHESSD_ALLOW_UNTESTED_LIBMICROHTTPD", "false",
      "start, with a warning, on a libmicrohttpd version chessd has not been tested with (its strict HTTP reader "
      "depends on how libmicrohttpd reads sockets); else chessd refuses to start on one",
      KIND_BOOL, FIELD(allow_untested_libmicrohttpd), 0, 1 },
};
enum { SETTING_COUNT = sizeof settings / sizeof settings[0] };

/* Variables renamed to their flag's name (--heartbeat, CHESSD_HEARTBEAT):
 * the old name still works when the new one is unset, with a warning. */
static const struct {
    const char *old_env, *env;
} renamed[] = {
    { "CHESSD_HEARTBEAT_SECONDS", "CHESSD_HEARTBEAT" },
};
enum { RENAMED_COUNT = sizeof renamed / sizeof renamed[0] };

/* The value of setting s's variable, or of its old name (warning on stderr,
 * never with the value) when only that is set; *source names the one read. */
static const char *setting_env(const setting_t *s, const char **source)
{
    const char *value = getenv(s->env);
    *source = s->env;
    for (int i = 0; i < RENAMED_COUNT; i++) {
        const char *old = strcmp(renamed[i].env, s->env) ? NULL : getenv(renamed[i].old_env);
        if (!old || !*old)
            continue;
        if (value && *value) {
            fprintf(stderr, "chessd: %s is ignored: %s is set (the old name is deprecated)\n", renamed[i].old_env,
                    s->env);
            continue;
        }
        fprintf(stderr, "chessd: %s is deprecated: set %s instead\n", renamed[i].old_env, s->env);
        value = old;
        *source = renamed[i].old_env;
    }
    return value;
}

/* A boolean's text: exactly 1, 0, true or false. */
static bool parse_bool(const char *value, bool *out, const char *source, char *err, size_t err_size)
{
    if (!strcmp(value, "1") || !strcmp(value, "true")) {
        *out = true;
        return true;
    }
    if (!strcmp(value, "0") || !strcmp(value, "false")) {
        *out = false;
        return true;
    }
    /* Echoed only up to a point: it is the operator's own text, but may be long. */
    snprintf(err, err_size, "%s: '%.32s%s' must be true, false, 1 or 0", source, value,
             strlen(value) > 32 ? "..." : "");
    return false;
}

static bool apply(config_t *cfg, const setting_t *s, const char *value, const char *source, char *err,
                  size_t err_size)
{
    char *field = (char *)cfg + s->offset;
    if (s->kind == KIND_STRING) {
        if (strlen(value) == 0 || strlen(value) >= s->size) {
            /* The value is not echoed: a Redis URL may carry a password. */
            snprintf(err, err_size, "%s must be 1 to %zu characters (it has %zu)", source, s->size - 1,
                     strlen(value));
            return false;
        }
        memcpy(field, value, strlen(value) + 1);
        return true;
    }
    if (s->kind == KIND_BOOL)
        return parse_bool(value, (bool *)(void *)field, source, err, err_size);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (!*value || *end || errno || value[0] == '-' || v < s->min || v > s->max) {
        snprintf(err, err_size, "%s: '%s' must be a number from %llu to %llu", source, value, s->min, s->max);
        return false;
    }
    if (s->kind == KIND_SIZE)
        *(size_t *)(void *)field = (size_t)v;
    else
        *(unsigned *)(void *)field = (unsigned)v;
    return true;
}

/* Every setting at its default, from its row. False (with err) only when a
 * row's default is not a value of its own setting. */
static bool defaults(config_t *cfg, char *err, size_t err_size)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < SETTING_COUNT; i++) {
        const setting_t *s = &settings[i];
        const char *text = s->initial;
        char *end, count[16];
        unsigned long per_core = strtoul(text, &end, 10);
        if (end != text && !strcmp(end, "/core")) {
            snprintf(count, sizeof count, "%u", default_threads((unsigned)per_core));
            text = count;
        }
        if (text[0] && !apply(cfg, s, text, s->flag, err, err_size))
            return false;
    }
    return true;
}

/* The game service's counts go to /metrics, mapped by one table. A new
 * counter is an enum value there, a row here and one in the metrics table;
 * a struct of callbacks would also need a function for each. */
static void count_game(game_svc_counter_t counter)
{
    static const metric_t metrics[GAME_SVC_COUNTER_COUNT] = {
        [GAME_SVC_COUNTER_MOVE_APPLIED] = METRIC_MOVES_APPLIED,
        [GAME_SVC_COUNTER_VERSION_CONFLICT] = METRIC_VERSION_CONFLICTS,
        [GAME_SVC_COUNTER_STORE_FULL] = METRIC_STORE_FULL,
        [GAME_SVC_COUNTER_OUTCOME_UNKNOWN] = METRIC_OUTCOME_UNKNOWN,
        [GAME_SVC_COUNTER_FEED_ADDED] = METRIC_FINISHED_FEED_ADDED,
    };
    if ((unsigned)counter < GAME_SVC_COUNTER_COUNT)
        metrics_count(metrics[counter]);
}


void config_game_service(const config_t *cfg, struct store *store, game_svc_config_t *out)
{
    *out = (game_svc_config_t){
        .store = store,
        .count = count_game,
        .max_game_plies = cfg->max_game_plies,
        .finished_game_ttl_seconds = cfg->finished_game_ttl_seconds,
        .idle_end_ms = (int64_t)cfg->idle_end_seconds * 1000,
        .day_ms = (int64_t)cfg->correspondence_day_seconds * 1000,
        .finished_feed_retention_seconds = cfg->finished_feed_retention_seconds,
        .idempotency_ttl_seconds = cfg->idempotency_ttl_seconds,
        .game_cache_slots = cfg->game_cache_slots,
        .engine_lease_ms = config_engine_lease_ms(cfg),
        .engine_turns_per_client = cfg->engine_turns_per_client,
        .engine_turns_max = cfg->engine_turns_max,
        .gone_after_ms = (int64_t)cfg->gone_after_seconds * 1000,
        .spectator_delay_plies = (int)cfg->spectator_delay_plies,
        .presence_ms = 3 * (int64_t)config_presence_mark_ms(cfg),
    };
}

unsigned config_presence_mark_ms(const config_t *cfg)
{
    if (!cfg->gone_after_seconds)
        return 0;
    unsigned ms = cfg->gone_after_seconds * 125; /* an eighth */
    return ms < 250 ? 250 : ms > 5000 ? 5000 : ms;
}

void config_pgn_defaults(const config_t *cfg, pgn_defaults_t *out)
{
    *out = (pgn_defaults_t){ .event = cfg->pgn_event, .site = cfg->pgn_site };
}

unsigned config_engine_lease_ms(const config_t *cfg)
{
    unsigned least = cfg->engine_max_think_ms + 2000;
    return cfg->engine_job_lease_ms > least ? cfg->engine_job_lease_ms : least;
}

/* An engine setting's path: auto_path for auto when it is an executable,
 * NULL for none (or empty). */
static const char *engine_setting_path(const char *value, const char *auto_path)
{
    if (!strcmp(value, CONFIG_ENGINE_AUTO))
        return access(auto_path, X_OK) == 0 ? auto_path : NULL;
    if (!value[0] || !strcmp(value, "none"))
        return NULL;
    return value;
}

const char *config_engine_path(const config_t *cfg)
{
    return engine_setting_path(cfg->engine_path, ENGINE_DEFAULT_PATH);
}

const char *config_variant_engine_path(const config_t *cfg)
{
    return engine_setting_path(cfg->variant_engine_path, ENGINE_VARIANT_DEFAULT_PATH);
}

size_t config_buffer_budget(const config_t *cfg)
{
    return cfg->buffer_budget ? cfg->buffer_budget : membudget_default_limit(CONFIG_BUFFER_BUDGET_DEFAULT);
}

bool config_redis_enabled(const config_t *cfg)
{
    return strcmp(cfg->redis_url, CONFIG_REDIS_NONE) != 0;
}

/* --pgn-event and --pgn-site go into every PGN as their tags' values: checked as a game's own would be. */
static bool pgn_defaults_ok(const config_t *cfg, char *err, size_t err_size)
{
    const struct {
        const char *tag, *setting, *value;
    } tags[] = { { "Event", "--pgn-event (CHESSD_PGN_EVENT)", cfg->pgn_event },
                 { "Site", "--pgn-site (CHESSD_PGN_SITE)", cfg->pgn_site } };
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        char detail[200];
        if (game_meta_check_tag(tags[i].tag, tags[i].value, strlen(tags[i].value), detail, sizeof detail)
            != GAME_TAG_OK) {
            snprintf(err, err_size, "%s: %s", tags[i].setting, detail);
            return false;
        }
    }
    return true;
}

bool config_load(config_t *cfg, int argc, char **argv, char *err, size_t err_size)
{
    if (!defaults(cfg, err, err_size))
        return false;
    for (int i = 0; i < SETTING_COUNT; i++) {
        const char *source;
        const char *value = setting_env(&settings[i], &source);
        if (value && *value && !apply(cfg, &settings[i], value, source, err, err_size))
            return false;
    }
    for (int a = 0; a < argc; a++) {
        const char *arg = argv[a];
        const char *eq = strchr(arg, '=');
        size_t name_length = eq ? (size_t)(eq - arg) : strlen(arg);
        const setting_t *found = NULL;
        for (int i = 0; i < SETTING_COUNT; i++)
            if (strlen(settings[i].flag) == name_length && !strncmp(settings[i].flag, arg, name_length))
                found = &settings[i];
        if (!found) {
            /* The name only: a misspelt --redis-password=... must not print its value. */
            snprintf(err, err_size, "unknown option '%.*s' (see chessd serve --help)", (int)name_length, arg);
            return false;
        }
        /* A boolean flag alone is true: it never takes the next argument. */
        const char *value = eq ? eq + 1 : found->kind == KIND_BOOL ? "true" : (a + 1 < argc ? argv[++a] : NULL);
        if (!value) {
            snprintf(err, err_size, "%s needs a value", found->flag);
            return false;
        }
        if (!apply(cfg, found, value, found->flag, err, err_size))
            return false;
    }
    /* The sources go into a header: nothing that could end the directive or the header. */
    for (const char *p = cfg->embed_frame_ancestors; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr(" *:/.-_'", *p))) {
            snprintf(err, err_size, "--embed-frame-ancestors (CHESSD_EMBED_FRAME_ANCESTORS): '%c' is not allowed: "
                                    "sources are letters, digits and * : / . - _ ' separated by spaces", *p);
            return false;
        }
    if (!cfg->embed_frame_ancestors[0]) {
        snprintf(err, err_size, "--embed-frame-ancestors (CHESSD_EMBED_FRAME_ANCESTORS) is empty: say 'none' for no page");
        return false;
    }
    if (!pgn_defaults_ok(cfg, err, err_size))
        return false;
    cors_t cors;
    char why[WEBHOOK_HOST_MAX + 128];
    if (cfg->cors_origins[0] && !cors_parse(cfg->cors_origins, &cors, why, sizeof why)) {
        snprintf(err, err_size, "--cors-origins (CHESSD_CORS_ORIGINS): %s", why);
        return false;
    }
    if (!webhook_allow_parse(cfg->webhook_allow, &cfg->webhook_policy, why, sizeof why)) {
        snprintf(err, err_size, "--webhook-allow (CHESSD_WEBHOOK_ALLOW): %s", why);
        return false;
    }
    if (cfg->redis_password[0] && cfg->redis_password_file[0]) {
        snprintf(err, err_size, "--redis-password (CHESSD_REDIS_PASSWORD) and --redis-password-file "
                                "(CHESSD_REDIS_PASSWORD_FILE) are both set: give the password one way");
        return false;
    }
    return true;
}

/* Setting s's value in cfg as --help shows it. */
static void format_value(const config_t *cfg, const setting_t *s, char *out, size_t size)
{
    const char *field = (const char *)cfg + s->offset;
    if (s->kind == KIND_STRING)
        snprintf(out, size, "%s", field);
    else if (s->kind == KIND_BOOL)
        snprintf(out, size, "%s", *(const bool *)(const void *)field ? "true" : "false");
    else if (s->kind == KIND_SIZE)
        snprintf(out, size, "%zu", *(const size_t *)(const void *)field);
    else
        snprintf(out, size, "%u", *(const unsigned *)(const void *)field);
}

void config_usage(FILE *out)
{
    config_t d;
    char err[160];
    if (!defaults(&d, err, sizeof err))
        fprintf(out, "(a default is wrong: %s)\n", err);
    /* Each column as wide as its longest entry. */
    int flag_width = 0, env_width = 0, value_width = 0;
    for (int i = 0; i < SETTING_COUNT; i++) {
        char value[80];
        format_value(&d, &settings[i], value, sizeof value);
        int flag_length = (int)strlen(settings[i].flag), env_length = (int)strlen(settings[i].env);
        int value_length = (int)strlen(value);
        flag_width = flag_length > flag_width ? flag_length : flag_width;
        env_width = env_length > env_width ? env_length : env_width;
        value_width = value_length > value_width ? value_length : value_width;
    }
    fprintf(out, "serve options (flag, environment variable, default):\n");
    for (int i = 0; i < SETTING_COUNT; i++) {
        char value[80];
        format_value(&d, &settings[i], value, sizeof value);
        fprintf(out, "  %-*s  %-*s  %-*s  %s\n", flag_width, settings[i].flag, env_width, settings[i].env, value_width,
                value, settings[i].help);
    }
    for (int i = 0; i < RENAMED_COUNT; i++)
        fprintf(out, "%s%s, the old name of %s, still works (deprecated).\n", i ? "" : "\n", renamed[i].old_env,
                renamed[i].env);
    fprintf(out, "\nA boolean flag alone means true (--ready-requires-redis); --flag=true|false|1|0 and its\n"
                 "variable (1, 0, true, false) set it either way.\n");
    fprintf(out, "\nCHESSD_TOKEN_SECRET (environment only, at least 32 bytes) is the HMAC key for player tokens;\n"
                 "every replica needs the same one. Without it the replicas share one kept in Redis under\n"
                 "chessd:token-secret (made by the first that needs it): anyone who can read that Redis can\n"
                 "then make player tokens, so set it in production.\n");
}
