/* See claimed_index.h: one script each for the claim and the settle, on
 * the node of the index's slot, so each is one step however many replicas
 * take from it. Scores are whole milliseconds, exact in a double. */
#include "claimed_index.h"

#include <stdio.h>
#include <string.h>

#include "cluster.h"

enum { NUMBER_SIZE = 24 };

/* KEYS[1] the index; ARGV[1] the lease (ms), ARGV[2] the most members. */
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

/* 1 when the member held the claim, else 0. */
static const char settle_script[] = STORE_INDEX_SETTLE_LUA "return held and 1 or 0\n";

static unsigned slot_of(const char *key) { return cluster_key_slot(key, strlen(key)); }

store_status_t store_index_claim(store_t *store, const char *key, unsigned lease_ms, unsigned max,
                                 redisReply **reply)
{
    *reply = NULL;
    char lease[NUMBER_SIZE], most[NUMBER_SIZE];
    snprintf(lease, sizeof lease, "%u", lease_ms);
    snprintf(most, sizeof most, "%u", max);
    const char *keys[] = { key };
    const char *values[] = { lease, most };
    redisReply *r = store_script_texts(store, slot_of(key), claim_script, 1, keys, 2, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_ARRAY) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && (r->elements < 2 || r->element[0]->type != REDIS_REPLY_INTEGER
                               || r->element[1]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    if (status == STORE_OK)
        *reply = r;
    else if (r)
        freeReplyObject(r);
    return status;
}

void store_index_drop(store_t *store, const char *key, const redisReply *member)
{
    if (member->type != REDIS_REPLY_STRING)
        return;
    const char *argv[] = { "ZREM", key, member->str };
    size_t lengths[] = { 4, strlen(key), member->len };
    redisReply *r = store_command(store, slot_of(key), 3, argv, lengths, NULL);
    if (r)
        freeReplyObject(r);
}

store_status_t store_index_settle(store_t *store, const char *key, const char *member, int64_t claim_ms,
                                  int64_t due_ms, bool *settled)
{
    if (settled)
        *settled = false;
    char claim[NUMBER_SIZE], due[NUMBER_SIZE];
    snprintf(claim, sizeof claim, "%lld", (long long)claim_ms);
    snprintf(due, sizeof due, "%lld", (long long)(due_ms > 0 ? due_ms : 0));
    const char *keys[] = { key };
    const char *values[] = { member, claim, due };
    redisReply *r = store_script_texts(store, slot_of(key), settle_script, 1, keys, 3, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && settled)
        *settled = r->integer == 1;
    if (r)
        freeReplyObject(r);
    return status;
}
