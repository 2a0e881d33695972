/* Server configuration: every setting has a default, a command-line flag
 * and an environment variable (CHESSD_*); flags win over the environment. */
#ifndef CHESSD_API_CONFIG_H
#define CHESSD_API_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "webhooks/allow.h"

enum { CONFIG_MAX_MOVES = 1000, CONFIG_MAX_JSON_DEPTH = 16 };

/* --engine auto (the default): ENGINE_DEFAULT_PATH (engine/uci.h) when it is there, else none. */
#define CONFIG_ENGINE_AUTO "auto"
/* The deepest search an analysis may ask for (a depth is also bounded by
 * --engine-max-think-ms). */
enum { CONFIG_ENGINE_MAX_DEPTH = 60 };

/* --redis none (the default): no Redis, so no games; the rules API alone. */
#define CONFIG_REDIS_NONE "none"

typedef struct config {
    char bind[64];
    unsigned port;
    unsigned probe_port; /* a second port serving only the probe routes (ROUTE_PROBE); 0: none */
    unsigned threads;
    size_t max_body;
    unsigned timeout_seconds;        /* idle: no byte received or sent for this long */
    unsigned header_timeout_seconds; /* a request's head, from its first byte (or the connection's start) */
    unsigned body_timeout_seconds;   /* a request's body, from the end of its head */
    size_t max_pgn_bytes;            /* POST /v1/pgn's body (past max_body it goes to a file in spool_dir) */
    unsigned pgn_timeout_seconds;    /* POST /v1/pgn's body, and then its answer */
    char spool_dir[512];             /* where those bodies are kept (unnamed files) */
    size_t max_spool_bytes;          /* all of them at once */
    unsigned max_connections;
    unsigned per_ip_connections; /* 0: unlimited */
    unsigned max_perft_depth;
    size_t max_perft_nodes;      /* the node budget of one perft request */
    unsigned perft_threads;      /* the pool that runs perft off the connection threads */
    unsigned store_threads;      /* the pool that runs game requests (their Redis work) off them */
    unsigned shutdown_grace_seconds;
    char redis_url[1024];        /* a Redis URL, or CONFIG_REDIS_NONE */
    char redis_password[1024];   /* "" : the URL's; else used instead of it */
    char redis_password_file[512]; /* "" : none; else a file holding the password (not with redis_password) */
    char redis_ca_file[512];     /* "" : the system's CAs */
    char redis_cert_file[512];   /* a client certificate for mutual TLS; "" : none */
    char redis_key_file[512];
    char redis_tls_server_name[256]; /* "" : each host's own name */
    bool redis_tls_insecure_skip_verify;
    bool ready_requires_redis;   /* /readyz is 503 while Redis is down (else 200, saying so) */
    bool require_noeviction;     /* /readyz is 503 while Redis may evict keys (maxmemory-policy not noeviction) */
    unsigned redis_memory_check_seconds; /* between reads of Redis's maxmemory-policy and memory use */
    unsigned redis_connect_timeout_ms;
    unsigned redis_timeout_ms;
    unsigned finished_game_ttl_seconds; /* 0: keep finished games forever */
    unsigned active_game_ttl_seconds;   /* ignored (a warning when not 0): active games never expire */
    unsigned idle_end_seconds;          /* a game with no clock and no days ends this long after a turn began; 0: never */
    unsigned correspondence_day_seconds; /* a day of days_per_move */
    unsigned finished_feed_retention_seconds; /* a finished game stays on the feed this long */
    unsigned idempotency_ttl_seconds;
    unsigned max_game_plies;
    unsigned game_cache_slots;  /* games whose last version a replica keeps a copy of; 0: none */
    unsigned rate_limit_ip;     /* requests per second per client address; 0: off */
    unsigned rate_limit_token;  /* requests per second per player token; 0: off */
    unsigned rate_limit_burst;  /* bucket size; 0: one second's worth */
    unsigned rate_limit_create; /* games created per second per client address (burst: 5 s worth); 0: off */
    unsigned rate_limit_bulk_games; /* games made by bulks per second per client address (burst: 1,000); 0: off */
    char service_keys_file[512];    /* "" : no service keys, every route open; else the keys (service_keys.h) */
    unsigned max_streams;             /* game event streams and long polls held at once */
    unsigned max_streams_per_address; /* the same from one client address; 0: no limit */
    unsigned heartbeat_seconds;       /* between heartbeats on an event stream */
    unsigned stream_stall_seconds;    /* an event stream whose client takes none of its bytes this long is closed */
    unsigned resync_seconds;          /* of silence on a followed game before it is read again */
    unsigned gone_after_seconds;      /* the base wait before a claim against a gone opponent; 0: no presence */
    unsigned spectator_delay_plies;   /* a new game's spectator delay when its creation names none (0..20) */
    size_t buffer_budget;             /* bytes held for slow readers, in all; 0: a third of the cgroup's limit */
    unsigned max_exports;             /* exports at once */
    char engine_path[512];            /* the UCI engine: CONFIG_ENGINE_AUTO, "none" or a path */
    char variant_engine_path[512];    /* the variants' engine: the same three kinds of value */
    unsigned engine_workers;          /* engine processes this replica runs */
    unsigned engine_hash_mb;          /* each engine's hash table */
    unsigned engine_max_think_ms;     /* the longest one search may take */
    size_t engine_max_nodes;          /* the most nodes an analysis may ask for */
    unsigned engine_job_lease_ms;     /* a computer's turn unfinished this long is taken by another worker */
    unsigned engine_turns_per_client; /* the computer's turns one client may have waiting; 0: no limit */
    unsigned engine_turns_max;        /* the computer's turns waiting from every client; 0: no limit */
    unsigned engine_analyses_per_client; /* analyses one client may have running or waiting here; 0: no limit */
    bool allow_untested_libmicrohttpd; /* start (warning) on a libmicrohttpd not in api/http/mhd_version.c's list */
    char embed_frame_ancestors[512];  /* the embeddable board's CSP frame-ancestors sources ("*": any page) */
    char cors_origins[1024];          /* the origins whose pages may call chessd (http/cors.h), or "*"; "": none */
    char pgn_event[256], pgn_site[256]; /* a PGN's Event and Site when its game has none (checked as tag values) */
    char webhook_allow[WEBHOOK_ALLOW_TEXT_MAX + 1]; /* the destinations webhooks may reach (webhooks/allow.h); "": none */
    unsigned webhook_timeout_ms;      /* one delivery's deadline, every hop included */
    unsigned webhook_redirects;       /* redirects a delivery follows, each judged again; 0: none */
    char webhook_ca_file[512];        /* PEM CAs for https destinations; "" : the system's */
    webhook_allow_t webhook_policy;   /* webhook_allow as config_load read it: what deliveries are judged by */
    unsigned webhook_retry_ms;        /* the first wait after a failed delivery, doubling */
    unsigned webhook_give_up_seconds; /* an event retried longer than this is dropped */
    unsigned webhook_workers;         /* deliveries at once on this replica (0: none) */
} config_t;

