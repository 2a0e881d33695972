/* See redis_memory.h. The reading is a small struct under a mutex (the
 * thread writes it once a period, /readyz and /metrics copy it); the
 * thread sleeps on a condition variable so redis_memory_stop ends it at
 * once. A Redis that does not answer leaves the last reading in place: an
 * outage is readiness.c's to report, and the policy rarely changes in one. */
#include "redis_memory.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../rules/base/clock.h"

static struct {
    store_t *store;
    unsigned period_seconds;
    pthread_t thread;
    bool started, stopping;
    pthread_mutex_t lock; /* guards everything below and stopping */
    pthread_cond_t wake;
    redis_memory_t latest;
    char logged[STORE_MEMORY_POLICY_SIZE]; /* the policy the log last spoke of ("" : none yet) */
} watch = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
            .latest = { .policy = "unknown", .eviction_possible = true } };

/* The log's word on a new policy: a loud warning for any that may evict
 * games, one line when it is back to noeviction. Never a secret: the
 * policy, the limit and a node's host and port. */
static void log_policy(const store_memory_t *m, bool had_logged)
{
    char where[STORE_MEMORY_NODE_SIZE + 8] = "";
    if (m->node[0])
        snprintf(where, sizeof where, " on %s", m->node);
    if (!strcmp(m->policy, "noeviction")) {
        if (had_logged)
            fprintf(stderr, "chessd: Redis maxmemory-policy is noeviction again%s: games are not evicted\n", where);
    } else if (!strcmp(m->policy, "unknown")) {
        fprintf(stderr, "chessd: WARNING: Redis's maxmemory-policy cannot be read%s (CONFIG GET and INFO memory "
                        "refused): chessd cannot tell whether Redis may evict games\n", where);
    } else {
        fprintf(stderr, "chessd: WARNING: Redis maxmemory-policy is %s%s (maxmemory %llu bytes): Redis may evict "
                        "the keys of games, losing games or parts of them (404, or 410 game_damaged); set "
                        "maxmemory-policy noeviction (volatile-* policies evict games too: every game's keys have a "
                        "TTL)\n", m->policy, where, (unsigned long long)m->maxmemory);
    }
}

/* One reading, kept when Redis answered; logged when the policy changed. */
static void read_once(store_t *store)
{
    store_memory_t m;
    store_status_t status = store_memory_read(store, &m);
    if (status != STORE_OK && m.nodes == 0)
        return;
    pthread_mutex_lock(&watch.lock);
    snprintf(watch.latest.policy, sizeof watch.latest.policy, "%s", m.policy);
    watch.latest.maxmemory = m.maxmemory;
    watch.latest.eviction_possible = strcmp(m.policy, "noeviction") != 0;
    watch.latest.read = true;
    bool changed = strcmp(watch.logged, m.policy) != 0, had_logged = watch.logged[0] != '\0';
    if (changed)
        snprintf(watch.logged, sizeof watch.logged, "%s", m.policy);
    pthread_mutex_unlock(&watch.lock);
    if (changed)
        log_policy(&m, had_logged);
}

static void *run(void *arg)
{
    store_t *store = arg;
    store_set_deadline(0);
    pthread_mutex_lock(&watch.lock);
    while (!watch.stopping) {
        /* Until Redis has answered once (it was away at start), every second. */
        long period_ms = (long)watch.period_seconds * 1000;
        struct timespec until = clock_deadline_after_ms(watch.latest.read && period_ms > 1000 ? period_ms : 1000);
        while (!watch.stopping && pthread_cond_timedwait(&watch.wake, &watch.lock, &until) != ETIMEDOUT) {
        }
        if (watch.stopping)
            break;
        pthread_mutex_unlock(&watch.lock);
        read_once(store);
        pthread_mutex_lock(&watch.lock);
    }
    pthread_mutex_unlock(&watch.lock);
    return NULL;
}

bool redis_memory_start(store_t *store, unsigned period_seconds)
{
    if (!store)
        return true;
    watch.store = store;
    watch.period_seconds = period_seconds ? period_seconds : 60;
    watch.stopping = false;
    read_once(store);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_destroy(&watch.wake);
    pthread_cond_init(&watch.wake, &attr);
    pthread_condattr_destroy(&attr);
    watch.started = pthread_create(&watch.thread, NULL, run, store) == 0;
    return watch.started;
}

void redis_memory_stop(void)
{
    if (!watch.started)
        return;
    pthread_mutex_lock(&watch.lock);
    watch.stopping = true;
    pthread_cond_broadcast(&watch.wake);
    pthread_mutex_unlock(&watch.lock);
    pthread_join(watch.thread, NULL);
    watch.started = false;
    watch.store = NULL;
}

void redis_memory_get(redis_memory_t *out)
{
    pthread_mutex_lock(&watch.lock);
    *out = watch.latest;
    pthread_mutex_unlock(&watch.lock);
}
