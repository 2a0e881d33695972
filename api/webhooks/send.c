/* One webhook delivery (see send.h), on store/sock.h's non-blocking I/O and
 * store/tls.h's sessions (send(MSG_NOSIGNAL), the host's name checked, SNI).
 * Every wait is a poll against the one deadline. The system-CA context is
 * made once (pthread_once) and kept; a CA file's lives for one delivery.
 * A caller's kept connection is reused only toward an address checked anew. */
#include "send.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "../../rules/base/text.h"
#include "../../store/sock.h"
#include "../../store/tls.h"
#include "sign.h"

/* A request head's room: the target, the host, the id, the signature and
 * the fixed text. A body up to BODY_INLINE_MAX goes out in the head's
 * write: one segment, with no wait for Nagle's algorithm on a kept connection. */
enum {
    HEAD_MAX = WEBHOOK_URL_MAX + WEBHOOK_HOST_MAX + 256 + WEBHOOK_SIGNATURE_SIZE + 512,
    ID_MAX = 256,
    BODY_INLINE_MAX = 16384,
};

static const char *const outcome_codes[WEBHOOK_OUTCOME_COUNT] = {
    [WEBHOOK_DELIVERED] = "delivered",
    [WEBHOOK_HTTP_STATUS] = "http_status",
    [WEBHOOK_REFUSED] = "refused",
    [WEBHOOK_REDIRECT_NOT_FOLLOWED] = "redirect_not_followed",
    [WEBHOOK_TIMEOUT] = "timeout",
    [WEBHOOK_CONNECT_FAILED] = "connect_failed",
    [WEBHOOK_TLS_FAILED] = "tls_failed",
    [WEBHOOK_BAD_RESPONSE] = "bad_response",
    [WEBHOOK_INVALID_REQUEST] = "invalid_request",
};

const char *webhook_outcome_code(webhook_outcome_t outcome)
{
    return (unsigned)outcome < WEBHOOK_OUTCOME_COUNT ? outcome_codes[outcome] : "unknown";
}

/* The system's CAs, loaded on the first https delivery without a CA file. */
static pthread_once_t system_tls_once = PTHREAD_ONCE_INIT;
static tls_context_t *system_tls;
static char system_tls_error[WEBHOOK_DETAIL_MAX];

static void make_system_tls(void)
{
    tls_config_t cfg = { 0 };
    system_tls = tls_context_new(&cfg, system_tls_error, sizeof system_tls_error);
}

/* One delivery's state across its hops. */
typedef struct {
    const webhook_send_request_t *req;
    webhook_send_result_t *result;
    int64_t deadline; /* clock_now_ms() */
    tls_context_t *ca_file_tls; /* req->ca_file's, made on the first https hop; freed at the end */
} delivery_t;

/* Sets the outcome and its sentence; returns the outcome. */
__attribute__((format(printf, 3, 4))) static webhook_outcome_t finish(delivery_t *d, webhook_outcome_t outcome,
                                                                      const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(d->result->detail, sizeof d->result->detail, format, args);
    va_end(args);
    d->result->outcome = outcome;
    return outcome;
}

static bool past_deadline(const delivery_t *d) { return clock_now_ms() >= d->deadline; }

static unsigned left_ms(const delivery_t *d)
{
    int64_t left = d->deadline - clock_now_ms();
    return left <= 0 ? 0 : (unsigned)left;
}

/* Whether text may go into a header's value: printable ASCII, at most max bytes. */
static bool header_value_ok(const char *text, size_t max)
{
    if (!text || !*text)
        return false;
    size_t length = strnlen(text, max + 1);
    for (size_t i = 0; i < length; i++)
        if ((unsigned char)text[i] < ' ' || (unsigned char)text[i] > '~')
            return false;
    return length <= max;
}

/* A non-blocking TCP connection to addr:port, or -1 with errno (ETIMEDOUT
 * when the deadline passed). */
