/* See conn.h. Bytes move through io_read/io_write (sock.h), which hide
 * whether the socket carries TLS; everything above them (timeouts, the
 * output queue, the reply reader) is the same for both. */
#include "conn.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../rules/base/decimal.h"
#include "sock.h"

enum { READ_CHUNK = 16384 };

struct conn {
    int fd;
    tls_session_t *tls;
    redisReader *reader;
    char *out; /* queued command bytes: out[out_sent..out_length) still to write */
    size_t out_length, out_sent;
    short wait_events; /* what the last I/O that could not go on waits for (POLLIN/POLLOUT), 0: none */
    unsigned timeout_ms; /* of a conn_command */
    bool last_closed;    /* the last conn_command failed because the peer closed (not a timeout) */
};

/* I/O results, as sock.h's. */
enum { IO_CLOSED = SOCK_CLOSED, IO_ERROR = SOCK_ERROR, IO_WAIT = SOCK_WAIT };

/* sock_read, with a reset taken as the peer closing (a connection that
 * closed, not a timeout: see conn_failure_t). */
static ssize_t io_read(conn_t *c, void *buf, size_t n)
{
    ssize_t r = sock_read(c->fd, c->tls, buf, n, &c->wait_events);
    return r == SOCK_ERROR && errno == ECONNRESET ? IO_CLOSED : r;
}

/* sock_write, with a reset or a broken pipe taken as the peer closing. */
static ssize_t io_write(conn_t *c, const void *buf, size_t n)
{
    ssize_t r = sock_write(c->fd, c->tls, buf, n, &c->wait_events);
    return r == SOCK_ERROR && (errno == ECONNRESET || errno == EPIPE) ? IO_CLOSED : r;
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

int conn_format_command(char **target, int argc, const char **argv, const size_t *lengths)
{
    *target = NULL;
    if (argc < 0)
        return -1;
    /* "*<argc>\r\n" then "$<length>\r\n<bytes>\r\n" per argument. */
    size_t total = 1 + decimal_length((uint64_t)argc) + 2;
    for (int i = 0; i < argc; i++) {
        size_t length = lengths ? lengths[i] : strlen(argv[i]);
        if (length > (size_t)INT32_MAX || total > (size_t)INT32_MAX)
            return -1;
        total += 1 + decimal_length(length) + 2 + length + 2;
    }
    if (total > (size_t)INT32_MAX)
        return -1;
    char *out = malloc(total + 1);
    if (!out)
        return -1;
    size_t at = 0;
    out[at++] = '*';
    at += decimal_write((uint64_t)argc, out + at);
    out[at++] = '\r';
    out[at++] = '\n';
    for (int i = 0; i < argc; i++) {
        size_t length = lengths ? lengths[i] : strlen(argv[i]);
        out[at++] = '$';
        at += decimal_write(length, out + at);
        out[at++] = '\r';
        out[at++] = '\n';
        if (length)
            memcpy(out + at, argv[i], length);
        at += length;
        out[at++] = '\r';
        out[at++] = '\n';
    }
    out[at] = '\0';
    *target = out;
    return (int)at;
}

bool conn_append(conn_t *c, int argc, const char **argv, const size_t *lengths)
{
    char *command = NULL;
    int length = conn_format_command(&command, argc, argv, lengths);
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
        free(command);
        return false;
    }
    memcpy(joined + c->out_length, command, (size_t)length);
    c->out = joined;
    c->out_length += (size_t)length;
    free(command);
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

static redisReply *command_once(conn_t *c, int argc, const char **argv, const size_t *lengths,
                                conn_failure_t *failure);

redisReply *conn_command(conn_t *c, int argc, const char **argv, const size_t *lengths, conn_failure_t *failure)
{
    conn_failure_t ignored;
    if (!failure)
        failure = &ignored;
    failure->sent = failure->closed = false;
    redisReply *reply = command_once(c, argc, argv, lengths, failure);
    c->last_closed = !reply && failure->closed;
    return reply;
}

/* conn_command's work. */
static redisReply *command_once(conn_t *c, int argc, const char **argv, const size_t *lengths,
                                conn_failure_t *failure)
{
    if (!conn_append(c, argc, argv, lengths))
        return NULL;
    int64_t deadline = clock_now_ms() + c->timeout_ms;
    for (;;) {
        int w = write_some(c);
        if (w == 1)
            break;
        if (w < 0 || !sock_wait(c->fd, c->wait_events, deadline)) {
            failure->closed = w == IO_CLOSED;
            return NULL;
        }
    }
    failure->sent = true;
    /* A reply is seldom there the moment the command left: over plain TCP
     * the first read waits for one rather than spend a read on EAGAIN (with
     * TLS a session may hold bytes poll() cannot see, so it reads first). */
    for (bool wait_first = !c->tls;; wait_first = false) {
        void *reply = NULL;
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK)
            return NULL;
        if (reply)
            return reply;
        if (wait_first && !sock_wait(c->fd, POLLIN, deadline))
            return NULL;
        ssize_t n = read_some(c);
        if (n == IO_WAIT) {
            if (!sock_wait(c->fd, c->wait_events, deadline))
                return NULL;
        } else if (n <= 0) {
            failure->closed = n == IO_CLOSED;
            return NULL;
        }
    }
}

