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
#include <hiredis/sds.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* Compare-and-set of a game, with its idempotency record.
 * KEYS[1] the game hash, KEYS[2] its move list, KEYS[3] its history, then as
 * ARGV[1] says: 'l' the record of the first format this write replaces, 'i'
 * the idempotency record, 'b' the list of the records kept in its scope
 * (only when they are bounded).
 * ARGV[2] expected version (0: create), [3] new version, [4] state, [5]
 * history count, [6] line op (keep, append, set, truncate), [7] and [8] the
 * move list and history texts (append, set) or bytes kept (truncate), [9]
 * ttl (0: keep), [10] idempotency answer, [11] its ttl, [12] most records
 * kept in the scope, [13] the write id the game must have ('' : any, for a
 * creation or a record of the first format), [14] this write's id, [15]
 * the Redis time (ms) the change was computed at ('0': not timed), [16] the
 * time the mover's flag falls ('0': none), [17] a channel and [18] a
 * message to publish once written ('' : none). A timed write is refused as
 * 'late' when Redis's clock has passed the flag or is more than a second
 * away from the time the change was computed at: one clock, Redis's, decides
 * whether a move was in time, and a change computed long ago is redone. The
 * write id tells two states of one version apart, which only a Redis that
 * lost writes (a restart without its data, a failover) can hold. The bound keeps what one caller can store flat: a
 * client looping a change with fresh keys replaces its own oldest answers.
 * Every key is read or its type checked before the first write: Redis does
 * not undo a script's earlier commands when a later one fails. */
static const char cas_script[] =
    "local k = 4\n"
    "local legacy, idem, list\n"
    "if string.find(ARGV[1], 'l', 1, true) then legacy = KEYS[k]; k = k + 1 end\n"
    "if string.find(ARGV[1], 'i', 1, true) then idem = KEYS[k]; k = k + 1 end\n"
    "if string.find(ARGV[1], 'b', 1, true) then list = KEYS[k]; k = k + 1 end\n"
    "if idem then\n"
    "  local prior = redis.call('GET', idem)\n"
    "  if prior then return {'replay', prior} end\n"
    "end\n"
    "local current = redis.call('HGET', KEYS[1], 'version')\n"
    "if not current and legacy then current = redis.call('HGET', legacy, 'version') end\n"
    "if ARGV[2] == '0' then\n"
    "  if current then return {'exists', current} end\n"
    "elseif not current then\n"
    "  return {'missing', ''}\n"
    "elseif current ~= ARGV[2] then\n"
    "  return {'conflict', current}\n"
    "end\n"
    "if ARGV[13] ~= '' and redis.call('HGET', KEYS[1], 'wid') ~= ARGV[13] then return {'conflict', current} end\n"
    "local function expect(key, kind)\n"
    "  local t = redis.call('TYPE', key)['ok']\n"
    "  if t ~= 'none' and t ~= kind then return redis.error_reply('WRONGTYPE ' .. key .. ' is not a ' .. kind) end\n"
    "end\n"
    "local wrong = expect(KEYS[2], 'string') or expect(KEYS[3], 'string') or (list and expect(list, 'list'))\n"
    "if wrong then return wrong end\n"
    "if ARGV[15] ~= '0' then\n"
    "  local t = redis.call('TIME')\n"
    "  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "  local from, deadline = tonumber(ARGV[15]), tonumber(ARGV[16])\n"
    "  if now - from > 1000 or from - now > 1000 or (deadline > 0 and now >= deadline) then\n"
    "    return {'late', current or '0'}\n"
    "  end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'version', ARGV[3], 'state', ARGV[4], 'hlen', ARGV[5], 'wid', ARGV[14])\n"
    "local op = ARGV[6]\n"
    "if op == 'append' then\n"
    "  redis.call('APPEND', KEYS[2], ARGV[7])\n"
    "  redis.call('APPEND', KEYS[3], ARGV[8])\n"
    "elseif op == 'set' then\n"
    "  redis.call('SET', KEYS[2], ARGV[7])\n"
    "  redis.call('SET', KEYS[3], ARGV[8])\n"
    "elseif op == 'truncate' then\n"
    "  for i = 2, 3 do\n"
    "    local keep = tonumber(ARGV[5 + i])\n"
    "    if keep > 0 then redis.call('SET', KEYS[i], redis.call('GETRANGE', KEYS[i], 0, keep - 1))\n"
    "    else redis.call('SET', KEYS[i], '') end\n"
    "  end\n"
    "end\n"
    "if legacy then redis.call('DEL', legacy) end\n"
    "for i = 1, 3 do\n"
    "  if tonumber(ARGV[9]) > 0 then redis.call('EXPIRE', KEYS[i], ARGV[9]) else redis.call('PERSIST', KEYS[i]) end\n"
    "end\n"
    "if idem then\n"
    "  if tonumber(ARGV[11]) > 0 then redis.call('SET', idem, ARGV[10], 'EX', ARGV[11]) else redis.call('SET', idem, ARGV[10]) end\n"
    "end\n"
    "if list then\n"
    "  redis.call('RPUSH', list, idem)\n"
    "  for i = 1, redis.call('LLEN', list) - tonumber(ARGV[12]) do\n"
    "    local oldest = redis.call('LPOP', list)\n"
    "    if oldest then redis.call('DEL', oldest) end\n"
    "  end\n"
    "  if tonumber(ARGV[11]) > 0 then redis.call('EXPIRE', list, ARGV[11]) end\n"
    "end\n"
    "if ARGV[17] ~= '' then redis.call('PUBLISH', ARGV[17], ARGV[18]) end\n"
    "return {'ok', ARGV[3]}\n";

