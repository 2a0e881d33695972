/* Engine jobs (store.h, "engine jobs"): the jobs stream with its consumer
 * group, and the sorted set of intents that finds a job lost between a
 * game's write and its XADD. Every command goes through store_command
 * (store_private.h), so it is routed, timed and retried as a game's are;
 * nothing here keeps a connection or any state of its own. A blocking read
 * asks Redis for at most half of what the thread may wait for a reply (and
 * Redis's timer's lateness less), and loops, so no BLOCK outlives the
 * command timeout or the thread's deadline.
 * Both keys share the hash tag {engine}: one node holds them. */
#include "store.h"
#include "store_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "game_record.h"
#include "sock.h"

_Static_assert((int)STORE_ENGINE_ID_SIZE == (int)GAME_ID_SIZE, "a job names a game by its id");

enum {
    /* XAUTOCLAIM calls of one claim, each looking at up to 10 pending
     * entries (COUNT 1: Redis tries ten times the count): 160 jobs in
     * flight are all looked at before a new one is taken. */
    AUTOCLAIM_ROUNDS = 16,
    /* Redis (7.0) ends a BLOCK on its timer, at its next tick: up to
     * 1000/hz ms late, 100 at the default hz of 10. A block leaves that and
     * a round trip to the reply's timeout. */
    TIMER_MARGIN_MS = 150,
    /* With too little time for a block, how often a claim looks again. */
    POLL_MS = 50,
    VERSION_TEXT = 24,
    DUE_MEMBER_SIZE = STORE_ENGINE_ID_SIZE + VERSION_TEXT,
};

/* The largest version a client can name (a JSON number), as store_redis.c's. */
#define VERSION_MAX UINT64_C(9007199254740991)

/* Touch: the job must still be pending for this consumer (XPENDING of its
 * one id, filtered by consumer); then XCLAIM to itself resets its idle time.
 * KEYS[1] the stream; ARGV: group, consumer, entry id. 1 when touched, 0
 * when it is not the consumer's (or gone: XCLAIM drops a pending id whose
 * entry was trimmed, and answers nothing for it). */
static const char touch_script[] =
    "local p = redis.pcall('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])\n"
    "if p['err'] then\n"
    "  if string.sub(p['err'], 1, 7) == 'NOGROUP' then return 0 end\n"
    "  return p\n"
    "end\n"
    "if #p == 0 then return 0 end\n"
    "return #redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')\n";

/* Ack: XACK then XDEL, so the stream holds only jobs not done (a group
 * made again from 0 then gets exactly those). KEYS[1] the stream; ARGV:
 * group, entry id. How many were acked (0 or 1). */
static const char ack_script[] =
    "local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "return n\n";

static unsigned engine_slot(void)
{
    return cluster_key_slot(STORE_ENGINE_JOBS_KEY, sizeof STORE_ENGINE_JOBS_KEY - 1);
}

static bool version_ok(uint64_t version) { return version >= 1 && version <= VERSION_MAX; }

/* A version as written: 1 to VERSION_MAX, digits only, no leading zero. */
static bool read_version(const char *text, size_t length, uint64_t *version)
{
    if (length == 0 || length >= VERSION_TEXT || text[0] < '1' || text[0] > '9')
        return false;
    char digits[VERSION_TEXT], *end;
    memcpy(digits, text, length);
    digits[length] = '\0';
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    if (errno || end != digits + length || !version_ok(v))
        return false;
    *version = v;
    return true;
}

/* Whether r is the string text, byte for byte. */
static bool reply_is(const redisReply *r, const char *text)
{
    return r->type == REDIS_REPLY_STRING && r->len == strlen(text) && !memcmp(r->str, text, r->len);
}

static bool is_error(const redisReply *r, const char *prefix)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, prefix, strlen(prefix));
}

/* The reply's status when it is an error or not of the type expected. */
static store_status_t reply_status(const redisReply *r, int expected_type)
{
    if (r->type == REDIS_REPLY_ERROR)
        return store_error_status(r);
    return r->type == expected_type ? STORE_OK : STORE_ECORRUPT;
}

/* Makes the consumer group, reading the stream from its first entry
 * (MKSTREAM: the stream too when missing). One already there is fine. */
