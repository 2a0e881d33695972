/* See acceptor.h. One thread polls the listening socket, a pipe that says
 * stop, and the connections waiting for their address's turn, and accepts a
 * burst of connections at a time. The counts are taken by this thread and
 * given back by whichever thread really closes the descriptor (wire.h's close
 * watch), under one mutex; the waiting list is this thread's alone. */
#define _GNU_SOURCE /* accept4, pipe2, POLLRDHUP */
#include "acceptor.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "wire.h"

enum {
    BURST = 64,              /* connections accepted per wake-up before polling again */
    FULL_WAIT_MS = 20,       /* how often a full server looks again whether a slot is free */
    WAITING_LOOK_MS = 5,     /* how often the waiting connections look again for a place */
    EXHAUSTED_WAIT_MS = 100, /* after EMFILE, ENFILE, ENOBUFS or ENOMEM */
    EXHAUSTED_SAY_MS = 500,  /* and said at most this often, so a long shortage is a few lines a second */
    MIN_SLOTS = 64,
};

/* An address's key: an IPv4 address (also one mapped into IPv6) as
 * 0xffffffff00000000 | address, an IPv6 address as its first 64 bits. The
 * two cannot meet: an IPv6 /64 starting ffff:ffff is multicast, never a
 * peer. NO_ADDRESS (IPv4 255.255.255.255, never a peer either) marks a
 * connection counted in the total only. */
#define NO_ADDRESS UINT64_MAX

typedef struct {
    uint64_t key;
    unsigned count; /* 0: the slot is free */
} address_slot_t;

typedef struct {
    int fd;
    uint64_t key;
    uint64_t deadline_ms;
    struct sockaddr_storage peer;
    socklen_t peer_len;
} waiting_t;

struct acceptor {
    acceptor_config_t cfg;
    int listen_fd;
    int stop[2]; /* a byte on stop[1] ends the thread */
    acceptor_hand_fn hand;
    void *hand_cls;
    pthread_t thread;
    bool started;
    /* the counts */
    pthread_mutex_t lock; /* the slots */
    address_slot_t *slots; /* NULL without a per-address limit */
    size_t mask;
    uint64_t seed;
    uint64_t exhausted_said_ms; /* when the accept thread last said it was out of descriptors */
    atomic_uint open;
    atomic_uint waiting_now;
    atomic_ullong refused;
    /* the accept thread's */
    waiting_t waiting[ACCEPTOR_WAITING_MAX];
    int waiting_count;
};