/* Reads a game in one step. KEYS as cas_script's first three; ARGV[1]
 * 'change' (version, state, the last hlen history entries of ARGV[2] bytes
 * each, the write id and Redis's time in milliseconds) or 'full' (the same
 * and the move list). An empty array: no such game. */
static const char load_script[] =
    "local v = redis.call('HMGET', KEYS[1], 'version', 'state', 'hlen', 'wid')\n"
    "if not v[1] then return {} end\n"
    "local n = v[3] and string.match(v[3], '^%d+$') and tonumber(v[3])\n"
    "if not v[2] or not n or n > 1000 then return {v[1]} end\n"
    "local tail = ''\n"
    "if n > 0 then tail = redis.call('GETRANGE', KEYS[3], -n * tonumber(ARGV[2]), -1) end\n"
    "if #tail ~= n * tonumber(ARGV[2]) then return {v[1]} end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "if ARGV[1] == 'full' then return {v[1], v[2], tail, v[4] or '', now, redis.call('GET', KEYS[2]) or ''} end\n"
    "return {v[1], v[2], tail, v[4] or '', now}\n";

typedef struct {
    const char *text;
    char sha[41];
} script_t;

struct store {
    char host[128];
    int port;
    int db;
    char user[64];
    char password[128];
    struct timeval connect_timeout, command_timeout;
    script_t cas, load;
    pthread_key_t connection_key;
    atomic_ullong errors, connects;
};

static const char *const status_names[STORE_STATUS_COUNT] = {
    "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt", "full", "unknown", "late",
};

void store_game_channel(const char *id, char *out)
{
    snprintf(out, STORE_CHANNEL_SIZE, "chessd:events:{%.*s}", STORE_CHANNEL_SIZE - 20, id);
}

const char *store_status_name(store_status_t status)
{
    return (unsigned)status < STORE_STATUS_COUNT ? status_names[status] : "unknown";
}

static void free_connection(void *c) { redisFree(c); }

static struct timeval ms_to_timeval(unsigned ms)
{
    struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };
    return tv;
}