static store_status_t make_group(store_t *store)
{
    const char *argv[] = { "XGROUP", "CREATE", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP, "0", "MKSTREAM" };
    redisReply *r = store_command(store, engine_slot(), 6, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = is_error(r, "BUSYGROUP") ? STORE_OK : reply_status(r, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    return status;
}

/* A command of the group's (XAUTOCLAIM, XREADGROUP): made again once
 * after NOGROUP (the stream deleted, or new) with the group made. */
static redisReply *group_command(store_t *store, int argc, const char **argv)
{
    redisReply *r = store_command(store, engine_slot(), argc, argv, NULL, NULL);
    if (r && is_error(r, "NOGROUP")) {
        freeReplyObject(r);
        if (make_group(store) != STORE_OK)
            return NULL;
        r = store_command(store, engine_slot(), argc, argv, NULL, NULL);
    }
    return r;
}

/* Runs one of this file's scripts on the engine keys' node: KEYS[1] the
 * stream, then values. */
static redisReply *engine_script(store_t *store, const char *text, int value_count, const char **values)
{
    enum { VALUES_MAX = 4 };
    store_script_t script;
    if (value_count > VALUES_MAX || !store_script_init(&script, text))
        return NULL;
    const char *argv[4 + VALUES_MAX] = { NULL, NULL, "1", STORE_ENGINE_JOBS_KEY };
    size_t lengths[4 + VALUES_MAX] = { 0, 0, 1, sizeof STORE_ENGINE_JOBS_KEY - 1 };
    for (int i = 0; i < value_count; i++) {
        argv[4 + i] = values[i];
        lengths[4 + i] = strlen(values[i]);
    }
    return store_script_run(store, engine_slot(), &script, 4 + value_count, argv, lengths, NULL);
}

/* Reads a stream entry [entry id, [game, <id>, version, <v>]] into job;
 * false for anything else (nil fields: an entry deleted since). */
static bool read_entry(const redisReply *e, store_engine_job_t *job)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING
        || e->element[0]->len == 0 || e->element[0]->len >= STORE_ENGINE_ENTRY_SIZE)
        return false;
    const redisReply *f = e->element[1];
    if (f->type != REDIS_REPLY_ARRAY || f->elements != 4)
        return false;
    for (size_t i = 0; i < 4; i++)
        if (f->element[i]->type != REDIS_REPLY_STRING)
            return false;
    if (!reply_is(f->element[0], "game") || !reply_is(f->element[2], "version")
        || !store_id_ok(f->element[1]->str, f->element[1]->len)
        || !read_version(f->element[3]->str, f->element[3]->len, &job->version))
        return false;
    memcpy(job->id, f->element[1]->str, f->element[1]->len);
    job->id[f->element[1]->len] = '\0';
    memcpy(job->entry_id, e->element[0]->str, e->element[0]->len);
    job->entry_id[e->element[0]->len] = '\0';
    return true;
}

/* Acks and deletes an entry this code cannot read (when its id is one), so
 * it is not handed out again. */
static void drop_entry(store_t *store, const redisReply *e)
{
    const redisReply *entry_id = e->type == REDIS_REPLY_ARRAY && e->elements >= 1 ? e->element[0] : NULL;
    if (!entry_id || entry_id->type != REDIS_REPLY_STRING || entry_id->len >= STORE_ENGINE_ENTRY_SIZE)
        return;
    char text[STORE_ENGINE_ENTRY_SIZE];
    memcpy(text, entry_id->str, entry_id->len);
    text[entry_id->len] = '\0';
    const char *values[] = { STORE_ENGINE_GROUP, text };
    redisReply *r = engine_script(store, ack_script, 2, values);
    if (r)
        freeReplyObject(r);
}

/* The first readable entry of an array of entries into job: STORE_OK,
 * STORE_ENOT_FOUND (none there), or STORE_ECORRUPT (one was unreadable and
 * dropped). An entry deleted since it was added (nil fields, from a Redis
 * before 7.0) is dropped too, silently. */
