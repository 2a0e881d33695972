/* Tests for store/deadlines.c, store/finished_feed.c and
 * store/game_upgrade.c against their headers' protocols, the same tests on
 * a private redis-server (suite deadlines) and a private Redis Cluster of
 * three masters (deadlines_cluster): the index's lowering, claim and
 * settle; the feed's once-only add, reads and trim; the upgrade's walk,
 * keep and passes. The suites fail (they do not skip) when Redis cannot start. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/cluster.h"
#include "../../store/deadlines.h"
#include "../../store/finished_feed.h"
#include "../../store/game_upgrade.h"
#include "../../store/store.h"
#include "../support/redis_fixture.h"
#include "../support/tests.h"

enum {
    TIMEOUT_MS = 1000, /* the store's connect and command timeouts */
    LEASE_MS = 60000,
    HOUR_MS = 3600000,
};

static redis_fixture_t fixture;
static store_t *store; /* fixture.store, while the suite runs */

/* The redis-server holding key now. */
static redis_server_t *node_of(const char *key)
{
    if (!fixture.on_cluster)
        return &fixture.server;
    static int owners[CLUSTER_SLOT_COUNT];
    CU_ASSERT_FATAL(redis_cluster_refresh(&fixture.cluster) && redis_cluster_slot_owners(&fixture.cluster, 0, owners));
    int index = redis_cluster_find_port(&fixture.cluster, owners[cluster_key_slot(key, strlen(key))]);
    CU_ASSERT_FATAL(index >= 0);
    return &fixture.cluster.nodes[index].server;
}

/* One command (hiredis format) on the node holding key; the reply or NULL. */
static redisReply *raw(const char *key, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(node_of(key), NULL, format, args);
    va_end(args);
    return r;
}

/* An integer reply of raw(), or -100. */
static long long raw_integer(const char *key, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(node_of(key), NULL, format, args);
    va_end(args);
    long long value = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -100;
    if (r)
        freeReplyObject(r);
    return value;
}

static void raw_ok(const char *key, const char *format, const char *a, const char *b)
{
    redisReply *r = raw(key, format, a, b);
    CU_ASSERT(r && r->type != REDIS_REPLY_ERROR);
    if (r)
        freeReplyObject(r);
}

/* Each test starts on empty masters. */
static void before_each(void)
{
    unsigned count = fixture.on_cluster ? fixture.cluster.node_count : 1;
    for (unsigned i = 0; i < count; i++) {
        redis_server_t *node = fixture.on_cluster ? &fixture.cluster.nodes[i].server : &fixture.server;
        redisReply *r = redis_server_command(node, NULL, "FLUSHALL");
        if (r)
            freeReplyObject(r); /* a replica refuses: its master's flush reaches it */
    }
}