/* Splits redis://[[user]:password@]host[:port][/db]. */
static bool parse_url(store_t *s, const char *url, char *err, size_t err_size)
{
    const char *p = url;
    if (strncmp(p, "redis://", 8)) {
        snprintf(err, err_size, "Redis URL must start with redis://");
        return false;
    }
    p += 8;
    const char *at = strchr(p, '@');
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (!colon || (size_t)(colon - p) >= sizeof s->user || (size_t)(at - colon - 1) >= sizeof s->password) {
            snprintf(err, err_size, "Redis URL credentials must be [user]:password");
            return false;
        }
        memcpy(s->user, p, (size_t)(colon - p));
        memcpy(s->password, colon + 1, (size_t)(at - colon - 1));
        p = at + 1;
    }
    size_t host_length = strcspn(p, ":/");
    if (host_length == 0 || host_length >= sizeof s->host) {
        snprintf(err, err_size, "Redis URL needs a host");
        return false;
    }
    memcpy(s->host, p, host_length);
    p += host_length;
    s->port = 6379;
    if (*p == ':') {
        char *end;
        long port = strtol(p + 1, &end, 10);
        if (end == p + 1 || port < 1 || port > 65535 || (*end && *end != '/')) {
            snprintf(err, err_size, "Redis URL port must be 1 to 65535");
            return false;
        }
        s->port = (int)port;
        p = end;
    }
    if (*p == '/' && p[1]) {
        char *end;
        long db = strtol(p + 1, &end, 10);
        if (*end || db < 0 || db > 1000) {
            snprintf(err, err_size, "Redis URL database must be a number");
            return false;
        }
        s->db = (int)db;
    }
    return true;
}

/* Sets the script and its SHA-1 (EVALSHA's name for it). */
static bool script_init(script_t *script, const char *text)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    script->text = text;
    if (!EVP_Digest(text, strlen(text), digest, &length, EVP_sha1(), NULL) || length != 20)
        return false;
    for (unsigned i = 0; i < length; i++)
        snprintf(script->sha + 2 * i, 3, "%02x", digest[i]);
    return true;
}

store_t *store_open(const store_config_t *cfg, char *err, size_t err_size)
{
    store_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    if (!parse_url(s, cfg->url, err, err_size)) {
        free(s);
        return NULL;
    }
    s->connect_timeout = ms_to_timeval(cfg->connect_timeout_ms);
    s->command_timeout = ms_to_timeval(cfg->command_timeout_ms);
    if (!script_init(&s->cas, cas_script) || !script_init(&s->load, load_script)) {
        snprintf(err, err_size, "cannot hash the store scripts");
        free(s);
        return NULL;
    }
    if (pthread_key_create(&s->connection_key, free_connection)) {
        snprintf(err, err_size, "cannot create thread key");
        free(s);
        return NULL;
    }
    return s;
}

void store_stats(store_t *store, store_stats_t *out)
{
    out->errors = atomic_load(&store->errors);
    out->connects = atomic_load(&store->connects);
}

void store_close(store_t *store)
{
    if (!store)
        return;
    redisContext *c = pthread_getspecific(store->connection_key);
    if (c) {
        redisFree(c);
        pthread_setspecific(store->connection_key, NULL);
    }
    pthread_key_delete(store->connection_key);
    memset(store->password, 0, sizeof store->password);
    free(store);
}

