/* Reviews in Redis (reviews.h): the review's hash in the game's slot, and
 * the queue of jobs with leases in the {review} slot. Every write is one
 * script, so a check of the version and the write are one step; every
 * command goes through store_command (store_private.h), routed and timed as
 * a game's are. */
#include "reviews.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

enum { KEY_SIZE = sizeof STORE_REVIEW_KEY_PREFIX + STORE_ENGINE_ID_SIZE + 4, NUMBER_SIZE = 24,
       OWNER_KEY_SIZE = sizeof STORE_REVIEW_OWNER_PREFIX + STORE_REVIEW_FIELD_MAX };

/* Redis's clock in ms, in a script (effects are replicated). */
#define NOW_MS \
    "local t = redis.call('TIME')\n" \
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

/* KEYS[1] the hash; ARGV: version, limit, owner, line, count, ttl. 0 kept, 1 made. */
static const char begin_script[] =
    "if redis.call('HGET', KEYS[1], 'version') == ARGV[1] and redis.call('HGET', KEYS[1], 'status') ~= 'failed' then\n"
    "  redis.call('EXPIRE', KEYS[1], ARGV[6])\n"
    "  return 0\n"
    "end\n"
    "redis.call('DEL', KEYS[1])\n"
    "redis.call('HSET', KEYS[1], 'version', ARGV[1], 'status', 'queued', 'limit', ARGV[2], 'owner', ARGV[3],\n"
    "           'line', ARGV[4], 'count', ARGV[5], 'error', '')\n"
    "redis.call('EXPIRE', KEYS[1], ARGV[6])\n"
    "return 1\n";

/* KEYS[1] the hash; ARGV: version. */
static const char drop_script[] =
    "if redis.call('HGET', KEYS[1], 'version') == ARGV[1] and redis.call('HGET', KEYS[1], 'status') == 'queued'\n"
    "   and redis.call('HEXISTS', KEYS[1], 'p0') == 0 then redis.call('DEL', KEYS[1]) end\n"
    "return 1\n";

/* KEYS: the queue, owner-of, the owner's set; ARGV: member, owner, per owner, stale ms. 1 queued (or there), -1 bound. */
static const char enqueue_script[] =
    NOW_MS
    "if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end\n"
    "if ARGV[2] ~= '' then\n"
    "  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[4]))\n"
    "  local per = tonumber(ARGV[3])\n"
    "  if per > 0 and redis.call('ZCARD', KEYS[3]) >= per then return -1 end\n"
    "  redis.call('ZADD', KEYS[3], now, ARGV[1])\n"
    "  redis.call('PEXPIRE', KEYS[3], ARGV[4])\n"
    "  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"
    "end\n"
    "redis.call('ZADD', KEYS[1], now, ARGV[1])\n"
    "return 1\n";

/* KEYS: the queue, the holders; ARGV: consumer, lease ms. {member, deliveries} or nil. */
static const char claim_script[] =
    NOW_MS
    "local m = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)\n"
    "if #m == 0 then return false end\n"
    "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), m[1])\n"
    "redis.call('HSET', KEYS[2], m[1], ARGV[1])\n"
    "return {m[1], redis.call('HINCRBY', KEYS[2], m[1] .. '#n', 1)}\n";

/* KEYS: the queue, the holders; ARGV: consumer, lease ms, member. 1 touched, 0 not the consumer's. */
static const char touch_script[] =
    NOW_MS
    "if redis.call('HGET', KEYS[2], ARGV[3]) ~= ARGV[1] or not redis.call('ZSCORE', KEYS[1], ARGV[3]) then\n"
    "  return 0\n"
    "end\n"
    "redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[3])\n"
    "return 1\n";

/* KEYS: the queue, the holders, owner-of; ARGV: member, the owner prefix. */
static const char ack_script[] =
    "redis.call('ZREM', KEYS[1], ARGV[1])\n"
    "redis.call('HDEL', KEYS[2], ARGV[1], ARGV[1] .. '#n')\n"
    "local o = redis.call('HGET', KEYS[3], ARGV[1])\n"
    "if o then\n"
    "  redis.call('ZREM', ARGV[2] .. o, ARGV[1])\n"
    "  redis.call('HDEL', KEYS[3], ARGV[1])\n"
    "end\n"
    "return 1\n";