static store_status_t take_entry(store_t *store, const redisReply *entries, store_engine_job_t *job)
{
    store_status_t status = STORE_ENOT_FOUND;
    for (size_t i = 0; i < entries->elements; i++) {
        const redisReply *e = entries->element[i];
        if (read_entry(e, job))
            return STORE_OK;
        bool deleted = e->type == REDIS_REPLY_ARRAY && e->elements == 2 && e->element[1]->type == REDIS_REPLY_NIL;
        if (!deleted)
            status = STORE_ECORRUPT;
        drop_entry(store, e);
    }
    return status;
}

/* How many times the pending entry has been handed out (XPENDING), 0 when
 * that cannot be read. */
static unsigned deliveries(store_t *store, const char *entry_id)
{
    const char *argv[] = { "XPENDING", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP, entry_id, entry_id, "1" };
    redisReply *r = store_command(store, engine_slot(), 6, argv, NULL, NULL);
    unsigned count = 0;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_ARRAY
        && r->element[0]->elements == 4 && r->element[0]->element[3]->type == REDIS_REPLY_INTEGER
        && r->element[0]->element[3]->integer > 0)
        count = r->element[0]->element[3]->integer > UINT32_MAX ? UINT32_MAX : (unsigned)r->element[0]->element[3]->integer;
    if (r)
        freeReplyObject(r);
    return count;
}

/* XAUTOCLAIM of one job quiet for lease_ms, following the cursor over the
 * pending entries for up to AUTOCLAIM_ROUNDS calls. */
static store_status_t claim_quiet(store_t *store, const char *consumer, unsigned lease_ms, store_engine_job_t *job)
{
    char idle[16], cursor[STORE_ENGINE_ENTRY_SIZE] = "0-0";
    snprintf(idle, sizeof idle, "%u", lease_ms);
    for (int round = 0; round < AUTOCLAIM_ROUNDS; round++) {
        const char *argv[] = { "XAUTOCLAIM", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP, consumer, idle, cursor,
                               "COUNT", "1" };
        redisReply *r = group_command(store, 8, argv);
        if (!r)
            return STORE_EUNAVAILABLE;
        /* [next cursor, [entries...]] and, from Redis 7.0, [ids deleted since]. */
        store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
        if (status == STORE_OK
            && (r->elements < 2 || r->element[0]->type != REDIS_REPLY_STRING
                || r->element[0]->len >= sizeof cursor || r->element[1]->type != REDIS_REPLY_ARRAY))
            status = STORE_ECORRUPT;
        if (status == STORE_OK)
            status = take_entry(store, r->element[1], job);
        if (status == STORE_OK)
            job->deliveries = deliveries(store, job->entry_id);
        bool more = status == STORE_ENOT_FOUND && strcmp(r->element[0]->str, "0-0");
        if (more) {
            memcpy(cursor, r->element[0]->str, r->element[0]->len);
            cursor[r->element[0]->len] = '\0';
        }
        freeReplyObject(r);
        if (!more)
            return status;
    }
    return STORE_ENOT_FOUND;
}

/* How long Redis may be asked to block when a reply may be waited for
 * wait_ms: its half, and at least TIMER_MARGIN_MS less (0: too short). */
static unsigned block_for(unsigned wait_ms)
{
    unsigned margin = wait_ms / 2 > TIMER_MARGIN_MS ? wait_ms / 2 : TIMER_MARGIN_MS;
    return wait_ms > margin ? wait_ms - margin : 0;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

/* XREADGROUP of one new job, Redis blocking up to block_ms (0: not at all). */
static store_status_t claim_new(store_t *store, const char *consumer, unsigned block_ms, store_engine_job_t *job)
{
    char block[16];
    snprintf(block, sizeof block, "%u", block_ms);
    const char *argv[] = { "XREADGROUP", "GROUP", STORE_ENGINE_GROUP, consumer, "COUNT", "1", "BLOCK", block,
                           "STREAMS", STORE_ENGINE_JOBS_KEY, ">" };
    const char *unblocked[] = { "XREADGROUP", "GROUP", STORE_ENGINE_GROUP, consumer, "COUNT", "1",
                                "STREAMS", STORE_ENGINE_JOBS_KEY, ">" };
    redisReply *r = block_ms ? group_command(store, 11, argv) : group_command(store, 9, unblocked);
    if (!r)
        return STORE_EUNAVAILABLE;
    /* nil: nothing came; [[key, [entries...]]]. A client blocked on a
     * stream deleted meanwhile is let go (UNBLOCKED): nothing came either. */
    store_status_t status = r->type == REDIS_REPLY_NIL || is_error(r, "UNBLOCKED") ? STORE_ENOT_FOUND
                                                                                   : reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK) {
        const redisReply *stream = r->elements == 1 ? r->element[0] : NULL;
        if (!stream || stream->type != REDIS_REPLY_ARRAY || stream->elements != 2
            || stream->element[1]->type != REDIS_REPLY_ARRAY)
            status = STORE_ECORRUPT;
        else
            status = take_entry(store, stream->element[1], job);
        if (status == STORE_OK)
            job->deliveries = 1;
    }
    freeReplyObject(r);
    return status;
}

