/* Redis implementation of store.h on hiredis (0.14, synchronous). One
 * connection per thread, kept in thread-specific data and dropped after any
 * error so the next call reconnects (re-applying the timeouts). Every write
 * goes through one Lua script, run by EVALSHA with an EVAL fallback; a write
 * whose command left wholly but got no answer is reported as unknown, never
 * as unavailable, because Redis may still run it. */
#include "store.h"
#include "store_private.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/decimal.h"
#include "../rules/hex.h"
#include "../rules/text.h"
#include "cluster.h"
#include "conn.h"
#include "credentials.h"
#include "sock.h"
#include "tls.h"

/* Whether a game's keys agree, for both scripts: the history holds one
 * 16-digit entry per ply of the state, and the move list at least the
 * shortest entries (a UCI move, a space between) for as many plies, and none
 * when there are none. Redis evicts (or a failover loses) whole keys, and a
 * missing key reads as empty, so a game that lost its move list or history
 * fails this. A state without a plies line is left to the record's reader.
 * `lingers`: a key that is not about to expire. A game's keys get one TTL
 * in one script, so they expire together (a millisecond apart at most); a
 * hash gone while its lists linger was evicted or lost, not expired. */
#define GAME_KEYS_LUA \
    "local function keys_disagree(state)\n" \
    "  local plies = tonumber(string.match(state, '\\nplies (%d+)\\n') or '')\n" \
    "  if not plies then return false end\n" \
    "  local moves, history = redis.call('STRLEN', KEYS[2]), redis.call('STRLEN', KEYS[3])\n" \
    "  if history ~= plies * 16 then return true end\n" \
    "  if plies == 0 then return moves ~= 0 end\n" \
    "  return moves < plies * 5 - 1\n" \
    "end\n" \
    "local function lingers(key)\n" \
    "  local t = redis.call('PTTL', key)\n" \
    "  return t == -1 or t > 1000\n" \
    "end\n"

/* Compare-and-set of a game, with its idempotency record.
 * KEYS[1] the game hash, KEYS[2] its move list, KEYS[3] its history, then as
 * the flags say: 'l' the record of the first format this write replaces, 'i'
 * the idempotency record, 'b' the list of the records kept in its scope
 * (only when they are bounded).
 * The values (ARGV) by position, named here once: store_game_write fills
 * them by these names and the script reads them by the same names
 * (ARG(CAS_TTL) is the text "ARGV[9]"). */
#define CAS_FLAGS 1             /* which of the optional KEYS follow: 'l', 'i', 'b' */
#define CAS_EXPECTED 2          /* expected version (0: create) */
#define CAS_VERSION 3           /* the new version */
#define CAS_STATE 4             /* the state text */
#define CAS_HISTORY_COUNT 5     /* history entries a change load returns (hlen) */
#define CAS_LINE_OP 6           /* keep, append, set or truncate */
#define CAS_MOVES 7             /* the move list text (append, set), or bytes kept (truncate) */
#define CAS_HISTORY 8           /* the history text (append, set), or bytes kept (truncate); CAS_MOVES + 1 */
#define CAS_TTL 9               /* of the game's keys (0: keep) */
#define CAS_IDEM_ANSWER 10      /* the kept answer */
#define CAS_IDEM_TTL 11         /* its ttl */
#define CAS_IDEM_KEEP_MAX 12    /* most records kept in the scope */
#define CAS_EXPECTED_WRITE_ID 13 /* the write id the game must have ('' : any, a creation or a record of the first format) */
#define CAS_WRITE_ID 14         /* this write's id */
#define CAS_TIME_FROM 15        /* the Redis time (ms) the change was computed at ('0': not timed) */
#define CAS_DEADLINE 16         /* the time the mover's flag falls ('0': none) */
#define CAS_CHANNEL 17          /* a channel ... */
#define CAS_EVENT 18            /* ... and a message to publish once written ('' : none) */
#define CAS_PUBLISH 19          /* the command that publishes it: PUBLISH, or SPUBLISH on a cluster */
#define CAS_LEGACY_VERSION 20   /* on a cluster, the version of the record of the first format replaced ('' : none) */
#define CAS_ARG_COUNT 20
#define ARG_NUMBER(name) ARG_NUMBER_(name)
#define ARG_NUMBER_(n) #n
#define ARG(name) "ARGV[" ARG_NUMBER(name) "]"
/* SPUBLISH on a cluster keeps a game's messages on its shard. On a cluster
 * the record of the first format lives in another slot, so the script takes
 * its version from the load (CAS_LEGACY_VERSION) and the caller deletes it
 * afterwards. A timed write is refused as
 * 'late' when Redis's clock has passed the flag or is more than a second
 * away from the time the change was computed at: one clock, Redis's, decides
 * whether a move was in time, and a change computed long ago is redone. The
 * write id tells two states of one version apart, which only a Redis that
 * lost writes (a restart without its data, a failover) can hold. The bound keeps what one caller can store flat: a
 * client looping a change with fresh keys replaces its own oldest answers.
 * Every key is read or its type checked before the first write: Redis does
 * not undo a script's earlier commands when a later one fails. For the same
 * reason the event is published before the first write (subscribers get it
 * only once the script has ended, so the order inside it does not show): a
 * Redis that lacks the command (SPUBLISH before 7.0) refuses the write whole.
 * And for that reason a full Redis must refuse the write before the
 * publishing: PUBLISH is let through when Redis is out of memory, and only
 * the first write command of a script is checked against maxmemory, so an
 * empty SETRANGE on the move list (which changes nothing) comes first. A
 * game whose keys disagree (keys_disagree, or a hash gone while its lists
 * linger) is 'damaged' and never written: a move appended to a move list
 * that was evicted would make a game whose moves do not lead to its
 * position. */
static const char cas_script[] =
    GAME_KEYS_LUA
    "local k = 4\n"
    "local legacy, idem, list\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'l', 1, true) then legacy = KEYS[k]; k = k + 1 end\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'i', 1, true) then idem = KEYS[k]; k = k + 1 end\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'b', 1, true) then list = KEYS[k]; k = k + 1 end\n"
    "if idem then\n"
    "  local prior = redis.call('GET', idem)\n"
    "  if prior then return {'replay', prior} end\n"
    "end\n"
    "local current = redis.call('HGET', KEYS[1], 'version')\n"
    "local own = current\n"
    "if not current and legacy then current = redis.call('HGET', legacy, 'version') end\n"
    "if not current and " ARG(CAS_LEGACY_VERSION) " ~= '' then current = " ARG(CAS_LEGACY_VERSION) " end\n"
    "if " ARG(CAS_EXPECTED) " == '0' then\n"
    "  if current then return {'exists', current} end\n"
    "elseif not current then\n"
    "  if lingers(KEYS[2]) or lingers(KEYS[3]) then return {'damaged', ''} end\n"
    "  return {'missing', ''}\n"
    "elseif current ~= " ARG(CAS_EXPECTED) " then\n"
    "  return {'conflict', current}\n"
    "end\n"
    "if " ARG(CAS_EXPECTED_WRITE_ID) " ~= '' and redis.call('HGET', KEYS[1], 'wid') ~= " ARG(CAS_EXPECTED_WRITE_ID) " then return {'conflict', current} end\n"
    "local function expect(key, kind)\n"
    "  local t = redis.call('TYPE', key)['ok']\n"
    "  if t ~= 'none' and t ~= kind then return redis.error_reply('WRONGTYPE ' .. key .. ' is not a ' .. kind) end\n"
    "end\n"
    "local wrong = expect(KEYS[2], 'string') or expect(KEYS[3], 'string') or (list and expect(list, 'list'))\n"
    "if wrong then return wrong end\n"
    "if own and keys_disagree(redis.call('HGET', KEYS[1], 'state') or '') then return {'damaged', current} end\n"
    "if " ARG(CAS_TIME_FROM) " ~= '0' then\n"
    "  local t = redis.call('TIME')\n"
    "  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "  local from, deadline = tonumber(" ARG(CAS_TIME_FROM) "), tonumber(" ARG(CAS_DEADLINE) ")\n"
    "  if now - from > 1000 or from - now > 1000 or (deadline > 0 and now >= deadline) then\n"
    "    return {'late', current or '0'}\n"
    "  end\n"
    "end\n"
    "redis.call('SETRANGE', KEYS[2], 0, '')\n"
    "if " ARG(CAS_CHANNEL) " ~= '' then redis.call(" ARG(CAS_PUBLISH) ", " ARG(CAS_CHANNEL) ", " ARG(CAS_EVENT) ") end\n"
    "redis.call('HSET', KEYS[1], 'version', " ARG(CAS_VERSION) ", 'state', " ARG(CAS_STATE) ", 'hlen', " ARG(CAS_HISTORY_COUNT) ", 'wid', " ARG(CAS_WRITE_ID) ")\n"
    "local op = " ARG(CAS_LINE_OP) "\n"
    "if op == 'append' then\n"
    "  redis.call('APPEND', KEYS[2], " ARG(CAS_MOVES) ")\n"
    "  redis.call('APPEND', KEYS[3], " ARG(CAS_HISTORY) ")\n"
    "elseif op == 'set' then\n"
    "  redis.call('SET', KEYS[2], " ARG(CAS_MOVES) ")\n"
    "  redis.call('SET', KEYS[3], " ARG(CAS_HISTORY) ")\n"
    "elseif op == 'truncate' then\n"
    "  for i = 2, 3 do\n"
    "    local keep = tonumber(ARGV[" ARG_NUMBER(CAS_MOVES) " - 2 + i])\n" /* i = 2, 3: CAS_MOVES, CAS_HISTORY */
    "    if keep > 0 then redis.call('SET', KEYS[i], redis.call('GETRANGE', KEYS[i], 0, keep - 1))\n"
    "    else redis.call('SET', KEYS[i], '') end\n"
    "  end\n"
    "end\n"
    "if legacy then redis.call('DEL', legacy) end\n"
    "for i = 1, 3 do\n"
    "  if tonumber(" ARG(CAS_TTL) ") > 0 then redis.call('EXPIRE', KEYS[i], " ARG(CAS_TTL) ") else redis.call('PERSIST', KEYS[i]) end\n"
    "end\n"
    "if idem then\n"
    "  if tonumber(" ARG(CAS_IDEM_TTL) ") > 0 then redis.call('SET', idem, " ARG(CAS_IDEM_ANSWER) ", 'EX', " ARG(CAS_IDEM_TTL) ") else redis.call('SET', idem, " ARG(CAS_IDEM_ANSWER) ") end\n"
    "end\n"
    "if list then\n"
    "  redis.call('RPUSH', list, idem)\n"
    "  for i = 1, redis.call('LLEN', list) - tonumber(" ARG(CAS_IDEM_KEEP_MAX) ") do\n"
    "    local oldest = redis.call('LPOP', list)\n"
    "    if oldest then redis.call('DEL', oldest) end\n"
    "  end\n"
    "  if tonumber(" ARG(CAS_IDEM_TTL) ") > 0 then redis.call('EXPIRE', list, " ARG(CAS_IDEM_TTL) ") end\n"
    "end\n"
    "return {'ok', " ARG(CAS_VERSION) "}\n";

