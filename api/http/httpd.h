/* The HTTP server: chessd's listening sockets and accept threads
 * (acceptor.h), the strict reader in front of libmicrohttpd (wire.h), and
 * libmicrohttpd's daemons, which parse what the reader let through and call
 * back here. The only module that knows libmicrohttpd's API, it knows
 * requests, bytes, limits and threads; what a request means is the
 * application's, told through its callbacks (httpd_app_t). */
#ifndef CHESSD_API_HTTP_HTTPD_H
#define CHESSD_API_HTTP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cors.h"
#include "ratelimit.h"
#include "request.h"
#include "target.h"
#include "workpool.h"

typedef struct httpd httpd_t;

/* The answers the transport itself gives; the application writes them
 * (httpd_app_t.refuse). */
typedef enum {
    HTTPD_REFUSE_MALFORMED = 0, /* a message whose framing cannot be trusted (400); detail says how */
    HTTPD_REFUSE_TOO_LARGE,     /* the body is over the limit (413) */
    HTTPD_REFUSE_NO_MEMORY,     /* 500 */
    HTTPD_REFUSE_DRAINING,      /* shutting down (503) */
    HTTPD_REFUSE_RATE_LIMITED,  /* a request budget is spent (429; the limit given) */
    HTTPD_REFUSE_TOO_MANY_STREAMS, /* over the stream bounds (503) */
    HTTPD_REFUSE_BUFFERS_FULL,  /* the buffer budget is spent (503; membudget.h) */
    HTTPD_REFUSE_POOL_FULL,     /* the route's pool queue is full (503; pool given) */
    HTTPD_REFUSE_POOL_LATE,     /* the job waited past its pool's give_up_ms and was not run (pool given) */
    HTTPD_REFUSE_CLIENT_LEFT,   /* the client left while its job waited (pool given) */
    HTTPD_REFUSE_POOL_ADDRESS,  /* the client address has per_address_max jobs on the route's pool (429; pool given) */
    HTTPD_REFUSE_CORS,          /* a CORS preflight not granted (403); detail says why (cors.h) */
    HTTPD_REFUSE_SPOOL_FULL,    /* the large bodies' files hold max_spool (503) */
    HTTPD_REFUSE_COUNT
} httpd_refusal_t;

/* The bound a refusal names (HTTPD_REFUSE_RATE_LIMITED): the budget's
 * name (httpd_budget_t.name), its rate a second, and the seconds until a
 * request would pass. */
typedef struct {
    const char *name;
    unsigned max;
    unsigned retry_after;
} httpd_limit_t;

/* What the application's quota callback (httpd_app_t.quota) says of a
 * request that may carry a budget of its own (a service key's quotas). */
typedef enum {
    HTTPD_QUOTA_NONE = 0, /* none of its own: it is counted per address and per token */
    HTTPD_QUOTA_TAKEN,    /* taken from its own: the per-address and per-token budgets are skipped */
    HTTPD_QUOTA_SPENT     /* its own is spent: refused (429), as *spent says */
} httpd_quota_t;

/* A budget spent, for its refusal: the limit's name, its rate a second, the
 * seconds until a request would pass, and the refusal's words. */
typedef struct {
    char name[96];
    unsigned max, retry_after;
    char detail[256];
} httpd_spent_t;

/* How a holder of a suspended connection (an event stream, a long poll) acts
 * on it. Each is called with the holder's lock held: none blocks or calls
 * back into the holder. */
typedef struct {
    void (*suspend)(void *arg); /* streams: nothing to send now */
    void (*resume)(void *arg);  /* streams: bytes or the end are ready; long polls: the wait is over */
    void (*abort)(void *arg);   /* streams: the client stopped reading; close the connection now */
    void *arg;
    bool (*gone)(void *arg);    /* whether the client has left; NULL: never known */
    /* streams: the kernel's unacknowledged bytes (unsent) and, when acked is
     * not NULL, the bytes acknowledged in all; false: not known. NULL: never known. */
    bool (*kernel)(void *arg, size_t *unsent, uint64_t *acked);
} httpd_conn_t;

