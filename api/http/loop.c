/* See loop.h. A watch is armed with EPOLLONESHOT, so it fires once and is
 * then disarmed in the kernel too; one that ends by its deadline is taken
 * out of the set. Each epoll tag carries the watch's generation, so an
 * event can never reach a later watch that reuses its slot. */
#include "loop.h"

/* THE ASSUMPTIONS about libmicrohttpd 0.9.75 in external-loop mode, each
 * met here and shown by the e2e suites (games, streams, long polls):
 * 1. Without an internal thread it drops MHD_USE_ITC, so a resumption wakes
 *    nothing: httpd_resume calls loop_wake after MHD_resume_connection.
 * 2. MHD_get_timeout does not count a resumption made since the last
 *    MHD_run: loop_wake on the loop's own thread makes the next wait 0.
 * 3. MHD_run resumes the suspended connections first, then reads its epoll
 *    set without waiting: it is called once per turn, after the watches.
 * And one about the code run on a loop: a fiber waits only in fiber_wait.
 * Anything else that blocks (a mutex held across a Redis call, a sleep)
 * holds every connection of the loop; token_secret.c was changed for it. */

#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "access_log.h"

enum {
    TAG_DAEMON = 0, /* the daemon's epoll descriptor */
    TAG_INBOX = 1,  /* the eventfd that says connections are queued, or stop */
    TAG_WATCH = 2,  /* watch i is TAG_WATCH + i, its generation in the high half */
    EVENTS_MAX = 64,
    STOP_POLL_MS = 50, /* how often a stopping loop looks at its watches */
    SKIPS_MAX = 2,     /* turns in a row that run the daemon without epoll_wait */
};

typedef struct {
    int fd;
    int64_t deadline_ms;
    loop_fn fn;
    void *arg;
    uint32_t generation;
    bool active;
} watch_t;

/* A connection to add (fn NULL), or a call to make. */
typedef struct {
    int fd;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    loop_fn fn;
    void *arg;
} queued_t;

struct loop {
    struct MHD_Daemon *daemon;
    unsigned index;
    int epoll_fd, inbox_fd;
    pthread_t thread;
    bool started;
    atomic_bool stopping;
    /* Connections handed over, for the loop's thread to add. */
    pthread_mutex_t lock;
    queued_t *queued;
    unsigned queued_count, queued_capacity;
    /* The loop's thread alone touches these. */
    bool woken; /* loop_wake on the loop's own thread: run the daemon again at once */
    int64_t next_deadline; /* no watch ends before this (INT64_MAX: none) */
    watch_t *watches;
    unsigned watch_capacity, active;
    unsigned *free_slots, free_count;
};

static _Thread_local loop_t *current;

loop_t *loop_current(void) { return current; }
unsigned loop_index(const loop_t *l) { return l->index; }

static uint64_t tag_of(unsigned slot, uint32_t generation) { return (uint64_t)generation << 32 | (TAG_WATCH + slot); }

/* Arms fd for events on the epoll set, once: MOD when it is in the set,
 * else ADD (a descriptor closed since left the set by itself). */
static bool arm(loop_t *l, int fd, short events, uint64_t tag)
{
    struct epoll_event e = { .events = EPOLLONESHOT | (events & POLLIN ? EPOLLIN | EPOLLRDHUP : 0)
                                       | (events & POLLOUT ? EPOLLOUT : 0),
                             .data.u64 = tag };
    if (!epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, fd, &e))
        return true;
    return errno == ENOENT && !epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &e);
}

/* A free watch slot, the table grown when none is left; -1 out of memory. */
static int take_slot(loop_t *l)
{
    if (!l->free_count) {
        unsigned capacity = l->watch_capacity ? 2 * l->watch_capacity : 64;
        watch_t *watches = realloc(l->watches, capacity * sizeof *watches);
        if (!watches)
            return -1;
        l->watches = watches;
        unsigned *free_slots = realloc(l->free_slots, capacity * sizeof *free_slots);
        if (!free_slots)
            return -1;
        l->free_slots = free_slots;
        for (unsigned i = capacity; i > l->watch_capacity; i--) {
            l->watches[i - 1] = (watch_t){ .fd = -1 };
            l->free_slots[l->free_count++] = i - 1;
        }
        l->watch_capacity = capacity;
    }
    return (int)l->free_slots[--l->free_count];
}

