/* The game store, shared by all threads. A game in Redis is a hash beside
 * an append-only move list and history under one hash tag ({id}); each
 * write is a compare-and-set on its version in one atomic step (a Lua
 * script). Also what every caller needs: the handle, statuses, faults and
 * health. Engine jobs, multi-game streams, the deadline index and the
 * finished-games feed have headers of their own. */
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
    STORE_ELATE,        /* a timed write: Redis's clock is past the mover's flag, or far from the change's time;
                         * or a claim whose absent player was seen since the load (store_game_change_t);
                         * nothing was written: load again and redo the change */
    STORE_EDAMAGED,     /* the game's keys disagree (Redis evicted or lost some of them): nothing was written,
                         * and no write will be until the game is restored or deleted */
    STORE_STATUS_COUNT
} store_status_t;

/* Why Redis cannot be used, as far as chessd can tell. The operator's to
 * fix (a wrong password or database, a TLS setup that fails) are told
 * apart from Redis being away or silent, so that /readyz, /metrics and the
 * problems clients get can name them. */
typedef enum {
    STORE_FAULT_NONE = 0,
    STORE_FAULT_UNREACHABLE,   /* the connection is refused, or the host cannot be resolved or reached */
    STORE_FAULT_TIMEOUT,       /* no answer within the timeouts (a stalled or overloaded Redis, packets dropped) */
    STORE_FAULT_AUTH,          /* AUTH refused, or a password is needed and none was given */
    STORE_FAULT_DATABASE,      /* SELECT refused (a database the server does not have) */
    STORE_FAULT_TLS,           /* the TLS handshake or the server's certificate failed */
    STORE_FAULT_CLUSTER,       /* a Cluster that does not serve every slot, or a node that is no Cluster */
    STORE_FAULT_PROTOCOL,      /* the server does not speak Redis as expected */
    STORE_FAULT_COUNT
} store_fault_t;

/* A stable name for a fault ("auth_refused", "timeout", ...). */
const char *store_fault_name(store_fault_t fault);
/* Whether the fault is the operator's to fix (a setting), not an outage. */
bool store_fault_is_setting(store_fault_t fault);

/* The URL: redis://[[user]:password@]host[:port][/db] for one node,
 * redis+cluster://[[user]:password@]host[:port][,host[:port]...][/] for a
 * Redis Cluster reached through those seed nodes; rediss:// and
 * rediss+cluster:// the same over TLS, with the tls_* settings (a NULL or
 * empty file: none). The user and password are percent-decoded (RFC 3986:
 * "%40" is '@', "%25" is '%'); the credentials end at the URL's last '@', so
 * a password may also hold a bare '@', and the user ends at the first ':'.
 * A password given apart, in password or in the file password_file (not
 * both), is used instead of the URL's, as it is (never decoded), with the
 * URL's user if it names one (redis://user@host). */
typedef struct {
    char url[1024];
    const char *password;      /* NULL or empty: the URL's */
    const char *password_file; /* NULL or empty: none; read once, by store_open, one trailing newline dropped */
    unsigned connect_timeout_ms;
    unsigned command_timeout_ms;
    const char *tls_ca_file;   /* CAs that sign the servers' certificates (default: the system's) */
    const char *tls_cert_file; /* a client certificate and key, for mutual TLS */
    const char *tls_key_file;
    const char *tls_server_name; /* checked against certificates and sent as SNI, instead of each host */
    bool tls_insecure_no_verify; /* accept any certificate */
    /* The breaker. After a command to a node times out or a connection to
     * it cannot be made, the node is marked down and further commands to it
     * fail at once (STORE_EUNAVAILABLE, nothing sent) instead of each
     * waiting for its own timeout, until store_probe() finds it answering
     * again, or a trial does: one command a node is let through every
     * breaker_retry_ms (0: none, only store_probe() brings a node back). */
    bool breaker;
    unsigned breaker_retry_ms;
} store_config_t;

/* Checks the configuration and loads the TLS files and the password file
 * (no connection is made yet). NULL on a bad URL, an unreadable or empty
 * file, or both password and password_file set, with the reason in err (which
 * never holds the password). Free with store_close(). */