/* Reads a game in one step. KEYS as cas_script's first three; ARGV[1]
 * 'change' (version, state, the last hlen history entries of ARGV[2] bytes
 * each, the write id and Redis's time in milliseconds) or 'full' (the same
 * and the move list). An empty array: no such game; {'damaged'}: a game
 * whose keys disagree (see GAME_KEYS_LUA). */
static const char load_script[] =
    GAME_KEYS_LUA
    "local v = redis.call('HMGET', KEYS[1], 'version', 'state', 'hlen', 'wid')\n"
    "if not v[1] then\n"
    "  if lingers(KEYS[2]) or lingers(KEYS[3]) then return {'damaged'} end\n"
    "  return {}\n"
    "end\n"
    "if v[2] and keys_disagree(v[2]) then return {'damaged'} end\n"
    "local n = v[3] and string.match(v[3], '^%d+$') and tonumber(v[3])\n"
    "if not v[2] or not n or n > 1000 then return {v[1]} end\n"
    "local tail = ''\n"
    "if n > 0 then tail = redis.call('GETRANGE', KEYS[3], -n * tonumber(ARGV[2]), -1) end\n"
    "if #tail ~= n * tonumber(ARGV[2]) then return {v[1]} end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "if ARGV[1] == 'full' then return {v[1], v[2], tail, v[4] or '', now, redis.call('GET', KEYS[2]) or ''} end\n"
    "return {v[1], v[2], tail, v[4] or '', now}\n";

enum {
    SEEDS_MAX = 16,
    /* Tries of one command across redirections, reconnections and cluster
     * pauses, all within twice the command timeout (ROUTE_BUDGET). */
    ROUTE_ATTEMPTS = 8,
    ROUTE_PAUSE_FIRST_MS = 20,
    ROUTE_PAUSE_MAX_MS = 200,
    /* A slot map is read again at most this often, however many MOVED come. */
    MAP_REFRESH_MIN_MS = 100,
    CONNECT_LOG_MS = 10000,
    /* Lines remembered for the log: more than the seeds, so a cluster whose
     * nodes all fail keeps one entry per node. */
    LOGGED_LINES = 2 * SEEDS_MAX,
    /* Nodes whose health the breaker keeps: a cluster's masters and
     * replicas; past it, the entry of a node that is up is reused. */
    HEALTH_NODES = 64,
};

/* A line logged, and when (monotonic ms). */
typedef struct {
    char line[512];
    int64_t ms;
} logged_line_t;

/* A node's health as the breaker knows it. */
typedef struct {
    cluster_node_t node;
    bool down;
    store_fault_t fault;
    char reason[320];
    int64_t trial_ms; /* monotonic ms when a command was last let through to it while down */
    bool refused_quickly; /* the latest failure: a connection that failed at once (refused, no route) */
} node_health_t;

/* This thread's connections: one per node it has talked to. */
typedef struct {
    cluster_node_t node;
    conn_t *conn;
} node_conn_t;

typedef struct {
    node_conn_t *items;
    unsigned count, capacity;
} thread_conns_t;

struct store {
    bool cluster;
    cluster_node_t seeds[SEEDS_MAX]; /* one node, or a cluster's seed nodes */
    unsigned seed_count;
    int db;
    char user[256];
    char password[1024];
    unsigned connect_timeout_ms, command_timeout_ms;
    tls_context_t *tls; /* NULL: plain TCP */
    store_script_t cas, load;
    pthread_key_t connection_key; /* thread_conns_t */
    atomic_ullong errors, connects, redirects, fast_failures;
    /* Cluster mode: the slot map, replaced whole under map_lock. */
    pthread_mutex_t map_lock;
    cluster_map_t *map;
    int64_t map_read_ms; /* monotonic time of the last attempt to read it */
    unsigned map_turn;   /* which known node a read of the map asks first (after a hint) */
    /* The reasons Redis could not be used logged lately: each new one is
     * logged at once, the same again at most every CONNECT_LOG_MS. A reason
     * names its node, and a cluster's nodes fail in turn, so one entry per
     * line, the oldest replaced when all are taken. */
    pthread_mutex_t log_lock;
    logged_line_t logged[LOGGED_LINES];
    /* The breaker (see store_config_t.breaker_retry_ms): the nodes seen to
     * fail, under health_lock; down_nodes counts those marked down, so that
     * while all is well a command reads one atomic and takes no lock. */
    bool breaker;
    unsigned breaker_retry_ms;
    pthread_mutex_t health_lock;
    node_health_t health[HEALTH_NODES];
    unsigned health_count;
    atomic_uint down_nodes;
    void (*on_down)(void *ctx); /* store_on_down: called when a node is marked down */
    void *on_down_ctx;
    /* What the last store_probe() found wrong beyond a node being away (a
     * Cluster not serving every slot); STORE_FAULT_NONE when nothing. */
    store_fault_t probe_fault;
    char probe_reason[320];
    /* When Redis last refused a command for lack of memory (an OOM reply;
     * monotonic ms, 0: not since the last write it took). See store_is_full. */
    atomic_llong full_since_ms;
};

/* Set on the thread running store_probe(): its commands pass the breaker. */
static _Thread_local bool probing;
/* This thread's store_set_deadline() (0: none). */
static _Thread_local int64_t call_deadline_ms;

void store_set_deadline(int64_t deadline_ms) { call_deadline_ms = deadline_ms; }
int64_t store_now_ms(void) { return sock_now_ms(); }

/* timeout_ms, cut to what is left before this thread's deadline (at least
 * 1 ms; 0 when the deadline has passed). */
static unsigned within_deadline(unsigned timeout_ms)
{
    if (!call_deadline_ms)
        return timeout_ms;
    int64_t left = call_deadline_ms - sock_now_ms();
    return left <= 0 ? 0 : left < (int64_t)timeout_ms ? (unsigned)left : timeout_ms;
}

static const char *const status_names[STORE_STATUS_COUNT] = {
    "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt", "full", "unknown", "late", "damaged",
};

void store_game_channel(const char *id, char *out)
{
    /* "chessd:events:{<id>}", the id cut to fit as "%.*s" would */
    static const char prefix[] = "chessd:events:{";
    size_t id_length = strnlen(id, STORE_CHANNEL_SIZE - 20);
    memcpy(out, prefix, sizeof prefix - 1);
    memcpy(out + sizeof prefix - 1, id, id_length);
    memcpy(out + sizeof prefix - 1 + id_length, "}", 2);
}

const char *store_status_name(store_status_t status)
{
    return (unsigned)status < STORE_STATUS_COUNT ? status_names[status] : "unknown";
}


static void sleep_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

static void free_thread_conns(void *p)
{
    thread_conns_t *t = p;
    for (unsigned i = 0; i < t->count; i++)
        conn_free(t->items[i].conn);
    free(t->items);
    free(t);
}

/* Reads "host[:port]" (a host in brackets for IPv6) at *p, up to one of
 * stop; advances *p. */
static bool parse_node(const char **p, const char *stop, cluster_node_t *node, char *err, size_t err_size)
{
    const char *s = *p;
    size_t host_length;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (!close) {
            snprintf(err, err_size, "Redis URL has an unclosed '[' in a host");
            return false;
        }
        host_length = (size_t)(close - s - 1);
        s++;
        *p = close + 1;
    } else {
        host_length = strcspn(s, ":,/");
        *p = s + host_length;
    }
    if (host_length == 0 || host_length >= sizeof node->host || (**p && **p != ':' && !strchr(stop, **p))) {
        snprintf(err, err_size, "Redis URL needs a host");
        return false;
    }
    memcpy(node->host, s, host_length);
    node->host[host_length] = '\0';
    node->port = 6379;
    if (**p == ':') {
        char *end;
        errno = 0;
        long port = strtol(*p + 1, &end, 10);
        if (end == *p + 1 || errno || port < 1 || port > 65535 || (*end && !strchr(stop, *end))) {
            snprintf(err, err_size, "Redis URL port must be 1 to 65535");
            return false;
        }
        node->port = (int)port;
        *p = end;
    }
    return true;
}

