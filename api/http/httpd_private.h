/* What the server's files share: a request's state, the server's, and the
 * answer helpers (httpd_answer.c), used by httpd.c (the daemons and a
 * request's life) and httpd_held.c (the answers that leave a connection's
 * thread). Only those three files include it. */
#ifndef CHESSD_API_HTTP_HTTPD_PRIVATE_H
#define CHESSD_API_HTTP_HTTPD_PRIVATE_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acceptor.h"
#include "buf.h"
#include "../../rules/base/clock.h"
#include "httpd.h"
#include "request_id.h"

enum {
    LOG_PATH_MAX = 200,
    STREAM_BLOCK = 1024,          /* a stream's response buffer (HTTP/1.0 only; chunked replies use the connection's) */
    STREAM_RETRY_AFTER = 5,       /* seconds, for too_many_streams */
    /* A stream's kernel send buffer (the kernel doubles it): enough to keep a
     * reader's window full, while a client that stops reading pins this
     * little, not the megabytes the kernel's autotuning would grow it to. */
    STREAM_SEND_BUFFER = 32 * 1024,
    CONNECTION_MEMORY = 12 * 1024, /* libmicrohttpd's memory for one connection (see start_daemon) */
    PROBE_CONNECTIONS = 32,        /* the probe port's connections at once */
};

typedef struct {
    uint64_t started_us;
    char request_id[REQUEST_ID_MAX + 1];
    char method[16];
    char path[LOG_PATH_MAX + 1]; /* the raw path, as sent, for the log */
    char *raw_target;            /* malloc'd, as sent */
    size_t raw_target_length;
    unsigned status;
    int route;
    bool seen;    /* the first access callback has run */
    bool cors;    /* the server answers pages of other origins: every answer says it varies with Origin */
    const char *cors_origin; /* the Access-Control-Allow-Origin of the answers (cors_allow_origin), or NULL */
    bool closing; /* answer with Connection: close */
    buf_t body;
    bool too_large;
    bool large;        /* the large-body route: its body may go to a file */
    int spool_fd;      /* that file (-1: none) */
    uint64_t spooled;  /* its bytes */
    bool spool_failed; /* the file could not be made or written */
    bool spool_full;   /* the files of all requests hold max_spool */
    /* a request run on a pool while the connection is suspended; finished
     * on the server thread */
    bool queued;
    int pool;              /* the pool it runs on */
    bool stream_admitted;  /* a stream route holding its place under the stream bounds */
    bool rerun;            /* a long poll's second run, after its wait: not held again */
    bool address_counted;  /* counted in its pool's pool_addresses */
    uint64_t give_up_us;   /* a pool job not started by then is refused unrun (0: never) */
    atomic_bool done;
    /* a long poll: held (suspended) until the application wakes it; res is
     * the answer to send if it could not be held after all */
    bool held, hold_refused;
    unsigned held_seconds;
    size_t held_bytes; /* its answer's, charged to the buffer budget while held */
    atomic_bool woken;
    struct MHD_Connection *connection;
    target_t *target; /* malloc'd (5 KiB) while the handler may run; an event stream frees it at its start */
    api_request_t req;
    api_response_t res;
} request_state_t;

/* The jobs each client address has on a pool with per_address_max: a
 * slot per address with any (count 0: a free slot). */
enum { POOL_ADDRESSES = 256 };
typedef struct {
    unsigned char bytes[16];
    size_t length;
    unsigned count;
} pool_address_t;

typedef struct {
    pthread_mutex_t lock;
    pool_address_t slots[POOL_ADDRESSES];
} pool_addresses_t;

struct httpd {
    const httpd_config_t *cfg;
    char large_line[80]; /* "POST /v1/pgn": the large-body route as its request line begins (wire.h) */
    atomic_ullong spooled; /* bytes in the large bodies' files now */
    pool_addresses_t pool_addresses[HTTPD_POOLS_MAX];
    const httpd_app_t *app;
    const httpd_live_t *live; /* cfg->app.live */
    atomic_int in_flight;
    atomic_int connections;
    acceptor_t *acceptor;            /* the main port's accept thread and connection counts */
    acceptor_t *probe_acceptor;      /* the probe port's, or NULL */
    /* The main port's event loops, each with its daemon (loop.h). */
    struct MHD_Daemon **daemons;
    struct loop **loops;
    unsigned loop_count;
    atomic_uint next_loop; /* the loop the next connection goes to, round the ring */
    struct MHD_Daemon *probe_daemon; /* serves the ROUTE_PROBE routes alone; NULL: no probe port */
    atomic_bool draining; /* answers close their connection */
    atomic_bool refusing; /* last phase of the drain: new requests get 503 */
    bool wire_started;
};

