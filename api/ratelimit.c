/* See ratelimit.h. 8192 buckets behind 64 striped mutexes. */
#include "ratelimit.h"

#include <pthread.h>
#include <stdlib.h>

enum { BUCKETS = 8192, STRIPES = 64 };

typedef struct {
    uint64_t key;
    double tokens;
    uint64_t updated_us;
} bucket_t;

struct ratelimit {
    double rate, burst;
    pthread_mutex_t locks[STRIPES];
    bucket_t buckets[BUCKETS];
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

/* FNV-1a, then a final mix so nearby keys spread over the table. */
static uint64_t hash_key(const void *key, size_t length)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < length; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

bool ratelimit_take(ratelimit_t *l, const void *key, size_t length, uint64_t now_us, unsigned *retry_after_seconds)
{
    if (!l)
        return true;
    uint64_t h = hash_key(key, length) | 1; /* 0 marks an unused bucket */
    size_t slot = (size_t)(h % BUCKETS);
    pthread_mutex_t *lock = &l->locks[slot % STRIPES];
    bucket_t *b = &l->buckets[slot];
    bool allowed;
    pthread_mutex_lock(lock);
    if (b->key != h) {
        b->key = h;
        b->tokens = l->burst;
        b->updated_us = now_us;
    }
    double elapsed = now_us > b->updated_us ? (double)(now_us - b->updated_us) / 1e6 : 0;
    b->tokens = b->tokens + elapsed * l->rate;
    if (b->tokens > l->burst)
        b->tokens = l->burst;
    b->updated_us = now_us;
    allowed = b->tokens >= 1.0;
    if (allowed) {
        b->tokens -= 1.0;
    } else {
        double wait = (1.0 - b->tokens) / l->rate;
        unsigned seconds = (unsigned)wait;
        *retry_after_seconds = seconds < wait ? seconds + 1 : (seconds ? seconds : 1);
    }
    pthread_mutex_unlock(lock);
    return allowed;
}
