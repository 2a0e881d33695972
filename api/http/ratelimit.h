/* Rate limiting by token bucket, per client address and per player token
 * (and single buckets a caller keeps): `rate` requests a second with bursts
 * of `burst`. Buckets live in a fixed table (keys are 64-bit hashes; two keys
 * sharing a slot share a bucket, which only ever limits sooner), so memory
 * stays bounded whatever clients send. Limits are per replica. Thread-safe. */
#ifndef CHESSD_API_HTTP_RATELIMIT_H
#define CHESSD_API_HTTP_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ratelimit ratelimit_t;

/* A limiter allowing rate per second (burst at once); NULL when rate is 0 (no limit). */
ratelimit_t *ratelimit_new(unsigned rate, unsigned burst);
void ratelimit_free(ratelimit_t *limiter);

/* Takes one request for key (length bytes) at time now_us. On refusal returns
 * false and sets *retry_after_seconds (at least 1). A NULL limiter allows all. */
bool ratelimit_take(ratelimit_t *limiter, const void *key, size_t length, uint64_t now_us,
                    unsigned *retry_after_seconds);

/* Takes n at once (a bulk's games): all, or none when fewer are in the
 * bucket (never more than its burst). As ratelimit_take otherwise. */
bool ratelimit_take_n(ratelimit_t *limiter, const void *key, size_t length, unsigned n, uint64_t now_us,
                      unsigned *retry_after_seconds);

/* One token bucket that its caller keeps and locks (a service key's quota):
 * all zeros is a full one. Takes n at now_us from a bucket filling at rate
 * a second up to burst; as ratelimit_take_n otherwise. */
typedef struct {
    double tokens;
    uint64_t updated_us; /* 0: never used, so full */
} ratelimit_bucket_t;
bool ratelimit_bucket_take(ratelimit_bucket_t *bucket, double rate, double burst, unsigned n, uint64_t now_us,
                           unsigned *retry_after_seconds);

/* The limiter's rate a second (0 for NULL). */
unsigned ratelimit_rate(const ratelimit_t *limiter);

/* The limit in words, for a refusal, into out (snprintf's contract):
 * "<what> <whose> are limited to <rate> a second (--<setting>, in bursts
 * of <burst>)", the bursts left out when they are the rate. what
 * ("requests") and whose ("from one client address") are the caller's. */
int ratelimit_describe(const ratelimit_t *limiter, const char *what, const char *whose, const char *setting,
                       char *out, size_t size);

#endif
