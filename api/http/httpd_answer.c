/* Answers and what every part of the server asks of a connection
 * (httpd_private.h): the headers of every answer; queuing an answer, a
 * refusal or a preflight's grant; a body made while it is sent
 * (api_body_ops_t). Also the client's address, the socket, the clock, and a
 * connection's resumption (httpd_resume). */
#include "httpd_private.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "loop.h"
#include "sendq.h"
#include "wire.h"

httpd_t *httpd_the_server;


/* The answer the application writes for a refusal; retry_after kept when it set one. */
void httpd_refusal(const httpd_t *h, httpd_refusal_t why, int pool, const char *detail, api_response_t *res)
{
    *res = (api_response_t){ 0 };
    h->app->refuse(h->app->ctx, why, pool, detail, NULL, res);
}

void httpd_pool_waiting(const httpd_t *h, int pool, int delta)
{
    if (h->app->pool_waiting)
        h->app->pool_waiting(h->app->ctx, pool, delta);
}

/* The answer when even the out-of-memory problem cannot be written. */
static const char out_of_memory_problem[] =
    "{\"type\":\"urn:chessd:problem:internal_error\",\"title\":\"Internal error\",\"status\":500,"
    "\"detail\":\"out of memory\",\"code\":\"internal_error\"}";

/* The headers every answer carries, and those res asks for. */
void httpd_add_headers(struct MHD_Response *response, const request_state_t *st, const api_response_t *res)
{
    if (res->content_type)
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, res->content_type);
    MHD_add_response_header(response, "X-Request-Id", st->request_id);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* A browser takes every answer as its Content-Type says, never as what
     * its bytes look like (a PGN or a problem read as HTML). */
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    if (res->security_policy)
        MHD_add_response_header(response, "Content-Security-Policy", res->security_policy);
    if (res->allow)
        MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, res->allow);
    if (st->closing)
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
    if (res->etag[0])
        MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, res->etag);
    if (res->location[0])
        MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, res->location);
    if (res->authenticate)
        MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, res->authenticate);
    if (res->retry_after) {
        char seconds[16];
        snprintf(seconds, sizeof seconds, "%u", res->retry_after);
        MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
    }
    if (res->preference_applied[0])
        MHD_add_response_header(response, "Preference-Applied", res->preference_applied);
    /* A page of another origin reads the answer only when it names that
     * origin; a cache keeps one answer per Origin. */
    if (st->cors)
        MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Origin");
    if (st->cors_origin) {
        MHD_add_response_header(response, "Access-Control-Allow-Origin", st->cors_origin);
        MHD_add_response_header(response, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    }
}

/* --- bodies made while they are sent (api_body_ops_t) --- */

/* The connection calls a body stream makes (api_body_conn_t). */
static void suspend_body(void *connection) { MHD_suspend_connection(connection); }
static void resume_body(void *connection) { httpd_resume(connection); }

/* The body's maker gave up on its client (the buffer budget): the socket is
 * shut and reset, and libmicrohttpd, whose next write or read fails, closes
 * the connection and frees the body. */
static void abort_body(void *connection)
{
    int fd = httpd_connection_fd(connection);
    if (fd >= 0) {
        sendq_reset_on_close(fd);
        shutdown(fd, SHUT_RDWR);
    }
}

typedef struct {
    const api_body_ops_t *ops;
    void *stream;
    struct MHD_Connection *connection;
    struct MHD_Response *response; /* for the trailers, added before the last chunk */
} body_link_t;

enum { BODY_TRAILERS_MAX = 4 };

