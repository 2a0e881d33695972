/* Tests for store/reviews.c against reviews.h's protocol, on a private
 * redis-server (reviews) and a Redis Cluster of three masters
 * (reviews_cluster), where a review's hash and the queue live in different
 * slots. A review is kept or replaced by version, a job is taken over once
 * its lease passes, results land only on the version named, and an owner's
 * bound holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/reviews.h"
#include "../../store/store.h"
#include "../support/redis_fixture.h"
#include "../support/tests.h"

enum { TIMEOUT_MS = 500, SHORT_LEASE_MS = 300, LONG_LEASE_MS = 60000 };

static redis_fixture_t fixture;
static store_t *store;

/* Each test starts with nothing stored, on every node. */
static void before_each(void)
{
    int nodes = fixture.on_cluster ? REDIS_FIXTURE_MASTERS : 1;
    for (int i = 0; i < nodes; i++) {
        redisReply *r = redis_server_command(fixture.on_cluster ? &fixture.cluster.nodes[i].server : &fixture.server,
                                             NULL, "FLUSHALL");
        CU_ASSERT(r && r->type == REDIS_REPLY_STATUS);
        if (r)
            freeReplyObject(r);
    }
}

static int single_init(void)
{
    store = redis_fixture_start_server(&fixture, "reviews", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int cluster_init(void)
{
    store = redis_fixture_start_cluster(&fixture, "reviews_cluster", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int suite_cleanup(void)
{
    redis_fixture_stop(&fixture);
    store = NULL;
    return 0;
}

static const char LINE[] = "e2e4:e4 e7e5:e5";

static void begin(const char *id, uint64_t version, bool want_kept)
{
    bool kept = !want_kept;
    CU_ASSERT_EQUAL(store_review_begin(store, id, version, "nodes 1000", "client", LINE, strlen(LINE), 2, &kept),
                    STORE_OK);
    CU_ASSERT_EQUAL(kept, want_kept);
}

static void test_a_review_is_kept_at_its_version_and_replaced_at_another(void)
{
    store_review_t rv;
    CU_ASSERT_EQUAL(store_review_read(store, "gameA", &rv), STORE_ENOT_FOUND);
    begin("gameA", 5, false);
    begin("gameA", 5, true);
    bool current = false;
    CU_ASSERT_EQUAL(store_review_position_set(store, "gameA", 5, 0, "cp 20 w:1:r0 e2e4", &current), STORE_OK);
    CU_ASSERT(current);
    CU_ASSERT_EQUAL_FATAL(store_review_read(store, "gameA", &rv), STORE_OK);
    CU_ASSERT_EQUAL(rv.version, 5);
    CU_ASSERT_STRING_EQUAL(rv.status, "queued");
    CU_ASSERT_STRING_EQUAL(rv.limit, "nodes 1000");
    CU_ASSERT_STRING_EQUAL(rv.owner, "client");
    CU_ASSERT_STRING_EQUAL(rv.line, LINE);
    CU_ASSERT_EQUAL(rv.count, 2);
    CU_ASSERT_STRING_EQUAL(rv.positions[0], "cp 20 w:1:r0 e2e4");
    CU_ASSERT_PTR_NULL(rv.positions[1]);
    store_review_free(&rv);
    /* A later version starts over; a write for the old one lands nowhere. */
    begin("gameA", 7, false);
    CU_ASSERT_EQUAL(store_review_position_set(store, "gameA", 5, 1, "cp 0 w:1:r0", &current), STORE_OK);
    CU_ASSERT(!current);
    CU_ASSERT_EQUAL_FATAL(store_review_read(store, "gameA", &rv), STORE_OK);
    CU_ASSERT_EQUAL(rv.version, 7);
    CU_ASSERT_PTR_NULL(rv.positions[0]);
    CU_ASSERT_PTR_NULL(rv.positions[1]);
    store_review_free(&rv);
}

static void test_a_done_review_takes_no_more_writes_and_a_failed_one_starts_again(void)
{
    begin("gameB", 3, false);
    CU_ASSERT_EQUAL(store_review_status_set(store, "gameB", 3, "done", ""), STORE_OK);
    bool current = true;
    CU_ASSERT_EQUAL(store_review_position_set(store, "gameB", 3, 0, "cp 0 w:1:r0", &current), STORE_OK);
    CU_ASSERT(!current);
    begin("gameB", 3, true);
    begin("gameC", 3, false);
    CU_ASSERT_EQUAL(store_review_status_set(store, "gameC", 3, "failed", "no engine"), STORE_OK);
    store_review_t rv;
    CU_ASSERT_EQUAL_FATAL(store_review_read(store, "gameC", &rv), STORE_OK);
    CU_ASSERT_STRING_EQUAL(rv.error, "no engine");
    store_review_free(&rv);
    begin("gameC", 3, false);
}

static void test_a_job_is_claimed_once_and_taken_over_when_its_lease_passes(void)
{
    bool reached = true;
    begin("gameD", 2, false);
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameD", 2, "client", 0, &reached), STORE_OK);
    CU_ASSERT(!reached);
    /* Queued twice: one job. */
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameD", 2, "client", 0, &reached), STORE_OK);
    store_review_job_t job, other;
    CU_ASSERT_EQUAL_FATAL(store_review_claim(store, "one", SHORT_LEASE_MS, &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "gameD");
    CU_ASSERT_EQUAL(job.version, 2);
    CU_ASSERT_EQUAL(job.deliveries, 1);
    CU_ASSERT_EQUAL(store_review_claim(store, "two", SHORT_LEASE_MS, &other), STORE_ENOT_FOUND);
    /* A touch keeps it; once the lease passes untouched, another worker takes it. */
    CU_ASSERT_EQUAL(store_review_touch(store, "one", SHORT_LEASE_MS, &job), STORE_OK);
    redis_server_sleep_ms(SHORT_LEASE_MS + 200);
    CU_ASSERT_EQUAL_FATAL(store_review_claim(store, "two", LONG_LEASE_MS, &other), STORE_OK);
    CU_ASSERT_STRING_EQUAL(other.id, "gameD");
    CU_ASSERT_EQUAL(other.deliveries, 2);
    CU_ASSERT_EQUAL(store_review_touch(store, "one", SHORT_LEASE_MS, &job), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_review_touch(store, "two", LONG_LEASE_MS, &other), STORE_OK);
    CU_ASSERT_EQUAL(store_review_ack(store, &other), STORE_OK);
    CU_ASSERT_EQUAL(store_review_claim(store, "three", SHORT_LEASE_MS, &other), STORE_ENOT_FOUND);
}

static void test_an_owner_past_its_bound_queues_nothing_until_a_job_is_acked(void)
{
    bool reached = true;
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameE", 1, "client", 1, &reached), STORE_OK);
    CU_ASSERT(!reached);
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameF", 1, "client", 1, &reached), STORE_OK);
    CU_ASSERT(reached);
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameF", 1, "someone", 1, &reached), STORE_OK);
    CU_ASSERT(!reached);
    store_review_job_t job;
    CU_ASSERT_EQUAL_FATAL(store_review_claim(store, "one", LONG_LEASE_MS, &job), STORE_OK);
    CU_ASSERT_STRING_EQUAL(job.id, "gameE"); /* the one queued first */
    CU_ASSERT_EQUAL(store_review_ack(store, &job), STORE_OK);
    CU_ASSERT_EQUAL(store_review_enqueue(store, "gameG", 1, "client", 1, &reached), STORE_OK);
    CU_ASSERT(!reached);
}

static void test_a_review_queued_but_refused_is_dropped_and_bad_ids_send_nothing(void)
{
    begin("gameH", 4, false);
    CU_ASSERT_EQUAL(store_review_drop(store, "gameH", 4), STORE_OK);
    store_review_t rv;
    CU_ASSERT_EQUAL(store_review_read(store, "gameH", &rv), STORE_ENOT_FOUND);
    bool kept, reached;
    CU_ASSERT_EQUAL(store_review_begin(store, "bad:id", 1, "nodes 1", "", "", 0, 0, &kept), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_review_enqueue(store, "bad{id}", 1, "", 0, &reached), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_review_read(store, "", &rv), STORE_ENOT_FOUND);
}

static const struct {
    const char *name;
    void (*fn)(void);
} shared_tests[] = {
#define SHARED(fn) { #fn, fn }
    SHARED(test_a_review_is_kept_at_its_version_and_replaced_at_another),
    SHARED(test_a_done_review_takes_no_more_writes_and_a_failed_one_starts_again),
    SHARED(test_a_job_is_claimed_once_and_taken_over_when_its_lease_passes),
    SHARED(test_an_owner_past_its_bound_queues_nothing_until_a_job_is_acked),
    SHARED(test_a_review_queued_but_refused_is_dropped_and_bad_ids_send_nothing),
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

int test_reviews_register(void)
{
    if (!add_suite("reviews", single_init, suite_cleanup) || !add_suite("reviews_cluster", cluster_init, suite_cleanup))
        return -1;
    return 0;
}
