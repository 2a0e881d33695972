/* The game store: a game in Redis is a hash (version, state text, history
 * count) beside an append-only move list and an append-only history of
 * position keys, all under one hash tag ({id}); each write is a
 * compare-and-set on the version in one atomic step (a Lua script), with
 * optional idempotency keys stored in the same step. The store is
 * shared by all threads; each thread gets its own Redis connection, made on
 * first use and remade after any failure. A failed write says whether it
 * was surely not made (STORE_EUNAVAILABLE) or may have been (STORE_EUNKNOWN).
 * With the breaker on (store_config_t), a node that stops answering is held
 * down and its commands fail at once until store_probe() sees it again;
 * store_health() tells why it is down (store_fault_t). The computer's
 * turns are durable jobs beside the games (engine jobs, below). */
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

/* A deadline for this thread's store calls, in sock_now_ms() milliseconds
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

/* What a load reads: for a change, the game's state and the tail of its
 * repetition history (bounded, whatever the game's length); in full, the
 * same and the whole move list. */
typedef enum { STORE_LOAD_CHANGE = 0, STORE_LOAD_FULL } store_load_t;

/* Bytes of one history entry (a position key in hex). */
enum { STORE_HISTORY_ENTRY_SIZE = 16 };

/* A game as read. Every text is malloc'd and NUL-terminated (the length
 * excludes the NUL), owned by the value: free with store_game_clear(). A
 * record of the first format (one JSON text) comes as legacy, nothing else set. */
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
    char *legacy;    /* the whole record of the first format */
    size_t legacy_length;
    int64_t now_ms;  /* Redis's clock (TIME) when it was read, in Unix milliseconds; 0 for legacy */
} store_game_t;

void store_game_clear(store_game_t *game);

/* Loads game id; on success *out holds it (cleared first; clear it after). */
store_status_t store_game_load(store_t *store, const char *id, store_load_t what, store_game_t *out);

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

/* --- engine jobs (engine_jobs.c) ---
 * The computer's turn in a game against it is a durable job in Redis, not a
 * thread on one replica: any replica's engine worker may do it, and one
 * that dies leaves it to another. A job is {game id, version v}: "the game
 * is at version v and the computer is to move" (game_record_engine_to_move
 * of the record at v). A job added waits in the backlog: one queue per
 * owner (the client whose request made the turn), served in turn, one job
 * of each owner in a round, except that a turn whose game would be lost
 * within STORE_ENGINE_URGENT_MS (its deadline) goes first, every other
 * turn at most. A claim moves
 * the next one to a Redis Stream with one consumer group
 * (STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP), which holds the turns being
 * played and their leases. A turn is in the backlog or in the stream once
 * at most. An intent index, a sorted set (STORE_ENGINE_DUE_KEY) of members
 * "<id>:<v>" scored by the Redis time the move must be made by, finds the
 * turns whose job was lost; a turn queued or claimed pushes its intent
 * STORE_ENGINE_RECHECK_MS on, so that one only waiting is not taken for
 * lost.
 *
 * The protocol, in this order:
 *   1. store_engine_due_set(id, v, due)  before the write that makes version
 *      v with the computer to move (due: that write's Redis time, a load's
 *      now_ms or store_engine_now, plus what the think may take and a margin);
 *   2. store_game_write(...)             the game at v, computer to move;
 *   3. store_engine_turn_add(id, v, turn) the job (store_engine_job_add: no owner).
 *   A worker: store_engine_job_claim; store_game_load, and unless the game
 *   is at v with the computer to move, ack and clear at once (the job is
 *   stale: a duplicate, a takeback, a resignation); else think, calling
 *   store_engine_job_touch within every lease (STORE_ENOT_FOUND: another
 *   worker has the job now; stop); write the move as v + 1 with
 *   expected_version v; then store_engine_job_ack and
 *   store_engine_due_clear(id, v) (after any outcome of the write but
 *   STORE_EUNAVAILABLE/STORE_EUNKNOWN: a conflict means another move won).
 *   Every replica, now and then: store_engine_now, store_engine_due_scan;
 *   for each intent due, load the game: at v with the computer to move, push
 *   the intent back (store_engine_due_set with a new due) and add the job
 *   again (a no-op when it is only waiting, or being played: *added says
 *   which); anything else (a later version, a game over or gone), clear it.
 * Why: the game write and the job cannot be one atomic step (on a cluster
 * they live in different slots), so a replica that dies between steps 2
 * and 3 leaves an intent without a job, which the scan finds; one that dies
 * between 1 and 2 leaves an intent for a version never made, which the scan
 * clears; a worker that dies while thinking leaves its job claimed, and
 * another claims it once its lease has passed. A job may so be done twice;
 * only one move lands, the one whose compare-and-set on v wins. Intents are
 * per version, so clearing v never drops the intent of a later turn.
 *
 * Every call goes over this thread's connection (store_command of
 * store_private.h): one node or the cluster node serving the keys' slot
 * (MOVED and ASK followed), TLS and AUTH as for games, the command timeout
 * and this thread's deadline (store_set_deadline) bound every wait. Ids are
 * game ids (1 to STORE_ENGINE_ID_SIZE - 1 characters of base64url) and
 * versions 1 to 2^53 - 1; any other is STORE_ENOT_FOUND, nothing sent. */