static int single_init(void)
{
    store = redis_fixture_start_server(&fixture, "deadlines", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int cluster_init(void)
{
    store = redis_fixture_start_cluster(&fixture, "deadlines_cluster", TIMEOUT_MS);
    return store ? 0 : 1;
}

static int suite_cleanup(void)
{
    redis_fixture_stop(&fixture);
    store = NULL;
    return 0;
}

/* A game id: 16 characters of base64url, numbered. */
static void game_id(unsigned n, char id[STORE_ENGINE_ID_SIZE])
{
    snprintf(id, STORE_ENGINE_ID_SIZE, "Game%012u", n);
}

static int64_t score_of(const char *id)
{
    int64_t score = -1;
    return store_deadline_get(store, id, &score) == STORE_OK ? score : -1;
}

/* Redis's clock, read through a claim of nothing due. */
static int64_t redis_now(void)
{
    store_deadline_t none[1];
    unsigned count = 0;
    int64_t now = 0;
    CU_ASSERT_FATAL(store_deadline_claim(store, LEASE_MS, 1, none, &count, &now) == STORE_OK);
    return now;
}

/* --- the index --- */

static void test_a_lowering_only_lowers_and_always_changes_the_score(void)
{
    char id[STORE_ENGINE_ID_SIZE];
    game_id(1, id);
    int64_t score = 0;
    CU_ASSERT_EQUAL(store_deadline_lower(store, id, 5000, &score), STORE_OK);
    CU_ASSERT_EQUAL(score, 5000);
    CU_ASSERT_EQUAL(store_deadline_lower(store, id, 9000, &score), STORE_OK);
    CU_ASSERT_EQUAL(score, 4999); /* later than the entry: it moves down by 1 ms, never up */
    CU_ASSERT_EQUAL(store_deadline_lower(store, id, 3000, &score), STORE_OK);
    CU_ASSERT_EQUAL(score, 3000);
    CU_ASSERT_EQUAL(score_of(id), 3000);
    CU_ASSERT_EQUAL(store_deadline_lower(store, "not an id!", 1, &score), STORE_ENOT_FOUND);
}

static void test_a_claim_takes_the_due_entries_once_and_moves_them_by_its_lease(void)
{
    char a[STORE_ENGINE_ID_SIZE], b[STORE_ENGINE_ID_SIZE], later[STORE_ENGINE_ID_SIZE];
    game_id(1, a);
    game_id(2, b);
    game_id(3, later);
    int64_t now = redis_now();
    CU_ASSERT_EQUAL(store_deadline_lower(store, b, now - 10, NULL), STORE_OK);
    CU_ASSERT_EQUAL(store_deadline_lower(store, a, now - 20, NULL), STORE_OK);
    CU_ASSERT_EQUAL(store_deadline_lower(store, later, now + HOUR_MS, NULL), STORE_OK);
    raw_ok(STORE_DEADLINES_KEY, "ZADD %s 1 %s", STORE_DEADLINES_KEY, "not:an id"); /* not ours */
    store_deadline_t due[8];
    unsigned count = 0;
    int64_t claimed_at = 0;
    CU_ASSERT_EQUAL_FATAL(store_deadline_claim(store, LEASE_MS, 8, due, &count, &claimed_at), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(count, 2);
    CU_ASSERT_STRING_EQUAL(due[0].id, a); /* the most overdue first */
    CU_ASSERT_STRING_EQUAL(due[1].id, b);
    CU_ASSERT_EQUAL(due[0].claim_ms, claimed_at + LEASE_MS);
    CU_ASSERT_EQUAL(score_of(a), due[0].claim_ms);
    CU_ASSERT_EQUAL(raw_integer(STORE_DEADLINES_KEY, "ZCARD %s", STORE_DEADLINES_KEY), 3); /* the stranger dropped */
    CU_ASSERT_EQUAL(store_deadline_claim(store, LEASE_MS, 8, due, &count, NULL), STORE_OK);
    CU_ASSERT_EQUAL(count, 0); /* claimed: no other replica takes them */
}

static void test_a_settle_lands_only_while_its_claim_stands(void)
{
    char a[STORE_ENGINE_ID_SIZE], b[STORE_ENGINE_ID_SIZE];
    game_id(1, a);
    game_id(2, b);
    int64_t now = redis_now();
    CU_ASSERT_EQUAL(store_deadline_lower(store, a, now - 1, NULL), STORE_OK);
    CU_ASSERT_EQUAL(store_deadline_lower(store, b, now - 1, NULL), STORE_OK);
    store_deadline_t due[2];
    unsigned count = 0;
    CU_ASSERT_EQUAL_FATAL(store_deadline_claim(store, LEASE_MS, 2, due, &count, NULL), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(count, 2);
    int64_t claim = due[0].claim_ms;
    /* A write lowers a's entry meanwhile, even to a time after the claim's: the sweep's settle must not land. */
    int64_t lowered = 0;
    CU_ASSERT_EQUAL(store_deadline_lower(store, a, claim + HOUR_MS, &lowered), STORE_OK);
    CU_ASSERT_EQUAL(lowered, claim - 1);
    bool settled = true;
    CU_ASSERT_EQUAL(store_deadline_settle(store, a, claim, now + 2 * HOUR_MS, &settled), STORE_OK);
    CU_ASSERT_FALSE(settled);
    CU_ASSERT_EQUAL(score_of(a), claim - 1);
    CU_ASSERT_EQUAL(store_deadline_settle(store, b, claim, now + HOUR_MS, &settled), STORE_OK);
    CU_ASSERT_TRUE(settled);
    CU_ASSERT_EQUAL(score_of(b), now + HOUR_MS);
    CU_ASSERT_EQUAL(store_deadline_settle(store, b, claim, 0, &settled), STORE_OK);
    CU_ASSERT_FALSE(settled); /* the claim is gone */
    CU_ASSERT_EQUAL(store_deadline_settle(store, b, now + HOUR_MS, 0, &settled), STORE_OK);
    CU_ASSERT_TRUE(settled);
    CU_ASSERT_EQUAL(score_of(b), -1);
}

/* --- the feed --- */

static store_feed_entry_t finished(unsigned n)
{
    store_feed_entry_t e;
    memset(&e, 0, sizeof e);
    game_id(n, e.id);
    snprintf(e.status, sizeof e.status, "%s", n % 2 ? "resigned" : "aborted");
    snprintf(e.result, sizeof e.result, "%s", n % 2 ? "1-0" : "*");
    snprintf(e.termination, sizeof e.termination, "%s", n % 2 ? "resignation" : "");
    e.ended_at_ms = 1767225600000 + n;
    return e;
}

static void test_a_game_finished_goes_on_the_feed_once_and_clears_its_deadline_entry(void)
{
    store_feed_entry_t game = finished(7);
    int64_t score = 0;
    CU_ASSERT_EQUAL(store_deadline_lower(store, game.id, redis_now() + 10000, &score), STORE_OK);
    bool added = false;
    CU_ASSERT_EQUAL(store_game_finished(store, &game, HOUR_MS, score + 1, &added), STORE_OK);
    CU_ASSERT_TRUE(added);
    CU_ASSERT_EQUAL(score_of(game.id), score); /* another score: the entry stays */
    CU_ASSERT_EQUAL(store_game_finished(store, &game, HOUR_MS, score, &added), STORE_OK);
    CU_ASSERT_FALSE(added); /* a retry: not twice */
    CU_ASSERT_EQUAL(score_of(game.id), -1);
    store_feed_entry_t read[4];
    unsigned count = 0;
    CU_ASSERT_EQUAL_FATAL(store_feed_read(store, NULL, 4, read, &count), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(count, 1);
    CU_ASSERT_STRING_EQUAL(read[0].id, game.id);
    CU_ASSERT_STRING_EQUAL(read[0].status, "resigned");
    CU_ASSERT_STRING_EQUAL(read[0].result, "1-0");
    CU_ASSERT_STRING_EQUAL(read[0].termination, "resignation");
    CU_ASSERT_EQUAL(read[0].ended_at_ms, game.ended_at_ms);
    CU_ASSERT_TRUE(store_feed_cursor_ok(read[0].cursor));
    uint64_t length = 0;
    CU_ASSERT_EQUAL(store_feed_length(store, &length), STORE_OK);
    CU_ASSERT_EQUAL(length, 1);
    store_feed_entry_t bad = finished(8);
    snprintf(bad.status, sizeof bad.status, "a b");
    CU_ASSERT_EQUAL(store_game_finished(store, &bad, HOUR_MS, 0, &added), STORE_ENOT_FOUND);
}

static void test_the_feed_reads_in_order_after_a_cursor_the_same_for_every_reader(void)
{
    enum { GAMES = 7 };
    for (unsigned n = 1; n <= GAMES; n++) {
        store_feed_entry_t game = finished(n);
        CU_ASSERT_EQUAL(store_game_finished(store, &game, HOUR_MS, 0, NULL), STORE_OK);
    }
    store_feed_entry_t all[GAMES + 1], again[GAMES + 1], page[GAMES];
    unsigned count = 0, count_again = 0;
    CU_ASSERT_EQUAL_FATAL(store_feed_read(store, NULL, GAMES + 1, all, &count), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(count, GAMES);
    CU_ASSERT_EQUAL_FATAL(store_feed_read(store, "0-0", GAMES + 1, again, &count_again), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(count_again, GAMES);
    for (unsigned i = 0; i < GAMES; i++) {
        char id[STORE_ENGINE_ID_SIZE];
        game_id(i + 1, id);
        CU_ASSERT_STRING_EQUAL(all[i].id, id);
        CU_ASSERT_STRING_EQUAL(again[i].cursor, all[i].cursor);
    }
    /* Pages of 3 from a cursor: every game once, in order. */
    unsigned seen = 0;
    char after[STORE_FEED_CURSOR_SIZE] = "";
    do {
        CU_ASSERT_EQUAL_FATAL(store_feed_read(store, after[0] ? after : NULL, 3, page, &count), STORE_OK);
        for (unsigned i = 0; i < count; i++, seen++)
            CU_ASSERT_STRING_EQUAL(page[i].cursor, all[seen].cursor);
        if (count)
            snprintf(after, sizeof after, "%s", page[count - 1].cursor);
    } while (count);
    CU_ASSERT_EQUAL(seen, GAMES);
    CU_ASSERT_EQUAL(store_feed_read(store, "1-x", 3, page, &count), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_feed_read(store, "99999999999999999999-0", 3, page, &count), STORE_ENOT_FOUND);
    CU_ASSERT_FALSE(store_feed_cursor_ok("12"));
    CU_ASSERT_FALSE(store_feed_cursor_ok("-1"));
    CU_ASSERT_FALSE(store_feed_cursor_ok("1-"));
    CU_ASSERT_TRUE(store_feed_cursor_ok("18446744073709551615-18446744073709551615"));
}

static void test_the_feed_keeps_its_retention_and_drops_what_it_did_not_write(void)
{
    enum { OLD = 250 };
    for (unsigned n = 1; n <= OLD; n++) {
        store_feed_entry_t game = finished(n);
        CU_ASSERT_EQUAL(store_game_finished(store, &game, 200, 0, NULL), STORE_OK);
    }
    redis_server_sleep_ms(300);
    store_feed_entry_t last = finished(OLD + 1), first = finished(1);
    bool added = false;
    CU_ASSERT_EQUAL(store_game_finished(store, &last, 200, 0, &added), STORE_OK);
    uint64_t length = 0;
    CU_ASSERT_EQUAL(store_feed_length(store, &length), STORE_OK);
    CU_ASSERT(length >= 1 && length < OLD); /* trimmed by whole nodes (MINID ~) */
    /* Past the retention a game is not known any more: it could go on again. */
    CU_ASSERT_EQUAL(raw_integer(STORE_FEED_IDS_KEY, "ZCARD %s", STORE_FEED_IDS_KEY), 1);
    CU_ASSERT_EQUAL(store_game_finished(store, &first, 200, 0, &added), STORE_OK);
    CU_ASSERT_TRUE(added);
    /* A cursor older than every entry kept reads from the oldest kept. */
    store_feed_entry_t page[2];
    unsigned count = 0;
    CU_ASSERT_EQUAL(store_feed_read(store, "1-1", 2, page, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, 2);
    raw_ok(STORE_FEED_KEY, "XADD %s * stranger %s", STORE_FEED_KEY, "yes");
    CU_ASSERT_EQUAL(store_feed_length(store, &length), STORE_OK);
    uint64_t before = length;
    static store_feed_entry_t everything[STORE_FEED_READ_MAX];
    CU_ASSERT_EQUAL(store_feed_read(store, NULL, STORE_FEED_READ_MAX, everything, &count), STORE_OK);
    CU_ASSERT_EQUAL(count, before - 1);
    CU_ASSERT_STRING_EQUAL(everything[count - 1].id, first.id);
    CU_ASSERT_EQUAL(store_feed_length(store, &length), STORE_OK);
    CU_ASSERT_EQUAL(length, before - 1); /* deleted, so no reader stops at it for ever */
}

/* --- the upgrade --- */

/* A game's three keys with a TTL, at version, as a chessd before the index wrote them. */
static void old_game(const char *id, const char *version)
{
    char hash[64], moves[64], history[64];
    snprintf(hash, sizeof hash, "chessd:game:{%s}", id);
    snprintf(moves, sizeof moves, "chessd:moves:{%s}", id);
    snprintf(history, sizeof history, "chessd:history:{%s}", id);
    raw_ok(hash, "HSET %s version %s", hash, version);
    raw_ok(moves, "SET %s %s", moves, "");
    raw_ok(history, "SET %s %s", history, "");
    raw_ok(hash, "EXPIRE %s %s", hash, "600");
    raw_ok(moves, "EXPIRE %s %s", moves, "600");
    raw_ok(history, "EXPIRE %s %s", history, "600");
}

typedef struct {
    unsigned met[64];
    unsigned strangers;
} walk_t;

static void meet(void *ctx, const char *id)
{
    walk_t *w = ctx;
    unsigned n = 0;
    if (sscanf(id, "Game%u", &n) == 1 && n < 64)
        w->met[n]++;
    else
        w->strangers++;
}

static void test_a_walk_meets_every_game_on_every_node_old_records_too(void)
{
    enum { GAMES = 40 };
    char id[STORE_ENGINE_ID_SIZE], key[64];
    for (unsigned n = 1; n <= GAMES; n++) {
        game_id(n, id);
        old_game(id, "1");
    }
    game_id(GAMES + 1, id);
    snprintf(key, sizeof key, "chessd:game:%s", id); /* the first format */
    raw_ok(key, "HSET %s version %s", key, "2");
    raw_ok("other", "SET %s %s", "other", "x");
    raw_ok("chessd:game:{x y}", "SET %s %s", "chessd:game:{x y}", "x");
    walk_t w = { { 0 }, 0 };
    store_game_scan_t scan;
    memset(&scan, 0, sizeof scan);
    for (int pages = 0; !scan.done && pages < 1000; pages++)
        CU_ASSERT_EQUAL_FATAL(store_game_scan(store, &scan, 7, meet, &w), STORE_OK);
    CU_ASSERT_TRUE(scan.done);
    for (unsigned n = 1; n <= GAMES + 1; n++)
        CU_ASSERT(w.met[n] >= 1);
    CU_ASSERT_EQUAL(w.strangers, 0);
}

static void test_a_keep_takes_the_expiry_away_only_at_the_version_read(void)
{
    char id[STORE_ENGINE_ID_SIZE], hash[64], moves[64], legacy[64];
    game_id(1, id);
    old_game(id, "3");
    snprintf(hash, sizeof hash, "chessd:game:{%s}", id);
    snprintf(moves, sizeof moves, "chessd:moves:{%s}", id);
    CU_ASSERT_EQUAL(store_game_keep(store, id, 2), STORE_ECONFLICT);
    CU_ASSERT(raw_integer(hash, "TTL %s", hash) > 0);
    CU_ASSERT_EQUAL(store_game_keep(store, id, 3), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer(hash, "TTL %s", hash), -1);
    CU_ASSERT_EQUAL(raw_integer(moves, "TTL %s", moves), -1);
    game_id(2, id);
    CU_ASSERT_EQUAL(store_game_keep(store, id, 1), STORE_ENOT_FOUND);
    snprintf(legacy, sizeof legacy, "chessd:game:%s", id);
    raw_ok(legacy, "HSET %s version %s", legacy, "5");
    raw_ok(legacy, "EXPIRE %s %s", legacy, "600");
    CU_ASSERT_EQUAL(store_game_keep(store, id, 5), STORE_OK);
    CU_ASSERT_EQUAL(raw_integer(legacy, "TTL %s", legacy), -1);
}

static void test_the_upgrade_passes_run_one_at_a_time_each_once_the_gap_apart(void)
{
    store_upgrade_t step;
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-60", "replica-a", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_RUN);
    CU_ASSERT_EQUAL(step.pass, 1);
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-60", "replica-b", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_WAIT); /* a's lease */
    CU_ASSERT(step.wait_ms > 0 && step.wait_ms <= LEASE_MS);
    CU_ASSERT_EQUAL(store_upgrade_renew(store, "1:idle-60", "replica-a", LEASE_MS), STORE_OK);
    CU_ASSERT_EQUAL(store_upgrade_renew(store, "1:idle-60", "replica-b", LEASE_MS), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(store_upgrade_done(store, "1:idle-60", "replica-b", 1, 400), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(store_upgrade_done(store, "1:idle-60", "replica-a", 1, 400), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-60", "replica-b", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_WAIT); /* the gap */
    CU_ASSERT(step.wait_ms > 0 && step.wait_ms <= 400);
    redis_server_sleep_ms(500);
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-60", "replica-b", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_RUN);
    CU_ASSERT_EQUAL(step.pass, 2);
    CU_ASSERT_EQUAL(store_upgrade_done(store, "1:idle-60", "replica-b", 2, 400), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-60", "replica-a", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_DONE);
    /* Another generation (another idle end, say) runs anew. */
    CU_ASSERT_EQUAL_FATAL(store_upgrade_claim(store, "1:idle-30", "replica-a", LEASE_MS, 2, &step), STORE_OK);
    CU_ASSERT_EQUAL(step.step, STORE_UPGRADE_RUN);
    CU_ASSERT_EQUAL(step.pass, 1);
    CU_ASSERT_EQUAL(store_upgrade_claim(store, "no spaces", "replica-a", LEASE_MS, 2, &step), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(store_deadline_drop_legacy(store), STORE_OK);
}

/* The tests both suites run. */
static const struct {
    const char *name;
    void (*fn)(void);
} shared_tests[] = {
#define SHARED(fn) { #fn, fn }
    SHARED(test_a_lowering_only_lowers_and_always_changes_the_score),
    SHARED(test_a_claim_takes_the_due_entries_once_and_moves_them_by_its_lease),
    SHARED(test_a_settle_lands_only_while_its_claim_stands),
    SHARED(test_a_game_finished_goes_on_the_feed_once_and_clears_its_deadline_entry),
    SHARED(test_the_feed_reads_in_order_after_a_cursor_the_same_for_every_reader),
    SHARED(test_the_feed_keeps_its_retention_and_drops_what_it_did_not_write),
    SHARED(test_a_walk_meets_every_game_on_every_node_old_records_too),
    SHARED(test_a_keep_takes_the_expiry_away_only_at_the_version_read),
    SHARED(test_the_upgrade_passes_run_one_at_a_time_each_once_the_gap_apart),
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

int test_deadlines_register(void)
{
    if (!add_suite("deadlines", single_init, suite_cleanup)
        || !add_suite("deadlines_cluster", cluster_init, suite_cleanup))
        return -1;
    return 0;
}