store_t *store_open(const store_config_t *cfg, char *err, size_t err_size);
void store_close(store_t *store);

/* PING on this thread's connection; on a cluster, CLUSTER INFO of one node
 * must say every slot is served. */
store_status_t store_ping(store_t *store);

/* A deadline for this thread's store calls, in clock_now_ms() milliseconds
 * (store_now_ms; 0: none, the default): a command is not sent past it
 * (STORE_EUNAVAILABLE, or STORE_EUNKNOWN for a write one of whose tries had
 * already left), and every wait (a connect, a reply) is cut to it. For a
 * request made of several commands, so that together they take no longer
 * than the request may; the caller clears it after. */
void store_set_deadline(int64_t deadline_ms);
int64_t store_now_ms(void);

/* Redis as the breaker last saw it: up (every node answered last time), or
 * down with the first failing node's fault and a sentence on it (naming the
 * node and what failed; never a password). */
typedef struct {
    bool up;
    store_fault_t fault;
    char reason[320];
} store_health_t;

void store_health(store_t *store, store_health_t *out);

/* Whether Redis refused a command for lack of memory (an OOM reply: at
 * maxmemory with noeviction, or nothing left to evict) since the last game
 * write it took and the last store_memory_read that found room. Never
 * waits: one atomic. */
bool store_is_full(store_t *store);

/* Redis's memory settings and use (store_memory.c), read from every node
 * that holds games (each master of a Cluster): maxmemory-policy and
 * maxmemory by CONFIG GET, or from INFO memory where CONFIG is refused or
 * renamed (managed services), and used_memory from INFO memory. */
enum { STORE_MEMORY_POLICY_SIZE = 32, STORE_MEMORY_NODE_SIZE = 280 };
typedef struct {
    /* The policy of the first node read whose policy is not noeviction
     * (else the first node's): "noeviction", "allkeys-lru"... or
     * "unknown" when that node answered neither CONFIG GET nor INFO. */
    char policy[STORE_MEMORY_POLICY_SIZE];
    uint64_t maxmemory;   /* that node's, in bytes (0: no limit) */
    char node[STORE_MEMORY_NODE_SIZE]; /* "host:port" of that node */
    unsigned nodes;       /* nodes read */
    bool room;            /* every node read has no maxmemory or uses less than it */
} store_memory_t;

/* Reads *out (store_memory_t); on this thread's connections, under the
 * breaker and the timeouts, so call it from a background thread. When every
 * node read has room, a refusal for memory older than the read is
 * forgotten (store_is_full). STORE_EUNAVAILABLE when a node did not answer
 * (*out then holds what the others said, nodes counting them). */
store_status_t store_memory_read(store_t *store, store_memory_t *out);

/* fn(ctx) is called (on the thread that found it, with no lock held) each
 * time a node is marked down, so that a prober can look at once; NULL: none.
 * It must not block. */
void store_on_down(store_t *store, void (*fn)(void *ctx), void *ctx);

/* One health probe, for a background thread: PING (on a cluster, CLUSTER
 * INFO must say every slot is served) past the breaker, on this thread's
 * connection, then a PING to each node the breaker holds down; nodes that
 * answer are marked up, those that fail down. Takes up to the timeouts for
 * each silent node. STORE_OK when all answered. */
store_status_t store_probe(store_t *store);

/* On a cluster a write may only touch keys of one hash slot. A game's keys
 * share its id's slot; an idempotency record in a game's scope shares it
 * too, and a creation's record has a slot of its own: the one its new game's
 * id must fall in (draw ids until store_id_slot(id) equals
 * store_idempotency_slot(scope, key)). On one node the slots mean nothing
 * and cost nothing. */
unsigned store_id_slot(const char *id);
unsigned store_idempotency_slot(const char *scope, const char *key);
/* Rewrites id's last three characters (each one of alphabet's 64) so that
 * store_id_slot(id) is slot, in one lookup: for many ids in one slot (a
 * bulk's games). False, id unchanged, when it cannot. */
