/* See conn.h. Bytes move through io_read/io_write, which hide whether the
 * socket carries TLS; everything above them (timeouts, the output queue, the
 * reply reader) is the same for both. */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { READ_CHUNK = 16384 };

struct conn {
    int fd;
    tls_session_t *tls;
    redisReader *reader;
    char *out; /* queued command bytes: out[out_sent..out_length) still to write */
    size_t out_length, out_sent;
    short wait_events; /* what the last I/O that could not go on waits for (POLLIN/POLLOUT), 0: none */
    unsigned timeout_ms; /* of a conn_command */
};

/* I/O results, as tls.h's. */
enum { IO_CLOSED = 0, IO_ERROR = -1, IO_WAIT = -2 };

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or the deadline passes; false on a timeout. */
static bool wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = { .fd = fd, .events = events };
        int n = poll(&p, 1, (int)(left > INT32_MAX ? INT32_MAX : left));
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR)
            return true; /* let the I/O call report the error */
    }
}

static ssize_t io_read(conn_t *c, void *buf, size_t n)
{
    c->wait_events = 0;
    if (c->tls) {
        tls_want_t want;
        ssize_t r = tls_read(c->tls, buf, n, &want);
        if (r == TLS_IO_WAIT)
            c->wait_events = want == TLS_WANT_WRITE ? POLLOUT : POLLIN;
        return r;
    }
    for (;;) {
        ssize_t r = read(c->fd, buf, n);
        if (r >= 0)
            return r;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->wait_events = POLLIN;
            return IO_WAIT;
        }
        return errno == ECONNRESET ? IO_CLOSED : IO_ERROR;
    }
}

static ssize_t io_write(conn_t *c, const void *buf, size_t n)
{
    c->wait_events = 0;
    if (c->tls) {
        tls_want_t want;
        ssize_t r = tls_write(c->tls, buf, n, &want);
        if (r == TLS_IO_WAIT)
            c->wait_events = want == TLS_WANT_READ ? POLLIN : POLLOUT;
        return r;
    }
    for (;;) {
        ssize_t r = send(c->fd, buf, n, MSG_NOSIGNAL);
        if (r >= 0)
            return r;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->wait_events = POLLOUT;
            return IO_WAIT;
        }
        return errno == ECONNRESET || errno == EPIPE ? IO_CLOSED : IO_ERROR;
    }
}

/* A connected non-blocking TCP socket to host:port, or -1 with the reason in err. */
static int tcp_connect(const char *host, int port, unsigned timeout_ms, char *err, size_t err_size)
{
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *list = NULL;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc) {
        snprintf(err, err_size, "cannot resolve the host: %s", gai_strerror(rc));
        return -1;
    }
    int64_t deadline = now_ms() + timeout_ms;
    int fd = -1, saved = ECONNREFUSED;
    for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int error = 0;
        if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            error = errno;
            if (error == EINPROGRESS) {
                socklen_t length = sizeof error;
                error = !wait_fd(fd, POLLOUT, deadline) ? ETIMEDOUT
                        : getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0 ? errno
                                                                                     : error;
            }
        }
        if (error) {
            saved = error;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0) {
        snprintf(err, err_size, "%s", saved == ETIMEDOUT ? "connect timed out" : strerror(saved));
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return fd;
}

void conn_free(conn_t *c)
{
    if (!c)
        return;
    tls_session_free(c->tls);
    if (c->fd >= 0)
        close(c->fd);
    if (c->reader)
        redisReaderFree(c->reader);
    free(c->out);
    free(c);
}

int conn_fd(const conn_t *c) { return c->fd; }

bool conn_append(conn_t *c, int argc, const char **argv, const size_t *lengths)
{
    char *command = NULL;
    int length = redisFormatCommandArgv(&command, argc, argv, lengths);
    if (length < 0)
        return false;
    if (c->out_sent == c->out_length) {
        free(c->out);
        c->out = command;
        c->out_length = (size_t)length;
        c->out_sent = 0;
        return true;
    }
    char *joined = realloc(c->out, c->out_length + (size_t)length);
    if (!joined) {
        redisFreeCommand(command);
        return false;
    }
    memcpy(joined + c->out_length, command, (size_t)length);
    c->out = joined;
    c->out_length += (size_t)length;
    redisFreeCommand(command);
    return true;
}

/* Writes queued bytes until all left or the socket is full: 1 all written,
 * 0 more to write (wait_events says for what), IO_CLOSED or IO_ERROR. */
static int write_some(conn_t *c)
{
    while (c->out_sent < c->out_length) {
        ssize_t n = io_write(c, c->out + c->out_sent, c->out_length - c->out_sent);
        if (n == IO_WAIT)
            return 0;
        if (n <= 0)
            return n == 0 ? IO_CLOSED : (int)n;
        c->out_sent += (size_t)n;
    }
    free(c->out);
    c->out = NULL;
    c->out_length = c->out_sent = 0;
    return 1;
}

bool conn_flush(conn_t *c)
{
    /* Nothing queued: a read's wish for a writable socket (rare, TLS) is
     * dropped rather than polled for in a loop; the next read asks again. */
    if (c->out_sent == c->out_length) {
        c->wait_events = 0;
        return true;
    }
    return write_some(c) >= 0;
}

