/* libmicrohttpd glue (httpd.h): the daemons and each request's life, from
 * its request line to the completion callback. The answers that leave a
 * connection's thread are in httpd_held.c, the answer helpers in
 * httpd_answer.c, the log in access_log.c. The bytes themselves pass
 * wire.c's checks and deadlines before libmicrohttpd parses them. */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access_log.h"
#include "loop.h"
#include "httpd_private.h"
#include "wire.h"

/* Whether connection came in on the probe port (its daemon has no workers). */
static bool on_probe_port(const httpd_t *h, struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    return h->probe_daemon && info && info->daemon == h->probe_daemon;
}

/* api_request_t.header: the request's headers are the connection's. */
static const char *connection_header(const void *connection, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_HEADER_KIND, name);
}

/* api_request_t.client: the connection's peer, read when asked. */
static void connection_client(const void *connection, char *out, size_t size)
{
    httpd_client_text((struct MHD_Connection *)connection, out, size);
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
 * refused, so nothing in front of chessd can read it another way. This is
 * the backstop: wire.c's strict reader refuses every such head before
 * libmicrohttpd parses it, so this fires only when the reader was bypassed
 * (interpose.c says how that could happen); each time is reported to the
 * application (httpd_app_t.framing_backstop), which counts it. */
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

/* Per-address and per-token request budgets (when configured), and the
 * per-address creation budget for ROUTE_CREATES: the one spent, or NULL.
 * The token itself is only hashed into a bucket index, never kept. */
static const httpd_budget_t *spent_budget(httpd_t *h, struct MHD_Connection *connection, const char *auth,
                                          unsigned flags, unsigned *retry_after)
{
    const httpd_config_t *cfg = h->cfg;
    uint64_t now = clock_now_us();
    const void *address;
    size_t address_length;
    bool has_address = httpd_client_address(connection, &address, &address_length);
    if (has_address && !ratelimit_take(cfg->by_address.limiter, address, address_length, now, retry_after))
        return &cfg->by_address;
    if ((flags & ROUTE_CREATES) && has_address
        && !ratelimit_take(cfg->creations.limiter, address, address_length, now, retry_after))
        return &cfg->creations;
    if (auth && !strncasecmp(auth, "Bearer ", 7)
        && !ratelimit_take(cfg->by_token.limiter, auth + 7, strlen(auth + 7), now, retry_after))
        return &cfg->by_token;
    return NULL;
}

/* Whether the request is over a budget, *spent then saying which: its own
 * (the application's quota callback), which replaces the others when it
 * has one, else the per-address and per-token budgets. */
static bool over_budget(httpd_t *h, struct MHD_Connection *connection, unsigned flags, httpd_spent_t *spent)
{
    const char *auth = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization");
    httpd_quota_t own = h->app->quota ? h->app->quota(h->app->ctx, auth, flags & ROUTE_CREATES, spent)
                                      : HTTPD_QUOTA_NONE;
    if (own != HTTPD_QUOTA_NONE)
        return own == HTTPD_QUOTA_SPENT;
    unsigned retry_after = 0;
    const httpd_budget_t *budget = spent_budget(h, connection, auth, flags, &retry_after);
    if (!budget)
        return false;
    snprintf(spent->name, sizeof spent->name, "%s", budget->name);
    spent->max = ratelimit_rate(budget->limiter);
    spent->retry_after = retry_after;
    ratelimit_describe(budget->limiter, budget->what, budget->whose, budget->name, spent->detail,
                       sizeof spent->detail);
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
    st->started_us = clock_now_us();
    st->route = -1;
    st->spool_fd = -1;
    buf_init(&st->body);
    st->connection = connection;
    /* libmicrohttpd's memory limit (16 KiB a connection) bounds its length. */
    st->raw_target = strdup(uri);
    st->raw_target_length = st->raw_target ? strlen(st->raw_target) : 0;
    size_t path_length = strcspn(uri, "?");
    if (path_length > LOG_PATH_MAX)
        path_length = LOG_PATH_MAX;
    memcpy(st->path, uri, path_length);
    st->path[path_length] = '\0';
    return st;
}

/* Writes all of n bytes to fd; false on an error. */
static bool write_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        n -= (size_t)w;
    }
    return true;
}

/* Keeps a piece of the large route's body in its file, made (unnamed, in
 * spool_dir) at the first piece past max_body with what was held before. */
