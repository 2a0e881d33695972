/* Redis implementation of store.h on hiredis (0.14, synchronous). One
 * connection per thread, kept in thread-specific data and dropped after any
 * error so the next call reconnects (re-applying the timeouts). Every write
 * goes through one Lua script, run by EVALSHA with an EVAL fallback; a write
 * whose command left wholly but got no answer is reported as unknown, never
 * as unavailable, because Redis may still run it. */
#include "store.h"

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

/* Compare-and-set of a game record, with its idempotency record.
 * KEYS[1] game, KEYS[2] idempotency record (optional), KEYS[3] the list of
 * the records kept in its scope (optional: only when they are bounded).
 * ARGV: expected version (0: create), new version, data, ttl (0: keep),
 *       idempotency answer, idempotency ttl, most records kept in the scope.
 * The bound keeps what one caller can store flat: a client looping a
 * change with fresh keys replaces its own oldest answers, no more. */
static const char cas_script[] =
    "if #KEYS > 1 then\n"
    "  local prior = redis.call('GET', KEYS[2])\n"
    "  if prior then return {'replay', prior} end\n"
    "end\n"
    "local current = redis.call('HGET', KEYS[1], 'version')\n"
    "if ARGV[1] == '0' then\n"
    "  if current then return {'exists', current} end\n"
    "elseif not current then\n"
    "  return {'missing', ''}\n"
    "elseif current ~= ARGV[1] then\n"
    "  return {'conflict', current}\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3])\n"
    "if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[4]) else redis.call('PERSIST', KEYS[1]) end\n"
    "if #KEYS > 1 then\n"
    "  if tonumber(ARGV[6]) > 0 then redis.call('SET', KEYS[2], ARGV[5], 'EX', ARGV[6]) else redis.call('SET', KEYS[2], ARGV[5]) end\n"
    "end\n"
    "if #KEYS > 2 then\n"
    "  redis.call('RPUSH', KEYS[3], KEYS[2])\n"
    "  for i = 1, redis.call('LLEN', KEYS[3]) - tonumber(ARGV[7]) do\n"
    "    local oldest = redis.call('LPOP', KEYS[3])\n"
    "    if oldest then redis.call('DEL', oldest) end\n"
    "  end\n"
    "  if tonumber(ARGV[6]) > 0 then redis.call('EXPIRE', KEYS[3], ARGV[6]) end\n"
    "end\n"
    "return {'ok', ARGV[2]}\n";

struct store {
    char host[128];
    int port;
    int db;
    char user[64];
    char password[128];
    struct timeval connect_timeout, command_timeout;
    char script_sha[41];
    pthread_key_t connection_key;
    atomic_ullong errors, connects;
};

static const char *const status_names[STORE_STATUS_COUNT] = {
    "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt", "full", "unknown",
};

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
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned digest_length = 0;
    if (!EVP_Digest(cas_script, strlen(cas_script), digest, &digest_length, EVP_sha1(), NULL)) {
        snprintf(err, err_size, "cannot hash the store script");
        free(s);
        return NULL;
    }
    for (unsigned i = 0; i < digest_length && i < 20; i++)
        snprintf(s->script_sha + 2 * i, 3, "%02x", digest[i]);
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
    c = redisConnectWithTimeout(s->host, s->port, s->connect_timeout);
    if (!c || c->err || redisSetTimeout(c, s->command_timeout) != REDIS_OK) {
        redisFree(c);
        atomic_fetch_add(&s->errors, 1);
        return NULL;
    }
    char db[16];
    snprintf(db, sizeof db, "%d", s->db);
    const char *auth_user[] = { "AUTH", s->user, s->password };
    const char *auth[] = { "AUTH", s->password };
    const char *select[] = { "SELECT", db };
    if ((s->password[0] && !(s->user[0] ? setup_command(c, 3, auth_user) : setup_command(c, 2, auth)))
        || (s->db && !setup_command(c, 2, select))) {
        redisFree(c);
        atomic_fetch_add(&s->errors, 1);
        return NULL;
    }
    atomic_fetch_add(&s->connects, 1);
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

static bool game_key(const char *id, char *key, size_t size)
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