static int connect_addr(const webhook_addr_t *addr, unsigned port, int64_t deadline)
{
    struct sockaddr_storage storage = { 0 };
    socklen_t length;
    if (addr->family == 4) {
        struct sockaddr_in *in = (struct sockaddr_in *)(void *)&storage;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        memcpy(&in->sin_addr, addr->bytes, 4);
        length = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)&storage;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        memcpy(&in6->sin6_addr, addr->bytes, 16);
        length = sizeof *in6;
    }
    int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int on = 1; /* a large body's second write is not held back behind the head's ACK */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    int error = 0;
    if (connect(fd, (struct sockaddr *)&storage, length) < 0) {
        error = errno;
        if (error == EINPROGRESS) {
            socklen_t size = sizeof error;
            error = !sock_wait(fd, POLLOUT, deadline) ? ETIMEDOUT
                    : getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) < 0 ? errno
                                                                               : error;
        }
    }
    if (error) {
        close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

/* The host's checked addresses into addrs (*count); an outcome other than
 * WEBHOOK_DELIVERED when none may be used. */
static webhook_outcome_t checked_addresses(delivery_t *d, const webhook_url_t *url, webhook_addr_t *addrs,
                                           size_t *count)
{
    webhook_resolve_status_t status = webhook_resolve(url->host, left_ms(d), addrs, WEBHOOK_ADDRS_MAX, count);
    if (status == WEBHOOK_RESOLVE_ETIMEOUT)
        return finish(d, WEBHOOK_TIMEOUT, "the destination's host name did not resolve before the deadline");
    if (status == WEBHOOK_RESOLVE_EBUSY)
        return finish(d, WEBHOOK_CONNECT_FAILED, "too many host names are being resolved at once");
    if (status != WEBHOOK_RESOLVE_OK) {
        d->result->refusal = WEBHOOK_REFUSE_UNRESOLVED;
        return finish(d, WEBHOOK_REFUSED, "the destination's host name has no address");
    }
    const char *name = url->host_kind == WEBHOOK_HOST_NAME ? url->host : NULL;
    webhook_refusal_t refusal = webhook_allow_check_addrs(d->req->allow, name, addrs, *count, d->result->detail,
                                                          sizeof d->result->detail);
    if (refusal != WEBHOOK_ALLOWED) {
        d->result->refusal = refusal;
        d->result->outcome = WEBHOOK_REFUSED;
        return WEBHOOK_REFUSED;
    }
    return WEBHOOK_DELIVERED;
}

void webhook_conn_init(webhook_conn_t *conn) { *conn = (webhook_conn_t){ .fd = -1 }; }

void webhook_conn_close(webhook_conn_t *conn)
{
    if (conn && conn->fd >= 0)
        close(conn->fd);
    if (conn)
        webhook_conn_init(conn);
}

void webhook_conn_expire(webhook_conn_t *conn)
{
    if (conn && conn->fd >= 0 && clock_now_ms() - conn->idle_since_ms >= WEBHOOK_CONN_IDLE_MS)
        webhook_conn_close(conn);
}

static bool same_addr(const webhook_addr_t *a, const webhook_addr_t *b)
{
    return a->family == b->family && !memcmp(a->bytes, b->bytes, a->family == 4 ? 4 : 16);
}

/* The caller's kept connection, taken from its slot, when it may carry
 * this hop: plain http, its peer one of addrs (just checked) on url's
 * port, idle briefly and quiet (no end or stray bytes waiting). Else the
 * slot is emptied and -1 returned. */
static int kept_connection(delivery_t *d, const webhook_url_t *url, const webhook_addr_t *addrs, size_t count)
{
    webhook_conn_t *conn = d->req->conn;
    if (!conn || conn->fd < 0)
        return -1;
    bool usable = !url->https && conn->port == url->port
                  && clock_now_ms() - conn->idle_since_ms < WEBHOOK_CONN_IDLE_MS;
    bool checked = false;
    for (size_t i = 0; usable && i < count && !checked; i++)
        checked = same_addr(&addrs[i], &conn->addr);
    struct pollfd quiet = { .fd = conn->fd, .events = POLLIN };
    if (usable && checked && poll(&quiet, 1, 0) == 0) {
        int fd = conn->fd;
        conn->fd = -1;
        return fd;
    }
    webhook_conn_close(conn);
    return -1;
}

/* A connection to a checked address: the caller's kept one when it may
 * serve (*reused; not when fresh is set), else the first checked address
 * that takes one. *fd and *peer set, or an outcome. */
static webhook_outcome_t open_connection(delivery_t *d, const webhook_url_t *url, bool fresh, int *fd,
                                         webhook_addr_t *peer, bool *reused)
{
    webhook_addr_t addrs[WEBHOOK_ADDRS_MAX];
    size_t count = 0;
    *reused = false;
    webhook_outcome_t outcome = checked_addresses(d, url, addrs, &count);
    if (outcome != WEBHOOK_DELIVERED)
        return outcome;
    if (!fresh && (*fd = kept_connection(d, url, addrs, count)) >= 0) {
        *reused = true;
        for (size_t i = 0; i < count; i++)
            if (same_addr(&addrs[i], &d->req->conn->addr))
                *peer = addrs[i];
        return WEBHOOK_DELIVERED;
    }
    int error = ECONNREFUSED;
    for (size_t i = 0; i < count; i++) {
        *fd = connect_addr(&addrs[i], url->port, d->deadline);
        if (*fd >= 0) {
            *peer = addrs[i];
            return WEBHOOK_DELIVERED;
        }
        error = errno;
        if (past_deadline(d))
            break;
    }
    if (error == ETIMEDOUT || past_deadline(d))
        return finish(d, WEBHOOK_TIMEOUT, "the destination did not take the connection before the deadline");
    return finish(d, WEBHOOK_CONNECT_FAILED, "cannot connect to the destination: %s", strerror(error));
}

/* The TLS context for this delivery's https hops; NULL with the outcome set. */
static tls_context_t *tls_for(delivery_t *d)
{
    const char *ca_file = d->req->ca_file;
    if (!ca_file || !*ca_file) {
        pthread_once(&system_tls_once, make_system_tls);
        if (!system_tls)
            finish(d, WEBHOOK_TLS_FAILED, "%s", system_tls_error);
        return system_tls;
    }
    if (!d->ca_file_tls) {
        char err[WEBHOOK_DETAIL_MAX];
        tls_config_t cfg = { .ca_file = ca_file };
        d->ca_file_tls = tls_context_new(&cfg, err, sizeof err);
        if (!d->ca_file_tls)
            finish(d, WEBHOOK_TLS_FAILED, "%s", err);
    }
    return d->ca_file_tls;
}

/* Writes all of data (n bytes); false on an error or the deadline. */
static bool write_all(delivery_t *d, int fd, tls_session_t *tls, const char *data, size_t n)
{
    while (n > 0) {
        short wait_events = 0;
        ssize_t sent = sock_write(fd, tls, data, n, &wait_events);
        if (sent > 0) {
            data += sent;
            n -= (size_t)sent;
            continue;
        }
        if (sent == SOCK_ERROR || (wait_events && !sock_wait(fd, wait_events, d->deadline)))
            return false;
        if (!wait_events && !sock_wait(fd, POLLOUT, d->deadline))
            return false;
    }
    return true;
}

/* Whether this hop's connection may be kept after its answer. */
static bool may_keep(const delivery_t *d, const webhook_url_t *url) { return d->req->conn && !url->https; }

/* The request's head into out; false when it does not fit. */
static bool format_head(const delivery_t *d, const webhook_url_t *url, char *out, size_t size)
{
    const webhook_send_request_t *req = d->req;
    char host[WEBHOOK_HOST_MAX + 16];
    bool default_port = url->port == (url->https ? 443u : 80u);
    const char *left = url->host_kind == WEBHOOK_HOST_IPV6 ? "[" : "";
    const char *right = url->host_kind == WEBHOOK_HOST_IPV6 ? "]" : "";
    if (default_port)
        snprintf(host, sizeof host, "%s%s%s", left, url->host, right);
    else
        snprintf(host, sizeof host, "%s%s%s:%u", left, url->host, right, url->port);
    int n = snprintf(out, size,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: chessd-webhooks/1\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\nwebhook-id: %s\r\n"
                     "webhook-timestamp: %lld\r\nwebhook-signature: %s\r\n%s\r\n",
                     url->target, host, req->body_length, req->id, (long long)req->timestamp, req->signature,
                     may_keep(d, url) ? "" : "Connection: close\r\n");
    return n > 0 && (size_t)n < size;
}

/* What one answer said. */
typedef struct {
    int status;
    char location[WEBHOOK_URL_MAX + 1]; /* "" : none, or one over the bound */
    bool received; /* some bytes of an answer came */
    bool reusable; /* its connection may carry another request */
} answer_t;

/* Finds header name among the head's lines (after the status line): its
 * value, blanks around it dropped, in *value and *length; false when absent. */
static bool header_find(const char *head, const char *name, const char **value_out, size_t *length_out)
{
    size_t name_length = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line && line[2] != '\r'; line = strstr(line + 2, "\r\n")) {
        const char *start = line + 2;
        if (strncasecmp(start, name, name_length) || start[name_length] != ':')
            continue;
        const char *value = start + name_length + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        const char *end = strstr(value, "\r\n");
        while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        *value_out = value;
        *length_out = (size_t)(end - value);
        return true;
    }
    return false;
}