static bool consumer_ok(const char *consumer)
{
    size_t length = consumer ? strlen(consumer) : 0;
    return length > 0 && length <= STORE_ENGINE_CONSUMER_MAX;
}

store_status_t store_engine_job_add(store_t *store, const char *id, uint64_t version)
{
    if (!store_id_ok(id, strlen(id)) || !version_ok(version))
        return STORE_ENOT_FOUND;
    char v[VERSION_TEXT], max[16];
    snprintf(v, sizeof v, "%llu", (unsigned long long)version);
    snprintf(max, sizeof max, "%d", STORE_ENGINE_JOBS_MAX);
    const char *argv[] = { "XADD", STORE_ENGINE_JOBS_KEY, "MAXLEN", "~", max, "*", "game", id, "version", v };
    bool sent = false;
    redisReply *r = store_command(store, engine_slot(), 10, argv, NULL, &sent);
    if (!r)
        return sent ? STORE_EUNKNOWN : STORE_EUNAVAILABLE;
    store_status_t status = reply_status(r, REDIS_REPLY_STRING);
    freeReplyObject(r);
    return status;
}

/* store_engine_job_claim's loop: quiet jobs, then a new one, until block_ms
 * have passed or this thread's deadline has come. */
static store_status_t claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                            store_engine_job_t *job)
{
    int64_t end = sock_now_ms() + block_ms;
    for (bool first = true;; first = false) {
        if (!first && !store_command_wait_ms(store))
            return STORE_ENOT_FOUND; /* this thread's deadline has come: no job by then */
        store_status_t status = claim_quiet(store, consumer, lease_ms, job);
        if (status != STORE_ENOT_FOUND)
            return status;
        int64_t left = end - sock_now_ms();
        unsigned block = block_for(store_command_wait_ms(store));
        if (left < (int64_t)block)
            block = left > 0 ? (unsigned)left : 0;
        status = claim_new(store, consumer, block, job);
        left = end - sock_now_ms();
        if (status != STORE_ENOT_FOUND || left <= 0)
            return status;
        if (!block) { /* too little time for Redis to block in: look again soon */
            unsigned pause = left < POLL_MS ? (unsigned)left : POLL_MS, wait_ms = store_command_wait_ms(store);
            sleep_ms(pause < wait_ms ? pause : wait_ms);
        }
    }
}

store_status_t store_engine_job_claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                                      store_engine_job_t *job)
{
    memset(job, 0, sizeof *job);
    if (!consumer_ok(consumer) || !lease_ms)
        return STORE_ENOT_FOUND;
    store_status_t status = claim(store, consumer, lease_ms, block_ms, job);
    if (status != STORE_OK)
        memset(job, 0, sizeof *job); /* nothing half read is left */
    return status;
}

/* Runs a script of the job's that answers 1 when it did its work: STORE_OK
 * then, STORE_ENOT_FOUND for any other number. */
