/* The webhook keys of webhooks.h: subscriptions and logs in the {webhooks}
 * slot, outboxes and retry states in their game's slot, the due index a
 * claimed index (claimed_index.h) as the deadline index is. Scores are whole
 * milliseconds, exact in a double. */
#include "webhooks.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimed_index.h"
#include "cluster.h"
#include "game_keys.h"

enum { NUMBER_SIZE = 24, KEY_SIZE = 160, MEMBER_SIZE = STORE_ENGINE_ID_SIZE + STORE_WEBHOOK_ID_SIZE };

static unsigned hooks_slot(void) { return cluster_key_slot(STORE_WEBHOOKS_DUE_KEY, sizeof STORE_WEBHOOKS_DUE_KEY - 1); }

static unsigned key_slot(const char *key) { return cluster_key_slot(key, strlen(key)); }

/* A subscription id: "wh_" and base64url. */
static bool sub_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n < 4 || n >= STORE_WEBHOOK_ID_SIZE || strncmp(id, "wh_", 3))
        return false;
    return store_id_ok(id + 3, n - 3);
}

static bool id_ok(const char *id) { return store_id_ok(id, strlen(id)); }

/* The parts joined into key; false when they would not fit size. */
static bool join(const char *const *parts, int count, char *key, size_t size)
{
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        size_t n = strlen(parts[i]);
        if (used + n >= size)
            return false;
        memcpy(key + used, parts[i], n);
        used += n;
    }
    key[used] = '\0';
    return true;
}

/* The name prefix + text, false when it would not fit size. */
static bool name(const char *prefix, const char *text, char *key, size_t size)
{
    return join((const char *const[]){ prefix, text }, 2, key, size);
}

bool store_webhook_outbox_key(const char *id, const char *sub, char *key, size_t size)
{
    return join((const char *const[]){ "chessd:whout:{", id, "}:", sub }, 4, key, size);
}

bool store_webhook_retry_key(const char *id, char *key, size_t size)
{
    return join((const char *const[]){ "chessd:whretry:{", id, "}" }, 3, key, size);
}

static store_status_t reply_status(const redisReply *r, int type)
{
    return r ? store_reply_status(r, type) : STORE_EUNAVAILABLE;
}

/* Runs text on the {webhooks} slot; the reply's status against type, the
 * reply itself in *out when wanted (else freed). */
static store_status_t hooks_script(store_t *store, const char *text, int key_count, const char *const *keys,
                                   int value_count, const char *const *values, int type, redisReply **out)
{
    redisReply *r = store_script_texts(store, hooks_slot(), text, key_count, keys, value_count, values);
    store_status_t status = reply_status(r, type);
    if (out && status == STORE_OK)
        *out = r;
    else if (r)
        freeReplyObject(r);
    return status;
}

/* Put: KEYS[1] the record, KEYS[2] (when given) the owner's set; ARGV
 * the fields in pairs, then the ttl last. */
static const char put_script[] =
    "local ttl = tonumber(ARGV[#ARGV])\n"
    "redis.call('DEL', KEYS[1])\n"
    "redis.call('HSET', KEYS[1], unpack(ARGV, 1, #ARGV - 1))\n"
    "if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end\n"
    "if KEYS[2] then redis.call('SADD', KEYS[2], string.sub(KEYS[1], " /* the id after the prefix */
    "string.len('" STORE_WEBHOOKS_SUB_PREFIX "') + 1)) end\n"
    "return 1\n";

