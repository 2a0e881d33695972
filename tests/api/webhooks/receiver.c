/* The send tests' receiver (see receiver.h). Connections are served one at a
 * time on the receiver's thread, with blocking I/O under a 5 s socket
 * timeout so a client that leaves never holds it; a stop pipe wakes it. */
#define _GNU_SOURCE /* strcasestr */
#include "receiver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* One accepted connection. */
typedef struct {
    int fd;
    SSL *ssl;
} conn_t;

static ssize_t conn_read(conn_t *c, char *buf, size_t n)
{
    if (c->ssl) {
        int got = SSL_read(c->ssl, buf, (int)n);
        return got > 0 ? got : -1;
    }
    return recv(c->fd, buf, n, 0);
}

static void conn_write(conn_t *c, const char *buf, size_t n)
{
    if (c->ssl)
        (void)SSL_write(c->ssl, buf, (int)n);
    else
        (void)!send(c->fd, buf, n, MSG_NOSIGNAL);
}

/* The reply for the connection just counted. */
static receiver_reply_t current_reply(receiver_t *r)
{
    receiver_reply_t reply = { .status = 200 };
    pthread_mutex_lock(&r->lock);
    if (r->script_count > 0) {
        int i = r->connections - 1 < r->script_count ? r->connections - 1 : r->script_count - 1;
        reply = r->script[i];
    }
    pthread_mutex_unlock(&r->lock);
    return reply;
}

/* Reads a request (head and Content-Length body) and records it; false when
 * the client sent no whole request. */