/* Runs a command that must answer OK (AUTH, SELECT) on a new connection. */
static bool setup_command(redisContext *c, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Forgets this thread's connection after a failure; the next call reconnects. */
static void drop_connection(store_t *s)
{
    redisContext *c = pthread_getspecific(s->connection_key);
    pthread_setspecific(s->connection_key, NULL);
    redisFree(c);
}

/* Whether Redis closed a kept connection while it sat idle: with no reply
 * owed, anything to read (an EOF, a reset, stray bytes) means it is done. So a
 * command is never sent into a connection already known dead, where it could
 * not be told apart from one that Redis received and then dropped. */
static bool closed_while_idle(const redisContext *c)
{
    struct pollfd p = { .fd = c->fd, .events = POLLIN };
    return poll(&p, 1, 0) != 0;
}

/* This thread's connection, made (with timeouts, AUTH and SELECT) when there
 * is none or the kept one was closed while idle; *reused tells which. */
static redisContext *connection(store_t *s, bool *reused)
{
    redisContext *c = pthread_getspecific(s->connection_key);
    *reused = c && !closed_while_idle(c);
    if (*reused)
        return c;
    if (c)
        drop_connection(s);
    c = store_connect_raw(s, NULL, 0);
    if (c)
        pthread_setspecific(s->connection_key, c);
    return c;
}

/* Sends a command; NULL (and the connection dropped) when no reply came.
 * A connection kept from earlier that turns out closed (Redis restarted, an
 * idle timeout) is remade once at once, so only a Redis that stays away costs
 * a failure. A timeout is not retried: it would double the wait. *sent (when
 * not NULL) is set true once an attempt failed after the whole command had
 * left: Redis may have run it, so a write's caller must not treat that failure,
 * or the resend's refusal, as "not written". */
static redisReply *command(store_t *s, int argc, const char **argv, const size_t *lengths, bool *sent)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        bool reused;
        redisContext *c = connection(s, &reused);
        if (!c)
            return NULL;
        redisReply *r = redisCommandArgv(c, argc, argv, lengths);
        if (r && !c->err)
            return r;
        int saved_errno = errno;
        bool closed = c->err == REDIS_ERR_EOF
                      || (c->err == REDIS_ERR_IO && saved_errno != EAGAIN && saved_errno != EWOULDBLOCK
                          && saved_errno != ETIMEDOUT);
        /* hiredis empties its output buffer once write() took all of it. */
        if (sent && c->obuf && sdslen(c->obuf) == 0)
            *sent = true;
        if (r)
            freeReplyObject(r);
        drop_connection(s);
        atomic_fetch_add(&s->errors, 1);
        if (!reused || !closed)
            return NULL;
    }
    return NULL;
}

