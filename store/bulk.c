/* The bulks of bulk.h: each a hash (its info and ids) and a set of its
 * games in play under the bulk's hash tag, so every script about a bulk,
 * its creation with every game included, runs on one node. The creation
 * checks every key before its first write, as a game's write does. */
#include "bulk.h"
#include "store_private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "deadlines.h"
#include "game_keys.h"

enum { KEY_SIZE = 64, NUMBER_SIZE = 24 };

/* KEYS[1] the bulk, KEYS[2] its set in play, KEYS[3] the idempotency
 * record when ARGV[1] is 'i', then three keys a game (game_keys.h). ARGV[2]
 * the info, ARGV[3] the ids, ARGV[4] the count, ARGV[5] and ARGV[6] the
 * kept answer and its ttl, then five values a game: id, state, meta, write
 * id, webhook subscriptions (store/webhooks.h). A full Redis refuses the first write, an empty SETRANGE, before any
 * other is made. */
static const char create_script[] =
    "local n, k = tonumber(ARGV[4]), 3\n"
    "local idem\n"
    "if ARGV[1] == 'i' then idem = KEYS[3]; k = 4 end\n"
    "if idem then\n"
    "  local prior = redis.call('GET', idem)\n"
    "  if prior then return {'replay', prior} end\n"
    "end\n"
    "if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return {'exists', KEYS[1]} end\n"
    "for i = 0, n - 1 do\n"
    "  local g = k + 3 * i\n"
    "  if redis.call('EXISTS', KEYS[g], KEYS[g + 1], KEYS[g + 2]) > 0 then return {'exists', KEYS[g]} end\n"
    "end\n"
    "redis.call('SETRANGE', KEYS[k + 1], 0, '')\n"
    "for i = 0, n - 1 do\n"
    "  local g, a = k + 3 * i, 7 + 5 * i\n"
    "  redis.call('HSET', KEYS[g], 'version', '1', 'state', ARGV[a + 1], 'hlen', '0', 'wid', ARGV[a + 3])\n"
    "  if ARGV[a + 2] ~= '' then redis.call('HSET', KEYS[g], 'meta', ARGV[a + 2]) end\n"
    "  if ARGV[a + 4] ~= '' then redis.call('HSET', KEYS[g], 'wh', ARGV[a + 4]) end\n"
    "  redis.call('SET', KEYS[g + 1], '')\n"
    "  redis.call('SET', KEYS[g + 2], '')\n"
    "  redis.call('SADD', KEYS[2], ARGV[a])\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'info', ARGV[2], 'ids', ARGV[3])\n"
    "if idem then\n"
    "  if tonumber(ARGV[6]) > 0 then redis.call('SET', idem, ARGV[5], 'EX', ARGV[6])\n"
    "  else redis.call('SET', idem, ARGV[5]) end\n"
    "end\n"
    "return {'ok', '1'}\n";

/* KEYS[1] the deadline index; ARGV id and due time pairs, each lowered as
 * deadlines.c's lower does. */
static const char deadlines_script[] =
    "for i = 1, #ARGV, 2 do\n"
    "  local due = tonumber(ARGV[i + 1])\n"
    "  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])\n"
    "  if s and tonumber(s) - 1 < due then due = tonumber(s) - 1 end\n"
    "  redis.call('ZADD', KEYS[1], due, ARGV[i])\n"
    "end\n"
    "return 1\n";

/* KEYS the games' hashes: {now, state, version, ...}, false for a game gone. */
static const char states_script[] =
    "local t = redis.call('TIME')\n"
    "local out = {tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))}\n"
    "for i = 1, #KEYS do\n"
    "  local v = redis.call('HMGET', KEYS[i], 'state', 'version')\n"
    "  out[#out + 1] = v[1]\n"
    "  out[#out + 1] = v[2]\n"
    "end\n"
    "return out\n";

/* KEYS[1] the bulk; ARGV[1] the info expected, ARGV[2] the new one. */
static const char update_script[] =
    "local info = redis.call('HGET', KEYS[1], 'info')\n"
    "if not info then return 'missing' end\n"
    "if info ~= ARGV[1] then return 'conflict' end\n"
    "redis.call('HSET', KEYS[1], 'info', ARGV[2])\n"
    "return 'ok'\n";

/* KEYS[1] the bulk, KEYS[2] its set in play; ARGV[1] the game, ARGV[2]
 * the bulk's expiry once no game plays (s; 0: none). */
