/* Secrets: game ids and player tokens from OpenSSL's RAND_bytes, written in
 * base64url; tokens are kept only as HMAC-SHA256 under the server secret and
 * compared in constant time. The secret is set once (tokens_init), from any
 * thread; until then, and whenever OpenSSL fails, every function that needs
 * it says so by its result, never with a value that could pass for a good one. */
#ifndef CHESSD_API_GAME_TOKENS_H
#define CHESSD_API_GAME_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TOKENS_ID_SIZE = 17,
    TOKENS_TOKEN_SIZE = 23,
    TOKENS_HASH_SIZE = 65,
    TOKENS_SECRET_MIN = 32,      /* bytes: shorter secrets can be guessed offline from one stored hash */
    TOKENS_SECRET_TEXT_SIZE = 44 /* a made secret: 256 random bits as 43 base64url characters */
};

/* Sets the HMAC secret (and the sealing key derived from it) to the text's
 * bytes; the caller checks its length. Only the first call that succeeds
 * counts: false when a secret is already set, text is NULL or empty, or
 * OpenSSL cannot derive the sealing key (then no secret is set). Other
 * threads see the secret whole or not at all. */
bool tokens_init(const char *secret);
/* Whether tokens_init() has succeeded. */
bool tokens_ready(void);
/* A new secret: 256 random bits as base64url text. False when RAND_bytes
 * fails (out is then the empty string). */
bool tokens_new_secret(char out[TOKENS_SECRET_TEXT_SIZE]);
/* 96 random bits as 16 base64url characters. False when RAND_bytes fails. */
bool tokens_new_id(char out[TOKENS_ID_SIZE]);
/* A new id for which fits(id, ctx) is true: a random id whose last three
 * characters are walked until it fits (at least 78 random bits remain). For
 * a condition met by about one id in N, N calls of fits on average. False
 * when RAND_bytes fails or no id fitted (out is then the empty string). */
/* The 64 characters ids are made of (base64url's). */
const char *tokens_id_alphabet(void);
bool tokens_new_id_where(char out[TOKENS_ID_SIZE], bool (*fits)(const char *id, void *ctx), void *ctx);
/* A tag for one write of a game (96 bits, written as an id): unique with
 * overwhelming odds, not a secret (a fast per-thread generator seeded from
 * RAND_bytes). */
bool tokens_new_write_id(char out[TOKENS_ID_SIZE]);
/* 128 random bits as 22 base64url characters. False when RAND_bytes fails. */
bool tokens_new_token(char out[TOKENS_TOKEN_SIZE]);
/* Hex HMAC-SHA256 of token under the secret. False when no secret is set or
 * the HMAC fails; out is then the empty string, which equals no hash. */
bool tokens_hash(const char *token, char out[TOKENS_HASH_SIZE]);
/* Whether a hash made by tokens_hash() equals stored_hash, in constant time.
 * False unless both are whole hashes (64 characters): two failed hashes never
 * compare equal. */
bool tokens_hash_equal(const char *hash, const char *stored_hash);
/* Encrypts and authenticates text (AES-256-GCM under a key derived from the
 * secret) for keeping at rest; returns base64 text (malloc'd, caller frees)
 * or NULL (also when no secret is set). Kept answers hold player tokens,
 * which must not sit in Redis in the clear. */
char *tokens_seal(const char *text, size_t length);
/* Reverses tokens_seal(); NULL when the text was not sealed with this secret
 * or was altered, or no secret is set. The result is malloc'd and NUL-terminated. */
char *tokens_open(const char *sealed);

/* A uniform random number in 0..bound-1 (bound >= 1) from RAND_bytes,
 * without modulo bias: draws that fall in the incomplete last block of
 * 2^32 are drawn again. False when RAND_bytes fails (*out untouched). */
bool tokens_random_below(uint32_t bound, uint32_t *out);

/* Whether text could be an id we made (16 base64url characters). */
bool tokens_is_id(const char *text);
/* What such an id looks like, in words, for a refusal. */
#define TOKENS_ID_FORM "16 characters of A-Z, a-z, 0-9, '-' and '_'"

#endif