/* Splits redis[s][+cluster]://[[user]:password@]host[:port][,host[:port]...][/db],
 * decoding the user and password; *user_only when the credentials are a user
 * without a ':' (its password given apart). */
static bool parse_url(store_t *s, const char *url, bool *tls, bool *user_only, char *err, size_t err_size)
{
    static const struct {
        const char *prefix;
        bool tls, cluster;
    } schemes[] = {
        { "redis://", false, false },
        { "rediss://", true, false },
        { "redis+cluster://", false, true },
        { "rediss+cluster://", true, true },
    };
    const char *p = NULL;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0] && !p; i++) {
        size_t n = strlen(schemes[i].prefix);
        if (!strncmp(url, schemes[i].prefix, n)) {
            p = url + n;
            *tls = schemes[i].tls;
            s->cluster = schemes[i].cluster;
        }
    }
    if (!p) {
        snprintf(err, err_size, "Redis URL must start with redis://, rediss://, redis+cluster:// or rediss+cluster://");
        return false;
    }
    /* The credentials end at the last '@': a host never holds one, a
     * password may (the first '@' would put the rest of it in the host,
     * which connection failures print). */
    const char *at = strrchr(p, '@');
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        const char *user_end = colon ? colon : at;
        if (!credentials_decode(p, (size_t)(user_end - p), "Redis URL user", s->user, sizeof s->user, err, err_size)
            || (colon && !credentials_decode(colon + 1, (size_t)(at - colon - 1), "Redis URL password", s->password,
                                             sizeof s->password, err, err_size)))
            return false;
        *user_only = !colon;
        p = at + 1;
    }
    for (;;) {
        if (s->seed_count == SEEDS_MAX) {
            snprintf(err, err_size, "Redis URL names more than %d nodes", SEEDS_MAX);
            return false;
        }
        if (!parse_node(&p, s->cluster ? ",/" : "/", &s->seeds[s->seed_count++], err, err_size))
            return false;
        if (*p != ',')
            break;
        p++;
    }
    if (*p == '/' && p[1]) {
        char *end;
        long db = strtol(p + 1, &end, 10);
        if (*end || end == p + 1 || db < 0 || db > 1000 || (s->cluster && db != 0)) {
            snprintf(err, err_size, s->cluster ? "Redis Cluster has only database 0" : "Redis URL database must be a number");
            return false;
        }
        s->db = (int)db;
    } else if (*p && strcmp(p, "/")) {
        snprintf(err, err_size, "Redis URL has something after its host");
        return false;
    }
    return true;
}

/* The password given apart (cfg's password or password_file) replaces the
 * URL's; a URL user without a password needs one. */
static bool take_password(store_t *s, const store_config_t *cfg, bool user_only, char *err, size_t err_size)
{
    bool given = cfg->password && cfg->password[0];
    bool file = cfg->password_file && cfg->password_file[0];
    if (given && file) {
        snprintf(err, err_size, "a Redis password and a Redis password file are both given: give one");
        return false;
    }
    if (given) {
        size_t length = strlen(cfg->password);
        if (length >= sizeof s->password) {
            snprintf(err, err_size, "the Redis password is longer than %zu bytes", sizeof s->password - 1);
            return false;
        }
        explicit_bzero(s->password, sizeof s->password);
        memcpy(s->password, cfg->password, length + 1);
    } else if (file && !credentials_read_file(cfg->password_file, s->password, sizeof s->password, err, err_size)) {
        return false;
    }
    if (user_only && !s->password[0]) {
        snprintf(err, err_size, "Redis URL credentials must be [user]:password, or a user whose password is given "
                                "apart");
        return false;
    }
    return true;
}

/* Sets the script and its SHA-1 (EVALSHA's name for it). */
bool store_script_init(store_script_t *script, const char *text)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    script->text = text;
    if (!EVP_Digest(text, strlen(text), digest, &length, EVP_sha1(), NULL) || length != 20)
        return false;
    hex_encode(digest, length, script->sha);
    return true;
}

store_t *store_open(const store_config_t *cfg, char *err, size_t err_size)
{
    store_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    bool tls = false, user_only = false;
    if (!parse_url(s, cfg->url, &tls, &user_only, err, err_size) || !take_password(s, cfg, user_only, err, err_size))
        goto fail;
    if (tls) {
        tls_config_t tls_cfg = { cfg->tls_ca_file, cfg->tls_cert_file, cfg->tls_key_file, cfg->tls_server_name,
                                 cfg->tls_insecure_no_verify };
        if (!(s->tls = tls_context_new(&tls_cfg, err, err_size)))
            goto fail;
    }
    s->connect_timeout_ms = cfg->connect_timeout_ms;
    s->command_timeout_ms = cfg->command_timeout_ms;
    if (!store_script_init(&s->cas, cas_script) || !store_script_init(&s->load, load_script)) {
        snprintf(err, err_size, "cannot hash the store scripts");
        goto fail;
    }
    if (pthread_key_create(&s->connection_key, free_thread_conns)) {
        snprintf(err, err_size, "cannot create thread key");
        goto fail;
    }
    pthread_mutex_init(&s->map_lock, NULL);
    pthread_mutex_init(&s->log_lock, NULL);
    pthread_mutex_init(&s->health_lock, NULL);
    s->breaker = cfg->breaker;
    s->breaker_retry_ms = cfg->breaker_retry_ms;
    return s;
fail:
    tls_context_free(s->tls);
    explicit_bzero(s->password, sizeof s->password);
    free(s);
    return NULL;
}

void store_stats(store_t *store, store_stats_t *out)
{
    out->errors = atomic_load(&store->errors);
    out->connects = atomic_load(&store->connects);
    out->redirects = atomic_load(&store->redirects);
    out->fast_failures = atomic_load(&store->fast_failures);
}

void store_close(store_t *store)
{
    if (!store)
        return;
    thread_conns_t *t = pthread_getspecific(store->connection_key);
    if (t) {
        free_thread_conns(t);
        pthread_setspecific(store->connection_key, NULL);
    }
    pthread_key_delete(store->connection_key);
    pthread_mutex_destroy(&store->map_lock);
    pthread_mutex_destroy(&store->log_lock);
    pthread_mutex_destroy(&store->health_lock);
    free(store->map);
    tls_context_free(store->tls);
    explicit_bzero(store->password, sizeof store->password);
    free(store);
}

bool store_is_cluster(const store_t *store) { return store->cluster; }

/* Whether line is to be logged at `now`: not logged within CONNECT_LOG_MS.
 * Records it when so. Call under log_lock. */
static bool log_due(store_t *s, const char *line, int64_t now)
{
    logged_line_t *entry = &s->logged[0];
    for (unsigned i = 0; i < LOGGED_LINES; i++) {
        logged_line_t *l = &s->logged[i];
        if (!strcmp(l->line, line)) {
            if (now - l->ms < CONNECT_LOG_MS)
                return false;
            entry = l;
            break;
        }
        if (l->ms < entry->ms)
            entry = l; /* the oldest so far (an unused entry: 0) */
    }
    snprintf(entry->line, sizeof entry->line, "%s", line);
    entry->ms = now;
    return true;
}

/* Logs "chessd: <what> <why>", unless that same line was logged less than
 * CONNECT_LOG_MS ago. */
static void log_problem(store_t *s, const char *what, const char *why)
{
    char line[sizeof s->logged[0].line];
    snprintf(line, sizeof line, "%s %s", what, why);
    int64_t now = sock_now_ms();
    pthread_mutex_lock(&s->log_lock);
    if (log_due(s, line, now))
        fprintf(stderr, "chessd: %s\n", line);
    pthread_mutex_unlock(&s->log_lock);
}

/* --- the breaker --- */

static bool same_node(const cluster_node_t *a, const cluster_node_t *b);

/* node's entry, or NULL. Under health_lock. */
static node_health_t *health_entry(store_t *s, const cluster_node_t *node)
{
    for (unsigned i = 0; i < s->health_count; i++)
        if (same_node(&s->health[i].node, node))
            return &s->health[i];
    return NULL;
}

/* "host:port" of node, brackets around an IPv6 host. */
static void node_name(const cluster_node_t *node, char *out, size_t size)
{
    bool v6 = strchr(node->host, ':') != NULL;
    snprintf(out, size, "%s%.*s%s:%d", v6 ? "[" : "", (int)strnlen(node->host, sizeof node->host - 1), node->host,
             v6 ? "]" : "", node->port);
}

/* Marks node down for fault; reason says what failed (a password is never
 * in it: conn_open's sentences name no secret). STORE_FAULT_NONE (this
 * process out of descriptors or memory) marks nothing: Redis is not at fault.
 * refused_quickly: the failure was a connection refused within a tenth of
 * the connect timeout, which a command may try again (breaker_allows). */
