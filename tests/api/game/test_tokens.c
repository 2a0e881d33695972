/* Tests for api/game/tokens.c and api/game/token_secret.c: no secret means no
 * hash and no seal; failed randomness and failed digests are failures, never
 * zeros that pass; replicas without CHESSD_TOKEN_SECRET share one made in a
 * real, private redis-server (store_token_secret). The secret can be set once
 * per process, so the tests run in order: the ones without a secret first. */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../api/game/token_secret.h"
#include "../../../api/game/tokens.h"
#include "../../../store/store.h"
#include "../../support/redis_server.h"
#include "../../support/tests.h"

/* --- OpenSSL, failing on demand --- */

/* RAND_bytes, HMAC and EVP_MD_CTX_copy_ex are wrapped at link time
 * (-Wl,--wrap, see the Makefile's TEST_LDFLAGS), so a test can make them fail. */

static bool fail_random, fail_hmac;

int __real_EVP_MD_CTX_copy_ex(EVP_MD_CTX *out, const EVP_MD_CTX *in);
int __wrap_EVP_MD_CTX_copy_ex(EVP_MD_CTX *out, const EVP_MD_CTX *in);
/* tokens_hash() starts each HMAC from a copy of its precomputed pads. */
int __wrap_EVP_MD_CTX_copy_ex(EVP_MD_CTX *out, const EVP_MD_CTX *in)
{
    return fail_hmac ? 0 : __real_EVP_MD_CTX_copy_ex(out, in);
}

int __real_RAND_bytes(unsigned char *buf, int num);
int __wrap_RAND_bytes(unsigned char *buf, int num);
unsigned char *__real_HMAC(const EVP_MD *md, const void *key, int key_length, const unsigned char *data,
                           size_t data_length, unsigned char *out, unsigned int *out_length);
unsigned char *__wrap_HMAC(const EVP_MD *md, const void *key, int key_length, const unsigned char *data,
                           size_t data_length, unsigned char *out, unsigned int *out_length);

int __wrap_RAND_bytes(unsigned char *buf, int num)
{
    if (fail_random) {
        memset(buf, 0, (size_t)num); /* what a careless caller would then use */
        return 0;
    }
    return __real_RAND_bytes(buf, num);
}

unsigned char *__wrap_HMAC(const EVP_MD *md, const void *key, int key_length, const unsigned char *data,
                           size_t data_length, unsigned char *out, unsigned int *out_length)
{
    if (fail_hmac) {
        memset(out, 0, 32);
        return NULL;
    }
    return __real_HMAC(md, key, key_length, data, data_length, out, out_length);
}

/* --- the suite's Redis --- */

enum { TIMEOUT_MS = 300 };

static redis_server_t server;
static store_t *store, *other_replica, *unreachable;

static store_t *open_store(const char *url) { return redis_server_open_store(url, TIMEOUT_MS); }

