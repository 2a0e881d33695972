/* Where the player-token secret comes from: CHESSD_TOKEN_SECRET, or else one
 * secret that the replicas share through Redis (the first to need it stores a
 * random one with SET NX; see store_token_secret). Until a replica knows it,
 * its game requests answer 503 store_unavailable and it is not ready; it asks
 * Redis again on the next one. It never falls back to a secret of its own,
 * and never logs the secret. */
#ifndef CHESSD_API_GAME_TOKEN_SECRET_H
#define CHESSD_API_GAME_TOKEN_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include "../../store/store.h"

/* At start, before the threads. env is CHESSD_TOKEN_SECRET's value (NULL or
 * empty: share one through Redis, with a warning on stderr). False, with a
 * sentence in err, when the process must not start: a secret shorter than
 * TOKENS_SECRET_MIN bytes, or no random bytes for a shared one. */
bool token_secret_init(const char *env, char *err, size_t err_size);

/* Whether the secret is known; when it is not, asks Redis through store (on
 * this thread's connection), or, when another thread is asking, waits for its
 * answer. Each change of outcome is logged once. Any thread, after init. */
bool token_secret_ready(store_t *store);

/* For readiness: token_secret_ready(), and for a shared secret also that
 * Redis still holds the one in use (stored again when the key is gone, say
 * after a Redis restart without persistence; a different one there is logged
 * as an error and makes this false). */
bool token_secret_check(store_t *store);

#endif