static void breaker_down(store_t *s, const cluster_node_t *node, store_fault_t fault, const char *reason,
                         bool refused_quickly)
{
    if (!s->breaker || fault == STORE_FAULT_NONE)
        return;
    pthread_mutex_lock(&s->health_lock);
    node_health_t *h = health_entry(s, node);
    for (unsigned i = 0; !h && i < HEALTH_NODES; i++) {
        if (i == s->health_count)
            h = &s->health[s->health_count++];
        else if (!s->health[i].down)
            h = &s->health[i];
    }
    bool was_down = h && h->down;
    void (*wake)(void *) = s->on_down;
    void *wake_ctx = s->on_down_ctx;
    if (h) {
        if (!h->down)
            atomic_fetch_add(&s->down_nodes, 1);
        h->node = *node;
        h->down = true;
        h->fault = fault;
        snprintf(h->reason, sizeof h->reason, "%s", reason);
        h->trial_ms = sock_now_ms();
        h->refused_quickly = refused_quickly;
    }
    pthread_mutex_unlock(&s->health_lock);
    if (h && !was_down && wake)
        wake(wake_ctx); /* the probe runs now, not at its next turn */
    if (h && !was_down) {
        char what[CLUSTER_HOST_SIZE + 160], name[CLUSTER_HOST_SIZE + 16];
        node_name(node, name, sizeof name);
        snprintf(what, sizeof what, "Redis %s is down (%s); game requests to it fail at once until it answers:", name,
                 store_fault_name(fault));
        log_problem(s, what, reason);
    }
}

/* Marks node up (it answered). Cheap while no node is down. */
static void breaker_up(store_t *s, const cluster_node_t *node)
{
    if (!atomic_load(&s->down_nodes))
        return;
    pthread_mutex_lock(&s->health_lock);
    node_health_t *h = health_entry(s, node);
    bool was_down = h && h->down;
    if (was_down) {
        h->down = false;
        h->fault = STORE_FAULT_NONE;
        atomic_fetch_sub(&s->down_nodes, 1);
    }
    pthread_mutex_unlock(&s->health_lock);
    if (was_down) {
        char name[CLUSTER_HOST_SIZE + 16];
        node_name(node, name, sizeof name);
        fprintf(stderr, "chessd: Redis %s answers again\n", name);
    }
}

/* Whether a command may be sent to node now: yes while it is up, or on the
 * probe's thread; while it is down, only as a trial once every
 * breaker_retry_ms (when that is not 0), or when its latest failure was a
 * connection refused at once: trying again costs what failing at once
 * does, and a Redis that was away when a background task's connection
 * marked it down is used as soon as it listens again, not at the probe's
 * next turn. */
static bool breaker_allows(store_t *s, const cluster_node_t *node)
{
    if (probing || !atomic_load(&s->down_nodes))
        return true;
    pthread_mutex_lock(&s->health_lock);
    node_health_t *h = health_entry(s, node);
    bool allowed = !h || !h->down || h->refused_quickly;
    if (!allowed && s->breaker_retry_ms) {
        int64_t now = sock_now_ms();
        if (now - h->trial_ms >= (int64_t)s->breaker_retry_ms) {
            h->trial_ms = now;
            allowed = true;
        }
    }
    pthread_mutex_unlock(&s->health_lock);
    return allowed;
}

/* Whether node answers a new connection's first round trip (PING, or AUTH)
 * within a short time (10 to 1000 ms). */
static bool node_answers_quickly(store_t *s, const cluster_node_t *node)
{
    /* A quarter of the shorter timeout (a connect, a TLS handshake and a
     * round trip must fit: an operator with a distant Redis raises them). */
    unsigned shorter = s->connect_timeout_ms < s->command_timeout_ms ? s->connect_timeout_ms : s->command_timeout_ms;
    unsigned ms = shorter / 4;
    ms = ms < 10 ? 10 : ms > 1000 ? 1000 : ms;
    conn_settings_t settings = { node->host, node->port, ms, ms, s->tls, s->user, s->password, s->db };
    char why[256];
    conn_t *c = conn_open(&settings, why, sizeof why, NULL); /* a round trip: PING, or AUTH */
    conn_free(c);
    return c != NULL;
}

/* Whether node is not held down now (no trial is taken). */
static bool breaker_allows_quietly(store_t *s, const cluster_node_t *node)
{
    if (!atomic_load(&s->down_nodes))
        return true;
    pthread_mutex_lock(&s->health_lock);
    node_health_t *h = health_entry(s, node);
    bool up = !h || !h->down;
    pthread_mutex_unlock(&s->health_lock);
    return up;
}

/* After a command to node got no reply in time: unless node then answers
 * a PING on a new connection at once (confirm; only the one reply was
 * lost, or the one command was slow, and a read-back of a write can still
 * tell what happened), it is marked down. A connection that was closed or
 * reset marks nothing: the next connection tells (at once when refused, or
 * within the connect timeout), and marks it down then if it cannot be made. */
static void breaker_failed(store_t *s, const cluster_node_t *node, const conn_failure_t *failure, bool confirm)
{
    if (failure->closed || !s->breaker)
        return;
    if (confirm && !probing && breaker_allows_quietly(s, node) && node_answers_quickly(s, node))
        return;
    char name[CLUSTER_HOST_SIZE + 16], reason[CLUSTER_HOST_SIZE + 160];
    node_name(node, name, sizeof name);
    snprintf(reason, sizeof reason, "%s: no answer within %u ms", name, s->command_timeout_ms);
    breaker_down(s, node, STORE_FAULT_TIMEOUT, reason, false);
}

void store_on_down(store_t *s, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&s->health_lock);
    s->on_down = fn;
    s->on_down_ctx = ctx;
    pthread_mutex_unlock(&s->health_lock);
}

void store_health(store_t *s, store_health_t *out)
{
    memset(out, 0, sizeof *out);
    out->up = true;
    pthread_mutex_lock(&s->health_lock);
    for (unsigned i = 0; i < s->health_count && out->up; i++) {
        if (s->health[i].down) {
            out->up = false;
            out->fault = s->health[i].fault;
            snprintf(out->reason, sizeof out->reason, "%s", s->health[i].reason);
        }
    }
    if (out->up && s->probe_fault != STORE_FAULT_NONE) {
        out->up = false;
        out->fault = s->probe_fault;
        snprintf(out->reason, sizeof out->reason, "%s", s->probe_reason);
    }
    pthread_mutex_unlock(&s->health_lock);
}

conn_t *store_connect_node(store_t *s, const cluster_node_t *node, char *err, size_t err_size)
{
    if (!node)
        node = &s->seeds[0];
    unsigned connect_ms = within_deadline(s->connect_timeout_ms), command_ms = within_deadline(s->command_timeout_ms);
    if (!connect_ms || !command_ms) {
        if (err_size)
            snprintf(err, err_size, "the request's time is up");
        return NULL; /* nothing tried: says nothing of the node */
    }
    conn_settings_t settings = { node->host, node->port, connect_ms, command_ms, s->tls, s->user, s->password, s->db };
    char why[256];
    store_fault_t fault = STORE_FAULT_NONE;
    int64_t started = sock_now_ms();
    conn_t *c = conn_open(&settings, why, sizeof why, &fault);
    atomic_fetch_add(c ? &s->connects : &s->errors, 1);
    if (c) {
        breaker_up(s, node);
        return c;
    }
    bool quick = (sock_now_ms() - started) * 10 <= (int64_t)connect_ms;
    breaker_down(s, node, fault, why, fault == STORE_FAULT_UNREACHABLE && quick);
    if (err_size)
        snprintf(err, err_size, "%s", why);
    /* Why Redis cannot be reached (refused, a certificate that fails, AUTH)
     * goes to the log; the reason holds no password. */
    log_problem(s, "cannot connect to Redis", why);
    return NULL;
}

static bool same_node(const cluster_node_t *a, const cluster_node_t *b)
{
    return a->port == b->port && !strcmp(a->host, b->host);
}

static thread_conns_t *thread_conns(store_t *s)
{
    thread_conns_t *t = pthread_getspecific(s->connection_key);
    if (!t && (t = calloc(1, sizeof *t)) && pthread_setspecific(s->connection_key, t)) {
        free(t);
        t = NULL;
    }
    return t;
}

/* Forgets this thread's connection to node after a failure; the next call reconnects. */
static void drop_connection(store_t *s, const cluster_node_t *node)
{
    thread_conns_t *t = pthread_getspecific(s->connection_key);
    for (unsigned i = 0; t && i < t->count; i++) {
        if (same_node(&t->items[i].node, node)) {
            conn_free(t->items[i].conn);
            t->items[i] = t->items[--t->count];
            return;
        }
    }
}

/* This thread's connection to node, made when there is none or the kept one
 * was closed while idle; *reused tells which. */
static conn_t *connection(store_t *s, const cluster_node_t *node, bool *reused)
{
    *reused = false;
    thread_conns_t *t = thread_conns(s);
    if (!t)
        return NULL;
    for (unsigned i = 0; i < t->count; i++) {
        if (same_node(&t->items[i].node, node)) {
            if (!conn_closed_while_idle(t->items[i].conn)) {
                *reused = true;
                return t->items[i].conn;
            }
            drop_connection(s, node);
            break;
        }
    }
    void *items = t->items;
    bool room = store_array_reserve(&items, &t->capacity, t->count, sizeof *t->items);
    t->items = items;
    if (!room)
        return NULL;
    conn_t *c = store_connect_node(s, node, NULL, 0);
    if (c)
        t->items[t->count++] = (node_conn_t){ *node, c };
    return c;
}

