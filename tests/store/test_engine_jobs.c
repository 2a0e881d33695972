/* Tests for store/engine_jobs.c and store/engine_due.c against
 * engine_jobs.h's protocol, on a private redis-server (engine_jobs) and a
 * Redis Cluster of three masters (engine_jobs_cluster): jobs, leases,
 * intents, the backlog, consumers, the bell, Redis frozen. Failing, never
 * skipping, without Redis. One long file on purpose: one protocol. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../store/cluster.h"
#include "../../store/engine_jobs.h"
#include "../../store/store.h"
#include "../support/redis_fixture.h"
#include "../support/tests.h"

enum {
    TIMEOUT_MS = 500, /* the store's connect and command timeouts */
    SLACK_MS = 500,   /* a busy machine's lateness */
    LONG_LEASE_MS = 60000,
};

static redis_fixture_t fixture;
static store_t *store; /* fixture.store, while the suite runs */

static unsigned engine_slot(void)
{
    return cluster_key_slot(STORE_ENGINE_JOBS_KEY, strlen(STORE_ENGINE_JOBS_KEY));
}

/* The cluster node index of the master serving slot now, or -1. */
static int master_of(unsigned slot)
{
    static int owners[CLUSTER_SLOT_COUNT];
    redis_cluster_t *cluster = &fixture.cluster;
    if (!redis_cluster_refresh(cluster) || !redis_cluster_slot_owners(cluster, 0, owners) || !owners[slot])
        return -1;
    return redis_cluster_find_port(cluster, owners[slot]);
}

/* The redis-server holding the engine keys. */
static redis_server_t *engine_node(void)
{
    if (!fixture.on_cluster)
        return &fixture.server;
    int index = master_of(engine_slot());
    CU_ASSERT_FATAL(index >= 0);
    return &fixture.cluster.nodes[index].server;
}

/* One command (hiredis format) on the node holding the engine keys, on a
 * connection of its own; the reply (freeReplyObject) or NULL. */
static redisReply *raw(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(engine_node(), NULL, format, args);
    va_end(args);
    return r;
}

/* An integer reply of raw(), or -1. */
static long long raw_integer(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(engine_node(), NULL, format, args);
    va_end(args);
    long long value = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    return value;
}

/* Jobs pending (claimed, not acked) in the group, by XPENDING's summary. */
static long long pending_count(void)
{
    redisReply *r = raw("XPENDING %s %s", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP);
    long long n = r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 && r->element[0]->type == REDIS_REPLY_INTEGER
                      ? r->element[0]->integer
                      : -1;
    if (r)
        freeReplyObject(r);
    return n;
}

static long long stream_length(void) { return raw_integer("XLEN %s", STORE_ENGINE_JOBS_KEY); }