static void spool(httpd_t *h, request_state_t *st, const char *data, size_t n)
{
    uint64_t more = n + (st->spool_fd < 0 ? st->body.length : 0);
    if (atomic_fetch_add(&h->spooled, more) + more > h->cfg->max_spool) {
        atomic_fetch_sub(&h->spooled, more);
        st->spool_full = true;
        return;
    }
    if (st->spool_fd < 0) {
        char path[4096];
        int n_path = snprintf(path, sizeof path, "%s/chessd-body-XXXXXX", h->cfg->spool_dir ? h->cfg->spool_dir : "/tmp");
        st->spool_fd = n_path > 0 && (size_t)n_path < sizeof path ? mkstemp(path) : -1;
        if (st->spool_fd >= 0)
            unlink(path); /* unnamed from now on: it goes when its descriptors close */
        if (st->spool_fd < 0 || !write_all(st->spool_fd, st->body.data ? st->body.data : "", st->body.length)) {
            atomic_fetch_sub(&h->spooled, more);
            st->spool_failed = true;
            return;
        }
        st->spooled = st->body.length;
        buf_free(&st->body);
    }
    if (!write_all(st->spool_fd, data, n)) {
        atomic_fetch_sub(&h->spooled, n);
        st->spool_failed = true;
    } else {
        st->spooled += n;
    }
}

/* The first access callback: headers are in. Answers early (returning the
 * result) only when the request must not be read on; else returns MHD_YES. */
static enum MHD_Result start_request(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                     const char *method)
{
    st->seen = true;
    atomic_fetch_add(&h->in_flight, 1); /* a whole head: the drain waits for it */
    request_id_choose(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Request-Id"), st->request_id);
    /* Known before any answer, so that refusals carry it too. */
    if (h->cfg->cors) {
        st->cors = true;
        st->cors_origin =
            cors_allow_origin(h->cfg->cors, MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Origin"));
    }
    size_t method_length = strnlen(method, sizeof st->method - 1);
    memcpy(st->method, method, method_length);
    st->method[method_length] = '\0';
    const char *framing = framing_problem(connection);
    if (framing) {
        if (h->app->framing_backstop)
            h->app->framing_backstop(h->app->ctx);
        st->too_large = true; /* discard whatever body follows */
        st->closing = true;
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_MALFORMED, framing);
    }
    size_t large_length = h->cfg->large_path ? strlen(h->cfg->large_path) : 0;
    st->large = large_length && !strcmp(st->method, h->cfg->large_method)
                && !strncmp(st->raw_target, h->cfg->large_path, large_length)
                && (st->raw_target[large_length] == '\0' || st->raw_target[large_length] == '?');
    uint64_t max_body = st->large ? h->cfg->max_large_body : h->cfg->max_body;
    const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(length, &end, 10);
        if (errno || *end || n > max_body) {
            /* Answered before the body is sent; the connection then closes,
             * and wire.c reads and drops what the client still sends, so the
             * client reads this answer rather than a reset. */
            st->too_large = true;
            st->closing = true;
            return httpd_send_refusal(connection, st, HTTPD_REFUSE_TOO_LARGE, "the request body is over the limit");
        }
    }
    return MHD_YES;
}

