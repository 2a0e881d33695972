/* See readiness.h. The watcher's outcome (whether the token secret was
 * usable at the latest probe) is one atomic; the store keeps the rest (its
 * breaker). The thread sleeps on a condition variable so readiness_stop
 * ends it at once. */
#include "readiness.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "../rules/base/clock.h"
#include "metrics.h"
#include "game/token_secret.h"

static struct {
    store_t *store;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    bool woken; /* probe_now: a node was marked down since the last probe */
    atomic_bool redis_ok;  /* Redis answered the latest probe */
    atomic_bool secret_ok; /* the player-token secret was usable at the latest probe */
    atomic_bool probed;    /* a probe has run */
} watcher = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* One probe: Redis, then the token secret (only when Redis answered: its
 * check would wait for Redis too). True when both are well. */
static bool probe(store_t *store)
{
    bool redis = store_probe(store) == STORE_OK;
    bool secret = redis ? token_secret_check(store) : atomic_load(&watcher.secret_ok);
    atomic_store(&watcher.redis_ok, redis);
    atomic_store(&watcher.secret_ok, secret);
    atomic_store(&watcher.probed, true);
    metrics_redis_up(redis && secret);
    return redis && secret;
}

static void *watch(void *arg)
{
    store_t *store = arg;
    pthread_mutex_lock(&watcher.lock);
    while (!watcher.stopping) {
        pthread_mutex_unlock(&watcher.lock);
        bool well = probe(store);
        struct timespec until = clock_deadline_after_ms(well ? READINESS_UP_MS : READINESS_DOWN_MS);
        pthread_mutex_lock(&watcher.lock);
        while (!watcher.stopping && !watcher.woken
               && pthread_cond_timedwait(&watcher.wake, &watcher.lock, &until) != ETIMEDOUT) {
        }
        watcher.woken = false;
    }
    pthread_mutex_unlock(&watcher.lock);
    return NULL;
}

/* store_on_down: a node was just marked down; the watcher probes at once. */
static void probe_now(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&watcher.lock);
    watcher.woken = true;
    pthread_cond_broadcast(&watcher.wake);
    pthread_mutex_unlock(&watcher.lock);
}

bool readiness_start(store_t *store)
{
    if (!store)
        return true;
    watcher.store = store;
    watcher.stopping = false;
    probe(store);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_destroy(&watcher.wake);
    pthread_cond_init(&watcher.wake, &attr);
    pthread_condattr_destroy(&attr);
    watcher.started = pthread_create(&watcher.thread, NULL, watch, store) == 0;
    if (watcher.started)
        store_on_down(store, probe_now, NULL);
    return watcher.started;
}

void readiness_stop(void)
{
    if (!watcher.started)
        return;
    store_on_down(watcher.store, NULL, NULL);
    pthread_mutex_lock(&watcher.lock);
    watcher.stopping = true;
    pthread_cond_broadcast(&watcher.wake);
    pthread_mutex_unlock(&watcher.lock);
    pthread_join(watcher.thread, NULL);
    watcher.started = false;
    watcher.store = NULL;
}

readiness_redis_t readiness_check(store_t *store, char *reason, size_t reason_size, store_fault_t *fault)
{
    if (!store)
        return READINESS_REDIS_OFF;
    store_health_t health;
    store_health(store, &health);
    bool redis = atomic_load(&watcher.redis_ok), secret = atomic_load(&watcher.secret_ok);
    bool up = health.up && redis && secret;
    if (atomic_load(&watcher.probed))
        metrics_redis_up(up);
    if (up && store_is_full(store)) {
        if (reason && reason_size)
            snprintf(reason, reason_size, "the game store is out of memory and refuses writes (Redis answered OOM): "
                                          "games can be read, but not changed or created, until memory is freed");
        return READINESS_REDIS_FULL;
    }
    if (up)
        return READINESS_REDIS_UP;
    if (fault)
        *fault = health.up ? STORE_FAULT_NONE : health.fault;
    if (reason && reason_size) {
        if (!health.up)
            snprintf(reason, reason_size, "the game store cannot be used (%s): %s", store_fault_name(health.fault),
                     health.reason);
        else
            snprintf(reason, reason_size, "%s",
                     !atomic_load(&watcher.probed) ? "the game store has not been checked yet"
                     : !redis                      ? "the game store did not answer the latest probe"
                                                   : "the player-token secret in the game store cannot be used");
    }
    return READINESS_REDIS_DOWN;
}

const char *readiness_redis_name(readiness_redis_t state)
{
    static const char *const names[READINESS_REDIS_COUNT] = {
        [READINESS_REDIS_OFF] = "off",
        [READINESS_REDIS_UP] = "up",
        [READINESS_REDIS_DOWN] = "down",
        [READINESS_REDIS_FULL] = "full",
    };
    return (unsigned)state < READINESS_REDIS_COUNT ? names[state] : "down";
}
