/* Tests for rules/chess960.c: the 960 starts by Scharnagl number, 518 as
 * the standard position, every number back from its start, and the
 * positions that are no start. The oracle is kokopu (npm), through
 * tests/oracle/chess960_table.mjs run at test time: a missing node or
 * kokopu fails the suite. */
#include <stdio.h>
#include <string.h>

#include "../support/tests.h"

static void test_518_is_the_standard_start(void)
{
    position_t pos, standard;
    CU_ASSERT_TRUE_FATAL(chess960_start(CHESS960_STANDARD, &pos));
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &standard));
    CU_ASSERT_EQUAL(pos.key, standard.key);
    CU_ASSERT_EQUAL(memcmp(pos.board, standard.board, sizeof pos.board), 0);
    CU_ASSERT_EQUAL(memcmp(pos.castle_rook, standard.castle_rook, sizeof pos.castle_rook), 0);
    CU_ASSERT_TRUE(pos.chess960);
    CU_ASSERT_EQUAL(chess960_number(&standard), CHESS960_STANDARD);
}

static void test_every_number_is_read_back_from_its_start(void)
{
    uint64_t keys[CHESS960_COUNT];
    for (int n = 0; n < CHESS960_COUNT; n++) {
        position_t pos;
        CU_ASSERT_TRUE_FATAL(chess960_start(n, &pos));
        CU_ASSERT_EQUAL(chess960_number(&pos), n);
        keys[n] = pos.key;
        for (int m = 0; m < n; m++)
            CU_ASSERT_NOT_EQUAL(keys[m], keys[n]);
    }
}

static void test_numbers_outside_0_to_959_have_no_start(void)
{
    position_t pos;
    piece_type_t rank[FILE_COUNT];
    CU_ASSERT_FALSE(chess960_start(-1, &pos));
    CU_ASSERT_FALSE(chess960_start(CHESS960_COUNT, &pos));
    CU_ASSERT_FALSE(chess960_back_rank(CHESS960_COUNT, rank));
    CU_ASSERT_FALSE(chess960_back_rank(-518, rank));
}

static void test_positions_that_are_no_start_have_no_number(void)
{
    static const char *const not_starts[] = {
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", /* a move made */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",   /* black to move */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1",    /* a right missing */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3 1",   /* a clock */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 7",   /* a move number */
        "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",   /* black not mirrored */
        "rbnqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RBNQKBNR w KQkq - 0 1",   /* bishops on one colour */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",      /* no castling */
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",   /* the start: a number */
        "nrbqkbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBQKBRN w BGbg - 0 1",   /* a start */
        "rqbnkbnr/pppppppp/8/8/8/8/PPPPPPPP/RQBNKBNR w KQkq - 0 1",   /* a start */
    };
    /* -1: no start; 1: some start. */
    static const int expected[] = { -1, -1, -1, -1, -1, -1, -1, -1, 1, 1, 1 };
    for (size_t i = 0; i < sizeof not_starts / sizeof not_starts[0]; i++) {
        position_t pos;
        CU_ASSERT_TRUE_FATAL(tests_parse_fen(not_starts[i], &pos));
        int number = chess960_number(&pos);
        if (expected[i] == -1) {
            CU_ASSERT_EQUAL(number, -1);
            if (number != -1)
                fprintf(stderr, "\n  %s: number %d\n", not_starts[i], number);
        } else {
            CU_ASSERT_TRUE(number >= 0 && number < CHESS960_COUNT);
        }
    }
}

/* Every line of kokopu's table: its FEN read here must be our start of that
 * number (board, castling rooks, key) and give that number back. */
static void test_all_960_starts_match_kokopu(void)
{
    FILE *table = popen("node tests/oracle/chess960_table.mjs", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(table);
    char line[256];
    int lines = 0, mismatches = 0;
    while (fgets(line, sizeof line, table)) {
        int number, offset = 0;
        if (sscanf(line, "%d %n", &number, &offset) != 1 || number != lines) {
            fprintf(stderr, "\n  kokopu line %d unreadable: %s", lines + 1, line);
            mismatches++;
            break;
        }
        line[strcspn(line, "\n")] = '\0';
        const char *fen = line + offset;
        position_t theirs, ours;
        char message[200];
        bool same = fen_parse(fen, strlen(fen), FEN_CHESS960, &theirs, message, sizeof message) == FEN_OK
                    && chess960_start(number, &ours) && theirs.key == ours.key
                    && !memcmp(theirs.board, ours.board, sizeof ours.board)
                    && !memcmp(theirs.castle_rook, ours.castle_rook, sizeof ours.castle_rook)
                    && chess960_number(&theirs) == number;
        if (!same && mismatches++ < 10) {
            char fen_ours[FEN_BUFFER_SIZE];
            fprintf(stderr, "\n  %d: kokopu %s, chessd %s", number, fen,
                    chess960_start(number, &ours) ? fen_format(&ours, fen_ours, sizeof fen_ours) : "(none)");
        }
        lines++;
    }
    int status = pclose(table);
    CU_ASSERT_EQUAL(status, 0);
    CU_ASSERT_EQUAL(lines, CHESS960_COUNT);
    CU_ASSERT_EQUAL(mismatches, 0);
}

int test_chess960_register(void)
{
    CU_pSuite suite = CU_add_suite("chess960", NULL, NULL);
    if (!suite)
        return CU_get_error();
    if (!CU_add_test(suite, "518 is the standard start", test_518_is_the_standard_start)
        || !CU_add_test(suite, "every number is read back from its start", test_every_number_is_read_back_from_its_start)
        || !CU_add_test(suite, "numbers outside 0..959 have no start", test_numbers_outside_0_to_959_have_no_start)
        || !CU_add_test(suite, "positions that are no start have no number",
                        test_positions_that_are_no_start_have_no_number)
        || !CU_add_test(suite, "all 960 starts match kokopu", test_all_960_starts_match_kokopu))
        return CU_get_error();
    return CUE_SUCCESS;
}
