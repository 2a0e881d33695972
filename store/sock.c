/* See sock.h. The plain path retries EINTR itself; TLS errors carry no
 * errno of their own, so they are reported as EPROTO. */
#include "sock.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fiber.h"

bool sock_wait(int fd, short events, int64_t deadline)
{
    /* On a fiber each wait yields to its event loop; elsewhere it polls. */
    while (clock_now_ms() < deadline)
        if (fiber_wait(fd, events, deadline))
            return true;
    return false;
}

int sock_connect(const char *host, const char *service, unsigned timeout_ms, char *err, size_t err_size)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *list = NULL;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc) {
        snprintf(err, err_size, "cannot resolve the host: %s", gai_strerror(rc));
        return -1;
    }
    int64_t deadline = clock_now_ms() + timeout_ms;
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
                error = !sock_wait(fd, POLLOUT, deadline) ? ETIMEDOUT
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

/* A TLS result as sock.h's, waiting for what the session asked. */
static ssize_t tls_result(ssize_t r, tls_want_t want, short *wait_events)
{
    if (r == TLS_IO_WAIT)
        *wait_events = want == TLS_WANT_WRITE ? POLLOUT : POLLIN;
    else if (r == TLS_IO_ERROR)
        errno = EPROTO;
    return r;
}

/* A plain socket's read or send result (never EINTR) as sock.h's: a full
 * buffer or an empty one waits for `event`. */
static ssize_t plain_result(ssize_t r, short event, short *wait_events)
{
    if (r >= 0)
        return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *wait_events = event;
        return SOCK_WAIT;
    }
    return SOCK_ERROR;
}

ssize_t sock_read(int fd, tls_session_t *tls, void *buf, size_t n, short *wait_events)
{
    *wait_events = 0;
    if (tls) {
        tls_want_t want = TLS_WANT_READ;
        ssize_t r = tls_read(tls, buf, n, &want);
        return tls_result(r, want, wait_events);
    }
    ssize_t r;
    do
        r = read(fd, buf, n);
    while (r < 0 && errno == EINTR);
    return plain_result(r, POLLIN, wait_events);
}

ssize_t sock_write(int fd, tls_session_t *tls, const void *buf, size_t n, short *wait_events)
{
    *wait_events = 0;
    if (tls) {
        tls_want_t want = TLS_WANT_WRITE;
        ssize_t r = tls_write(tls, buf, n, &want);
        return tls_result(r, want, wait_events);
    }
    ssize_t r;
    do
        r = send(fd, buf, n, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return plain_result(r, POLLOUT, wait_events);
}