#define STORE_ENGINE_JOBS_KEY "chessd:{engine}:jobs"
#define STORE_ENGINE_GROUP "engines"
#define STORE_ENGINE_DUE_KEY "chessd:{engine}:due"
/* The backlog: turns queued (sorted set: member "<id>:<v>", its queued
 * time), the owners waiting (sorted set, scored by their place in the
 * round), each owner's queue (a sorted set under STORE_ENGINE_OWNER_PREFIX
 * and the owner's name, in the order queued), the urgent turns (sorted set
 * by deadline), each queued turn's owner (hash), the turns in flight (hash:
 * member, its entry id), the round's and the queues' counters, whether the
 * last turn served jumped the round, and the bell (a list a worker waits
 * on). */
#define STORE_ENGINE_QUEUED_KEY "chessd:{engine}:queued"
#define STORE_ENGINE_OWNERS_KEY "chessd:{engine}:owners"
#define STORE_ENGINE_OWNER_PREFIX "chessd:{engine}:owner:"
#define STORE_ENGINE_URGENT_KEY "chessd:{engine}:urgent"
#define STORE_ENGINE_OWNER_OF_KEY "chessd:{engine}:owner-of"
#define STORE_ENGINE_INFLIGHT_KEY "chessd:{engine}:in-flight"
#define STORE_ENGINE_ROUND_KEY "chessd:{engine}:round"
#define STORE_ENGINE_SEQ_KEY "chessd:{engine}:seq"
#define STORE_ENGINE_JUMPED_KEY "chessd:{engine}:jumped"
#define STORE_ENGINE_BELL_KEY "chessd:{engine}:bell"
/* The owner of turns added with none (the sweep's, store_engine_job_add's). */
#define STORE_ENGINE_OWNER_NONE "-"
/* The first-move deadlines (store_first_move_due_*): a sorted set like the intents, of its own. */
#define STORE_FIRST_MOVE_DUE_KEY "chessd:{first-move}:due"

enum {
    STORE_ENGINE_ID_SIZE = 24,        /* a game id and its NUL (GAME_ID_SIZE) */
    STORE_ENGINE_ENTRY_SIZE = 48,     /* a stream entry id, "<ms>-<seq>", and its NUL */
    STORE_ENGINE_CONSUMER_MAX = 200,  /* bytes of a consumer's name */
    STORE_ENGINE_JOBS_MAX = 10000,    /* the stream is trimmed to about this many entries (XADD MAXLEN ~) */
    STORE_ENGINE_OWNER_MAX = 64,      /* bytes of an owner's name, the NUL included */
    STORE_ENGINE_URGENT_MS = 10000,   /* a turn whose game would be lost this soon is served first */
    STORE_ENGINE_RECHECK_MS = 60000,  /* a turn queued or claimed: its intent looked at again after this */
    STORE_ENGINE_BELL_MAX = 64,       /* the bell's length at most */
};

/* A job, as claimed: the game, the version it was made for, its entry in
 * the stream (what touch and ack name), and how many times it has been
 * handed out, this claim included (1 for a new job; more for one whose
 * workers went quiet: a caller may give up on a job that keeps killing its
 * workers; 0 when Redis could not say). */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    uint64_t version;
    char entry_id[STORE_ENGINE_ENTRY_SIZE];
    unsigned deliveries;
} store_engine_job_t;

/* Who a turn is for and by when it must be played. */
typedef struct {
    const char *owner;   /* the client's name (1 to STORE_ENGINE_OWNER_MAX - 1 printable bytes, no space); NULL or "": none */
    int64_t deadline_ms; /* Redis time (Unix ms) by which the game is lost unless the computer moves; 0: none */
} store_engine_turn_t;