void conn_set_timeout(conn_t *c, unsigned timeout_ms) { c->timeout_ms = timeout_ms ? timeout_ms : 1; }

bool conn_closed_while_idle(conn_t *c)
{
    if (c->tls)
        return tls_closed_while_idle(c->tls);
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    return poll(&p, 1, 0) != 0;
}

/* What a new connection's first command that got no answer says: a
 * timeout, or (the peer closed it) most likely a TLS or protocol mismatch. */
static store_fault_t silent_fault(const conn_t *c)
{
    return c->last_closed ? (c->tls ? STORE_FAULT_TLS : STORE_FAULT_PROTOCOL) : STORE_FAULT_TIMEOUT;
}

/* Why a new connection's first command (what) got no answer, into why. */
static void no_answer(const conn_t *c, const char *what, char *why, size_t size)
{
    if (c->last_closed)
        snprintf(why, size, "the connection was closed before %s was answered (a TLS client certificate refused? TLS "
                            "or not as the server expects?)", what);
    else
        snprintf(why, size, "no answer to %s within %u ms", what, c->timeout_ms);
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

conn_t *conn_open(const conn_settings_t *settings, char *err, size_t err_size, store_fault_t *fault)
{
    char why[256] = "";
    store_fault_t kind = STORE_FAULT_PROTOCOL;
    conn_t *c = calloc(1, sizeof *c);
    if (c)
        c->fd = -1;
    if (!c || !(c->reader = redisReaderCreate())) {
        snprintf(why, sizeof why, "out of memory");
        kind = STORE_FAULT_NONE;
        goto fail;
    }
    c->timeout_ms = settings->command_timeout_ms;
    char service[8];
    snprintf(service, sizeof service, "%d", settings->port);
    c->fd = sock_connect(settings->host, service, settings->connect_timeout_ms, why, sizeof why);
    if (c->fd < 0) {
        /* This process out of descriptors or memory says nothing of Redis. */
        kind = strstr(why, "timed out")                   ? STORE_FAULT_TIMEOUT
               : strstr(why, "Too many open files") || strstr(why, "Cannot allocate memory")
                       || strstr(why, "No buffer space") ? STORE_FAULT_NONE
                                                          : STORE_FAULT_UNREACHABLE;
        goto fail;
    }
    if (settings->tls
        && !(c->tls = tls_session_new(settings->tls, c->fd, settings->host, settings->connect_timeout_ms, why,
                                      sizeof why))) {
        kind = strstr(why, "timed out") ? STORE_FAULT_TIMEOUT : STORE_FAULT_TLS;
        goto fail;
    }
    const char *password = settings->password ? settings->password : "";
    const char *user = settings->user ? settings->user : "";
    if (password[0]) {
        const char *auth_user[] = { "AUTH", user, password };
        const char *auth[] = { "AUTH", password };
        redisReply *r = conn_command(c, user[0] ? 3 : 2, user[0] ? auth_user : auth, NULL, NULL);
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (!ok) {
            if (r)
                snprintf(why, sizeof why, "AUTH was refused");
            else
                no_answer(c, "AUTH", why, sizeof why);
            kind = r ? STORE_FAULT_AUTH : silent_fault(c);
        }
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
            kind = STORE_FAULT_DATABASE;
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
        if (!r)
            no_answer(c, "PING", why, sizeof why);
        else if (!pong)
            snprintf(why, sizeof why, "%s",
                     r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6)
                         ? "Redis requires a password (NOAUTH): give it in the URL or apart (a password setting or file)"
                         : "PING was not answered PONG");
        kind = !r ? silent_fault(c)
               : r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6) ? STORE_FAULT_AUTH
                                                                               : STORE_FAULT_PROTOCOL;
        if (r)
            freeReplyObject(r);
        if (!pong)
            goto fail;
    }
    return c;
fail:
    if (fault)
        *fault = kind;
    if (err_size) {
        bool v6 = strchr(settings->host, ':') != NULL;
        snprintf(err, err_size, "%s%s%s:%d: %s", v6 ? "[" : "", settings->host, v6 ? "]" : "", settings->port, why);
    }
    conn_free(c);
    return NULL;
}
