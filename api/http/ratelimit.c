/* See ratelimit.h. 8192 buckets behind 64 striped mutexes. A bucket is found
 * by a hash keyed with a random seed, so a client cannot pick addresses or
 * tokens that share a bucket with someone else's; keys that share one anyway
 * share its budget (a bucket is never reset for a newcomer, which would let
 * two colliding keys take turns at a full burst). */
#include "ratelimit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

enum { BUCKETS = 8192, STRIPES = 64 };

struct ratelimit {
    double rate, burst;
    uint64_t seed;
    pthread_mutex_t locks[STRIPES];
    ratelimit_bucket_t buckets[BUCKETS];
};

ratelimit_t *ratelimit_new(unsigned rate, unsigned burst)
{
    if (rate == 0)
        return NULL;
    ratelimit_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->rate = rate;
    l->burst = burst > 0 ? burst : rate;
    if (getrandom(&l->seed, sizeof l->seed, 0) != (ssize_t)sizeof l->seed)
        l->seed = (uint64_t)(uintptr_t)l ^ 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_init(&l->locks[i], NULL);
    return l;
}

void ratelimit_free(ratelimit_t *l)
{
    if (!l)
        return;
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_destroy(&l->locks[i]);
    free(l);
}

/* FNV-1a from a secret starting point, then a final mix so nearby keys
 * spread over the table. */
static uint64_t hash_key(uint64_t seed, const void *key, size_t length)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (size_t i = 0; i < length; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

bool ratelimit_take(ratelimit_t *l, const void *key, size_t length, uint64_t now_us, unsigned *retry_after_seconds)
{
    return ratelimit_take_n(l, key, length, 1, now_us, retry_after_seconds);
}

bool ratelimit_bucket_take(ratelimit_bucket_t *b, double rate, double burst, unsigned n, uint64_t now_us,
                           unsigned *retry_after_seconds)
{
    if (!b->updated_us) {
        b->tokens = burst;
        b->updated_us = now_us;
    }
    double elapsed = now_us > b->updated_us ? (double)(now_us - b->updated_us) / 1e6 : 0;
    b->tokens = b->tokens + elapsed * rate;
    if (b->tokens > burst)
        b->tokens = burst;
    b->updated_us = now_us;
    if (b->tokens >= (double)n) {
        b->tokens -= (double)n;
        return true;
    }
    double wait = ((double)n - b->tokens) / rate;
    unsigned seconds = (unsigned)wait;
    *retry_after_seconds = seconds < wait ? seconds + 1 : (seconds ? seconds : 1);
    return false;
}

bool ratelimit_take_n(ratelimit_t *l, const void *key, size_t length, unsigned n, uint64_t now_us,
                      unsigned *retry_after_seconds)
{
    if (!l)
        return true;
    size_t slot = (size_t)(hash_key(l->seed, key, length) % BUCKETS);
    pthread_mutex_t *lock = &l->locks[slot % STRIPES];
    pthread_mutex_lock(lock);
    bool allowed = ratelimit_bucket_take(&l->buckets[slot], l->rate, l->burst, n, now_us, retry_after_seconds);
    pthread_mutex_unlock(lock);
    return allowed;
}

unsigned ratelimit_rate(const ratelimit_t *l) { return l ? (unsigned)l->rate : 0; }

int ratelimit_describe(const ratelimit_t *l, const char *what, const char *whose, const char *setting, char *out,
                       size_t size)
{
    unsigned rate = ratelimit_rate(l), burst = l ? (unsigned)l->burst : 0;
    if (burst == rate)
        return snprintf(out, size, "%s %s are limited to %u a second (--%s)", what, whose, rate, setting);
    return snprintf(out, size, "%s %s are limited to %u a second (--%s, in bursts of %u)", what, whose, rate,
                    setting, burst);
}
