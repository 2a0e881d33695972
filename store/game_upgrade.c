/* The upgrade pass's store calls (game_upgrade.h). The walk over every
 * node's game keys: SCAN, a node chosen by a slot it serves. The keep of a
 * game's keys: one script on its slot. The pass's claim, lease and record:
 * scripts on the {upgrade} slot. */
#include "game_upgrade.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "game_keys.h"

enum { NUMBER_SIZE = 24 };

/* The first slot served by the node that serves the least slot after
 * node_slot's node (every slot of a node above its first): the next node to
 * walk, or CLUSTER_SLOT_COUNT when none is left. */
static unsigned next_node_slot(const cluster_map_t *map, unsigned node_slot)
{
    unsigned current = map->slot_node[node_slot];
    for (unsigned slot = node_slot + 1; slot < CLUSTER_SLOT_COUNT; slot++) {
        unsigned node = map->slot_node[slot];
        if (node == CLUSTER_NO_NODE || node == current)
            continue;
        unsigned first = 0;
        while (map->slot_node[first] != node)
            first++;
        if (first == slot)
            return slot;
    }
    return CLUSTER_SLOT_COUNT;
}

/* The walk moves to its next node, or ends. */
static store_status_t next_node(store_t *store, store_game_scan_t *scan)
{
    scan->cursor[0] = '\0';
    if (!store_is_cluster(store)) {
        scan->done = true;
        return STORE_OK;
    }
    cluster_map_t *map = malloc(sizeof *map); /* large: not on the stack */
    if (!map || !store_cluster_map(store, map)) {
        free(map);
        return STORE_EUNAVAILABLE;
    }
    unsigned next = next_node_slot(map, scan->node_slot);
    free(map);
    scan->done = next == CLUSTER_SLOT_COUNT;
    scan->node_slot = scan->done ? scan->node_slot : next;
    return STORE_OK;
}

/* The id in a game key: "chessd:game:{<id>}", or "chessd:game:<id>" (the
 * first format); false for anything else. */
static bool key_id(const redisReply *key, char id[STORE_ENGINE_ID_SIZE])
{
    static const char prefix[] = "chessd:game:";
    if (key->type != REDIS_REPLY_STRING || key->len <= sizeof prefix - 1
        || memcmp(key->str, prefix, sizeof prefix - 1))
        return false;
    const char *start = key->str + sizeof prefix - 1;
    size_t length = key->len - (sizeof prefix - 1);
    if (start[0] == '{') {
        if (length < 3 || start[length - 1] != '}')
            return false;
        start++;
        length -= 2;
    }
    if (!store_id_ok(start, length))
        return false;
    memcpy(id, start, length);
    id[length] = '\0';
    return true;
}

store_status_t store_game_scan(store_t *store, store_game_scan_t *scan, unsigned count,
                               void (*fn)(void *ctx, const char *id), void *ctx)
{
    if (scan->done)
        return STORE_OK;
    char hint[NUMBER_SIZE];
    snprintf(hint, sizeof hint, "%u", count ? count : 100);
    const char *argv[] = { "SCAN", scan->cursor[0] ? scan->cursor : "0", "MATCH", "chessd:game:*", "COUNT", hint };
    redisReply *r = store_command(store, scan->node_slot, 6, argv, NULL, NULL);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_ARRAY) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
                               || r->element[0]->len >= sizeof scan->cursor
                               || r->element[1]->type != REDIS_REPLY_ARRAY))
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        char id[STORE_ENGINE_ID_SIZE];
        for (size_t i = 0; i < r->element[1]->elements; i++)
            if (key_id(r->element[1]->element[i], id))
                fn(ctx, id);
        memcpy(scan->cursor, r->element[0]->str, r->element[0]->len);
        scan->cursor[r->element[0]->len] = '\0';
        if (!strcmp(scan->cursor, "0"))
            status = next_node(store, scan);
    }
    if (r)
        freeReplyObject(r);
    return status;
}

/* Keep: KEYS the game's keys (its three, or the record of the first
 * format); ARGV[1] the version. 1 kept, 0 another version, -1 gone. */
static const char keep_script[] = "local v = redis.call('HGET', KEYS[1], 'version')\n"
                                  "if not v then return -1 end\n"
                                  "if v ~= ARGV[1] then return 0 end\n"
                                  "for i = 1, #KEYS do redis.call('PERSIST', KEYS[i]) end\n"
                                  "return 1\n";

