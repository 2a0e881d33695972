/* The Idempotency-Key protocol of writes, apart from HTTP and the store:
 * which keys are accepted, a request's fingerprint, and the kept answer.
 * A kept answer is "<fingerprint> <status> <version>\n<location>\n<body>",
 * sealed with tokens_seal() (a creation's answer holds the player tokens),
 * and answers a retry only when the retry's fingerprint is the same. */
#ifndef CHESSD_API_GAME_IDEMPOTENCY_H
#define CHESSD_API_GAME_IDEMPOTENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    IDEM_KEY_MAX = 255,
    IDEM_CREATION_KEY_MIN = 22, /* 128 bits of base64url */
    IDEM_FINGERPRINT_SIZE = 65, /* hex SHA-256, terminated */
    IDEM_LOCATION_SIZE = 96,
};

typedef enum { IDEM_KEY_OK = 0, IDEM_KEY_INVALID, IDEM_KEY_WEAK } idem_key_check_t;

/* Checks a client's key. In a game a key is 1 to 255 characters: its kept
 * answer is scoped to the caller's token. A creation has no caller to scope
 * to, so its key is the only secret guarding the kept answer: 22 to 255
 * base64url characters. Anything else gets the reason in detail. */
idem_key_check_t idem_check_key(const char *key, bool creation, char *detail, size_t detail_size);

/* The fingerprint of a request: method, path, query (its parameters as the
 * caller lists them, query_length bytes), If-Match (or its absence) and
 * body. False when the digest fails (out is then unusable: no two failures
 * compare equal because there is nothing to compare). */
bool idem_fingerprint(const char *method, const char *path, const char *query, size_t query_length,
                      const char *if_match, const char *body, size_t body_length, char out[IDEM_FINGERPRINT_SIZE]);

/* The sealed kept answer (malloc'd, caller frees), or NULL on failure. */
char *idem_kept_seal(const char *fingerprint, unsigned status, uint64_t version, const char *location,
                     const char *body, size_t body_length);

typedef struct {
    unsigned status;
    uint64_t version;
    char location[IDEM_LOCATION_SIZE];
    char *body; /* malloc'd, owned by the caller */
    size_t body_length;
} idem_answer_t;

typedef enum {
    IDEM_REPLAY_OK = 0,   /* *out is the first answer */
    IDEM_REPLAY_OTHER,    /* the key came with another request */
    IDEM_REPLAY_SEALED,   /* cannot be opened (altered, or another secret) */
    IDEM_REPLAY_CORRUPT,  /* opened but not a kept answer, or out of memory */
} idem_replay_t;

/* Opens a kept answer for a retry whose fingerprint is given. */
idem_replay_t idem_kept_open(const char *sealed, const char *fingerprint, idem_answer_t *out);

#endif
