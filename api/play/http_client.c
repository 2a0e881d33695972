/* The HTTP/1.1 client of `chessd play --server` (see http_client.h). Sockets
 * are non-blocking and every wait is a poll() against the request's deadline
 * (name resolution excepted: getaddrinfo has no timeout); a connection is a
 * socket, or a socket and a TLS session over it. A response is its
 * head (at most HTTP_CLIENT_HEAD_MAX bytes) and a body framed by
 * Content-Length, chunked transfer coding, or the end of the connection. */
#include "http_client.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../store/sock.h"
#include "../version.h"

/* ---- URLs ---- */

bool http_client_parse_url(const char *text, http_client_url_t *url, char *err, size_t err_size)
{
    memset(url, 0, sizeof *url);
    url->https = !strncasecmp(text, "https://", 8);
    if (!url->https && strncasecmp(text, "http://", 7)) {
        snprintf(err, err_size, "the server URL must start with http:// or https://");
        return false;
    }
    const char *host = text + (url->https ? 8 : 7), *rest;
    size_t host_length;
    if (*host == '[') {
        const char *close = strchr(host, ']');
        if (!close) {
            snprintf(err, err_size, "the server URL has an unclosed '[' in its host");
            return false;
        }
        host_length = (size_t)(close - host - 1);
        memcpy(url->host, host + 1, host_length < sizeof url->host ? host_length : 0);
        rest = close + 1;
    } else {
        host_length = strcspn(host, ":/?#");
        if (host_length < sizeof url->host)
            memcpy(url->host, host, host_length);
        rest = host + host_length;
    }
    if (host_length == 0 || host_length >= sizeof url->host || memchr(host, '@', (size_t)(rest - host))) {
        snprintf(err, err_size, "the server URL needs a host (and no user name or password)");
        return false;
    }
    const char *default_port = url->https ? "443" : "80";
    strcpy(url->port, default_port);
    if (*rest == ':') {
        size_t n = strspn(rest + 1, "0123456789");
        long port = n > 0 && n < 6 ? strtol(rest + 1, NULL, 10) : 0;
        if (port < 1 || port > 65535) {
            snprintf(err, err_size, "the server URL's port must be a number from 1 to 65535");
            return false;
        }
        snprintf(url->port, sizeof url->port, "%ld", port);
        rest += 1 + n;
    }
    size_t path_length = strcspn(rest, "?#");
    if ((*rest && *rest != '/') || rest[path_length] || path_length >= sizeof url->base_path) {
        snprintf(err, err_size, "the server URL may hold a host, a port and a path, nothing else");
        return false;
    }
    while (path_length > 0 && rest[path_length - 1] == '/')
        path_length--;
    memcpy(url->base_path, rest, path_length);
    for (const char *p = url->base_path; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            snprintf(err, err_size, "the server URL's path holds a space or a control character");
            return false;
        }
    }
    bool ipv6 = strchr(url->host, ':') != NULL;
    snprintf(url->host_header, sizeof url->host_header, "%s%s%s%s%s", ipv6 ? "[" : "", url->host, ipv6 ? "]" : "",
             strcmp(url->port, default_port) ? ":" : "", strcmp(url->port, default_port) ? url->port : "");
    return true;
}

bool http_client_url_tls(http_client_url_t *url, const char *ca_file, char *err, size_t err_size)
{
    if (!url->https || url->tls)
        return true;
    tls_config_t cfg = { .ca_file = ca_file };
    url->tls = tls_context_new(&cfg, err, err_size);
    return url->tls != NULL;
}

void http_client_url_free(http_client_url_t *url)
{
    if (!url)
        return;
    tls_context_free(url->tls);
    url->tls = NULL;
}

/* ---- sockets (store/sock.h) ---- */

/* A connection: the socket, and the TLS session over it for https. */
typedef struct {
    int fd;
    tls_session_t *tls;
    short want; /* POLLIN or POLLOUT: what the last call that could not go on waits for */
} conn_t;