static const char ended_script[] =
    "redis.call('SREM', KEYS[2], ARGV[1])\n"
    "if redis.call('SCARD', KEYS[2]) == 0 and tonumber(ARGV[2]) > 0 then\n"
    "  redis.call('EXPIRE', KEYS[1], ARGV[2], 'NX')\n"
    "end\n"
    "return 1\n";

/* The bulk's two keys and their slot; false for an id that is none. */
static bool bulk_keys(const char *id, char hash[KEY_SIZE], char active[KEY_SIZE], unsigned *slot)
{
    if (!store_id_ok(id, strlen(id)))
        return false;
    snprintf(hash, KEY_SIZE, "chessd:bulk:{%s}", id);
    snprintf(active, KEY_SIZE, "chessd:bulk:{%s}:active", id);
    *slot = cluster_key_slot(hash, strlen(hash));
    return true;
}

static store_script_t create;
static bool create_ready;
static pthread_once_t create_once = PTHREAD_ONCE_INIT;

static void create_init(void) { create_ready = store_script_init(&create, create_script); }

/* The command's arguments, as store_script_run takes them. */
typedef struct {
    const char **argv;
    size_t *lengths;
    int argc;
    char (*keys)[GAME_KEY_COUNT][GAME_KEY_SIZE];
} args_t;

static void push(args_t *a, const char *text, size_t length)
{
    a->argv[a->argc] = text;
    a->lengths[a->argc++] = length;
}

static void push_text(args_t *a, const char *text) { push(a, text, strlen(text)); }

/* What the creation script answered. */
static store_status_t create_result(const redisReply *r, char **replay)
{
    if (r->type == REDIS_REPLY_ERROR)
        return store_error_status(r);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING)
        return STORE_ECORRUPT;
    const char *outcome = r->element[0]->str;
    size_t length;
    if (!strcmp(outcome, "replay"))
        return store_reply_string(r->element[1], replay, &length) ? STORE_EREPLAY : STORE_ECORRUPT;
    return !strcmp(outcome, "ok") ? STORE_OK : !strcmp(outcome, "exists") ? STORE_EEXISTS : STORE_ECORRUPT;
}

/* The ids joined by spaces (malloc'd), or NULL. */
static char *ids_text(const store_bulk_game_t *games, unsigned count)
{
    size_t size = 1;
    for (unsigned i = 0; i < count; i++)
        size += strlen(games[i].id) + 1;
    char *text = malloc(size), *p = text;
    for (unsigned i = 0; text && i < count; i++) {
        size_t length = strlen(games[i].id);
        if (i)
            *p++ = ' ';
        memcpy(p, games[i].id, length);
        p += length;
    }
    if (text)
        *p = '\0';
    return text;
}

/* Fills a with the creation's keys and values; false when a key cannot be
 * named, or a game is not in the bulk's slot. */
static bool create_args(const char *hash, const char *active, unsigned slot, const char *idem_key, const char *info,
                        const char *ids, const store_bulk_game_t *games, unsigned count,
                        const store_idempotency_t *idem, char numbers[3][NUMBER_SIZE], args_t *a)
{
    a->argc = 3;
    push_text(a, hash);
    push_text(a, active);
    if (idem_key)
        push_text(a, idem_key);
    for (unsigned i = 0; i < count; i++) {
        if (!store_id_ok(games[i].id, strlen(games[i].id)) || store_id_slot(games[i].id) != slot
            || !game_keys_name(games[i].id, a->keys[i]))
            return false;
        for (int k = 0; k < GAME_KEY_COUNT; k++)
            push_text(a, a->keys[i][k]);
    }
    snprintf(numbers[0], NUMBER_SIZE, "%d", a->argc - 3);
    a->argv[2] = numbers[0];
    a->lengths[2] = strlen(numbers[0]);
    snprintf(numbers[1], NUMBER_SIZE, "%u", count);
    snprintf(numbers[2], NUMBER_SIZE, "%u", idem_key ? idem->ttl_seconds : 0);
    push_text(a, idem_key ? "i" : "");
    push_text(a, info);
    push_text(a, ids);
    push_text(a, numbers[1]);
    push_text(a, idem_key ? idem->answer : "");
    push_text(a, numbers[2]);
    for (unsigned i = 0; i < count; i++) {
        push_text(a, games[i].id);
        push(a, games[i].state, games[i].state_length);
        push(a, games[i].meta ? games[i].meta : "", games[i].meta ? games[i].meta_length : 0);
        push_text(a, games[i].write_id);
        push_text(a, games[i].webhooks ? games[i].webhooks : "");
    }
    return true;
}

