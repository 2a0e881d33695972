/* What /readyz says about Redis: a PING, then whether the player-token
 * secret is still usable (see token_secret.h); each outcome is recorded for
 * /metrics' chessd_redis_up gauge. Without a store (--redis none) Redis is
 * "off" and nothing is asked. Safe on any thread. */
#ifndef CHESSD_API_READINESS_H
#define CHESSD_API_READINESS_H

#include "../store/store.h"

typedef enum {
    READINESS_REDIS_OFF = 0, /* no Redis configured: games are off */
    READINESS_REDIS_UP,
    READINESS_REDIS_DOWN,    /* no answer in time, or the token secret there cannot be used */
    READINESS_REDIS_COUNT
} readiness_redis_t;

/* Asks Redis now, on this thread's connection (so for up to the Redis
 * timeouts when it does not answer), and records the outcome. When it is
 * DOWN and reason is not NULL, *reason is a sentence saying why (static). */
readiness_redis_t readiness_check(store_t *store, const char **reason);

/* "off", "up" or "down". */
const char *readiness_redis_name(readiness_redis_t state);

#endif