/* Each test starts with no jobs, no group and no intents. */
/* Every engine key is on the engine keys' node, and only they are. */
static void before_each(void)
{
    redisReply *r = raw("FLUSHALL");
    CU_ASSERT(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
}

/* Turns waiting in the backlog. */
static long long queued_count(void) { return raw_integer("ZCARD %s", STORE_ENGINE_QUEUED_KEY); }

static int single_init(void)
{
    store = redis_fixture_start_server(&fixture, "engine_jobs", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int cluster_init(void)
{
    store = redis_fixture_start_cluster(&fixture, "engine_jobs_cluster", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int suite_cleanup(void)
{
    redis_fixture_stop(&fixture);
    store = NULL;
    return 0;
}

static void sleep_ms(long ms) { redis_server_sleep_ms(ms); }

/* Claims with a long lease and no wait. */
static store_status_t claim_now(const char *consumer, store_engine_job_t *job)
{
    return store_engine_job_claim(store, consumer, LONG_LEASE_MS, 0, job);
}

/* --- jobs --- */

static void test_a_job_added_is_claimed_once_and_acked_away(void)
{
    CU_ASSERT_EQUAL_FATAL(store_engine_job_add(store, "GameOne_-0123456", 5), STORE_OK);
    CU_ASSERT_EQUAL(queued_count(), 1); /* waiting: in the stream once claimed */
    CU_ASSERT_EQUAL(stream_length(), 0);
    store_engine_job_t job, other;
    CU_ASSERT_EQUAL_FATAL(claim_now("worker-a", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "GameOne_-0123456");
    CU_ASSERT_EQUAL(job.version, 5);
    CU_ASSERT(strlen(job.entry_id) >= 3 && strchr(job.entry_id, '-'));
    CU_ASSERT_EQUAL(pending_count(), 1);
    CU_ASSERT_EQUAL(queued_count(), 0);
    CU_ASSERT_EQUAL(stream_length(), 1);
    /* Claimed: no other worker gets it, nor does the same one again. */
    CU_ASSERT_EQUAL(claim_now("worker-b", &other), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(claim_now("worker-a", &other), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL(stream_length(), 0);
    CU_ASSERT_EQUAL(pending_count(), 0);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_ENOT_FOUND); /* done already */
    CU_ASSERT_EQUAL(claim_now("worker-b", &other), STORE_ENOT_FOUND);
    /* The largest version, and jobs in the order added. */
    CU_ASSERT_EQUAL(store_engine_job_add(store, "a", UINT64_C(9007199254740991)), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "b", 1), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(claim_now("worker-a", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "a");
    CU_ASSERT_EQUAL(job.version, UINT64_C(9007199254740991));
    CU_ASSERT_EQUAL_FATAL(claim_now("worker-b", &other), STORE_OK);
    CU_ASSERT_STRING_EQUAL(other.id, "b");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &other), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
}

static void test_what_is_no_game_id_or_version_is_refused_unsent(void)
{
    static const char *const ids[] = { "", "a:b", "a b", "a{b}", "é", "abcdefghijklmnopqrstuvwx" /* 24 */ };
    store_stats_t before, after;
    store_stats(store, &before);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        CU_ASSERT_EQUAL(store_engine_job_add(store, ids[i], 1), STORE_ENOT_FOUND);
        CU_ASSERT_EQUAL(store_engine_due_set(store, ids[i], 1, 0), STORE_ENOT_FOUND);
        CU_ASSERT_EQUAL(store_engine_due_clear(store, ids[i], 1), STORE_ENOT_FOUND);
    }
    CU_ASSERT_EQUAL(store_engine_job_add(store, "ok", 0), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "ok", UINT64_C(9007199254740992)), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "ok", 0, 0), STORE_ENOT_FOUND);
    store_engine_job_t job;
    CU_ASSERT_EQUAL(store_engine_job_claim(store, "", LONG_LEASE_MS, 0, &job), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_claim(store, "w", 0, 0, &job), STORE_ENOT_FOUND);
    char long_name[STORE_ENGINE_CONSUMER_MAX + 2];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CU_ASSERT_EQUAL(store_engine_job_claim(store, long_name, LONG_LEASE_MS, 0, &job), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "abcdefghijklmnopqrstuvw" /* 23 */, 1), STORE_OK);
    store_stats(store, &after);
    CU_ASSERT_EQUAL(after.errors, before.errors);
    CU_ASSERT_EQUAL(queued_count(), 1);
    /* An owner that cannot be a key's name is refused too. */
    static const char *const owners[] = { "a b", "\x01", "\x7f",
                                          "oooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooo" /* 64 */ };
    for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++) {
        store_engine_turn_t turn = { owners[i], 0 };
        CU_ASSERT_EQUAL(store_engine_turn_add(store, "ok", 1, &turn, NULL), STORE_ENOT_FOUND);
    }
    CU_ASSERT_EQUAL(queued_count(), 1);
}

/* Two workers, each on its own thread (and so its own connection). */
enum { RACE_JOBS = 40, RACE_WORKERS = 2 };

typedef struct {
    char consumer[32];
    store_engine_job_t jobs[RACE_JOBS];
    int count;
    int failures;
} racer_t;

/* Claims (waiting up to a second for each) and acks until none comes. */
static void *race(void *p)
{
    racer_t *r = p;
    for (;;) {
        store_engine_job_t job;
        store_status_t status = store_engine_job_claim(store, r->consumer, LONG_LEASE_MS, 1000, &job);
        if (status == STORE_ENOT_FOUND)
            break;
        if (status != STORE_OK || r->count == RACE_JOBS) {
            r->failures++;
            break;
        }
        r->jobs[r->count++] = job;
        if (store_engine_job_ack(store, &job) != STORE_OK)
            r->failures++;
    }
    return NULL;
}

static void test_two_workers_never_get_the_same_fresh_job(void)
{
    racer_t racers[RACE_WORKERS];
    pthread_t threads[RACE_WORKERS];
    memset(racers, 0, sizeof racers);
    for (int w = 0; w < RACE_WORKERS; w++) {
        snprintf(racers[w].consumer, sizeof racers[w].consumer, "racer-%d", w);
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[w], NULL, race, &racers[w]), 0);
    }
    sleep_ms(100); /* both waiting */
    for (int i = 0; i < RACE_JOBS; i++) {
        char id[16];
        snprintf(id, sizeof id, "race%02d", i);
        CU_ASSERT_EQUAL(store_engine_job_add(store, id, (uint64_t)i + 1), STORE_OK);
    }
    for (int w = 0; w < RACE_WORKERS; w++)
        pthread_join(threads[w], NULL);
    bool seen[RACE_JOBS] = { false };
    int total = 0;
    for (int w = 0; w < RACE_WORKERS; w++) {
        CU_ASSERT_EQUAL(racers[w].failures, 0);
        for (int j = 0; j < racers[w].count; j++) {
            int n = atoi(racers[w].jobs[j].id + 4);
            CU_ASSERT_FATAL(n >= 0 && n < RACE_JOBS);
            CU_ASSERT_FALSE(seen[n]); /* nobody had it before */
            CU_ASSERT_EQUAL(racers[w].jobs[j].version, (uint64_t)n + 1);
            seen[n] = true;
            total++;
        }
    }
    CU_ASSERT_EQUAL(total, RACE_JOBS);
    CU_ASSERT_EQUAL(stream_length(), 0);
    CU_ASSERT_EQUAL(pending_count(), 0);
}

static void test_a_job_never_acked_is_claimed_by_another_after_its_lease_not_before(void)
{
    enum { LEASE_MS = 1000 };
    CU_ASSERT_EQUAL_FATAL(store_engine_job_add(store, "quiet", 7), STORE_OK);
    store_engine_job_t first, second;
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "dies", LEASE_MS, 0, &first), STORE_OK);
    long claimed = tests_monotonic_ms();
    /* Within the lease: nobody else gets it (checked only while surely within). */
    for (long at = 0; at <= LEASE_MS / 2; at += LEASE_MS / 2) {
        sleep_ms(claimed + at - tests_monotonic_ms() > 0 ? claimed + at - tests_monotonic_ms() : 0);
        store_status_t status = store_engine_job_claim(store, "takes-over", LEASE_MS, 0, &second);
        if (tests_monotonic_ms() - claimed < LEASE_MS - 100)
            CU_ASSERT_EQUAL(status, STORE_ENOT_FOUND);
    }
    sleep_ms(claimed + LEASE_MS + 100 - tests_monotonic_ms());
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "takes-over", LEASE_MS, 0, &second), STORE_OK);
    CU_ASSERT_STRING_EQUAL(second.id, "quiet");
    CU_ASSERT_EQUAL(second.version, 7);
    CU_ASSERT_STRING_EQUAL(second.entry_id, first.entry_id);
    CU_ASSERT_EQUAL(first.deliveries, 1);
    CU_ASSERT_EQUAL(second.deliveries, 2);
    /* The first worker, back, learns it lost the job. */
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "dies", &first), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "takes-over", &second), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &second), STORE_OK);
    CU_ASSERT_EQUAL(pending_count(), 0);
}

