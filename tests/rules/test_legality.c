/* Tests for rules/legality.c and rules/notation.c: every illegal-move reason
 * with its stable code, the UCI castling forms, and the property that
 * legality_explain() calls a request legal exactly when the generator lists
 * the move. */
#include <stdio.h>
#include <string.h>

#include "../support/epd.h"
#include "../support/tests.h"

/* Parses text in fen (NULL: start) and returns the reason; copies the message out. */
static legality_reason_t try_move(const char *fen, const char *text, char *message, size_t message_size)
{
    position_t pos;
    move_t move;
    if (!tests_parse_fen(fen ? fen : FEN_START, &pos))
        return LEGALITY_REASON_COUNT;
    return notation_parse_move(&pos, text, strlen(text), &move, message, message_size);
}

/* Asserts the reason for text, and that the message contains `needle`. */
static void expect(const char *fen, const char *text, legality_reason_t reason, const char *needle)
{
    char message[256] = "";
    legality_reason_t got = try_move(fen, text, message, sizeof message);
    if (got != reason || !strstr(message, needle))
        fprintf(stderr, "\n%s in %s: got %s '%s', expected %s containing '%s'\n", text, fen ? fen : "start",
                legality_reason_code(got), message, legality_reason_code(reason), needle);
    CU_ASSERT_EQUAL(got, reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(message, needle));
}

static void test_unparseable_text_is_refused(void)
{
    expect(NULL, "hello", LEGALITY_UNPARSEABLE, "neither UCI");
    expect(NULL, "e9e4", LEGALITY_UNPARSEABLE, "neither UCI");
    expect(NULL, "", LEGALITY_UNPARSEABLE, "neither UCI");
    expect(NULL, "Nf3xx", LEGALITY_UNPARSEABLE, "neither UCI");
    expect(NULL, "Zf3", LEGALITY_UNPARSEABLE, "neither UCI");
}