store_status_t store_game_load(store_t *store, const char *id, char **data, size_t *length, uint64_t *version)
{
    char key[128];
    if (!game_key(id, key, sizeof key))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HMGET", key, "version", "data" };
    redisReply *r = command(store, 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        redisReply *v = r->element[0], *d = r->element[1];
        if (v->type == REDIS_REPLY_NIL && d->type == REDIS_REPLY_NIL) {
            status = STORE_ENOT_FOUND;
        } else if (v->type == REDIS_REPLY_STRING && d->type == REDIS_REPLY_STRING) {
            char *end;
            *version = strtoull(v->str, &end, 10);
            if (*end == '\0' && *version > 0 && (*data = copy_bytes(d->str, d->len))) {
                *length = d->len;
                status = STORE_OK;
            }
        }
    }
    freeReplyObject(r);
    return status;
}

store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer)
{
    char redis_key[IDEMPOTENCY_KEY_SIZE];
    if (!idempotency_key(scope, key, redis_key, sizeof redis_key))
        return STORE_ECORRUPT;
    const char *argv[] = { "GET", redis_key };
    redisReply *r = command(store, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        status = STORE_ENOT_FOUND;
    } else if (r->type == REDIS_REPLY_STRING) {
        *answer = copy_bytes(r->str, r->len);
        status = *answer ? STORE_OK : STORE_ECORRUPT;
    }
    freeReplyObject(r);
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
    return STORE_ECORRUPT;
}

store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version, const char *data,
                                size_t length, unsigned ttl_seconds, const store_idempotency_t *idempotency,
                                uint64_t *current_version, char **replay)
{
    char key[128], idem_key[IDEMPOTENCY_KEY_SIZE], idem_list[IDEMPOTENCY_KEY_SIZE], expected[24], next[24], ttl[16],
        idem_ttl[16], keep_max[16];
    if (!game_key(id, key, sizeof key))
        return STORE_ENOT_FOUND;
    snprintf(expected, sizeof expected, "%llu", (unsigned long long)expected_version);
    snprintf(next, sizeof next, "%llu", (unsigned long long)expected_version + 1);
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds);
    bool with_idem = idempotency && idempotency->key;
    if (with_idem && !idempotency_key(idempotency->scope, idempotency->key, idem_key, sizeof idem_key))
        return STORE_ECORRUPT;
    bool bounded = with_idem && idempotency->keep_max > 0;
    if (bounded && !idempotency_list_key(idempotency->scope, idem_list, sizeof idem_list))
        return STORE_ECORRUPT;
    if (with_idem) {
        snprintf(idem_ttl, sizeof idem_ttl, "%u", idempotency->ttl_seconds);
        snprintf(keep_max, sizeof keep_max, "%u", idempotency->keep_max);
    }
    const char *argv[14] = { "EVALSHA", store->script_sha, bounded ? "3" : with_idem ? "2" : "1", key };
    size_t lengths[14];
    int argc = 4;
    if (with_idem)
        argv[argc++] = idem_key;
    if (bounded)
        argv[argc++] = idem_list;
    argv[argc++] = expected;
    argv[argc++] = next;
    argv[argc++] = data;
    argv[argc++] = ttl;
    if (with_idem) {
        argv[argc++] = idempotency->answer;
        argv[argc++] = idem_ttl;
        argv[argc++] = keep_max;
    }
    for (int i = 0; i < argc; i++)
        lengths[i] = argv[i] == data ? length : strlen(argv[i]);

    bool sent = false;
    redisReply *r = command(store, argc, argv, lengths, &sent);
    if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        /* First use on this Redis (or after a restart): EVAL loads the script. */
        freeReplyObject(r);
        argv[0] = "EVAL";
        argv[1] = cas_script;
        lengths[0] = 4;
        lengths[1] = strlen(cas_script);
        r = command(store, argc, argv, lengths, &sent);
    }
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
    const char *argv[] = { "GET", STORE_TOKEN_SECRET_KEY };
    redisReply *r = command(store, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        status = STORE_ENOT_FOUND;
    } else if (r->type == REDIS_REPLY_STRING) {
        *secret = copy_bytes(r->str, r->len);
        *length = r->len;
        status = *secret ? STORE_OK : STORE_EUNAVAILABLE;
        explicit_bzero(r->str, r->len); /* the one copy left is the caller's */
    }
    freeReplyObject(r);
    return status;
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
