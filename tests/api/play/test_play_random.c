/* Tests for api/play/play_random.c: the terminal client's draws from the
 * kernel are in range, reach every value, and refuse an empty range. */
#include <stdint.h>

#include "../../../api/play/play_random.h"
#include "../../support/tests.h"

static void test_draws_below_a_bound_reach_every_value_and_no_other(void)
{
    bool seen[6] = { false };
    for (int i = 0; i < 600; i++) {
        uint32_t n = 99;
        CU_ASSERT_TRUE_FATAL(play_random_below(6, &n));
        CU_ASSERT_TRUE_FATAL(n < 6);
        seen[n] = true;
    }
    for (int i = 0; i < 6; i++)
        CU_ASSERT_TRUE(seen[i]); /* each missed with odds (5/6)^600 */
    uint32_t one = 7;
    CU_ASSERT_TRUE(play_random_below(1, &one));
    CU_ASSERT_EQUAL(one, 0);
}

static void test_an_empty_range_is_refused(void)
{
    uint32_t n = 42;
    CU_ASSERT_FALSE(play_random_below(0, &n));
    CU_ASSERT_EQUAL(n, 42);
}

static void test_sixty_four_bits_differ_from_draw_to_draw(void)
{
    uint64_t a = 0, b = 0;
    CU_ASSERT_TRUE(play_random_u64(&a));
    CU_ASSERT_TRUE(play_random_u64(&b));
    CU_ASSERT_NOT_EQUAL(a, b); /* equal with odds 2^-64 */
}

int test_play_random_register(void)
{
    CU_pSuite suite = CU_add_suite("play_random", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "draws_below_a_bound_reach_every_value_and_no_other",
                test_draws_below_a_bound_reach_every_value_and_no_other);
    CU_add_test(suite, "an_empty_range_is_refused", test_an_empty_range_is_refused);
    CU_add_test(suite, "sixty_four_bits_differ_from_draw_to_draw", test_sixty_four_bits_differ_from_draw_to_draw);
    return 0;
}