static void test_no_piece_on_the_square(void)
{
    expect(NULL, "e3e4", LEGALITY_NO_PIECE, "no piece on e3");
    expect(NULL, "Bd4", LEGALITY_CANNOT_MOVE_SO, "no white bishop can move to d4");
    expect(NULL, "Bd3", LEGALITY_PATH_BLOCKED, "blocked on e2");
    expect("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "Nf3", LEGALITY_NO_PIECE, "no knight");
}

static void test_not_your_piece(void)
{
    expect(NULL, "e7e5", LEGALITY_NOT_YOUR_PIECE, "black's");
}

static void test_piece_cannot_move_so(void)
{
    expect(NULL, "g1g3", LEGALITY_CANNOT_MOVE_SO, "knight cannot move from g1 to g3");
    expect(NULL, "e2e5", LEGALITY_CANNOT_MOVE_SO, "pawn cannot move");
    expect(NULL, "e2d3", LEGALITY_CANNOT_MOVE_SO, "diagonally only to capture");
    expect("4k3/8/8/8/8/4P3/8/4K3 w - - 0 1", "e3e5", LEGALITY_CANNOT_MOVE_SO, "starting rank");
    expect("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "a1b2", LEGALITY_CANNOT_MOVE_SO, "rook cannot move");
}

static void test_path_blocked(void)
{
    expect(NULL, "c1g5", LEGALITY_PATH_BLOCKED, "blocked on d2");
    expect(NULL, "a1a3", LEGALITY_PATH_BLOCKED, "blocked on a2");
    expect("4k3/8/8/8/8/4n3/4P3/4K3 w - - 0 1", "e2e4", LEGALITY_PATH_BLOCKED, "blocked by the piece on e3");
    expect("4k3/8/8/8/8/4n3/4P3/4K3 w - - 0 1", "e2e3", LEGALITY_PATH_BLOCKED, "blocked");
}

static void test_own_piece_on_target(void)
{
    expect(NULL, "d1d2", LEGALITY_OWN_PIECE_ON_TARGET, "d2 holds a white piece");
}

static void test_move_leaving_or_putting_king_in_check(void)
{
    /* Pinned knight. */
    expect("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1", "e2c3", LEGALITY_LEAVES_KING_IN_CHECK, "pinned");
    /* King walks into an attacked square. */
    expect("4k3/3r4/8/8/8/8/8/4K3 w - - 0 1", "e1d1", LEGALITY_LEAVES_KING_IN_CHECK, "in check on d1");
    /* In check and the move does not answer it. */
    expect("4k3/4r3/8/8/8/8/P7/4K3 w - - 0 1", "a2a3", LEGALITY_LEAVES_KING_IN_CHECK, "does not answer");
    /* En passant that would expose the king along the rank. */
    expect("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1", "e5d6", LEGALITY_CANNOT_MOVE_SO, "diagonally only to capture");
}

static void test_castling_reasons(void)
{
    expect("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1", "e1g1", LEGALITY_CASTLING_NO_RIGHT, "no right to castle king side");
    expect("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1", "O-O-O", LEGALITY_CASTLING_NO_RIGHT, "queen side");
    expect(NULL, "O-O", LEGALITY_CASTLING_BLOCKED, "f1");
    expect(NULL, "e1g1", LEGALITY_CASTLING_BLOCKED, "f1");
    expect("r3k2r/8/8/8/8/8/8/R1B1K2R w KQkq - 0 1", "O-O-O", LEGALITY_CASTLING_BLOCKED, "c1");
    expect("r3k2r/8/8/8/8/8/4r3/R3K2R w KQkq - 0 1", "O-O", LEGALITY_CASTLING_OUT_OF_CHECK, "out of check");
    expect("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", "O-O", LEGALITY_CASTLING_THROUGH_CHECK, "f1");
    expect("r3k2r/8/8/8/8/8/6r1/R3K2R w KQkq - 0 1", "O-O", LEGALITY_CASTLING_INTO_CHECK, "g1");
    expect("r3k2r/8/8/8/8/8/3r4/R3K2R w KQkq - 0 1", "e1c1", LEGALITY_CASTLING_THROUGH_CHECK, "d1");
    /* b1 attacked does not stop queen-side castling: the king never crosses it. */
    expect("r3k2r/8/8/8/8/8/1r6/R3K2R w KQkq - 0 1", "O-O-O", LEGALITY_OK, "");
}

static void test_promotion_reasons(void)
{
    expect("8/4P2k/8/8/8/8/8/4K3 w - - 0 1", "e7e8", LEGALITY_PROMOTION_MISSING, "must promote");
    expect("8/4P2k/8/8/8/8/8/4K3 w - - 0 1", "e8", LEGALITY_PROMOTION_MISSING, "must promote");
    expect("8/4P2k/8/8/8/8/8/4K3 w - - 0 1", "e7e8k", LEGALITY_PROMOTION_INVALID, "not a king");
    expect("8/4P2k/8/8/8/8/8/4K3 w - - 0 1", "e8=K", LEGALITY_PROMOTION_INVALID, "not a king");
    expect(NULL, "e2e4q", LEGALITY_PROMOTION_INVALID, "last rank");
    expect(NULL, "g1f3q", LEGALITY_PROMOTION_INVALID, "last rank");
}

static void test_ambiguous_san_names_the_candidates(void)
{
    expect("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nd2", LEGALITY_AMBIGUOUS, "Nbd2");
    expect("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nd2", LEGALITY_AMBIGUOUS, "Nfd2");
    expect("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nbd2", LEGALITY_OK, "");
}

static void test_san_king_onto_castling_square_is_not_castling(void)
{
    /* In SAN castling is O-O/O-O-O; Kg1 and Kh1 must be refused, never half-accepted. */
    expect("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kg1", LEGALITY_CANNOT_MOVE_SO, "O-O");
    expect("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kh1", LEGALITY_CANNOT_MOVE_SO, "O-O");
    expect("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "Kh1", LEGALITY_CANNOT_MOVE_SO,
           "O-O");
    expect("1rk2r2/8/8/8/8/8/8/1RK2R2 w KQkq - 0 1", "Kb1", LEGALITY_CANNOT_MOVE_SO, "O-O");
}

static void test_reason_codes_are_stable(void)
{
    static const char *const expected[LEGALITY_REASON_COUNT] = {
        "ok", "unparseable", "no_piece", "not_your_piece", "cannot_move_so", "path_blocked",
        "own_piece_on_target", "leaves_king_in_check", "castling_no_right", "castling_blocked",
        "castling_out_of_check", "castling_through_check", "castling_into_check", "promotion_missing",
        "promotion_invalid", "ambiguous", "game_over", "drop_invalid", "gating_invalid", "must_capture",
        "gives_check", "explodes_own_king",
    };
    for (int r = 0; r < LEGALITY_REASON_COUNT; r++)
        CU_ASSERT_STRING_EQUAL(legality_reason_code((legality_reason_t)r), expected[r]);
}

static void test_standard_castling_accepts_both_uci_forms(void)
{
    static const char *fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    position_t pos;
    move_t a, b;
    char message[128];
    tests_parse_fen(fen, &pos);
    CU_ASSERT_EQUAL(notation_parse_move(&pos, "e1g1", 4, &a, message, sizeof message), LEGALITY_OK);
    CU_ASSERT_EQUAL(notation_parse_move(&pos, "e1h1", 4, &b, message, sizeof message), LEGALITY_OK);
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_EQUAL(move_kind(a), MOVE_CASTLING);
    char uci[UCI_BUFFER_SIZE];
    CU_ASSERT_STRING_EQUAL(uci_format(&pos, a, uci), "e1g1");
}

static void test_chess960_castling_is_king_takes_rook(void)
{
    position_t pos;
    move_t move;
    char message[128], uci[UCI_BUFFER_SIZE];
    /* King b1, rooks a1 and e1: castling king side with the e1 rook puts the king on g1, the rook on f1. */
    static const char *fen = "7k/8/8/8/8/8/8/RK2R3 w EA - 0 1";
    CU_ASSERT_EQUAL_FATAL(fen_parse(fen, strlen(fen), FEN_CHESS960, &pos, message, sizeof message), FEN_OK);
    CU_ASSERT_EQUAL(notation_parse_move(&pos, "b1e1", 4, &move, message, sizeof message), LEGALITY_OK);
    CU_ASSERT_EQUAL(move_kind(move), MOVE_CASTLING);
    CU_ASSERT_STRING_EQUAL(uci_format(&pos, move, uci), "b1e1");
    /* The two-step is not castling in Chess960. */
    CU_ASSERT_EQUAL(notation_parse_move(&pos, "b1d1", 4, &move, message, sizeof message), LEGALITY_CANNOT_MOVE_SO);
    position_undo_t undo;
    notation_parse_move(&pos, "b1e1", 4, &move, message, sizeof message);
    position_make(&pos, move, &undo);
    CU_ASSERT_EQUAL(pos.board[6], piece_make(WHITE, KING));
    CU_ASSERT_EQUAL(pos.board[5], piece_make(WHITE, ROOK));
}

/* Every request (all from/to pairs, every promotion letter) is called legal
 * exactly when the generator lists the move, and the reason is never empty. */
static void check_explain_agrees_with_generator(const char *fen)
{
    position_t pos;
    if (!tests_parse_fen(fen, &pos))
        return;
    move_list_t legal;
    movegen_legal(&pos, &legal);
    int legal_found = 0;
    for (int from = 0; from < 64; from++) {
        for (int to = 0; to < 64; to++) {
            for (int promo = -1; promo < PIECE_TYPE_COUNT; promo++) {
                piece_type_t p = promo < 0 ? NO_PIECE_TYPE : (piece_type_t)promo;
                char message[256] = "";
                legality_reason_t r = legality_explain(&pos, from, to, p, message, sizeof message);
                if (r == LEGALITY_OK) {
                    char text[6];
                    uci_text_t uci = { from, to, p, NO_PIECE_TYPE };
                    move_t m = uci_to_move(&pos, &uci);
                    bool listed = false;
                    for (int i = 0; i < legal.count; i++)
                        listed |= legal.moves[i] == m;
                    if (!listed)
                        fprintf(stderr, "\nexplain says legal but not generated: %s %s\n", fen,
                                uci_format(&pos, m, text));
                    CU_ASSERT_TRUE(listed);
                    legal_found++;
                } else {
                    CU_ASSERT_TRUE(message[0] != '\0');
                }
            }
        }
    }
    /* Standard castling is accepted as e1g1 and e1h1: both name the same move. */
    int castles = 0;
    for (int i = 0; i < legal.count; i++)
        castles += move_kind(legal.moves[i]) == MOVE_CASTLING;
    int two_forms = 0;
    for (int i = 0; i < legal.count; i++)
        if (move_kind(legal.moves[i]) == MOVE_CASTLING && !pos.chess960
            && move_to(legal.moves[i]) != position_castle_king_to(&pos, move_to(legal.moves[i])))
            two_forms++;
    if (legal_found != legal.count + two_forms)
        fprintf(stderr, "\n%s: %d accepted requests for %d legal moves (%d castles)\n", fen, legal_found,
                legal.count, castles);
    CU_ASSERT_EQUAL(legal_found, legal.count + two_forms);
}

static void test_explanations_agree_with_move_generation(void)
{
    static const char *const files[] = { "standard.epd", "tricky.epd" };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        epd_reader_t reader;
        epd_entry_t entry;
        if (!epd_open(&reader, files[f]))
            continue;
        int positions = 0;
        while (epd_next(&reader, &entry)) {
            check_explain_agrees_with_generator(entry.fen);
            positions++;
        }
        epd_close(&reader);
        CU_ASSERT_TRUE(positions > 5);
    }
}

int test_legality_register(void)
{
    CU_pSuite suite = CU_add_suite("legality", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_unparseable_text_is_refused);
    CU_ADD_TEST(suite, test_no_piece_on_the_square);
    CU_ADD_TEST(suite, test_not_your_piece);
    CU_ADD_TEST(suite, test_piece_cannot_move_so);
    CU_ADD_TEST(suite, test_path_blocked);
    CU_ADD_TEST(suite, test_own_piece_on_target);
    CU_ADD_TEST(suite, test_move_leaving_or_putting_king_in_check);
    CU_ADD_TEST(suite, test_castling_reasons);
    CU_ADD_TEST(suite, test_promotion_reasons);
    CU_ADD_TEST(suite, test_ambiguous_san_names_the_candidates);
    CU_ADD_TEST(suite, test_san_king_onto_castling_square_is_not_castling);
    CU_ADD_TEST(suite, test_reason_codes_are_stable);
    CU_ADD_TEST(suite, test_standard_castling_accepts_both_uci_forms);
    CU_ADD_TEST(suite, test_chess960_castling_is_king_takes_rook);
    CU_ADD_TEST(suite, test_explanations_agree_with_move_generation);
    return CUE_SUCCESS;
}
