/* Redis's memory policy, watched off the request path: a thread reads it
 * (store_memory_read) at start and every --redis-memory-check seconds, and
 * logs loudly when Redis may evict games (at start and on each change).
 * /readyz and /metrics take the latest reading and never wait for Redis. Any
 * policy but noeviction may evict games: volatile-* ones too, since every
 * game's keys carry a TTL (the active-game TTL). */
#ifndef CHESSD_API_REDIS_MEMORY_H
#define CHESSD_API_REDIS_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "../store/store.h"

typedef struct {
    bool read;        /* Redis has answered a reading (false: not yet) */
    char policy[STORE_MEMORY_POLICY_SIZE]; /* "unknown" until read, or when Redis would not say */
    uint64_t maxmemory;                    /* bytes (0: no limit) */
    bool eviction_possible;                /* the policy is not noeviction ("unknown" included) */
} redis_memory_t;

/* Reads Redis's memory policy once now (so that the first /readyz and the
 * log at start have it; up to the Redis timeouts), then starts the thread
 * reading it every period_seconds (every second until Redis has answered
 * one, when it was away at start). False when the thread cannot start.
 * NULL store: nothing to watch. */
bool redis_memory_start(store_t *store, unsigned period_seconds);
/* Stops and joins the thread (safe when it was never started). */
void redis_memory_stop(void);

/* The latest reading; never waits for Redis. */
void redis_memory_get(redis_memory_t *out);

#endif
