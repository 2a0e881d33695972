/* libmicrohttpd glue. Per request: a state allocated when the request line
 * arrives (the raw target, start time), the body collected up to the cap
 * (413 as soon as Content-Length says too much), the router run on the final
 * callback (or on the work pool for ROUTE_POOL routes, with the connection
 * suspended), and the state freed and the log line written in the completion
 * callback. The bytes themselves pass wire.c's checks and deadlines first.
 * Handlers see the request's headers through a callback put in the request and
 * the drain in req.draining, so nothing they link against lives here.
 * Two kinds of answer are held without a thread: an event stream (a
 * response whose content reader takes bytes from events.c, suspending the
 * connection while there are none), and a long poll (the connection
 * suspended until events.c wakes it, then the handler run again). A
 * suspended connection has no idle timeout, so only a client that stops
 * reading a stream is timed out. Signals are taken synchronously with
 * sigwait in the main thread. Connections are accepted by acceptor.c's
 * thread on chessd's own listening socket, under its limits, and handed to
 * libmicrohttpd. With --probe-port a second listening socket, accept thread
 * and one-thread daemon serve the ROUTE_PROBE routes alone, so probes never
 * queue behind busy server threads or a full address. */
#include "server.h"
#include "app.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../store/store.h"
#include "http/acceptor.h"
#include "render/board_svg.h"
#include "http/buf.h"
#include "http/mhd_version.h"
#include "live/events.h"
#include "http/request.h"
#include "metrics.h"
#include "http/ratelimit.h"
#include "problem.h"
#include "readiness.h"
#include "http/router.h"
#include "http/sendq.h"
#include "http/wire.h"
#include "http/workpool.h"

enum {
    REQUEST_ID_MAX = 64,
    LOG_PATH_MAX = 200,
    POOL_QUEUE_PER_THREAD = 16,
    POOL_NICENESS = 10, /* perft yields the CPU to the connection threads */
    STORE_QUEUE_PER_THREAD = 64,  /* game requests waiting for a store thread, per thread */
    MHD_LOG_PER_SECOND = 5,
    STREAM_BLOCK = 1024,          /* a stream's response buffer (HTTP/1.0 only; chunked replies use the connection's) */
    STREAM_RETRY_AFTER = 5,       /* seconds, for too_many_streams */
    /* A stream's kernel send buffer (the kernel doubles it): enough to keep a
     * reader's window full, while a client that stops reading pins this
     * little, not the megabytes the kernel's autotuning would grow it to. */
    STREAM_SEND_BUFFER = 32 * 1024,
    FILE_LIMIT_SPARE = 256,       /* descriptors beyond the connections: the listeners, logs, the hub */
    REDIS_FILES_PER_THREAD = 8,   /* a thread's Redis connections: one a node (cluster masters), and a check's */
    CONNECTION_MEMORY = 12 * 1024, /* libmicrohttpd's memory for one connection (see start_daemon) */
    PROBE_CONNECTIONS = 32,        /* the probe port's connections at once (within FILE_LIMIT_SPARE) */
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
    bool closing; /* answer with Connection: close */
    buf_t body;
    bool too_large;
    /* a request run on a pool (perft, or the store pool for game routes)
     * while the connection is suspended; finished on the server thread */
    bool queued;
    bool perft;            /* on the perft pool (else the store pool) */
    bool stream_admitted;  /* a stream route holding its place under the stream bounds */
    bool rerun;            /* a long poll's second run, after its wait: not held again */
    uint64_t give_up_us;   /* a store job not started by then is refused unrun (0: never) */
    unsigned budget_extra_ms; /* a store job's Redis calls may go on this long past give_up_us */
    atomic_bool done;
    /* a long poll: held (suspended) until events.c wakes it; res is the
     * answer to send if it could not be held after all */
    bool held, hold_refused;
    unsigned held_seconds;
    atomic_bool woken;
    struct MHD_Connection *connection;
    target_t *target; /* malloc'd (5 KiB) while the handler may run; an event stream frees it at its start */
    api_request_t req;
    api_response_t res;
} request_state_t;

typedef struct server {
    const config_t *cfg;
    store_t *store; /* NULL with --redis none: no games */
    app_t app;      /* what handlers see: cfg and store */
    ratelimit_t *by_address, *by_token, *creations;
    workpool_t *pool;       /* perft */
    workpool_t *store_pool; /* game requests: every Redis round trip of a request runs there; NULL without a store */
    events_t *events; /* NULL with --redis none */
    atomic_int in_flight;
    atomic_int connections;
    acceptor_t *acceptor;            /* the main port's accept thread and connection counts */
    acceptor_t *probe_acceptor;      /* --probe-port's, or NULL */
    struct MHD_Daemon *probe_daemon; /* serves the ROUTE_PROBE routes alone; NULL: no probe port */
    atomic_bool draining; /* after SIGTERM: readiness fails, answers close their connection */
    atomic_bool refusing; /* last phase of the drain: new requests get 503 */
} server_t;

static int connection_fd(struct MHD_Connection *connection);

/* Whether connection came in on --probe-port (its daemon has no workers). */
static bool on_probe_port(const server_t *srv, struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    return srv->probe_daemon && info && info->daemon == srv->probe_daemon;
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* api_request_t.header: the request's headers are the connection's. */
static const char *connection_header(const void *connection, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_HEADER_KIND, name);
}

/* A fresh request id: unique, not secret. A per-thread xorshift generator,
 * seeded once from the kernel, saves a system call per request. */
static void make_request_id(char *out)
{
    static _Thread_local uint64_t state[2];
    if (!state[0] && !state[1]) {
        if (getrandom(state, sizeof state, 0) != (ssize_t)sizeof state || (!state[0] && !state[1])) {
            state[0] = now_us() | 1;
            state[1] = (uint64_t)(uintptr_t)&state;
        }
    }
    unsigned char bytes[16];
    for (int half = 0; half < 2; half++) {
        uint64_t x = state[0], y = state[1];
        state[0] = y;
        x ^= x << 23;
        state[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
        uint64_t v = state[1] + y;
        memcpy(bytes + 8 * half, &v, 8);
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 15];
    }
    out[32] = '\0';
}