/* The access callback. The first call has the headers (start_request: 413
 * as soon as Content-Length says too much), the next ones collect the body
 * up to the cap, and the final one routes the request and runs its handler:
 * here, or on one of the application's work pools with the connection
 * suspended. Handlers see the request's headers through a callback put in
 * the request, and the drain in req.draining. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    httpd_t *h = cls;
    request_state_t *st = *con_cls;
    (void)version;
    (void)url; /* already decoded by libmicrohttpd: chessd routes on the raw target */
    if (!st || !st->raw_target)
        return MHD_NO; /* out of memory when the request line came */
    if (!st->seen)
        return start_request(h, connection, st, method);
    if (*upload_data_size) {
        /* Past the cap the body is dropped as it comes; out of memory, the
         * buffer's failure sticks and the request gets a 500. The large
         * route's body goes to a file once it passes max_body. */
        uint64_t held = st->body.length + st->spooled;
        uint64_t max_body = st->large ? h->cfg->max_large_body : h->cfg->max_body;
        if (*upload_data_size > max_body - held) {
            st->too_large = true;
            buf_free(&st->body);
        }
        if (!st->too_large && !st->spool_failed && !st->spool_full) {
            if (st->large && (st->spool_fd >= 0 || *upload_data_size > h->cfg->max_body - st->body.length))
                spool(h, st, upload_data, *upload_data_size);
            else
                buf_append(&st->body, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (st->queued) { /* resumed: the pool has answered */
        if (!atomic_load(&st->done))
            return MHD_YES;
        st->queued = false;
        api_response_t res = st->res; /* its body passes to libmicrohttpd (or to the held state) */
        st->res = (api_response_t){ 0 };
        return httpd_finish_answer(h, connection, st, &res);
    }
    if (st->held) /* resumed: the wait is over */
        return atomic_load(&st->woken) ? httpd_answer_held(h, connection, st) : MHD_YES;
    if (st->status)
        return MHD_YES; /* answered on the first callback */
    if (st->too_large)
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_TOO_LARGE, "the request body is over the limit");
    if (buf_failed(&st->body))
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory reading the request body");
    if (st->spool_failed)
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY,
                                  "the request body could not be kept on disk (no room?)");
    if (st->spool_full)
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_SPOOL_FULL,
                                  "the files for large bodies hold --max-spool-bytes: try again later");
    if (!st->target && !(st->target = malloc(sizeof *st->target)))
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
    st->req = (api_request_t){
        .method = method,
        .path = st->target->path,
        .target = st->target,
        .body = st->body.data && st->spool_fd < 0 ? st->body.data : "",
        .body_length = st->spool_fd >= 0 ? (size_t)st->spooled : st->body.length,
        .body_spooled = st->spool_fd >= 0,
        .body_fd = st->spool_fd,
        .request_id = st->request_id,
        .app = h->app->request_app,
        .draining = atomic_load(&h->draining),
        .route_flags = h->cfg->probes_only || on_probe_port(h, connection) ? ROUTE_PROBE : 0, /* elsewhere 404 there */
        .header = connection_header,
        .client = connection_client,
        .header_source = connection,
    };
    api_response_t res = { 0 };
    if (!h->app->route(h->app->ctx, st->raw_target, st->raw_target_length, st->target, &st->req, &res)) {
        st->route = st->req.route;
        /* A preflight at a routed path (its methods in res.allow) is
         * answered here: no budget is spent, no handler runs. */
        if (res.allow && httpd_is_preflight(connection, st)) {
            free(res.body);
            return httpd_send_preflight(connection, st, res.allow);
        }
        return httpd_send_response(connection, st, &res);
    }
    st->route = st->req.route;
    unsigned flags = 0;
    int pool = -1;
    h->app->route_info(h->app->ctx, st->route, &flags, &pool);
    if (pool >= h->cfg->pool_count || (pool >= 0 && !h->cfg->pools[pool].pool && !h->cfg->pools[pool].submit))
        pool = -1; /* a pool not started (no store): the handler answers on this thread */
    st->pool = pool;
    /* Probes and scrapes are never limited: a 429 there would take the pod out of service. */
    bool probe = flags & ROUTE_PROBE;
    /* In the last phase of a drain a request that arrives now (on a
     * kept-alive connection) is refused before any work, so that closing the
     * connection cannot lose the answer to a change that was made. */
    if (atomic_load(&h->refusing) && !probe) {
        st->closing = true;
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_DRAINING, "shutting down; retry on another replica");
    }
    httpd_spent_t spent;
    if (!probe && over_budget(h, connection, flags, &spent)) {
        httpd_limit_t limit = { spent.name, spent.max, spent.retry_after };
        res = (api_response_t){ 0 };
        h->app->refuse(h->app->ctx, HTTPD_REFUSE_RATE_LIMITED, -1, spent.detail, &limit, &res);
        return httpd_send_response(connection, st, &res);
    }
    st->closing = st->req.draining; /* while draining answers close their connection */
    /* Without live callbacks there are no streams: the handler answers. */
    if ((flags & ROUTE_STREAM) && h->live)
        return httpd_run_stream_route(h, connection, st, pool);
    /* Long work leaves the connection thread: the connection waits, suspended. */
    if (pool >= 0)
        return httpd_offload(h, connection, st, pool);
    h->app->handle(h->app->ctx, &st->req, &res);
    return httpd_finish_answer(h, connection, st, &res);
}


/* The completion callback, however the request ended: the log line is
 * written and the request's state freed. */