static store_status_t run_done_script(store_t *store, const char *script, int count, const char **values)
{
    redisReply *r = engine_script(store, script, count, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (status == STORE_OK && r->integer != 1)
        status = STORE_ENOT_FOUND;
    freeReplyObject(r);
    return status;
}

store_status_t store_engine_job_touch(store_t *store, const char *consumer, const store_engine_job_t *job)
{
    if (!consumer_ok(consumer) || !job->entry_id[0])
        return STORE_ENOT_FOUND;
    const char *values[] = { STORE_ENGINE_GROUP, consumer, job->entry_id };
    return run_done_script(store, touch_script, 3, values);
}

store_status_t store_engine_job_ack(store_t *store, const store_engine_job_t *job)
{
    if (!job->entry_id[0])
        return STORE_ENOT_FOUND;
    const char *values[] = { STORE_ENGINE_GROUP, job->entry_id };
    return run_done_script(store, ack_script, 2, values);
}

/* --- intents --- */

/* "<id>:<version>" into member; false when id or version is not one. */
static bool due_member(const char *id, uint64_t version, char member[DUE_MEMBER_SIZE])
{
    if (!store_id_ok(id, strlen(id)) || !version_ok(version))
        return false;
    snprintf(member, DUE_MEMBER_SIZE, "%s:%llu", id, (unsigned long long)version);
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
        || !read_version(colon + 1, member->len - id_length - 1, &out->version))
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
    redisReply *r = store_command(store, engine_slot(), 1, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
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

/* The sorted set of a kind of intent, and its slot. */
static const char *due_key(bool first_move) { return first_move ? STORE_FIRST_MOVE_DUE_KEY : STORE_ENGINE_DUE_KEY; }

static unsigned due_slot(bool first_move)
{
    const char *key = due_key(first_move);
    return cluster_key_slot(key, strlen(key));
}

/* ZADD or ZREM of one intent. */
static store_status_t due_command(store_t *store, bool first_move, int argc, const char **argv)
{
    redisReply *r = store_command(store, due_slot(first_move), argc, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    return status;
}

static store_status_t due_set(store_t *store, bool first_move, const char *id, uint64_t version, int64_t due_ms)
{
    char member[DUE_MEMBER_SIZE], score[24];
    if (!due_member(id, version, member))
        return STORE_ENOT_FOUND;
    snprintf(score, sizeof score, "%lld", (long long)due_ms);
    const char *argv[] = { "ZADD", due_key(first_move), score, member };
    return due_command(store, first_move, 4, argv);
}

static store_status_t due_clear(store_t *store, bool first_move, const char *id, uint64_t version)
{
    char member[DUE_MEMBER_SIZE];
    if (!due_member(id, version, member))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "ZREM", due_key(first_move), member };
    return due_command(store, first_move, 3, argv);
}

static store_status_t due_scan(store_t *store, bool first_move, int64_t now_ms, unsigned max, store_engine_due_t *out,
                               unsigned *count)
{
    *count = 0;
    if (!max)
        return STORE_OK;
    const char *key = due_key(first_move);
    char now[24], limit[16];
    snprintf(now, sizeof now, "%lld", (long long)now_ms);
    snprintf(limit, sizeof limit, "%u", max);
    const char *argv[] = { "ZRANGEBYSCORE", key, "-inf", now, "WITHSCORES", "LIMIT", "0", limit };
    redisReply *r = store_command(store, due_slot(first_move), 8, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements % 2)
        status = STORE_ECORRUPT;
    for (size_t i = 0; status == STORE_OK && i + 1 < r->elements && *count < max; i += 2) {
        if (read_due(r->element[i], r->element[i + 1], &out[*count])) {
            (*count)++;
        } else if (r->element[i]->type == REDIS_REPLY_STRING) {
            /* Not one of ours: out of the way, or it would stand first for ever. */
            const char *zrem[] = { "ZREM", key, r->element[i]->str };
            size_t lengths[] = { 4, strlen(key), r->element[i]->len };
            redisReply *d = store_command(store, due_slot(first_move), 3, zrem, lengths, NULL);
            if (d)
                freeReplyObject(d);
        }
    }
    freeReplyObject(r);
    return status;
}

store_status_t store_engine_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms)
{
    return due_set(store, false, id, version, due_ms);
}

store_status_t store_engine_due_clear(store_t *store, const char *id, uint64_t version)
{
    return due_clear(store, false, id, version);
}

store_status_t store_engine_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                     unsigned *count)
{
    return due_scan(store, false, now_ms, max, out, count);
}

store_status_t store_first_move_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms)
{
    return due_set(store, true, id, version, due_ms);
}

store_status_t store_first_move_due_clear(store_t *store, const char *id, uint64_t version)
{
    return due_clear(store, true, id, version);
}

store_status_t store_first_move_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                         unsigned *count)
{
    return due_scan(store, true, now_ms, max, out, count);
}