static void test_touch_holds_a_job_past_its_lease_until_it_stops(void)
{
    enum { LEASE_MS = 600, BEAT_MS = 200 };
    CU_ASSERT_EQUAL_FATAL(store_engine_job_add(store, "thinking", 3), STORE_OK);
    store_engine_job_t job, other;
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "thinker", LEASE_MS, 0, &job), STORE_OK);
    long start = tests_monotonic_ms();
    long last_touch = start;
    while (tests_monotonic_ms() - start < 3 * LEASE_MS) {
        sleep_ms(BEAT_MS);
        CU_ASSERT_EQUAL(store_engine_job_touch(store, "thinker", &job), STORE_OK);
        long since = tests_monotonic_ms() - last_touch;
        last_touch = tests_monotonic_ms();
        store_status_t status = store_engine_job_claim(store, "thief", LEASE_MS, 0, &other);
        if (since < LEASE_MS - 100) /* the beat came in time */
            CU_ASSERT_EQUAL(status, STORE_ENOT_FOUND);
    }
    /* Its delivery count was left alone by the touches: claimed once. */
    redisReply *r = raw("XPENDING %s %s - + 10", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP);
    CU_ASSERT_FATAL(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1);
    CU_ASSERT_EQUAL(r->element[0]->element[3]->integer, 1);
    freeReplyObject(r);
    /* No more beats: after a lease it is the next worker's. */
    sleep_ms(LEASE_MS + 100);
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "thief", LEASE_MS, 0, &other), STORE_OK);
    CU_ASSERT_STRING_EQUAL(other.entry_id, job.entry_id);
    CU_ASSERT_EQUAL(other.deliveries, 2); /* the touches handed it out to nobody */
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "thinker", &job), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &other), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "thief", &other), STORE_ENOT_FOUND); /* acked: gone */
}

enum { ADD_AFTER_MS = 300 };

/* On a thread of its own: adds the job "woken" after ADD_AFTER_MS; non-NULL when added. */
static void *add_later(void *unused)
{
    (void)unused;
    sleep_ms(ADD_AFTER_MS);
    return store_engine_job_add(store, "woken", 9) == STORE_OK ? store : NULL;
}

static void test_a_blocking_claim_waits_its_time_when_empty_and_wakes_at_once_for_a_new_job(void)
{
    enum { BLOCK_MS = 1500 };
    store_engine_job_t job;
    store_stats_t before, after;
    store_stats(store, &before);
    long start = tests_monotonic_ms();
    CU_ASSERT_EQUAL(store_engine_job_claim(store, "waiter", LONG_LEASE_MS, BLOCK_MS, &job), STORE_ENOT_FOUND);
    long waited = tests_monotonic_ms() - start;
    CU_ASSERT(waited >= BLOCK_MS - 20 && waited < BLOCK_MS + SLACK_MS);
    if (waited < BLOCK_MS - 20 || waited >= BLOCK_MS + SLACK_MS)
        fprintf(stderr, "\nan empty claim of %d ms took %ld ms\n", BLOCK_MS, waited);
    /* Three times the command timeout, waited without one timing out. */
    store_stats(store, &after);
    CU_ASSERT_EQUAL(after.errors, before.errors);
    CU_ASSERT_EQUAL(after.connects, before.connects);
    /* A job added while it waits ends the wait. */
    pthread_t adder;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&adder, NULL, add_later, NULL), 0);
    start = tests_monotonic_ms();
    store_status_t status = store_engine_job_claim(store, "waiter", LONG_LEASE_MS, 5000, &job);
    waited = tests_monotonic_ms() - start;
    void *added = NULL;
    pthread_join(adder, &added);
    CU_ASSERT_PTR_NOT_NULL(added);
    CU_ASSERT_EQUAL(status, STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "woken");
    CU_ASSERT(waited >= ADD_AFTER_MS - 50 && waited < ADD_AFTER_MS + SLACK_MS);
    if (waited >= ADD_AFTER_MS + SLACK_MS)
        fprintf(stderr, "\na job added after %d ms woke the claim after %ld ms\n", ADD_AFTER_MS, waited);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
}

static void test_the_group_is_made_again_when_the_stream_or_the_group_is_gone(void)
{
    store_engine_job_t job;
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ENOT_FOUND); /* makes the stream and the group */
    CU_ASSERT_EQUAL(stream_length(), 0);
    /* The stream deleted with turns waiting: they wait in the backlog, and the
     * group made again takes them (XADD makes a stream without the group). */
    CU_ASSERT_EQUAL(store_engine_job_add(store, "before", 1), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer("DEL %s", STORE_ENGINE_JOBS_KEY), 1);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "after", 2), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "before");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "after");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    /* An entry written to the stream itself (a replica of an older chessd)
     * is taken too. */
    redisReply *added = raw("XADD %s * game older version 5", STORE_ENGINE_JOBS_KEY);
    CU_ASSERT_TRUE(added && added->type == REDIS_REPLY_STRING);
    if (added)
        freeReplyObject(added);
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "older");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    /* The group destroyed with a job not done in the stream: it is had again. */
    CU_ASSERT_EQUAL(store_engine_job_add(store, "kept", 3), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer("XGROUP DESTROY %s %s", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP), 1);
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "w", &job), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL_FATAL(claim_now("v", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "kept");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL(stream_length(), 0);
}

static void test_an_entry_this_code_did_not_write_is_refused_and_removed(void)
{
    static const char *const entries[] = {
        "XADD %s * foo bar", "XADD %s * game x", "XADD %s * game a:b version 1", "XADD %s * game a version 0",
        "XADD %s * game a version 01", "XADD %s * version 1 game a", "XADD %s * game a version 1 extra 1",
    };
    store_engine_job_t job;
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ENOT_FOUND);
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        redisReply *r = raw(entries[i], STORE_ENGINE_JOBS_KEY);
        CU_ASSERT_TRUE_FATAL(r && r->type == REDIS_REPLY_STRING);
        freeReplyObject(r);
        CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ECORRUPT);
        CU_ASSERT_EQUAL(stream_length(), 0);
        CU_ASSERT_EQUAL(pending_count(), 0);
    }
    /* A good job behind a bad one is had on the next call. */
    redisReply *r = raw("XADD %s * foo bar", STORE_ENGINE_JOBS_KEY);
    freeReplyObject(r);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "good", 4), STORE_OK);
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ECORRUPT);
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "good");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    /* Not a stream at all. */
    CU_ASSERT_EQUAL(raw_integer("DEL %s", STORE_ENGINE_JOBS_KEY), 1);
    r = raw("SET %s x", STORE_ENGINE_JOBS_KEY);
    freeReplyObject(r);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "x", 1), STORE_OK); /* waits in the backlog */
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &(store_engine_job_t){ "x", 1, "1-1", 1 }), STORE_ECORRUPT);
}

/* --- intents --- */

