/* The deadline index of deadlines.h: a lowering, a claim and a settle, each
 * one script on the node of the {games} slot, so each is one step however
 * many replicas sweep. Scores are whole milliseconds, exact in a double. */
#include "deadlines.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

enum { NUMBER_SIZE = 24 };

/* Lower: KEYS[1] the index; ARGV[1] the id, ARGV[2] the due time. The
 * score set. */
static const char lower_script[] =
    "local due = tonumber(ARGV[2])\n"
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
    "if s and tonumber(s) - 1 < due then due = tonumber(s) - 1 end\n"
    "redis.call('ZADD', KEYS[1], due, ARGV[1])\n"
    "return due\n";

/* Claim: KEYS[1] the index; ARGV[1] the lease (ms), ARGV[2] the most
 * entries. {now, claim, id, id...}: Redis's clock, the score each claimed
 * entry has now, and their ids, the most overdue first. */
static const char claim_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local claim = now + tonumber(ARGV[1])\n"
    "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))\n"
    "local out = {now, claim}\n"
    "for i = 1, #due do\n"
    "  redis.call('ZADD', KEYS[1], claim, due[i])\n"
    "  out[#out + 1] = due[i]\n"
    "end\n"
    "return out\n";

/* Settle: KEYS[1] the index; ARGV[1] the id, ARGV[2] the claim, ARGV[3]
 * the new score ('0': remove). 1 when done, 0 when the entry no longer
 * holds the claim. */
static const char settle_script[] =
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
    "if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 0 end\n"
    "if ARGV[3] == '0' then redis.call('ZREM', KEYS[1], ARGV[1])\n"
    "else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end\n"
    "return 1\n";

static unsigned index_slot(void) { return cluster_key_slot(STORE_DEADLINES_KEY, sizeof STORE_DEADLINES_KEY - 1); }

/* One of this file's scripts over the index, with its values. */
static redisReply *index_script(store_t *store, const char *text, int value_count, const char *const *values)
{
    static const char *const keys[] = { STORE_DEADLINES_KEY };
    return store_script_texts(store, index_slot(), text, 1, keys, value_count, values);
}

/* The reply's status when it should be of type; a missing reply is Redis away. */
static store_status_t reply_status(const redisReply *r, int type)
{
    return r ? store_reply_status(r, type) : STORE_EUNAVAILABLE;
}

/* One of this file's scripts that answers an integer: *value (when not
 * NULL) is set to it on STORE_OK and left alone otherwise. */
static store_status_t index_script_integer(store_t *store, const char *text, int value_count,
                                           const char *const *values, int64_t *value)
{
    redisReply *r = index_script(store, text, value_count, values);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (status == STORE_OK && value)
        *value = (int64_t)r->integer;
    if (r)
        freeReplyObject(r);
    return status;
}

static bool id_ok(const char *id) { return store_id_ok(id, strlen(id)); }

store_status_t store_deadline_lower(store_t *store, const char *id, int64_t due_ms, int64_t *score)
{
    if (!id_ok(id))
        return STORE_ENOT_FOUND;
    char due[NUMBER_SIZE];
    snprintf(due, sizeof due, "%lld", (long long)due_ms);
    const char *values[] = { id, due };
    return index_script_integer(store, lower_script, 2, values, score);
}

/* Removes a member that is no game id, so that it does not stand first for ever. */
static void drop_member(store_t *store, const redisReply *member)
{
    const char *argv[] = { "ZREM", STORE_DEADLINES_KEY, member->str };
    size_t lengths[] = { 4, sizeof STORE_DEADLINES_KEY - 1, member->len };
    redisReply *r = store_command(store, index_slot(), 3, argv, lengths, NULL);
    if (r)
        freeReplyObject(r);
}

store_status_t store_deadline_claim(store_t *store, unsigned lease_ms, unsigned max, store_deadline_t *out,
                                    unsigned *count, int64_t *now_ms)
{
    *count = 0;
    if (!max)
        return STORE_OK;
    char lease[NUMBER_SIZE], most[NUMBER_SIZE];
    snprintf(lease, sizeof lease, "%u", lease_ms);
    snprintf(most, sizeof most, "%u", max);
    const char *values[] = { lease, most };
    redisReply *r = index_script(store, claim_script, 2, values);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && (r->elements < 2 || r->element[0]->type != REDIS_REPLY_INTEGER
                               || r->element[1]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    for (size_t i = 2; status == STORE_OK && i < r->elements && *count < max; i++) {
        const redisReply *member = r->element[i];
        if (member->type != REDIS_REPLY_STRING)
            continue;
        if (!store_id_ok(member->str, member->len)) {
            drop_member(store, member);
            continue;
        }
        memcpy(out[*count].id, member->str, member->len);
        out[*count].id[member->len] = '\0';
        out[(*count)++].claim_ms = (int64_t)r->element[1]->integer;
    }
    if (status == STORE_OK && now_ms)
        *now_ms = (int64_t)r->element[0]->integer;
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_deadline_settle(store_t *store, const char *id, int64_t claim_ms, int64_t due_ms,
                                     bool *settled)
{
    if (settled)
        *settled = false;
    if (!id_ok(id))
        return STORE_ENOT_FOUND;
    char claim[NUMBER_SIZE], due[NUMBER_SIZE];
    snprintf(claim, sizeof claim, "%lld", (long long)claim_ms);
    snprintf(due, sizeof due, "%lld", (long long)(due_ms > 0 ? due_ms : 0));
    const char *values[] = { id, claim, due };
    int64_t done = 0;
    store_status_t status = index_script_integer(store, settle_script, 3, values, &done);
    if (status == STORE_OK && settled)
        *settled = done == 1;
    return status;
}

store_status_t store_deadline_drop_legacy(store_t *store)
{
    const char *argv[] = { "DEL", STORE_FIRST_MOVE_DUE_KEY };
    redisReply *r =
        store_command(store, cluster_key_slot(STORE_FIRST_MOVE_DUE_KEY, sizeof STORE_FIRST_MOVE_DUE_KEY - 1), 2, argv,
                      NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_deadline_get(store_t *store, const char *id, int64_t *score)
{
    if (!id_ok(id))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "ZSCORE", STORE_DEADLINES_KEY, id };
    redisReply *r = store_command(store, index_slot(), 3, argv, NULL, NULL);
    store_status_t status = !r ? STORE_EUNAVAILABLE
                            : r->type == REDIS_REPLY_NIL ? STORE_ENOT_FOUND
                                                         : store_reply_status(r, REDIS_REPLY_STRING);
    if (status == STORE_OK) {
        char *end;
        double value = strtod(r->str, &end);
        status = end == r->str || *end ? STORE_ECORRUPT : STORE_OK;
        *score = (int64_t)value;
    }
    if (r)
        freeReplyObject(r);
    return status;
}