static ssize_t read_body(void *cls, uint64_t pos, char *out, size_t max)
{
    body_link_t *link = cls;
    (void)pos;
    if (wire_client_gone(httpd_connection_fd(link->connection)))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    ssize_t n = link->ops->read(link->stream, out, max);
    if (n >= 0)
        return n;
    if (n == -1 && link->ops->trailers) {
        const char *names[BODY_TRAILERS_MAX], *values[BODY_TRAILERS_MAX];
        size_t count = link->ops->trailers(link->stream, names, values, BODY_TRAILERS_MAX);
        for (size_t i = 0; i < count && i < BODY_TRAILERS_MAX; i++)
            MHD_add_response_footer(link->response, names[i], values[i]);
    }
    return n == -1 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void free_body(void *cls)
{
    body_link_t *link = cls;
    link->ops->free(link->stream);
    free(link);
}

enum MHD_Result httpd_send_body_stream(struct MHD_Connection *connection, request_state_t *st, api_response_t *res)
{
    const api_body_ops_t *ops = res->body_ops;
    void *stream = res->body_stream;
    res->body_stream = NULL;
    body_link_t *link = malloc(sizeof *link);
    struct MHD_Response *response =
        link ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_body, link, free_body) : NULL;
    if (!response) {
        free(link);
        ops->free(stream);
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
    }
    *link = (body_link_t){ ops, stream, connection, response };
    api_body_conn_t conn = { suspend_body, resume_body, connection, abort_body };
    /* As a stream's: a client that stops reading pins little of the
     * kernel's memory; what waits for it is the body's, under the budget. */
    int fd = httpd_connection_fd(connection);
    if (fd >= 0)
        sendq_cap(fd, STREAM_SEND_BUFFER);
    ops->attach(stream, &conn);
    httpd_add_headers(response, st, res);
    if (res->trailer)
        MHD_add_response_header(response, "Trailer", res->trailer);
    st->status = res->status;
    enum MHD_Result ok = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return ok;
}

/* The content reader of a HEAD's unknown-length answer: never called
 * (libmicrohttpd sends a HEAD's head alone), and empty if it were. */
static ssize_t read_nothing(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)cls, (void)pos, (void)out, (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/* A HEAD answer whose GET body is not made (a stream's, a search's): GET's
 * head, of unknown length (no Content-Length, which would say 0), but not
 * chunked: libmicrohttpd 0.9.75 writes a chunked answer's last chunk
 * ("0\r\n\r\n") even after a HEAD's head, bytes a client would read as the
 * start of the next answer. Unchunked, the answer's end is the connection's
 * (Connection: close). NULL when out of memory. */
struct MHD_Response *httpd_head_of_unknown_length(void)
{
    struct MHD_Response *response =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_nothing, NULL, NULL);
    if (response && MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(response);
        response = NULL;
    }
    return response;
}

/* Queues res (its body freed by libmicrohttpd). A response without a body is
 * one whose text could not be made (out of memory): a 500 problem goes
 * instead, never a 200 with a part of its text. */
enum MHD_Result httpd_send_response(struct MHD_Connection *connection, request_state_t *st, api_response_t *res)
{
    if (res->body_stream)
        return httpd_send_body_stream(connection, st, res);
    if (res->head_unknown_length && !strcmp(st->method, "HEAD") && res->body) {
        struct MHD_Response *head = httpd_head_of_unknown_length();
        if (!head)
            return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
        free(res->body);
        res->body = NULL;
        httpd_add_headers(head, st, res);
        st->status = res->status;
        enum MHD_Result ok = MHD_queue_response(connection, res->status, head);
        MHD_destroy_response(head);
        return ok;
    }
    if (!res->body) {
        api_response_t fallback;
        httpd_refusal(httpd_the_server, HTTPD_REFUSE_NO_MEMORY, -1, "out of memory", &fallback);
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
    httpd_add_headers(response, st, res);
    st->status = res->status;
    enum MHD_Result ok = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return ok;
}


/* Answers with the application's answer for a refusal. */
enum MHD_Result httpd_send_refusal(struct MHD_Connection *connection, request_state_t *st, httpd_refusal_t why,
                                    const char *detail)
{
    api_response_t res;
    httpd_refusal(httpd_the_server, why, -1, detail, &res);
    return httpd_send_response(connection, st, &res);
}

static const char *request_header(struct MHD_Connection *connection, const char *name)
{
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

bool httpd_is_preflight(struct MHD_Connection *connection, const request_state_t *st)
{
    return st->cors && !strcmp(st->method, "OPTIONS") && request_header(connection, "Origin")
           && request_header(connection, "Access-Control-Request-Method");
}

/* Granted, the grants and Max-Age; refused, the problem goes without any
 * Access-Control-Allow-Origin, so the browser does not send the request. */
enum MHD_Result httpd_send_preflight(struct MHD_Connection *connection, request_state_t *st, const char *allow)
{
    cors_grant_t grant;
    char detail[320];
    cors_status_t status = cors_preflight(httpd_the_server->cfg->cors, request_header(connection, "Origin"),
                                          request_header(connection, "Access-Control-Request-Method"),
                                          request_header(connection, "Access-Control-Request-Headers"), allow,
                                          &grant, detail, sizeof detail);
    if (status != CORS_OK) {
        st->cors_origin = NULL;
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_CORS, detail);
    }
    struct MHD_Response *response = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!response)
        return httpd_send_refusal(connection, st, HTTPD_REFUSE_NO_MEMORY, "out of memory");
    api_response_t res = { .status = MHD_HTTP_NO_CONTENT };
    httpd_add_headers(response, st, &res);
    MHD_add_response_header(response, "Access-Control-Allow-Methods", allow);
    if (grant.allow_headers[0])
        MHD_add_response_header(response, "Access-Control-Allow-Headers", grant.allow_headers);
    char max_age[16];
    snprintf(max_age, sizeof max_age, "%d", CORS_MAX_AGE);
    MHD_add_response_header(response, "Access-Control-Max-Age", max_age);
    st->status = res.status;
    enum MHD_Result ok = MHD_queue_response(connection, res.status, response);
    MHD_destroy_response(response);
    return ok;
}