static void conn_close(conn_t *c)
{
    tls_session_free(c->tls);
    c->tls = NULL;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* > 0 bytes read, SOCK_CLOSED, SOCK_ERROR (errno set), SOCK_WAIT (poll for c->want). */
static ssize_t conn_recv(conn_t *c, void *buf, size_t n)
{
    short wait = 0;
    ssize_t got = sock_read(c->fd, c->tls, buf, n, &wait);
    c->want = wait ? wait : POLLIN;
    return got;
}

/* > 0 bytes sent, SOCK_WAIT (poll for c->want), or SOCK_ERROR (errno set;
 * also for a write that took nothing). */
static ssize_t conn_send(conn_t *c, const void *buf, size_t n)
{
    short wait = 0;
    ssize_t sent = sock_write(c->fd, c->tls, buf, n, &wait);
    c->want = wait ? wait : POLLOUT;
    if (sent == 0)
        errno = EPROTO;
    return sent == 0 ? SOCK_ERROR : sent;
}

/* Connects (and for https shakes hands) within the deadline; false with err set. */
static bool connect_to(const http_client_url_t *url, int64_t deadline, conn_t *c, char *err, size_t err_size)
{
    c->tls = NULL;
    c->want = POLLIN;
    int64_t before = deadline - clock_now_ms();
    char reason[200];
    c->fd = sock_connect(url->host, url->port, before > 0 ? (unsigned)before : 1, reason, sizeof reason);
    if (c->fd < 0) {
        snprintf(err, err_size, "cannot connect to %s port %s: %s", url->host, url->port, reason);
        return false;
    }
    if (!url->https)
        return true;
    if (!url->tls) {
        snprintf(err, err_size, "https needs its CAs loaded first");
        conn_close(c);
        return false;
    }
    int64_t left = deadline - clock_now_ms();
    c->tls = tls_session_new(url->tls, c->fd, url->host, left > 0 ? (unsigned)left : 1, reason, sizeof reason);
    if (!c->tls) {
        snprintf(err, err_size, "TLS with %s port %s failed: %s", url->host, url->port, reason);
        conn_close(c);
        return false;
    }
    return true;
}

static bool send_all(conn_t *c, const char *data, size_t length, int64_t deadline, char *err, size_t err_size)
{
    while (length > 0) {
        ssize_t n = conn_send(c, data, length);
        if (n > 0) {
            data += n;
            length -= (size_t)n;
            continue;
        }
        if (n == SOCK_ERROR) {
            snprintf(err, err_size, "sending the request failed: %s", strerror(errno));
            return false;
        }
        if (!sock_wait(c->fd, c->want, deadline)) {
            snprintf(err, err_size, "the server did not take the request in time");
            return false;
        }
    }
    return true;
}

/* ---- chunked transfer coding ---- */

typedef enum { CHUNK_SIZE, CHUNK_EXTENSION, CHUNK_SIZE_LF, CHUNK_DATA, CHUNK_DATA_CR, CHUNK_DATA_LF, CHUNK_TRAILER,
               CHUNK_TRAILER_LINE, CHUNK_DONE } chunk_state_t;

typedef struct {
    chunk_state_t state;
    uint64_t size;  /* of the chunk being read */
    int digits;
} chunked_t;

/* Feeds n raw bytes, appending the data they carry to out. False on bad framing. */
static bool chunked_feed(chunked_t *c, const char *data, size_t n, buf_t *out)
{
    for (size_t i = 0; i < n && c->state != CHUNK_DONE;) {
        char ch = data[i];
        switch (c->state) {
        case CHUNK_SIZE: {
            int digit = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                      : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
            if (digit >= 0) {
                if (++c->digits > 15)
                    return false;
                c->size = c->size * 16 + (uint64_t)digit;
            } else if (c->digits > 0 && (ch == ';' || ch == ' ' || ch == '\t')) {
                c->state = CHUNK_EXTENSION;
            } else if (c->digits > 0 && ch == '\r') {
                c->state = CHUNK_SIZE_LF;
            } else {
                return false;
            }
            i++;
            break;
        }
        case CHUNK_EXTENSION:
            if (ch == '\r')
                c->state = CHUNK_SIZE_LF;
            i++;
            break;
        case CHUNK_SIZE_LF:
            if (ch != '\n')
                return false;
            c->state = c->size ? CHUNK_DATA : CHUNK_TRAILER;
            i++;
            break;
        case CHUNK_DATA: {
            size_t take = n - i < c->size ? n - i : (size_t)c->size;
            buf_append(out, data + i, take);
            c->size -= take;
            i += take;
            if (c->size == 0)
                c->state = CHUNK_DATA_CR;
            break;
        }
        case CHUNK_DATA_CR:
            if (ch != '\r')
                return false;
            c->state = CHUNK_DATA_LF;
            i++;
            break;
        case CHUNK_DATA_LF:
            if (ch != '\n')
                return false;
            c->state = CHUNK_SIZE;
            c->digits = 0;
            i++;
            break;
        case CHUNK_TRAILER: /* at the start of a trailer line: CR ends the body */
            c->state = ch == '\r' ? CHUNK_DONE : CHUNK_TRAILER_LINE;
            i++;
            break;
        case CHUNK_TRAILER_LINE:
            if (ch == '\n')
                c->state = CHUNK_TRAILER;
            i++;
            break;
        case CHUNK_DONE:
            break;
        }
    }
    return true;
}

/* ---- responses ---- */

typedef enum { BODY_LENGTH, BODY_CHUNKED, BODY_UNTIL_CLOSE, BODY_NONE } body_framing_t;

typedef struct {
    int status;
    char content_type[128];
    body_framing_t framing;
    uint64_t content_length;
} head_t;

/* Parses the head (the bytes before the empty line). */
static bool parse_head(const char *text, size_t length, const char *method, head_t *h, char *err, size_t err_size)
{
    memset(h, 0, sizeof *h);
    h->framing = BODY_UNTIL_CLOSE;
    int major, minor, status;
    if (sscanf(text, "HTTP/%d.%d %3d", &major, &minor, &status) != 3 || status < 100 || status > 599) {
        snprintf(err, err_size, "the server's answer is not HTTP");
        return false;
    }
    h->status = status;
    for (const char *line = memchr(text, '\n', length); line && line < text + length;) {
        line++;
        const char *end = memchr(line, '\n', (size_t)(text + length - line));
        size_t n = end ? (size_t)(end - line) : (size_t)(text + length - line);
        if (n > 0 && line[n - 1] == '\r')
            n--;
        char header[1024];
        snprintf(header, sizeof header, "%.*s", (int)(n < sizeof header ? n : sizeof header - 1), line);
        char *colon = strchr(header, ':');
        if (colon) {
            *colon = '\0';
            const char *value = colon + 1;
            while (*value == ' ' || *value == '\t')
                value++;
            if (!strcasecmp(header, "Content-Length")) {
                char *stop;
                unsigned long long v = strtoull(value, &stop, 10);
                if (stop == value || *stop) {
                    snprintf(err, err_size, "the server's Content-Length is not a number");
                    return false;
                }
                if (h->framing != BODY_CHUNKED) {
                    h->framing = BODY_LENGTH;
                    h->content_length = v;
                }
            } else if (!strcasecmp(header, "Transfer-Encoding")) {
                if (strcasecmp(value, "chunked")) {
                    snprintf(err, err_size, "the server's Transfer-Encoding '%.40s' is not chunked", value);
                    return false;
                }
                h->framing = BODY_CHUNKED;
            } else if (!strcasecmp(header, "Content-Type")) {
                snprintf(h->content_type, sizeof h->content_type, "%s", value);
            }
        }
        line = end;
    }
    if (!strcmp(method, "HEAD") || status == 204 || status == 304 || status < 200)
        h->framing = BODY_NONE;
    return true;
}

/* Reads the head into raw (which then also holds the first body bytes);
 * *head_length is the head's size with its empty line. */
static bool read_head(conn_t *c, buf_t *raw, size_t *head_length, int64_t deadline, char *err, size_t err_size)
{
    for (;;) {
        const char *data = raw->data ? raw->data : "";
        const char *end = strstr(data, "\r\n\r\n");
        if (end) {
            *head_length = (size_t)(end - data) + 4;
            return true;
        }
        if (raw->length > HTTP_CLIENT_HEAD_MAX) {
            snprintf(err, err_size, "the server's answer head is over %d bytes", HTTP_CLIENT_HEAD_MAX);
            return false;
        }
        char chunk[4096];
        ssize_t n = conn_recv(c, chunk, sizeof chunk);
        if (n > 0) {
            if (memchr(chunk, '\0', (size_t)n)) {
                snprintf(err, err_size, "the server's answer head holds a NUL byte");
                return false;
            }
            buf_append(raw, chunk, (size_t)n);
            if (buf_failed(raw)) {
                snprintf(err, err_size, "out of memory");
                return false;
            }
            continue;
        }
        if (n == SOCK_CLOSED) {
            snprintf(err, err_size, "the server closed the connection without an answer");
            return false;
        }
        if (n == SOCK_ERROR) {
            snprintf(err, err_size, "reading the answer failed: %s", strerror(errno));
            return false;
        }
        if (!sock_wait(c->fd, c->want, deadline)) {
            snprintf(err, err_size, "the server did not answer in time");
            return false;
        }
    }
}

/* Appends body bytes (raw, as they came) under the head's framing; *done when the body is complete. */
static bool body_feed(const head_t *h, chunked_t *chunked, const char *data, size_t n, buf_t *body, bool *done)
{
    switch (h->framing) {
    case BODY_NONE:
        *done = true;
        return true;
    case BODY_CHUNKED:
        if (!chunked_feed(chunked, data, n, body))
            return false;
        *done = chunked->state == CHUNK_DONE;
        return true;
    case BODY_LENGTH: {
        uint64_t left = h->content_length - body->length;
        buf_append(body, data, n < left ? n : (size_t)left);
        *done = body->length >= h->content_length;
        return true;
    }
    case BODY_UNTIL_CLOSE:
        buf_append(body, data, n);
        return true;
    }
    return false;
}

void http_client_response_free(http_client_response_t *res)
{
    if (!res)
        return;
    free(res->body);
    res->body = NULL;
    res->body_length = 0;
}

/* Writes the request's head and body. */
static bool send_request(conn_t *c, const http_client_url_t *url, const char *method, const char *path,
                         const char *headers, const char *body, size_t body_length, int64_t deadline, char *err,
                         size_t err_size)
{
    buf_t req;
    buf_init(&req);
    buf_printf(&req, "%s %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: chessd-play/%s\r\nConnection: close\r\n", method,
               url->base_path, path, url->host_header, CHESSD_VERSION);
    if (body)
        buf_printf(&req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_length);
    if (headers)
        buf_puts(&req, headers);
    buf_puts(&req, "\r\n");
    if (body)
        buf_append(&req, body, body_length);
    bool ok = !buf_failed(&req);
    if (!ok)
        snprintf(err, err_size, "out of memory");
    else
        ok = send_all(c, req.data, req.length, deadline, err, err_size);
    buf_free(&req);
    return ok;
}

/* Reads the rest of a body after the head (raw bytes from body_start in raw). */
static bool read_body(conn_t *c, const head_t *h, const buf_t *raw, size_t body_start, int64_t deadline,
                      size_t max_body, buf_t *body, char *err, size_t err_size)
{
    chunked_t chunked = { 0 };
    bool done = h->framing == BODY_NONE || (h->framing == BODY_LENGTH && h->content_length == 0);
    if (h->framing == BODY_LENGTH && h->content_length > max_body) {
        snprintf(err, err_size, "the server's answer is over %zu bytes", max_body);
        return false;
    }
    if (!done && !body_feed(h, &chunked, raw->data + body_start, raw->length - body_start, body, &done)) {
        snprintf(err, err_size, "the server's chunked answer is malformed");
        return false;
    }
    while (!done) {
        if (body->length > max_body) {
            snprintf(err, err_size, "the server's answer is over %zu bytes", max_body);
            return false;
        }
        char chunk[16384];
        ssize_t n = conn_recv(c, chunk, sizeof chunk);
        if (n > 0) {
            if (!body_feed(h, &chunked, chunk, (size_t)n, body, &done)) {
                snprintf(err, err_size, "the server's chunked answer is malformed");
                return false;
            }
        } else if (n == SOCK_CLOSED) {
            if (h->framing != BODY_UNTIL_CLOSE) {
                snprintf(err, err_size, "the server closed the connection in the middle of its answer");
                return false;
            }
            done = true;
        } else if (n == SOCK_ERROR) {
            snprintf(err, err_size, "reading the answer failed: %s", strerror(errno));
            return false;
        } else if (!sock_wait(c->fd, c->want, deadline)) {
            snprintf(err, err_size, "the server's answer did not come in time");
            return false;
        }
    }
    if (body->length > max_body) {
        snprintf(err, err_size, "the server's answer is over %zu bytes", max_body);
        return false;
    }
    if (buf_failed(body)) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    return true;
}

static void response_fill(http_client_response_t *res, const head_t *h, buf_t *body)
{
    res->status = h->status;
    snprintf(res->content_type, sizeof res->content_type, "%s", h->content_type);
    res->body = buf_finish(body, &res->body_length);
    if (!res->body)
        res->body_length = 0;
}

bool http_client_request(const http_client_url_t *url, const char *method, const char *path, const char *headers,
                         const char *body, size_t body_length, int timeout_ms, size_t max_body,
                         http_client_response_t *res, char *err, size_t err_size)
{
    memset(res, 0, sizeof *res);
    int64_t deadline = clock_now_ms() + timeout_ms;
    conn_t c;
    if (!connect_to(url, deadline, &c, err, err_size))
        return false;
    buf_t raw, out;
    buf_init(&raw);
    buf_init(&out);
    size_t head_length = 0;
    head_t h;
    bool ok = send_request(&c, url, method, path, headers, body, body_length, deadline, err, err_size)
           && read_head(&c, &raw, &head_length, deadline, err, err_size)
           && parse_head(raw.data, head_length, method, &h, err, err_size)
           && read_body(&c, &h, &raw, head_length, deadline, max_body, &out, err, err_size);
    conn_close(&c);
    if (ok)
        response_fill(res, &h, &out);
    buf_free(&raw);
    buf_free(&out);
    return ok;
}

/* ---- streams ---- */

struct http_client_stream {
    conn_t conn;
    head_t head;
    chunked_t chunked;
    buf_t pending; /* decoded body bytes that came with the head */
};

http_client_stream_t *http_client_stream_open(const http_client_url_t *url, const char *path, const char *headers,
                                              int timeout_ms, http_client_response_t *res, char *err,
                                              size_t err_size)
{
    memset(res, 0, sizeof *res);
    int64_t deadline = clock_now_ms() + timeout_ms;
    conn_t c;
    if (!connect_to(url, deadline, &c, err, err_size))
        return NULL;
    buf_t raw;
    buf_init(&raw);
    size_t head_length = 0;
    head_t h;
    if (!send_request(&c, url, "GET", path, headers, NULL, 0, deadline, err, err_size)
        || !read_head(&c, &raw, &head_length, deadline, err, err_size)
        || !parse_head(raw.data, head_length, "GET", &h, err, err_size)) {
        conn_close(&c);
        buf_free(&raw);
        return NULL;
    }
    if (h.status != 200) { /* an error answer: read it whole, for its problem detail */
        buf_t body;
        buf_init(&body);
        if (read_body(&c, &h, &raw, head_length, deadline, 65536, &body, err, err_size))
            response_fill(res, &h, &body);
        else
            res->status = h.status;
        snprintf(err, err_size, "the event stream was refused with HTTP status %d", h.status);
        buf_free(&body);
        conn_close(&c);
        buf_free(&raw);
        return NULL;
    }
    http_client_stream_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_size, "out of memory");
        conn_close(&c);
        buf_free(&raw);
        return NULL;
    }
    s->conn = c;
    s->head = h;
    buf_init(&s->pending);
    bool done = false;
    if (!body_feed(&s->head, &s->chunked, raw.data + head_length, raw.length - head_length, &s->pending, &done)) {
        snprintf(err, err_size, "the server's chunked stream is malformed");
        http_client_stream_close(s);
        s = NULL;
    }
    buf_free(&raw);
    return s;
}

