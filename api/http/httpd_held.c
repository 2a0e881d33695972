/* The answers that leave a connection's thread (httpd_private.h): a handler
 * run on one of the application's work pools while the connection is
 * suspended; an event stream, whose content reader takes bytes from the
 * application's stream and suspends the connection while there are none;
 * and a long poll, the connection suspended until the application wakes it,
 * then the handler run again. */
#include "httpd_private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "membudget.h"
#include "sendq.h"
#include "wire.h"

/* Counts one more job of the client's on pool, unless it has
 * per_address_max already (false). A client of unknown address, or one
 * met when every slot is taken, is not bounded here. */
static bool address_take(httpd_t *h, int pool, request_state_t *st)
{
    unsigned max = h->cfg->pools[pool].per_address_max;
    const void *bytes;
    size_t length;
    if (!max || !httpd_client_address(st->connection, &bytes, &length) || length > 16)
        return true;
    pool_addresses_t *a = &h->pool_addresses[pool];
    pthread_mutex_lock(&a->lock);
    pool_address_t *mine = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < POOL_ADDRESSES && !mine; i++) {
        pool_address_t *slot = &a->slots[i];
        if (slot->count && slot->length == length && !memcmp(slot->bytes, bytes, length))
            mine = slot;
        else if (!slot->count && !free_slot)
            free_slot = slot;
    }
    bool taken = true;
    if (mine && mine->count >= max) {
        taken = false;
    } else if (mine || free_slot) {
        if (!mine) {
            mine = free_slot;
            memcpy(mine->bytes, bytes, length);
            mine->length = length;
        }
        mine->count++;
        st->address_counted = true;
    }
    pthread_mutex_unlock(&a->lock);
    return taken;
}

/* The job counted by address_take is over. */
static void address_give(httpd_t *h, request_state_t *st)
{
    const void *bytes;
    size_t length;
    if (!st->address_counted || !httpd_client_address(st->connection, &bytes, &length))
        return;
    st->address_counted = false;
    pool_addresses_t *a = &h->pool_addresses[st->pool];
    pthread_mutex_lock(&a->lock);
    for (unsigned i = 0; i < POOL_ADDRESSES; i++) {
        pool_address_t *slot = &a->slots[i];
        if (slot->count && slot->length == length && !memcmp(slot->bytes, bytes, length)) {
            slot->count--;
            break;
        }
    }
    pthread_mutex_unlock(&a->lock);
}

/* Runs a request on its pool, unless its client has gone while it waited
 * (for a pool with skip_gone: the connection is suspended, so nothing else
 * reads it now), or it waited past the pool's give_up_ms (its client is told
 * at once rather than after a wait it could not have known of). */
static void run_pooled(void *arg)
{
    request_state_t *st = arg;
    httpd_t *h = httpd_the_server;
    const httpd_pool_t *pool = &h->cfg->pools[st->pool];
    httpd_pool_waiting(h, st->pool, -1);
    if (pool->skip_gone && wire_client_gone(httpd_connection_fd(st->connection))) {
        httpd_refusal(h, HTTPD_REFUSE_CLIENT_LEFT, st->pool, "the client left before its turn", &st->res);
    } else if (st->give_up_us && (uint64_t)clock_now_us() > st->give_up_us) {
        httpd_refusal(h, HTTPD_REFUSE_POOL_LATE, st->pool, NULL, &st->res);
    } else if (!st->give_up_us || !h->app->pool_budget) {
        h->app->handle(h->app->ctx, &st->req, &st->res);
    } else {
        /* The handler's budget, counted from the request's arrival: the
         * pool's give_up_ms, and extra_ms more for a second round trip. */
        int64_t left_us = (int64_t)st->give_up_us - (int64_t)clock_now_us() + (int64_t)pool->extra_ms * 1000;
        h->app->pool_budget(h->app->ctx, st->pool, true, left_us);
        h->app->handle(h->app->ctx, &st->req, &st->res);
        h->app->pool_budget(h->app->ctx, st->pool, false, 0);
    }
    address_give(h, st);
    atomic_store(&st->done, true);
    httpd_resume(st->connection);
}

/* Runs the handler on pool `pool`'s thread, the connection suspended
 * meanwhile, so that no server thread waits on long work. A full queue is
 * answered at once (through the same resumption). The answer is finished by
 * finish_answer. */