/* The client's address as bytes, for per-address budgets: an IPv4 address
 * (also one mapped into IPv6), or the /64 prefix of an IPv6 address, since
 * one IPv6 host usually holds a whole /64. */
bool httpd_client_address(struct MHD_Connection *connection, const void **bytes, size_t *length)
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

/* An IPv4 address in dotted decimal, written by hand: inet_ntop prints
 * it with sprintf, and a move's path has no printf. */
static void ipv4_text(const unsigned char *bytes, char out[INET_ADDRSTRLEN])
{
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v = bytes[i];
        if (v >= 100)
            out[n++] = (char)('0' + v / 100);
        if (v >= 10)
            out[n++] = (char)('0' + v / 10 % 10);
        out[n++] = (char)('0' + v % 10);
        out[n++] = i < 3 ? '.' : '\0';
    }
}

void httpd_client_text(struct MHD_Connection *connection, char *out, size_t size)
{
    const void *bytes;
    size_t length;
    char text[INET6_ADDRSTRLEN] = "";
    if (size)
        out[0] = '\0';
    if (!httpd_client_address(connection, &bytes, &length))
        return;
    if (length == 4) {
        ipv4_text(bytes, text);
        if (strlen(text) < size)
            memcpy(out, text, strlen(text) + 1);
        return;
    }
    struct in6_addr prefix = { 0 };
    memcpy(prefix.s6_addr, bytes, length < 16 ? length : 16);
    size_t n = inet_ntop(AF_INET6, &prefix, text, sizeof text) ? strlen(text) : 0;
    if (n && n + sizeof "/64" <= size) {
        memcpy(out, text, n);
        memcpy(out + n, "/64", sizeof "/64");
    }
}

/* The connection's socket, or -1. */
int httpd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

/* The client's address for the per-address stream bound (empty when unknown). */
void httpd_address_of(struct MHD_Connection *connection, const void **bytes, size_t *length)
{
    if (!httpd_client_address(connection, bytes, length)) {
        *bytes = "";
        *length = 0;
    }
}

void httpd_resume(struct MHD_Connection *connection)
{
    /* The daemon is read first: once resumed, the connection is its loop's
     * again, which may close and free it at any moment. */
    httpd_t *h = httpd_the_server;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    struct MHD_Daemon *daemon = info ? info->daemon : NULL;
    MHD_resume_connection(connection);
    for (unsigned i = 0; h && daemon && i < h->loop_count; i++)
        if (h->daemons[i] == daemon)
            loop_wake(h->loops[i]);
}
