/* Tests for api/game/precondition.c, what a change was made against. A
 * version passes only on that version; a ply passes on any version with as
 * many plies played. A missing or invalid guard is said first. Guards at odds
 * (a ply beside a version, two versions) are refused whatever the game. */
#include <string.h>

#include "../../../api/game/precondition.h"
#include "../../support/tests.h"

enum { DETAIL_SIZE = 256 };

/* Judges p against a game at version with plies played; the detail into detail. */
static precondition_verdict_t judge(const precondition_t *p, uint64_t version, uint64_t plies,
                                    char detail[DETAIL_SIZE])
{
    return precondition_judge(p, version, plies, detail, DETAIL_SIZE);
}

static void test_a_version_passes_only_on_that_version(void)
{
    char detail[DETAIL_SIZE];
    precondition_t p = { .given = true, .expected = 7 };
    CU_ASSERT_EQUAL(judge(&p, 7, 4, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&p, 8, 4, detail), PRECONDITION_STALE);
    CU_ASSERT_STRING_EQUAL(detail, "the game is at version 8, not 7");
    p = (precondition_t){ .if_match = "\"7\"" };
    CU_ASSERT_EQUAL(judge(&p, 7, 4, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&p, 8, 4, detail), PRECONDITION_IF_MATCH);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "does not match"));
}

/* The ply is what a move depends on: an offer made or declined meanwhile
 * moved the version, not the position. */
static void test_a_ply_passes_on_any_version_with_that_many_plies(void)
{
    char detail[DETAIL_SIZE];
    precondition_t p = { .ply_given = true, .ply = 4 };
    CU_ASSERT_EQUAL(judge(&p, 5, 4, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&p, 9, 4, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&p, 9, 5, detail), PRECONDITION_STALE);
    CU_ASSERT_STRING_EQUAL(detail, "the game has 5 plies played, not 4 (it is at version 9)");
    p.ply = 0;
    CU_ASSERT_EQUAL(judge(&p, 1, 0, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&p, 2, 1, detail), PRECONDITION_STALE);
    CU_ASSERT_STRING_EQUAL(detail, "the game has 1 ply played, not 0 (it is at version 2)");
}

static void test_no_guard_is_required_and_an_invalid_one_is_said_first(void)
{
    char detail[DETAIL_SIZE];
    precondition_t none = { 0 };
    CU_ASSERT_EQUAL(judge(&none, 1, 0, detail), PRECONDITION_REQUIRED);
    precondition_t invalid = { .ply_given = true, .given = true, .invalid = "'expected_ply' must be a whole number" };
    CU_ASSERT_EQUAL(judge(&invalid, 1, 0, detail), PRECONDITION_INVALID);
    CU_ASSERT_STRING_EQUAL(detail, "'expected_ply' must be a whole number");
}

/* Guards no game passes at once are the request's fault, whatever the
 * game is at: 400, never a 409 or 412 that a retry could not cure. */
static void test_guards_at_odds_conflict_whatever_the_game(void)
{
    char detail[DETAIL_SIZE];
    precondition_t ply_and_version = { .ply_given = true, .ply = 0, .given = true, .expected = 1 };
    CU_ASSERT_EQUAL(judge(&ply_and_version, 1, 0, detail), PRECONDITION_CONFLICTING);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "expected_version"));
    precondition_t ply_and_if_match = { .ply_given = true, .if_match = "\"1\"" };
    CU_ASSERT_EQUAL(judge(&ply_and_if_match, 1, 0, detail), PRECONDITION_CONFLICTING);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "If-Match"));
    precondition_t two_versions = { .given = true, .expected = 5, .if_match = "\"1\"" };
    CU_ASSERT_EQUAL(judge(&two_versions, 1, 0, detail), PRECONDITION_CONFLICTING);
    CU_ASSERT_EQUAL(judge(&two_versions, 5, 0, detail), PRECONDITION_CONFLICTING);
    CU_ASSERT_STRING_EQUAL(detail, "expected_version 5 is not a version If-Match \"1\" names: send one of them, or "
                                   "both naming the same version");
}

/* Two versions that agree are one guard; "*" agrees with any; a weak or
 * unquoted If-Match fits none and keeps its own 412, which says why. */
static void test_versions_that_agree_are_one_guard(void)
{
    char detail[DETAIL_SIZE];
    precondition_t same = { .given = true, .expected = 3, .if_match = "\"2\", \"3\"" };
    CU_ASSERT_EQUAL(judge(&same, 3, 2, detail), PRECONDITION_OK);
    CU_ASSERT_EQUAL(judge(&same, 4, 2, detail), PRECONDITION_STALE);
    precondition_t any = { .given = true, .expected = 3, .if_match = "*" };
    CU_ASSERT_EQUAL(judge(&any, 3, 2, detail), PRECONDITION_OK);
    precondition_t weak = { .given = true, .expected = 3, .if_match = "W/\"3\"" };
    CU_ASSERT_EQUAL(judge(&weak, 3, 2, detail), PRECONDITION_IF_MATCH);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "weak"));
    precondition_t unquoted = { .given = true, .expected = 3, .if_match = "3" };
    CU_ASSERT_EQUAL(judge(&unquoted, 3, 2, detail), PRECONDITION_IF_MATCH);
}

int test_precondition_register(void)
{
    CU_pSuite suite = CU_add_suite("precondition", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_version_passes_only_on_that_version);
    CU_ADD_TEST(suite, test_a_ply_passes_on_any_version_with_that_many_plies);
    CU_ADD_TEST(suite, test_no_guard_is_required_and_an_invalid_one_is_said_first);
    CU_ADD_TEST(suite, test_guards_at_odds_conflict_whatever_the_game);
    CU_ADD_TEST(suite, test_versions_that_agree_are_one_guard);
    return CU_get_error();
}
