/* The game store: game records in Redis under chessd:game:<id>, each write a
 * compare-and-set on the record's version in one atomic step (a Lua script),
 * with optional idempotency keys stored in the same step. The store is
 * shared by all server threads; each thread gets its own Redis connection,
 * made on first use and remade after any failure. A failed write says whether
 * it was surely not made (STORE_EUNAVAILABLE) or may have been (STORE_EUNKNOWN). */
#ifndef CHESSD_STORE_STORE_H
#define CHESSD_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store store_t;

typedef enum {
    STORE_OK = 0,
    STORE_ENOT_FOUND,   /* no such game */
    STORE_ECONFLICT,    /* the stored version is not the expected one */
    STORE_EEXISTS,      /* create: the id is taken */
    STORE_EREPLAY,      /* idempotency key already used: *replay holds the first answer */
    STORE_EUNAVAILABLE, /* Redis cannot be reached, did not answer in time, or cannot serve now (LOADING...);
                         * for a write: it was not made (not wholly sent, or refused), so it is safe to retry */
    STORE_ECORRUPT,     /* Redis answered something this code did not write */
    STORE_EFULL,        /* Redis is out of memory (maxmemory, noeviction) and refused the write: nothing was made */
    STORE_EUNKNOWN,     /* write only: the command was sent but no answer came; it may have been made (or still be) */
    STORE_STATUS_COUNT
} store_status_t;

typedef struct {
    char url[256];              /* redis://[[user]:password@]host[:port][/db] */
    unsigned connect_timeout_ms;
    unsigned command_timeout_ms;
} store_config_t;

/* Checks the configuration (no connection is made yet). NULL on a bad URL,
 * with the reason in err. Free with store_close(). */
store_t *store_open(const store_config_t *cfg, char *err, size_t err_size);
void store_close(store_t *store);

/* PING on this thread's connection. */
store_status_t store_ping(store_t *store);

/* Loads a game's stored text and version. *data is malloc'd (caller frees). */
store_status_t store_game_load(store_t *store, const char *id, char **data, size_t *length, uint64_t *version);

/* A write's idempotency record: when key is set and a record exists under it,
 * the write is not done and STORE_EREPLAY returns the stored answer. */
typedef struct {
    const char *scope;   /* what the key is unique within: a game and caller, or "new" for creation */
    const char *key;     /* the client's Idempotency-Key (NULL: none) */
    const char *answer;  /* what to keep for a replay of this write */
    unsigned ttl_seconds; /* 0: kept forever */
    unsigned keep_max;    /* most answers kept within scope, the oldest dropped first (0: no bound) */
} store_idempotency_t;

/* Writes data as version expected_version + 1 when the stored version is
 * expected_version (0: the game must not exist yet). ttl_seconds 0 keeps the
 * record forever; otherwise the record expires that long after this write.
 * On STORE_ECONFLICT *current_version is the stored one; on STORE_EREPLAY
 * *replay is the stored answer (malloc'd, caller frees). STORE_EUNKNOWN: the
 * command went out and no answer came, or a resend after a lost connection
 * found the version this write would have made (the first send may have made
 * it): read the record back to tell. */
store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version, const char *data,
                                size_t length, unsigned ttl_seconds, const store_idempotency_t *idempotency,
                                uint64_t *current_version, char **replay);

/* Looks up an idempotency record within scope; STORE_ENOT_FOUND when none. */
store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer);

const char *store_status_name(store_status_t status);

typedef struct {
    uint64_t errors;   /* commands that failed, timed out or could not connect */
    uint64_t connects; /* connections made, first ones and reconnects */
} store_stats_t;

/* Counters since store_open(). */
void store_stats(store_t *store, store_stats_t *out);

/* The player-token secret that replicas without CHESSD_TOKEN_SECRET share
 * (see api/token_secret.h), kept without expiry under this key. */
#define STORE_TOKEN_SECRET_KEY "chessd:token-secret"

/* Reads the shared token secret; when the key is missing, stores candidate
 * there first (SET NX, so of replicas racing one wins and all read the same).
 * On STORE_OK *secret is what Redis holds (malloc'd, NUL added, caller frees;
 * binary: *length counts its bytes) and *created tells whether this call
 * stored it. STORE_ECORRUPT: the key holds something other than a string;
 * STORE_EFULL: the key is missing and Redis is too full to store it. */
store_status_t store_token_secret(store_t *store, const char *candidate, char **secret, size_t *length,
                                  bool *created);

#endif