static void say(const acceptor_t *a, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    a->cfg.log(NULL, format, ap);
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

/* --- the per-address counts (under a->lock) --- */

/* An open-addressing table with linear probing, twice as many slots as
 * connections may be open, so never full. */

static uint64_t address_key(const struct sockaddr_storage *peer)
{
    if (peer->ss_family == AF_INET) {
        uint32_t v4 = ntohl(((const struct sockaddr_in *)peer)->sin_addr.s_addr);
        return 0xffffffff00000000ull | v4;
    }
    if (peer->ss_family == AF_INET6) {
        const struct in6_addr *v6 = &((const struct sockaddr_in6 *)peer)->sin6_addr;
        uint64_t key = 0;
        if (IN6_IS_ADDR_V4MAPPED(v6)) {
            for (int i = 12; i < 16; i++)
                key = key << 8 | v6->s6_addr[i];
            return 0xffffffff00000000ull | key;
        }
        for (int i = 0; i < 8; i++)
            key = key << 8 | v6->s6_addr[i];
        return key;
    }
    return NO_ADDRESS;
}

/* A 64-bit mix (splitmix64's finaliser) of key with the table's random seed,
 * so no client can choose addresses that pile up in one run of slots. */
static size_t home_slot(const acceptor_t *a, uint64_t key)
{
    uint64_t x = key ^ a->seed;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x & a->mask;
}

/* The slot holding key, or the free slot where it would go. */
static size_t find_slot(const acceptor_t *a, uint64_t key)
{
    size_t i = home_slot(a, key);
    while (a->slots[i].count && a->slots[i].key != key)
        i = (i + 1) & a->mask;
    return i;
}

/* Takes a place for key: false when its address holds its share. */
static bool take_place(acceptor_t *a, uint64_t key)
{
    if (!a->slots || key == NO_ADDRESS)
        return true;
    pthread_mutex_lock(&a->lock);
    size_t i = find_slot(a, key);
    bool room = a->slots[i].count < a->cfg.per_address;
    if (room) {
        a->slots[i].key = key;
        a->slots[i].count++;
    }
    pthread_mutex_unlock(&a->lock);
    return room;
}

/* Gives key's place back; a slot left empty is filled again from the run
 * after it (backward-shift deletion), so lookups need no tombstones. */
static void give_place(acceptor_t *a, uint64_t key)
{
    if (!a->slots || key == NO_ADDRESS)
        return;
    pthread_mutex_lock(&a->lock);
    size_t hole = find_slot(a, key);
    if (a->slots[hole].count && --a->slots[hole].count == 0) {
        for (size_t j = (hole + 1) & a->mask; a->slots[j].count; j = (j + 1) & a->mask) {
            size_t home = home_slot(a, a->slots[j].key);
            if (((j - home) & a->mask) >= ((j - hole) & a->mask)) {
                a->slots[hole] = a->slots[j];
                a->slots[j].count = 0;
                hole = j;
            }
        }
    }
    pthread_mutex_unlock(&a->lock);
}

/* wire_closed_fn: a counted descriptor is being closed. */
static void on_closed(void *ctx, uint64_t key)
{
    acceptor_t *a = ctx;
    give_place(a, key);
    atomic_fetch_sub(&a->open, 1);
}

/* --- the accept thread --- */

/* Waits up to ms for the stop byte; true when it came. */
static bool stopped_within(const acceptor_t *a, int ms)
{
    struct pollfd p = { .fd = a->stop[0], .events = POLLIN };
    return poll(&p, 1, ms) > 0;
}

/* Whether the client has closed its side or reset: it asks for nothing more. */
static bool client_left(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLRDHUP };
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Closes a connection that was counted in the total only (never handed over). */
static void drop(acceptor_t *a, int fd, bool refused)
{
    close(fd);
    atomic_fetch_sub(&a->open, 1);
    if (refused)
        atomic_fetch_add(&a->refused, 1);
}

/* Hands over a connection with its address's place taken: from here on it
 * is counted until its descriptor is closed, also when libmicrohttpd refuses
 * it (closing it at once) or closes it unannounced later. */
static void hand_over(acceptor_t *a, int fd, const struct sockaddr_storage *peer, socklen_t peer_len, uint64_t key)
{
    if (!wire_watch_close(fd, on_closed, a, key)) { /* beyond the descriptor table: not served */
        give_place(a, key);
        drop(a, fd, false);
        return;
    }
    if (!a->hand(a->hand_cls, fd, (const struct sockaddr *)peer, peer_len))
        close(fd); /* the close watch gives its place back */
}

/* The waiting connections after a poll (revents[i] for waiting[i]): those
 * whose client left are closed, those whose address has a place now are
 * handed over in the order they came, those out of time are closed unserved. */
static void serve_waiting(acceptor_t *a, const struct pollfd *polled, int polled_count)
{
    uint64_t now = clock_now_ms();
    int kept = 0;
    for (int i = 0; i < a->waiting_count; i++) {
        waiting_t *w = &a->waiting[i];
        if (i < polled_count && (polled[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
            drop(a, w->fd, false);
        else if (take_place(a, w->key))
            hand_over(a, w->fd, &w->peer, w->peer_len, w->key);
        else if (now >= w->deadline_ms)
            drop(a, w->fd, true);
        else
            a->waiting[kept++] = *w;
    }
    a->waiting_count = kept;
    atomic_store(&a->waiting_now, (unsigned)kept);
}

/* A connection whose address holds its share: it waits, unless its client
 * has left already or too many wait. */
static void make_wait(acceptor_t *a, int fd, const struct sockaddr_storage *peer, socklen_t peer_len, uint64_t key)
{
    if (client_left(fd)) {
        drop(a, fd, false);
        return;
    }
    if (a->waiting_count == ACCEPTOR_WAITING_MAX) {
        drop(a, fd, true);
        return;
    }
    a->waiting[a->waiting_count++] = (waiting_t){ .fd = fd, .key = key, .deadline_ms = clock_now_ms() + ACCEPTOR_ADDRESS_WAIT_MS,
                                                  .peer = *peer, .peer_len = peer_len };
    atomic_store(&a->waiting_now, (unsigned)a->waiting_count);
}

/* Accepts what is waiting in the backlog, up to BURST connections. */
static void accept_burst(acceptor_t *a)
{
    for (int i = 0; i < BURST; i++) {
        if (atomic_load(&a->open) >= a->cfg.max_open)
            return;
        struct sockaddr_storage peer;
        socklen_t peer_len = sizeof peer;
        int fd = accept4(a->listen_fd, (struct sockaddr *)&peer, &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue; /* that client is gone; others may wait */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                uint64_t now = (uint64_t)clock_now_ms();
                if (!a->exhausted_said_ms || now - a->exhausted_said_ms >= EXHAUSTED_SAY_MS) {
                    a->exhausted_said_ms = now;
                    say(a, "accept failed: %s; accepting again in %d ms\n", strerror(errno), EXHAUSTED_WAIT_MS);
                }
                stopped_within(a, EXHAUSTED_WAIT_MS); /* a stop is seen again by the main loop */
            }
            return; /* EAGAIN: nothing more waits */
        }
        atomic_fetch_add(&a->open, 1);
        uint64_t key = a->slots ? address_key(&peer) : NO_ADDRESS;
        if (take_place(a, key))
            hand_over(a, fd, &peer, peer_len, key);
        else
            make_wait(a, fd, &peer, peer_len, key);
    }
}

static void *run(void *arg)
{
    acceptor_t *a = arg;
    struct pollfd p[2 + ACCEPTOR_WAITING_MAX];
    for (;;) {
        bool full = atomic_load(&a->open) >= a->cfg.max_open;
        int count = a->waiting_count;
        p[0] = (struct pollfd){ .fd = a->stop[0], .events = POLLIN };
        p[1] = (struct pollfd){ .fd = full ? -1 : a->listen_fd, .events = POLLIN }; /* full: not accepting */
        for (int i = 0; i < count; i++)
            p[2 + i] = (struct pollfd){ .fd = a->waiting[i].fd, .events = POLLRDHUP };
        int n = poll(p, (nfds_t)(2 + count), count ? WAITING_LOOK_MS : full ? FULL_WAIT_MS : -1);
        if (n < 0 && errno != EINTR) { /* not expected; never a busy loop */
            say(a, "poll on the listening socket failed: %s; polling again in %d ms\n", strerror(errno),
                EXHAUSTED_WAIT_MS);
            stopped_within(a, EXHAUSTED_WAIT_MS);
        }
        if (n > 0 && p[0].revents)
            break;
        if (count)
            serve_waiting(a, p + 2, n > 0 ? count : 0);
        if (n > 0 && p[1].revents)
            accept_burst(a);
    }
    for (int i = 0; i < a->waiting_count; i++)
        drop(a, a->waiting[i].fd, false);
    a->waiting_count = 0;
    atomic_store(&a->waiting_now, 0);
    return NULL;
}

acceptor_t *acceptor_new(const acceptor_config_t *cfg)
{
    acceptor_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->cfg = *cfg;
    a->listen_fd = a->stop[0] = a->stop[1] = -1;
    if (cfg->per_address) {
        size_t slots = MIN_SLOTS;
        while (slots < 2 * (size_t)cfg->max_open)
            slots *= 2;
        a->slots = calloc(slots, sizeof *a->slots);
        a->mask = slots - 1;
        if (getrandom(&a->seed, sizeof a->seed, 0) != (ssize_t)sizeof a->seed)
            a->seed = (uint64_t)clock_now_ms() * 0x9e3779b97f4a7c15ull;
    }
    if ((cfg->per_address && !a->slots) || pthread_mutex_init(&a->lock, NULL) != 0) {
        free(a->slots);
        free(a);
        return NULL;
    }
    return a;
}

bool acceptor_start(acceptor_t *a, int listen_fd, acceptor_hand_fn hand, void *cls)
{
    if (pipe2(a->stop, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(listen_fd);
        return false;
    }
    a->listen_fd = listen_fd;
    a->hand = hand;
    a->hand_cls = cls;
    if (pthread_create(&a->thread, NULL, run, a) != 0) {
        close(a->stop[0]);
        close(a->stop[1]);
        close(listen_fd);
        a->listen_fd = a->stop[0] = a->stop[1] = -1;
        return false;
    }
    a->started = true;
    return true;
}

void acceptor_stop(acceptor_t *a)
{
    if (!a || !a->started)
        return;
    ssize_t written = write(a->stop[1], "s", 1);
    (void)written; /* a full pipe already says stop */
    pthread_join(a->thread, NULL);
    a->started = false;
    close(a->listen_fd);
    close(a->stop[0]);
    close(a->stop[1]);
    a->listen_fd = a->stop[0] = a->stop[1] = -1;
}

void acceptor_free(acceptor_t *a)
{
    if (!a)
        return;
    acceptor_stop(a);
    pthread_mutex_destroy(&a->lock);
    free(a->slots);
    free(a);
}

void acceptor_stats(const acceptor_t *a, acceptor_stats_t *out)
{
    out->open = atomic_load(&a->open);
    out->waiting = atomic_load(&a->waiting_now);
    out->refused = atomic_load(&a->refused);
}
