/* Service keys (--service-keys-file): the backends allowed on the scoped routes, each with its scopes and
 * quotas. The file has a line per key, `NAME SCOPES QUOTAS SHA256HEX`, never the key itself. A key is
 * matched by its SHA-256 in constant time against every line. The file is re-read when it changes, and
 * its table swapped whole: a request sees the old table or the new one, never a mix. */
#ifndef CHESSD_API_SERVICE_KEYS_H
#define CHESSD_API_SERVICE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key is the prefix and 43 base64url characters (32 random bytes). A
 * player token is 22 characters, so it can never be one. */
#define SERVICE_KEY_PREFIX "chsk_"
enum {
    SERVICE_KEY_PREFIX_LENGTH = 5,
    SERVICE_KEY_LENGTH = 48,
    SERVICE_KEY_SIZE = SERVICE_KEY_LENGTH + 1,
    SERVICE_KEY_NAME_MAX = 64,
    SERVICE_KEY_HASH_HEX = 64,    /* SHA-256 in lower-case hex, as sha256sum prints it */
    SERVICE_KEYS_LINE_MAX = 1024, /* a line's bytes, its newline left out */
    SERVICE_KEYS_MAX = 1000,      /* keys a file may hold: each request that shows one is compared with all */
    SERVICE_KEYS_QUOTA_MAX = 1000000
};

/* The quotas `chessd keys new` writes on a key's line: more than one
 * address gets by default (10 creations and 100 bulk games a second), for
 * a backend that creates for many people. An operator edits them. */
#define SERVICE_KEYS_DEFAULT_QUOTAS "requests=200/s,creates=50/s,bulk-games=1000/s"

/* What a key may do; admin may do everything. games:read-live sees games
 * being played live, past their spectator delay (api/game/spectator.h). */
typedef enum {
    SERVICE_SCOPE_GAMES_CREATE = 0,
    SERVICE_SCOPE_GAMES_BULK,
    SERVICE_SCOPE_GAMES_EXPORT,
    SERVICE_SCOPE_GAMES_READ_LIVE,
    SERVICE_SCOPE_ANALYSIS,
    SERVICE_SCOPE_ADMIN,
    SERVICE_SCOPE_COUNT
} service_scope_t;

/* A key's budgets, each a token bucket of its own: requests (in place of
 * --rate-limit-ip and --rate-limit-token), creations (of
 * --rate-limit-create; a bulk is one) and games made by bulks (of
 * --rate-limit-bulk-games). */
typedef enum { SERVICE_QUOTA_REQUESTS = 0, SERVICE_QUOTA_CREATES, SERVICE_QUOTA_BULK_GAMES, SERVICE_QUOTA_COUNT } service_quota_t;

/* The scope's name in the file and in problems ("games:create"), and the
 * quota's ("bulk-games"); "?" outside the enum. */
const char *service_scope_name(service_scope_t scope);
const char *service_quota_name(service_quota_t quota);

/* One line of the file, read. */
typedef struct {
    char name[SERVICE_KEY_NAME_MAX + 1];
    unsigned scopes;                   /* 1 << scope for each; admin sets them all */
    long quotas[SERVICE_QUOTA_COUNT];  /* a second; 0: no limit; -1: the setting it replaces */
    char hash[SERVICE_KEY_HASH_HEX + 1];
} service_key_line_t;

typedef enum { SERVICE_LINE_KEY = 0, SERVICE_LINE_NONE, SERVICE_LINE_BAD } service_line_t;

/* Reads one line (length bytes, no newline; a trailing '\r' and blanks are
 * ignored). SERVICE_LINE_NONE for a blank line or a comment ('#' first);
 * SERVICE_LINE_BAD with err saying why, never echoing a key or a hash. */
service_line_t service_keys_parse_line(const char *line, size_t length, service_key_line_t *out, char *err,
                                       size_t err_size);

/* Whether authorization (an Authorization header's value, or NULL) is
 * "Bearer " (any case) and a key's exact form: the prefix, then 43
 * base64url characters, nothing more. */
bool service_keys_is_key(const char *authorization);

/* SHA-256 of key in lower-case hex, as the file holds it; false when
 * OpenSSL fails. */
bool service_keys_hash(const char *key, size_t length, char out[SERVICE_KEY_HASH_HEX + 1]);

typedef struct service_keys service_keys_t;

/* The rates of the per-address settings a key's quota replaces, for a line
 * that says `-` for it (0: no limit). */
typedef struct {
    unsigned rate[SERVICE_QUOTA_COUNT];
} service_keys_limits_t;

/* Reads the file at path: NULL, with err naming the file and the line,
 * when it cannot be read or a line is bad, or two lines share a name or a
 * hash. An empty file is fine: keys are required and none is valid. */
service_keys_t *service_keys_open(const char *path, const service_keys_limits_t *limits, char *err, size_t err_size);
/* NULL is fine. */
void service_keys_free(service_keys_t *keys);
/* Keys in the table now. */
unsigned service_keys_count(service_keys_t *keys);

/* Reads the file again when it has changed (its inode, size or times), at
 * most once a second by now_us: a good file replaces the table, with the
 * quotas' buckets of the names kept; a bad one keeps the old table, with
 * one warning on stderr per change. Every lookup below calls it. */
void service_keys_refresh(service_keys_t *keys, uint64_t now_us);

typedef enum {
    SERVICE_KEYS_OK = 0,
    SERVICE_KEYS_ENONE,    /* no key: no Authorization, or not "Bearer " and a key's form */
    SERVICE_KEYS_EINVALID, /* a key's form that no line has */
    SERVICE_KEYS_ESCOPE,   /* a key of the table without the scope */
    SERVICE_KEYS_ESPENT,   /* a key of the table past one of its quotas */
    SERVICE_KEYS_STATUS_COUNT
} service_keys_status_t;

/* Whether authorization holds a key of the table with scope (admin holds
 * them all). With SERVICE_KEYS_OK and SERVICE_KEYS_ESCOPE, name is the key's. */
service_keys_status_t service_keys_check(service_keys_t *keys, const char *authorization, service_scope_t scope,
                                         uint64_t now_us, char name[SERVICE_KEY_NAME_MAX + 1]);

/* A quota spent: its name for a problem's limit ("service-key:NAME:creates"),
 * its rate, the seconds to wait and the words of the refusal. */
typedef struct {
    char limit[SERVICE_KEY_NAME_MAX + 32];
    unsigned max, retry_after;
    char detail[256];
} service_keys_spent_t;

/* Takes counts[q] from each quota q of authorization's key, in order,
 * stopping at the first that has too few (SERVICE_KEYS_ESPENT, *spent
 * filled). SERVICE_KEYS_ENONE or SERVICE_KEYS_EINVALID when it holds no
 * key of the table: the caller counts the request per address. */
service_keys_status_t service_keys_take(service_keys_t *keys, const char *authorization,
                                        const unsigned counts[SERVICE_QUOTA_COUNT], uint64_t now_us,
                                        service_keys_spent_t *spent);

#endif