/* wire.c's refusals and the pools' jobs have no argument to carry the
 * server: there is one a process. */
extern httpd_t *httpd_the_server;

/* MHD_resume_connection, and a word to the event loop that runs the
 * connection's daemon, which libmicrohttpd does not wake itself (an
 * external-loop daemon has no inter-thread channel). Any thread. */
void httpd_resume(struct MHD_Connection *connection);

/* The connection's socket, or -1. */
int httpd_connection_fd(struct MHD_Connection *connection);
/* The client's address as bytes for per-address budgets (an IPv4 address,
 * also one mapped into IPv6, or an IPv6 /64); false when unknown. */
bool httpd_client_address(struct MHD_Connection *connection, const void **bytes, size_t *length);
/* The client address as text (httpd_client_address: an IPv4 address, or an
 * IPv6 /64 "<prefix>::/64"); "" when not known. */
void httpd_client_text(struct MHD_Connection *connection, char *out, size_t size);
/* The application's answer for a refusal into *res. */
void httpd_refusal(const httpd_t *h, httpd_refusal_t why, int pool, const char *detail, api_response_t *res);
void httpd_pool_waiting(const httpd_t *h, int pool, int delta);
/* The headers every answer carries, and those res asks for. */
void httpd_add_headers(struct MHD_Response *response, const request_state_t *st, const api_response_t *res);
/* Queues res (its body freed by libmicrohttpd; a 500 when it has none). */
enum MHD_Result httpd_send_response(struct MHD_Connection *connection, request_state_t *st, api_response_t *res);
/* Queues res's body_stream (taken from res): the head, then the stream's
 * bytes as it makes them, the connection suspended while it has none. */
enum MHD_Result httpd_send_body_stream(struct MHD_Connection *connection, request_state_t *st, api_response_t *res);
/* GET's head for a HEAD whose body is not made: no Content-Length, not
 * chunked, the connection closed after it; NULL when out of memory. */
struct MHD_Response *httpd_head_of_unknown_length(void);
/* Queues the application's answer for a refusal. */
enum MHD_Result httpd_send_refusal(struct MHD_Connection *connection, request_state_t *st, httpd_refusal_t why,
                                   const char *detail);
/* Whether the request is a CORS preflight the server decides (cors set,
 * OPTIONS with Origin and Access-Control-Request-Method). */
bool httpd_is_preflight(struct MHD_Connection *connection, const request_state_t *st);
/* Answers a preflight at a path whose methods are allow: 204 with the
 * grants, or the refusal (HTTPD_REFUSE_CORS) without them. */
enum MHD_Result httpd_send_preflight(struct MHD_Connection *connection, request_state_t *st, const char *allow);

/* httpd_held.c: answers that leave the connection's thread. */
/* Runs the handler on pool `pool`, the connection suspended meanwhile. */
enum MHD_Result httpd_offload(httpd_t *h, struct MHD_Connection *connection, request_state_t *st, int pool);
/* A ROUTE_STREAM request: its place under the stream bounds, then its handler. */
enum MHD_Result httpd_run_stream_route(httpd_t *h, struct MHD_Connection *connection, request_state_t *st, int pool);
/* The answer of a request whose handler has run: a stream, a long poll held, or the answer sent. */
enum MHD_Result httpd_finish_answer(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                    api_response_t *res);
/* A long poll's held answer is no longer held: its bytes leave the budget. */
void httpd_held_uncharge(request_state_t *st);
/* A held long poll, woken: the handler runs again. */
enum MHD_Result httpd_answer_held(httpd_t *h, struct MHD_Connection *connection, request_state_t *st);
/* The client's address for the stream bounds (empty when unknown). */
void httpd_address_of(struct MHD_Connection *connection, const void **bytes, size_t *length);

#endif