/* A request id from the client is kept when short and plain; else one is made. */
static void choose_request_id(struct MHD_Connection *connection, char *out)
{
    const char *given = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Request-Id");
    if (given) {
        size_t n = strlen(given);
        bool plain = n > 0 && n <= REQUEST_ID_MAX;
        for (size_t i = 0; plain && i < n; i++) {
            char c = given[i];
            plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                    || c == '_' || c == '.' || c == ':';
        }
        if (plain) {
            memcpy(out, given, n + 1);
            return;
        }
    }
    make_request_id(out);
}

/* The answer when even the out-of-memory problem cannot be written. */
static const char out_of_memory_problem[] =
    "{\"type\":\"urn:chessd:problem:internal_error\",\"title\":\"Internal error\",\"status\":500,"
    "\"detail\":\"out of memory\",\"code\":\"internal_error\"}";

/* The headers every answer carries, and those res asks for. */
static void add_headers(struct MHD_Response *response, const request_state_t *st, const api_response_t *res)
{
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, res->content_type);
    MHD_add_response_header(response, "X-Request-Id", st->request_id);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* A browser takes every answer as its Content-Type says, never as what
     * its bytes look like (a PGN or a problem read as HTML). */
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    if (res->content_type && !strcmp(res->content_type, BOARD_SVG_CONTENT_TYPE))
        MHD_add_response_header(response, "Content-Security-Policy", BOARD_SVG_CONTENT_SECURITY_POLICY);
    if (res->allow)
        MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, res->allow);
    if (st->closing)
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
    if (res->etag[0])
        MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, res->etag);
    if (res->location[0])
        MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, res->location);
    if (res->authenticate)
        MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (res->retry_after) {
        char seconds[16];
        snprintf(seconds, sizeof seconds, "%u", res->retry_after);
        MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
    }
    if (res->preference_applied[0])
        MHD_add_response_header(response, "Preference-Applied", res->preference_applied);
}

/* Queues res (its body freed by libmicrohttpd). A response without a body is
 * one whose text could not be made (out of memory): a 500 problem goes
 * instead, never a 200 with a part of its text. */
static enum MHD_Result send_response(struct MHD_Connection *connection, request_state_t *st, api_response_t *res)
{
    if (!res->body) {
        api_response_t fallback = { 0 };
        api_problem(&fallback, API_EINTERNAL, "out of memory", NULL, NULL);
        *res = fallback;
    }
    struct MHD_Response *response =
        res->body ? MHD_create_response_from_buffer(res->body_length, res->body, MHD_RESPMEM_MUST_FREE)
                  : MHD_create_response_from_buffer(sizeof out_of_memory_problem - 1, (void *)out_of_memory_problem,
                                                    MHD_RESPMEM_PERSISTENT);
    if (!response) {
        free(res->body);
        return MHD_NO;
    }
    if (!res->body) {
        res->status = 500;
        res->content_type = "application/problem+json";
    }
    add_headers(response, st, res);
    st->status = res->status;
    enum MHD_Result ok = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return ok;
}


static enum MHD_Result send_problem(struct MHD_Connection *connection, request_state_t *st, api_status_t status,
                                    const char *detail)
{
    api_response_t res = { 0 };
    api_problem(&res, status, detail, NULL, NULL);
    return send_response(connection, st, &res);
}

typedef struct {
    int content_lengths;
    const char *first_length;
    bool lengths_differ;
    bool bad_transfer_encoding;
} framing_t;

static enum MHD_Result inspect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    framing_t *f = cls;
    (void)kind;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        if (f->content_lengths++ && strcmp(f->first_length, value))
            f->lengths_differ = true;
        f->first_length = value;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->bad_transfer_encoding |= strcasecmp(value, "chunked") != 0;
    }
    return MHD_YES;
}

/* RFC 9112 section 6.3: a message whose length cannot be told for sure is
 * refused, so nothing in front of chessd can read it another way. The
 * backstop: wire.c's strict reader refuses every such head before
 * libmicrohttpd parses it, so this fires only when the reader was bypassed
 * (interpose.c says how that could happen); each time it is counted
 * (chessd_http_framing_backstop_total). */
static const char *framing_problem(struct MHD_Connection *connection)
{
    framing_t f = { 0 };
    MHD_get_connection_values(connection, MHD_HEADER_KIND, inspect_header, &f);
    if (f.lengths_differ)
        return "conflicting Content-Length headers";
    if (f.bad_transfer_encoding)
        return "only the chunked Transfer-Encoding is accepted";
    if (f.content_lengths && MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return "Content-Length and Transfer-Encoding together";
    return NULL;
}

/* The client's address as bytes, for per-address budgets: an IPv4 address
 * (also one mapped into IPv6), or the /64 prefix of an IPv6 address, since
 * one IPv6 host usually holds a whole /64. */
static bool client_address(struct MHD_Connection *connection, const void **bytes, size_t *length)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info ? info->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET) {
        *bytes = &((const struct sockaddr_in *)sa)->sin_addr;
        *length = sizeof(struct in_addr);
        return true;
    }
    if (sa && sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        bool mapped = IN6_IS_ADDR_V4MAPPED(a);
        *bytes = mapped ? a->s6_addr + 12 : a->s6_addr;
        *length = mapped ? 4 : 8;
        return true;
    }
    return false;
}

/* Per-address and per-token request budgets (when configured), and the
 * per-address creation budget for ROUTE_CREATES. The token itself is only
 * hashed into a bucket index, never kept. */
static bool allowed_by_limits(server_t *srv, struct MHD_Connection *connection, unsigned flags,
                              unsigned *retry_after)
{
    uint64_t now = now_us();
    const void *address;
    size_t address_length;
    bool has_address = client_address(connection, &address, &address_length);
    if (srv->by_address && has_address && !ratelimit_take(srv->by_address, address, address_length, now, retry_after))
        return false;
    if (srv->creations && (flags & ROUTE_CREATES) && has_address
        && !ratelimit_take(srv->creations, address, address_length, now, retry_after))
        return false;
    if (srv->by_token) {
        const char *auth = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization");
        if (auth && !strncasecmp(auth, "Bearer ", 7) && !ratelimit_take(srv->by_token, auth + 7, strlen(auth + 7), now,
                                                                        retry_after))
            return false;
    }
    return true;
}

