/* Tests for api/http/ratelimit.c, the token buckets, with time passed in.
 * A key gets its burst at once, then one request per 1/rate seconds; a
 * refusal says to retry after a second at least. Idle time refills up to the
 * burst, a clock going back refills nothing; a key is its bytes, and other
 * keys keep their budget. Racing threads take exactly the burst; a limit is
 * described in words; a caller's own bucket works the same. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../../api/http/ratelimit.h"
#include "../../support/tests.h"

enum { SECOND_US = 1000000 };
static const uint64_t start_us = 1000ull * SECOND_US;

/* Takes from key at now_us until refused (at most limit times): how many were allowed. */
static unsigned take_all(ratelimit_t *l, const char *key, uint64_t now_us, unsigned limit)
{
    unsigned allowed = 0, retry;
    while (allowed < limit && ratelimit_take(l, key, strlen(key), now_us, &retry))
        allowed++;
    return allowed;
}

static void test_no_rate_means_no_limiter_and_no_limit(void)
{
    CU_ASSERT_PTR_NULL(ratelimit_new(0, 10));
    unsigned retry = 77;
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_TRUE(ratelimit_take(NULL, "k", 1, start_us, &retry));
    CU_ASSERT_EQUAL(retry, 77); /* untouched */
    ratelimit_free(NULL);
}