/* The value of header name into out; false when absent or over size. */
static bool header_value(const char *head, const char *name, char *out, size_t size)
{
    const char *value;
    size_t length;
    if (!header_find(head, name, &value, &length) || length >= size)
        return false;
    memcpy(out, value, length);
    out[length] = '\0';
    return true;
}

/* Whether an answer's connection may carry another request: HTTP/1.1,
 * Connection absent or keep-alive, and its whole body among the bytes that
 * came with the head (body, body_bytes): as many as a Content-Length says,
 * or an empty chunked body. Anything else, the connection is closed. */
static bool answer_reusable(const char *head, const char *body, size_t body_bytes)
{
    static const char empty_chunked[] = "0\r\n\r\n";
    const char *value;
    size_t length;
    char digits[16];
    if (head[7] != '1'
        || (header_find(head, "Connection", &value, &length)
            && (length != 10 || strncasecmp(value, "keep-alive", 10))))
        return false;
    if (header_find(head, "Transfer-Encoding", &value, &length))
        return length == 7 && !strncasecmp(value, "chunked", 7) && !header_find(head, "Content-Length", &value, &length)
               && body_bytes == sizeof empty_chunked - 1 && !memcmp(body, empty_chunked, body_bytes);
    if (!header_value(head, "Content-Length", digits, sizeof digits) || !digits[0] || strlen(digits) > 9
        || strspn(digits, "0123456789") != strlen(digits))
        return false;
    return strtoul(digits, NULL, 10) == body_bytes;
}