/* Reads the slot map from the first node that gives one: hint (a node that
 * just redirected), then the masters known and the seeds, each read starting
 * one further along them, so reads cut short by deadline_ms (no node is
 * tried past it) do not ask the same silent nodes first every time. At most
 * once per MAP_REFRESH_MIN_MS unless force. */
static void refresh_map(store_t *s, const cluster_node_t *hint, bool force, int64_t deadline_ms)
{
    int64_t now = sock_now_ms();
    pthread_mutex_lock(&s->map_lock);
    bool due = force || !s->map || now - s->map_read_ms >= MAP_REFRESH_MIN_MS;
    unsigned known = 0;
    cluster_node_t *candidates = NULL;
    if (due) {
        s->map_read_ms = now;
        unsigned masters = s->map ? s->map->node_count : 0;
        candidates = malloc((1 + masters + s->seed_count) * sizeof *candidates);
        if (candidates) {
            if (hint)
                candidates[known++] = *hint;
            unsigned others = masters + s->seed_count, turn = s->map_turn++;
            for (unsigned j = 0; j < others; j++) {
                unsigned i = (turn + j) % others;
                candidates[known++] = i < masters ? s->map->nodes[i] : s->seeds[i - masters];
            }
        }
    }
    pthread_mutex_unlock(&s->map_lock);
    cluster_map_t *map = known ? malloc(sizeof *map) : NULL;
    bool read = false;
    for (unsigned i = 0; map && i < known && !read && (i == 0 || sock_now_ms() < deadline_ms); i++) {
        if (!breaker_allows(s, &candidates[i]))
            continue;
        bool reused;
        conn_t *c = connection(s, &candidates[i], &reused);
        if (!c)
            continue;
        const char *argv[] = { "CLUSTER", "SLOTS" };
        conn_failure_t failure;
        unsigned wait_ms = within_deadline(s->command_timeout_ms);
        conn_set_timeout(c, wait_ms);
        redisReply *r = conn_command(c, 2, argv, NULL, &failure);
        if (!r) {
            drop_connection(s, &candidates[i]);
            atomic_fetch_add(&s->errors, 1);
            if (wait_ms == s->command_timeout_ms)
                breaker_failed(s, &candidates[i], &failure, false);
            continue;
        }
        breaker_up(s, &candidates[i]);
        char err[256] = "";
        read = cluster_map_from_slots(r, candidates[i].host, map, err, sizeof err) && map->node_count > 0;
        freeReplyObject(r);
        if (!read) {
            /* A node that is no cluster (a redis+cluster:// URL naming a
             * single Redis) or serves no slot: said, or every request is a
             * 503 nobody can explain. */
            char why[CLUSTER_HOST_SIZE + 300];
            const char *host = candidates[i].host;
            bool v6 = strchr(host, ':') != NULL;
            snprintf(why, sizeof why, "%s%s%s:%d: %s", v6 ? "[" : "", host, v6 ? "]" : "", candidates[i].port,
                     err[0] ? err : "CLUSTER SLOTS names no master");
            log_problem(s, "cannot read the Redis Cluster's slot map from", why);
        }
    }
    free(candidates);
    if (!read) {
        free(map);
        return;
    }
    pthread_mutex_lock(&s->map_lock);
    cluster_map_t *old = s->map;
    s->map = map;
    pthread_mutex_unlock(&s->map_lock);
    free(old);
}

/* The node serving slot (any node for STORE_ANY_SLOT); false when the map
 * has none. */
static bool node_for_slot(store_t *s, int slot, cluster_node_t *out)
{
    if (!s->cluster) {
        *out = s->seeds[0];
        return true;
    }
    pthread_mutex_lock(&s->map_lock);
    bool found = false;
    if (s->map) {
        unsigned index = slot >= 0 ? s->map->slot_node[slot] : 0;
        if (slot < 0 && s->map->node_count == 0)
            index = CLUSTER_NO_NODE;
        if (index != CLUSTER_NO_NODE) {
            *out = s->map->nodes[index];
            found = true;
        }
    }
    pthread_mutex_unlock(&s->map_lock);
    return found;
}

bool store_cluster_map(store_t *s, cluster_map_t *out)
{
    refresh_map(s, NULL, true, sock_now_ms() + 2 * (int64_t)s->command_timeout_ms);
    pthread_mutex_lock(&s->map_lock);
    bool copied = s->map != NULL;
    if (copied)
        memcpy(out, s->map, sizeof *out);
    pthread_mutex_unlock(&s->map_lock);
    return copied;
}

enum { STORE_ANY_SLOT = -1 };

static bool error_starts(const redisReply *r, const char *prefix)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, prefix, strlen(prefix));
}