/* CU-asserts the scan at now gives the intents "id:version" named, in order. */
static void expect_due(int64_t now, unsigned max, const char *const expected[], unsigned expected_count)
{
    store_engine_due_t found[8];
    unsigned count = 99;
    CU_ASSERT_EQUAL_FATAL(store_engine_due_scan(store, now, max, found, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, expected_count);
    for (unsigned i = 0; i < count && i < expected_count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%.23s:%llu", found[i].id, (unsigned long long)found[i].version);
        CU_ASSERT_STRING_EQUAL(name, expected[i]);
    }
}

static void test_intents_are_set_scanned_by_due_time_and_cleared_per_version(void)
{
    int64_t now = 0;
    CU_ASSERT_EQUAL_FATAL(store_engine_now(store, &now), STORE_OK);
    /* Redis's clock is this machine's (one machine): within a few seconds of time(). */
    int64_t wall = (int64_t)time(NULL) * 1000;
    CU_ASSERT(now > wall - 5000 && now < wall + 5000);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "gameA", 5, now - 10), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "gameA", 3, now - 1000), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "gameB", 2, now + 60000), STORE_OK);
    expect_due(now, 8, (const char *[]){ "gameA:3", "gameA:5" }, 2); /* the most overdue first */
    expect_due(now, 1, (const char *[]){ "gameA:3" }, 1);
    expect_due(now - 5000, 8, NULL, 0);
    store_engine_due_t one;
    unsigned count = 7;
    CU_ASSERT_EQUAL(store_engine_due_scan(store, now, 0, &one, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, 0);
    /* The scan gives the due times back. */
    CU_ASSERT_EQUAL(store_engine_due_scan(store, now, 1, &one, &count), STORE_OK);
    CU_ASSERT_EQUAL(one.due_ms, now - 1000);
    /* Clearing an old version leaves the newer intent; one never set is fine. */
    CU_ASSERT_EQUAL(store_engine_due_clear(store, "gameA", 3), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_clear(store, "gameA", 4), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_clear(store, "gameA", 3), STORE_OK);
    expect_due(now, 8, (const char *[]){ "gameA:5" }, 1);
    /* Pushed back (a re-queue): not due now, due later, after gameB. */
    CU_ASSERT_EQUAL(store_engine_due_set(store, "gameA", 5, now + 90000), STORE_OK);
    expect_due(now, 8, NULL, 0);
    expect_due(now + 120000, 8, (const char *[]){ "gameB:2", "gameA:5" }, 2);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_DUE_KEY), 2);
    /* A member this code did not write is removed by the scan that meets it. */
    redisReply *r = raw("ZADD %s %s %s %s %s", STORE_ENGINE_DUE_KEY, "0", "junk", "1", "a:0");
    freeReplyObject(r);
    r = raw("ZADD %s %s %s", STORE_ENGINE_DUE_KEY, "2.5", "c:1");
    freeReplyObject(r);
    expect_due(now + 120000, 8, (const char *[]){ "gameB:2", "gameA:5" }, 2);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_DUE_KEY), 2);
    CU_ASSERT_EQUAL(store_engine_due_clear(store, "gameA", 5), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_clear(store, "gameB", 2), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer("EXISTS %s", STORE_ENGINE_DUE_KEY), 0);
}

/* --- Redis frozen --- */

/* The most a call may take on a silent Redis: the command timeout, twice
 * on a cluster (whose routing tries again within that budget). */
static long silent_bound(void) { return (fixture.on_cluster ? 2 : 1) * TIMEOUT_MS + SLACK_MS; }

/* CU-asserts a call on a frozen Redis failed, as one of two statuses, within bound ms. */
static void expect_failed_by(const char *what, store_status_t status, long started, long bound, store_status_t a,
                             store_status_t b)
{
    long took = tests_monotonic_ms() - started;
    CU_ASSERT(status == a || status == b);
    CU_ASSERT(took < bound);
    if ((status != a && status != b) || took >= bound)
        fprintf(stderr, "\n%s on a frozen Redis: %s after %ld ms\n", what, store_status_name(status), took);
}

static void test_a_frozen_redis_fails_every_call_by_its_timeout_or_deadline(void)
{
    CU_ASSERT_EQUAL_FATAL(store_engine_job_add(store, "frozen", 1), STORE_OK);
    store_engine_job_t job, held = { "frozen", 1, "1-1", 1 };
    int64_t now;
    redis_server_t *node = engine_node();
    CU_ASSERT_FATAL(redis_server_pause(node));
    long start = tests_monotonic_ms();
    store_status_t status = store_engine_job_claim(store, "w", LONG_LEASE_MS, 10000, &job);
    expect_failed_by("claim", status, start, silent_bound(), STORE_EUNAVAILABLE, STORE_EUNAVAILABLE);
    start = tests_monotonic_ms();
    status = store_engine_job_add(store, "frozen", 2);
    expect_failed_by("add", status, start, silent_bound(), STORE_EUNAVAILABLE, STORE_EUNKNOWN);
    start = tests_monotonic_ms();
    status = store_engine_job_touch(store, "w", &held);
    expect_failed_by("touch", status, start, silent_bound(), STORE_EUNAVAILABLE, STORE_EUNAVAILABLE);
    start = tests_monotonic_ms();
    status = store_engine_due_set(store, "frozen", 1, 0);
    expect_failed_by("due_set", status, start, silent_bound(), STORE_EUNAVAILABLE, STORE_EUNAVAILABLE);
    start = tests_monotonic_ms();
    status = store_engine_now(store, &now);
    expect_failed_by("now", status, start, silent_bound(), STORE_EUNAVAILABLE, STORE_EUNAVAILABLE);
    /* A deadline shorter than the timeout cuts a claim's wait to it. */
    start = tests_monotonic_ms();
    store_set_deadline(store_now_ms() + 150);
    status = store_engine_job_claim(store, "w", LONG_LEASE_MS, 10000, &job);
    store_set_deadline(0);
    expect_failed_by("claim with a deadline", status, start, 150 + SLACK_MS, STORE_EUNAVAILABLE, STORE_ENOT_FOUND);
    CU_ASSERT_FATAL(redis_server_resume(node));
    if (fixture.on_cluster)
        CU_ASSERT_TRUE(redis_cluster_wait_ok(&fixture.cluster, 20000));
    /* Back: the job added before the freeze is there. */
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "w", LONG_LEASE_MS, 2000, &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "frozen");
    CU_ASSERT_EQUAL(job.version, 1);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
}