store_status_t store_webhook_sub_put(store_t *store, const store_webhook_sub_t *sub, unsigned ttl_seconds)
{
    char record[KEY_SIZE], owner[KEY_SIZE], kinds[NUMBER_SIZE], created[NUMBER_SIZE], ttl[NUMBER_SIZE];
    if (!sub_id_ok(sub->id) || !name(STORE_WEBHOOKS_SUB_PREFIX, sub->id, record, sizeof record)
        || !name(STORE_WEBHOOKS_OWNER_PREFIX, sub->owner, owner, sizeof owner))
        return STORE_ENOT_FOUND;
    snprintf(kinds, sizeof kinds, "%u", sub->kinds);
    snprintf(created, sizeof created, "%lld", (long long)sub->created_ms);
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds);
    const char *keys[] = { record, owner };
    const char *values[] = { "url",   sub->url,   "kinds",  kinds,       "secret",  sub->secret, "owner",
                             sub->owner, "scope", sub->scope, "target", sub->target, "created", created, ttl };
    int key_count = strcmp(sub->scope, STORE_WEBHOOK_SCOPE_KEY) ? 1 : 2; /* only a key's own are listed */
    return hooks_script(store, put_script, key_count, keys, (int)(sizeof values / sizeof *values), values,
                        REDIS_REPLY_INTEGER, NULL);
}

/* text into out (size bytes), false when it does not fit. */
static bool copy_field(const redisReply *v, char *out, size_t size)
{
    if (v->type != REDIS_REPLY_STRING || v->len >= size)
        return false;
    memcpy(out, v->str, v->len);
    out[v->len] = '\0';
    return true;
}

store_status_t store_webhook_sub_get(store_t *store, const char *id, store_webhook_sub_t *out)
{
    char record[KEY_SIZE];
    if (!sub_id_ok(id) || !name(STORE_WEBHOOKS_SUB_PREFIX, id, record, sizeof record))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HMGET", record, "url", "kinds", "secret", "owner", "scope", "target", "created" };
    redisReply *r = store_command(store, hooks_slot(), 9, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && (r->elements != 7 || r->element[0]->type == REDIS_REPLY_NIL))
        status = r->elements == 7 ? STORE_ENOT_FOUND : STORE_ECORRUPT;
    if (status == STORE_OK) {
        memset(out, 0, sizeof *out);
        memcpy(out->id, id, strlen(id) + 1);
        char number[NUMBER_SIZE];
        bool ok = copy_field(r->element[0], out->url, sizeof out->url)
                  && copy_field(r->element[1], number, sizeof number)
                  && copy_field(r->element[2], out->secret, sizeof out->secret)
                  && copy_field(r->element[3], out->owner, sizeof out->owner)
                  && copy_field(r->element[4], out->scope, sizeof out->scope)
                  && copy_field(r->element[5], out->target, sizeof out->target);
        if (ok) {
            out->kinds = (unsigned)strtoul(number, NULL, 10);
            ok = copy_field(r->element[6], number, sizeof number);
            out->created_ms = ok ? strtoll(number, NULL, 10) : 0;
        }
        if (!ok)
            status = STORE_ECORRUPT;
    }
    if (r)
        freeReplyObject(r);
    return status;
}

/* Delete: KEYS[1] the record, KEYS[2] its log, KEYS[3] the owner's set;
 * ARGV[1] the owner, ARGV[2] the id. 1 when deleted, 0 when not theirs. */
static const char delete_script[] =
    "if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end\n"
    "redis.call('DEL', KEYS[1], KEYS[2])\n"
    "redis.call('SREM', KEYS[3], ARGV[2])\n"
    "return 1\n";

store_status_t store_webhook_sub_delete(store_t *store, const char *id, const char *owner)
{
    char record[KEY_SIZE], log[KEY_SIZE], set[KEY_SIZE];
    if (!sub_id_ok(id) || !name(STORE_WEBHOOKS_SUB_PREFIX, id, record, sizeof record)
        || !name(STORE_WEBHOOKS_LOG_PREFIX, id, log, sizeof log)
        || !name(STORE_WEBHOOKS_OWNER_PREFIX, owner, set, sizeof set))
        return STORE_ENOT_FOUND;
    const char *keys[] = { record, log, set };
    const char *values[] = { owner, id };
    redisReply *r = NULL;
    store_status_t status = hooks_script(store, delete_script, 3, keys, 2, values, REDIS_REPLY_INTEGER, &r);
    if (status == STORE_OK) {
        status = r->integer == 1 ? STORE_OK : STORE_ENOT_FOUND;
        freeReplyObject(r);
    }
    return status;
}