/* ASKING, for the one command that follows it on c. */
static bool send_asking(conn_t *c, unsigned timeout_ms)
{
    const char *argv[] = { "ASKING" };
    conn_set_timeout(c, timeout_ms);
    redisReply *r = conn_command(c, 1, argv, NULL, NULL);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Waits before the next try of a routed command, doubling *pause_ms up to
 * ROUTE_PAUSE_MAX_MS; false when that would pass give_up_ms (then no try is
 * left). */
static bool route_pause(unsigned *pause_ms, int64_t give_up_ms)
{
    if (sock_now_ms() + *pause_ms >= give_up_ms)
        return false;
    sleep_ms(*pause_ms);
    *pause_ms = *pause_ms * 2 < ROUTE_PAUSE_MAX_MS ? *pause_ms * 2 : ROUTE_PAUSE_MAX_MS;
    return true;
}

/* Sends a command about slot (STORE_ANY_SLOT: any node) and returns its
 * reply; NULL (the connection dropped) when no reply came. A connection kept
 * from earlier that turns out closed (Redis restarted, an idle timeout) is
 * remade once at once, so only a Redis that stays away costs a failure. A
 * timeout is not retried: it would double the wait. *sent (when not NULL)
 * is set true once an attempt failed after the whole command had left: Redis
 * may have run it, so a write's caller must not treat that failure, or the
 * resend's refusal, as "not written", and nothing is sent again after a
 * timeout.
 * On a cluster the command goes to the slot's master. MOVED: the map is read
 * again and the command sent where it points. ASK: ASKING and the command to
 * the node named, once, the map kept. TRYAGAIN and CLUSTERDOWN (a slot moving
 * or a failover) and a node that cannot be reached (before the command was
 * sent): a short wait, the map read again, another try. All within
 * ROUTE_ATTEMPTS tries and twice the command timeout; then NULL. Those
 * refusals say the command did nothing. */
static redisReply *command(store_t *s, int slot, int argc, const char **argv, const size_t *lengths, bool *sent)
{
    cluster_node_t target;
    bool redirected = false, asking = false, reopened = false, breaker_refused = false;
    unsigned pause_ms = ROUTE_PAUSE_FIRST_MS;
    int64_t give_up_ms = sock_now_ms() + 2 * (int64_t)s->command_timeout_ms;
    if (call_deadline_ms && call_deadline_ms < give_up_ms)
        give_up_ms = call_deadline_ms;
    for (int attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
        if ((attempt > 0 || call_deadline_ms) && sock_now_ms() >= give_up_ms)
            return NULL; /* no new try starts past the budget, or the request's deadline */
        if (!redirected && !node_for_slot(s, slot, &target)) {
            refresh_map(s, NULL, false, give_up_ms);
            if (!node_for_slot(s, slot, &target)) {
                if (!route_pause(&pause_ms, give_up_ms))
                    return NULL;
                continue;
            }
        }
        redirected = false;
        if (!breaker_allows(s, &target)) {
            /* Known down: nothing is sent. On a cluster the slot may have
             * moved to a node that answers (a failover): the map once more. */
            if (!s->cluster || breaker_refused) {
                atomic_fetch_add(&s->fast_failures, 1);
                return NULL;
            }
            breaker_refused = true;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        bool reused;
        conn_t *c = connection(s, &target, &reused);
        if (!c || (asking && !send_asking(c, within_deadline(s->command_timeout_ms)))) {
            if (c)
                drop_connection(s, &target);
            atomic_fetch_add(&s->errors, 1);
            if (!s->cluster || !route_pause(&pause_ms, give_up_ms))
                return NULL;
            asking = false;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        asking = false;
        unsigned wait_ms = within_deadline(s->command_timeout_ms);
        if (!wait_ms)
            return NULL; /* the request's time is up: not sent */
        conn_set_timeout(c, wait_ms);
        conn_failure_t failure;
        redisReply *r = conn_command(c, argc, argv, lengths, &failure);
        if (!r) {
            if (sent && failure.sent)
                *sent = true;
            drop_connection(s, &target);
            atomic_fetch_add(&s->errors, 1);
            if (reused && failure.closed && !reopened) {
                reopened = true; /* the kept connection was dead: once more on a new one */
                redirected = true;
                continue;
            }
            if (wait_ms == s->command_timeout_ms) /* a wait cut short by the deadline says nothing of Redis */
                breaker_failed(s, &target, &failure, true);
            if (!s->cluster || failure.sent || !route_pause(&pause_ms, give_up_ms))
                return NULL;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        breaker_up(s, &target);
        if (r->type == REDIS_REPLY_ERROR && store_error_status(r) == STORE_EFULL)
            atomic_store(&s->full_since_ms, sock_now_ms() | 1); /* never 0 */
        if (!s->cluster || r->type != REDIS_REPLY_ERROR)
            return r;
        cluster_redirect_t redirect;
        if (cluster_parse_redirect(r->str, r->len, &redirect)) {
            freeReplyObject(r);
            atomic_fetch_add(&s->redirects, 1);
            if (!redirect.node.host[0])
                snprintf(redirect.node.host, sizeof redirect.node.host, "%s", target.host);
            target = redirect.node;
            redirected = true;
            asking = redirect.kind == CLUSTER_REDIRECT_ASK;
            if (!asking)
                refresh_map(s, &target, false, give_up_ms);
            continue;
        }
        if (error_starts(r, "TRYAGAIN") || error_starts(r, "CLUSTERDOWN")) {
            if (!route_pause(&pause_ms, give_up_ms))
                return r; /* the refusal itself: unavailable, nothing done */
            freeReplyObject(r);
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        return r;
    }
    return NULL;
}

redisReply *store_command(store_t *store, unsigned slot, int argc, const char **argv, const size_t *lengths,
                          bool *sent)
{
    return command(store, (int)slot, argc, argv, lengths, sent);
}

unsigned store_command_wait_ms(store_t *store) { return within_deadline(store->command_timeout_ms); }

bool store_is_full(store_t *store) { return atomic_load(&store->full_since_ms) != 0; }

void store_full_clear(store_t *store, int64_t checked_ms)
{
    long long since = atomic_load(&store->full_since_ms);
    /* Only a refusal older than the look that found room is cleared. */
    while (since && since < checked_ms && !atomic_compare_exchange_weak(&store->full_since_ms, &since, 0)) {
    }
}

/* A key's slot: the one a cluster serves it from (unused on one node). */
static int key_slot(const char *key) { return (int)cluster_key_slot(key, strlen(key)); }

store_status_t store_ping(store_t *store)
{
    if (!store->cluster) {
        const char *argv[] = { "PING" };
        redisReply *r = command(store, STORE_ANY_SLOT, 1, argv, NULL, NULL);
        if (!r)
            return STORE_EUNAVAILABLE;
        bool ok = r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        return ok ? STORE_OK : STORE_EUNAVAILABLE;
    }
    /* A cluster is up when the node asked says every slot is served. */
    const char *argv[] = { "CLUSTER", "INFO" };
    redisReply *r = command(store, STORE_ANY_SLOT, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    bool ok = r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");
    freeReplyObject(r);
    return ok ? STORE_OK : STORE_EUNAVAILABLE;
}
/* PING to node past the breaker, on this thread's connection. */
static bool ping_node(store_t *s, const cluster_node_t *node)
{
    bool reused;
    conn_t *c = connection(s, node, &reused);
    if (!c)
        return false; /* store_connect_node marked it down */
    const char *argv[] = { "PING" };
    conn_failure_t failure;
    conn_set_timeout(c, s->command_timeout_ms);
    redisReply *r = conn_command(c, 1, argv, NULL, &failure);
    if (!r && reused && failure.closed) { /* a kept connection that died: once more on a new one */
        drop_connection(s, node);
        if (!(c = connection(s, node, &reused)))
            return false;
        r = conn_command(c, 1, argv, NULL, &failure);
    }
    if (!r) {
        drop_connection(s, node);
        atomic_fetch_add(&s->errors, 1);
        breaker_failed(s, node, &failure, false);
        return false;
    }
    bool pong = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (pong)
        breaker_up(s, node);
    return pong;
}

/* On a cluster, forgets the nodes held down that are neither a master of
 * the slot map (read again first) nor a seed: a master replaced (a pod
 * back with a new address) or forgotten (CLUSTER FORGET) would otherwise be
 * held down, and probed, for ever. Runs on the probe's thread. */
static void forget_departed(store_t *s)
{
    if (!s->cluster || !atomic_load(&s->down_nodes))
        return;
    refresh_map(s, NULL, true, sock_now_ms() + (int64_t)s->command_timeout_ms);
    cluster_map_t *map = malloc(sizeof *map); /* large: not on the stack */
    pthread_mutex_lock(&s->map_lock);
    bool have = map && s->map != NULL;
    if (have)
        memcpy(map, s->map, sizeof *map);
    pthread_mutex_unlock(&s->map_lock);
    if (!have) {
        free(map);
        return;
    }
    pthread_mutex_lock(&s->health_lock);
    for (unsigned i = 0; i < s->health_count; i++) {
        node_health_t *h = &s->health[i];
        bool known = false;
        for (unsigned m = 0; m < map->node_count && !known; m++)
            known = same_node(&map->nodes[m], &h->node);
        for (unsigned k = 0; k < s->seed_count && !known; k++)
            known = same_node(&s->seeds[k], &h->node);
        if (h->down && !known) {
            h->down = false;
            h->fault = STORE_FAULT_NONE;
            atomic_fetch_sub(&s->down_nodes, 1);
        }
    }
    pthread_mutex_unlock(&s->health_lock);
    free(map);
}

store_status_t store_probe(store_t *s)
{
    probing = true;
    forget_departed(s);
    store_status_t status = store_ping(s);
    /* A Cluster that answers but does not serve every slot (or a node that
     * is no Cluster) is down for games although each node is up. */
    bool cluster_fault = s->cluster && status != STORE_OK && !atomic_load(&s->down_nodes);
    pthread_mutex_lock(&s->health_lock);
    s->probe_fault = cluster_fault ? STORE_FAULT_CLUSTER : STORE_FAULT_NONE;
    snprintf(s->probe_reason, sizeof s->probe_reason, "%s",
             cluster_fault ? "the Redis Cluster does not serve every slot (CLUSTER INFO: cluster_state is not ok)" : "");
    cluster_node_t down[HEALTH_NODES];
    unsigned down_count = 0;
    for (unsigned i = 0; i < s->health_count; i++)
        if (s->health[i].down)
            down[down_count++] = s->health[i].node;
    pthread_mutex_unlock(&s->health_lock);
    for (unsigned i = 0; i < down_count; i++)
        if (!ping_node(s, &down[i]))
            status = STORE_EUNAVAILABLE;
    probing = false;
    return status;
}

/* Room for chessd:idem:<scope>:<sha256 hex>, a scope being a game id and a
 * caller's token HMAC (see store_idempotency_t). */
enum { IDEMPOTENCY_KEY_SIZE = 256 };

/* A game's keys share the hash tag {id}, so one script may touch them all
 * on any Redis. The record of the first format lived under chessd:game:<id>. */
enum { GAME_KEY_HASH = 0, GAME_KEY_MOVES, GAME_KEY_HISTORY, GAME_KEY_COUNT, GAME_KEY_SIZE = 96 };

/* "chessd:<kind>:{<id>}" for each key of a game (a write builds them on
 * every move: no printf). */
static bool game_keys(const char *id, char keys[GAME_KEY_COUNT][GAME_KEY_SIZE])
{
    static const char *const prefixes[GAME_KEY_COUNT] = { "chessd:game:{", "chessd:moves:{", "chessd:history:{" };
    size_t id_length = strlen(id);
    for (int i = 0; i < GAME_KEY_COUNT; i++) {
        size_t prefix_length = strlen(prefixes[i]);
        if (prefix_length + id_length + 2 > GAME_KEY_SIZE)
            return false;
        memcpy(keys[i], prefixes[i], prefix_length);
        memcpy(keys[i] + prefix_length, id, id_length);
        memcpy(keys[i] + prefix_length + id_length, "}", 2);
    }
    return true;
}

/* value in decimal, NUL-terminated, into out (DECIMAL_U64_MAX + 1 chars). */
static void number_text(uint64_t value, char *out) { out[decimal_write(value, out)] = '\0'; }

static bool legacy_key(const char *id, char *key, size_t size)
{
    const char *parts[] = { "chessd:game:", id };
    return text_join(key, size, parts, 2) < size;
}

/* The list of the idempotency records kept within scope (see cas_script). */
static bool idempotency_list_key(const char *scope, char *key, size_t size)
{
    const char *parts[] = { "chessd:idemlist:", scope };
    return text_join(key, size, parts, 2) < size;
}

/* Whether a scope carries a hash tag (a game's scopes: "{<id>}:<caller>"). */
static bool scope_tagged(const char *scope) { return strchr(scope, '{') != NULL; }

/* The idempotency record's key: the client's key is hashed, so any text is
 * safe. A scope with a hash tag lends it to the key; any other (creation's)
 * is tagged by the hash itself, so on a cluster the record has a slot of its
 * own and the game it creates is drawn there (store_idempotency_slot).
 * Records of untagged scopes made before that tag existed lived under the
 * same name without the braces (old_name). */
static bool idempotency_key_named(const char *scope, const char *client_key, bool old_name, char *key, size_t size)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (!EVP_Digest(client_key, strlen(client_key), digest, &length, EVP_sha256(), NULL))
        return false;
    bool braces = !old_name && !scope_tagged(scope);
    int n = snprintf(key, size, "chessd:idem:%s:%s", scope, braces ? "{" : "");
    if (n < 0 || (size_t)n + 2 * length + 2 >= size)
        return false;
    hex_encode(digest, length, key + n);
    n += 2 * (int)length;
    if (braces)
        snprintf(key + n, size - (size_t)n, "}");
    return true;
}

static bool idempotency_key(const char *scope, const char *client_key, char *key, size_t size)
{
    return idempotency_key_named(scope, client_key, false, key, size);
}

unsigned store_idempotency_slot(const char *scope, const char *key)
{
    char redis_key[IDEMPOTENCY_KEY_SIZE];
    return idempotency_key(scope, key, redis_key, sizeof redis_key) ? (unsigned)key_slot(redis_key) : 0;
}

unsigned store_id_slot(const char *id)
{
    /* The keys' tag is the id itself unless it holds a brace (ids drawn by
     * chessd never do): the cheap way, for a creation that tries thousands. */
    if (!strpbrk(id, "{}") && *id)
        return cluster_key_slot(id, strlen(id));
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE];
    return game_keys(id, keys) ? (unsigned)key_slot(keys[0]) : 0;
}

static char *copy_bytes(const char *text, size_t length)
{
    char *out = malloc(length + 1);
    if (out) {
        memcpy(out, text, length);
        out[length] = '\0';
    }
    return out;
}

/* What an error reply means: WRONGTYPE is a key this code did not write; OOM
 * (maxmemory reached with noeviction; inside a script Redis 6 wraps it in an
 * ERR) is a full Redis that refuses writes until memory is freed; anything
 * else (LOADING while Redis reads its data, BUSY, READONLY after a failover) is
 * Redis not being able to serve now. In every case the command did nothing. */
store_status_t store_error_status(const redisReply *r)
{
    if (!strncmp(r->str, "WRONGTYPE", 9))
        return STORE_ECORRUPT;
    if (!strncmp(r->str, "OOM ", 4) || strstr(r->str, "OOM command not allowed"))
        return STORE_EFULL;
    return STORE_EUNAVAILABLE;
}

/* A reply element as a malloc'd string; false when it is not a string. */
static bool take_string(const redisReply *r, char **out, size_t *length)
{
    if (r->type != REDIS_REPLY_STRING || !(*out = copy_bytes(r->str, r->len)))
        return false;
    *length = r->len;
    return true;
}

/* A version as this code writes it: a decimal number from 1, no sign, no
 * leading zero, nothing after it, in range (strtoull alone takes "-3",
 * stops at a NUL and saturates on overflow). */
static bool read_version(const redisReply *r, uint64_t *version)
{
    if (r->type != REDIS_REPLY_STRING || r->str[0] < '1' || r->str[0] > '9')
        return false;
    char *end;
    errno = 0;
    *version = strtoull(r->str, &end, 10);
    /* At most 2^53 - 1: the largest expected_version a client can send (a JSON number). */
    return end == r->str + r->len && errno == 0 && *version <= UINT64_C(9007199254740991);
}

/* Runs a script by EVALSHA, loading it with EVAL the first time a Redis
 * sees it (or after a restart). argv[0] and argv[1] are set here; *sent as
 * for command(). */
redisReply *store_script_run(store_t *s, unsigned slot, const store_script_t *script, int argc, const char **argv,
                             size_t *lengths, bool *sent)
{
    argv[0] = "EVALSHA";
    argv[1] = script->sha;
    lengths[0] = 7;
    lengths[1] = 40;
    redisReply *r = command(s, (int)slot, argc, argv, lengths, sent);
    if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        freeReplyObject(r);
        argv[0] = "EVAL";
        argv[1] = script->text;
        lengths[0] = 4;
        lengths[1] = strlen(script->text);
        r = command(s, (int)slot, argc, argv, lengths, sent);
    }
    return r;
}

/* A game of the first format: HMGET version data under its old key. */
static store_status_t load_legacy(store_t *store, const char *id, store_game_t *out)
{
    char key[GAME_KEY_SIZE];
    if (!legacy_key(id, key, sizeof key))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HMGET", key, "version", "data" };
    redisReply *r = command(store, key_slot(key), 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        if (r->element[0]->type == REDIS_REPLY_NIL && r->element[1]->type == REDIS_REPLY_NIL)
            status = STORE_ENOT_FOUND;
        else if (read_version(r->element[0], &out->version)
                 && take_string(r->element[1], &out->legacy, &out->legacy_length))
            status = STORE_OK;
    }
    freeReplyObject(r);
    return status;
}

/* One read: the new keys, then (when legacy_fallback) the record of the first format. */
static store_status_t game_load_once(store_t *store, const char *id, store_load_t what, store_game_t *out,
                                     bool legacy_fallback)
{
    memset(out, 0, sizeof *out);
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE];
    if (!game_keys(id, keys))
        return STORE_ENOT_FOUND;
    char entry[8];
    snprintf(entry, sizeof entry, "%d", STORE_HISTORY_ENTRY_SIZE);
    const char *argv[] = { NULL, NULL, "3", keys[0], keys[1], keys[2], what == STORE_LOAD_FULL ? "full" : "change",
                           entry };
    size_t lengths[8];
    for (int i = 2; i < 8; i++)
        lengths[i] = strlen(argv[i]);
    redisReply *r = store_script_run(store, key_slot(keys[0]), &store->load, 8, argv, lengths, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 0) {
        freeReplyObject(r);
        return legacy_fallback ? load_legacy(store, id, out) : STORE_ENOT_FOUND;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_STRING
        && !strcmp(r->element[0]->str, "damaged")) {
        freeReplyObject(r);
        return STORE_EDAMAGED;
    }
    bool full = what == STORE_LOAD_FULL;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == (full ? 6u : 5u) && read_version(r->element[0], &out->version)
        && take_string(r->element[1], &out->state, &out->state_length)
        && take_string(r->element[2], &out->history, &out->history_length)
        && r->element[3]->type == REDIS_REPLY_STRING && r->element[3]->len < sizeof out->write_id
        && r->element[4]->type == REDIS_REPLY_INTEGER && r->element[4]->integer > 0
        && (!full || take_string(r->element[5], &out->moves, &out->moves_length))) {
        out->now_ms = (int64_t)r->element[4]->integer;
        memcpy(out->write_id, r->element[3]->str, r->element[3]->len);
        out->write_id[r->element[3]->len] = '\0';
        status = STORE_OK;
    }
    freeReplyObject(r);
    if (status != STORE_OK)
        store_game_clear(out);
    return status;
}

store_status_t store_game_load(store_t *store, const char *id, store_load_t what, store_game_t *out)
{
    store_status_t status = game_load_once(store, id, what, out, true);
    /* Between the two reads another replica may have converted a game of the
     * first format, writing the new keys and deleting the old one: look again. */
    return status == STORE_ENOT_FOUND ? game_load_once(store, id, what, out, false) : status;
}

/* GET key: STORE_OK with a malloc'd, NUL-terminated copy in *out (caller
 * frees; length in *length), STORE_ENOT_FOUND, STORE_ECORRUPT for a value
 * that is not a string, STORE_EUNAVAILABLE when Redis cannot answer or the
 * copy cannot be made. A secret's bytes are wiped from the reply, so the
 * one copy left is the caller's. */
static store_status_t get_string(store_t *store, const char *key, char **out, size_t *length, bool secret)
{
    const char *argv[] = { "GET", key };
    redisReply *r = command(store, key_slot(key), 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        status = STORE_ENOT_FOUND;
    } else if (r->type == REDIS_REPLY_STRING) {
        status = take_string(r, out, length) ? STORE_OK : STORE_EUNAVAILABLE;
        if (secret)
            explicit_bzero(r->str, r->len);
    }
    freeReplyObject(r);
    return status;
}

store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer)
{
    char redis_key[IDEMPOTENCY_KEY_SIZE];
    if (!idempotency_key(scope, key, redis_key, sizeof redis_key))
        return STORE_ECORRUPT;
    size_t length;
    store_status_t status = get_string(store, redis_key, answer, &length, false);
    /* On one node, a record of an untagged scope may still be under its old
     * name (for as long as the idempotency TTL kept it). */
    if (status == STORE_ENOT_FOUND && !store->cluster && !scope_tagged(scope)
        && idempotency_key_named(scope, key, true, redis_key, sizeof redis_key))
        status = get_string(store, redis_key, answer, &length, false);
    return status;
}

