/* Tests for rules/notation.c's move lists (notation_next_in_list, as `chessd
 * perft` and the suites' tests_play read them): words split at any number of
 * spaces, nothing from an empty or blank text, each word read back by
 * notation_parse_move. That skips blanks around a move, never inside. The
 * reasons a single move is refused are tested in test_legality.c. */
#include <string.h>

#include "../support/tests.h"

enum { WORDS_MAX = 16 };

/* Splits text with notation_next_in_list into words (each NUL-terminated in
 * storage); returns how many. */
static int split(const char *text, char words[WORDS_MAX][16])
{
    const char *cursor = text, *word;
    size_t length;
    int count = 0;
    while (count < WORDS_MAX && notation_next_in_list(&cursor, &word, &length)) {
        CU_ASSERT_FATAL(length > 0 && length < 16);
        CU_ASSERT_PTR_EQUAL(cursor, word + length); /* the cursor is just past the word */
        memcpy(words[count], word, length);
        words[count][length] = '\0';
        count++;
    }
    return count;
}

static void test_moves_are_the_words_between_spaces(void)
{
    char words[WORDS_MAX][16];
    CU_ASSERT_EQUAL_FATAL(split("e2e4 e5 Nf3 b8c6", words), 4);
    CU_ASSERT_STRING_EQUAL(words[0], "e2e4");
    CU_ASSERT_STRING_EQUAL(words[1], "e5");
    CU_ASSERT_STRING_EQUAL(words[2], "Nf3");
    CU_ASSERT_STRING_EQUAL(words[3], "b8c6");
}

static void test_spaces_before_between_and_after_are_skipped(void)
{
    char words[WORDS_MAX][16];
    CU_ASSERT_EQUAL_FATAL(split("   e4    e5  ", words), 2);
    CU_ASSERT_STRING_EQUAL(words[0], "e4");
    CU_ASSERT_STRING_EQUAL(words[1], "e5");
}

static void test_an_empty_or_blank_list_has_no_move(void)
{
    const char *cursor = "", *word = NULL;
    size_t length = 99;
    CU_ASSERT_FALSE(notation_next_in_list(&cursor, &word, &length));
    CU_ASSERT_PTR_NULL(word);
    CU_ASSERT_EQUAL(length, 99);
    const char *blank = "     ";
    cursor = blank;
    CU_ASSERT_FALSE(notation_next_in_list(&cursor, &word, &length));
    CU_ASSERT_PTR_NULL(word);
    CU_ASSERT_EQUAL(*cursor, '\0'); /* the spaces were read */
    /* Asked again at the end, still nothing. */
    CU_ASSERT_FALSE(notation_next_in_list(&cursor, &word, &length));
}

/* Only spaces separate: a tab or a comma is part of a word, which
 * notation_parse_move then refuses as a whole. */
static void test_only_spaces_separate_moves(void)
{
    char words[WORDS_MAX][16];
    CU_ASSERT_EQUAL_FATAL(split("e4\te5 d4,d5", words), 2);
    CU_ASSERT_STRING_EQUAL(words[0], "e4\te5");
    CU_ASSERT_STRING_EQUAL(words[1], "d4,d5");
    position_t pos;
    tests_parse_fen(FEN_START, &pos);
    move_t move;
    char message[256];
    CU_ASSERT_NOT_EQUAL(notation_parse_move(&pos, words[0], strlen(words[0]), &move, message, sizeof message),
                        LEGALITY_OK);
}

/* A list read word by word and played reaches the position its FEN names. */
static void test_a_list_played_word_by_word_reaches_its_position(void)
{
    position_t pos, expected;
    tests_parse_fen(FEN_START, &pos);
    const char *cursor = "e2e4 c5  Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6", *word;
    size_t length;
    int plies = 0;
    while (notation_next_in_list(&cursor, &word, &length)) {
        move_t move;
        char message[256];
        CU_ASSERT_EQUAL_FATAL(notation_parse_move(&pos, word, length, &move, message, sizeof message), LEGALITY_OK);
        position_undo_t undo;
        position_make(&pos, move, &undo);
        plies++;
    }
    CU_ASSERT_EQUAL(plies, 10);
    tests_parse_fen("rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6", &expected);
    CU_ASSERT_EQUAL(pos.key, expected.key);
    char got[FEN_BUFFER_SIZE], want[FEN_BUFFER_SIZE];
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, got, sizeof got), fen_format(&expected, want, sizeof want));
}

/* Blanks around a move are not part of it, as around a FEN's fields, in
 * UCI and in SAN alike; blanks or anything else inside still refuse it. */
static void test_blanks_around_a_move_are_skipped_and_inside_refused(void)
{
    position_t pos;
    tests_parse_fen(FEN_START, &pos);
    static const char *const fine[] = { "e2e4 ", " e2e4", "\te4\r\n", "  Nf3  ", "g1f3\n" };
    static const char *const refused[] = { "e2 e4", "N f3", "e4\te5", " ", "\t\n" };
    move_t move;
    char message[256];
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        CU_ASSERT_EQUAL(notation_parse_move(&pos, fine[i], strlen(fine[i]), &move, message, sizeof message),
                        LEGALITY_OK);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        CU_ASSERT_EQUAL(notation_parse_move(&pos, refused[i], strlen(refused[i]), &move, message, sizeof message),
                        LEGALITY_UNPARSEABLE);
    /* The length given bounds the text: a blank past it is not read. */
    CU_ASSERT_EQUAL(notation_parse_move(&pos, "e4 x", 3, &move, message, sizeof message), LEGALITY_OK);
}

int test_notation_register(void)
{
    CU_pSuite suite = CU_add_suite("notation", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_moves_are_the_words_between_spaces);
    CU_ADD_TEST(suite, test_spaces_before_between_and_after_are_skipped);
    CU_ADD_TEST(suite, test_an_empty_or_blank_list_has_no_move);
    CU_ADD_TEST(suite, test_only_spaces_separate_moves);
    CU_ADD_TEST(suite, test_a_list_played_word_by_word_reaches_its_position);
    CU_ADD_TEST(suite, test_blanks_around_a_move_are_skipped_and_inside_refused);
    return CU_get_error();
}