/* KEYS[1] the hash; ARGV: version, field, value, ttl, then a status to set or ''. 1 written, 0 not current. */
static const char set_script[] =
    "if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end\n"
    "local s = redis.call('HGET', KEYS[1], 'status')\n"
    "if s == 'done' or (s == 'failed' and ARGV[5] == '') then return 0 end\n"
    "redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])\n"
    "if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[5]) end\n"
    "redis.call('EXPIRE', KEYS[1], ARGV[4])\n"
    "return 1\n";

static bool review_key(const char *id, char key[KEY_SIZE], unsigned *slot)
{
    if (!store_id_ok(id, strlen(id)))
        return false;
    snprintf(key, KEY_SIZE, STORE_REVIEW_KEY_PREFIX "{%s}", id);
    *slot = cluster_key_slot(key, strlen(key));
    return true;
}

static unsigned queue_slot(void) { return cluster_key_slot(STORE_REVIEW_QUEUE_KEY, sizeof STORE_REVIEW_QUEUE_KEY - 1); }

/* A script's integer answer: STORE_OK with *value, or the failure. */
static store_status_t run_integer(store_t *store, unsigned slot, const char *text, int key_count,
                                  const char *const *keys, int value_count, const char *const *values,
                                  long long *value)
{
    redisReply *r = store_script_texts(store, slot, text, key_count, keys, value_count, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (status == STORE_OK)
        *value = r->integer;
    if (r)
        freeReplyObject(r);
    return status;
}

static void owner_key(const char *owner, char key[OWNER_KEY_SIZE])
{
    snprintf(key, OWNER_KEY_SIZE, STORE_REVIEW_OWNER_PREFIX "%s", owner && *owner ? owner : STORE_REVIEW_OWNER_NONE);
}

store_status_t store_review_begin(store_t *store, const char *id, uint64_t version, const char *limit,
                                  const char *owner, const char *line, size_t line_length, int count, bool *kept)
{
    char key[KEY_SIZE], v[NUMBER_SIZE], n[NUMBER_SIZE], ttl[NUMBER_SIZE];
    unsigned slot;
    *kept = false;
    if (!review_key(id, key, &slot) || !line || strlen(line) != line_length)
        return STORE_ENOT_FOUND;
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    snprintf(n, sizeof n, "%d", count);
    snprintf(ttl, sizeof ttl, "%d", STORE_REVIEW_TTL_S);
    const char *keys[] = { key };
    const char *values[] = { v, limit, owner ? owner : "", line, n, ttl };
    long long made = 0;
    store_status_t status = run_integer(store, slot, begin_script, 1, keys, 6, values, &made);
    if (status == STORE_OK)
        *kept = made == 0;
    return status;
}

store_status_t store_review_drop(store_t *store, const char *id, uint64_t version)
{
    char key[KEY_SIZE], v[NUMBER_SIZE];
    unsigned slot;
    if (!review_key(id, key, &slot))
        return STORE_ENOT_FOUND;
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    const char *keys[] = { key };
    const char *values[] = { v };
    long long ignored;
    return run_integer(store, slot, drop_script, 1, keys, 1, values, &ignored);
}

store_status_t store_review_enqueue(store_t *store, const char *id, uint64_t version, const char *owner,
                                    unsigned per_owner, bool *reached)
{
    char member[STORE_ENGINE_MEMBER_SIZE], okey[OWNER_KEY_SIZE], per[NUMBER_SIZE], stale[NUMBER_SIZE];
    *reached = false;
    if (!store_engine_member(id, version, member) || (owner && strlen(owner) >= STORE_REVIEW_FIELD_MAX))
        return STORE_ENOT_FOUND;
    owner_key(owner, okey);
    snprintf(per, sizeof per, "%u", per_owner);
    snprintf(stale, sizeof stale, "%d", STORE_REVIEW_OWNER_STALE_MS);
    const char *keys[] = { STORE_REVIEW_QUEUE_KEY, STORE_REVIEW_OWNER_OF_KEY, okey };
    const char *values[] = { member, owner ? owner : "", per, stale };
    long long result = 0;
    store_status_t status = run_integer(store, queue_slot(), enqueue_script, 3, keys, 4, values, &result);
    if (status == STORE_OK)
        *reached = result < 0;
    return status;
}

/* Reads "<id>:<version>" into job. */
static bool read_member(const char *text, size_t length, store_review_job_t *job)
{
    const char *colon = memchr(text, ':', length);
    if (!colon)
        return false;
    size_t id_length = (size_t)(colon - text);
    if (!store_id_ok(text, id_length) || !store_version_read(colon + 1, length - id_length - 1, &job->version))
        return false;
    memcpy(job->id, text, id_length);
    job->id[id_length] = '\0';
    return true;
}

store_status_t store_review_claim(store_t *store, const char *consumer, unsigned lease_ms, store_review_job_t *job)
{
    char lease[NUMBER_SIZE];
    if (!consumer || !*consumer || !lease_ms)
        return STORE_ENOT_FOUND;
    snprintf(lease, sizeof lease, "%u", lease_ms);
    const char *keys[] = { STORE_REVIEW_QUEUE_KEY, STORE_REVIEW_HOLDER_KEY };
    const char *values[] = { consumer, lease };
    redisReply *r = store_script_texts(store, queue_slot(), claim_script, 2, keys, 2, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_NIL ? STORE_ENOT_FOUND : store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK) {
        if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
            || r->element[1]->type != REDIS_REPLY_INTEGER || !read_member(r->element[0]->str, r->element[0]->len, job)) {
            status = STORE_ECORRUPT;
            if (r->elements >= 1 && r->element[0]->type == REDIS_REPLY_STRING) {
                /* a member this code did not write: removed, so the queue moves on */
                const char *argv[] = { "ZREM", STORE_REVIEW_QUEUE_KEY, r->element[0]->str };
                redisReply *z = store_command(store, queue_slot(), 3, argv, NULL, NULL);
                if (z)
                    freeReplyObject(z);
            }
        } else {
            job->deliveries = r->element[1]->integer > 0 ? (unsigned)r->element[1]->integer : 0;
        }
    }
    freeReplyObject(r);
    return status;
}

