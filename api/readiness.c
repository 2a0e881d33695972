/* See readiness.h. The check keeps no state of its own: its outcome goes to
 * metrics.c, whose gauge shows the latest one. */
#include "readiness.h"

#include <stdbool.h>

#include "metrics.h"
#include "token_secret.h"

readiness_redis_t readiness_check(store_t *store, const char **reason)
{
    if (!store)
        return READINESS_REDIS_OFF;
    const char *why = NULL;
    if (store_ping(store) != STORE_OK)
        why = "the game store does not answer";
    else if (!token_secret_check(store))
        why = "the player-token secret in the game store cannot be used";
    readiness_redis_t state = why ? READINESS_REDIS_DOWN : READINESS_REDIS_UP;
    metrics_redis_up(!why);
    if (reason)
        *reason = why;
    return state;
}

const char *readiness_redis_name(readiness_redis_t state)
{
    static const char *const names[READINESS_REDIS_COUNT] = {
        [READINESS_REDIS_OFF] = "off",
        [READINESS_REDIS_UP] = "up",
        [READINESS_REDIS_DOWN] = "down",
    };
    return (unsigned)state < READINESS_REDIS_COUNT ? names[state] : "down";
}