static int suite_init(void)
{
    redis_server_init(&server);
    if (!redis_server_start(&server)) {
        fprintf(stderr, "\ntokens suite: cannot start a private redis-server: %s\n", server.error);
        return 1;
    }
    char url[64];
    redis_server_url(&server, url, sizeof url);
    store = open_store(url);
    other_replica = open_store(url);
    unreachable = open_store("redis://127.0.0.1:1/0");
    if (!store || !other_replica || !unreachable) {
        store_close(store);
        store_close(other_replica);
        store_close(unreachable);
        redis_server_stop(&server);
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    store_close(store);
    store_close(other_replica);
    store_close(unreachable);
    redis_server_stop(&server);
    return 0;
}

/* Runs a command (hiredis format) on the suite's Redis; whether it answered without an error. */
static bool redis(const char *format, const char *argument)
{
    redisReply *r = redis_server_command(&server, NULL, format, argument);
    bool ok = r && r->type != REDIS_REPLY_ERROR;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* --- without a secret --- */

static void test_without_a_secret_no_hash_or_seal_is_made_and_no_two_failures_compare_equal(void)
{
    char a[TOKENS_HASH_SIZE] = "x", b[TOKENS_HASH_SIZE] = "y";
    CU_ASSERT_FALSE(tokens_ready());
    CU_ASSERT_FALSE(tokens_hash("some-token", a));
    CU_ASSERT_FALSE(tokens_hash("some-token", b));
    CU_ASSERT_STRING_EQUAL(a, "");
    CU_ASSERT_FALSE(tokens_hash_equal(a, b));
    CU_ASSERT_PTR_NULL(tokens_seal("answer", 6));
    CU_ASSERT_PTR_NULL(tokens_open("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    CU_ASSERT_FALSE(token_secret_ready(store)); /* token_secret_init() has not run: nothing to ask for */
}

static void test_a_failed_rand_bytes_at_start_refuses_to_start_and_makes_no_ids(void)
{
    char err[256] = "", secret[TOKENS_SECRET_TEXT_SIZE] = "x", id[TOKENS_ID_SIZE] = "x", token[TOKENS_TOKEN_SIZE] = "x";
    fail_random = true;
    CU_ASSERT_FALSE(token_secret_init(NULL, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "RAND_bytes"));
    CU_ASSERT_FALSE(tokens_new_secret(secret));
    CU_ASSERT_FALSE(tokens_new_id(id));
    CU_ASSERT_FALSE(tokens_new_token(token));
    fail_random = false;
    CU_ASSERT_STRING_EQUAL(secret, "");
    CU_ASSERT_STRING_EQUAL(id, "");
    CU_ASSERT_STRING_EQUAL(token, "");
    CU_ASSERT_FALSE(tokens_ready());
    CU_ASSERT_FALSE(token_secret_ready(store));
}

static void test_a_token_secret_under_32_bytes_is_refused_without_echoing_it(void)
{
    char err[256] = "";
    CU_ASSERT_FALSE(token_secret_init("Short-Secret-31-bytes-long-0123", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "at least 32 bytes"));
    CU_ASSERT_PTR_NULL(strstr(err, "Short-Secret"));
    CU_ASSERT_FALSE(tokens_ready());
}

static void test_replicas_racing_for_the_shared_secret_all_read_the_one_stored_first(void)
{
    char a[TOKENS_SECRET_TEXT_SIZE], b[TOKENS_SECRET_TEXT_SIZE];
    CU_ASSERT_TRUE_FATAL(tokens_new_secret(a) && tokens_new_secret(b));
    CU_ASSERT_EQUAL(strlen(a), TOKENS_SECRET_TEXT_SIZE - 1);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    char *first = NULL, *second = NULL;
    size_t first_length = 0, second_length = 0;
    bool first_created = false, second_created = true;
    CU_ASSERT_EQUAL(store_token_secret(store, a, &first, &first_length, &first_created), STORE_OK);
    CU_ASSERT_EQUAL(store_token_secret(other_replica, b, &second, &second_length, &second_created), STORE_OK);
    CU_ASSERT_TRUE(first_created);
    CU_ASSERT_FALSE(second_created);
    CU_ASSERT(first && second && first_length == strlen(a) && !strcmp(first, a) && !strcmp(second, a));
    free(first);
    free(second);
    CU_ASSERT_TRUE(redis("DEL %s", STORE_TOKEN_SECRET_KEY));
}

/* --- a secret shared through Redis --- */

static void test_game_requests_wait_while_redis_is_unreachable_or_holds_an_unusable_secret(void)
{
    char err[256] = "";
    CU_ASSERT_TRUE_FATAL(token_secret_init(NULL, err, sizeof err));
    CU_ASSERT_FALSE(token_secret_ready(unreachable)); /* no fallback to a secret of its own */
    CU_ASSERT_FALSE(tokens_ready());
    CU_ASSERT_TRUE(redis("SET " STORE_TOKEN_SECRET_KEY " %s", "only-31-bytes-0123456789abcdef0"));
    CU_ASSERT_FALSE(token_secret_ready(store));
    CU_ASSERT_TRUE(redis("DEL %s", STORE_TOKEN_SECRET_KEY));
    CU_ASSERT_TRUE(redis("HSET " STORE_TOKEN_SECRET_KEY " field %s", "a hash, not a string"));
    CU_ASSERT_FALSE(token_secret_ready(store));
    CU_ASSERT_FALSE(tokens_ready());
    CU_ASSERT_TRUE(redis("DEL %s", STORE_TOKEN_SECRET_KEY));
    CU_ASSERT_TRUE(token_secret_ready(store));
    CU_ASSERT_TRUE(tokens_ready());
    char *held = NULL;
    size_t length = 0;
    bool created = true;
    CU_ASSERT_EQUAL(store_token_secret(other_replica, "another-candidate-0123456789-0123456789", &held, &length,
                                       &created),
                    STORE_OK);
    CU_ASSERT_FALSE(created);
    CU_ASSERT_EQUAL(length, TOKENS_SECRET_TEXT_SIZE - 1);
    free(held);
}

static void test_the_shared_secret_keys_hashes_and_the_sealing_of_kept_answers(void)
{
    CU_ASSERT_TRUE_FATAL(tokens_ready());
    char a[TOKENS_HASH_SIZE], b[TOKENS_HASH_SIZE], c[TOKENS_HASH_SIZE];
    CU_ASSERT_TRUE(tokens_hash("player-token", a) && tokens_hash("player-token", b) && tokens_hash("other", c));
    CU_ASSERT_EQUAL(strlen(a), TOKENS_HASH_SIZE - 1);
    CU_ASSERT_TRUE(tokens_hash_equal(a, b));
    CU_ASSERT_FALSE(tokens_hash_equal(a, c));
    /* The HMAC from the precomputed pads is OpenSSL's HMAC-SHA256 under the shared secret. */
    char *secret = NULL;
    size_t secret_length = 0;
    bool created = false;
    CU_ASSERT_EQUAL_FATAL(store_token_secret(store, "an-unused-candidate-0123456789-0123456789", &secret,
                                             &secret_length, &created), STORE_OK);
    static const char *const samples[] = { "player-token", "", "a", "0123456789012345678901",
                                           "a token longer than one SHA-256 block of sixty-four bytes, to be sure" };
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        unsigned char mac[32];
        unsigned mac_length = 0;
        char expected[TOKENS_HASH_SIZE], got[TOKENS_HASH_SIZE];
        CU_ASSERT_FATAL(__real_HMAC(EVP_sha256(), secret, (int)secret_length, (const unsigned char *)samples[i],
                                    strlen(samples[i]), mac, &mac_length) != NULL);
        for (unsigned j = 0; j < 32; j++)
            snprintf(expected + 2 * j, 3, "%02x", mac[j]);
        CU_ASSERT_TRUE(tokens_hash(samples[i], got));
        CU_ASSERT_STRING_EQUAL(got, expected);
    }
    free(secret);
    char *sealed = tokens_seal("{\"tokens\":1}", 12);
    char *opened = sealed ? tokens_open(sealed) : NULL;
    CU_ASSERT(opened && !strcmp(opened, "{\"tokens\":1}"));
    free(sealed);
    free(opened);
}

static void test_readiness_stores_a_lost_shared_secret_again_and_refuses_a_replaced_one(void)
{
    static const char unused[] = "a-candidate-never-stored-0123456789-0123456789";
    char *before = NULL, *after = NULL;
    size_t length = 0;
    bool created = false;
    CU_ASSERT_TRUE(token_secret_check(store));
    CU_ASSERT_EQUAL_FATAL(store_token_secret(store, unused, &before, &length, &created), STORE_OK);
    CU_ASSERT_TRUE(redis("DEL %s", STORE_TOKEN_SECRET_KEY));
    CU_ASSERT_TRUE(token_secret_check(store)); /* stored again */
    CU_ASSERT_EQUAL(store_token_secret(store, unused, &after, &length, &created), STORE_OK);
    CU_ASSERT(after && before && !strcmp(after, before));
    CU_ASSERT_TRUE(redis("SET " STORE_TOKEN_SECRET_KEY " %s", "a-new-secret-made-by-someone-else-0123456789"));
    CU_ASSERT_FALSE(token_secret_check(store));
    CU_ASSERT_TRUE(token_secret_ready(store)); /* the secret in use stays: requests go on */
    CU_ASSERT_TRUE(redis("SET " STORE_TOKEN_SECRET_KEY " %s", before));
    CU_ASSERT_TRUE(token_secret_check(store));
    free(before);
    free(after);
}

static void test_a_failed_hmac_gives_no_hash_and_two_failures_never_compare_equal(void)
{
    char a[TOKENS_HASH_SIZE] = "x", b[TOKENS_HASH_SIZE] = "y";
    fail_hmac = true;
    CU_ASSERT_FALSE(tokens_hash("player-token", a));
    CU_ASSERT_FALSE(tokens_hash("player-token", b));
    fail_hmac = false;
    CU_ASSERT_STRING_EQUAL(a, "");
    CU_ASSERT_FALSE(tokens_hash_equal(a, b));
    CU_ASSERT_FALSE(tokens_hash_equal("", ""));
    CU_ASSERT_TRUE(tokens_hash("player-token", a));
    CU_ASSERT_FALSE(tokens_hash_equal(a, b)); /* a good hash never equals a failed one */
}

/* tokens_random_below(960): 96,000 draws all in range, every value drawn
 * (a value missing has odds about 960 * e^-100), no value far from its 100
 * expected draws (a chi-square far above 960's 1,185 at 1e-6 would fail); a
 * bound of 1 always gives 0; a failing RAND_bytes gives false, *out untouched. */
static void test_random_below_covers_its_range_evenly_and_fails_with_rand_bytes(void)
{
    enum { BOUND = 960, DRAWS = 96000 };
    static unsigned counts[BOUND];
    memset(counts, 0, sizeof counts);
    bool in_range = true;
    for (int i = 0; i < DRAWS; i++) {
        uint32_t value = BOUND;
        CU_ASSERT_TRUE_FATAL(tokens_random_below(BOUND, &value));
        if (value >= BOUND)
            in_range = false;
        else
            counts[value]++;
    }
    CU_ASSERT_TRUE(in_range);
    double chi_square = 0;
    bool all_drawn = true;
    for (int v = 0; v < BOUND; v++) {
        double diff = counts[v] - (double)DRAWS / BOUND;
        chi_square += diff * diff / ((double)DRAWS / BOUND);
        all_drawn = all_drawn && counts[v] > 0;
    }
    CU_ASSERT_TRUE(all_drawn);
    CU_ASSERT_TRUE(chi_square < 1185);
    uint32_t one = 7;
    CU_ASSERT_TRUE(tokens_random_below(1, &one));
    CU_ASSERT_EQUAL(one, 0);
    uint32_t untouched = 12345;
    CU_ASSERT_FALSE(tokens_random_below(0, &untouched));
    fail_random = true;
    CU_ASSERT_FALSE(tokens_random_below(BOUND, &untouched));
    fail_random = false;
    CU_ASSERT_EQUAL(untouched, 12345);
}

int test_tokens_register(void)
{
    CU_pSuite suite = CU_add_suite("tokens", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    if (!CU_add_test(suite, "test_without_a_secret_no_hash_or_seal_is_made_and_no_two_failures_compare_equal",
                     test_without_a_secret_no_hash_or_seal_is_made_and_no_two_failures_compare_equal)
        || !CU_add_test(suite, "test_a_failed_rand_bytes_at_start_refuses_to_start_and_makes_no_ids",
                        test_a_failed_rand_bytes_at_start_refuses_to_start_and_makes_no_ids)
        || !CU_add_test(suite, "test_a_token_secret_under_32_bytes_is_refused_without_echoing_it",
                        test_a_token_secret_under_32_bytes_is_refused_without_echoing_it)
        || !CU_add_test(suite, "test_replicas_racing_for_the_shared_secret_all_read_the_one_stored_first",
                        test_replicas_racing_for_the_shared_secret_all_read_the_one_stored_first)
        || !CU_add_test(suite, "test_game_requests_wait_while_redis_is_unreachable_or_holds_an_unusable_secret",
                        test_game_requests_wait_while_redis_is_unreachable_or_holds_an_unusable_secret)
        || !CU_add_test(suite, "test_the_shared_secret_keys_hashes_and_the_sealing_of_kept_answers",
                        test_the_shared_secret_keys_hashes_and_the_sealing_of_kept_answers)
        || !CU_add_test(suite, "test_readiness_stores_a_lost_shared_secret_again_and_refuses_a_replaced_one",
                        test_readiness_stores_a_lost_shared_secret_again_and_refuses_a_replaced_one)
        || !CU_add_test(suite, "test_a_failed_hmac_gives_no_hash_and_two_failures_never_compare_equal",
                        test_a_failed_hmac_gives_no_hash_and_two_failures_never_compare_equal)
        || !CU_add_test(suite, "test_random_below_covers_its_range_evenly_and_fails_with_rand_bytes",
                        test_random_below_covers_its_range_evenly_and_fails_with_rand_bytes))
        return CU_get_error();
    return CUE_SUCCESS;
}
