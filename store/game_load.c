/* Loads of store.h: a game in one step (load_script), a game of the first
 * format, and idempotency records. A game not under its new keys is looked
 * for under its old one, then the new keys once more, for a replica may
 * convert it between the two reads. */
#include "store.h"
#include "store_private.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "game_keys.h"

/* Reads a game in one step. KEYS as the write's (store_game_write): the
 * hash, the move list, the history; ARGV[1] 'change' (version, state, the
 * last hlen history entries of ARGV[2] bytes each, the write id, Redis's
 * time in milliseconds, then when each player was last seen, '' : never,
 * and its subscriptions, '' : none)
 * or 'full' (the same, then the move list and the tags and metadata text,
 * '' for a game without, so a change never moves it). ARGV[3] names the
 * players seen now, first ('w', 'b', both or neither). An empty array: no
 * such game; {'damaged'}: a game whose keys disagree (see GAME_KEYS_LUA). */
static const char load_script[] =
    GAME_KEYS_LUA
    "local v = redis.call('HMGET', KEYS[1], 'version', 'state', 'hlen', 'wid', 'seen:white', 'seen:black', 'wh')\n"
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
    "local marks = {}\n"
    "for i, player in ipairs({'white', 'black'}) do\n"
    "  if string.find(ARGV[3], string.sub(player, 1, 1), 1, true) then\n"
    "    v[4 + i] = string.format('%.0f', now)\n"
    "    table.insert(marks, 'seen:' .. player)\n"
    "    table.insert(marks, v[4 + i])\n"
    "  end\n"
    "end\n"
    "if #marks > 0 then redis.call('HSET', KEYS[1], unpack(marks)) end\n"
    "local reply = {v[1], v[2], tail, v[4] or '', now, v[5] or '', v[6] or '', v[7] or ''}\n"
    "if ARGV[1] == 'full' then\n"
    "  reply[9] = redis.call('GET', KEYS[2]) or ''\n"
    "  reply[10] = redis.call('HGET', KEYS[1], 'meta') or ''\n"
    "end\n"
    "return reply\n";

/* load_script and its SHA-1, made once a process on the first load. */
static store_script_t load;
static bool load_ready;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_init(void) { load_ready = store_script_init(&load, load_script); }

/* A game of the first format: HMGET version data under its old key. */
static store_status_t load_legacy(store_t *store, const char *id, store_game_t *out)
{
    char key[GAME_KEY_SIZE];
    if (!game_keys_legacy(id, key, sizeof key))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HMGET", key, "version", "data" };
    redisReply *r = store_command(store, game_keys_slot(key), 4, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        if (r->element[0]->type == REDIS_REPLY_NIL && r->element[1]->type == REDIS_REPLY_NIL)
            status = STORE_ENOT_FOUND;
        else if (store_reply_version(r->element[0], &out->version)
                 && store_reply_string(r->element[1], &out->legacy, &out->legacy_length))
            status = STORE_OK;
    }
    freeReplyObject(r);
    return status;
}

/* The tags and metadata text of a full load into *out: none when empty. */
static bool read_meta(const redisReply *r, store_game_t *out)
{
    return r->type == REDIS_REPLY_STRING && (r->len == 0 || store_reply_string(r, &out->meta, &out->meta_length));
}

/* A player's last sign as the load read it: digits, or '' for never (0). */
static bool read_seen(const redisReply *r, int64_t *out)
{
    if (r->type != REDIS_REPLY_STRING || r->len > 18)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->str[i] < '0' || r->str[i] > '9')
            return false;
        v = v * 10 + (r->str[i] - '0');
    }
    *out = v;
    return true;
}

/* Whether r is the array load_script answers for a game, read into *out:
 * [version, state, history tail, write id, Redis's time, white's and
 * black's last signs, its subscriptions] and, in full, the move list and the meta text. What
 * was copied before a failure is out's to clear. */