static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    httpd_t *h = cls;
    request_state_t *st = *con_cls;
    (void)toe;
    wire_request_completed(httpd_connection_fd(connection));
    if (!st)
        return;
    uint64_t micros = clock_now_us() - st->started_us;
    access_log_request(st->method[0] ? st->method : "-", st->path, st->status, micros, st->request_id[0] ? st->request_id : "-");
    if (h->app->completed)
        h->app->completed(h->app->ctx, st->route, st->status, micros);
    if (st->seen)
        atomic_fetch_sub(&h->in_flight, 1);
    free(st->raw_target);
    free(st->target);
    buf_free(&st->body);
    if (st->spool_fd >= 0) {
        close(st->spool_fd); /* the answer's stream holds its own descriptor */
        atomic_fetch_sub(&h->spooled, st->spooled);
    }
    /* An answer made but never sent: a long poll or a pool request whose
     * connection closed before the handler ran again after its resumption. */
    httpd_held_uncharge(st);
    free(st->res.body);
    if (st->res.body_stream)
        st->res.body_ops->free(st->res.body_stream);
    /* A stream route that never got to its stream (the daemon stopping):
     * its place under the stream bounds, and the stream made for it. */
    if (st->res.stream)
        h->live->free(st->res.stream);
    if (st->stream_admitted) {
        const void *address;
        size_t length;
        httpd_address_of(connection, &address, &length);
        h->live->release(h->app->ctx, address, length);
    }
    free(st);
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    httpd_t *h = cls;
    (void)socket_context;
    int delta = toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1;
    if (delta > 0)
        wire_connection_opened(httpd_connection_fd(connection));
    else
        wire_connection_closed(httpd_connection_fd(connection));
    atomic_fetch_add(&h->connections, delta);
    if (h->app->connection)
        h->app->connection(h->app->ctx, delta);
}

/* The answer wire.c sends on a connection it refuses (400 or 413), logged
 * and counted like any other. */
static size_t wire_answer(wire_refusal_t why, const char *detail, char *out, size_t size)
{
    httpd_t *h = httpd_the_server;
    api_response_t res;
    httpd_refusal(h, why == WIRE_REFUSE_TOO_LARGE ? HTTPD_REFUSE_TOO_LARGE : HTTPD_REFUSE_MALFORMED, -1, detail, &res);
    char request_id[REQUEST_ID_MAX + 1];
    request_id_make(request_id);
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
    access_log_request("-", "-", res.status, 0, request_id);
    if (h->app->completed)
        h->app->completed(h->app->ctx, -1, res.status, 0);
    free(res.body);
    return length;
}

/* libmicrohttpd's own messages (mostly aborted connections) become JSON lines
 * on stderr (log_warning); all are counted. */
static void on_mhd_error(void *cls, const char *format, va_list ap)
{
    httpd_t *h = cls;
    if (h && h->app->library_message)
        h->app->library_message(h->app->ctx);
    access_log_warning("libmicrohttpd", format, ap);
}

/* The accept thread's own messages (acceptor.h: out of descriptors or
 * memory), which are chessd's, not libmicrohttpd's. */
static void on_accept_error(void *cls, const char *format, va_list ap)
{
    (void)cls;
    access_log_warning("accept", format, ap);
}


/* Parses bind (IPv4 or IPv6) with port. */
static bool make_address(const char *bind, unsigned port, struct sockaddr_storage *addr, bool *ipv6)
{
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *ipv6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *ipv6 = true;
        return true;
    }
    return false;
}


/* A daemon for connections an accept thread hands over (acceptor.h): no
 * listening socket, no per-address limit (the accept thread's), on_request
 * on `threads` server threads of its own (1: the daemon's own thread
 * alone), or with threads 0 on no thread of its own: an event loop runs it
 * (loop.h). */
static struct MHD_Daemon *start_daemon(httpd_t *h, unsigned threads, unsigned max_open, unsigned extra_flags)
{
    unsigned flags = (threads ? MHD_USE_INTERNAL_POLLING_THREAD : 0) | MHD_USE_EPOLL | MHD_USE_ITC
                     | MHD_USE_ERROR_LOG | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET | extra_flags;
    threads = threads ? threads : 1;
    /* A pool only when there is more than one thread: libmicrohttpd warns
     * that a size of 1 (or 0) is ignored. */
    struct MHD_OptionItem pool[] = {
        { threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, h,
        MHD_OPTION_ARRAY, pool,
        /* A suspended connection has no idle timeout, so of the held answers
         * only a stream whose client stops reading is timed out. */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)h->cfg->idle_timeout_seconds,
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
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        /* HTTP/1.1 requests without Host are refused (RFC 9112 section 3.2). */
        MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
        MHD_OPTION_END);
}