/* Queues the job {id, version} in its owner's queue (turn NULL: no owner,
 * no deadline) and rings the bell, one step; *added (when not NULL) says
 * whether it was queued: false when that turn is queued or in flight
 * already (a duplicate is dropped). STORE_EUNAVAILABLE: Redis did not
 * answer (the intent's scan adds it again). STORE_EFULL: Redis is full.
 * STORE_ENOT_FOUND: not a game id, version or owner; nothing sent. */
store_status_t store_engine_turn_add(store_t *store, const char *id, uint64_t version, const store_engine_turn_t *turn,
                                     bool *added);
store_status_t store_engine_job_add(store_t *store, const char *id, uint64_t version);

/* The bounds on the backlog: turns one owner may have queued, and
 * everyone (0: no bound). */
typedef struct {
    unsigned per_owner, total;
} store_engine_bounds_t;

typedef enum { STORE_ENGINE_BOUND_NONE = 0, STORE_ENGINE_BOUND_OWNER, STORE_ENGINE_BOUND_TOTAL } store_engine_bound_t;

/* store_engine_due_set of the computer's turn at version, one step with a
 * look at the bounds: when owner (NULL or "": none) has bounds->per_owner
 * turns queued, or everyone bounds->total, nothing is recorded and
 * *reached names the bound (STORE_OK all the same). */
store_status_t store_engine_turn_intent(store_t *store, const char *id, uint64_t version, int64_t due_ms,
                                        const char *owner, const store_engine_bounds_t *bounds,
                                        store_engine_bound_t *reached);

/* The backlog as it stands: Redis's clock, the turns queued and in
 * flight, when the oldest queued one was queued (Redis time; 0: none), the
 * owners waiting, and owner's queued turns (owner NULL or "": 0). */
typedef struct {
    int64_t now_ms;
    uint64_t queued, in_flight, owners, owner_queued;
    int64_t oldest_queued_ms;
} store_engine_backlog_t;

store_status_t store_engine_backlog(store_t *store, const char *owner, store_engine_backlog_t *out);

/* Removes consumer from the group (XGROUP DELCONSUMER) unless it owns a
 * pending entry (a turn left for its lease to bring back): a worker's
 * clean stop. STORE_OK also when there was none, or it was kept. */
store_status_t store_engine_consumer_remove(store_t *store, const char *consumer);
/* Removes up to max consumers idle past idle_ms that own no pending entry
 * (workers gone without a clean stop); *removed says how many. */
store_status_t store_engine_consumers_prune(store_t *store, unsigned idle_ms, unsigned max, unsigned *removed);

/* A wait for the bell on a connection of its own, so that a long block
 * never holds a connection the other calls share, and a late reply is this
 * wait's failure only, never the store's (no breaker is tripped). One
 * thread at a time. */
typedef struct store_engine_bell store_engine_bell_t;
store_engine_bell_t *store_engine_bell_new(store_t *store);
/* Waits up to block_ms for a turn queued: STORE_OK rung (look now),
 * STORE_ENOT_FOUND not, STORE_EUNAVAILABLE no reply in the block and a
 * round trip (the connection is made again next time). */
store_status_t store_engine_bell_wait(store_engine_bell_t *bell, unsigned block_ms);
void store_engine_bell_free(store_engine_bell_t *bell);

/* Claims a job for consumer (a name unique to one worker of one replica,
 * 1 to STORE_ENGINE_CONSUMER_MAX bytes): first one whose worker has been
 * quiet (neither claimed, touched nor acked it) for lease_ms or more
 * (XAUTOCLAIM), else a new one (XREADGROUP), waiting up to block_ms for one
 * to be added (0: no wait). The job is the consumer's until it acks it or
 * lease_ms pass without a touch. On STORE_OK *job is set. STORE_ENOT_FOUND:
 * none within block_ms (or within this thread's deadline), or a consumer
 * name that is none or a lease_ms of 0. STORE_ECORRUPT: an entry this code
 * did not write was met (and removed: call again), or the key is no
 * stream. STORE_EUNAVAILABLE: Redis did not answer, or (with the breaker)
 * is held down, which fails at once: wait before calling again. The group
 * is made when missing (the stream deleted, or never made yet: its entries
 * from the first are then new to it).
 * The wait blocks this thread: call it from a worker thread, not one that
 * answers requests. Redis is asked to block for at most half the command
 * timeout at a time (BLOCK; and at least 150 ms less than it, or it polls
 * every 50 ms), so that every reply comes within the timeout (the rest is
 * for the round trip and Redis's timer, which ends a block up to 1000/hz
 * ms late: Redis's hz must be 10, the default, or more) and a silent Redis
 * is found as fast as by any other command; between the blocks, quiet jobs
 * are looked for again. A job added meanwhile wakes the wait at once. */