store_status_t store_ping(store_t *store)
{
    const char *argv[] = { "PING" };
    redisReply *r = command(store, 1, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    bool ok = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return ok ? STORE_OK : STORE_EUNAVAILABLE;
}

/* Room for chessd:idem:<scope>:<sha256 hex>, a scope being a game id and a
 * caller's token HMAC (see store_idempotency_t). */
enum { IDEMPOTENCY_KEY_SIZE = 256 };

/* A game's keys share the hash tag {id}, so one script may touch them all
 * on any Redis. The record of the first format lived under chessd:game:<id>. */
enum { GAME_KEY_HASH = 0, GAME_KEY_MOVES, GAME_KEY_HISTORY, GAME_KEY_COUNT, GAME_KEY_SIZE = 96 };

static bool game_keys(const char *id, char keys[GAME_KEY_COUNT][GAME_KEY_SIZE])
{
    static const char *const kinds[GAME_KEY_COUNT] = { "game", "moves", "history" };
    for (int i = 0; i < GAME_KEY_COUNT; i++) {
        int n = snprintf(keys[i], GAME_KEY_SIZE, "chessd:%s:{%s}", kinds[i], id);
        if (n <= 0 || n >= GAME_KEY_SIZE)
            return false;
    }
    return true;
}

static bool legacy_key(const char *id, char *key, size_t size)
{
    int n = snprintf(key, size, "chessd:game:%s", id);
    return n > 0 && (size_t)n < size;
}

/* The list of the idempotency records kept within scope (see cas_script). */
static bool idempotency_list_key(const char *scope, char *key, size_t size)
{
    int n = snprintf(key, size, "chessd:idemlist:%s", scope);
    return n > 0 && (size_t)n < size;
}

/* The idempotency record's key: the client's key is hashed, so any text is safe. */
static bool idempotency_key(const char *scope, const char *client_key, char *key, size_t size)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (!EVP_Digest(client_key, strlen(client_key), digest, &length, EVP_sha256(), NULL))
        return false;
    int n = snprintf(key, size, "chessd:idem:%s:", scope);
    if (n < 0 || (size_t)n + 2 * length >= size)
        return false;
    for (unsigned i = 0; i < length && (size_t)n + 3 <= size; i++)
        n += snprintf(key + n, size - (size_t)n, "%02x", digest[i]);
    return true;
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
static store_status_t error_status(const redisReply *r)
{
    if (!strncmp(r->str, "WRONGTYPE", 9))
        return STORE_ECORRUPT;
    if (!strncmp(r->str, "OOM ", 4) || strstr(r->str, "OOM command not allowed"))
        return STORE_EFULL;
    return STORE_EUNAVAILABLE;
}

void store_game_clear(store_game_t *game)
{
    if (!game)
        return;
    free(game->state);
    free(game->history);
    free(game->moves);
    free(game->legacy);
    memset(game, 0, sizeof *game);
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
static redisReply *run_script(store_t *s, const script_t *script, int argc, const char **argv, size_t *lengths,
                              bool *sent)
{
    argv[0] = "EVALSHA";
    argv[1] = script->sha;
    lengths[0] = 7;
    lengths[1] = 40;
    redisReply *r = command(s, argc, argv, lengths, sent);
    if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        freeReplyObject(r);
        argv[0] = "EVAL";
        argv[1] = script->text;
        lengths[0] = 4;
        lengths[1] = strlen(script->text);
        r = command(s, argc, argv, lengths, sent);
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
    redisReply *r = command(store, 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
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
    redisReply *r = run_script(store, &store->load, 8, argv, lengths, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 0) {
        freeReplyObject(r);
        return legacy_fallback ? load_legacy(store, id, out) : STORE_ENOT_FOUND;
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
    redisReply *r = command(store, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
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
    return get_string(store, redis_key, answer, &length, false);
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
    return STORE_ECORRUPT;
}

static const char *const line_ops[] = { "keep", "append", "set", "truncate" };

store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay)
{
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE], legacy[GAME_KEY_SIZE], idem_key[IDEMPOTENCY_KEY_SIZE],
        idem_list[IDEMPOTENCY_KEY_SIZE], flags[4] = "", expected[24], next[24], history_count[16], ttl[16],
        moves_keep[24], history_keep[24], idem_ttl[16] = "0", keep_max[16] = "0", time_from[24], deadline[24],
        channel[STORE_CHANNEL_SIZE] = "";
    if (!game_keys(id, keys) || !legacy_key(id, legacy, sizeof legacy) || (unsigned)change->line_op > STORE_LINE_TRUNCATE)
        return STORE_ENOT_FOUND;
    bool with_idem = idempotency && idempotency->key;
    if (with_idem && !idempotency_key(idempotency->scope, idempotency->key, idem_key, sizeof idem_key))
        return STORE_ECORRUPT;
    bool bounded = with_idem && idempotency->keep_max > 0;
    if (bounded && !idempotency_list_key(idempotency->scope, idem_list, sizeof idem_list))
        return STORE_ECORRUPT;
    snprintf(expected, sizeof expected, "%llu", (unsigned long long)expected_version);
    snprintf(next, sizeof next, "%llu", (unsigned long long)expected_version + 1);
    snprintf(history_count, sizeof history_count, "%u", change->history_count);
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds);
    snprintf(moves_keep, sizeof moves_keep, "%zu", change->moves_keep);
    snprintf(time_from, sizeof time_from, "%lld", (long long)(change->time_from_ms > 0 ? change->time_from_ms : 0));
    snprintf(deadline, sizeof deadline, "%lld", (long long)(change->deadline_ms > 0 ? change->deadline_ms : 0));
    if (change->event_length)
        store_game_channel(id, channel);
    snprintf(history_keep, sizeof history_keep, "%zu", change->history_keep);
    if (with_idem) {
        snprintf(idem_ttl, sizeof idem_ttl, "%u", idempotency->ttl_seconds);
        snprintf(keep_max, sizeof keep_max, "%u", idempotency->keep_max);
    }
    enum { ARGS_MAX = 32 /* 3 + 6 keys + 18 values */ };
    const char *argv[ARGS_MAX];
    size_t lengths[ARGS_MAX];
    char key_count[4];
    int argc = 3, nkeys = GAME_KEY_COUNT;
#define PUSH(text, length) (argv[argc] = (text), lengths[argc] = (length), argc++)
#define PUSH_TEXT(text) PUSH(text, strlen(text))
    for (int i = 0; i < GAME_KEY_COUNT; i++)
        PUSH_TEXT(keys[i]);
    if (change->replaces_legacy) {
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
    snprintf(key_count, sizeof key_count, "%d", nkeys);
    argv[2] = key_count;
    lengths[2] = strlen(key_count);
    PUSH_TEXT(flags);
    PUSH_TEXT(expected);
    PUSH_TEXT(next);
    PUSH(change->state, change->state_length);
    PUSH_TEXT(history_count);
    PUSH_TEXT(line_ops[change->line_op]);
    if (change->line_op == STORE_LINE_TRUNCATE) {
        PUSH_TEXT(moves_keep);
        PUSH_TEXT(history_keep);
    } else if (change->line_op == STORE_LINE_KEEP) {
        PUSH("", 0);
        PUSH("", 0);
    } else {
        PUSH(change->moves ? change->moves : "", change->moves ? change->moves_length : 0);
        PUSH(change->history ? change->history : "", change->history ? change->history_length : 0);
    }
    PUSH_TEXT(ttl);
    PUSH_TEXT(with_idem ? idempotency->answer : "");
    PUSH_TEXT(idem_ttl);
    PUSH_TEXT(keep_max);
    PUSH_TEXT(change->expected_write_id ? change->expected_write_id : "");
    PUSH_TEXT(change->write_id ? change->write_id : "");
    PUSH_TEXT(time_from);
    PUSH_TEXT(deadline);
    PUSH_TEXT(channel);
    PUSH(change->event_length ? change->event : "", change->event_length);
#undef PUSH_TEXT
#undef PUSH

    bool sent = false;
    redisReply *r = run_script(store, &store->cas, argc, argv, lengths, &sent);
    if (!r)
        return sent ? STORE_EUNKNOWN : STORE_EUNAVAILABLE;
    uint64_t current = 0;
    store_status_t status = r->type != REDIS_REPLY_ERROR ? script_result(r, &current, replay) : error_status(r);
    freeReplyObject(r);
    /* A resend that finds the version this write would have made cannot tell
     * its own first send (answered by a closing connection) from another writer. */
    if (sent && (status == STORE_ECONFLICT || status == STORE_EEXISTS) && current == expected_version + 1)
        status = STORE_EUNKNOWN;
    if (current_version)
        *current_version = current;
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
    redisReply *r = command(store, 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE; /* maybe stored: the next call reads it */
    status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_OK;
    *created = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (status != STORE_OK)
        return status;
    /* Read back even when this call stored it: Redis is the one truth. A key
     * gone again already (deleted, evicted) is for the next call. */
    status = token_secret_get(store, secret, length);
    return status == STORE_ENOT_FOUND ? STORE_EUNAVAILABLE : status;
}

redisContext *store_connect_raw(store_t *s, char *err, size_t err_size)
{
    redisContext *c = redisConnectWithTimeout(s->host, s->port, s->connect_timeout);
    const char *why = !c ? "out of memory" : c->err ? c->errstr : NULL;
    if (!why && redisSetTimeout(c, s->command_timeout) != REDIS_OK)
        why = "cannot set the command timeout";
    if (!why) {
        char db[16];
        snprintf(db, sizeof db, "%d", s->db);
        const char *auth_user[] = { "AUTH", s->user, s->password };
        const char *auth[] = { "AUTH", s->password };
        const char *select[] = { "SELECT", db };
        if (s->password[0] && !(s->user[0] ? setup_command(c, 3, auth_user) : setup_command(c, 2, auth)))
            why = "AUTH was refused";
        else if (s->db && !setup_command(c, 2, select))
            why = "SELECT was refused";
    }
    if (why) {
        if (err_size)
            snprintf(err, err_size, "Redis %s:%d: %s", s->host, s->port, why);
        redisFree(c);
        atomic_fetch_add(&s->errors, 1);
        return NULL;
    }
    atomic_fetch_add(&s->connects, 1);
    return c;
}