short conn_poll_events(const conn_t *c)
{
    return (short)(POLLIN | (c->out_sent < c->out_length ? POLLOUT : 0) | (c->wait_events & POLLOUT));
}

/* Reads once into the reader: > 0 bytes fed, IO_WAIT, IO_CLOSED or IO_ERROR. */
static ssize_t read_some(conn_t *c)
{
    char buf[READ_CHUNK];
    ssize_t n = io_read(c, buf, sizeof buf);
    if (n > 0 && redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK)
        return IO_ERROR;
    return n;
}

bool conn_read(conn_t *c, void (*fn)(void *ctx, redisReply *reply), void *ctx)
{
    /* Until the socket is drained: TLS may hold decrypted bytes poll() cannot see. */
    for (;;) {
        ssize_t n = read_some(c);
        if (n == IO_WAIT)
            break;
        if (n <= 0)
            return false;
    }
    for (;;) {
        void *reply = NULL;
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
            return false;
        if (!reply)
            return true;
        fn(ctx, reply);
    }
}

redisReply *conn_command(conn_t *c, int argc, const char **argv, const size_t *lengths, conn_failure_t *failure)
{
    conn_failure_t ignored;
    if (!failure)
        failure = &ignored;
    failure->sent = failure->closed = false;
    if (!conn_append(c, argc, argv, lengths))
        return NULL;
    int64_t deadline = now_ms() + c->timeout_ms;
    for (;;) {
        int w = write_some(c);
        if (w == 1)
            break;
        if (w < 0 || !wait_fd(c->fd, c->wait_events, deadline)) {
            failure->closed = w == IO_CLOSED;
            return NULL;
        }
    }
    failure->sent = true;
    for (;;) {
        void *reply = NULL;
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
            return NULL;
        if (reply)
            return reply;
        ssize_t n = read_some(c);
        if (n == IO_WAIT) {
            if (!wait_fd(c->fd, c->wait_events, deadline))
                return NULL;
        } else if (n <= 0) {
            failure->closed = n == IO_CLOSED;
            return NULL;
        }
    }
}

bool conn_closed_while_idle(conn_t *c)
{
    if (c->tls)
        return tls_closed_while_idle(c->tls);
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    return poll(&p, 1, 0) != 0;
}

/* Runs a command that must answer +OK (AUTH, SELECT) on a new connection. */
static bool setup_command(conn_t *c, int argc, const char **argv)
{
    redisReply *r = conn_command(c, argc, argv, NULL, NULL);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

conn_t *conn_open(const conn_settings_t *settings, char *err, size_t err_size)
{
    char why[256] = "";
    conn_t *c = calloc(1, sizeof *c);
    if (c)
        c->fd = -1;
    if (!c || !(c->reader = redisReaderCreate())) {
        snprintf(why, sizeof why, "out of memory");
        goto fail;
    }
    c->timeout_ms = settings->command_timeout_ms;
    c->fd = tcp_connect(settings->host, settings->port, settings->connect_timeout_ms, why, sizeof why);
    if (c->fd < 0)
        goto fail;
    if (settings->tls
        && !(c->tls = tls_session_new(settings->tls, c->fd, settings->host, settings->connect_timeout_ms, why,
                                      sizeof why)))
        goto fail;
    const char *password = settings->password ? settings->password : "";
    const char *user = settings->user ? settings->user : "";
    if (password[0]) {
        const char *auth_user[] = { "AUTH", user, password };
        const char *auth[] = { "AUTH", password };
        redisReply *r = conn_command(c, user[0] ? 3 : 2, user[0] ? auth_user : auth, NULL, NULL);
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (!ok)
            snprintf(why, sizeof why, "%s",
                     r ? "AUTH was refused"
                       : "the connection was closed or went silent before AUTH was answered (a TLS client "
                         "certificate refused? TLS or not as the server expects?)");
        if (r)
            freeReplyObject(r);
        if (!ok)
            goto fail;
    }
    if (settings->db) {
        char db[16];
        snprintf(db, sizeof db, "%d", settings->db);
        const char *select[] = { "SELECT", db };
        if (!setup_command(c, 2, select)) {
            snprintf(why, sizeof why, "SELECT was refused");
            goto fail;
        }
    } else if (!password[0]) {
        /* One round trip before the connection counts as made: a server that
         * refuses it only after the handshake (a TLS client certificate it
         * wants, TLS 1.3 telling only then) or that is no Redis (a TLS port
         * spoken to in plain text) fails here, as a connection that could
         * not be made, never as a command that may have run. */
        const char *ping[] = { "PING" };
        redisReply *r = conn_command(c, 1, ping, NULL, NULL);
        bool pong = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
        if (!pong)
            snprintf(why, sizeof why, "%s",
                     !r ? "the connection was closed or went silent before PING was answered (a TLS client "
                          "certificate refused? TLS or not as the server expects?)"
                     : r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6)
                         ? "Redis requires a password (NOAUTH): put it in the URL"
                         : "PING was not answered PONG");
        if (r)
            freeReplyObject(r);
        if (!pong)
            goto fail;
    }
    return c;
fail:
    if (err_size) {
        bool v6 = strchr(settings->host, ':') != NULL;
        snprintf(err, err_size, "%s%s%s:%d: %s", v6 ? "[" : "", settings->host, v6 ? "]" : "", settings->port, why);
    }
    conn_free(c);
    return NULL;
}