static bool read_request(receiver_t *r, conn_t *c)
{
    static __thread char buf[RECEIVER_HEAD_MAX + RECEIVER_BODY_MAX + 1];
    size_t used = 0;
    char *end = NULL;
    while (!end) {
        if (used == RECEIVER_HEAD_MAX)
            return false;
        ssize_t n = conn_read(c, buf + used, RECEIVER_HEAD_MAX - used);
        if (n <= 0)
            return false;
        used += (size_t)n;
        buf[used] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t head_length = (size_t)(end + 4 - buf);
    const char *length_header = strcasestr(buf, "\r\nContent-Length:");
    size_t body_length = length_header ? strtoul(length_header + 17, NULL, 10) : 0;
    if (body_length > RECEIVER_BODY_MAX)
        return false;
    while (used < head_length + body_length) {
        ssize_t n = conn_read(c, buf + used, head_length + body_length - used);
        if (n <= 0)
            return false;
        used += (size_t)n;
    }
    pthread_mutex_lock(&r->lock);
    memcpy(r->head, buf, head_length);
    r->head[head_length] = '\0';
    memcpy(r->body, buf + head_length, body_length);
    r->body[body_length] = '\0';
    r->body_length = body_length;
    r->requests++;
    pthread_mutex_unlock(&r->lock);
    return true;
}

/* Waits until the client closes or the receiver stops. */
static void hang(receiver_t *r, conn_t *c)
{
    for (;;) {
        struct pollfd p[2] = { { .fd = c->fd, .events = POLLIN }, { .fd = r->stop_pipe[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            return;
        if (p[1].revents)
            return;
        char byte[256];
        if (p[0].revents && recv(c->fd, byte, sizeof byte, MSG_DONTWAIT) <= 0)
            return;
    }
}

static void serve(receiver_t *r, int fd)
{
    struct timeval timeout = { .tv_sec = 5 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    conn_t c = { .fd = fd };
    pthread_mutex_lock(&r->lock);
    r->connections++;
    pthread_mutex_unlock(&r->lock);
    if (r->tls) {
        c.ssl = SSL_new(r->tls);
        if (!c.ssl || SSL_set_fd(c.ssl, fd) != 1 || SSL_accept(c.ssl) != 1) {
            SSL_free(c.ssl);
            return;
        }
    }
    receiver_reply_t reply = current_reply(r);
    while (read_request(r, &c)) {
        if (reply.hang) {
            hang(r, &c);
            break;
        }
        char answer[512];
        int n = snprintf(answer, sizeof answer, "HTTP/1.1 %d Scripted\r\n%s%s%sContent-Length: 2\r\n%s\r\nok",
                         reply.status, reply.location[0] ? "Location: " : "", reply.location,
                         reply.location[0] ? "\r\n" : "", reply.keep_alive ? "" : "Connection: close\r\n");
        conn_write(&c, answer, (size_t)n);
        if (!reply.keep_alive || !reply.serve_more)
            break;
    }
    if (c.ssl) {
        SSL_shutdown(c.ssl);
        SSL_free(c.ssl);
    }
}

static void *receiver_thread(void *arg)
{
    receiver_t *r = arg;
    for (;;) {
        struct pollfd p[2] = { { .fd = r->listen_fd, .events = POLLIN }, { .fd = r->stop_pipe[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            return NULL;
        if (p[1].revents)
            return NULL;
        if (!p[0].revents)
            continue;
        int fd = accept(r->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        serve(r, fd);
        close(fd);
    }
}

bool receiver_start(receiver_t *r, const char *host, SSL_CTX *tls)
{
    memset(r, 0, sizeof *r);
    snprintf(r->host, sizeof r->host, "%s", host);
    pthread_mutex_init(&r->lock, NULL);
    struct sockaddr_in address = { .sin_family = AF_INET };
    socklen_t length = sizeof address;
    r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->listen_fd < 0 || inet_pton(AF_INET, host, &address.sin_addr) != 1
        || bind(r->listen_fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(r->listen_fd, 16) < 0
        || getsockname(r->listen_fd, (struct sockaddr *)&address, &length) < 0 || pipe(r->stop_pipe) < 0) {
        fprintf(stderr, "\nreceiver on %s: %s\n", host, strerror(errno));
        if (r->listen_fd >= 0)
            close(r->listen_fd);
        return false;
    }
    r->port = ntohs(address.sin_port);
    if (tls) {
        SSL_CTX_up_ref(tls);
        r->tls = tls;
    }
    if (pthread_create(&r->thread, NULL, receiver_thread, r)) {
        fprintf(stderr, "\nreceiver on %s: no thread\n", host);
        return false;
    }
    return true;
}

void receiver_stop(receiver_t *r)
{
    if (r->listen_fd <= 0)
        return;
    (void)!write(r->stop_pipe[1], "x", 1);
    pthread_join(r->thread, NULL);
    close(r->listen_fd);
    close(r->stop_pipe[0]);
    close(r->stop_pipe[1]);
    SSL_CTX_free(r->tls);
    pthread_mutex_destroy(&r->lock);
    r->listen_fd = 0;
}

void receiver_script(receiver_t *r, const receiver_reply_t *replies, int count)
{
    pthread_mutex_lock(&r->lock);
    r->script_count = count < RECEIVER_SCRIPT_MAX ? count : RECEIVER_SCRIPT_MAX;
    memcpy(r->script, replies, (size_t)r->script_count * sizeof replies[0]);
    r->connections = r->requests = 0;
    r->head[0] = r->body[0] = '\0';
    r->body_length = 0;
    pthread_mutex_unlock(&r->lock);
}

int receiver_connections(receiver_t *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->connections;
    pthread_mutex_unlock(&r->lock);
    return n;
}

int receiver_requests(receiver_t *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->requests;
    pthread_mutex_unlock(&r->lock);
    return n;
}

void receiver_header(receiver_t *r, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    pthread_mutex_lock(&r->lock);
    size_t name_length = strlen(name);
    for (const char *line = strstr(r->head, "\r\n"); line && line[2] != '\r'; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, name, name_length) || line[2 + name_length] != ':')
            continue;
        const char *value = line + 3 + name_length;
        while (*value == ' ')
            value++;
        size_t length = strcspn(value, "\r");
        snprintf(out, size, "%.*s", (int)length, value);
        break;
    }
    pthread_mutex_unlock(&r->lock);
}