/* Fills cfg from defaults, then the environment, then argv (the arguments
 * after "serve"). On error writes a sentence to err and returns false. */
bool config_load(config_t *cfg, int argc, char **argv, char *err, size_t err_size);

/* Whether games are on: a Redis is configured (--redis is not "none"). */
bool config_redis_enabled(const config_t *cfg);

/* The engine to run: --engine's path, ENGINE_DEFAULT_PATH for auto
 * when it is an executable, else NULL (no engine). */
const char *config_engine_path(const config_t *cfg);
/* The variants' engine: --variant-engine's path, ENGINE_VARIANT_DEFAULT_PATH
 * for auto when it is executable, NULL for none. */
const char *config_variant_engine_path(const config_t *cfg);

/* How often a replica marks the player of an open stream here: an eighth
 * of --gone-after, from 250 ms to 5 s. A player not marked (nor acting)
 * for three of these is absent. 0 with --gone-after 0. */
unsigned config_presence_mark_ms(const config_t *cfg);

/* The lease of a computer's turn: --engine-job-lease-ms, at least the
 * longest think and 2 s more. */
unsigned config_engine_lease_ms(const config_t *cfg);

struct store;
struct game_svc_config;
struct pgn_defaults;

/* The game service's settings (api/game/service.h) from cfg, for store. */
void config_game_service(const config_t *cfg, struct store *store, struct game_svc_config *out);

/* The Event and Site of a game's PGN (api/render/pgn.h) from cfg, whose
 * texts they point into. */
void config_pgn_defaults(const config_t *cfg, struct pgn_defaults *out);

/* The buffer budget in bytes: --buffer-budget, or with 0 a third of the
 * cgroup's memory limit, CONFIG_BUFFER_BUDGET_DEFAULT without one. */
enum { CONFIG_BUFFER_BUDGET_DEFAULT = 128 << 20 };
size_t config_buffer_budget(const config_t *cfg);

/* Prints the flags, their variables and defaults. */
void config_usage(FILE *out);

#endif