store_status_t store_bulk_create(store_t *store, const char *id, const char *info, const store_bulk_game_t *games,
                                 unsigned count, const store_idempotency_t *idem, char **replay)
{
    char hash[KEY_SIZE], active[KEY_SIZE], idem_key[GAME_KEYS_IDEMPOTENCY_SIZE], numbers[3][NUMBER_SIZE];
    unsigned slot;
    bool with_idem = idem && idem->key;
    if (count == 0 || count > STORE_BULK_GAMES_MAX || !bulk_keys(id, hash, active, &slot))
        return STORE_ENOT_FOUND;
    if (with_idem && (!game_keys_idempotency(idem->scope, idem->key, false, idem_key, sizeof idem_key)
                      || game_keys_slot(idem_key) != slot))
        return STORE_ECORRUPT;
    pthread_once(&create_once, create_init);
    size_t room = 3 + 3 + 3 * (size_t)count + 6 + 5 * (size_t)count;
    args_t a = { malloc(room * sizeof *a.argv), malloc(room * sizeof *a.lengths), 0,
                 malloc(count * sizeof *a.keys) };
    char *ids = ids_text(games, count);
    store_status_t status = STORE_EUNAVAILABLE;
    if (!create_ready || !a.argv || !a.lengths || !a.keys || !ids) {
        /* out of memory, or no SHA-1: nothing sent */
    } else if (!create_args(hash, active, slot, with_idem ? idem_key : NULL, info, ids, games, count, idem, numbers,
                            &a)) {
        status = STORE_ENOT_FOUND;
    } else {
        redisReply *r = store_script_run(store, slot, &create, a.argc, a.argv, a.lengths, NULL);
        status = r ? create_result(r, replay) : STORE_EUNAVAILABLE;
        if (r)
            freeReplyObject(r);
        if (status == STORE_OK)
            store_full_reset(store);
    }
    free(ids);
    free(a.keys);
    free(a.lengths);
    free(a.argv);
    return status;
}

store_status_t store_bulk_deadlines(store_t *store, const char *const *ids, const int64_t *due, unsigned count)
{
    store_script_t script;
    size_t room = 3 + 1 + 2 * (size_t)count;
    const char **argv = malloc(room * sizeof *argv);
    size_t *lengths = malloc(room * sizeof *lengths);
    char (*numbers)[NUMBER_SIZE] = malloc((count + 1) * sizeof *numbers);
    store_status_t status = STORE_EUNAVAILABLE;
    if (argv && lengths && numbers && store_script_init(&script, deadlines_script)) {
        args_t a = { argv, lengths, 3, NULL };
        argv[2] = "1";
        lengths[2] = 1;
        push_text(&a, STORE_DEADLINES_KEY);
        for (unsigned i = 0; i < count; i++) {
            if (due[i] <= 0)
                continue;
            snprintf(numbers[i], NUMBER_SIZE, "%lld", (long long)due[i]);
            push_text(&a, ids[i]);
            push_text(&a, numbers[i]);
        }
        status = STORE_OK;
        if (a.argc > 4) {
            unsigned slot = cluster_key_slot(STORE_DEADLINES_KEY, sizeof STORE_DEADLINES_KEY - 1);
            redisReply *r = store_script_run(store, slot, &script, a.argc, argv, lengths, NULL);
            status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
            if (r)
                freeReplyObject(r);
        }
    }
    free(numbers);
    free(lengths);
    free(argv);
    return status;
}