/* A claim's deadline that passes while it waits (Redis answering) ends it as "no job". */
static void test_a_claim_ends_at_its_threads_deadline_with_no_job(void)
{
    store_engine_job_t job;
    long start = tests_monotonic_ms();
    store_set_deadline(store_now_ms() + 700);
    store_status_t status = store_engine_job_claim(store, "w", LONG_LEASE_MS, 10000, &job);
    store_set_deadline(0);
    long took = tests_monotonic_ms() - start;
    CU_ASSERT_EQUAL(status, STORE_ENOT_FOUND);
    CU_ASSERT(took >= 600 && took < 700 + SLACK_MS);
    if (status != STORE_ENOT_FOUND || took < 600 || took >= 700 + SLACK_MS)
        fprintf(stderr, "\na claim with 700 ms to its deadline: %s after %ld ms\n", store_status_name(status), took);
}

/* --- one node --- */

/* Many turns of one owner waiting: the stream holds only those claimed. */
static void test_the_stream_holds_only_the_turns_claimed(void)
{
    enum { ADDED = 300 };
    for (int i = 0; i < ADDED; i++) {
        if (store_engine_job_add(store, "bulk", (uint64_t)i + 1) != STORE_OK) {
            CU_FAIL("add");
            return;
        }
    }
    CU_ASSERT_EQUAL(queued_count(), ADDED);
    CU_ASSERT_EQUAL(stream_length(), 0);
    /* The oldest first. */
    store_engine_job_t job;
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_EQUAL(job.version, 1);
    CU_ASSERT_EQUAL(stream_length(), 1);
    CU_ASSERT_EQUAL(queued_count(), ADDED - 1);
}

static void test_jobs_and_intents_on_a_redis_with_a_password(void)
{
    redis_server_t locked;
    redis_server_init(&locked);
    CU_ASSERT_FATAL(redis_server_start(&locked));
    redisReply *r = redis_server_command(&locked, NULL, "CONFIG SET requirepass %s", "job-secret");
    bool locked_up = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    CU_ASSERT_FATAL(locked_up);
    char url[128];
    snprintf(url, sizeof url, "redis://:job-secret@127.0.0.1:%d", locked.port);
    store_t *s = redis_server_open_store(url, TIMEOUT_MS);
    CU_ASSERT_PTR_NOT_NULL(s);
    if (s) {
        store_engine_job_t job;
        int64_t now = 0;
        CU_ASSERT_EQUAL(store_engine_job_add(s, "locked", 2), STORE_OK);
        CU_ASSERT_EQUAL(store_engine_job_claim(s, "w", LONG_LEASE_MS, 0, &job), STORE_OK);
        CU_ASSERT_EQUAL(store_engine_job_touch(s, "w", &job), STORE_OK);
        CU_ASSERT_EQUAL(store_engine_job_ack(s, &job), STORE_OK);
        CU_ASSERT_EQUAL(store_engine_now(s, &now), STORE_OK);
        CU_ASSERT_EQUAL(store_engine_due_set(s, "locked", 2, now), STORE_OK);
        store_engine_due_t due;
        unsigned count = 0;
        CU_ASSERT_EQUAL(store_engine_due_scan(s, now, 1, &due, &count), STORE_OK);
        CU_ASSERT_EQUAL(count, 1);
        store_close(s);
    }
    /* Without it: refused, not hung. */
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", locked.port);
    s = redis_server_open_store(url, TIMEOUT_MS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(store_engine_job_add(s, "locked", 3), STORE_EUNAVAILABLE);
    store_close(s);
    if ((r = redis_server_command(&locked, "job-secret", "CONFIG SET requirepass %s", "")))
        freeReplyObject(r);
    redis_server_stop(&locked);
}

/* --- the cluster --- */

static bool ok_reply(redisReply *r)
{
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Another running master than index. */
static int other_master(int index)
{
    redis_cluster_t *cluster = &fixture.cluster;
    for (unsigned i = 0; i < cluster->node_count; i++)
        if ((int)i != index && cluster->nodes[i].master && cluster->nodes[i].server.pid)
            return (int)i;
    return -1;
}

/* Moves the engine keys' slot with its keys from its master to another,
 * as redis-cli --cluster reshard does; the master it went to. */
static int move_engine_slot(void)
{
    redis_cluster_t *cluster = &fixture.cluster;
    unsigned slot = engine_slot();
    int from = master_of(slot), to = other_master(from);
    CU_ASSERT_FATAL(from >= 0 && to >= 0);
    CU_ASSERT_TRUE_FATAL(ok_reply(redis_cluster_command(cluster, (unsigned)to, "CLUSTER SETSLOT %u IMPORTING %s",
                                                        slot, cluster->nodes[from].id)));
    CU_ASSERT_TRUE_FATAL(ok_reply(redis_cluster_command(cluster, (unsigned)from, "CLUSTER SETSLOT %u MIGRATING %s",
                                                        slot, cluster->nodes[to].id)));
    /* Every key of the slot (the stream, the intents, the backlog's). */
    redisReply *keys = redis_cluster_command(cluster, (unsigned)from, "CLUSTER GETKEYSINSLOT %u 1000", slot);
    CU_ASSERT_TRUE_FATAL(keys && keys->type == REDIS_REPLY_ARRAY && keys->elements > 0);
    for (size_t k = 0; k < keys->elements; k++)
        CU_ASSERT_TRUE_FATAL(ok_reply(redis_cluster_command(cluster, (unsigned)from, "MIGRATE 127.0.0.1 %d %s 0 5000",
                                                            cluster->nodes[to].server.port, keys->element[k]->str)));
    freeReplyObject(keys);
    for (unsigned i = 0; i < cluster->node_count; i++)
        if (cluster->nodes[i].master && cluster->nodes[i].server.pid)
            CU_ASSERT_TRUE(ok_reply(redis_cluster_command(cluster, i, "CLUSTER SETSLOT %u NODE %s", slot,
                                                          cluster->nodes[to].id)));
    return to;
}

static void test_the_engine_keys_live_on_their_slots_master_and_follow_it_when_it_moves(void)
{
    unsigned slot = engine_slot();
    redisReply *r = redis_cluster_command(&fixture.cluster, 0, "CLUSTER KEYSLOT %s", STORE_ENGINE_DUE_KEY);
    CU_ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER && (unsigned)r->integer == slot);
    if (r)
        freeReplyObject(r);
    int home = master_of(slot);
    CU_ASSERT_FATAL(home >= 0);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "moving", 1), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "moving", 2), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "moving", 2, 1000), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_QUEUED_KEY), 2); /* on the slot's master */
    store_engine_job_t claimed, job;
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "w", 500, 0, &claimed), STORE_OK);
    CU_ASSERT_EQUAL(claimed.version, 1);
    store_stats_t before, after;
    store_stats(store, &before);
    int to = move_engine_slot();
    CU_ASSERT_NOT_EQUAL(to, home);
    /* After the move, each call finds the keys on their new master (MOVED),
     * with the group and its pending job moved with them. */
    CU_ASSERT_EQUAL(store_engine_job_touch(store, "w", &claimed), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "v", 500, 0, &job), STORE_OK);
    CU_ASSERT_EQUAL(job.version, 2);
    store_engine_due_t due;
    unsigned count = 0;
    int64_t now = 0;
    CU_ASSERT_EQUAL(store_engine_now(store, &now), STORE_OK);
    /* Claimed: its intent pushed STORE_ENGINE_RECHECK_MS on. */
    CU_ASSERT_EQUAL(store_engine_due_scan(store, now + STORE_ENGINE_RECHECK_MS + 1000, 1, &due, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, 1);
    store_stats(store, &after);
    CU_ASSERT(after.redirects > before.redirects);
    CU_ASSERT_EQUAL(master_of(slot), to);
    sleep_ms(600);
    store_engine_job_t again;
    CU_ASSERT_EQUAL_FATAL(store_engine_job_claim(store, "v", 500, 0, &again), STORE_OK); /* w went quiet */
    CU_ASSERT_STRING_EQUAL(again.entry_id, claimed.entry_id);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &again), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer("XLEN %s", STORE_ENGINE_JOBS_KEY), 0);
}