/* Called by libmicrohttpd when a request line has arrived: the request's
 * state starts here, with the target exactly as the client sent it. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *connection)
{
    (void)cls;
    request_state_t *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->started_us = now_us();
    st->route = -1;
    buf_init(&st->body);
    st->connection = connection;
    /* libmicrohttpd's memory limit (16 KiB a connection) bounds its length. */
    st->raw_target = strdup(uri);
    st->raw_target_length = st->raw_target ? strlen(st->raw_target) : 0;
    size_t path_length = strcspn(uri, "?");
    snprintf(st->path, sizeof st->path, "%.*s", (int)(path_length < LOG_PATH_MAX ? path_length : LOG_PATH_MAX), uri);
    return st;
}

/* The first access callback: headers are in. Answers early (returning the
 * result) only when the request must not be read on; else returns MHD_YES. */
static enum MHD_Result start_request(server_t *srv, struct MHD_Connection *connection, request_state_t *st,
                                     const char *method)
{
    st->seen = true;
    atomic_fetch_add(&srv->in_flight, 1); /* a whole head: the drain waits for it */
    choose_request_id(connection, st->request_id);
    snprintf(st->method, sizeof st->method, "%s", method);
    const char *framing = framing_problem(connection);
    if (framing) {
        metrics_http_framing_backstop();
        st->too_large = true; /* discard whatever body follows */
        st->closing = true;
        return send_problem(connection, st, API_EBAD_REQUEST, framing);
    }
    const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(length, &end, 10);
        if (errno || *end || n > srv->cfg->max_body) {
            /* Answered before the body is sent; the connection then closes,
             * and wire.c reads and drops what the client still sends, so the
             * client reads this answer rather than a reset. */
            st->too_large = true;
            st->closing = true;
            return send_problem(connection, st, API_EPAYLOAD_TOO_LARGE, "the request body is over the limit");
        }
    }
    return MHD_YES;
}

/* Runs a request on its pool, unless, for a perft, its client has gone
 * while it waited (the connection is suspended, so nothing else reads it
 * now; a game request is short, and its client may have only half-closed,
 * still reading), or, for a game request, it waited past the Redis timeout
 * (its client is told at once rather than after a wait it could not have
 * known of). */
static void run_pooled(void *arg)
{
    request_state_t *st = arg;
    if (st->perft)
        metrics_perft_waiting(-1);
    else
        metrics_store_waiting(-1);
    if (st->perft && wire_client_gone(connection_fd(st->connection))) {
        api_problem(&st->res, API_EUNAVAILABLE, "the client left before its turn", NULL, NULL);
    } else if (st->give_up_us && now_us() > st->give_up_us) {
        metrics_store_refused();
        api_problem(&st->res, API_ESTORE_UNAVAILABLE,
                    "the game store's threads were all busy for longer than its timeout; nothing was changed", NULL,
                    NULL);
    } else if (st->perft) {
        router_handle(&st->req, &st->res);
    } else {
        /* Every Redis call of the request within its budget, counted from
         * its arrival: the Redis timeout, and half as much again for a
         * second round trip (a write whose answer was lost, read back). */
        int64_t left_us = (int64_t)st->give_up_us - (int64_t)now_us();
        store_set_deadline(store_now_ms() + left_us / 1000 + (int64_t)st->budget_extra_ms);
        router_handle(&st->req, &st->res);
        store_set_deadline(0);
    }
    atomic_store(&st->done, true);
    MHD_resume_connection(st->connection);
}

/* Runs the handler on a pool thread, the connection suspended meanwhile: on
 * the perft pool, or on the store pool so that no server thread ever waits
 * for Redis. A full queue is answered at once (503 with Retry-After), through
 * the same resumption. The answer is finished by finish_answer. */
static enum MHD_Result offload(server_t *srv, struct MHD_Connection *connection, request_state_t *st, bool perft)
{
    st->queued = true;
    st->perft = perft;
    st->give_up_us = perft ? 0 : now_us() + (uint64_t)srv->cfg->redis_timeout_ms * 1000u;
    st->budget_extra_ms = srv->cfg->redis_timeout_ms / 2;
    st->res = (api_response_t){ 0 };
    atomic_store(&st->done, false);
    MHD_suspend_connection(connection);
    if (perft)
        metrics_perft_waiting(1); /* before the job can start and take it back */
    else
        metrics_store_waiting(1);
    if (workpool_submit(perft ? srv->pool : srv->store_pool, run_pooled, st))
        return MHD_YES;
    if (perft) {
        metrics_perft_waiting(-1);
        api_problem(&st->res, API_EUNAVAILABLE, "the perft workers are all busy; retry shortly", NULL, NULL);
    } else {
        metrics_store_waiting(-1);
        metrics_store_refused();
        api_problem(&st->res, API_ESTORE_UNAVAILABLE,
                    "the game store's threads are all busy and their queue is full; nothing was changed", NULL, NULL);
    }
    st->res.retry_after = 1;
    atomic_store(&st->done, true);
    MHD_resume_connection(connection);
    return MHD_YES;
}

/* --- event streams and long polls (see events.h) --- */

/* The client's address for the per-address stream bound (empty when unknown). */
static void address_of(struct MHD_Connection *connection, const void **bytes, size_t *length)
{
    if (!client_address(connection, bytes, length)) {
        *bytes = "";
        *length = 0;
    }
}

/* A stream's content reader state. It outlives the request's state: the
 * response is freed after the completion callback. */
typedef struct {
    events_stream_t *stream;
    struct MHD_Connection *connection;
} stream_link_t;

