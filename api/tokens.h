/* Secrets: game ids and player tokens from OpenSSL's RAND_bytes, written in
 * base64url; tokens are kept only as HMAC-SHA256 under the server secret and
 * compared in constant time. tokens_init() must run before the threads. */
#ifndef CHESSD_API_TOKENS_H
#define CHESSD_API_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

enum { TOKENS_ID_SIZE = 17, TOKENS_TOKEN_SIZE = 23, TOKENS_HASH_SIZE = 65, TOKENS_SECRET_MIN = 32 };

/* Sets the HMAC secret; NULL or empty makes a random one (and returns false
 * so the caller can warn: tokens then die with the process). */
bool tokens_init(const char *secret);
/* 96 random bits as 16 base64url characters. False when RAND_bytes fails. */
bool tokens_new_id(char out[TOKENS_ID_SIZE]);
/* 128 random bits as 22 base64url characters. */
bool tokens_new_token(char out[TOKENS_TOKEN_SIZE]);
/* Hex HMAC-SHA256 of token under the secret. */
bool tokens_hash(const char *token, char out[TOKENS_HASH_SIZE]);
/* Whether a hash made by tokens_hash() equals stored_hash, in constant time. */
bool tokens_hash_equal(const char *hash, const char *stored_hash);
/* Encrypts and authenticates text (AES-256-GCM under a key derived from the
 * secret) for keeping at rest; returns base64 text (malloc'd, caller frees)
 * or NULL. Kept answers hold player tokens, which must not sit in Redis in
 * the clear. */
char *tokens_seal(const char *text, size_t length);
/* Reverses tokens_seal(); NULL when the text was not sealed with this secret
 * or was altered. The result is malloc'd and NUL-terminated. */
char *tokens_open(const char *sealed);

/* Whether text could be an id we made (16 base64url characters). */
bool tokens_is_id(const char *text);

#endif
