/* Engine jobs (engine_jobs.h): the backlog, one queue per owner served in
 * turn; the stream of turns being played, with its consumer group and
 * leases; and the bell a worker waits on. Every command goes through
 * store_command (store_private.h), and no BLOCK asks Redis for more than
 * half of what the thread may wait for a reply. The intents are
 * engine_due.c's. All keys share the hash tag {engine}: one node holds them. */
#include "engine_jobs.h"
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
};

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
 * made again from 0 then gets exactly those), and the turn is no longer in
 * flight. KEYS[1] the stream, KEYS[2] the in-flight hash; ARGV: group,
 * entry id, and the turn's member ("" none). How many were acked (0 or 1). */
static const char ack_script[] =
    "local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
    "redis.call('XDEL', KEYS[1], ARGV[2])\n"
    "if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then\n"
    "  redis.call('HDEL', KEYS[2], ARGV[3])\n"
    "end\n"
    "return n\n";

/* The backlog's keys, each a script's KEYS in this order. */
static const char *const backlog_keys[] = { STORE_ENGINE_JOBS_KEY,     STORE_ENGINE_QUEUED_KEY, STORE_ENGINE_OWNERS_KEY,
                                            STORE_ENGINE_URGENT_KEY,   STORE_ENGINE_OWNER_OF_KEY,
                                            STORE_ENGINE_INFLIGHT_KEY, STORE_ENGINE_ROUND_KEY,  STORE_ENGINE_BELL_KEY,
                                            STORE_ENGINE_DUE_KEY,      STORE_ENGINE_SEQ_KEY,    STORE_ENGINE_JUMPED_KEY };
enum { BACKLOG_KEYS = sizeof backlog_keys / sizeof *backlog_keys };

/* Redis's clock in ms, in a script (effects are replicated, so TIME may
 * be read before a write). */
#define SCRIPT_NOW \
    "local t = redis.call('TIME')\n" \
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

/* Add: queues the turn ARGV[1] ("<id>:<version>") for owner ARGV[2] unless
 * it is queued or in flight already (an in-flight entry no longer pending
 * is forgotten: its job was lost). KEYS as backlog_keys; ARGV: member,
 * owner, the owners' key prefix, deadline (0: none), the bell's length,
 * group, the intent's recheck ms. 1 when queued, 0 when it was there. A
 * turn queued or in flight is durable: its intent is pushed back by the
 * recheck. */
static const char add_script[] =
    SCRIPT_NOW
    "local function recheck()\n"
    "  if redis.call('ZSCORE', KEYS[9], ARGV[1]) then redis.call('ZADD', KEYS[9], now + tonumber(ARGV[7]), ARGV[1]) end\n"
    "end\n"
    "if redis.call('ZSCORE', KEYS[2], ARGV[1]) then recheck() return 0 end\n"
    "local entry = redis.call('HGET', KEYS[6], ARGV[1])\n"
    "if entry then\n"
    "  local p = redis.pcall('XPENDING', KEYS[1], ARGV[6], entry, entry, 1)\n"
    "  if type(p) == 'table' and not p['err'] and #p == 1 then recheck() return 0 end\n"
    "  redis.call('HDEL', KEYS[6], ARGV[1])\n"
    "end\n"
    "redis.call('ZADD', KEYS[2], now, ARGV[1])\n"
    "redis.call('HSET', KEYS[5], ARGV[1], ARGV[2])\n"
    "redis.call('ZADD', ARGV[3] .. ARGV[2], redis.call('INCR', KEYS[10]), ARGV[1])\n"
    "redis.call('ZADD', KEYS[3], 'NX', tonumber(redis.call('GET', KEYS[7]) or '0'), ARGV[2])\n"
    "if tonumber(ARGV[4]) > 0 then redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1]) end\n"
    "recheck()\n"
    "redis.call('RPUSH', KEYS[8], '1')\n"
    "redis.call('LTRIM', KEYS[8], -tonumber(ARGV[5]), -1)\n"
    "return 1\n";