/* events_conn_t for a stream: the hub's calls on its connection. */
static void suspend_connection(void *connection) { MHD_suspend_connection(connection); }
static void resume_connection(void *connection) { MHD_resume_connection(connection); }

/* The stream's client stopped reading: shut the socket, and libmicrohttpd,
 * whose write fails, closes the connection (and frees the stream). The close
 * resets it, so what the client never took is dropped at once instead of
 * held by the kernel until it gives up on the client. */
static void abort_connection(void *connection)
{
    int fd = connection_fd(connection);
    if (fd >= 0) {
        sendq_reset_on_close(fd);
        shutdown(fd, SHUT_RDWR);
    }
}

/* events_conn_t.kernel for a stream: its socket's send queue. */
static bool connection_kernel(void *connection, size_t *unsent, uint64_t *acked)
{
    int fd = connection_fd(connection);
    return fd >= 0 && sendq_unsent(fd, unsent) && (!acked || sendq_acked(fd, acked));
}

/* libmicrohttpd's content reader: the stream's queued bytes; with none, the
 * connection is suspended (by events_stream_read) and 0 returned. */
static ssize_t read_stream(void *cls, uint64_t pos, char *out, size_t max)
{
    stream_link_t *link = cls;
    (void)pos;
    /* A client that left is found here, at the latest by the next
     * heartbeat: its stream ends (quietly, as if complete). */
    if (wire_client_gone(connection_fd(link->connection)))
        return MHD_CONTENT_READER_END_OF_STREAM;
    ssize_t n = events_stream_read(link->stream, out, max);
    if (n >= 0)
        return n;
    return n == -1 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* The content reader of a stream's HEAD: never called (libmicrohttpd
 * sends a HEAD's head alone), and empty if it were. */
static ssize_t read_nothing(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)cls, (void)pos, (void)out, (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/* A stream's HEAD answer: GET's head, of unknown length (no Content-Length,
 * which would say 0), but not chunked: libmicrohttpd 0.9.75 writes a
 * chunked answer's last chunk ("0\r\n\r\n") even after a HEAD's head, bytes
 * a client would read as the start of the next answer. Unchunked, the
 * answer's end is the connection's (Connection: close). NULL when out of
 * memory. */
static struct MHD_Response *stream_head_response(void)
{
    struct MHD_Response *response =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_nothing, NULL, NULL);
    if (response && MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(response);
        response = NULL;
    }
    return response;
}

static void free_stream(void *cls)
{
    stream_link_t *link = cls;
    events_stream_release(link->stream);
    free(link);
}

/* Queues a stream's response (and drops this reference to it) with its headers. */
static enum MHD_Result queue_stream_head(struct MHD_Connection *connection, request_state_t *st,
                                         const api_response_t *res, struct MHD_Response *response)
{
    add_headers(response, st, res);
    /* A proxy that buffers answers (nginx) passes a stream's bytes on at once. */
    MHD_add_response_header(response, "X-Accel-Buffering", "no");
    st->status = res->status;
    enum MHD_Result ok = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return ok;
}

/* Answers with res->stream (taken from res): the head, then the stream's
 * bytes as the hub queues them. The stream's admitted place passes to it.
 * HEAD gets GET's head (stream_head_response) and holds nothing. */
static enum MHD_Result start_stream(server_t *srv, struct MHD_Connection *connection, request_state_t *st,
                                    api_response_t *res)
{
    events_stream_t *stream = res->stream;
    res->stream = NULL;
    const void *address;
    size_t length;
    address_of(connection, &address, &length);
    bool head = !strcmp(st->method, "HEAD");
    stream_link_t *link = head ? NULL : malloc(sizeof *link);
    struct MHD_Response *response = NULL;
    if (link) {
        *link = (stream_link_t){ stream, connection };
        response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_stream, link, free_stream);
    } else if (head) {
        response = stream_head_response();
    }
    if (head || !response) {
        free(link);
        events_stream_release(stream);
        events_release(srv->events, address, length);
        if (!response)
            return send_problem(connection, st, API_EINTERNAL, "out of memory");
        return queue_stream_head(connection, st, res, response);
    }
    events_conn_t conn = { suspend_connection, resume_connection, abort_connection, connection, NULL,
                           connection_kernel };
    events_status_t status = events_stream_attach(srv->events, stream, address, length, &conn);
    if (status != EVENTS_OK) {
        MHD_destroy_response(response); /* frees the link and the stream */
        st->closing = status == EVENTS_EDRAINING;
        return status == EVENTS_EDRAINING
                   ? send_problem(connection, st, API_EUNAVAILABLE, "shutting down; retry on another replica")
                   : send_problem(connection, st, API_EINTERNAL, "out of memory");
    }
    int fd = connection_fd(connection);
    if (fd >= 0)
        sendq_cap(fd, STREAM_SEND_BUFFER); /* best effort: the bounds count the kernel's queue anyway */
    return queue_stream_head(connection, st, res, response);
}

/* A ROUTE_STREAM request: a place under the stream bounds first (503
 * too_many_streams over them), then the handler, then the stream. */
static enum MHD_Result run_stream_route(server_t *srv, struct MHD_Connection *connection, request_state_t *st)
{
    const void *address;
    size_t length;
    address_of(connection, &address, &length);
    api_response_t res = { 0 };
    switch (events_admit(srv->events, address, length)) {
    case EVENTS_OK:
        break;
    case EVENTS_ETOO_MANY:
        api_problem(&res, API_ETOO_MANY_STREAMS,
                    "this replica holds as many event streams and long polls as it may, in all or from this address",
                    NULL, NULL);
        res.retry_after = STREAM_RETRY_AFTER;
        return send_response(connection, st, &res);
    case EVENTS_EDRAINING:
        st->closing = true;
        return send_problem(connection, st, API_EUNAVAILABLE, "shutting down; retry on another replica");
    default:
        return send_problem(connection, st, API_EINTERNAL, "out of memory");
    }
    st->stream_admitted = true;
    return offload(srv, connection, st, false); /* the handler reads the game: on the store pool */
}

/* A stream route's answer, its handler run: the stream, or (the handler
 * refused) the problem, its place given back. */