/* Reads "HTTP/1.x DDD" at the head's start; -1 when it is not that. */
static int status_of(const char *head)
{
    if (strncmp(head, "HTTP/1.", 7) || (head[7] != '0' && head[7] != '1') || head[8] != ' ')
        return -1;
    const char *code = head + 9;
    for (int i = 0; i < 3; i++)
        if (code[i] < '0' || code[i] > '9')
            return -1;
    if (code[3] != ' ' && code[3] != '\r')
        return -1;
    int status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
    return status >= 100 && status <= 599 ? status : -1;
}

/* Reads the answer's head (skipping 1xx heads) into *answer; an outcome
 * other than WEBHOOK_DELIVERED when there is none in the bounds. */
static webhook_outcome_t read_answer(delivery_t *d, int fd, tls_session_t *tls, answer_t *answer)
{
    char head[WEBHOOK_RESPONSE_HEAD_MAX + 1];
    size_t used = 0;
    for (;;) {
        head[used] = '\0';
        char *end = strstr(head, "\r\n\r\n");
        if (end) {
            int status = status_of(head);
            if (status < 0)
                return finish(d, WEBHOOK_BAD_RESPONSE, "the destination's answer does not start with an HTTP/1.x "
                                                       "status line");
            if (status >= 200) {
                char body[8];
                size_t body_bytes = used - (size_t)(end + 4 - head);
                memcpy(body, end + 4, body_bytes < sizeof body ? body_bytes : sizeof body);
                end[2] = '\0'; /* the last header line keeps its CRLF */
                answer->status = status;
                answer->reusable = answer_reusable(head, body, body_bytes);
                if (!header_value(head, "Location", answer->location, sizeof answer->location))
                    answer->location[0] = '\0';
                return WEBHOOK_DELIVERED;
            }
            size_t consumed = (size_t)(end + 4 - head); /* an interim 1xx answer: the real one follows */
            memmove(head, head + consumed, used - consumed);
            used -= consumed;
            continue;
        }
        if (used == WEBHOOK_RESPONSE_HEAD_MAX)
            return finish(d, WEBHOOK_BAD_RESPONSE, "the destination's answer has over %d bytes of headers",
                          WEBHOOK_RESPONSE_HEAD_MAX);
        short wait_events = 0;
        ssize_t n = sock_read(fd, tls, head + used, WEBHOOK_RESPONSE_HEAD_MAX - used, &wait_events);
        if (n > 0) {
            used += (size_t)n;
            answer->received = true;
            continue;
        }
        if (n == SOCK_WAIT) {
            if (!sock_wait(fd, wait_events ? wait_events : POLLIN, d->deadline))
                return finish(d, WEBHOOK_TIMEOUT, "the destination did not answer before the deadline");
            continue;
        }
        if (past_deadline(d))
            return finish(d, WEBHOOK_TIMEOUT, "the destination did not answer before the deadline");
        return finish(d, WEBHOOK_BAD_RESPONSE, "the destination closed the connection %s",
                      used ? "in the middle of its answer's head" : "without answering");
    }
}