/* Dispatch: moves the next turn from the backlog to the stream, then reads
 * the stream's next new entry for the consumer (XREADGROUP, as a claim).
 * The next turn: the one whose deadline is nearest, when it is within the
 * horizon and the turn before did not jump the round so; else the first
 * of the owner served longest ago, who then goes to the back of the round.
 * (Every other turn is the round's: clients whose turns are all urgent,
 * short clocks made on purpose, cannot keep the others waiting.) KEYS as
 * backlog_keys; ARGV: group, consumer,
 * the owners' key prefix, horizon ms, the stream's MAXLEN, the intent's
 * recheck ms (a turn in flight: its lease brings it back if lost). The
 * XREADGROUP's reply, or an error. */
static const char dispatch_script[] =
    SCRIPT_NOW
    "local member, owner\n"
    "local jumped = redis.call('GET', KEYS[11])\n"
    "local u = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')\n"
    "if not jumped and #u == 2 and tonumber(u[2]) - now <= tonumber(ARGV[4]) then member = u[1] end\n"
    "local jump = member ~= nil\n"
    "while not member do\n"
    "  local o = redis.call('ZRANGE', KEYS[3], 0, 0)\n"
    "  if #o == 0 then break end\n"
    "  local m = redis.call('ZRANGE', ARGV[3] .. o[1], 0, 0)\n"
    "  if #m == 1 then member = m[1]; owner = o[1] else redis.call('ZREM', KEYS[3], o[1]) end\n"
    "end\n"
    "if member then\n"
    "  owner = owner or redis.call('HGET', KEYS[5], member)\n"
    "  local colon = string.find(member, ':', 1, true)\n"
    "  if colon then\n" /* the first write: a full Redis refuses it, and the script, before any other */
    "    local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', 'game', string.sub(member, 1, colon - 1),\n"
    "                          'version', string.sub(member, colon + 1))\n"
    "    redis.call('HSET', KEYS[6], member, id)\n"
    "    if redis.call('ZSCORE', KEYS[9], member) then redis.call('ZADD', KEYS[9], now + tonumber(ARGV[6]), member) end\n"
    "  end\n"
    "  if owner then\n"
    "    local okey = ARGV[3] .. owner\n"
    "    redis.call('ZREM', okey, member)\n"
    "    if redis.call('ZCARD', okey) == 0 then redis.call('ZREM', KEYS[3], owner)\n"
    "    else redis.call('ZADD', KEYS[3], redis.call('INCR', KEYS[7]), owner) end\n"
    "  end\n"
    "  redis.call('ZREM', KEYS[2], member)\n"
    "  redis.call('ZREM', KEYS[4], member)\n"
    "  redis.call('HDEL', KEYS[5], member)\n"
    "  if jump then redis.call('SET', KEYS[11], '1') else redis.call('DEL', KEYS[11]) end\n"
    "end\n"
    "local r = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1, 'STREAMS', KEYS[1], '>')\n"
    "if type(r) == 'table' and r['err'] and string.sub(r['err'], 1, 7) == 'NOGROUP' then\n"
    "  redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')\n"
    "  r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1, 'STREAMS', KEYS[1], '>')\n"
    "end\n"
    "return r\n";

/* Intent: records the intent ARGV[1] due by ARGV[2] (ZADD, the due
 * sorted set), unless owner ARGV[3] has ARGV[5] turns queued already (-1)
 * or everyone ARGV[6] (-2); 0 for either bound: none. KEYS as
 * backlog_keys; ARGV[4] the owners' key prefix. 1 when recorded. */
static const char intent_script[] =
    "if tonumber(ARGV[5]) > 0 and ARGV[3] ~= '' and redis.call('ZCARD', ARGV[4] .. ARGV[3]) >= tonumber(ARGV[5]) then\n"
    "  return -1\n"
    "end\n"
    "if tonumber(ARGV[6]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return -2 end\n"
    "redis.call('ZADD', KEYS[9], ARGV[2], ARGV[1])\n"
    "return 1\n";