enum MHD_Result httpd_offload(httpd_t *h, struct MHD_Connection *connection, request_state_t *st, int pool)
{
    const httpd_pool_t *p = &h->cfg->pools[pool];
    st->pool = pool;
    if (!address_take(h, pool, st)) {
        api_response_t refused;
        httpd_refusal(h, HTTPD_REFUSE_POOL_ADDRESS, pool, NULL, &refused);
        if (!refused.retry_after)
            refused.retry_after = 1;
        return httpd_send_response(connection, st, &refused);
    }
    st->queued = true;
    st->give_up_us = p->give_up_ms ? clock_now_us() + (uint64_t)p->give_up_ms * 1000u : 0;
    st->res = (api_response_t){ 0 };
    atomic_store(&st->done, false);
    MHD_suspend_connection(connection);
    httpd_pool_waiting(h, pool, 1); /* before the job can start and take it back */
    if (p->submit ? p->submit(p->runner, run_pooled, st) : workpool_submit(p->pool, run_pooled, st))
        return MHD_YES;
    httpd_pool_waiting(h, pool, -1);
    address_give(h, st);
    httpd_refusal(h, HTTPD_REFUSE_POOL_FULL, pool, NULL, &st->res);
    if (!st->res.retry_after)
        st->res.retry_after = 1;
    atomic_store(&st->done, true);
    httpd_resume(connection);
    return MHD_YES;
}

/* --- event streams and long polls (httpd_live_t) --- */

/* A stream's content reader state. It outlives the request's state: the
 * response is freed after the completion callback. */
typedef struct {
    const httpd_live_t *live;
    void *stream;
    struct MHD_Connection *connection;
    bool reader_ended; /* read_stream saw its end (or its client gone), not the daemon */
} stream_link_t;

/* httpd_conn_t for a stream: the holder's calls on its connection. */
static void suspend_connection(void *connection) { MHD_suspend_connection(connection); }
static void resume_connection(void *connection) { httpd_resume(connection); }

/* The stream's client stopped reading: shut the socket, and libmicrohttpd,
 * whose write fails, closes the connection (and frees the stream). The close
 * resets it, so what the client never took is dropped at once instead of
 * held by the kernel until it gives up on the client. */
static void abort_connection(void *connection)
{
    int fd = httpd_connection_fd(connection);
    if (fd >= 0) {
        sendq_reset_on_close(fd);
        shutdown(fd, SHUT_RDWR);
    }
}

/* httpd_conn_t.gone for a stream: its client has closed or reset the
 * connection (a suspended one is not polled, so the hub looks). */
static bool connection_gone(void *connection)
{
    return wire_client_gone(httpd_connection_fd(connection));
}

/* httpd_conn_t.kernel for a stream: its socket's send queue. */
static bool connection_kernel(void *connection, size_t *unsent, uint64_t *acked)
{
    int fd = httpd_connection_fd(connection);
    return fd >= 0 && sendq_unsent(fd, unsent) && (!acked || sendq_acked(fd, acked));
}

/* libmicrohttpd's content reader: the stream's queued bytes; with none, the
 * connection is suspended (by the stream's read) and 0 returned. */