bool store_id_fit_slot(char *id, const char alphabet[64], unsigned slot);

/* What a load reads: for a change, the game's state and the tail of its
 * repetition history (bounded, whatever the game's length); in full, the
 * same, the whole move list and the game's tags and metadata. */
typedef enum { STORE_LOAD_CHANGE = 0, STORE_LOAD_FULL } store_load_t;

/* Bytes of one history entry (a position key in hex). */
enum { STORE_HISTORY_ENTRY_SIZE = 16 };

/* Bytes of a game id (or a multi-game stream's id) and its NUL
 * (GAME_ID_SIZE); named for the engine jobs, the first to need it. */
enum { STORE_ENGINE_ID_SIZE = 24 };

/* A game as read. Every text is malloc'd and NUL-terminated (the length
 * excludes the NUL), owned by the value: free with store_game_clear(). A
 * record of the first format (one JSON text) comes as legacy, nothing else set. */
/* Bytes of a game's subscriptions text (store/webhooks.h), the NUL included. */
enum { STORE_WEBHOOKS_TEXT_SIZE = 320 };

/* Characters of a write id (the store's tag of each write, see
 * store_game_change_t), the NUL included. */
enum { STORE_WRITE_ID_SIZE = 33 };

typedef struct {
    uint64_t version;
    char write_id[STORE_WRITE_ID_SIZE]; /* "" for a game written without one */
    char *state;
    size_t state_length;
    char *history;   /* the last history_count entries */
    size_t history_length;
    char *moves;     /* STORE_LOAD_FULL: the move list */
    size_t moves_length;
    char *meta;      /* STORE_LOAD_FULL: the tags and metadata text (store/game_meta.h); NULL: none */
    size_t meta_length;
    char *legacy;    /* the whole record of the first format */
    size_t legacy_length;
    int64_t now_ms;  /* Redis's clock (TIME) when it was read, in Unix milliseconds; 0 for legacy */
    int64_t seen_ms[2]; /* when each player (white, black) was last seen, on Redis's clock; 0: never */
    char webhooks[STORE_WEBHOOKS_TEXT_SIZE]; /* its subscriptions, "<sub>=<kinds> ..." (store/webhooks.h); "": none */
} store_game_t;

void store_game_clear(store_game_t *game);

/* Loads game id; on success *out holds it (cleared first; clear it after). */
store_status_t store_game_load(store_t *store, const char *id, store_load_t what, store_game_t *out);

/* Players' presence: when each player was last seen, on Redis's clock,
 * kept in the game's hash (every load reads it: seen_ms). Not keys of
 * their own with a TTL: such a key is missing most of the time, and a
 * Cluster refuses (TRYAGAIN) a script naming keys of which some are
 * missing while their slot moves, so every load of the game would fail
 * then. The caller judges how old a sign may be. This load
 * (STORE_LOAD_CHANGE) first marks the players of bit mask `present` (bit
 * 0 white, bit 1 black) seen now, in the same step: an open stream's
 * player, say. A game not there (or damaged) marks no one. */
store_status_t store_game_load_present(store_t *store, const char *id, unsigned present, store_game_t *out);

/* How a write changes the append-only parts (move list and history). */
typedef enum {
    STORE_LINE_KEEP = 0, /* unchanged */
    STORE_LINE_APPEND,   /* moves and history texts appended */
    STORE_LINE_SET,      /* replaced by moves and history texts */
    STORE_LINE_TRUNCATE, /* cut to moves_keep and history_keep bytes */
} store_line_op_t;

/* A game's new state: the state text, the count of history entries a change
 * load returns, and what happens to the move list and history. */