int http_client_stream_fd(const http_client_stream_t *s) { return s->conn.fd; }

short http_client_stream_events(const http_client_stream_t *s) { return s->conn.want; }

bool http_client_stream_pending(const http_client_stream_t *s)
{
    return s->pending.length > 0 || (s->conn.tls && tls_pending(s->conn.tls));
}

int http_client_stream_read(http_client_stream_t *s, buf_t *out, char *err, size_t err_size)
{
    if (s->pending.length) {
        buf_append(out, s->pending.data, s->pending.length);
        s->pending.length = 0;
        return 1;
    }
    char chunk[16384];
    ssize_t n = conn_recv(&s->conn, chunk, sizeof chunk);
    if (n == SOCK_CLOSED)
        return 0;
    if (n == SOCK_WAIT)
        return 1;
    if (n < 0) {
        snprintf(err, err_size, "reading the event stream failed: %s", strerror(errno));
        return -1;
    }
    bool done = false;
    if (!body_feed(&s->head, &s->chunked, chunk, (size_t)n, out, &done)) {
        snprintf(err, err_size, "the server's chunked stream is malformed");
        return -1;
    }
    return done ? 0 : 1;
}

void http_client_stream_close(http_client_stream_t *s)
{
    if (!s)
        return;
    conn_close(&s->conn);
    buf_free(&s->pending);
    free(s);
}