/* The keep script over count keys: 1 kept, 0 another version, -1 gone. */
static store_status_t keep_keys(store_t *store, int count, const char *const *keys, const char *version,
                                long long *outcome)
{
    const char *values[] = { version };
    redisReply *r = store_script_texts(store, game_keys_slot(keys[0]), keep_script, count, keys, 1, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (status == STORE_OK)
        *outcome = r->integer;
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_game_keep(store_t *store, const char *id, uint64_t version)
{
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE], legacy[GAME_KEY_SIZE], text[NUMBER_SIZE];
    if (!store_id_ok(id, strlen(id)) || !game_keys_name(id, keys) || !game_keys_legacy(id, legacy, sizeof legacy))
        return STORE_ENOT_FOUND;
    snprintf(text, sizeof text, "%llu", (unsigned long long)version);
    const char *names[] = { keys[0], keys[1], keys[2] };
    const char *old_name[] = { legacy };
    long long outcome = 0;
    store_status_t status = keep_keys(store, GAME_KEY_COUNT, names, text, &outcome);
    if (status == STORE_OK && outcome < 0)
        status = keep_keys(store, 1, old_name, text, &outcome);
    if (status != STORE_OK)
        return status;
    return outcome > 0 ? STORE_OK : outcome == 0 ? STORE_ECONFLICT : STORE_ENOT_FOUND;
}

/* Claim: KEYS[1] the state, KEYS[2] the lease; ARGV[1] the owner, ARGV[2]
 * the lease (ms), ARGV[3] the passes to make. {'run', pass}, {'wait', ms}
 * or {'done', 0}. */
static const char claim_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local done, next_at = string.match(redis.call('GET', KEYS[1]) or '0 0', '^(%d+) (%d+)$')\n"
    "done, next_at = tonumber(done or 0), tonumber(next_at or 0)\n"
    "if done >= tonumber(ARGV[3]) then return {'done', 0} end\n"
    "if now < next_at then return {'wait', next_at - now} end\n"
    "local holder = redis.call('GET', KEYS[2])\n"
    "if holder and holder ~= ARGV[1] then return {'wait', math.max(redis.call('PTTL', KEYS[2]), 1)} end\n"
    "redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])\n"
    "return {'run', done + 1}\n";

/* Renew: KEYS[2] the lease; ARGV[1] the owner, ARGV[2] the lease (ms). 1, or 0 when not the owner's. */
static const char renew_script[] = "if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end\n"
                                   "redis.call('PEXPIRE', KEYS[2], ARGV[2])\n"
                                   "return 1\n";

/* Done: KEYS as the claim's; ARGV[1] the owner, ARGV[2] the pass, ARGV[3]
 * the gap (ms) before the next. 1, or 0 when the lease is not the owner's. */
static const char done_script[] =
    "if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. string.format('%d', now + tonumber(ARGV[3])))\n"
    "redis.call('DEL', KEYS[2])\n"
    "return 1\n";

enum { UPGRADE_KEY_SIZE = sizeof STORE_UPGRADE_KEY_PREFIX + 8 + STORE_UPGRADE_GENERATION_MAX };

static bool generation_ok(const char *generation)
{
    size_t length = strlen(generation);
    return length && length < STORE_UPGRADE_GENERATION_MAX
           && strspn(generation, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.:_-") == length;
}

/* One of the pass's scripts over generation's state and lease; NULL when
 * the generation is none (or no reply came). */
static redisReply *upgrade_script(store_t *store, const char *generation, const char *text, int value_count,
                                  const char *const *values)
{
    char state[UPGRADE_KEY_SIZE], lease[UPGRADE_KEY_SIZE];
    if (!generation_ok(generation))
        return NULL;
    snprintf(state, sizeof state, STORE_UPGRADE_KEY_PREFIX "pass:%s", generation);
    snprintf(lease, sizeof lease, STORE_UPGRADE_KEY_PREFIX "lease:%s", generation);
    const char *const keys[] = { state, lease };
    return store_script_texts(store, game_keys_slot(state), text, 2, keys, value_count, values);
}

/* A script answering 1 (STORE_OK) or 0 (STORE_ECONFLICT). */
static store_status_t upgrade_yes_no(store_t *store, const char *generation, const char *text, int value_count,
                                     const char *const *values)
{
    if (!generation_ok(generation))
        return STORE_ENOT_FOUND;
    redisReply *r = upgrade_script(store, generation, text, value_count, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && r->integer != 1)
        status = STORE_ECONFLICT;
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_upgrade_claim(store_t *store, const char *generation, const char *owner, unsigned lease_ms,
                                   unsigned passes, store_upgrade_t *out)
{
    if (!generation_ok(generation))
        return STORE_ENOT_FOUND;
    char lease[NUMBER_SIZE], most[NUMBER_SIZE];
    snprintf(lease, sizeof lease, "%u", lease_ms ? lease_ms : 1);
    snprintf(most, sizeof most, "%u", passes);
    const char *values[] = { owner, lease, most };
    redisReply *r = upgrade_script(store, generation, claim_script, 3, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_ARRAY) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
                               || r->element[1]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        const char *step = r->element[0]->str;
        long long value = r->element[1]->integer;
        *out = (store_upgrade_t){ .step = !strcmp(step, "run")    ? STORE_UPGRADE_RUN
                                          : !strcmp(step, "wait") ? STORE_UPGRADE_WAIT
                                                                  : STORE_UPGRADE_DONE };
        if (out->step == STORE_UPGRADE_RUN)
            out->pass = (unsigned)value;
        else if (out->step == STORE_UPGRADE_WAIT)
            out->wait_ms = value;
    }
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_upgrade_renew(store_t *store, const char *generation, const char *owner, unsigned lease_ms)
{
    char lease[NUMBER_SIZE];
    snprintf(lease, sizeof lease, "%u", lease_ms ? lease_ms : 1);
    const char *values[] = { owner, lease };
    return upgrade_yes_no(store, generation, renew_script, 2, values);
}

store_status_t store_upgrade_done(store_t *store, const char *generation, const char *owner, unsigned pass,
                                  unsigned gap_ms)
{
    char number[NUMBER_SIZE], gap[NUMBER_SIZE];
    snprintf(number, sizeof number, "%u", pass);
    snprintf(gap, sizeof gap, "%u", gap_ms);
    const char *values[] = { owner, number, gap };
    return upgrade_yes_no(store, generation, done_script, 3, values);
}
