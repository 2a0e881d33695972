/* Tests for rules/san.c formatting: minimal disambiguation (file, then rank,
 * then both; pinned pieces do not count), captures, promotions, en passant,
 * castling in both variants, and the check and mate suffixes. */
#include <string.h>

#include "../support/tests.h"

/* Finds the legal move whose UCI is `uci` in fen and returns its SAN in buf. */
static const char *san_of(const char *fen, const char *uci, char *buf)
{
    position_t pos;
    move_t move;
    char message[256];
    buf[0] = '\0';
    if (!tests_parse_fen(fen, &pos))
        return buf;
    legality_reason_t r = notation_parse_move(&pos, uci, strlen(uci), &move, message, sizeof message);
    CU_ASSERT_EQUAL(r, LEGALITY_OK);
    if (r == LEGALITY_OK)
        san_format(&pos, move, buf);
    return buf;
}

#define EXPECT_SAN(fen, uci, san)                                   \
    do {                                                            \
        char buf_[SAN_BUFFER_SIZE];                                 \
        CU_ASSERT_STRING_EQUAL(san_of(fen, uci, buf_), san);        \
    } while (0)

static void test_plain_moves(void)
{
    EXPECT_SAN(FEN_START, "g1f3", "Nf3");
    EXPECT_SAN(FEN_START, "e2e4", "e4");
    EXPECT_SAN(FEN_START, "b2b3", "b3");
}

static void test_disambiguation_by_file_then_rank_then_square(void)
{
    static const char *three_queens = "6k1/8/8/8/8/Q7/8/Q1Q4K w - - 0 1";
    EXPECT_SAN(three_queens, "c1b2", "Qcb2");  /* the file alone tells c1 apart */
    EXPECT_SAN(three_queens, "a3b2", "Q3b2");  /* a1 shares the file: the rank tells */
    EXPECT_SAN(three_queens, "a1b2", "Qa1b2"); /* a3 shares the file, c1 the rank */
    EXPECT_SAN("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "b1d2", "Nbd2");
    EXPECT_SAN("4k3/8/8/8/R7/8/8/R3K3 w - - 0 1", "a1a2", "R1a2");
}

static void test_pinned_piece_does_not_force_disambiguation(void)
{
    /* The f3 knight is pinned by the d5 bishop against the king on h1. */
    EXPECT_SAN("4k3/8/8/3b4/8/5N2/8/1N5K w - - 0 1", "b1d2", "Nd2");
}

static void test_captures_and_en_passant(void)
{
    EXPECT_SAN("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", "exd5");
    EXPECT_SAN("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "exd6");
    EXPECT_SAN("4k3/8/8/3p4/8/5N2/8/4K3 w - - 0 1", "f3d4", "Nd4");
    EXPECT_SAN("4k3/8/8/8/3p4/5N2/8/4K3 w - - 0 1", "f3d4", "Nxd4");
}

static void test_promotions_with_check_and_mate(void)
{
    EXPECT_SAN("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8q", "e8=Q");
    EXPECT_SAN("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8n", "e8=N");
    EXPECT_SAN("8/4P3/8/8/8/8/8/k3K3 w - - 0 1", "e7e8r", "e8=R");
    EXPECT_SAN("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8q", "e8=Q+");
    EXPECT_SAN("3r3k/4P1pp/8/8/8/8/8/4K3 w - - 0 1", "e7d8q", "exd8=Q#");
}

static void test_check_and_mate_suffixes(void)
{
    EXPECT_SAN("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4", "Qh4#");
    EXPECT_SAN("rnbqkbnr/ppppp1pp/8/5p2/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "d1h5", "Qh5+");
}

static void test_castling(void)
{
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O");
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O");
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8h8", "O-O");
    /* Castling that gives check through the rook. */
    EXPECT_SAN("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O+");
    /* Chess960: king b1 takes its rook on e1; the rook lands on f1. */
    EXPECT_SAN("7k/8/8/8/8/8/8/RK2R3 w EA - 0 1", "b1e1", "O-O");
    EXPECT_SAN("7k/8/8/8/8/8/8/RK2R3 w EA - 0 1", "b1a1", "O-O-O");
}

static void test_every_legal_move_formats_and_parses_back(void)
{
    static const char *fens[] = {
        FEN_START,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
        "6k1/8/8/8/8/Q7/8/Q1Q4K w - - 0 1",
        "7k/8/8/8/8/8/8/RK2R3 w EA - 0 1",
    };
    for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
        position_t pos;
        if (!tests_parse_fen(fens[i], &pos))
            continue;
        move_list_t list;
        movegen_legal(&pos, &list);
        CU_ASSERT_TRUE(list.count > 0);
        for (int m = 0; m < list.count; m++) {
            char san[SAN_BUFFER_SIZE], message[256];
            move_t back = MOVE_NONE;
            san_format(&pos, list.moves[m], san);
            CU_ASSERT_EQUAL(san_parse(&pos, san, strlen(san), &back, message, sizeof message), LEGALITY_OK);
            CU_ASSERT_EQUAL(back, list.moves[m]);
        }
    }
}

int test_san_register(void)
{
    CU_pSuite suite = CU_add_suite("san", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_plain_moves);
    CU_ADD_TEST(suite, test_disambiguation_by_file_then_rank_then_square);
    CU_ADD_TEST(suite, test_pinned_piece_does_not_force_disambiguation);
    CU_ADD_TEST(suite, test_captures_and_en_passant);
    CU_ADD_TEST(suite, test_promotions_with_check_and_mate);
    CU_ADD_TEST(suite, test_check_and_mate_suffixes);
    CU_ADD_TEST(suite, test_castling);
    CU_ADD_TEST(suite, test_every_legal_move_formats_and_parses_back);
    return CUE_SUCCESS;
}