/* --- the backlog: owners in turn, urgent turns first, a turn once --- */

/* Adds turn {id, version} for owner, due by deadline (0: none). */
static store_status_t add_for(const char *owner, const char *id, uint64_t version, int64_t deadline, bool *added)
{
    store_engine_turn_t turn = { owner, deadline };
    return store_engine_turn_add(store, id, version, &turn, added);
}

/* Claims and acks the next turn; its id into out. */
static bool next_turn(char out[STORE_ENGINE_ID_SIZE])
{
    store_engine_job_t job;
    if (claim_now("w", &job) != STORE_OK)
        return false;
    memcpy(out, job.id, STORE_ENGINE_ID_SIZE);
    return store_engine_job_ack(store, &job) == STORE_OK;
}

static void test_one_owners_many_turns_do_not_delay_anothers_next_by_more_than_a_round(void)
{
    /* "flood" queues 20 turns, then "calm" and "other" one each. */
    for (int i = 0; i < 20; i++) {
        char id[32];
        snprintf(id, sizeof id, "flood%02d", i);
        CU_ASSERT_EQUAL(add_for("10.0.0.1", id, 1, 0, NULL), STORE_OK);
    }
    CU_ASSERT_EQUAL(add_for("10.0.0.2", "calm", 1, 0, NULL), STORE_OK);
    CU_ASSERT_EQUAL(add_for("2001:db8::/64", "other", 1, 0, NULL), STORE_OK);
    store_engine_backlog_t b;
    CU_ASSERT_EQUAL_FATAL(store_engine_backlog(store, "10.0.0.1", &b), STORE_OK);
    CU_ASSERT_EQUAL(b.queued, 22);
    CU_ASSERT_EQUAL(b.owner_queued, 20);
    CU_ASSERT_EQUAL(b.owners, 3);
    CU_ASSERT_EQUAL(b.in_flight, 0);
    CU_ASSERT(b.oldest_queued_ms > 0 && b.oldest_queued_ms <= b.now_ms);
    /* Within the first three turns served, the one of each owner. */
    int calm_at = -1, other_at = -1, flood_next = 0;
    for (int i = 0; i < 22; i++) {
        char id[STORE_ENGINE_ID_SIZE];
        CU_ASSERT_FATAL(next_turn(id));
        if (!strcmp(id, "calm"))
            calm_at = i;
        else if (!strcmp(id, "other"))
            other_at = i;
        else { /* one owner's turns in the order queued */
            char expected[32];
            snprintf(expected, sizeof expected, "flood%02d", flood_next++);
            CU_ASSERT_STRING_EQUAL(id, expected);
        }
    }
    CU_ASSERT(calm_at >= 0 && calm_at < 3);
    CU_ASSERT(other_at >= 0 && other_at < 3);
    CU_ASSERT_EQUAL(flood_next, 20);
    CU_ASSERT_EQUAL_FATAL(store_engine_backlog(store, "10.0.0.1", &b), STORE_OK);
    CU_ASSERT_EQUAL(b.queued, 0);
    CU_ASSERT_EQUAL(b.owners, 0);
    CU_ASSERT_EQUAL(b.owner_queued, 0);
    CU_ASSERT_EQUAL(b.oldest_queued_ms, 0);
}

static void test_a_turn_whose_game_would_be_lost_soon_is_served_first(void)
{
    int64_t now;
    CU_ASSERT_EQUAL_FATAL(store_engine_now(store, &now), STORE_OK);
    CU_ASSERT_EQUAL(add_for("a", "first", 1, 0, NULL), STORE_OK);
    CU_ASSERT_EQUAL(add_for("a", "late", 1, now + 3600000, NULL), STORE_OK); /* far: its turn in the round */
    CU_ASSERT_EQUAL(add_for("b", "urgent", 1, now + STORE_ENGINE_URGENT_MS / 2, NULL), STORE_OK);
    char id[STORE_ENGINE_ID_SIZE];
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "urgent");
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "first");
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "late");
    CU_ASSERT_EQUAL(queued_count(), 0);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_URGENT_KEY), 0);
}

/* A client whose turns are all urgent (clocks made short on purpose) jumps
 * the round every other turn at most: another's turn comes second. */