static store_status_t script_result(redisReply *r, uint64_t *current_version, char **replay)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
        || r->element[1]->type != REDIS_REPLY_STRING)
        return STORE_ECORRUPT;
    const char *outcome = r->element[0]->str;
    const redisReply *value = r->element[1];
    if (!strcmp(outcome, "replay")) {
        *replay = copy_bytes(value->str, value->len);
        return *replay ? STORE_EREPLAY : STORE_ECORRUPT;
    }
    if (current_version)
        *current_version = strtoull(value->str, NULL, 10);
    if (!strcmp(outcome, "ok"))
        return STORE_OK;
    if (!strcmp(outcome, "conflict"))
        return STORE_ECONFLICT;
    if (!strcmp(outcome, "exists"))
        return STORE_EEXISTS;
    if (!strcmp(outcome, "missing"))
        return STORE_ENOT_FOUND;
    if (!strcmp(outcome, "late"))
        return STORE_ELATE;
    if (!strcmp(outcome, "damaged"))
        return STORE_EDAMAGED;
    return STORE_ECORRUPT;
}

static const char *const line_ops[] = { "keep", "append", "set", "truncate" };

/* The version of the record of the first format under key, as text ("" when
 * it is gone). */
static store_status_t read_legacy_version(store_t *store, const char *key, char *out, size_t size)
{
    const char *argv[] = { "HGET", key, "version" };
    redisReply *r = command(store, key_slot(key), 3, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    uint64_t version;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        out[0] = '\0';
        status = STORE_OK;
    } else if (read_version(r, &version)) {
        snprintf(out, size, "%llu", (unsigned long long)version);
        status = STORE_OK;
    }
    freeReplyObject(r);
    return status;
}