typedef enum {
    HTTPD_LIVE_OK = 0,
    HTTPD_LIVE_ETOO_MANY,
    HTTPD_LIVE_EDRAINING,
    HTTPD_LIVE_ENOMEM,
    HTTPD_LIVE_EBUDGET /* the buffer budget is spent */
} httpd_live_status_t;

/* Event streams and long polls (a response with a stream, or with
 * wait_seconds): a place admitted per client address, then the stream
 * attached or the wait registered, each holding the place until released. */
typedef struct {
    httpd_live_status_t (*admit)(void *ctx, const void *address, size_t length);
    void (*release)(void *ctx, const void *address, size_t length);
    /* Takes over the admitted place; on failure the stream stays the caller's
     * (HTTPD_LIVE_EBUDGET: the buffer budget is passed now). */
    httpd_live_status_t (*attach)(void *ctx, void *stream, const void *address, size_t length,
                                  const httpd_conn_t *conn);
    /* Up to max bytes; 0: none now (conn.suspend has been called); -1: the end; -2: failed. */
    ssize_t (*read)(void *stream, char *out, size_t max);
    void (*free)(void *stream);
    /* Optional, just before free: the daemon closed the stream's connection
     * by itself (its idle timeout) while its client was still connected. */
    void (*idle)(void *stream);
    /* conn.resume once the wait on key past version is over; takes over the place. */
    httpd_live_status_t (*wait)(void *ctx, const char *key, uint64_t version, unsigned seconds, const void *address,
                                size_t length, const httpd_conn_t *conn);
} httpd_live_t;

/* What a request means, which is the application's: its callbacks find a
 * request's route, run its handler (here, or on one of the application's
 * work pools with the connection suspended), write the answers the transport
 * refuses with, and hold event streams and long polls (live). */
typedef struct {
    void *ctx;               /* every callback's first argument */
    const void *request_app; /* put in every request (api_request_t.app) */
    /* Parses raw into *target and finds req's route (req->route); false with
     * res filled when there is none (res->allow set when the path has routes,
     * none for the method). */
    bool (*route)(void *ctx, const char *raw, size_t length, target_t *target, api_request_t *req,
                  api_response_t *res);
    /* Route i's ROUTE_* flags and pool index (-1: run on the connection's thread). */
    void (*route_info)(void *ctx, int route, unsigned *flags, int *pool);
    void (*handle)(void *ctx, const api_request_t *req, api_response_t *res);
    /* Writes the answer for a refusal (pool: the route's pool, else -1;
     * limit: the bound a rate-limited request passed, else NULL). */
    void (*refuse)(void *ctx, httpd_refusal_t why, int pool, const char *detail, const httpd_limit_t *limit,
                   api_response_t *res);
    /* Optional (NULL: not called). */
    void (*completed)(void *ctx, int route, unsigned status, uint64_t micros); /* every answer, route -1 unmatched */
    void (*connection)(void *ctx, int delta);                                  /* connections open */
    void (*library_message)(void *ctx);                                        /* libmicrohttpd logged something */
    /* The second framing check refused a request: the strict reader
     * (wire.c) refuses every such head first, so this means it was bypassed. */
    void (*framing_backstop)(void *ctx);
    void (*pool_waiting)(void *ctx, int pool, int delta);                      /* jobs queued on a pool */
    /* Around a pooled handler, on the pool's thread: begin with the budget
     * left (µs) of a pool with give_up_ms, then end. */
    void (*pool_budget)(void *ctx, int pool, bool begin, int64_t left_us);
    /* Optional (NULL: every request counts per address and token): takes
     * the request from a budget of its own, found by its Authorization
     * header (NULL: none), one creation too when creates (ROUTE_CREATES);
     * with HTTPD_QUOTA_SPENT, *spent filled. Probes never reach it. */
    httpd_quota_t (*quota)(void *ctx, const char *authorization, bool creates, httpd_spent_t *spent);
    const httpd_live_t *live; /* NULL: no streams or long polls (handlers' answers are sent as they are) */
} httpd_app_t;

/* A work pool for routes whose handlers must not run on a connection's
 * thread. A job not started within give_up_ms (0: no bound) is refused
 * unrun; its handler's budget is give_up_ms + extra_ms from its arrival. */