bool loop_watch(loop_t *l, int fd, short events, int64_t deadline_ms, loop_fn fn, void *arg)
{
    int slot = take_slot(l);
    if (slot < 0)
        return false;
    watch_t *w = &l->watches[slot];
    uint32_t generation = w->generation + 1;
    if (fd >= 0 && !arm(l, fd, events, tag_of((unsigned)slot, generation))) {
        l->free_slots[l->free_count++] = (unsigned)slot;
        return false;
    }
    *w = (watch_t){ .fd = fd, .deadline_ms = deadline_ms, .fn = fn, .arg = arg, .generation = generation,
                    .active = true };
    l->active++;
    if (deadline_ms < l->next_deadline)
        l->next_deadline = deadline_ms;
    return true;
}

/* Ends watch slot and calls its function; a watch ended by its deadline is
 * first taken out of the epoll set, so it cannot fire later. */
static void fire(loop_t *l, unsigned slot, bool ready)
{
    watch_t *w = &l->watches[slot];
    if (!ready && w->fd >= 0)
        (void)epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
    loop_fn fn = w->fn;
    void *arg = w->arg;
    w->active = false;
    w->fd = -1;
    l->active--;
    l->free_slots[l->free_count++] = slot;
    fn(arg, ready);
}

/* Fires the watches whose deadline has passed, and finds the earliest
 * deadline left (a watch a fired one made included). */
static void fire_late(loop_t *l)
{
    int64_t now = clock_now_ms();
    if (l->next_deadline > now)
        return;
    l->next_deadline = INT64_MAX;
    for (unsigned i = 0; i < l->watch_capacity; i++) {
        watch_t *w = &l->watches[i];
        if (w->active && w->deadline_ms <= now)
            fire(l, i, false);
    }
    for (unsigned i = 0; i < l->watch_capacity; i++) {
        watch_t *w = &l->watches[i];
        if (w->active && w->deadline_ms < l->next_deadline)
            l->next_deadline = w->deadline_ms;
    }
}

/* Adds the connections the accept thread queued to the daemon, and makes
 * the calls queued. */
static void take_connections(loop_t *l)
{
    uint64_t count;
    while (read(l->inbox_fd, &count, sizeof count) < 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&l->lock);
    queued_t *queued = l->queued;
    unsigned n = l->queued_count;
    l->queued = NULL;
    l->queued_count = l->queued_capacity = 0;
    pthread_mutex_unlock(&l->lock);
    for (unsigned i = 0; i < n; i++) {
        if (queued[i].fn)
            queued[i].fn(queued[i].arg, true);
        else
            (void)MHD_add_connection(l->daemon, queued[i].fd, (const struct sockaddr *)&queued[i].peer,
                                     queued[i].peer_len);
    }
    free(queued);
}

/* How long epoll may wait: until the daemon's next timeout or the next
 * watch's deadline, whichever is first (-1: no bound). */
static int wait_ms(loop_t *l)
{
    int64_t next_deadline = l->next_deadline;
    MHD_UNSIGNED_LONG_LONG daemon_ms;
    int64_t wait = -1;
    if (MHD_get_timeout(l->daemon, &daemon_ms) == MHD_YES)
        wait = daemon_ms > INT32_MAX ? INT32_MAX : (int64_t)daemon_ms;
    if (next_deadline != INT64_MAX) {
        int64_t left = next_deadline - clock_now_ms();
        left = left < 0 ? 0 : left;
        if (wait < 0 || left < wait)
            wait = left;
    }
    if (l->woken)
        wait = 0;
    if (atomic_load(&l->stopping) && (wait < 0 || wait > STOP_POLL_MS))
        wait = STOP_POLL_MS;
    return (int)wait;
}