static ssize_t read_stream(void *cls, uint64_t pos, char *out, size_t max)
{
    stream_link_t *link = cls;
    (void)pos;
    /* A client that left is found here, at the latest by the next
     * heartbeat: its stream ends (quietly, as if complete). */
    if (wire_client_gone(httpd_connection_fd(link->connection))) {
        link->reader_ended = true;
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    ssize_t n = link->live->read(link->stream, out, max);
    if (n >= 0)
        return n;
    link->reader_ended = true;
    return n == -1 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* The response is freed as its connection closes. Closed by the daemon, not
 * by the stream's end, while its client is still connected: the idle
 * timeout (the client took no byte for --timeout). The socket is open yet:
 * the daemon closes it after freeing the response, resetting it (what the
 * client never took is not kept by the kernel, as for a stall). */
static void free_stream(void *cls)
{
    stream_link_t *link = cls;
    int fd = httpd_connection_fd(link->connection);
    if (!link->reader_ended && fd >= 0 && !wire_client_gone(fd)) {
        sendq_reset_on_close(fd);
        if (link->live->idle)
            link->live->idle(link->stream);
    }
    link->live->free(link->stream);
    free(link);
}

/* Queues a stream's response (and drops this reference to it) with its headers. */
static enum MHD_Result queue_stream_head(struct MHD_Connection *connection, request_state_t *st,
                                         const api_response_t *res, struct MHD_Response *response)
{
    httpd_add_headers(response, st, res);
    /* A proxy that buffers answers (nginx) passes a stream's bytes on at once. */
    MHD_add_response_header(response, "X-Accel-Buffering", "no");
    st->status = res->status;
    enum MHD_Result ok = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return ok;
}

/* Answers with res->stream (taken from res): the head, then the stream's
 * bytes as the hub queues them. The stream's admitted place passes to it.
 * HEAD gets GET's head (httpd_head_of_unknown_length) and holds nothing. */
static enum MHD_Result start_stream(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                    api_response_t *res)
{
    const httpd_live_t *live = h->live;
    void *stream = res->stream;
    res->stream = NULL;
    const void *address;
    size_t length;
    httpd_address_of(connection, &address, &length);
    bool head = !strcmp(st->method, "HEAD");
    stream_link_t *link = head ? NULL : malloc(sizeof *link);
    struct MHD_Response *response = NULL;
    if (link) {
        *link = (stream_link_t){ live, stream, connection, false };
        response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_stream, link, free_stream);
    } else if (head) {
        response = httpd_head_of_unknown_length();
    }
    if (head || !response) {
        free(link);
        live->free(stream);
        live->release(h->app->ctx, address, length);
        if (!response)
            return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
        return queue_stream_head(connection, st, res, response);
    }
    httpd_conn_t conn = { suspend_connection, resume_connection, abort_connection, connection, connection_gone,
                          connection_kernel };
    httpd_live_status_t status = live->attach(h->app->ctx, stream, address, length, &conn);
    if (status != HTTPD_LIVE_OK) {
        link->reader_ended = true; /* never served: not an idle close */
        MHD_destroy_response(response); /* frees the link and the stream */
        st->closing = status == HTTPD_LIVE_EDRAINING;
        if (status == HTTPD_LIVE_EBUDGET) {
            api_response_t refused;
            httpd_refusal(h, HTTPD_REFUSE_BUFFERS_FULL, -1, NULL, &refused);
            refused.retry_after = STREAM_RETRY_AFTER;
            return httpd_send_response(connection, st, &refused);
        }
        return status == HTTPD_LIVE_EDRAINING
                   ? httpd_send_refusal(connection, st, HTTPD_REFUSE_DRAINING, "shutting down; retry on another replica")
                   : httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
    }
    int fd = httpd_connection_fd(connection);
    if (fd >= 0)
        sendq_cap(fd, STREAM_SEND_BUFFER); /* best effort: the bounds count the kernel's queue anyway */
    return queue_stream_head(connection, st, res, response);
}

static enum MHD_Result finish_stream_route(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                           api_response_t *res);

/* A ROUTE_STREAM request: a place under the stream bounds first (503
 * too_many_streams over them), then the handler, then the stream. */
enum MHD_Result httpd_run_stream_route(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                        int pool)
{
    const void *address;
    size_t length;
    httpd_address_of(connection, &address, &length);
    api_response_t res;
    switch (h->live->admit(h->app->ctx, address, length)) {
    case HTTPD_LIVE_OK:
        break;
    case HTTPD_LIVE_ETOO_MANY:
        httpd_refusal(h, HTTPD_REFUSE_TOO_MANY_STREAMS, -1, NULL, &res);
        res.retry_after = STREAM_RETRY_AFTER;
        return httpd_send_response(connection, st, &res);
    case HTTPD_LIVE_EBUDGET:
        httpd_refusal(h, HTTPD_REFUSE_BUFFERS_FULL, -1, NULL, &res);
        res.retry_after = STREAM_RETRY_AFTER;
        return httpd_send_response(connection, st, &res);
    case HTTPD_LIVE_EDRAINING:
        st->closing = true;
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_DRAINING, "shutting down; retry on another replica");
    default:
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
    }
    st->stream_admitted = true;
    if (pool >= 0) /* the handler's work leaves the connection's thread */
        return httpd_offload(h, connection, st, pool);
    h->app->handle(h->app->ctx, &st->req, &res);
    return finish_stream_route(h, connection, st, &res);
}

/* A stream route's answer, its handler run: the stream, or (the handler
 * refused) the problem, its place given back. */