static void test_urgent_turns_jump_the_round_every_other_turn_at_most(void)
{
    int64_t now;
    CU_ASSERT_EQUAL_FATAL(store_engine_now(store, &now), STORE_OK);
    for (int i = 0; i < 4; i++) {
        char id[32];
        snprintf(id, sizeof id, "blitz%d", i);
        CU_ASSERT_EQUAL(add_for("blitz", id, 1, now + 1000 + i, NULL), STORE_OK);
    }
    CU_ASSERT_EQUAL(add_for("calm", "calm", 1, 0, NULL), STORE_OK);
    char id[STORE_ENGINE_ID_SIZE];
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "blitz0"); /* urgent: ahead of the round */
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "calm"); /* the round's turn, blitz served last */
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "blitz1");
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "blitz2");
    CU_ASSERT_FATAL(next_turn(id));
    CU_ASSERT_STRING_EQUAL(id, "blitz3");
    CU_ASSERT_EQUAL(queued_count(), 0);
}

static void test_a_turn_is_queued_once_and_again_only_when_its_job_is_lost(void)
{
    bool added = false;
    CU_ASSERT_EQUAL(add_for("a", "once", 3, 0, &added), STORE_OK);
    CU_ASSERT_TRUE(added);
    /* Waiting: a second add (the sweep's, a retry) is dropped. */
    CU_ASSERT_EQUAL(add_for("b", "once", 3, 0, &added), STORE_OK);
    CU_ASSERT_FALSE(added);
    CU_ASSERT_EQUAL(queued_count(), 1);
    /* Being played: dropped too. */
    store_engine_job_t job;
    CU_ASSERT_EQUAL_FATAL(claim_now("w", &job), STORE_OK);
    CU_ASSERT_EQUAL(add_for("a", "once", 3, 0, &added), STORE_OK);
    CU_ASSERT_FALSE(added);
    CU_ASSERT_EQUAL(queued_count(), 0);
    store_engine_job_t none;
    CU_ASSERT_EQUAL(claim_now("v", &none), STORE_ENOT_FOUND);
    /* Its entry lost (acked by hand, as a trimmed or evicted stream would):
     * the add queues it again, and it is played once more. */
    CU_ASSERT_EQUAL(raw_integer("XACK %s %s %s", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP, job.entry_id), 1);
    CU_ASSERT_EQUAL(add_for("a", "once", 3, 0, &added), STORE_OK);
    CU_ASSERT_TRUE(added);
    store_engine_job_t again;
    CU_ASSERT_EQUAL_FATAL(claim_now("v", &again), STORE_OK);
    CU_ASSERT_STRING_EQUAL(again.id, "once");
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &again), STORE_OK);
    /* Done: another version of the game, or the same one again, is new. */
    CU_ASSERT_EQUAL(raw_integer("HLEN %s", STORE_ENGINE_INFLIGHT_KEY), 0);
    CU_ASSERT_EQUAL(add_for("a", "once", 3, 0, &added), STORE_OK);
    CU_ASSERT_TRUE(added);
}

static void test_an_intent_past_a_bound_is_not_recorded_and_names_the_bound(void)
{
    store_engine_bounds_t bounds = { .per_owner = 2, .total = 3 };
    store_engine_bound_t reached;
    for (int i = 0; i < 2; i++) {
        char id[32];
        snprintf(id, sizeof id, "mine%d", i);
        CU_ASSERT_EQUAL(store_engine_turn_intent(store, id, 1, 1000, "me", &bounds, &reached), STORE_OK);
        CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_NONE);
        CU_ASSERT_EQUAL(add_for("me", id, 1, 0, NULL), STORE_OK);
    }
    /* Mine are 2: my third is refused, unrecorded; another's passes. */
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "mine2", 1, 1000, "me", &bounds, &reached), STORE_OK);
    CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_OWNER);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_DUE_KEY), 2);
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "yours", 1, 1000, "you", &bounds, &reached), STORE_OK);
    CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_NONE);
    CU_ASSERT_EQUAL(add_for("you", "yours", 1, 0, NULL), STORE_OK);
    /* Everyone's are 3: a fourth is refused, whoever asks; no owner: only that bound. */
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "theirs", 1, 1000, "them", &bounds, &reached), STORE_OK);
    CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_TOTAL);
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "nobody", 1, 1000, NULL, &bounds, &reached), STORE_OK);
    CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_TOTAL);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_DUE_KEY), 3);
    /* No bounds: recorded. */
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "free", 1, 1000, "me", NULL, &reached), STORE_OK);
    CU_ASSERT_EQUAL(reached, STORE_ENGINE_BOUND_NONE);
    CU_ASSERT_EQUAL(raw_integer("ZCARD %s", STORE_ENGINE_DUE_KEY), 4);
    CU_ASSERT_EQUAL(store_engine_turn_intent(store, "x", 1, 1000, "a b", &bounds, &reached), STORE_ENOT_FOUND);
}