static void test_a_key_gets_its_burst_then_is_refused_with_a_retry_after(void)
{
    ratelimit_t *l = ratelimit_new(2, 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(take_all(l, "203.0.113.7", start_us, 100), 5);
    unsigned retry = 0;
    CU_ASSERT_FALSE(ratelimit_take(l, "203.0.113.7", 11, start_us, &retry));
    CU_ASSERT_EQUAL(retry, 1); /* half a second away, rounded up to a whole one */
    ratelimit_free(l);
    /* No burst given: the burst is the rate. */
    l = ratelimit_new(3, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(take_all(l, "k", start_us, 100), 3);
    ratelimit_free(l);
}

static void test_the_bucket_refills_at_the_rate_and_no_further_than_the_burst(void)
{
    ratelimit_t *l = ratelimit_new(4, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(take_all(l, "k", start_us, 100), 4);
    unsigned retry;
    /* A quarter of a second later, one; a little less, none. */
    CU_ASSERT_FALSE(ratelimit_take(l, "k", 1, start_us + SECOND_US / 4 - 1000, &retry));
    CU_ASSERT_TRUE(ratelimit_take(l, "k", 1, start_us + SECOND_US / 4 + 1000, &retry));
    CU_ASSERT_FALSE(ratelimit_take(l, "k", 1, start_us + SECOND_US / 4 + 2000, &retry));
    /* An hour idle gives back the burst, not an hour's worth. */
    CU_ASSERT_EQUAL(take_all(l, "k", start_us + 3600ull * SECOND_US, 100), 4);
    ratelimit_free(l);
}

static void test_a_clock_that_goes_back_refills_nothing(void)
{
    ratelimit_t *l = ratelimit_new(1, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(take_all(l, "k", start_us + 10ull * SECOND_US, 100), 2);
    unsigned retry = 0;
    CU_ASSERT_FALSE(ratelimit_take(l, "k", 1, start_us, &retry));
    CU_ASSERT(retry >= 1);
    ratelimit_free(l);
}

static void test_a_key_is_the_bytes_given_and_other_keys_keep_their_budget(void)
{
    ratelimit_t *l = ratelimit_new(1, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(take_all(l, "a", start_us, 100), 3);
    unsigned retry;
    /* "ab" cut to one byte is the key "a". */
    CU_ASSERT_FALSE(ratelimit_take(l, "ab", 1, start_us, &retry));
    /* Twenty other keys: each has its own burst. Two keys share a bucket
     * only when their hashes meet in one of 8192 slots, which limits sooner;
     * allow for one such meeting (odds of two are about 1 in 3000). */
    int full = 0;
    for (int i = 0; i < 20; i++) {
        char key[32];
        snprintf(key, sizeof key, "198.51.100.%d", i);
        full += take_all(l, key, start_us, 100) == 3;
    }
    CU_ASSERT(full >= 19);
    ratelimit_free(l);
}

enum { RACERS = 8, TAKES_EACH = 500, RACE_BURST = 1000 };

typedef struct {
    ratelimit_t *limiter;
    unsigned allowed;
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    unsigned retry;
    for (int i = 0; i < TAKES_EACH; i++)
        r->allowed += ratelimit_take(r->limiter, "shared", 6, start_us, &retry);
    return NULL;
}

static void test_threads_racing_for_one_bucket_take_exactly_its_burst(void)
{
    ratelimit_t *l = ratelimit_new(1, RACE_BURST);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    racer_t racers[RACERS];
    pthread_t threads[RACERS];
    for (int i = 0; i < RACERS; i++) {
        racers[i] = (racer_t){ l, 0 };
        CU_ASSERT_FATAL(pthread_create(&threads[i], NULL, race, &racers[i]) == 0);
    }
    unsigned total = 0;
    for (int i = 0; i < RACERS; i++) {
        pthread_join(threads[i], NULL);
        total += racers[i].allowed;
    }
    CU_ASSERT_EQUAL(total, RACE_BURST); /* 4000 tries at one instant */
    ratelimit_free(l);
}

/* A refusal names the limit: its rate, what and whose it counts, the
 * setting, and the burst when it is not the rate. */
static void test_a_limit_is_described_by_its_rate_burst_and_setting(void)
{
    char text[160];
    ratelimit_t *l = ratelimit_new(10, 50);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(ratelimit_rate(l), 10);
    ratelimit_describe(l, "game creations", "from one client address", "rate-limit-create", text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "game creations from one client address are limited to 10 a second "
                                 "(--rate-limit-create, in bursts of 50)");
    ratelimit_free(l);
    l = ratelimit_new(5, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    ratelimit_describe(l, "requests", "with one player token", "rate-limit-token", text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "requests with one player token are limited to 5 a second (--rate-limit-token)");
    ratelimit_free(l);
    CU_ASSERT_EQUAL(ratelimit_rate(NULL), 0);
}

/* A caller's own bucket (a service key's quota) starts full from zeros,
 * takes n at once or none, and refills at the rate given. */
static void test_a_callers_bucket_starts_full_and_takes_n_or_none(void)
{
    ratelimit_bucket_t bucket = { 0 };
    unsigned retry = 0;
    CU_ASSERT_TRUE(ratelimit_bucket_take(&bucket, 2, 10, 7, start_us, &retry));
    CU_ASSERT_FALSE(ratelimit_bucket_take(&bucket, 2, 10, 4, start_us, &retry));
    CU_ASSERT_EQUAL(retry, 1); /* one more token is half a second away */
    CU_ASSERT_TRUE(ratelimit_bucket_take(&bucket, 2, 10, 3, start_us, &retry));
    CU_ASSERT_FALSE(ratelimit_bucket_take(&bucket, 2, 10, 5, start_us, &retry));
    CU_ASSERT_EQUAL(retry, 3); /* 2.5 s, rounded up */
    CU_ASSERT_TRUE(ratelimit_bucket_take(&bucket, 2, 10, 5, start_us + 5 * SECOND_US / 2, &retry));
}

int test_ratelimit_register(void)
{
    CU_pSuite suite = CU_add_suite("ratelimit", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_no_rate_means_no_limiter_and_no_limit);
    CU_ADD_TEST(suite, test_a_key_gets_its_burst_then_is_refused_with_a_retry_after);
    CU_ADD_TEST(suite, test_the_bucket_refills_at_the_rate_and_no_further_than_the_burst);
    CU_ADD_TEST(suite, test_a_clock_that_goes_back_refills_nothing);
    CU_ADD_TEST(suite, test_a_key_is_the_bytes_given_and_other_keys_keep_their_budget);
    CU_ADD_TEST(suite, test_threads_racing_for_one_bucket_take_exactly_its_burst);
    CU_ADD_TEST(suite, test_a_limit_is_described_by_its_rate_burst_and_setting);
    CU_ADD_TEST(suite, test_a_callers_bucket_starts_full_and_takes_n_or_none);
    return CU_get_error();
}