static bool read_loaded(const redisReply *r, bool full, store_game_t *out)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != (full ? 10u : 8u)
        || !store_reply_version(r->element[0], &out->version)
        || !store_reply_string(r->element[1], &out->state, &out->state_length)
        || !store_reply_string(r->element[2], &out->history, &out->history_length)
        || r->element[3]->type != REDIS_REPLY_STRING || r->element[3]->len >= sizeof out->write_id
        || r->element[4]->type != REDIS_REPLY_INTEGER || r->element[4]->integer <= 0
        || !read_seen(r->element[5], &out->seen_ms[0]) || !read_seen(r->element[6], &out->seen_ms[1])
        || r->element[7]->type != REDIS_REPLY_STRING || r->element[7]->len >= sizeof out->webhooks
        || (full && !store_reply_string(r->element[8], &out->moves, &out->moves_length))
        || (full && !read_meta(r->element[9], out)))
        return false;
    out->now_ms = (int64_t)r->element[4]->integer;
    memcpy(out->write_id, r->element[3]->str, r->element[3]->len);
    out->write_id[r->element[3]->len] = '\0';
    memcpy(out->webhooks, r->element[7]->str, r->element[7]->len);
    out->webhooks[r->element[7]->len] = '\0';
    return true;
}

/* Whether r is load_script's {'damaged'}. */
static bool is_damaged(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_STRING
           && !strcmp(r->element[0]->str, "damaged");
}

/* One read: the new keys, then (when legacy_fallback) the record of the
 * first format; the players of `present` (bits) are marked seen first. */
static store_status_t game_load_once(store_t *store, const char *id, store_load_t what, unsigned present,
                                     store_game_t *out, bool legacy_fallback)
{
    memset(out, 0, sizeof *out);
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE];
    if (!game_keys_name(id, keys))
        return STORE_ENOT_FOUND;
    char entry[8], players[3] = "";
    snprintf(entry, sizeof entry, "%d", STORE_HISTORY_ENTRY_SIZE);
    for (int i = 0, n = 0; i < 2; i++)
        if (present & (1u << i))
            players[n++] = "wb"[i];
    const char *argv[] = { NULL, NULL, "3", keys[0], keys[1], keys[2], what == STORE_LOAD_FULL ? "full" : "change",
                           entry, players };
    enum { ARGC = sizeof argv / sizeof argv[0] };
    size_t lengths[ARGC];
    for (int i = 2; i < ARGC; i++)
        lengths[i] = strlen(argv[i]);
    pthread_once(&load_once, load_init);
    if (!load_ready)
        return STORE_EUNAVAILABLE; /* no SHA-1, which store_open checked */
    redisReply *r = store_script_run(store, game_keys_slot(keys[0]), &load, ARGC, argv, lengths, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 0) {
        freeReplyObject(r);
        return legacy_fallback ? load_legacy(store, id, out) : STORE_ENOT_FOUND;
    }
    if (is_damaged(r))
        status = STORE_EDAMAGED;
    else if (read_loaded(r, what == STORE_LOAD_FULL, out))
        status = STORE_OK;
    freeReplyObject(r);
    if (status != STORE_OK)
        store_game_clear(out);
    return status;
}

static store_status_t game_load(store_t *store, const char *id, store_load_t what, unsigned present,
                                store_game_t *out)
{
    store_status_t status = game_load_once(store, id, what, present, out, true);
    /* Between the two reads another replica may have converted a game of the
     * first format, writing the new keys and deleting the old one: look again. */
    return status == STORE_ENOT_FOUND ? game_load_once(store, id, what, present, out, false) : status;
}

store_status_t store_game_load(store_t *store, const char *id, store_load_t what, store_game_t *out)
{
    return game_load(store, id, what, 0, out);
}

store_status_t store_game_load_present(store_t *store, const char *id, unsigned present, store_game_t *out)
{
    return game_load(store, id, STORE_LOAD_CHANGE, present, out);
}

store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer)
{
    char redis_key[GAME_KEYS_IDEMPOTENCY_SIZE];
    if (!game_keys_idempotency(scope, key, false, redis_key, sizeof redis_key))
        return STORE_ECORRUPT;
    size_t length;
    store_status_t status = store_get_string(store, redis_key, answer, &length, false);
    /* On one node, a record of an untagged scope may still be under its old
     * name (for as long as the idempotency TTL kept it). */
    if (status == STORE_ENOT_FOUND && !store_is_cluster(store) && !game_keys_scope_tagged(scope)
        && game_keys_idempotency(scope, key, true, redis_key, sizeof redis_key))
        status = store_get_string(store, redis_key, answer, &length, false);
    return status;
}