static enum MHD_Result finish_stream_route(server_t *srv, struct MHD_Connection *connection, request_state_t *st,
                                           api_response_t *res)
{
    st->stream_admitted = false;
    if (res->stream) {
        /* The handler never runs again for a stream: what it read goes, so an open stream costs less. */
        free(st->target);
        st->target = NULL;
        st->req.target = NULL;
        st->req.path = NULL;
        return start_stream(srv, connection, st, res);
    }
    const void *address;
    size_t length;
    address_of(connection, &address, &length);
    events_release(srv->events, address, length);
    return send_response(connection, st, res);
}

/* events_conn_t.gone for a long poll: its client has closed or reset the
 * connection (it is suspended, so only the hub looks at it now). */
static bool held_client_gone(void *arg)
{
    request_state_t *st = arg;
    return wire_client_gone(connection_fd(st->connection));
}

/* events_conn_t.resume for a long poll: the wait is over. */
static void wake_held(void *arg)
{
    request_state_t *st = arg;
    atomic_store(&st->woken, true);
    MHD_resume_connection(st->connection);
}

/* Holds a long poll that res asks for: a place under the stream bounds, the
 * connection suspended until the hub wakes it. False (nothing held) over the
 * bounds: res is then answered at once, without waiting. */
static bool hold(server_t *srv, struct MHD_Connection *connection, request_state_t *st, api_response_t *res)
{
    const void *address;
    size_t length;
    address_of(connection, &address, &length);
    if (events_admit(srv->events, address, length) != EVENTS_OK)
        return false;
    st->held = true;
    st->hold_refused = false;
    st->held_seconds = res->wait_seconds;
    st->res = *res; /* the answer, should the wait not be registered after all */
    atomic_store(&st->woken, false);
    MHD_suspend_connection(connection);
    events_conn_t conn = { NULL, wake_held, NULL, st, held_client_gone, NULL };
    if (events_wait(srv->events, st->req.path_param, res->wait_version, res->wait_seconds, address, length, &conn)
        != EVENTS_OK) {
        st->hold_refused = true;
        atomic_store(&st->woken, true);
        MHD_resume_connection(connection);
    }
    return true;
}

/* A held long poll, woken: the handler runs again (on the store pool)
 * knowing it waited (or, when the wait could not be registered, its first
 * answer goes). */
static enum MHD_Result answer_held(server_t *srv, struct MHD_Connection *connection, request_state_t *st)
{
    st->held = false;
    api_response_t res = st->res;
    st->res = (api_response_t){ 0 };
    if (st->hold_refused)
        return send_response(connection, st, &res);
    free(res.body);
    st->req.waited_seconds = st->held_seconds;
    st->req.draining = atomic_load(&srv->draining);
    st->closing = st->req.draining;
    st->rerun = true;
    return offload(srv, connection, st, false);
}

/* The answer of a request whose handler has run (here or on a pool): a
 * stream, a long poll held, or the answer sent. */