typedef struct {
    workpool_t *pool;    /* NULL (and no submit): the pool's routes run on the connection's thread */
    /* Instead of pool: submit(runner, fn, arg) runs the job on the
     * connection's own loop thread (api/fiber_pool.h), false when full. */
    bool (*submit)(void *runner, void (*fn)(void *arg), void *arg);
    void *runner;
    unsigned give_up_ms;
    unsigned extra_ms;
    bool skip_gone;      /* a job whose client left while it waited is not run */
    unsigned per_address_max; /* jobs one client address may have running or waiting (0: no bound) */
} httpd_pool_t;

enum { HTTPD_POOLS_MAX = 4 };

/* A request budget and its refusal's words, which are the application's:
 * "<what> <whose> are limited to <rate> a second (--<name>...)"
 * (ratelimit_describe). */
typedef struct {
    ratelimit_t *limiter; /* owned by the caller; NULL: no budget */
    const char *name;     /* the setting that sets it, without its dashes; the refusal's limit */
    const char *what;     /* what it counts, plural: "requests" */
    const char *whose;    /* whose budget: "from one client address" */
} httpd_budget_t;

typedef struct {
    const char *bind;    /* an IPv4 or IPv6 address */
    unsigned port;       /* 0: any free port */
    unsigned probe_port; /* a second port for the ROUTE_PROBE routes alone, with a thread of its own; 0: none */
    bool probes_only;    /* the main port too serves only the ROUTE_PROBE routes (every other path is 404) */
    unsigned threads;    /* server threads on the main port */
    unsigned max_connections, per_address_connections; /* 0 per address: no limit */
    unsigned idle_timeout_seconds;
    uint64_t header_timeout_us, body_timeout_us;
    uint64_t max_body;
    /* One route may take large bodies (large_method large_path, any
     * query): up to max_large_body bytes within large_body_timeout_us,
     * kept in an unnamed file in spool_dir past max_body (request.h). */
    const char *large_method, *large_path, *spool_dir;
    uint64_t max_large_body, large_body_timeout_us;
    uint64_t max_spool; /* the files' bytes at once, all requests together (past it: 503) */
    /* Request budgets: per client address, per bearer token, and per
     * address for ROUTE_CREATES routes; a request with a budget of its own
     * (app.quota) is counted there instead. */
    httpd_budget_t by_address, by_token, creations;
    httpd_pool_t pools[HTTPD_POOLS_MAX];
    int pool_count;
    /* Pages of other origins (cors.h): the answers name the request's
     * origin when allowed, and a preflight at a routed path is answered here,
     * before budgets and handlers. NULL: no CORS header, OPTIONS as any method. */
    const cors_t *cors;
    httpd_app_t app;
} httpd_config_t;

/* Whether bind is an IPv4 or IPv6 address httpd_start can listen on. */
bool httpd_bind_ok(const char *bind);

/* Starts serving: listens, starts the daemons and the accept threads, and
 * prints the listening line last. 0 with *out set; else the process's exit
 * status (2: out of memory or threads; 1: cannot listen or start), the
 * reason printed. cfg must outlive the server. */
int httpd_start(const httpd_config_t *cfg, httpd_t **out);

/* The drain, in its order: stop accepting (the listening socket closes; the
 * probe port serves on) and let every answer close its connection; then
 * refuse new requests (503) while started ones finish. */
void httpd_drain(httpd_t *h);
void httpd_refuse_new(httpd_t *h);
int httpd_connections(const httpd_t *h); /* connections libmicrohttpd holds */
int httpd_in_flight(const httpd_t *h);   /* requests between their head and their answer */

/* Stops the daemons: every pool must have been stopped first (a suspended
 * connection must be resumed before its daemon stops). NULL is fine. */
void httpd_stop(httpd_t *h);
/* Frees the server once no connection can reach it (after httpd_stop, and
 * after whatever held connections: the live callbacks' owner): the last
 * lingering descriptors are closed. NULL is fine. */
void httpd_free(httpd_t *h);

/* The accept threads' counts (acceptor.h) of the main port and of the probe
 * port (NULL without one), for metrics. */
const struct acceptor *httpd_acceptor(const httpd_t *h, bool probe);

#endif