/* Of: KEYS[1] the owner's set; ARGV[1] the most. The ids whose record is
 * still there; those gone (expired) leave the set. */
static const char of_script[] =
    "local out = {}\n"
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
    "  if redis.call('EXISTS', '" STORE_WEBHOOKS_SUB_PREFIX "' .. id) == 1 then\n"
    "    if #out < tonumber(ARGV[1]) then out[#out + 1] = id end\n"
    "  else redis.call('SREM', KEYS[1], id) end\n"
    "end\n"
    "table.sort(out)\n"
    "return out\n";

store_status_t store_webhook_subs_of(store_t *store, const char *owner, char (*out)[STORE_WEBHOOK_ID_SIZE],
                                     unsigned max, unsigned *count)
{
    *count = 0;
    char set[KEY_SIZE], most[NUMBER_SIZE];
    if (!name(STORE_WEBHOOKS_OWNER_PREFIX, owner, set, sizeof set))
        return STORE_ENOT_FOUND;
    snprintf(most, sizeof most, "%u", max);
    const char *keys[] = { set };
    const char *values[] = { most };
    redisReply *r = NULL;
    store_status_t status = hooks_script(store, of_script, 1, keys, 1, values, REDIS_REPLY_ARRAY, &r);
    if (status != STORE_OK)
        return status;
    for (size_t i = 0; i < r->elements && *count < max; i++)
        if (copy_field(r->element[i], out[*count], STORE_WEBHOOK_ID_SIZE))
            (*count)++;
    freeReplyObject(r);
    return STORE_OK;
}