/* Backlog: [now, turns queued, the oldest one's queued time (0: none),
 * turns in flight, owners waiting, the owner ARGV[2]'s turns queued].
 * KEYS as backlog_keys; ARGV: the owners' key prefix, owner ("" none). */
static const char backlog_script[] =
    SCRIPT_NOW
    "local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')\n"
    "local mine = 0\n"
    "if ARGV[2] ~= '' then mine = redis.call('ZCARD', ARGV[1] .. ARGV[2]) end\n"
    "return { now, redis.call('ZCARD', KEYS[2]), tonumber(oldest[2] or '0'), redis.call('HLEN', KEYS[6]),\n"
    "         redis.call('ZCARD', KEYS[3]), mine }\n";

static unsigned engine_slot(void)
{
    return cluster_key_slot(STORE_ENGINE_JOBS_KEY, sizeof STORE_ENGINE_JOBS_KEY - 1);
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

/* Makes the consumer group, reading the stream from its first entry
 * (MKSTREAM: the stream too when missing). One already there is fine. */
static store_status_t make_group(store_t *store)
{
    const char *argv[] = { "XGROUP", "CREATE", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP, "0", "MKSTREAM" };
    redisReply *r = store_command(store, engine_slot(), 6, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = is_error(r, "BUSYGROUP") ? STORE_OK : store_reply_status(r, REDIS_REPLY_STATUS);
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

/* Runs one of this file's scripts on the engine keys' node: key_count
 * keys (all of the {engine} slot), then value_count values. */
static redisReply *engine_script_keys(store_t *store, const char *text, int key_count, const char *const *keys,
                                      int value_count, const char **values)
{
    return store_script_texts(store, engine_slot(), text, key_count, keys, value_count, values);
}

/* A script whose KEYS[1] is the stream, KEYS[2] the in-flight hash. */
static redisReply *engine_script(store_t *store, const char *text, int value_count, const char **values)
{
    static const char *const keys[] = { STORE_ENGINE_JOBS_KEY, STORE_ENGINE_INFLIGHT_KEY };
    return engine_script_keys(store, text, 2, keys, value_count, values);
}

/* A script over the backlog (backlog_keys). */
static redisReply *backlog_script_run(store_t *store, const char *text, int value_count, const char **values)
{
    return engine_script_keys(store, text, BACKLOG_KEYS, backlog_keys, value_count, values);
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
        || !store_version_read(f->element[3]->str, f->element[3]->len, &job->version))
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
    const char *values[] = { STORE_ENGINE_GROUP, text, "" };
    redisReply *r = engine_script(store, ack_script, 3, values);
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
        store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
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

/* Reads an XREADGROUP reply into job: nil, nothing came; [[key,
 * [entries...]]]. A client blocked on a stream deleted meanwhile is let go
 * (UNBLOCKED): nothing came either. */
static store_status_t read_new(store_t *store, const redisReply *r, store_engine_job_t *job)
{
    store_status_t status = r->type == REDIS_REPLY_NIL || is_error(r, "UNBLOCKED") ? STORE_ENOT_FOUND
                                                                                   : store_reply_status(r, REDIS_REPLY_ARRAY);
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
    return status;
}

/* The next turn of the backlog, moved to the stream and claimed, or a new
 * entry added to the stream by other means (dispatch_script). */
static store_status_t claim_new(store_t *store, const char *consumer, store_engine_job_t *job)
{
    char horizon[16], maxlen[16], recheck[16];
    snprintf(horizon, sizeof horizon, "%d", STORE_ENGINE_URGENT_MS);
    snprintf(maxlen, sizeof maxlen, "%d", STORE_ENGINE_JOBS_MAX);
    snprintf(recheck, sizeof recheck, "%d", STORE_ENGINE_RECHECK_MS);
    const char *values[] = { STORE_ENGINE_GROUP, consumer, STORE_ENGINE_OWNER_PREFIX, horizon, maxlen, recheck };
    redisReply *r = backlog_script_run(store, dispatch_script, 6, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = read_new(store, r, job);
    freeReplyObject(r);
    return status;
}

/* Waits for the bell (a turn queued) up to block_ms, on this thread's
 * connection: STORE_OK rung, STORE_ENOT_FOUND not. */
static store_status_t wait_bell(store_t *store, unsigned block_ms)
{
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%u.%03u", block_ms / 1000, block_ms % 1000);
    const char *argv[] = { "BLPOP", STORE_ENGINE_BELL_KEY, seconds };
    redisReply *r = store_command(store, engine_slot(), 3, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_NIL ? STORE_ENOT_FOUND : store_reply_status(r, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    return status;
}

static bool consumer_ok(const char *consumer)
{
    size_t length = consumer ? strlen(consumer) : 0;
    return length > 0 && length <= STORE_ENGINE_CONSUMER_MAX;
}

/* An owner as a key may hold it: 1 to STORE_ENGINE_OWNER_MAX - 1 bytes,
 * printable ASCII without spaces. */
static bool owner_ok(const char *owner)
{
    size_t length = strlen(owner);
    if (!length || length >= STORE_ENGINE_OWNER_MAX)
        return false;
    for (size_t i = 0; i < length; i++)
        if (owner[i] <= ' ' || owner[i] > '~')
            return false;
    return true;
}

store_status_t store_engine_turn_add(store_t *store, const char *id, uint64_t version, const store_engine_turn_t *turn,
                                     bool *added)
{
    if (added)
        *added = false;
    char member[STORE_ENGINE_MEMBER_SIZE];
    const char *owner = turn && turn->owner && turn->owner[0] ? turn->owner : STORE_ENGINE_OWNER_NONE;
    if (!store_engine_member(id, version, member) || !owner_ok(owner))
        return STORE_ENOT_FOUND;
    char deadline[24], bell[16], recheck[16];
    snprintf(deadline, sizeof deadline, "%lld", (long long)(turn && turn->deadline_ms > 0 ? turn->deadline_ms : 0));
    snprintf(bell, sizeof bell, "%d", STORE_ENGINE_BELL_MAX);
    snprintf(recheck, sizeof recheck, "%d", STORE_ENGINE_RECHECK_MS);
    const char *values[] = { member, owner, STORE_ENGINE_OWNER_PREFIX, deadline, bell, STORE_ENGINE_GROUP, recheck };
    redisReply *r = backlog_script_run(store, add_script, 7, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
    if (status == STORE_OK && added)
        *added = r->integer == 1;
    freeReplyObject(r);
    return status;
}

store_status_t store_engine_turn_intent(store_t *store, const char *id, uint64_t version, int64_t due_ms,
                                        const char *owner, const store_engine_bounds_t *bounds,
                                        store_engine_bound_t *reached)
{
    *reached = STORE_ENGINE_BOUND_NONE;
    char member[STORE_ENGINE_MEMBER_SIZE];
    if (!store_engine_member(id, version, member) || (owner && owner[0] && !owner_ok(owner)))
        return STORE_ENOT_FOUND;
    char due[24], per_owner[16], total[16];
    snprintf(due, sizeof due, "%lld", (long long)due_ms);
    snprintf(per_owner, sizeof per_owner, "%u", bounds ? bounds->per_owner : 0);
    snprintf(total, sizeof total, "%u", bounds ? bounds->total : 0);
    const char *values[] = { member, due, owner ? owner : "", STORE_ENGINE_OWNER_PREFIX, per_owner, total };
    redisReply *r = backlog_script_run(store, intent_script, 6, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
    if (status == STORE_OK && r->integer < 0)
        *reached = r->integer == -1 ? STORE_ENGINE_BOUND_OWNER : STORE_ENGINE_BOUND_TOTAL;
    freeReplyObject(r);
    return status;
}

store_status_t store_engine_job_add(store_t *store, const char *id, uint64_t version)
{
    return store_engine_turn_add(store, id, version, NULL, NULL);
}

/* store_engine_job_claim's loop: quiet jobs, then the backlog's next,
 * until block_ms have passed or this thread's deadline has come, waiting
 * on the bell between looks. */
static store_status_t claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                            store_engine_job_t *job)
{
    int64_t end = clock_now_ms() + block_ms;
    for (bool first = true;; first = false) {
        if (!first && store_command_wait_ms(store) < POLL_MS)
            return STORE_ENOT_FOUND; /* this thread's deadline (nearly) come: no job by then */
        store_status_t status = claim_quiet(store, consumer, lease_ms, job);
        if (status == STORE_ENOT_FOUND)
            status = claim_new(store, consumer, job);
        int64_t left = end - clock_now_ms();
        if (status != STORE_ENOT_FOUND || left <= 0)
            return status;
        unsigned block = block_for(store_command_wait_ms(store));
        if (left < (int64_t)block)
            block = (unsigned)left;
        if (block >= POLL_MS) {
            status = wait_bell(store, block);
            if (status != STORE_OK && status != STORE_ENOT_FOUND)
                return store_command_wait_ms(store) ? status : STORE_ENOT_FOUND; /* cut by the deadline: a wait */
        } else { /* too little time for Redis to block in: look again soon */
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

/* The number at index i of an array reply, or 0. */
static int64_t integer_at(const redisReply *r, size_t i)
{
    return r->elements > i && r->element[i]->type == REDIS_REPLY_INTEGER ? (int64_t)r->element[i]->integer : 0;
}

store_status_t store_engine_backlog(store_t *store, const char *owner, store_engine_backlog_t *out)
{
    memset(out, 0, sizeof *out);
    if (owner && owner[0] && !owner_ok(owner))
        return STORE_ENOT_FOUND;
    const char *values[] = { STORE_ENGINE_OWNER_PREFIX, owner ? owner : "" };
    redisReply *r = backlog_script_run(store, backlog_script, 2, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK && r->elements != 6)
        status = STORE_ECORRUPT;
    if (status == STORE_OK) {
        out->now_ms = integer_at(r, 0);
        out->queued = (uint64_t)integer_at(r, 1);
        out->oldest_queued_ms = integer_at(r, 2);
        out->in_flight = (uint64_t)integer_at(r, 3);
        out->owners = (uint64_t)integer_at(r, 4);
        out->owner_queued = (uint64_t)integer_at(r, 5);
    }
    freeReplyObject(r);
    return status;
}

/* Runs a script of the job's that answers 1 when it did its work: STORE_OK
 * then, STORE_ENOT_FOUND for any other number. */
static store_status_t run_done_script(store_t *store, const char *script, int count, const char **values)
{
    redisReply *r = engine_script(store, script, count, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
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
    char member[STORE_ENGINE_MEMBER_SIZE] = "";
    if (!store_engine_member(job->id, job->version, member))
        member[0] = '\0';
    const char *values[] = { STORE_ENGINE_GROUP, job->entry_id, member };
    return run_done_script(store, ack_script, 3, values);
}

/* --- consumers --- */

/* Remove: deletes consumer ARGV[2] from group ARGV[1] when it owns no
 * pending entry. KEYS[1] the stream. 1 when deleted. */
static const char remove_script[] =
    "local p = redis.pcall('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])\n"
    "if type(p) ~= 'table' or p['err'] or #p > 0 then return 0 end\n"
    "return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) >= 0 and 1 or 0\n";

store_status_t store_engine_consumer_remove(store_t *store, const char *consumer)
{
    if (!consumer_ok(consumer))
        return STORE_ENOT_FOUND;
    const char *values[] = { STORE_ENGINE_GROUP, consumer };
    redisReply *r = engine_script(store, remove_script, 2, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    return status;
}

/* Prune: deletes the group's consumers idle past ARGV[2] ms that own no
 * pending entry, at most ARGV[3] of them. KEYS[1] the stream; ARGV[1] the
 * group. How many were deleted. */
static const char prune_script[] =
    "local ok, list = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])\n"
    "if not ok then return 0 end\n"
    "local removed = 0\n"
    "for _, c in ipairs(list) do\n"
    "  local f = {}\n"
    "  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end\n"
    "  if removed < tonumber(ARGV[3]) and tonumber(f['pending']) == 0 and tonumber(f['idle']) > tonumber(ARGV[2]) then\n"
    "    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])\n"
    "    removed = removed + 1\n"
    "  end\n"
    "end\n"
    "return removed\n";

store_status_t store_engine_consumers_prune(store_t *store, unsigned idle_ms, unsigned max, unsigned *removed)
{
    *removed = 0;
    char idle[16], most[16];
    snprintf(idle, sizeof idle, "%u", idle_ms);
    snprintf(most, sizeof most, "%u", max);
    const char *values[] = { STORE_ENGINE_GROUP, idle, most };
    redisReply *r = engine_script(store, prune_script, 3, values);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = store_reply_status(r, REDIS_REPLY_INTEGER);
    if (status == STORE_OK)
        *removed = r->integer > 0 ? (unsigned)r->integer : 0;
    freeReplyObject(r);
    return status;
}

/* --- the bell, on a connection of its own --- */

struct store_engine_bell {
    store_t *store;
    conn_t *conn;
};

store_engine_bell_t *store_engine_bell_new(store_t *store)
{
    store_engine_bell_t *bell = calloc(1, sizeof *bell);
    if (bell)
        bell->store = store;
    return bell;
}

void store_engine_bell_free(store_engine_bell_t *bell)
{
    if (!bell)
        return;
    conn_free(bell->conn);
    free(bell);
}

/* A connection to the node serving the engine keys: the one node, or the
 * cluster's master of the {engine} slot. */
static conn_t *bell_connect(store_t *store)
{
    if (!store_is_cluster(store))
        return store_connect_node(store, NULL, NULL, 0);
    cluster_map_t *map = malloc(sizeof *map);
    conn_t *c = NULL;
    if (map && store_cluster_map(store, map) && map->slot_node[engine_slot()] != CLUSTER_NO_NODE)
        c = store_connect_node(store, &map->nodes[map->slot_node[engine_slot()]], NULL, 0);
    free(map);
    return c;
}

store_status_t store_engine_bell_wait(store_engine_bell_t *bell, unsigned block_ms)
{
    if (bell->conn && conn_closed_while_idle(bell->conn)) {
        conn_free(bell->conn);
        bell->conn = NULL;
    }
    if (!bell->conn && !(bell->conn = bell_connect(bell->store)))
        return STORE_EUNAVAILABLE;
    /* The reply may take the block, Redis's timer's lateness and a round
     * trip: a command timeout on top of the block is for the last two. */
    unsigned round_trip = store_command_wait_ms(bell->store);
    conn_set_timeout(bell->conn, block_ms + TIMER_MARGIN_MS + (round_trip ? round_trip : TIMER_MARGIN_MS));
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%u.%03u", block_ms / 1000, block_ms % 1000);
    const char *argv[] = { "BLPOP", STORE_ENGINE_BELL_KEY, seconds };
    conn_failure_t failure;
    redisReply *r = conn_command(bell->conn, 3, argv, NULL, &failure);
    if (!r) { /* a late or lost reply: this connection's alone, never the store's */
        conn_free(bell->conn);
        bell->conn = NULL;
        return STORE_EUNAVAILABLE;
    }
    store_status_t status = r->type == REDIS_REPLY_NIL ? STORE_ENOT_FOUND
                            : r->type == REDIS_REPLY_ARRAY ? STORE_OK
                                                           : STORE_EUNAVAILABLE;
    freeReplyObject(r);
    if (status == STORE_EUNAVAILABLE) { /* MOVED, a node gone read-only...: connect afresh next time */
        conn_free(bell->conn);
        bell->conn = NULL;
    }
    return status;
}