/* One request to url, its answer in *answer; WEBHOOK_DELIVERED when there
 * is one. A kept connection that ends without a byte of answer (its peer
 * closed it while idle) is replaced by a fresh one (fresh), once. */
static webhook_outcome_t one_hop(delivery_t *d, const webhook_url_t *url, answer_t *answer, bool fresh)
{
    int fd = -1;
    bool reused = false;
    webhook_addr_t peer;
    webhook_outcome_t outcome = open_connection(d, url, fresh, &fd, &peer, &reused);
    if (outcome != WEBHOOK_DELIVERED)
        return outcome;
    tls_session_t *tls = NULL;
    if (url->https) {
        tls_context_t *ctx = tls_for(d);
        char err[WEBHOOK_DETAIL_MAX];
        tls = ctx ? tls_session_new(ctx, fd, url->host, left_ms(d), err, sizeof err) : NULL;
        if (!tls) {
            close(fd);
            if (!ctx)
                return d->result->outcome;
            return past_deadline(d) ? finish(d, WEBHOOK_TIMEOUT, "the TLS handshake did not end before the deadline")
                                    : finish(d, WEBHOOK_TLS_FAILED, "%s", err);
        }
    }
    char head[HEAD_MAX + BODY_INLINE_MAX];
    if (!format_head(d, url, head, HEAD_MAX)) {
        outcome = finish(d, WEBHOOK_INVALID_REQUEST, "the request's head is over its bound");
    } else {
        size_t head_length = strlen(head);
        const char *body = d->req->body;
        size_t body_length = d->req->body_length;
        if (body && body_length <= BODY_INLINE_MAX) {
            memcpy(head + head_length, body, body_length);
            head_length += body_length;
            body_length = 0;
        }
        bool sent = write_all(d, fd, tls, head, head_length) && write_all(d, fd, tls, body, body_length);
        /* A destination may answer (a 413) and close before taking the body: its answer is read all the same. */
        outcome = read_answer(d, fd, tls, answer);
        if (outcome == WEBHOOK_BAD_RESPONSE && !sent)
            outcome = finish(d, WEBHOOK_CONNECT_FAILED, "the connection broke while the request was sent");
    }
    tls_session_free(tls);
    if (outcome == WEBHOOK_DELIVERED && answer->reusable && answer->status >= 200 && answer->status <= 299
        && may_keep(d, url)) {
        webhook_conn_close(d->req->conn);
        *d->req->conn = (webhook_conn_t){ .fd = fd, .addr = peer, .port = url->port,
                                          .idle_since_ms = clock_now_ms() };
        return outcome;
    }
    close(fd);
    if (reused && !answer->received && (outcome == WEBHOOK_BAD_RESPONSE || outcome == WEBHOOK_CONNECT_FAILED)
        && !past_deadline(d)) {
        *answer = (answer_t){ 0 };
        return one_hop(d, url, answer, true);
    }
    return outcome;
}

static bool is_redirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* The URL a Location leads to from url: an absolute URL as it is, a
 * scheme-relative or absolute path on url's origin; false for anything else. */
