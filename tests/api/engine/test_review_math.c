/* Tests for api/engine/review_math.c, Lichess's review arithmetic, against
 * numbers computed by hand (a separate Python computation of the published
 * formulas): win%, a move's accuracy, judgements by winning chances and
 * mates, and a short game's acpl and accuracies. */
#include <CUnit/CUnit.h>

#include "../../../api/engine/review_math.h"
#include "../../support/tests.h"

static review_eval_t cp(int value) { return (review_eval_t){ .value = value }; }

static review_eval_t mate(int moves) { return (review_eval_t){ .is_mate = true, .value = moves }; }

static void test_win_percent_follows_lichess_curve_and_clamps_at_1000(void)
{
    CU_ASSERT_DOUBLE_EQUAL(review_winning_chances(100), 0.18205179, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(review_win_percent(100), 59.10258972, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(review_win_percent(-300), 24.88744991, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(review_win_percent(0), 50.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(review_win_percent(5000), 97.54474363, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(review_win_percent(5000), review_win_percent(1000), 1e-12);
}

static void test_a_mate_counts_as_the_ceiling_of_its_winner(void)
{
    review_eval_t white_mates = mate(3), black_mates = mate(-2);
    review_eval_t white_mated = { .is_mate = true, .value = 0, .mated_white = true };
    CU_ASSERT_EQUAL(review_eval_cp(&white_mates), 1000);
    CU_ASSERT_EQUAL(review_eval_cp(&black_mates), -1000);
    CU_ASSERT_EQUAL(review_eval_cp(&white_mated), -1000);
    review_eval_t big = cp(-4000);
    CU_ASSERT_EQUAL(review_eval_cp(&big), -1000);
}

static void test_move_accuracy_is_lichess_curve_with_its_bonus(void)
{
    CU_ASSERT_DOUBLE_EQUAL(review_move_accuracy(review_win_percent(100), review_win_percent(-200)), 30.05618731, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(review_move_accuracy(40, 60), 100.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(review_move_accuracy(50, 50), 100.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(review_move_accuracy(100, 0), 0.0, 1e-12);
}

static void test_judgements_follow_winning_chances_thresholds(void)
{
    /* White from +300 to -25: chances lost 0.548, a blunder. */
    review_eval_t a = cp(300), b = cp(-25);
    CU_ASSERT_EQUAL(review_judge(&a, &b, true), REVIEW_JUDGEMENT_BLUNDER);
    /* White from +150 to -20: 0.306, a blunder just past 0.3. */
    a = cp(150), b = cp(-20);
    CU_ASSERT_EQUAL(review_judge(&a, &b, true), REVIEW_JUDGEMENT_BLUNDER);
    /* Black's move from -20 to +60: from Black's side +20 to -60, 0.147 lost. */
    a = cp(-20), b = cp(60);
    CU_ASSERT_EQUAL(review_judge(&a, &b, false), REVIEW_JUDGEMENT_INACCURACY);
    a = cp(0), b = cp(140); /* 0.252 */
    CU_ASSERT_EQUAL(review_judge(&a, &b, false), REVIEW_JUDGEMENT_MISTAKE);
    /* A gain is never judged. */
    a = cp(0), b = cp(-500);
    CU_ASSERT_EQUAL(review_judge(&a, &b, false), REVIEW_JUDGEMENT_NONE);
    CU_ASSERT_PTR_NULL(review_judgement_name(REVIEW_JUDGEMENT_NONE));
    CU_ASSERT_STRING_EQUAL(review_judgement_name(REVIEW_JUDGEMENT_BLUNDER), "blunder");
}

static void test_a_missed_mate_is_at_least_a_mistake(void)
{
    review_eval_t before = mate(1), after = cp(1000);
    CU_ASSERT_EQUAL(review_judge(&before, &after, true), REVIEW_JUDGEMENT_MISTAKE);
    after = cp(400);
    CU_ASSERT_EQUAL(review_judge(&before, &after, true), REVIEW_JUDGEMENT_BLUNDER);
    /* Black had mate in 2 and let it go. */
    before = mate(-2), after = cp(-800);
    CU_ASSERT_EQUAL(review_judge(&before, &after, false), REVIEW_JUDGEMENT_MISTAKE);
    /* A mate kept, a longer one: no judgement. */
    before = mate(2), after = mate(4);
    CU_ASSERT_EQUAL(review_judge(&before, &after, true), REVIEW_JUDGEMENT_NONE);
    /* A mate walked into from a level game. */
    before = cp(0), after = mate(-3);
    CU_ASSERT_EQUAL(review_judge(&before, &after, true), REVIEW_JUDGEMENT_BLUNDER);
}

static void test_a_short_game_has_hand_computed_acpl_and_accuracy(void)
{
    /* White blunders at ply 3 (+25 to -300); Black loses 10 cp at ply 4. */
    review_eval_t evals[] = { cp(20), cp(30), cp(25), cp(-300), cp(-290) };
    review_side_t sides[2];
    review_sides(evals, 4, true, sides);
    CU_ASSERT_EQUAL(sides[0].moves, 2);
    CU_ASSERT_EQUAL(sides[1].moves, 2);
    CU_ASSERT_DOUBLE_EQUAL(sides[0].acpl, 162.5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(sides[1].acpl, 5.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(sides[0].accuracy, 38.51353461, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(sides[1].accuracy, 98.95756155, 1e-6);
}

static void test_a_side_without_moves_has_zero_figures(void)
{
    review_eval_t evals[] = { cp(0), cp(10) };
    review_side_t sides[2];
    review_sides(evals, 1, false, sides);
    CU_ASSERT_EQUAL(sides[0].moves, 0);
    CU_ASSERT_EQUAL(sides[1].moves, 1);
    CU_ASSERT_DOUBLE_EQUAL(sides[0].accuracy, 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sides[1].acpl, 10, 1e-12);
}

int test_review_math_register(void)
{
    CU_pSuite suite = CU_add_suite("review_math", NULL, NULL);
    if (!suite)
        return CU_get_error();
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"win% follows Lichess's curve and clamps at 1000", test_win_percent_follows_lichess_curve_and_clamps_at_1000},
        {"a mate counts as the ceiling of its winner", test_a_mate_counts_as_the_ceiling_of_its_winner},
        {"move accuracy is Lichess's curve with its bonus", test_move_accuracy_is_lichess_curve_with_its_bonus},
        {"judgements follow the winning-chances thresholds", test_judgements_follow_winning_chances_thresholds},
        {"a missed mate is at least a mistake", test_a_missed_mate_is_at_least_a_mistake},
        {"a short game has hand-computed acpl and accuracy", test_a_short_game_has_hand_computed_acpl_and_accuracy},
        {"a side without moves has zero figures", test_a_side_without_moves_has_zero_figures},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (!CU_add_test(suite, tests[i].name, tests[i].fn))
            return CU_get_error();
    }
    return CUE_SUCCESS;
}
