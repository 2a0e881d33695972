/* The intents of engine_jobs.h (a sorted set of "<id>:<v>" members scored
 * by the Redis time a turn is due by) and Redis's clock for them. Every
 * command goes through store_command (store_private.h), as a game's does.
 * Every other deadline of a game is deadlines.h's. */
#include "engine_jobs.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

bool store_engine_member(const char *id, uint64_t version, char member[STORE_ENGINE_MEMBER_SIZE])
{
    if (!store_id_ok(id, strlen(id)) || version < 1 || version > STORE_VERSION_MAX)
        return false;
    snprintf(member, STORE_ENGINE_MEMBER_SIZE, "%s:%llu", id, (unsigned long long)version);
    return true;
}

/* Reads a member "<id>:<version>" and its score into out. */
static bool read_due(const redisReply *member, const redisReply *score, store_engine_due_t *out)
{
    if (member->type != REDIS_REPLY_STRING || score->type != REDIS_REPLY_STRING)
        return false;
    const char *colon = memchr(member->str, ':', member->len);
    if (!colon)
        return false;
    size_t id_length = (size_t)(colon - member->str);
    if (!store_id_ok(member->str, id_length)
        || !store_version_read(colon + 1, member->len - id_length - 1, &out->version))
        return false;
    /* Redis writes a score as a double (%.17g): a whole number of ms as
     * this code sets them, in an exponent only past 17 digits. */
    char *end;
    double due = strtod(score->str, &end);
    if (end == score->str || *end || !(due >= -9e15 && due <= 9e15) || (double)(int64_t)due != due)
        return false;
    memcpy(out->id, member->str, id_length);
    out->id[id_length] = '\0';
    out->due_ms = (int64_t)due;
    return true;
}

store_status_t store_engine_now(store_t *store, int64_t *now_ms)
{
    const char *argv[] = { "TIME" };
    redisReply *r = store_command(store, cluster_key_slot(STORE_ENGINE_JOBS_KEY, sizeof STORE_ENGINE_JOBS_KEY - 1), 1,
                                  argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK) {
        status = STORE_ECORRUPT;
        if (r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING
            && r->element[1]->type == REDIS_REPLY_STRING) {
            long long seconds = strtoll(r->element[0]->str, NULL, 10), micros = strtoll(r->element[1]->str, NULL, 10);
            if (seconds > 0 && micros >= 0 && micros < 1000000) {
                *now_ms = (int64_t)seconds * 1000 + micros / 1000;
                status = STORE_OK;
            }
        }
    }
    freeReplyObject(r);
    return status;
}

static unsigned due_slot(void) { return cluster_key_slot(STORE_ENGINE_DUE_KEY, sizeof STORE_ENGINE_DUE_KEY - 1); }

/* ZADD or ZREM of one intent. */
static store_status_t due_command(store_t *store, int argc, const char **argv)
{
    redisReply *r = store_command(store, due_slot(), argc, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    return status;
}

store_status_t store_engine_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms)
{
    char member[STORE_ENGINE_MEMBER_SIZE], score[24];
    if (!store_engine_member(id, version, member))
        return STORE_ENOT_FOUND;
    snprintf(score, sizeof score, "%lld", (long long)due_ms);
    const char *argv[] = { "ZADD", STORE_ENGINE_DUE_KEY, score, member };
    return due_command(store, 4, argv);
}

store_status_t store_engine_due_clear(store_t *store, const char *id, uint64_t version)
{
    char member[STORE_ENGINE_MEMBER_SIZE];
    if (!store_engine_member(id, version, member))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "ZREM", STORE_ENGINE_DUE_KEY, member };
    return due_command(store, 3, argv);
}

store_status_t store_engine_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                     unsigned *count)
{
    *count = 0;
    if (!max)
        return STORE_OK;
    char now[24], limit[16];
    snprintf(now, sizeof now, "%lld", (long long)now_ms);
    snprintf(limit, sizeof limit, "%u", max);
    const char *argv[] = { "ZRANGEBYSCORE", STORE_ENGINE_DUE_KEY, "-inf", now, "WITHSCORES", "LIMIT", "0", limit };
    redisReply *r = store_command(store, due_slot(), 8, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements % 2)
        status = STORE_ECORRUPT;
    for (size_t i = 0; status == STORE_OK && i + 1 < r->elements && *count < max; i += 2) {
        if (read_due(r->element[i], r->element[i + 1], &out[*count])) {
            (*count)++;
        } else if (r->element[i]->type == REDIS_REPLY_STRING) {
            /* Not one of ours: out of the way, or it would stand first for ever. */
            const char *zrem[] = { "ZREM", STORE_ENGINE_DUE_KEY, r->element[i]->str };
            size_t lengths[] = { 4, sizeof STORE_ENGINE_DUE_KEY - 1, r->element[i]->len };
            redisReply *d = store_command(store, due_slot(), 3, zrem, lengths, NULL);
            if (d)
                freeReplyObject(d);
        }
    }
    freeReplyObject(r);
    return status;
}
