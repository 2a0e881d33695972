/* Tests for api/render/board_text.c, the text/plain diagram: standard
 * chess's text is as it was before the variants (to the byte); a variant
 * names itself, crazyhouse prints each side's pocket with its counts,
 * S-chess its reserves, three-check the checks each side has given; and an
 * allocation failure anywhere gives NULL, never part of the text. */
#include <stdlib.h>
#include <string.h>

#include "../../../api/render/board_text.h"
#include "../../support/tests.h"

/* The diagram of fen read in variant (without legal moves), malloc'd. */
static char *diagram(const char *fen, variant_t variant)
{
    position_t pos;
    char message[256];
    fen_error_t err = fen_parse_variant(fen, strlen(fen), variant, 0, &pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    size_t length = 0;
    char *text = board_text_render(&pos, &status, false, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(length, strlen(text));
    return text;
}

/* Whether text holds line as one whole line. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

static void test_standard_chess_text_is_unchanged(void)
{
    char *text = diagram(FEN_START, VARIANT_STANDARD);
    CU_ASSERT_STRING_EQUAL(text, "8  r n b q k b n r\n"
                                 "7  p p p p p p p p\n"
                                 "6  . . . . . . . .\n"
                                 "5  . . . . . . . .\n"
                                 "4  . . . . . . . .\n"
                                 "3  . . . . . . . .\n"
                                 "2  P P P P P P P P\n"
                                 "1  R N B Q K B N R\n"
                                 "   a b c d e f g h\n"
                                 "\n"
                                 "FEN: rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"
                                 "White to move\n"
                                 "Status: active, result *\n");
    free(text);
}

static void test_crazyhouse_prints_each_pocket_with_its_counts(void)
{
    char *text = diagram("r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R[PPNqqqbbbbbbbbbbbb] w KQkq - 0 5",
                         VARIANT_CRAZYHOUSE);
    CU_ASSERT_TRUE(has_line(text, "Variant: Crazyhouse (crazyhouse)"));
    CU_ASSERT_TRUE(has_line(text, "White's pocket: P x2, N"));
    CU_ASSERT_TRUE(has_line(text, "Black's pocket: b x12, q x3"));
    /* after the board, before the FEN */
    CU_ASSERT(strstr(text, "   a b c d e f g h\n\nVariant: ") != NULL);
    CU_ASSERT(strstr(text, "Black's pocket") < strstr(text, "FEN: "));
    free(text);
    text = diagram(variant_rules(VARIANT_CRAZYHOUSE)->start_fen, VARIANT_CRAZYHOUSE);
    CU_ASSERT_TRUE(has_line(text, "White's pocket: empty"));
    CU_ASSERT_TRUE(has_line(text, "Black's pocket: empty"));
    CU_ASSERT_PTR_NULL(strstr(text, "Checks given"));
    free(text);
}

static void test_s_chess_prints_each_reserve(void)
{
    char *text = diagram(variant_rules(VARIANT_SEIRAWAN)->start_fen, VARIANT_SEIRAWAN);
    CU_ASSERT_TRUE(has_line(text, "Variant: S-chess (seirawan)"));
    CU_ASSERT_TRUE(has_line(text, "White's reserve: H, E"));
    CU_ASSERT_TRUE(has_line(text, "Black's reserve: h, e"));
    free(text);
    /* the Hawk and the Elephant on the board by their letters, a reserve spent */
    text = diagram("rnbqkbnr/pppppppp/3h4/8/8/4E3/PPPPPPPP/RNBQKBNR[He] w KQkq - 0 1", VARIANT_SEIRAWAN);
    CU_ASSERT_TRUE(has_line(text, "6  . . . h . . . ."));
    CU_ASSERT_TRUE(has_line(text, "3  . . . . E . . ."));
    CU_ASSERT_TRUE(has_line(text, "White's reserve: H"));
    CU_ASSERT_TRUE(has_line(text, "Black's reserve: e"));
    free(text);
}

static void test_three_check_prints_the_checks_given(void)
{
    /* X-FEN's remaining checks, 1+2: White has given 2, Black 1 */
    char *text = diagram("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 1+2 0 1", VARIANT_THREE_CHECK);
    CU_ASSERT_TRUE(has_line(text, "Variant: Three-check (threeCheck)"));
    CU_ASSERT_TRUE(has_line(text, "Checks given: White 2, Black 1 (the third wins)"));
    CU_ASSERT_PTR_NULL(strstr(text, "pocket"));
    free(text);
}

static void test_a_variant_without_pockets_only_names_itself(void)
{
    char *standard = diagram(FEN_START, VARIANT_STANDARD), *atomic = diagram(FEN_START, VARIANT_ATOMIC);
    const char *after_board = strstr(standard, "FEN: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(after_board);
    size_t board = (size_t)(after_board - standard);
    CU_ASSERT_EQUAL(strncmp(atomic, standard, board), 0);
    CU_ASSERT_STRING_EQUAL(atomic + board, "Variant: Atomic (atomic)\n" /* then as standard chess's */
                                           "FEN: rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"
                                           "White to move\n"
                                           "Status: active, result *\n");
    free(standard);
    free(atomic);
}

static void test_an_allocation_failure_anywhere_gives_null(void)
{
    position_t pos;
    char message[256];
    const char *fen = "r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R[PPNqbb] w KQkq - 0 5";
    CU_ASSERT_EQUAL_FATAL(fen_parse_variant(fen, strlen(fen), VARIANT_CRAZYHOUSE, 0, &pos, message, sizeof message),
                          FEN_OK);
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    size_t whole_length = 0;
    char *whole = board_text_render(&pos, &status, true, &whole_length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    int nulls = 0;
    for (long k = 0; k < 40; k++) {
        tests_fail_allocations_after(k);
        size_t length = 0;
        char *text = board_text_render(&pos, &status, true, &length);
        bool failed = tests_allocation_calls() > k;
        tests_allocations_work();
        if (failed) {
            nulls++;
            CU_ASSERT_PTR_NULL(text);
        } else {
            CU_ASSERT_STRING_EQUAL(text ? text : "", whole);
        }
        free(text);
    }
    CU_ASSERT(nulls > 0 && nulls < 40); /* some failed, and the text was whole once allocations sufficed */
    free(whole);
}

int test_board_text_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("board_text", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return -1;
    CU_add_test(suite, "standard chess text is unchanged", test_standard_chess_text_is_unchanged);
    CU_add_test(suite, "crazyhouse prints each pocket with its counts",
                test_crazyhouse_prints_each_pocket_with_its_counts);
    CU_add_test(suite, "S-chess prints each reserve", test_s_chess_prints_each_reserve);
    CU_add_test(suite, "three-check prints the checks given", test_three_check_prints_the_checks_given);
    CU_add_test(suite, "a variant without pockets only names itself",
                test_a_variant_without_pockets_only_names_itself);
    CU_add_test(suite, "an allocation failure anywhere gives NULL", test_an_allocation_failure_anywhere_gives_null);
    return CU_get_error();
}
