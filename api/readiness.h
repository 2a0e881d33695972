/* What /readyz says about Redis, without ever waiting for it: a watcher
 * thread probes Redis in the background and checks that the player-token
 * secret is still usable (token_secret.h). readiness_check reads the latest
 * outcome and the store's breaker (store_health), which game requests trip
 * the moment Redis fails them. Without a store (--redis none) Redis is "off"
 * and nothing is asked. */
#ifndef CHESSD_API_READINESS_H
#define CHESSD_API_READINESS_H

#include <stddef.h>

#include "../store/store.h"

/* The watcher's probe (store_probe: a PING past the breaker, and a PING to
 * each node held down), then the secret's check, every READINESS_UP_MS while
 * all is well and every READINESS_DOWN_MS while it is not. */
enum { READINESS_UP_MS = 1000, READINESS_DOWN_MS = 100 };

typedef enum {
    READINESS_REDIS_OFF = 0, /* no Redis configured: games are off */
    READINESS_REDIS_UP,
    READINESS_REDIS_DOWN,    /* no answer in time, refused (a setting), or the token secret there cannot be used */
    READINESS_REDIS_FULL,    /* up, but out of memory: it refused a write (OOM) since the last it took
                              * (store_is_full): games are read, not changed */
    READINESS_REDIS_COUNT
} readiness_redis_t;

/* Runs a first probe now (so the first /readyz answers from it; up to the
 * Redis timeouts when Redis does not answer), then starts the watcher
 * thread. False when the thread cannot start. NULL store: nothing to watch. */
bool readiness_start(store_t *store);
/* Stops and joins the watcher (safe when it was never started). */
void readiness_stop(void);

/* Redis's state now, from the watcher's latest probe and the breaker; never
 * waits for Redis. Each check, like each probe, sets /metrics'
 * chessd_redis_up gauge. When it is FULL, reason (when not NULL) says so.
 * When it is DOWN, reason (when not NULL) gets a sentence saying why (naming
 * the node and what failed, never a secret) and *fault (when not NULL) what
 * kind of failure (STORE_FAULT_NONE: the token secret). */
readiness_redis_t readiness_check(store_t *store, char *reason, size_t reason_size, store_fault_t *fault);

/* "off", "up", "down" or "full". */
const char *readiness_redis_name(readiness_redis_t state);

#endif