static enum MHD_Result finish_stream_route(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                           api_response_t *res)
{
    st->stream_admitted = false;
    if (res->stream) {
        /* The handler never runs again for a stream: what it read goes, so an open stream costs less. */
        free(st->target);
        st->target = NULL;
        st->req.target = NULL;
        st->req.path = NULL;
        return start_stream(h, connection, st, res);
    }
    const void *address;
    size_t length;
    httpd_address_of(connection, &address, &length);
    h->live->release(h->app->ctx, address, length);
    return httpd_send_response(connection, st, res);
}

/* httpd_conn_t.gone for a long poll: its client has closed or reset the
 * connection (it is suspended, so only the hub looks at it now). */
static bool held_client_gone(void *arg)
{
    request_state_t *st = arg;
    return wire_client_gone(httpd_connection_fd(st->connection));
}

/* httpd_conn_t.resume for a long poll: the wait is over. */
static void wake_held(void *arg)
{
    request_state_t *st = arg;
    atomic_store(&st->woken, true);
    httpd_resume(st->connection);
}

/* Holds a long poll that res asks for: a place under the stream bounds, the
 * connection suspended until the hub wakes it, its answer (held meanwhile)
 * charged to the buffer budget. False (nothing held) over the bounds: res
 * is then answered at once, without waiting; with the budget spent, res
 * becomes 503 buffers_full. */
static bool hold(httpd_t *h, struct MHD_Connection *connection, request_state_t *st, api_response_t *res)
{
    const void *address;
    size_t length;
    httpd_address_of(connection, &address, &length);
    httpd_live_status_t admitted = h->live->admit(h->app->ctx, address, length);
    if (admitted == HTTPD_LIVE_EBUDGET) {
        free(res->body);
        *res = (api_response_t){ 0 };
        httpd_refusal(h, HTTPD_REFUSE_BUFFERS_FULL, -1, NULL, res);
        res->retry_after = STREAM_RETRY_AFTER;
    }
    if (admitted != HTTPD_LIVE_OK)
        return false;
    /* What it holds while it waits: its answer, and its parsed target (for the run after). */
    st->held_bytes = res->body_length + (st->target ? sizeof *st->target : 0);
    membudget_add(NULL, (ptrdiff_t)st->held_bytes);
    st->held = true;
    st->hold_refused = false;
    st->held_seconds = res->wait_seconds;
    st->res = *res; /* the answer, should the wait not be registered after all */
    atomic_store(&st->woken, false);
    MHD_suspend_connection(connection);
    httpd_conn_t conn = { NULL, wake_held, NULL, st, held_client_gone, NULL };
    if (h->live->wait(h->app->ctx, st->req.path_param, res->wait_version, res->wait_seconds, address, length, &conn)
        != HTTPD_LIVE_OK) {
        st->hold_refused = true;
        atomic_store(&st->woken, true);
        httpd_resume(connection);
    }
    return true;
}

/* A held long poll, woken: the handler runs again (on its route's pool)
 * knowing it waited (or, when the wait could not be registered, its first
 * answer goes). */
void httpd_held_uncharge(request_state_t *st)
{
    membudget_add(NULL, -(ptrdiff_t)st->held_bytes);
    st->held_bytes = 0;
}

enum MHD_Result httpd_answer_held(httpd_t *h, struct MHD_Connection *connection, request_state_t *st)
{
    st->held = false;
    httpd_held_uncharge(st);
    api_response_t res = st->res;
    st->res = (api_response_t){ 0 };
    if (st->hold_refused)
        return httpd_send_response(connection, st, &res);
    free(res.body);
    st->req.waited_seconds = st->held_seconds;
    st->req.draining = atomic_load(&h->draining);
    st->closing = st->req.draining;
    st->rerun = true;
    if (st->pool >= 0)
        return httpd_offload(h, connection, st, st->pool);
    api_response_t again = { 0 };
    h->app->handle(h->app->ctx, &st->req, &again);
    return httpd_send_response(connection, st, &again);
}

/* The answer of a request whose handler has run (here or on a pool): a
 * stream, a long poll held, or the answer sent. */
enum MHD_Result httpd_finish_answer(httpd_t *h, struct MHD_Connection *connection, request_state_t *st,
                                     api_response_t *res)
{
    if (st->stream_admitted)
        return finish_stream_route(h, connection, st, res);
    if (res->wait_seconds && !st->rerun && h->live && hold(h, connection, st, res))
        return MHD_YES;
    return httpd_send_response(connection, st, res);
}
