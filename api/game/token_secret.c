/* See token_secret.h. `shared` is set once by token_secret_init() before
 * the threads. `candidate` (the random secret this replica offers to Redis),
 * `in_use` (the shared secret once taken) and `last` (the last outcome, so
 * each change is logged once) are touched only by the one asking (`asking`
 * taken); `differs` and `asked` are also read without it. `asking` is a
 * flag, not a mutex: a request on a fiber must never block its thread. */
#include "token_secret.h"

#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/clock.h"
#include "../../store/fiber.h"
#include "tokens.h"

enum {
    SHARED_SECRET_MAX = 256, /* bytes, with the NUL */
    ASK_PAUSE_MS = 5,        /* how often one waiting for another's ask looks again */
};

typedef enum {
    OUTCOME_NONE,
    OUTCOME_MADE,        /* this replica stored its candidate */
    OUTCOME_READ,        /* another replica had stored one */
    OUTCOME_RESTORED,    /* the key had gone; the secret in use was stored again */
    OUTCOME_KEPT,        /* Redis still holds the secret in use */
    OUTCOME_UNAVAILABLE, /* Redis cannot be reached or refused the write */
    OUTCOME_UNUSABLE,    /* the key holds no string, or one under TOKENS_SECRET_MIN or over the maximum */
    OUTCOME_DIFFERENT,   /* the key holds another secret than the one in use */
    OUTCOME_CRYPTO,      /* OpenSSL could not derive the keys */
    OUTCOME_COUNT
} outcome_t;

static bool shared;
static atomic_bool asking; /* taken by the one thread or fiber asking Redis */
static char candidate[TOKENS_SECRET_TEXT_SIZE];
static char in_use[SHARED_SECRET_MAX];
static size_t in_use_length;
static outcome_t last = OUTCOME_NONE;
static atomic_bool differs; /* the last check found another secret in Redis */
static atomic_uint asked;   /* how often Redis was asked for the secret (changed while asking) */

bool token_secret_init(const char *env, char *err, size_t err_size)
{
    if (env && *env) {
        /* A short secret can be guessed offline from one stored token hash. */
        if (strlen(env) < TOKENS_SECRET_MIN) {
            snprintf(err, err_size,
                     "CHESSD_TOKEN_SECRET must be at least %d bytes (it has %zu); make one with "
                     "head -c 32 /dev/urandom | base64",
                     TOKENS_SECRET_MIN, strlen(env));
            return false;
        }
        if (!tokens_init(env)) {
            snprintf(err, err_size, "OpenSSL cannot derive the token keys from CHESSD_TOKEN_SECRET");
            return false;
        }
        return true;
    }
    if (!tokens_new_secret(candidate)) {
        snprintf(err, err_size, "the random generator failed (RAND_bytes), so no token secret can be made");
        return false;
    }
    shared = true;
    fprintf(stderr,
            "chessd: warning: CHESSD_TOKEN_SECRET is not set: the replicas on this Redis share one token secret "
            "kept in Redis under %s (the first replica to need it makes it), so anyone who can read that Redis can "
            "make player tokens; in production set CHESSD_TOKEN_SECRET, e.g. from a Kubernetes Secret\n",
            STORE_TOKEN_SECRET_KEY);
    return true;
}

/* Logs outcome when it differs from the last one. While asking. */
static void note(outcome_t outcome, size_t length)
{
    if (outcome == last)
        return;
    last = outcome;
    switch (outcome) {
    case OUTCOME_MADE:
        fprintf(stderr, "chessd: token secret: made one and stored it in Redis under %s\n", STORE_TOKEN_SECRET_KEY);
        break;
    case OUTCOME_READ:
        fprintf(stderr, "chessd: token secret: using the one in Redis under %s\n", STORE_TOKEN_SECRET_KEY);
        break;
    case OUTCOME_RESTORED:
        fprintf(stderr, "chessd: warning: token secret: %s was gone from Redis (restarted without its data?); "
                        "stored the one in use again\n", STORE_TOKEN_SECRET_KEY);
        break;
    case OUTCOME_UNAVAILABLE:
        fprintf(stderr, "chessd: token secret: Redis cannot be reached or refused it; game requests answer 503 "
                        "until it can be read\n");
        break;
    case OUTCOME_UNUSABLE:
        fprintf(stderr, "chessd: error: token secret: %s in Redis is not a string of %d to %d bytes without NULs "
                        "(it is %zu bytes, or not a string); game requests answer 503 until it is deleted (a "
                        "replica then makes a new one) or CHESSD_TOKEN_SECRET is set\n",
                STORE_TOKEN_SECRET_KEY, TOKENS_SECRET_MIN, SHARED_SECRET_MAX - 1, length);
        break;
    case OUTCOME_DIFFERENT:
        fprintf(stderr, "chessd: error: token secret: %s in Redis is no longer the one this replica uses, so "
                        "tokens made by other replicas may be refused here; this replica is not ready until it "
                        "is restarted\n", STORE_TOKEN_SECRET_KEY);
        break;
    case OUTCOME_CRYPTO:
        fprintf(stderr, "chessd: error: token secret: OpenSSL cannot derive the token keys; game requests answer "
                        "503\n");
        break;
    default:
        break;
    }
}