store_status_t store_review_touch(store_t *store, const char *consumer, unsigned lease_ms,
                                  const store_review_job_t *job)
{
    char member[STORE_ENGINE_MEMBER_SIZE], lease[NUMBER_SIZE];
    if (!store_engine_member(job->id, job->version, member))
        return STORE_ENOT_FOUND;
    snprintf(lease, sizeof lease, "%u", lease_ms);
    const char *keys[] = { STORE_REVIEW_QUEUE_KEY, STORE_REVIEW_HOLDER_KEY };
    const char *values[] = { consumer, lease, member };
    long long touched = 0;
    store_status_t status = run_integer(store, queue_slot(), touch_script, 2, keys, 3, values, &touched);
    return status == STORE_OK && !touched ? STORE_ENOT_FOUND : status;
}

store_status_t store_review_ack(store_t *store, const store_review_job_t *job)
{
    char member[STORE_ENGINE_MEMBER_SIZE];
    if (!store_engine_member(job->id, job->version, member))
        return STORE_ENOT_FOUND;
    const char *keys[] = { STORE_REVIEW_QUEUE_KEY, STORE_REVIEW_HOLDER_KEY, STORE_REVIEW_OWNER_OF_KEY };
    const char *values[] = { member, STORE_REVIEW_OWNER_PREFIX };
    long long ignored;
    return run_integer(store, queue_slot(), ack_script, 3, keys, 2, values, &ignored);
}

/* set_script on id's review: field to value, and the status when not "". */
static store_status_t set_field(store_t *store, const char *id, uint64_t version, const char *field,
                                const char *value, const char *status, bool *current)
{
    char key[KEY_SIZE], v[NUMBER_SIZE], ttl[NUMBER_SIZE];
    unsigned slot;
    *current = false;
    if (!review_key(id, key, &slot))
        return STORE_ENOT_FOUND;
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    snprintf(ttl, sizeof ttl, "%d", STORE_REVIEW_TTL_S);
    const char *keys[] = { key };
    const char *values[] = { v, field, value, ttl, status };
    long long written = 0;
    store_status_t s = run_integer(store, slot, set_script, 1, keys, 5, values, &written);
    *current = s == STORE_OK && written == 1;
    return s;
}

