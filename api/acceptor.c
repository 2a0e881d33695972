/* See acceptor.h. One thread: poll() on the listening socket and on a pipe
 * that says stop; accept4() a burst of connections at a time, each counted
 * as held and handed to libmicrohttpd, which closes it itself when it
 * refuses it (the per-address limit; the count is then given back). */
#define _GNU_SOURCE /* accept4, pipe2 */
#include "acceptor.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    BURST = 64,            /* connections accepted per wake-up before polling again */
    FULL_WAIT_MS = 20,     /* how often a full server looks again whether a slot is free */
    EXHAUSTED_WAIT_MS = 100, /* after EMFILE, ENFILE, ENOBUFS or ENOMEM */
};

struct acceptor {
    int listen_fd;
    int stop[2]; /* a byte on stop[1] ends the thread */
    struct MHD_Daemon *daemon;
    atomic_int *held;
    unsigned max_open;
    acceptor_log_fn log;
    pthread_t thread;
};

static void say(const acceptor_t *a, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    a->log(NULL, format, ap);
    va_end(ap);
}

int acceptor_listen(const struct sockaddr *addr, socklen_t addr_len, unsigned *port)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (addr->sa_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, addr, addr_len) != 0 || listen(fd, SOMAXCONN) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bound_len = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                        : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    return fd;
}

/* Waits up to ms for the stop byte; true when it came. */
static bool stopped_within(const acceptor_t *a, int ms)
{
    struct pollfd p = { .fd = a->stop[0], .events = POLLIN };
    return poll(&p, 1, ms) > 0;
}

/* Accepts what is waiting, up to BURST connections. */
static void accept_burst(acceptor_t *a)
{
    for (int i = 0; i < BURST; i++) {
        if ((unsigned)atomic_load(a->held) >= a->max_open)
            return;
        struct sockaddr_storage peer;
        socklen_t peer_len = sizeof peer;
        int fd = accept4(a->listen_fd, (struct sockaddr *)&peer, &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue; /* that client is gone; others may wait */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                say(a, "accept failed: %s; accepting again in %d ms\n", strerror(errno), EXHAUSTED_WAIT_MS);
                stopped_within(a, EXHAUSTED_WAIT_MS); /* a stop is seen again by the main loop */
            }
            return; /* EAGAIN: nothing more waits */
        }
        /* Counted before libmicrohttpd may serve and close it; on refusal
         * (the per-address limit) libmicrohttpd has closed fd and will never
         * report it closed, so the count is given back here. */
        atomic_fetch_add(a->held, 1);
        if (MHD_add_connection(a->daemon, fd, (struct sockaddr *)&peer, peer_len) != MHD_YES)
            atomic_fetch_sub(a->held, 1);
    }
}

static void *run(void *arg)
{
    acceptor_t *a = arg;
    for (;;) {
        bool full = (unsigned)atomic_load(a->held) >= a->max_open;
        struct pollfd p[2] = { { .fd = a->stop[0], .events = POLLIN }, { .fd = a->listen_fd, .events = POLLIN } };
        int n = poll(p, full ? 1 : 2, full ? FULL_WAIT_MS : -1);
        if (n < 0 && errno != EINTR) { /* not expected; never a busy loop */
            say(a, "poll on the listening socket failed: %s; polling again in %d ms\n", strerror(errno),
                EXHAUSTED_WAIT_MS);
            stopped_within(a, EXHAUSTED_WAIT_MS);
        }
        if (n > 0 && p[0].revents)
            break;
        if (n > 0 && !full && p[1].revents)
            accept_burst(a);
    }
    return NULL;
}

acceptor_t *acceptor_start(int listen_fd, struct MHD_Daemon *daemon, atomic_int *held, unsigned max_open,
                           acceptor_log_fn log)
{
    acceptor_t *a = calloc(1, sizeof *a);
    if (!a || pipe2(a->stop, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(a);
        close(listen_fd);
        return NULL;
    }
    a->listen_fd = listen_fd;
    a->daemon = daemon;
    a->held = held;
    a->max_open = max_open;
    a->log = log;
    if (pthread_create(&a->thread, NULL, run, a) != 0) {
        close(a->stop[0]);
        close(a->stop[1]);
        close(listen_fd);
        free(a);
        return NULL;
    }
    return a;
}

void acceptor_stop(acceptor_t *a)
{
    if (!a)
        return;
    ssize_t written = write(a->stop[1], "s", 1);
    (void)written; /* a full pipe already says stop */
    pthread_join(a->thread, NULL);
    close(a->listen_fd);
    close(a->stop[0]);
    close(a->stop[1]);
    free(a);
}