static enum MHD_Result finish_answer(server_t *srv, struct MHD_Connection *connection, request_state_t *st,
                                     api_response_t *res)
{
    if (st->stream_admitted)
        return finish_stream_route(srv, connection, st, res);
    if (res->wait_seconds && !st->rerun && srv->events && hold(srv, connection, st, res))
        return MHD_YES;
    return send_response(connection, st, res);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    server_t *srv = cls;
    request_state_t *st = *con_cls;
    (void)version;
    (void)url; /* already decoded by libmicrohttpd: chessd routes on the raw target */
    if (!st || !st->raw_target)
        return MHD_NO; /* out of memory when the request line came */
    if (!st->seen)
        return start_request(srv, connection, st, method);
    if (*upload_data_size) {
        /* Past the cap the body is dropped as it comes; out of memory, the
         * buffer's failure sticks and the request gets a 500. */
        if (*upload_data_size > srv->cfg->max_body - st->body.length) {
            st->too_large = true;
            buf_free(&st->body);
        }
        if (!st->too_large)
            buf_append(&st->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (st->queued) { /* resumed: the pool has answered */
        if (!atomic_load(&st->done))
            return MHD_YES;
        st->queued = false;
        api_response_t res = st->res; /* its body passes to libmicrohttpd (or to the held state) */
        st->res = (api_response_t){ 0 };
        return finish_answer(srv, connection, st, &res);
    }
    if (st->held) /* resumed: the wait is over */
        return atomic_load(&st->woken) ? answer_held(srv, connection, st) : MHD_YES;
    if (st->status)
        return MHD_YES; /* answered on the first callback */
    if (st->too_large)
        return send_problem(connection, st, API_EPAYLOAD_TOO_LARGE, "the request body is over the limit");
    if (buf_failed(&st->body))
        return send_problem(connection, st, API_EINTERNAL, "out of memory reading the request body");
    if (!st->target && !(st->target = malloc(sizeof *st->target)))
        return send_problem(connection, st, API_EINTERNAL, "out of memory");
    st->req = (api_request_t){
        .method = method,
        .path = st->target->path,
        .target = st->target,
        .body = st->body.data ? st->body.data : "",
        .body_length = st->body.length,
        .request_id = st->request_id,
        .app = &srv->app,
        .draining = atomic_load(&srv->draining),
        .route_flags = on_probe_port(srv, connection) ? ROUTE_PROBE : 0, /* elsewhere 404 there */
        .header = connection_header,
        .header_source = connection,
    };
    api_response_t res = { 0 };
    if (!router_parse_target(st->raw_target, st->raw_target_length, st->target, &res)
        || !router_find(&st->req, &res)) {
        st->route = st->req.route;
        return send_response(connection, st, &res);
    }
    st->route = st->req.route;
    unsigned flags = router_route_flags(st->route);
    /* Probes and scrapes are never limited: a 429 there would take the pod out of service. */
    bool probe = flags & ROUTE_PROBE;
    /* In the last phase of a drain a request that arrives now (on a
     * kept-alive connection) is refused before any work, so that closing the
     * connection cannot lose the answer to a change that was made. */
    if (atomic_load(&srv->refusing) && !probe) {
        st->closing = true;
        return send_problem(connection, st, API_EUNAVAILABLE, "shutting down; retry on another replica");
    }
    unsigned retry_after = 0;
    if (!probe && !allowed_by_limits(srv, connection, flags, &retry_after)) {
        api_problem(&res, API_ERATE_LIMITED, "slow down", NULL, NULL);
        res.retry_after = retry_after;
        return send_response(connection, st, &res);
    }
    st->closing = st->req.draining; /* after SIGTERM answers close their connection */
    /* Long work leaves the connection thread: the connection waits, suspended. */
    if (flags & ROUTE_POOL)
        return offload(srv, connection, st, true);
    /* Without Redis there is no hub: the router answers games_disabled. */
    if ((flags & ROUTE_STREAM) && srv->events)
        return run_stream_route(srv, connection, st);
    /* Every Redis round trip runs on the store pool, never here. */
    if ((flags & ROUTE_GAME) && srv->store_pool)
        return offload(srv, connection, st, false);
    router_handle(&st->req, &res);
    return finish_answer(srv, connection, st, &res);
}

/* Appends client text (bounded by where it was kept) to a log line: anything
 * that could break the JSON line (quotes, backslashes, controls, non-ASCII)
 * becomes '?'. */
static void log_safe(buf_t *line, const char *text)
{
    for (size_t i = 0; text[i]; i++) {
        unsigned char c = (unsigned char)text[i];
        buf_putc(line, (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) ? '?' : (char)c);
    }
}

/* Writes a log line with a single write(2), so lines from different threads
 * never interleave, and frees it. A line that could not be made is dropped. */
static void write_line(int fd, buf_t *line)
{
    size_t length;
    char *text = buf_finish(line, &length);
    if (text) {
        ssize_t written = write(fd, text, length);
        (void)written;
    }
    free(text);
}

/* One JSON line per request on stdout. */
static void log_line(const char *method, const char *path, unsigned status, uint64_t micros,
                     const char *request_id)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    buf_t line;
    buf_init(&line);
    buf_printf(&line, "{\"ts\":%lld.%03ld,\"method\":\"", (long long)wall.tv_sec, wall.tv_nsec / 1000000);
    log_safe(&line, method);
    buf_puts(&line, "\",\"path\":\"");
    log_safe(&line, path);
    buf_printf(&line, "\",\"status\":%u,\"us\":%llu,\"request_id\":\"%s\"}\n", status, (unsigned long long)micros,
               request_id);
    write_line(STDOUT_FILENO, &line);
}

static int connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    server_t *srv = cls;
    request_state_t *st = *con_cls;
    (void)toe;
    wire_request_completed(connection_fd(connection));
    if (!st)
        return;
    uint64_t micros = now_us() - st->started_us;
    log_line(st->method[0] ? st->method : "-", st->path, st->status, micros, st->request_id[0] ? st->request_id : "-");
    metrics_request(st->route, st->status, micros);
    if (st->seen)
        atomic_fetch_sub(&srv->in_flight, 1);
    free(st->raw_target);
    free(st->target);
    buf_free(&st->body);
    /* An answer made but never sent: a long poll or a pool request whose
     * connection closed before the handler ran again after its resumption. */
    free(st->res.body);
    /* A stream route that never got to its stream (the daemon stopping):
     * its place under the stream bounds, and the stream made for it. */
    if (st->res.stream)
        events_stream_release(st->res.stream);
    if (st->stream_admitted) {
        const void *address;
        size_t length;
        address_of(connection, &address, &length);
        events_release(srv->events, address, length);
    }
    free(st);
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    server_t *srv = cls;
    (void)socket_context;
    int delta = toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1;
    if (delta > 0)
        wire_connection_opened(connection_fd(connection));
    else
        wire_connection_closed(connection_fd(connection));
    atomic_fetch_add(&srv->connections, delta);
    metrics_connection(delta);
}

/* The answer wire.c sends on a connection it refuses (400 or 413), logged
 * and counted like any other. */
static size_t wire_answer(wire_refusal_t why, const char *detail, char *out, size_t size)
{
    api_response_t res = { 0 };
    api_problem(&res, why == WIRE_REFUSE_TOO_LARGE ? API_EPAYLOAD_TOO_LARGE : API_EBAD_REQUEST, detail, NULL, NULL);
    char request_id[REQUEST_ID_MAX + 1];
    make_request_id(request_id);
    int n = snprintf(out, size,
                     "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\nX-Request-Id: %s\r\nConnection: close\r\n\r\n",
                     res.status, res.status == 413 ? "Content Too Large" : "Bad Request", res.content_type,
                     res.body_length, request_id);
    size_t length = 0;
    if (n > 0 && res.body && (size_t)n + res.body_length <= size) {
        memcpy(out + n, res.body, res.body_length);
        length = (size_t)n + res.body_length;
    }
    log_line("-", "-", res.status, 0, request_id);
    metrics_request(-1, res.status, 0);
    free(res.body);
    return length;
}

/* A warning as one JSON line on stderr naming its source; libmicrohttpd's
 * messages and the accept thread's together are logged at most
 * MHD_LOG_PER_SECOND a second. */
static void log_warning(const char *source, const char *format, va_list ap)
{
    static atomic_llong window;
    static atomic_int in_window;
    long long second = (long long)(now_us() / 1000000u);
    long long seen = atomic_load(&window);
    if (seen != second && atomic_compare_exchange_strong(&window, &seen, second))
        atomic_store(&in_window, 0);
    if (atomic_fetch_add(&in_window, 1) >= MHD_LOG_PER_SECOND)
        return;
    char message[256];
    vsnprintf(message, sizeof message, format, ap);
    size_t n = strlen(message);
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == '\r')) /* the message's own newline */
        message[--n] = '\0';
    buf_t line;
    buf_init(&line);
    buf_puts(&line, "{\"level\":\"warning\",\"source\":\"");
    buf_puts(&line, source);
    buf_puts(&line, "\",\"message\":\"");
    log_safe(&line, message);
    buf_puts(&line, "\"}\n");
    write_line(STDERR_FILENO, &line);
}