store_status_t store_review_position_set(store_t *store, const char *id, uint64_t version, int index,
                                         const char *text, bool *current)
{
    char field[NUMBER_SIZE];
    if (index < 0 || strlen(text) >= STORE_REVIEW_TEXT_MAX)
        return STORE_ENOT_FOUND;
    snprintf(field, sizeof field, "p%d", index);
    return set_field(store, id, version, field, text, "", current);
}

store_status_t store_review_status_set(store_t *store, const char *id, uint64_t version, const char *status,
                                       const char *error)
{
    bool current;
    return set_field(store, id, version, "error", error ? error : "", status, &current);
}

store_status_t store_review_publish(store_t *store, const char *id, const char *message)
{
    char channel[STORE_CHANNEL_SIZE];
    if (!store_id_ok(id, strlen(id)))
        return STORE_ENOT_FOUND;
    store_game_channel(id, channel);
    const char *argv[] = { store_is_cluster(store) ? "SPUBLISH" : "PUBLISH", channel, message };
    redisReply *r = store_command(store, cluster_key_slot(channel, strlen(channel)), 3, argv, NULL, NULL);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (r)
        freeReplyObject(r);
    return status;
}

/* Copies a string reply into a fixed field (cut to fit). */
static void copy_field(const redisReply *value, char *out, size_t size)
{
    size_t n = value->len < size - 1 ? value->len : size - 1;
    memcpy(out, value->str, n);
    out[n] = '\0';
}

/* Reads the field name/value pair into out; positions are read once count is known. */
static bool read_pair(const redisReply *name, const redisReply *value, store_review_t *out)
{
    if (name->type != REDIS_REPLY_STRING || value->type != REDIS_REPLY_STRING)
        return false;
    if (!strcmp(name->str, "version"))
        return store_version_read(value->str, value->len, &out->version);
    if (!strcmp(name->str, "status"))
        copy_field(value, out->status, sizeof out->status);
    else if (!strcmp(name->str, "limit"))
        copy_field(value, out->limit, sizeof out->limit);
    else if (!strcmp(name->str, "owner"))
        copy_field(value, out->owner, sizeof out->owner);
    else if (!strcmp(name->str, "error"))
        copy_field(value, out->error, sizeof out->error);
    else if (!strcmp(name->str, "count"))
        out->count = atoi(value->str);
    else if (!strcmp(name->str, "line")) {
        free(out->line);
        return store_reply_string(value, &out->line, &out->line_length);
    }
    return true;
}

/* Reads the "p<k>" fields of the pairs into out->positions. */
static bool read_positions(const redisReply *r, store_review_t *out)
{
    out->positions = calloc((size_t)out->count + 1, sizeof *out->positions);
    if (!out->positions)
        return false;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *name = r->element[i], *value = r->element[i + 1];
        if (name->type != REDIS_REPLY_STRING || name->str[0] != 'p' || value->type != REDIS_REPLY_STRING)
            continue;
        char *end;
        long k = strtol(name->str + 1, &end, 10);
        if (end == name->str + 1 || *end || k < 0 || k > out->count || out->positions[k])
            continue;
        size_t ignored;
        if (!store_reply_string(value, &out->positions[k], &ignored))
            return false;
    }
    return true;
}

store_status_t store_review_read(store_t *store, const char *id, store_review_t *out)
{
    char key[KEY_SIZE];
    unsigned slot;
    memset(out, 0, sizeof *out);
    if (!review_key(id, key, &slot))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "HGETALL", key };
    redisReply *r = store_command(store, slot, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements == 0)
        status = STORE_ENOT_FOUND;
    for (size_t i = 0; status == STORE_OK && i + 1 < r->elements; i += 2)
        if (!read_pair(r->element[i], r->element[i + 1], out))
            status = STORE_ECORRUPT;
    if (status == STORE_OK && (!out->version || !out->line || out->count < 0 || out->count > 100000))
        status = STORE_ECORRUPT;
    if (status == STORE_OK && !read_positions(r, out))
        status = STORE_EUNAVAILABLE;
    freeReplyObject(r);
    if (status != STORE_OK)
        store_review_free(out);
    return status;
}

void store_review_free(store_review_t *review)
{
    if (!review)
        return;
    if (review->positions)
        for (int k = 0; k <= review->count; k++)
            free(review->positions[k]);
    free(review->positions);
    free(review->line);
    memset(review, 0, sizeof *review);
}