/* Offers offer to Redis (stored only when the key is missing) and reads the
 * key back; the outcome, with what Redis holds in held (NUL-terminated). */
static outcome_t exchange(store_t *store, const char *offer, char held[SHARED_SECRET_MAX], size_t *held_length)
{
    char *value = NULL;
    size_t length = 0;
    bool created = false;
    store_status_t status = store_token_secret(store, offer, &value, &length, &created);
    outcome_t outcome = OUTCOME_UNAVAILABLE;
    *held_length = length;
    if (status == STORE_OK) {
        if (length < TOKENS_SECRET_MIN || length >= SHARED_SECRET_MAX || memchr(value, '\0', length)) {
            outcome = OUTCOME_UNUSABLE;
        } else {
            memcpy(held, value, length + 1);
            outcome = created ? OUTCOME_MADE : OUTCOME_READ;
        }
    } else if (status == STORE_ECORRUPT) {
        outcome = OUTCOME_UNUSABLE; /* a key of another type */
    } /* else unavailable: not reached, timed out, full (nothing stored), or the key went between reads */
    if (value)
        OPENSSL_cleanse(value, length);
    free(value);
    return outcome;
}

/* Takes the shared secret from Redis. While asking, secret not yet known. */
static void take(store_t *store)
{
    char held[SHARED_SECRET_MAX];
    size_t length = 0;
    outcome_t outcome = exchange(store, candidate, held, &length);
    if (outcome == OUTCOME_MADE || outcome == OUTCOME_READ) {
        if (tokens_init(held)) {
            memcpy(in_use, held, length + 1);
            in_use_length = length;
            OPENSSL_cleanse(candidate, sizeof candidate);
        } else {
            outcome = OUTCOME_CRYPTO;
        }
    }
    OPENSSL_cleanse(held, sizeof held);
    note(outcome, length);
}

/* Takes the turn to ask Redis; false when another has it. */
static bool take_turn(void)
{
    bool free_turn = false;
    return atomic_compare_exchange_strong(&asking, &free_turn, true);
}

bool token_secret_ready(store_t *store)
{
    if (tokens_ready() || !shared)
        return tokens_ready();
    /* One thread asks at a time. A thread that waited while another asked
     * takes that answer rather than asking again, so a burst of requests
     * against a Redis that does not answer waits for one timeout, not one each. */
    unsigned before = atomic_load(&asked);
    while (!take_turn()) {
        if (atomic_load(&asked) != before)
            return tokens_ready();
        (void)fiber_wait(-1, 0, clock_now_ms() + ASK_PAUSE_MS); /* a fiber yields meanwhile */
    }
    if (!tokens_ready() && atomic_load(&asked) == before) {
        take(store);
        atomic_fetch_add(&asked, 1);
    }
    atomic_store(&asking, false);
    return tokens_ready();
}

bool token_secret_check(store_t *store)
{
    if (!token_secret_ready(store))
        return false;
    if (!shared)
        return true;
    if (!take_turn())
        return !atomic_load(&differs); /* another probe is checking */
    char held[SHARED_SECRET_MAX];
    size_t length = 0;
    outcome_t outcome = exchange(store, in_use, held, &length);
    if (outcome == OUTCOME_MADE)
        outcome = OUTCOME_RESTORED;
    else if (outcome == OUTCOME_READ)
        outcome = length == in_use_length && CRYPTO_memcmp(held, in_use, length) == 0 ? OUTCOME_KEPT
                                                                                     : OUTCOME_DIFFERENT;
    else if (outcome == OUTCOME_UNUSABLE)
        outcome = OUTCOME_DIFFERENT;
    OPENSSL_cleanse(held, sizeof held);
    /* A failed read is not news: readiness says so through the store's ping. */
    if (outcome != OUTCOME_UNAVAILABLE)
        note(outcome, length);
    atomic_store(&differs, outcome == OUTCOME_DIFFERENT);
    atomic_store(&asking, false);
    return outcome == OUTCOME_KEPT || outcome == OUTCOME_RESTORED;
}