store_status_t store_webhook_game_add(store_t *store, const char *id)
{
    if (!id_ok(id))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "SADD", STORE_WEBHOOKS_GAMES_KEY, id };
    redisReply *r = store_command(store, hooks_slot(), 3, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_webhook_games_add(store_t *store, const char *const *ids, unsigned count)
{
    if (!count)
        return STORE_OK;
    const char **argv = malloc((2 + (size_t)count) * sizeof *argv);
    if (!argv)
        return STORE_EUNAVAILABLE;
    argv[0] = "SADD";
    argv[1] = STORE_WEBHOOKS_GAMES_KEY;
    for (unsigned i = 0; i < count; i++) {
        if (!id_ok(ids[i])) {
            free(argv);
            return STORE_ENOT_FOUND;
        }
        argv[2 + i] = ids[i];
    }
    redisReply *r = store_command(store, hooks_slot(), 2 + (int)count, argv, NULL, NULL);
    free(argv);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_webhook_mark_due(store_t *store, const char *id, const char *const *subs, unsigned count,
                                      int64_t now_ms)
{
    if (!id_ok(id) || count > STORE_WEBHOOKS_PER_GAME)
        return STORE_ENOT_FOUND;
    if (!count)
        return STORE_OK;
    char now[NUMBER_SIZE], members[STORE_WEBHOOKS_PER_GAME][MEMBER_SIZE];
    snprintf(now, sizeof now, "%lld", (long long)now_ms);
    const char *argv[3 + 2 * STORE_WEBHOOKS_PER_GAME] = { "ZADD", STORE_WEBHOOKS_DUE_KEY, "NX" };
    int argc = 3;
    for (unsigned i = 0; i < count; i++) {
        if (!sub_id_ok(subs[i]))
            return STORE_ENOT_FOUND;
        snprintf(members[i], sizeof members[i], "%s %s", id, subs[i]);
        argv[argc++] = now;
        argv[argc++] = members[i];
    }
    redisReply *r = store_command(store, hooks_slot(), argc, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

/* A member "<game> <sub>" split into entry; false when it is neither. */
static bool member_read(const redisReply *m, store_webhook_due_t *entry)
{
    if (m->type != REDIS_REPLY_STRING)
        return false;
    const char *space = memchr(m->str, ' ', m->len);
    if (!space)
        return false;
    size_t game = (size_t)(space - m->str), sub = m->len - game - 1;
    if (game >= sizeof entry->game || sub >= sizeof entry->sub)
        return false;
    memcpy(entry->game, m->str, game);
    entry->game[game] = '\0';
    memcpy(entry->sub, space + 1, sub);
    entry->sub[sub] = '\0';
    return id_ok(entry->game) && sub_id_ok(entry->sub);
}

store_status_t store_webhook_claim(store_t *store, unsigned lease_ms, unsigned max, store_webhook_due_t *out,
                                   unsigned *count, int64_t *now_ms)
{
    *count = 0;
    if (!max)
        return STORE_OK;
    redisReply *r = NULL;
    store_status_t status = store_index_claim(store, STORE_WEBHOOKS_DUE_KEY, lease_ms, max, &r);
    if (status != STORE_OK)
        return status;
    for (size_t i = 2; i < r->elements && *count < max; i++) {
        if (!member_read(r->element[i], &out[*count])) {
            store_index_drop(store, STORE_WEBHOOKS_DUE_KEY, r->element[i]);
            continue;
        }
        out[(*count)++].claim_ms = (int64_t)r->element[1]->integer;
    }
    if (now_ms)
        *now_ms = (int64_t)r->element[0]->integer;
    freeReplyObject(r);
    return STORE_OK;
}

/* Head: KEYS[1] the outbox, KEYS[2] the retry hash; ARGV[1] the
 * subscription. {first or false, length, retry or false}. */
static const char head_script[] =
    "return {redis.call('LINDEX', KEYS[1], 0), redis.call('LLEN', KEYS[1]), redis.call('HGET', KEYS[2], ARGV[1])}\n";

/* The outbox's and retry hash's names, in the game's slot. */
static bool game_keys(const char *id, const char *sub, char outbox[KEY_SIZE], char retry[KEY_SIZE])
{
    return id_ok(id) && sub_id_ok(sub) && store_webhook_outbox_key(id, sub, outbox, KEY_SIZE)
           && store_webhook_retry_key(id, retry, KEY_SIZE);
}

/* "attempts first next" into retry; false when it is not that. */
static bool retry_read(const char *text, store_webhook_retry_t *retry)
{
    unsigned attempts;
    long long first, next;
    if (sscanf(text, "%u %lld %lld", &attempts, &first, &next) != 3)
        return false;
    retry->attempts = attempts;
    retry->first_failed_ms = first;
    retry->next_ms = next;
    return true;
}

store_status_t store_webhook_head(store_t *store, const char *id, const char *sub, char **entry, size_t *length,
                                  unsigned *held, store_webhook_retry_t *retry)
{
    *entry = NULL;
    *length = 0;
    *held = 0;
    memset(retry, 0, sizeof *retry);
    char outbox[KEY_SIZE], hash[KEY_SIZE];
    if (!game_keys(id, sub, outbox, hash))
        return STORE_ENOT_FOUND;
    const char *keys[] = { outbox, hash };
    const char *values[] = { sub };
    redisReply *r = store_script_texts(store, key_slot(outbox), head_script, 2, keys, 1, values);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && (r->elements != 3 || r->element[1]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        *held = (unsigned)r->element[1]->integer;
        const redisReply *first = r->element[0], *state = r->element[2];
        if (first->type == REDIS_REPLY_STRING && !store_reply_string(first, entry, length))
            status = STORE_EUNAVAILABLE;
        if (state->type == REDIS_REPLY_STRING && !retry_read(state->str, retry))
            memset(retry, 0, sizeof *retry);
    }
    if (r)
        freeReplyObject(r);
    return status;
}

/* Done: KEYS[1] the outbox, KEYS[2] the retry hash; ARGV[1] the
 * subscription, ARGV[2] the first event as read, ARGV[3] its retry state
 * ('' : it is done with). {the outbox's length after, its first event then
 * or false, that event's retry state or false}: head's answer, saving a
 * round trip to a deliverer that goes on with the next event. */
static const char done_script[] =
    "if redis.call('LINDEX', KEYS[1], 0) == ARGV[2] then\n"
    "  if ARGV[3] == '' then\n"
    "    redis.call('LPOP', KEYS[1])\n"
    "    redis.call('HDEL', KEYS[2], ARGV[1])\n"
    "  else redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end\n"
    "end\n"
    "return {redis.call('LLEN', KEYS[1]), redis.call('LINDEX', KEYS[1], 0), redis.call('HGET', KEYS[2], ARGV[1])}\n";

store_status_t store_webhook_done(store_t *store, const char *id, const char *sub, const char *entry,
                                  size_t length, const store_webhook_retry_t *retry, unsigned *left,
                                  store_webhook_head_t *next)
{
    *left = 0;
    if (next)
        *next = (store_webhook_head_t){ 0 };
    char outbox[KEY_SIZE], hash[KEY_SIZE], state[3 * NUMBER_SIZE] = "";
    if (!game_keys(id, sub, outbox, hash) || strlen(entry) != length)
        return STORE_ENOT_FOUND;
    if (retry)
        snprintf(state, sizeof state, "%u %lld %lld", retry->attempts, (long long)retry->first_failed_ms,
                 (long long)retry->next_ms);
    const char *keys[] = { outbox, hash };
    const char *values[] = { sub, entry, state };
    redisReply *r = store_script_texts(store, key_slot(outbox), done_script, 2, keys, 3, values);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && (r->elements != 3 || r->element[0]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        *left = (unsigned)r->element[0]->integer;
        const redisReply *first = r->element[1], *state_reply = r->element[2];
        if (next && first->type == REDIS_REPLY_STRING) {
            next->held = *left;
            if (!store_reply_string(first, &next->entry, &next->length))
                status = STORE_EUNAVAILABLE;
            else if (state_reply->type == REDIS_REPLY_STRING && !retry_read(state_reply->str, &next->retry))
                memset(&next->retry, 0, sizeof next->retry);
        }
    }
    if (r)
        freeReplyObject(r);
    return status;
}

void store_webhook_log_free(char **lines, unsigned count)
{
    for (unsigned i = 0; lines && i < count; i++)
        free(lines[i]);
    free(lines);
}

store_status_t store_webhook_log_read(store_t *store, const char *sub, unsigned max, char ***lines, unsigned *count)
{
    *lines = NULL;
    *count = 0;
    char log[KEY_SIZE], last[NUMBER_SIZE];
    if (!sub_id_ok(sub) || !max || !name(STORE_WEBHOOKS_LOG_PREFIX, sub, log, sizeof log))
        return STORE_ENOT_FOUND;
    snprintf(last, sizeof last, "%u", max - 1);
    const char *argv[] = { "LRANGE", log, "0", last };
    redisReply *r = store_command(store, hooks_slot(), 4, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements) {
        *lines = calloc(r->elements, sizeof **lines);
        if (!*lines)
            status = STORE_EUNAVAILABLE;
        for (size_t i = 0; status == STORE_OK && i < r->elements && i < max; i++) {
            size_t length;
            if (r->element[i]->type != REDIS_REPLY_STRING)
                continue;
            if (!store_reply_string(r->element[i], &(*lines)[*count], &length))
                status = STORE_EUNAVAILABLE;
            else
                (*count)++;
        }
        if (status != STORE_OK) {
            store_webhook_log_free(*lines, *count);
            *lines = NULL;
            *count = 0;
        }
    }
    if (r)
        freeReplyObject(r);
    return status;
}

/* Look: KEYS[1] the game's hash, KEYS[2..] its outboxes. {hash there (0 or
 * 1), each outbox's length}. */
static const char look_script[] =
    "local out = {redis.call('EXISTS', KEYS[1])}\n"
    "for i = 2, #KEYS do out[i] = redis.call('LLEN', KEYS[i]) end\n"
    "return out\n";

/* The subscriptions a game carries ("sub=kinds sub=kinds": its hash's
 * field), split into subs; their count. */
static unsigned subs_of_text(const char *text, char subs[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE])
{
    unsigned count = 0;
    const char *p = text;
    while (*p && count < STORE_WEBHOOKS_PER_GAME) {
        size_t n = strcspn(p, "=");
        if (n && n < STORE_WEBHOOK_ID_SIZE) {
            memcpy(subs[count], p, n);
            subs[count][n] = '\0';
            if (sub_id_ok(subs[count]))
                count++;
        }
        p += strcspn(p, " ");
        while (*p == ' ')
            p++;
    }
    return count;
}

/* Sweeps one game: its outboxes that hold events marked due (NX: a claim
 * or a retry time stays); the game forgotten when nothing of it is left. */
static store_status_t sweep_game(store_t *store, const char *id, unsigned *marked)
{
    char names[GAME_KEY_COUNT][GAME_KEY_SIZE];
    if (!game_keys_name(id, names))
        return STORE_ENOT_FOUND;
    const char *hash = names[GAME_KEY_HASH];
    const char *argv[] = { "HGET", hash, "wh" };
    redisReply *r = store_command(store, key_slot(hash), 3, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    char subs[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE];
    unsigned count = r->type == REDIS_REPLY_STRING ? subs_of_text(r->str, subs) : 0;
    freeReplyObject(r);
    char outboxes[STORE_WEBHOOKS_PER_GAME][KEY_SIZE];
    const char *keys[1 + STORE_WEBHOOKS_PER_GAME] = { hash };
    for (unsigned i = 0; i < count; i++) {
        store_webhook_outbox_key(id, subs[i], outboxes[i], KEY_SIZE);
        keys[1 + i] = outboxes[i];
    }
    r = store_script_texts(store, key_slot(hash), look_script, (int)(1 + count), keys, 0, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements != 1 + count)
        status = STORE_ECORRUPT;
    bool left = status != STORE_OK || r->element[0]->integer == 1;
    for (unsigned i = 0; status == STORE_OK && i < count; i++) {
        if (r->element[1 + i]->type != REDIS_REPLY_INTEGER || r->element[1 + i]->integer == 0)
            continue;
        left = true;
        char member[MEMBER_SIZE];
        snprintf(member, sizeof member, "%s %s", id, subs[i]);
        const char *zadd[] = { "ZADD", STORE_WEBHOOKS_DUE_KEY, "NX", "0", member };
        redisReply *z = store_command(store, hooks_slot(), 5, zadd, NULL, NULL);
        if (z && z->type == REDIS_REPLY_INTEGER && z->integer == 1)
            (*marked)++;
        if (z)
            freeReplyObject(z);
    }
    if (r)
        freeReplyObject(r);
    if (status == STORE_OK && !left) {
        const char *srem[] = { "SREM", STORE_WEBHOOKS_GAMES_KEY, id };
        redisReply *s = store_command(store, hooks_slot(), 3, srem, NULL, NULL);
        if (s)
            freeReplyObject(s);
    }
    return status;
}

store_status_t store_webhook_sweep(store_t *store, uint64_t cursor, unsigned max, uint64_t *next, unsigned *marked)
{
    *next = 0;
    *marked = 0;
    char from[NUMBER_SIZE], most[NUMBER_SIZE];
    snprintf(from, sizeof from, "%llu", (unsigned long long)cursor);
    snprintf(most, sizeof most, "%u", max ? max : 1);
    const char *argv[] = { "SSCAN", STORE_WEBHOOKS_GAMES_KEY, from, "COUNT", most };
    redisReply *r = store_command(store, hooks_slot(), 5, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
                               || r->element[1]->type != REDIS_REPLY_ARRAY))
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        *next = strtoull(r->element[0]->str, NULL, 10);
        const redisReply *ids = r->element[1];
        for (size_t i = 0; i < ids->elements && status == STORE_OK; i++) {
            char id[STORE_ENGINE_ID_SIZE];
            if (!copy_field(ids->element[i], id, sizeof id) || !id_ok(id))
                continue;
            status = sweep_game(store, id, marked);
        }
    }
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_webhook_sweep_lock(store_t *store, unsigned ttl_ms, bool *held)
{
    *held = false;
    char ttl[NUMBER_SIZE];
    snprintf(ttl, sizeof ttl, "%u", ttl_ms ? ttl_ms : 1);
    const char *argv[] = { "SET", STORE_WEBHOOKS_SWEEP_KEY, "1", "NX", "PX", ttl };
    redisReply *r = store_command(store, hooks_slot(), 6, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_OK;
    *held = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return status;
}

store_status_t store_webhook_recheck(store_t *store, const char *id, const char *sub, bool *marked)
{
    *marked = false;
    char outbox[KEY_SIZE], hash[KEY_SIZE];
    if (!game_keys(id, sub, outbox, hash))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "LLEN", outbox };
    redisReply *r = store_command(store, key_slot(outbox), 2, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    bool waiting = status == STORE_OK && r->integer > 0;
    if (r)
        freeReplyObject(r);
    if (!waiting)
        return status;
    const char *const subs[] = { sub };
    status = store_webhook_mark_due(store, id, subs, 1, 0);
    *marked = status == STORE_OK;
    return status;
}

store_status_t store_webhook_sub_touch(store_t *store, const char *id, unsigned ttl_seconds)
{
    char record[KEY_SIZE], ttl[NUMBER_SIZE];
    if (!sub_id_ok(id) || !name(STORE_WEBHOOKS_SUB_PREFIX, id, record, sizeof record))
        return STORE_ENOT_FOUND;
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds);
    /* GT: only an expiry there already is moved, and only later. */
    const char *argv[] = { "EXPIRE", record, ttl, "GT" };
    redisReply *r = store_command(store, hooks_slot(), 4, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

/* Settle and log: KEYS[1] the index, KEYS[2] the log; ARGV[1..3] as the
 * settle's, ARGV[4] the lines kept, ARGV[5] the log's ttl, ARGV[6..] the
 * lines, oldest first. 1 when the entry held the claim, else 0. */
static const char settle_log_script[] =
    "if #ARGV > 5 then\n"
    "  redis.call('LPUSH', KEYS[2], unpack(ARGV, 6))\n"
    "  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)\n"
    "  if tonumber(ARGV[5]) > 0 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end\n"
    "end\n"
    STORE_INDEX_SETTLE_LUA
    "return held and 1 or 0\n";

store_status_t store_webhook_settle_log(store_t *store, const char *id, const char *sub, int64_t claim_ms,
                                        int64_t due_ms, const char *const *lines, unsigned line_count,
                                        unsigned log_ttl_seconds, bool *settled)
{
    if (settled)
        *settled = false;
    char member[MEMBER_SIZE], claim[NUMBER_SIZE], due[NUMBER_SIZE], log[KEY_SIZE], keep[NUMBER_SIZE],
        ttl[NUMBER_SIZE];
    if (!id_ok(id) || !sub_id_ok(sub) || !name(STORE_WEBHOOKS_LOG_PREFIX, sub, log, sizeof log)
        || !join((const char *const[]){ id, " ", sub }, 3, member, sizeof member)
        || line_count > STORE_WEBHOOK_LOG_LINES_MAX)
        return STORE_ENOT_FOUND;
    snprintf(claim, sizeof claim, "%lld", (long long)claim_ms);
    snprintf(due, sizeof due, "%lld", (long long)(due_ms > 0 ? due_ms : 0));
    snprintf(keep, sizeof keep, "%u", (unsigned)STORE_WEBHOOK_LOG_KEEP);
    snprintf(ttl, sizeof ttl, "%u", log_ttl_seconds);
    const char *keys[] = { STORE_WEBHOOKS_DUE_KEY, log };
    const char *values[5 + STORE_WEBHOOK_LOG_LINES_MAX] = { member, claim, due, keep, ttl };
    int value_count = 5;
    for (unsigned i = 0; i < line_count; i++)
        if (lines[i] && lines[i][0])
            values[value_count++] = lines[i];
    redisReply *r = NULL;
    store_status_t status = hooks_script(store, settle_log_script, 2, keys, value_count, values,
                                         REDIS_REPLY_INTEGER, &r);
    if (status == STORE_OK) {
        if (settled)
            *settled = r->integer == 1;
        freeReplyObject(r);
    }
    return status;
}