/* libmicrohttpd's own messages (mostly aborted connections) become JSON lines
 * on stderr (log_warning); all are counted. */
static void on_mhd_error(void *cls, const char *format, va_list ap)
{
    (void)cls;
    metrics_http_library_message();
    log_warning("libmicrohttpd", format, ap);
}

/* The accept thread's own messages (acceptor.h: out of descriptors or
 * memory), which are chessd's, not libmicrohttpd's. */
static void on_accept_error(void *cls, const char *format, va_list ap)
{
    (void)cls;
    log_warning("accept", format, ap);
}

/* Parses cfg->bind (IPv4 or IPv6) with port. */
static bool make_address(const config_t *cfg, unsigned port, struct sockaddr_storage *addr, bool *ipv6)
{
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, cfg->bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *ipv6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, cfg->bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *ipv6 = true;
        return true;
    }
    return false;
}

static void server_free(server_t *srv)
{
    events_stop(srv->events);
    workpool_free(srv->pool);
    workpool_free(srv->store_pool);
    readiness_stop();
    wire_stop(); /* the last lingering descriptors are closed and given back to the counts */
    acceptor_free(srv->acceptor);
    acceptor_free(srv->probe_acceptor);
    store_close(srv->store);
    ratelimit_free(srv->by_address);
    ratelimit_free(srv->by_token);
    ratelimit_free(srv->creations);
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

/* A daemon for connections an accept thread hands over (acceptor.h): no
 * listening socket, no per-address limit (the accept thread's), on_request
 * on `threads` server threads (1: the daemon's own thread alone). */
static struct MHD_Daemon *start_daemon(server_t *srv, unsigned threads, unsigned max_open, unsigned extra_flags)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG
                     | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET | extra_flags;
    /* A pool only when there is more than one thread: libmicrohttpd warns
     * that a size of 1 (or 0) is ignored. */
    struct MHD_OptionItem pool[] = {
        { threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, NULL,
        MHD_OPTION_ARRAY, pool,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg->timeout_seconds,
        /* The limit is the accept thread's (acceptor.h): libmicrohttpd splits
         * its own between the server threads, and a connection handed to a
         * thread at its share freezes that thread in 0.9.75 (a mutex left
         * locked), so each thread's share is the whole limit and two more. */
        MHD_OPTION_CONNECTION_LIMIT, (max_open + 2) * threads,
        /* Per-connection memory for the request line, headers and buffers: it
         * also caps the head a client may send (431/414 beyond it). Half of
         * it is touched on every connection, so it is most of what an idle
         * event stream costs: 12 KiB keeps a stream under 14 KiB. */
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        /* HTTP/1.1 requests without Host are refused (RFC 9112 section 3.2). */
        MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
        MHD_OPTION_END);
}

/* Who can reach an address chessd listens on, for the start-up line (tools
 * parse that line up to "threads": keep its start). */
static const char *bind_scope(const char *bind)
{
    if (!strcmp(bind, "0.0.0.0") || !strcmp(bind, "::") || !strcmp(bind, "[::]"))
        return "all interfaces: other machines can connect; --bind 127.0.0.1 keeps it local";
    if (!strncmp(bind, "127.", 4) || !strcmp(bind, "::1") || !strcmp(bind, "[::1]"))
        return "loopback: this machine only";
    return "this address only";
}

int server_run(const config_t *cfg)
{
    char version_err[512];
    bool version_ok = http_mhd_version_check(cfg->allow_untested_libmicrohttpd, version_err, sizeof version_err);
    if (version_err[0])
        fprintf(stderr, "chessd: %s\n", version_err);
    if (!version_ok)
        return 2;
    struct sockaddr_storage addr;
    bool ipv6;
    if (!make_address(cfg, cfg->port, &addr, &ipv6)) {
        fprintf(stderr, "chessd: --bind '%s' is not an IPv4 or IPv6 address\n", cfg->bind);
        return 2;
    }

    /* Worker threads inherit this mask, so only sigwait below sees the signals. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    fit_file_limit(cfg->max_connections, cfg->threads + cfg->store_threads + cfg->perft_threads);
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
    if (games && cfg->redis_tls_insecure_skip_verify)
        fprintf(stderr, "chessd: WARNING: --redis-tls-insecure-skip-verify: Redis's TLS certificate is NOT "
                        "verified; anyone on the network path can read and change every game\n");
    server_t srv = { .cfg = cfg, .store = games ? store_open(&store_cfg, err, sizeof err) : NULL,
                     .by_address = ratelimit_new(cfg->rate_limit_ip, cfg->rate_limit_burst),
                     .by_token = ratelimit_new(cfg->rate_limit_token, cfg->rate_limit_burst),
                     .creations = ratelimit_new(cfg->rate_limit_create, cfg->rate_limit_create * 5),
                     .pool = workpool_new(cfg->perft_threads, cfg->perft_threads * POOL_QUEUE_PER_THREAD, POOL_NICENESS) };
    srv.app = (app_t){ .config = cfg, .store = srv.store };
    acceptor_config_t accept_cfg = { .max_open = cfg->max_connections, .per_address = cfg->per_ip_connections,
                                     .log = on_accept_error };
    acceptor_config_t probe_accept_cfg = { .max_open = PROBE_CONNECTIONS, .log = on_accept_error };
    srv.acceptor = acceptor_new(&accept_cfg);
    srv.probe_acceptor = cfg->probe_port ? acceptor_new(&probe_accept_cfg) : NULL;
    metrics_listeners(srv.acceptor, srv.probe_acceptor);
    wire_config_t wire_cfg = { .header_timeout_us = (uint64_t)cfg->header_timeout_seconds * 1000000u,
                               .body_timeout_us = (uint64_t)cfg->body_timeout_seconds * 1000000u,
                               .max_body = cfg->max_body,
                               .answer = wire_answer };
    metrics_init(router_route_count(), router_route_name);
    events_config_t events_cfg = { .store = srv.store, .config = cfg, .max_streams = cfg->max_streams,
                                   .max_per_address = cfg->max_streams_per_address,
                                   .heartbeat_seconds = cfg->heartbeat_seconds,
                                   .stall_seconds = cfg->stream_stall_seconds,
                                   .resync_seconds = cfg->resync_seconds };
    if (srv.store) {
        srv.store_pool = workpool_new(cfg->store_threads, cfg->store_threads * STORE_QUEUE_PER_THREAD, 0);
        srv.events = events_start(&events_cfg, err, sizeof err);
    }
    /* The first probe of Redis runs now, so /readyz answers from the start. */
    bool watching = readiness_start(srv.store);
    if ((games && (!srv.store || !srv.events || !srv.store_pool)) || !srv.pool || !watching || !srv.acceptor
        || (cfg->probe_port && !srv.probe_acceptor)
        || !wire_start(&wire_cfg)) {
        if (games && !srv.store)
            fprintf(stderr, "chessd: --redis: %s\n", err);
        else
            fprintf(stderr, "chessd: out of memory or threads at start-up\n");
        server_free(&srv);
        return 2;
    }
    if (!games)
        fprintf(stderr, "chessd: no Redis configured (--redis none): games are off (their routes answer 404 "
                        "games_disabled); the rules API serves\n");
    /* chessd accepts the connections itself (acceptor.h); the daemons have
     * no listening socket of their own. */
    unsigned port = 0, probe_port = 0;
    int listener = acceptor_listen((struct sockaddr *)&addr,
                                   ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), &port);
    if (listener < 0) {
        fprintf(stderr, "chessd: cannot listen on %s port %u: %s\n", cfg->bind, cfg->port, strerror(errno));
        server_free(&srv);
        return 1;
    }
    int probe_listener = -1;
    if (cfg->probe_port) {
        struct sockaddr_storage probe_addr;
        make_address(cfg, cfg->probe_port, &probe_addr, &ipv6);
        probe_listener = acceptor_listen((struct sockaddr *)&probe_addr,
                                         ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), &probe_port);
        if (probe_listener < 0) {
            fprintf(stderr, "chessd: cannot listen on %s port %u (--probe-port): %s\n", cfg->bind, cfg->probe_port,
                    strerror(errno));
            close(listener);
            server_free(&srv);
            return 1;
        }
    }
    struct MHD_Daemon *daemon = start_daemon(&srv, cfg->threads, cfg->max_connections, MHD_ALLOW_SUSPEND_RESUME);
    srv.probe_daemon = daemon && probe_listener >= 0 ? start_daemon(&srv, 1, PROBE_CONNECTIONS, 0) : NULL;
    bool started = daemon && (probe_listener < 0 || srv.probe_daemon);
    /* acceptor_start owns the socket from here, also when it fails. */
    if (started && probe_listener >= 0) {
        started = acceptor_start(srv.probe_acceptor, probe_listener, srv.probe_daemon);
        probe_listener = -1;
    }
    if (started) {
        started = acceptor_start(srv.acceptor, listener, daemon);
        listener = -1;
    }
    if (!started) {
        acceptor_stop(srv.probe_acceptor);
        if (listener >= 0)
            close(listener);
        if (probe_listener >= 0)
            close(probe_listener);
        if (srv.probe_daemon)
            MHD_stop_daemon(srv.probe_daemon);
        if (daemon)
            MHD_stop_daemon(daemon);
        fprintf(stderr, "chessd: cannot start the HTTP server threads on %s port %u\n", cfg->bind, port);
        server_free(&srv);
        return 1;
    }
    /* The listening line last: tools wait for it, and read the rest before it. */
    if (srv.probe_daemon)
        fprintf(stderr, "chessd: probes (/healthz, /readyz, /metrics) on %s port %u, one thread of their own\n",
                cfg->bind, probe_port);
    fprintf(stderr, "chessd: listening on %s port %u with %u threads (%s)\n", cfg->bind, port, cfg->threads,
            bind_scope(cfg->bind));

    int received = 0;
    while (sigwait(&signals, &received) != 0 || (received != SIGTERM && received != SIGINT))
        ;
    fprintf(stderr, "chessd: signal %d: draining\n", received);
    atomic_store(&srv.draining, true);
    /* No new connection from here: the listening socket closes. The probe
     * port keeps answering (/readyz: 503) until the end. */
    acceptor_stop(srv.acceptor);
    /* Streams get their closing event and end; long polls are answered. */
    if (srv.events)
        events_drain(srv.events);
    /* Phase 1: serve what comes, each answer closing its connection, until
     * no connection is left or none has had a request for a moment (an idle
     * kept-alive connection may never speak again), within half the grace. */
    uint64_t start = now_us(), grace = (uint64_t)cfg->shutdown_grace_seconds * 1000000u, quiet_since = start;
    while (atomic_load(&srv.connections) > 0 && now_us() - start < grace / 2) {
        if (atomic_load(&srv.in_flight) > 0)
            quiet_since = now_us();
        else if (now_us() - quiet_since >= 200000)
            break;
        pause_briefly();
    }
    /* Phase 2: refuse new requests (503, no work done), let started ones finish. */
    atomic_store(&srv.refusing, true);
    while (atomic_load(&srv.in_flight) > 0 && now_us() - start < grace)
        pause_briefly();
    /* Queued pool work runs to its end and resumes its connections, which
     * must all be resumed before the daemon stops. */
    /* Queued pool work runs to its end and resumes its connections, which
     * must all be resumed before the daemon stops; a pool stopped takes no
     * more (a long poll woken late is answered 503 through the queue-full
     * path), and is freed once no server thread can reach it. */
    workpool_stop(srv.pool);
    workpool_stop(srv.store_pool);
    acceptor_stop(srv.probe_acceptor);
    MHD_stop_daemon(daemon);
    if (srv.probe_daemon)
        MHD_stop_daemon(srv.probe_daemon);
    server_free(&srv);
    fprintf(stderr, "chessd: stopped\n");
    return 0;
}
