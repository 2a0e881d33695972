/* The deadline index of deadlines.h: a lowering, and the claim and settle
 * of claimed_index.h, each one script on the node of the {games} slot, so
 * each is one step however many replicas sweep. Scores are whole
 * milliseconds, exact in a double. */
#include "deadlines.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimed_index.h"
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

store_status_t store_deadline_claim(store_t *store, unsigned lease_ms, unsigned max, store_deadline_t *out,
                                    unsigned *count, int64_t *now_ms)
{
    *count = 0;
    if (!max)
        return STORE_OK;
    redisReply *r = NULL;
    store_status_t status = store_index_claim(store, STORE_DEADLINES_KEY, lease_ms, max, &r);
    if (status != STORE_OK)
        return status;
    for (size_t i = 2; i < r->elements && *count < max; i++) {
        const redisReply *member = r->element[i];
        if (member->type != REDIS_REPLY_STRING)
            continue;
        if (!store_id_ok(member->str, member->len)) {
            store_index_drop(store, STORE_DEADLINES_KEY, member);
            continue;
        }
        memcpy(out[*count].id, member->str, member->len);
        out[*count].id[member->len] = '\0';
        out[(*count)++].claim_ms = (int64_t)r->element[1]->integer;
    }
    if (now_ms)
        *now_ms = (int64_t)r->element[0]->integer;
    freeReplyObject(r);
    return STORE_OK;
}

store_status_t store_deadline_settle(store_t *store, const char *id, int64_t claim_ms, int64_t due_ms,
                                     bool *settled)
{
    if (settled)
        *settled = false;
    if (!id_ok(id))
        return STORE_ENOT_FOUND;
    return store_index_settle(store, STORE_DEADLINES_KEY, id, claim_ms, due_ms, settled);
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