store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay)
{
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE], legacy[GAME_KEY_SIZE], idem_key[IDEMPOTENCY_KEY_SIZE],
        idem_list[IDEMPOTENCY_KEY_SIZE], flags[4] = "", expected[24], next[24], history_count[24], ttl[24],
        moves_keep[24], history_keep[24], idem_ttl[24] = "0", keep_max[24] = "0", time_from[24], deadline[24],
        channel[STORE_CHANNEL_SIZE] = "";
    if (!game_keys(id, keys) || !legacy_key(id, legacy, sizeof legacy) || (unsigned)change->line_op > STORE_LINE_TRUNCATE)
        return STORE_ENOT_FOUND;
    bool with_idem = idempotency && idempotency->key;
    if (with_idem && !idempotency_key(idempotency->scope, idempotency->key, idem_key, sizeof idem_key))
        return STORE_ECORRUPT;
    bool bounded = with_idem && idempotency->keep_max > 0;
    if (bounded && !idempotency_list_key(idempotency->scope, idem_list, sizeof idem_list))
        return STORE_ECORRUPT;
    number_text(expected_version, expected);
    number_text(expected_version + 1, next);
    number_text(change->history_count, history_count);
    number_text(ttl_seconds, ttl);
    number_text(change->moves_keep, moves_keep);
    number_text(change->time_from_ms > 0 ? (uint64_t)change->time_from_ms : 0, time_from);
    number_text(change->deadline_ms > 0 ? (uint64_t)change->deadline_ms : 0, deadline);
    if (change->event_length)
        store_game_channel(id, channel);
    number_text(change->history_keep, history_keep);
    if (with_idem) {
        number_text(idempotency->ttl_seconds, idem_ttl);
        number_text(idempotency->keep_max, keep_max);
    }
    enum { ARGS_MAX = 3 + 6 + CAS_ARG_COUNT /* EVALSHA, sha, key count; keys; values */ };
    const char *argv[ARGS_MAX];
    size_t lengths[ARGS_MAX];
    char key_count[DECIMAL_U64_MAX + 1];
    int argc = 3, nkeys = GAME_KEY_COUNT;
#define PUSH(text, length) (argv[argc] = (text), lengths[argc] = (length), argc++)
#define PUSH_TEXT(text) PUSH(text, strlen(text))
    for (int i = 0; i < GAME_KEY_COUNT; i++)
        PUSH_TEXT(keys[i]);
    /* On a cluster the old record is in another slot: its version is read
     * first and handed to the script (CAS_LEGACY_VERSION). Nothing writes such a record
     * any more, so only its conversion (which writes the new keys first) can
     * change what it says meanwhile. */
    bool legacy_apart = change->replaces_legacy && store->cluster;
    char legacy_version[24] = "";
    if (legacy_apart) {
        store_status_t status = read_legacy_version(store, legacy, legacy_version, sizeof legacy_version);
        if (status != STORE_OK)
            return status;
    }
    if (change->replaces_legacy && !legacy_apart) {
        strcat(flags, "l");
        PUSH_TEXT(legacy);
    }
    if (with_idem) {
        strcat(flags, "i");
        PUSH_TEXT(idem_key);
    }
    if (bounded) {
        strcat(flags, "b");
        PUSH_TEXT(idem_list);
    }
    nkeys = argc - 3;
    number_text((uint64_t)nkeys, key_count);
    argv[2] = key_count;
    lengths[2] = strlen(key_count);
    /* The values, by the names the script reads them by. */
    const char *values[CAS_ARG_COUNT + 1] = { NULL };
    size_t value_lengths[CAS_ARG_COUNT + 1] = { 0 };
#define VALUE(name, text, length) (values[name] = (text), value_lengths[name] = (length))
#define VALUE_TEXT(name, text) VALUE(name, text, strlen(text))
    VALUE_TEXT(CAS_FLAGS, flags);
    VALUE_TEXT(CAS_EXPECTED, expected);
    VALUE_TEXT(CAS_VERSION, next);
    VALUE(CAS_STATE, change->state, change->state_length);
    VALUE_TEXT(CAS_HISTORY_COUNT, history_count);
    /* A game is made with its move list and history, empty: every script
     * names all three keys, and a cluster refuses one (TRYAGAIN) while its
     * slot moves and only some of them exist on either side. */
    store_line_op_t line_op = change->line_op;
    if (expected_version == 0 && line_op == STORE_LINE_KEEP)
        line_op = STORE_LINE_SET;
    VALUE_TEXT(CAS_LINE_OP, line_ops[line_op]);
    if (line_op == STORE_LINE_TRUNCATE) {
        VALUE_TEXT(CAS_MOVES, moves_keep);
        VALUE_TEXT(CAS_HISTORY, history_keep);
    } else if (line_op == STORE_LINE_KEEP) {
        VALUE(CAS_MOVES, "", 0);
        VALUE(CAS_HISTORY, "", 0);
    } else {
        VALUE(CAS_MOVES, change->moves ? change->moves : "", change->moves ? change->moves_length : 0);
        VALUE(CAS_HISTORY, change->history ? change->history : "", change->history ? change->history_length : 0);
    }
    VALUE_TEXT(CAS_TTL, ttl);
    VALUE_TEXT(CAS_IDEM_ANSWER, with_idem ? idempotency->answer : "");
    VALUE_TEXT(CAS_IDEM_TTL, idem_ttl);
    VALUE_TEXT(CAS_IDEM_KEEP_MAX, keep_max);
    VALUE_TEXT(CAS_EXPECTED_WRITE_ID, change->expected_write_id ? change->expected_write_id : "");
    VALUE_TEXT(CAS_WRITE_ID, change->write_id ? change->write_id : "");
    VALUE_TEXT(CAS_TIME_FROM, time_from);
    VALUE_TEXT(CAS_DEADLINE, deadline);
    VALUE_TEXT(CAS_CHANNEL, channel);
    VALUE(CAS_EVENT, change->event_length ? change->event : "", change->event_length);
    VALUE_TEXT(CAS_PUBLISH, store->cluster ? "SPUBLISH" : "PUBLISH");
    VALUE_TEXT(CAS_LEGACY_VERSION, legacy_version);
#undef VALUE_TEXT
#undef VALUE
    for (int name = 1; name <= CAS_ARG_COUNT; name++) {
        if (!values[name]) /* every value is named above: a missing one would shift the rest */
            return STORE_ECORRUPT;
        PUSH(values[name], value_lengths[name]);
    }
#undef PUSH_TEXT
#undef PUSH

    bool sent = false;
    redisReply *r = store_script_run(store, key_slot(keys[0]), &store->cas, argc, argv, lengths, &sent);
    if (!r)
        return sent ? STORE_EUNKNOWN : STORE_EUNAVAILABLE;
    uint64_t current = 0;
    bool refused = r->type == REDIS_REPLY_ERROR;
    store_status_t status = !refused ? script_result(r, &current, replay) : store_error_status(r);
    freeReplyObject(r);
    /* After a first send answered by a closing connection, a resend speaks
     * for itself only: its refusal (LOADING, CLUSTERDOWN, READONLY...) says
     * nothing of the first send, and a version at or past the one this write
     * would have made may be the first send's own. */
    if (sent && (refused || ((status == STORE_ECONFLICT || status == STORE_EEXISTS) && current > expected_version)))
        status = STORE_EUNKNOWN;
    if (current_version)
        *current_version = current;
    if (status == STORE_OK) /* a write taken: Redis has room again */
        atomic_store(&store->full_since_ms, 0);
    if (status == STORE_OK && legacy_apart) {
        /* The new keys are found first from now on; the old record goes
         * (a failure here leaves it unseen behind them). */
        const char *del[] = { "DEL", legacy };
        redisReply *d = command(store, key_slot(legacy), 2, del, NULL, NULL);
        if (d)
            freeReplyObject(d);
    }
    return status;
}

/* GET of the token secret's key: STORE_OK with a copy, STORE_ENOT_FOUND, or a failure. */
static store_status_t token_secret_get(store_t *store, char **secret, size_t *length)
{
    return get_string(store, STORE_TOKEN_SECRET_KEY, secret, length, true);
}

store_status_t store_token_secret(store_t *store, const char *candidate, char **secret, size_t *length,
                                  bool *created)
{
    *secret = NULL;
    *length = 0;
    *created = false;
    /* A read first: once the key exists (always, after the first start) no
     * write is sent, so a Redis that refuses writes (full) still serves it. */
    store_status_t status = token_secret_get(store, secret, length);
    if (status != STORE_ENOT_FOUND)
        return status;
    const char *argv[] = { "SET", STORE_TOKEN_SECRET_KEY, candidate, "NX" };
    redisReply *r = command(store, key_slot(STORE_TOKEN_SECRET_KEY), 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE; /* maybe stored: the next call reads it */
    status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_OK;
    *created = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (status != STORE_OK)
        return status;
    /* Read back even when this call stored it: Redis is the one truth. A key
     * gone again already (deleted, evicted) is for the next call. */
    status = token_secret_get(store, secret, length);
    return status == STORE_ENOT_FOUND ? STORE_EUNAVAILABLE : status;
}
