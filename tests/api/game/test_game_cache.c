/* Tests for api/game/game_cache.c: a replica's copies of recent games. A copy
 * comes back whole; an older version never replaces a newer copy of the same
 * game, the same or a newer one does; a game dropped or never kept is a miss;
 * hits and misses are counted. (The slot count is set once per process: 64,
 * as the game service suite sets it.) */
#include <stdio.h>
#include <string.h>

#include "../../../api/game/game_cache.h"
#include "../../support/tests.h"

static game_record_t record(const char *id, uint64_t version, const char *write_id)
{
    game_record_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.version = version;
    snprintf(r.write_id, sizeof r.write_id, "%s", write_id);
    return r;
}

static void test_a_copy_comes_back_whole(void)
{
    game_cache_setup(64);
    game_record_t kept = record("cacheAAAAAAAAAA1", 3, "w3");
    game_cache_put(&kept);
    game_record_t out;
    memset(&out, 0xaa, sizeof out);
    CU_ASSERT_TRUE_FATAL(game_cache_get("cacheAAAAAAAAAA1", &out));
    CU_ASSERT_EQUAL(memcmp(&out, &kept, sizeof out), 0);
}

static void test_an_older_version_never_replaces_a_newer_copy(void)
{
    game_cache_setup(64);
    game_record_t newer = record("cacheBBBBBBBBBB2", 7, "w7"), older = record("cacheBBBBBBBBBB2", 6, "w6");
    game_cache_put(&newer);
    game_cache_put(&older);
    game_record_t out;
    CU_ASSERT_TRUE_FATAL(game_cache_get("cacheBBBBBBBBBB2", &out));
    CU_ASSERT_EQUAL(out.version, 7);
    /* The same version replaces it (read from the store, it may be another write's). */
    game_record_t twin = record("cacheBBBBBBBBBB2", 7, "other");
    game_cache_put(&twin);
    CU_ASSERT_TRUE_FATAL(game_cache_get("cacheBBBBBBBBBB2", &out));
    CU_ASSERT_STRING_EQUAL(out.write_id, "other");
}

static void test_dropped_and_unknown_games_are_misses_and_counted(void)
{
    game_cache_setup(64);
    game_record_t kept = record("cacheCCCCCCCCCC3", 1, "w1");
    game_cache_put(&kept);
    game_cache_stats_t before, after;
    game_cache_stats(&before);
    game_record_t out;
    CU_ASSERT_TRUE(game_cache_get("cacheCCCCCCCCCC3", &out));
    game_cache_drop("cacheCCCCCCCCCC3");
    CU_ASSERT_FALSE(game_cache_get("cacheCCCCCCCCCC3", &out));
    CU_ASSERT_FALSE(game_cache_get("cacheNEVERKEPT04", &out));
    game_cache_drop("cacheNEVERKEPT04"); /* dropping what is not kept is nothing */
    game_cache_stats(&after);
    CU_ASSERT_EQUAL(after.hits - before.hits, 1);
    CU_ASSERT_EQUAL(after.misses - before.misses, 2);
}

int test_game_cache_register(void)
{
    CU_pSuite suite = CU_add_suite("game_cache", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_copy_comes_back_whole);
    CU_ADD_TEST(suite, test_an_older_version_never_replaces_a_newer_copy);
    CU_ADD_TEST(suite, test_dropped_and_unknown_games_are_misses_and_counted);
    return CU_get_error();
}
