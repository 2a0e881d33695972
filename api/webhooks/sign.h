/* Standard Webhooks signing (www.standardwebhooks.com, "symmetric"): secrets
 * "whsec_" + base64, the signature "v1," + base64(HMAC-SHA256(key,
 * "id.timestamp.body")) keyed by the decoded secret, and message ids that a
 * retry repeats. Pure functions over caller buffers, safe on any thread; a
 * secret is never written anywhere but the buffer it is made into. */
#ifndef CHESSD_API_WEBHOOKS_SIGN_H
#define CHESSD_API_WEBHOOKS_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WEBHOOK_SECRET_PREFIX "whsec_"

enum {
    WEBHOOK_SECRET_BYTES = 32,       /* the random bytes of a secret made here */
    WEBHOOK_KEY_MIN = 24,            /* a secret's decoded bytes, as the specification bounds them */
    WEBHOOK_KEY_MAX = 64,
    WEBHOOK_SECRET_SIZE = 6 + 88 + 1, /* room for any accepted secret's text and its NUL */
    WEBHOOK_MESSAGE_ID_SIZE = 4 + 22 + 1, /* "msg_", 22 base64url characters, NUL */
    WEBHOOK_SIGNATURE_ONE = 3 + 44,  /* "v1," and one signature's base64 */
    WEBHOOK_SIGNATURES_MAX = 4,      /* secrets signed with at once (a rotation) */
    WEBHOOK_SIGNATURE_SIZE = WEBHOOK_SIGNATURES_MAX * (WEBHOOK_SIGNATURE_ONE + 1), /* the header's value and NUL */
};

/* A new secret, "whsec_" and the base64 (with padding) of WEBHOOK_SECRET_BYTES
 * from RAND_bytes, into out. False (out emptied) when OpenSSL has no
 * randomness to give. The caller shows it once and keeps it secret. */
bool webhook_secret_make(char out[WEBHOOK_SECRET_SIZE]);

/* The HMAC key of secret: "whsec_" then base64 (standard alphabet, padding
 * optional), decoding to WEBHOOK_KEY_MIN..WEBHOOK_KEY_MAX bytes. False for
 * anything else. */
bool webhook_secret_key(const char *secret, unsigned char key[WEBHOOK_KEY_MAX], size_t *key_length);

/* The webhook-signature header's value for the message id, timestamp (Unix
 * seconds) and body: one "v1,<base64>" per secret, separated by spaces, in the
 * order given (1..WEBHOOK_SIGNATURES_MAX secrets, each as webhook_secret_key
 * takes it). False (out emptied) when a secret is not one, the id holds a
 * '.' or is empty, or OpenSSL fails. */
bool webhook_sign(const char *const *secrets, size_t secret_count, const char *id, int64_t timestamp,
                  const void *body, size_t body_length, char out[WEBHOOK_SIGNATURE_SIZE]);

/* "msg_" and base64url (no padding) of the first 16 bytes of SHA-256(seed):
 * the same seed always gives the same id, so a retry or a duplicate delivery
 * of one event carries one id. The caller picks a seed naming the event and
 * its subscription (e.g. "sub_123:game:abc:v42"). False (out emptied) only
 * when OpenSSL cannot hash. */
bool webhook_message_id(const char *seed, char out[WEBHOOK_MESSAGE_ID_SIZE]);

#endif