typedef struct {
    const char *state;
    size_t state_length;
    unsigned history_count;
    store_line_op_t line_op;
    const char *moves;   /* APPEND, SET */
    size_t moves_length;
    const char *history; /* APPEND, SET */
    size_t history_length;
    size_t moves_keep, history_keep; /* TRUNCATE */
    bool replaces_legacy; /* the game is stored in the first format: the write replaces that record */
    /* The write id the stored game must have (NULL or "": not checked), and
     * this write's (NULL: ""). A version is only made once, unless Redis
     * lost writes; ids drawn at random tell such twins apart, so a change
     * made on a copy of one never lands on the other. */
    const char *expected_write_id, *write_id;
    /* A timed change: the Redis time (a load's now_ms) it was computed at,
     * and when the mover's flag falls (0: no running clock). The write is
     * STORE_ELATE when Redis's clock, read in the write, is past the flag or
     * more than a second from time_from_ms. 0: no check. */
    int64_t time_from_ms, deadline_ms;
    /* Published on the game's channel (store_game_channel) in the same
     * atomic step, when event_length > 0. */
    const char *event;
    size_t event_length;
    /* A creation's tags and metadata text (store/game_meta.h), kept beside
     * the state and read by full loads only (meta_length 0: none). A
     * change leaves the text the game has. */
    const char *meta;
    size_t meta_length;
    /* Presence (store_game_load_present). The player who made the change,
     * 1 + the colour (0: none), is marked seen in the same step: acting is
     * being there. A claim's guard: the other player, 1 + the colour (0:
     * none), must still have been last seen at absent_seen_ms as loaded
     * (0: never), else the write is STORE_ELATE (they came back meanwhile:
     * load again and redo). */
    int seen;
    int absent;
    int64_t absent_seen_ms;
    /* Webhooks (store/webhooks.h). A creation's subscriptions text, kept in
     * the game's hash (NULL: none). The change's outbox entry, its first
     * line (webhook_entry) and then its event, appended in the same step to
     * the outbox of each of the webhook_count subscriptions in webhook_subs,
     * each marked due (on a Cluster right after). */
    const char *webhooks;
    const char *webhook_entry;
    size_t webhook_entry_length;
    const char *const *webhook_subs;
    unsigned webhook_count;
} store_game_change_t;

/* The Pub/Sub channel of game id's events: "chessd:events:{<id>}". */
enum { STORE_CHANNEL_SIZE = 64 };
void store_game_channel(const char *id, char *out);

/* A write's idempotency record: when key is set and a record exists under it,
 * the write is not done and STORE_EREPLAY returns the stored answer. */
typedef struct {
    const char *scope;   /* what the key is unique within: a game and caller, or "new" for creation */
    const char *key;     /* the client's Idempotency-Key (NULL: none) */
    const char *answer;  /* what to keep for a replay of this write */
    unsigned ttl_seconds; /* 0: kept forever */
    unsigned keep_max;    /* most answers kept within scope, the oldest dropped first (0: no bound) */
} store_idempotency_t;

/* Writes change as version expected_version + 1 when the stored version is
 * expected_version (0: the game must not exist yet), in one atomic step. A
 * move sends only its own bytes (STORE_LINE_APPEND). ttl_seconds 0 keeps the
 * game forever; otherwise it expires that long after this write. On
 * STORE_ECONFLICT *current_version is the stored one; on STORE_EREPLAY
 * *replay is the stored answer (malloc'd, caller frees). STORE_EUNKNOWN: the
 * command went out and no answer came, or a resend after a lost connection
 * found the version this write would have made (the first send may have made
 * it): read the game back to tell (its state text is this write's or not). */
store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay);

/* Looks up an idempotency record within scope; STORE_ENOT_FOUND when none. */
store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer);

const char *store_status_name(store_status_t status);

typedef struct {
    uint64_t errors;   /* commands that failed, timed out or could not connect */
    uint64_t connects; /* connections made, first ones and reconnects */
    uint64_t redirects; /* MOVED and ASK answers followed (a cluster's slots moving) */
    uint64_t fast_failures; /* commands failed unsent because their node was held down (the breaker) */
} store_stats_t;

/* Counters since store_open(). */
void store_stats(store_t *store, store_stats_t *out);

/* The player-token secret that replicas without CHESSD_TOKEN_SECRET share
 * (see api/game/token_secret.h), kept without expiry under this key. */
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