store_status_t store_engine_job_claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                                      store_engine_job_t *job);

/* Tells Redis consumer is still working on job (XCLAIM to itself, JUSTID:
 * its idle time back to 0, its delivery count unchanged), so no other
 * worker claims it for lease_ms more; call it well within every lease.
 * STORE_ENOT_FOUND: the job is no longer consumer's (its lease passed and
 * another worker claimed it, it was acked, or it is gone): stop working on
 * it. */
store_status_t store_engine_job_touch(store_t *store, const char *consumer, const store_engine_job_t *job);

/* Marks job done and removes it from the stream (XACK and XDEL, one step).
 * STORE_ENOT_FOUND: it was no longer pending (acked already, by this or
 * another worker); it is removed all the same. */
store_status_t store_engine_job_ack(store_t *store, const store_engine_job_t *job);

/* An intent, as scanned: the game, the version at which the computer is
 * to move, and the Redis time (Unix ms) its move is due by. */
typedef struct {
    char id[STORE_ENGINE_ID_SIZE];
    uint64_t version;
    int64_t due_ms;
} store_engine_due_t;

/* Redis's clock (TIME) on the node holding the engine keys, in Unix
 * milliseconds: the clock of due times. */
store_status_t store_engine_now(store_t *store, int64_t *now_ms);

/* Records (or moves to due_ms) the intent "the computer moves in game id
 * at version": ZADD of "<id>:<version>". */
store_status_t store_engine_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms);

/* Drops the intent of id at version only (ZREM): one of another version,
 * older or newer, stays. STORE_OK whether or not there was one. */
store_status_t store_engine_due_clear(store_t *store, const char *id, uint64_t version);

/* The intents due by now_ms (a time of store_engine_now), the most overdue
 * first, at most max of them into out[]; *count says how many. A member
 * this code did not write is removed and not returned. */
store_status_t store_engine_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                     unsigned *count);

/* First-move deadlines: the same protocol as the intents, in a sorted set
 * of its own (STORE_FIRST_MOVE_DUE_KEY), each member "<id>:<v>" scored by
 * when the side to move at version v loses its first-move grace (Redis
 * time, Unix ms; store_engine_now is its clock). The game service records
 * one before a write that leaves a grace running; every replica scans the
 * due ones, reads each game (which aborts it when the grace has passed) and
 * clears the member, or records its new deadline. */
store_status_t store_first_move_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms);
store_status_t store_first_move_due_clear(store_t *store, const char *id, uint64_t version);
store_status_t store_first_move_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                         unsigned *count);

/* Multi-game streams (POST /v1/games/events): the ids a stream follows,
 * kept so that another replica can add to them. A stream's ids are a set
 * (STORE_STREAM_KEY_PREFIX "{<stream>}"), made by the replica holding the
 * stream, refreshed by it (expiring ttl_seconds after the last touch) and
 * deleted when it closes; an add (any replica) puts ids in the set and
 * publishes on the stream's channel (store_stream_channel) in one atomic
 * step, and the holder reads the set again. Stream ids and game ids are
 * 1 to STORE_ENGINE_ID_SIZE - 1 characters of base64url; any other is
 * STORE_ENOT_FOUND, nothing sent. */
#define STORE_STREAM_KEY_PREFIX "chessd:stream:"
enum { STORE_STREAM_IDS_MAX = 500 };
void store_stream_channel(const char *stream, char out[STORE_CHANNEL_SIZE]);
/* Makes the set of stream's count ids (replacing any). */
store_status_t store_stream_ids_put(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned ttl_seconds);
/* Adds ids (distinct) to an existing set: STORE_ENOT_FOUND when there is
 * none (no such stream, or it closed), STORE_EFULL with nothing added when
 * the set would pass max ids; *total is the set's size after (or as it is,
 * when refused) and *added how many were new. */
store_status_t store_stream_ids_add(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned max, unsigned ttl_seconds, unsigned *added, unsigned *total);
/* Reads up to max of the set's ids into out and refreshes its expiry;
 * STORE_ENOT_FOUND when the set is gone. A member that is no id is left out. */
store_status_t store_stream_ids_read(store_t *store, const char *stream, unsigned ttl_seconds,
                                     char (*out)[STORE_ENGINE_ID_SIZE], unsigned max, unsigned *count);
/* Deletes the set (the stream closed). */
store_status_t store_stream_ids_drop(store_t *store, const char *stream);

#endif