static void *run(void *arg)
{
    loop_t *l = arg;
    current = l;
    access_log_hold(); /* the lines of a turn go out in one write, at its end */
    struct epoll_event events[EVENTS_MAX];
    unsigned skipped = 0;
    while (!atomic_load(&l->stopping) || l->active) {
        /* The daemon has work at once (an answer to finish, a connection
         * resumed): run it again without asking the kernel first, a few
         * turns in a row at most, so the other descriptors wait little. */
        int wait = wait_ms(l);
        bool skip = wait == 0 && skipped < SKIPS_MAX;
        skipped = skip ? skipped + 1 : 0;
        int n = skip ? 0 : epoll_wait(l->epoll_fd, events, EVENTS_MAX, wait);
        for (int i = 0; i < n; i++) {
            uint64_t tag = events[i].data.u64;
            uint32_t low = (uint32_t)tag;
            if (low == TAG_INBOX) {
                take_connections(l);
            } else if (low >= TAG_WATCH) {
                unsigned slot = low - TAG_WATCH;
                if (slot < l->watch_capacity && l->watches[slot].active
                    && l->watches[slot].generation == (uint32_t)(tag >> 32))
                    fire(l, slot, true);
            }
        }
        fire_late(l);
        l->woken = false;
        MHD_run(l->daemon);
        access_log_flush();
    }
    access_log_release();
    current = NULL;
    return NULL;
}

loop_t *loop_start(struct MHD_Daemon *daemon, unsigned index)
{
    loop_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->daemon = daemon;
    l->index = index;
    l->epoll_fd = l->inbox_fd = -1;
    l->next_deadline = INT64_MAX;
    pthread_mutex_init(&l->lock, NULL);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    l->inbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event daemon_event = { .events = EPOLLIN, .data.u64 = TAG_DAEMON };
    struct epoll_event inbox_event = { .events = EPOLLIN, .data.u64 = TAG_INBOX };
    if (!info || l->epoll_fd < 0 || l->inbox_fd < 0
        || epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, info->epoll_fd, &daemon_event)
        || epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, l->inbox_fd, &inbox_event)
        || pthread_create(&l->thread, NULL, run, l)) {
        loop_free(l);
        return NULL;
    }
    l->started = true;
    return l;
}

/* Queues q for the loop's thread and wakes it; false when out of memory. */
static bool enqueue(loop_t *l, const queued_t *q)
{
    pthread_mutex_lock(&l->lock);
    bool room = l->queued_count < l->queued_capacity;
    if (!room) {
        unsigned capacity = l->queued_capacity ? 2 * l->queued_capacity : 16;
        queued_t *queued = realloc(l->queued, capacity * sizeof *queued);
        if (queued) {
            l->queued = queued;
            l->queued_capacity = capacity;
            room = true;
        }
    }
    if (room)
        l->queued[l->queued_count++] = *q;
    pthread_mutex_unlock(&l->lock);
    uint64_t one = 1;
    if (room)
        (void)!write(l->inbox_fd, &one, sizeof one);
    return room;
}

bool loop_add_connection(loop_t *l, int fd, const struct sockaddr *peer, socklen_t peer_len)
{
    if (peer_len > sizeof(struct sockaddr_storage))
        return false;
    queued_t q = { .fd = fd, .peer_len = peer_len };
    memcpy(&q.peer, peer, peer_len);
    return enqueue(l, &q);
}

bool loop_call(loop_t *l, loop_fn fn, void *arg)
{
    queued_t q = { .fd = -1, .fn = fn, .arg = arg };
    return enqueue(l, &q);
}

void loop_wake(loop_t *l)
{
    if (current == l) {
        l->woken = true;
        return;
    }
    uint64_t one = 1;
    (void)!write(l->inbox_fd, &one, sizeof one);
}

void loop_stop(loop_t *l)
{
    if (!l || !l->started)
        return;
    atomic_store(&l->stopping, true);
    uint64_t one = 1;
    (void)!write(l->inbox_fd, &one, sizeof one);
    pthread_join(l->thread, NULL);
    l->started = false;
}

void loop_free(loop_t *l)
{
    if (!l)
        return;
    loop_stop(l);
    for (unsigned i = 0; i < l->queued_count; i++)
        if (!l->queued[i].fn)
            close(l->queued[i].fd);
    free(l->queued);
    free(l->watches);
    free(l->free_slots);
    if (l->epoll_fd >= 0)
        close(l->epoll_fd);
    if (l->inbox_fd >= 0)
        close(l->inbox_fd);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
