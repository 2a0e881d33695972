/* See sock.h. The plain path retries EINTR itself; TLS errors carry no
 * errno of their own, so they are reported as EPROTO. */
#include "sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fiber.h"

enum { SOCK_RESOLVERS_MAX = 16 }; /* names being resolved for fibers at once; more fail at once */

bool sock_wait(int fd, short events, int64_t deadline)
{
    /* On a fiber each wait yields to its event loop; elsewhere it polls. */
    while (clock_now_ms() < deadline)
        if (fiber_wait(fd, events, deadline))
            return true;
    return false;
}

/* A name resolved on a thread of its own for a caller on a fiber (which
 * waits on done_fd, yielding): the last of the two to leave frees it. */
typedef struct {
    pthread_mutex_t lock;
    int references; /* under lock */
    int done_fd;    /* an eventfd, written once the answer is in */
    atomic_bool done; /* rc and list are set */
    int rc;
    struct addrinfo *list;
    char host[256], service[16];
} resolution_t;

static atomic_int resolvers_running;

static void resolution_leave(resolution_t *r)
{
    pthread_mutex_lock(&r->lock);
    bool last = --r->references == 0;
    pthread_mutex_unlock(&r->lock);
    if (!last)
        return;
    if (r->list)
        freeaddrinfo(r->list);
    close(r->done_fd);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static void *resolve_thread(void *arg)
{
    resolution_t *r = arg;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    r->rc = getaddrinfo(r->host, r->service, &hints, &r->list);
    atomic_store(&r->done, true);
    uint64_t one = 1;
    (void)!write(r->done_fd, &one, sizeof one);
    resolution_leave(r);
    atomic_fetch_sub(&resolvers_running, 1);
    return NULL;
}

/* getaddrinfo for a TCP connection to host. On a fiber a name that is no
 * address is resolved on a thread of its own, so a slow DNS server yields
 * the fiber's event loop instead of holding it; EAI_AGAIN past deadline. */
static int resolve(const char *host, const char *service, int64_t deadline, struct addrinfo **list)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    unsigned char address[sizeof(struct in6_addr)];
    bool numeric = inet_pton(AF_INET, host, address) == 1 || inet_pton(AF_INET6, host, address) == 1;
    if (!fiber_self() || numeric)
        return getaddrinfo(host, service, &hints, list);
    if (strlen(host) >= sizeof ((resolution_t *)0)->host || strlen(service) >= sizeof ((resolution_t *)0)->service)
        return EAI_NONAME;
    if (atomic_fetch_add(&resolvers_running, 1) >= SOCK_RESOLVERS_MAX) {
        atomic_fetch_sub(&resolvers_running, 1);
        return EAI_AGAIN;
    }
    resolution_t *r = calloc(1, sizeof *r);
    pthread_attr_t attr;
    pthread_t thread;
    bool started = false;
    if (r && (r->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0 && !pthread_attr_init(&attr)) {
        pthread_mutex_init(&r->lock, NULL);
        r->references = 2;
        snprintf(r->host, sizeof r->host, "%s", host);
        snprintf(r->service, sizeof r->service, "%s", service);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        started = pthread_create(&thread, &attr, resolve_thread, r) == 0;
        pthread_attr_destroy(&attr);
        if (!started)
            pthread_mutex_destroy(&r->lock);
    }
    if (!started) {
        if (r && r->done_fd >= 0)
            close(r->done_fd);
        free(r);
        atomic_fetch_sub(&resolvers_running, 1);
        return EAI_AGAIN;
    }
    while (!atomic_load(&r->done) && clock_now_ms() < deadline)
        (void)fiber_wait(r->done_fd, POLLIN, deadline);
    int rc = EAI_AGAIN;
    if (atomic_load(&r->done)) {
        rc = r->rc;
        *list = r->list;
        r->list = NULL; /* the caller's now: the thread no longer touches it */
    }
    resolution_leave(r);
    return rc;
}

int sock_connect(const char *host, const char *service, unsigned timeout_ms, char *err, size_t err_size)
{
    struct addrinfo *list = NULL;
    int64_t resolved_by = clock_now_ms() + timeout_ms;
    int rc = resolve(host, service, resolved_by, &list);
    if (rc) {
        snprintf(err, err_size, "cannot resolve the host: %s",
                 rc == EAI_AGAIN && clock_now_ms() >= resolved_by ? "timed out" : gai_strerror(rc));
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