static bool redirect_target(const webhook_url_t *url, const char *location, char *out, size_t size)
{
    const char *scheme = url->https ? "https:" : "http:";
    if (location[0] == '/' && location[1] == '/')
        return (size_t)snprintf(out, size, "%s%s", scheme, location) < size;
    if (location[0] == '/') {
        const char *left = url->host_kind == WEBHOOK_HOST_IPV6 ? "[" : "";
        const char *right = url->host_kind == WEBHOOK_HOST_IPV6 ? "]" : "";
        return (size_t)snprintf(out, size, "%s//%s%s%s:%u%s", scheme, left, url->host, right, url->port, location)
               < size;
    }
    return (size_t)snprintf(out, size, "%s", location) < size;
}

/* Checks the caller's part of req; false with the outcome set. */
static bool request_ok(delivery_t *d)
{
    const webhook_send_request_t *req = d->req;
    if (!req->url || !req->allow || (!req->body && req->body_length)) {
        finish(d, WEBHOOK_INVALID_REQUEST, "the delivery lacks its URL, body or policy");
        return false;
    }
    if (req->body_length > WEBHOOK_BODY_MAX) {
        finish(d, WEBHOOK_INVALID_REQUEST, "the payload is over %d bytes", WEBHOOK_BODY_MAX);
        return false;
    }
    if (!header_value_ok(req->id, ID_MAX) || !header_value_ok(req->signature, WEBHOOK_SIGNATURE_SIZE - 1)) {
        finish(d, WEBHOOK_INVALID_REQUEST, "the webhook-id or webhook-signature is empty, too long or not "
                                           "printable ASCII");
        return false;
    }
    return true;
}

/* The delivery's hops, the outcome in d->result. */
static void deliver(delivery_t *d)
{
    const webhook_send_request_t *req = d->req;
    webhook_send_result_t *result = d->result;
    char url_text[WEBHOOK_URL_MAX + 1];
    text_copy(url_text, sizeof url_text, req->url);
    unsigned budget = req->redirects > WEBHOOK_REDIRECTS_MAX ? WEBHOOK_REDIRECTS_MAX : req->redirects;
    for (;;) {
        webhook_url_t url;
        char why[WEBHOOK_DETAIL_MAX];
        webhook_refusal_t refusal = webhook_allow_check_url(req->allow, url_text, 0, &url, why, sizeof why);
        if (refusal != WEBHOOK_ALLOWED) {
            result->refusal = refusal;
            finish(d, WEBHOOK_REFUSED, "%s%s", result->hops ? "a redirect's target: " : "", why);
            return;
        }
        answer_t answer = { 0 };
        if (one_hop(d, &url, &answer, false) != WEBHOOK_DELIVERED)
            return;
        result->status = answer.status;
        if (answer.status >= 200 && answer.status <= 299) {
            finish(d, WEBHOOK_DELIVERED, "the destination answered %d", answer.status);
            return;
        }
        if (!is_redirect(answer.status) || !answer.location[0]) {
            finish(d, WEBHOOK_HTTP_STATUS, "the destination answered %d", answer.status);
            return;
        }
        if (result->hops == budget) {
            finish(d, WEBHOOK_REDIRECT_NOT_FOLLOWED, "the destination answered %d (a redirect); %s", answer.status,
                   budget ? "no redirect is left to follow" : "redirects are not followed");
            return;
        }
        if (!redirect_target(&url, answer.location, url_text, sizeof url_text)) {
            result->refusal = WEBHOOK_REFUSE_TOO_LONG;
            finish(d, WEBHOOK_REFUSED, "a redirect's target is over %d bytes", WEBHOOK_URL_MAX);
            return;
        }
        result->hops++;
    }
}

void webhook_send(const webhook_send_request_t *req, webhook_send_result_t *result)
{
    int64_t start = clock_now_ms();
    *result = (webhook_send_result_t){ .outcome = WEBHOOK_INVALID_REQUEST };
    delivery_t d = { .req = req, .result = result, .deadline = start + req->deadline_ms };
    if (request_ok(&d))
        deliver(&d);
    tls_context_free(d.ca_file_tls);
    result->elapsed_ms = (unsigned)(clock_now_ms() - start);
}