/* acceptor_hand_fn for the probe port: its daemon's own thread serves it. */
static bool hand_to_daemon(void *cls, int fd, const struct sockaddr *peer, socklen_t peer_len)
{
    (void)MHD_add_connection(cls, fd, peer, peer_len); /* it closes fd when it cannot take it */
    return true;
}

/* acceptor_hand_fn for the main port: each connection to the next loop. */
static bool hand_to_loop(void *cls, int fd, const struct sockaddr *peer, socklen_t peer_len)
{
    httpd_t *h = cls;
    unsigned i = atomic_fetch_add(&h->next_loop, 1) % h->loop_count;
    return loop_add_connection(h->loops[i], fd, peer, peer_len);
}

/* One event loop per server thread, each running a daemon of its own. */
static bool start_loops(httpd_t *h)
{
    unsigned count = h->cfg->threads ? h->cfg->threads : 1;
    h->daemons = calloc(count, sizeof *h->daemons);
    h->loops = calloc(count, sizeof *h->loops);
    if (!h->daemons || !h->loops)
        return false;
    for (unsigned i = 0; i < count; i++) {
        h->daemons[i] = start_daemon(h, 0, h->cfg->max_connections, MHD_ALLOW_SUSPEND_RESUME);
        h->loops[i] = h->daemons[i] ? loop_start(h->daemons[i], i) : NULL;
        if (h->daemons[i])
            h->loop_count = i + 1;
        if (!h->loops[i])
            return false;
    }
    return true;
}