static void test_a_queued_turn_pushes_its_intent_back_so_the_sweep_leaves_it(void)
{
    int64_t now;
    CU_ASSERT_EQUAL_FATAL(store_engine_now(store, &now), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_due_set(store, "waits", 2, now + 1000), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "waits", 2), STORE_OK);
    store_engine_due_t due[4];
    unsigned count = 9;
    CU_ASSERT_EQUAL(store_engine_due_scan(store, now + 2000, 4, due, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, 0); /* not due while it waits, for STORE_ENGINE_RECHECK_MS */
    CU_ASSERT_EQUAL(store_engine_due_scan(store, now + STORE_ENGINE_RECHECK_MS + 1000, 4, due, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, 1);
}

static void test_consumers_of_workers_gone_are_removed_and_a_clean_stop_removes_its_own(void)
{
    store_engine_job_t job;
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_ENOT_FOUND); /* the group */
    /* Two workers gone, whose consumers stay (a read that got nothing makes none). */
    CU_ASSERT_EQUAL(raw_integer("XGROUP CREATECONSUMER %s %s idle-1", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP), 1);
    CU_ASSERT_EQUAL(raw_integer("XGROUP CREATECONSUMER %s %s idle-2", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP), 1);
    CU_ASSERT_EQUAL(store_engine_job_add(store, "owned", 1), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(claim_now("owner", &job), STORE_OK);
    sleep_ms(300);
    /* Idle past 200 ms, owning nothing: idle-1 and idle-2, not owner. */
    unsigned removed = 0;
    CU_ASSERT_EQUAL(store_engine_consumers_prune(store, 200, 100, &removed), STORE_OK);
    CU_ASSERT_EQUAL(removed, 2);
    redisReply *r = raw("XINFO CONSUMERS %s %s", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP);
    CU_ASSERT_TRUE_FATAL(r && r->type == REDIS_REPLY_ARRAY);
    CU_ASSERT_EQUAL(r->elements, 1);
    freeReplyObject(r);
    /* A clean stop keeps a consumer that owns a turn, and removes it once done. */
    CU_ASSERT_EQUAL(store_engine_consumer_remove(store, "owner"), STORE_OK);
    CU_ASSERT_EQUAL(pending_count(), 1);
    CU_ASSERT_EQUAL(store_engine_job_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_consumer_remove(store, "owner"), STORE_OK);
    r = raw("XINFO CONSUMERS %s %s", STORE_ENGINE_JOBS_KEY, STORE_ENGINE_GROUP);
    CU_ASSERT_TRUE_FATAL(r && r->type == REDIS_REPLY_ARRAY);
    CU_ASSERT_EQUAL(r->elements, 0);
    freeReplyObject(r);
    /* No stream at all: nothing to remove, no error. */
    CU_ASSERT_EQUAL(raw_integer("DEL %s", STORE_ENGINE_JOBS_KEY), 1);
    CU_ASSERT_EQUAL(store_engine_consumer_remove(store, "owner"), STORE_OK);
    CU_ASSERT_EQUAL(store_engine_consumers_prune(store, 200, 100, &removed), STORE_OK);
    CU_ASSERT_EQUAL(removed, 0);
}

static void test_the_bell_wakes_a_wait_on_its_own_connection_and_a_late_reply_is_not_the_stores(void)
{
    enum { BLOCK_MS = 400 };
    store_engine_bell_t *bell = store_engine_bell_new(store);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bell);
    store_stats_t before, after;
    store_stats(store, &before);
    long start = tests_monotonic_ms();
    CU_ASSERT_EQUAL(store_engine_bell_wait(bell, BLOCK_MS), STORE_ENOT_FOUND);
    long waited = tests_monotonic_ms() - start;
    CU_ASSERT(waited >= BLOCK_MS - 20 && waited < BLOCK_MS + SLACK_MS);
    /* A turn queued rings it: the wait ends at once. */
    CU_ASSERT_EQUAL(store_engine_job_add(store, "rung", 1), STORE_OK);
    start = tests_monotonic_ms();
    CU_ASSERT_EQUAL(store_engine_bell_wait(bell, 5000), STORE_OK);
    CU_ASSERT(tests_monotonic_ms() - start < SLACK_MS);
    /* Redis frozen: the wait fails after its block and a round trip, and the
     * store's own calls are not held down for it. */
    redis_server_t *node = engine_node();
    CU_ASSERT_EQUAL_FATAL(kill(node->pid, SIGSTOP), 0);
    start = tests_monotonic_ms();
    store_status_t status = store_engine_bell_wait(bell, BLOCK_MS);
    waited = tests_monotonic_ms() - start;
    kill(node->pid, SIGCONT);
    CU_ASSERT_EQUAL(status, STORE_EUNAVAILABLE);
    CU_ASSERT(waited >= BLOCK_MS && waited < BLOCK_MS + TIMEOUT_MS + SLACK_MS + 300);
    store_stats(store, &after);
    CU_ASSERT_EQUAL(after.errors, before.errors);
    store_engine_job_t job;
    CU_ASSERT_EQUAL(claim_now("w", &job), STORE_OK); /* at once, no breaker to wait out */
    CU_ASSERT_EQUAL(store_engine_bell_wait(bell, 10), STORE_ENOT_FOUND); /* connected again */
    store_engine_bell_free(bell);
    store_engine_bell_free(NULL);
}

/* The tests both suites run. */
static const struct {
    const char *name;
    void (*fn)(void);
} shared_tests[] = {
#define SHARED(fn) { #fn, fn }
    SHARED(test_a_job_added_is_claimed_once_and_acked_away),
    SHARED(test_what_is_no_game_id_or_version_is_refused_unsent),
    SHARED(test_two_workers_never_get_the_same_fresh_job),
    SHARED(test_a_job_never_acked_is_claimed_by_another_after_its_lease_not_before),
    SHARED(test_touch_holds_a_job_past_its_lease_until_it_stops),
    SHARED(test_a_blocking_claim_waits_its_time_when_empty_and_wakes_at_once_for_a_new_job),
    SHARED(test_the_group_is_made_again_when_the_stream_or_the_group_is_gone),
    SHARED(test_an_entry_this_code_did_not_write_is_refused_and_removed),
    SHARED(test_intents_are_set_scanned_by_due_time_and_cleared_per_version),
    SHARED(test_a_claim_ends_at_its_threads_deadline_with_no_job),
    SHARED(test_a_frozen_redis_fails_every_call_by_its_timeout_or_deadline),
    SHARED(test_one_owners_many_turns_do_not_delay_anothers_next_by_more_than_a_round),
    SHARED(test_a_turn_whose_game_would_be_lost_soon_is_served_first),
    SHARED(test_urgent_turns_jump_the_round_every_other_turn_at_most),
    SHARED(test_a_turn_is_queued_once_and_again_only_when_its_job_is_lost),
    SHARED(test_an_intent_past_a_bound_is_not_recorded_and_names_the_bound),
    SHARED(test_a_queued_turn_pushes_its_intent_back_so_the_sweep_leaves_it),
    SHARED(test_consumers_of_workers_gone_are_removed_and_a_clean_stop_removes_its_own),
    SHARED(test_the_bell_wakes_a_wait_on_its_own_connection_and_a_late_reply_is_not_the_stores),
#undef SHARED
};

static CU_pSuite add_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown(name, init, cleanup, before_each, NULL);
    for (size_t i = 0; suite && i < sizeof shared_tests / sizeof shared_tests[0]; i++)
        if (!CU_add_test(suite, shared_tests[i].name, shared_tests[i].fn))
            return NULL;
    return suite;
}

int test_engine_jobs_register(void)
{
    CU_pSuite single = add_suite("engine_jobs", single_init, suite_cleanup);
    if (!single || !CU_ADD_TEST(single, test_the_stream_holds_only_the_turns_claimed)
        || !CU_ADD_TEST(single, test_jobs_and_intents_on_a_redis_with_a_password))
        return -1;
    CU_pSuite clustered = add_suite("engine_jobs_cluster", cluster_init, suite_cleanup);
    if (!clustered || !CU_ADD_TEST(clustered, test_the_engine_keys_live_on_their_slots_master_and_follow_it_when_it_moves))
        return -1;
    return 0;
}