/* HMGET of the bulk's info and ids. */
store_status_t store_bulk_read(store_t *store, const char *id, char **info, char **ids)
{
    char hash[KEY_SIZE], active[KEY_SIZE];
    unsigned slot;
    *info = *ids = NULL;
    if (!bulk_keys(id, hash, active, &slot))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HMGET", hash, "info", "ids" };
    redisReply *r = store_command(store, slot, 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    size_t length;
    if (status == STORE_OK && (r->elements != 2 || r->element[0]->type != r->element[1]->type))
        status = STORE_ECORRUPT;
    else if (status == STORE_OK && r->element[0]->type == REDIS_REPLY_NIL)
        status = STORE_ENOT_FOUND;
    else if (status == STORE_OK
             && (!store_reply_string(r->element[0], info, &length) || !store_reply_string(r->element[1], ids, &length)))
        status = STORE_ECORRUPT;
    freeReplyObject(r);
    if (status != STORE_OK) {
        free(*info);
        free(*ids);
        *info = *ids = NULL;
    }
    return status;
}

static store_script_t states;
static bool states_ready;
static pthread_once_t states_once = PTHREAD_ONCE_INIT;

static void states_init(void) { states_ready = store_script_init(&states, states_script); }

/* Reads the states script's reply into the caller's arrays. */
static store_status_t states_result(const redisReply *r, unsigned count, char **out, size_t *lengths,
                                    uint64_t *versions, int64_t *now_ms)
{
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status != STORE_OK)
        return status;
    if (r->elements != 1 + 2 * (size_t)count || r->element[0]->type != REDIS_REPLY_STRING)
        return STORE_ECORRUPT;
    *now_ms = strtoll(r->element[0]->str, NULL, 10);
    for (unsigned i = 0; i < count; i++) {
        const redisReply *state = r->element[1 + 2 * i], *version = r->element[2 + 2 * i];
        out[i] = NULL;
        versions[i] = 0;
        if (state->type == REDIS_REPLY_NIL)
            continue;
        if (!store_reply_version(version, &versions[i]) || !store_reply_string(state, &out[i], &lengths[i]))
            return STORE_ECORRUPT;
    }
    return STORE_OK;
}

store_status_t store_bulk_states(store_t *store, const char *id, const char *const *ids, unsigned count,
                                 char **out, size_t *lengths, uint64_t *versions, int64_t *now_ms)
{
    char hash[KEY_SIZE], active[KEY_SIZE];
    unsigned slot;
    for (unsigned i = 0; i < count; i++)
        out[i] = NULL;
    if (count == 0 || count > STORE_BULK_GAMES_MAX || !bulk_keys(id, hash, active, &slot))
        return STORE_ENOT_FOUND;
    pthread_once(&states_once, states_init);
    size_t room = 3 + (size_t)count;
    args_t a = { malloc(room * sizeof *a.argv), malloc(room * sizeof *a.lengths), 3,
                 malloc(count * sizeof *a.keys) };
    char number[NUMBER_SIZE];
    store_status_t status = STORE_EUNAVAILABLE;
    bool named = states_ready && a.argv && a.lengths && a.keys;
    for (unsigned i = 0; named && i < count; i++) {
        named = store_id_ok(ids[i], strlen(ids[i])) && store_id_slot(ids[i]) == slot
                && game_keys_name(ids[i], a.keys[i]);
        if (named)
            push_text(&a, a.keys[i][GAME_KEY_HASH]);
    }
    if (named) {
        snprintf(number, sizeof number, "%u", count);
        a.argv[2] = number;
        a.lengths[2] = strlen(number);
        redisReply *r = store_script_run(store, slot, &states, a.argc, a.argv, a.lengths, NULL);
        status = r ? states_result(r, count, out, lengths, versions, now_ms) : STORE_EUNAVAILABLE;
        if (r)
            freeReplyObject(r);
    } else if (a.argv && a.lengths && a.keys && states_ready) {
        status = STORE_ECORRUPT; /* an id of the record that is none, or not in the bulk's slot */
    }
    if (status != STORE_OK)
        for (unsigned i = 0; i < count; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    free(a.keys);
    free(a.lengths);
    free(a.argv);
    return status;
}

store_status_t store_bulk_update(store_t *store, const char *id, const char *expected, const char *info)
{
    char hash[KEY_SIZE], active[KEY_SIZE];
    unsigned slot;
    if (!bulk_keys(id, hash, active, &slot))
        return STORE_ENOT_FOUND;
    const char *keys[] = { hash }, *values[] = { expected, info };
    redisReply *r = store_script_texts(store, slot, update_script, 1, keys, 2, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_STRING) : STORE_EUNAVAILABLE;
    if (status == STORE_OK)
        status = !strcmp(r->str, "ok") ? STORE_OK : !strcmp(r->str, "conflict") ? STORE_ECONFLICT : STORE_ENOT_FOUND;
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_bulk_game_ended(store_t *store, const char *id, const char *game_id, unsigned ttl_seconds)
{
    char hash[KEY_SIZE], active[KEY_SIZE], ttl[NUMBER_SIZE];
    unsigned slot;
    if (!bulk_keys(id, hash, active, &slot))
        return STORE_ENOT_FOUND;
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds);
    const char *keys[] = { hash, active }, *values[] = { game_id, ttl };
    redisReply *r = store_script_texts(store, slot, ended_script, 2, keys, 2, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (r)
        freeReplyObject(r);
    return status;
}