/* Ends the loops (each once its watches are over), then their daemons. */
static void stop_loops(httpd_t *h)
{
    for (unsigned i = 0; i < h->loop_count; i++)
        loop_stop(h->loops[i]);
    for (unsigned i = 0; i < h->loop_count; i++) {
        MHD_stop_daemon(h->daemons[i]);
        loop_free(h->loops[i]);
    }
    h->loop_count = 0;
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


bool httpd_bind_ok(const char *bind)
{
    struct sockaddr_storage addr;
    bool ipv6;
    return make_address(bind, 0, &addr, &ipv6);
}

/* Opens a listening socket on bind and port; -1 (errno set) when it cannot. */
static int listen_on(const char *bind, unsigned port, unsigned *bound)
{
    struct sockaddr_storage addr;
    bool ipv6;
    if (!make_address(bind, port, &addr, &ipv6)) {
        errno = EINVAL;
        return -1;
    }
    return acceptor_listen((struct sockaddr *)&addr, ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                           bound);
}

/* Frees what httpd_start made; the daemons are stopped. */
static void free_server(httpd_t *h)
{
    if (h->wire_started)
        wire_stop(); /* the last lingering descriptors are closed and given back to the counts */
    free(h->daemons);
    free(h->loops);
    acceptor_free(h->acceptor);
    acceptor_free(h->probe_acceptor);
    if (httpd_the_server == h)
        httpd_the_server = NULL;
    for (int i = 0; i < HTTPD_POOLS_MAX; i++)
        pthread_mutex_destroy(&h->pool_addresses[i].lock);
    free(h);
}

int httpd_start(const httpd_config_t *cfg, httpd_t **out)
{
    *out = NULL;
    httpd_t *h = calloc(1, sizeof *h);
    if (!h) {
        fprintf(stderr, "chessd: out of memory at start-up\n");
        return 2;
    }
    h->cfg = cfg;
    h->app = &cfg->app;
    h->live = cfg->app.live;
    for (int i = 0; i < HTTPD_POOLS_MAX; i++)
        pthread_mutex_init(&h->pool_addresses[i].lock, NULL);
    httpd_the_server = h;
    acceptor_config_t accept_cfg = { .max_open = cfg->max_connections, .per_address = cfg->per_address_connections,
                                     .log = on_accept_error };
    acceptor_config_t probe_accept_cfg = { .max_open = PROBE_CONNECTIONS, .log = on_accept_error };
    h->acceptor = acceptor_new(&accept_cfg);
    h->probe_acceptor = cfg->probe_port ? acceptor_new(&probe_accept_cfg) : NULL;
    if (cfg->large_path && cfg->large_method)
        snprintf(h->large_line, sizeof h->large_line, "%s %s", cfg->large_method, cfg->large_path);
    wire_config_t wire_cfg = { .header_timeout_us = cfg->header_timeout_us,
                               .body_timeout_us = cfg->body_timeout_us,
                               .max_body = cfg->max_body,
                               .large_line = h->large_line[0] ? h->large_line : NULL,
                               .max_large_body = cfg->max_large_body,
                               .large_body_timeout_us = cfg->large_body_timeout_us,
                               .answer = wire_answer };
    if (!h->acceptor || (cfg->probe_port && !h->probe_acceptor) || !(h->wire_started = wire_start(&wire_cfg))) {
        fprintf(stderr, "chessd: out of memory or threads at start-up\n");
        free_server(h);
        return 2;
    }
    /* chessd accepts the connections itself (acceptor.h); the daemons have
     * no listening socket of their own. */
    unsigned port = 0, probe_port = 0;
    int listener = listen_on(cfg->bind, cfg->port, &port);
    if (listener < 0) {
        fprintf(stderr, "chessd: cannot listen on %s port %u: %s\n", cfg->bind, cfg->port, strerror(errno));
        free_server(h);
        return 1;
    }
    int probe_listener = -1;
    if (cfg->probe_port) {
        probe_listener = listen_on(cfg->bind, cfg->probe_port, &probe_port);
        if (probe_listener < 0) {
            fprintf(stderr, "chessd: cannot listen on %s port %u (--probe-port): %s\n", cfg->bind, cfg->probe_port,
                    strerror(errno));
            close(listener);
            free_server(h);
            return 1;
        }
    }
    /* With a probe port, a listening socket, accept thread and one-thread
     * daemon of its own serve the ROUTE_PROBE routes alone, so probes never
     * queue behind busy server threads or a full address. */
    bool started = start_loops(h);
    h->probe_daemon = started && probe_listener >= 0 ? start_daemon(h, 1, PROBE_CONNECTIONS, 0) : NULL;
    started = started && (probe_listener < 0 || h->probe_daemon);
    /* acceptor_start owns the socket from here, also when it fails. */
    if (started && probe_listener >= 0) {
        started = acceptor_start(h->probe_acceptor, probe_listener, hand_to_daemon, h->probe_daemon);
        probe_listener = -1;
    }
    if (started) {
        started = acceptor_start(h->acceptor, listener, hand_to_loop, h);
        listener = -1;
    }
    if (!started) {
        acceptor_stop(h->probe_acceptor);
        if (listener >= 0)
            close(listener);
        if (probe_listener >= 0)
            close(probe_listener);
        if (h->probe_daemon)
            MHD_stop_daemon(h->probe_daemon);
        stop_loops(h);
        fprintf(stderr, "chessd: cannot start the HTTP server threads on %s port %u\n", cfg->bind, port);
        free_server(h);
        return 1;
    }
    /* The listening line last: tools wait for it, and read the rest before it. */
    if (h->probe_daemon)
        fprintf(stderr, "chessd: probes (/healthz, /readyz, /metrics) on %s port %u, one thread of their own\n",
                cfg->bind, probe_port);
    fprintf(stderr, "chessd: listening on %s port %u with %u threads (%s)\n", cfg->bind, port, cfg->threads,
            bind_scope(cfg->bind));
    *out = h;
    return 0;
}

void httpd_drain(httpd_t *h)
{
    /* No new connection from here: the listening socket closes first, so
     * that once /readyz says the replica drains, a connection to the main
     * port is refused. The probe port keeps answering until the end. */
    acceptor_stop(h->acceptor);
    atomic_store(&h->draining, true);
}

void httpd_refuse_new(httpd_t *h) { atomic_store(&h->refusing, true); }

int httpd_connections(const httpd_t *h) { return atomic_load(&h->connections); }

int httpd_in_flight(const httpd_t *h) { return atomic_load(&h->in_flight); }

const struct acceptor *httpd_acceptor(const httpd_t *h, bool probe)
{
    return h ? (probe ? h->probe_acceptor : h->acceptor) : NULL;
}

void httpd_stop(httpd_t *h)
{
    if (!h || !h->loop_count)
        return;
    acceptor_stop(h->acceptor);
    acceptor_stop(h->probe_acceptor);
    stop_loops(h);
    if (h->probe_daemon)
        MHD_stop_daemon(h->probe_daemon);
    h->probe_daemon = NULL;
}

void httpd_free(httpd_t *h)
{
    if (h)
        free_server(h);
}
