/* Tests for rules/status.c: check, checkmate, stalemate, the automatic draws
 * (insufficient material, 75-move rule, fivefold repetition) and the claims
 * (50-move rule, threefold repetition), including the en passant subtlety of
 * "same position". */
#include <stdio.h>
#include <string.h>

#include "../support/tests.h"

enum { HISTORY_MAX = 512 };

typedef struct {
    position_t pos;
    uint64_t history[HISTORY_MAX];
    size_t count;
    status_t status;
} game_t;

/* Sets up fen, plays moves, and evaluates the final position with its history. */
static void play(game_t *g, const char *fen, const char *moves)
{
    g->count = 0;
    if (!tests_parse_fen(fen ? fen : FEN_START, &g->pos))
        return;
    tests_play(&g->pos, moves, g->history, &g->count);
    status_evaluate(&g->pos, g->history, g->count, &g->status);
}

static void test_fools_mate_is_checkmate(void)
{
    game_t g;
    play(&g, NULL, "f3 e5 g4 Qh4#");
    CU_ASSERT_EQUAL(g.status.state, STATUS_CHECKMATE);
    CU_ASSERT_TRUE(g.status.check);
    CU_ASSERT_EQUAL(g.status.legal_move_count, 0);
    CU_ASSERT_EQUAL(g.status.claimable, 0);
}

static void test_check_is_reported_in_active_game(void)
{
    game_t g;
    play(&g, NULL, "e4 f5 Qh5+");
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
    CU_ASSERT_TRUE(g.status.check);
    CU_ASSERT_TRUE(g.status.legal_move_count > 0);
}

static void test_stalemate(void)
{
    game_t g;
    play(&g, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "");
    CU_ASSERT_EQUAL(g.status.state, STATUS_STALEMATE);
    CU_ASSERT_FALSE(g.status.check);
}

static void test_insufficient_material_cases(void)
{
    static const struct {
        const char *fen;
        bool insufficient;
    } cases[] = {
        { "8/8/4k3/8/8/3K4/8/8 w - - 0 1", true },           /* K v K */
        { "8/8/4k3/8/8/3KB3/8/8 w - - 0 1", true },          /* K+B v K */
        { "8/8/4k3/8/8/3KN3/8/8 b - - 0 1", true },          /* K+N v K */
        { "8/8/3bk3/8/8/3KB3/8/8 w - - 0 1", true },         /* bishops on one colour (d6, e3: both dark) */
        { "8/8/2b1k3/8/8/3KB3/8/8 w - - 0 1", false },       /* K+B v K+B, opposite colours (c6 light) */
        { "8/8/4k3/8/8/3KNN2/8/8 w - - 0 1", false },        /* K+N+N v K */
        { "8/8/2n1k3/8/8/3KN3/8/8 w - - 0 1", false },       /* K+N v K+N */
        { "8/8/4k3/8/8/3KB3/6B1/8 w - - 0 1", false },       /* K+B+B of both colours v K */
        { "8/8/4k3/8/8/3KP3/8/8 w - - 0 1", false },         /* a pawn */
        { "8/8/4k3/8/8/3K4/8/R7 w - - 0 1", false },          /* a rook */
        { "8/8/1b2k3/8/8/2BK4/8/B7 w - - 0 1", true },       /* three bishops, all on dark squares */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g;
        play(&g, cases[i].fen, "");
        CU_ASSERT_EQUAL(status_insufficient_material(&g.pos), cases[i].insufficient);
        CU_ASSERT_EQUAL(g.status.state == STATUS_DRAW && g.status.draw_reason == STATUS_DRAW_INSUFFICIENT_MATERIAL,
                        cases[i].insufficient);
    }
}

static void test_opposite_coloured_bishops_are_not_insufficient(void)
{
    game_t g;
    play(&g, "8/8/2b1k3/8/8/3KB3/8/8 w - - 0 1", "");
    CU_ASSERT_FALSE(status_insufficient_material(&g.pos));
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
}

static void test_seventyfive_move_rule_ends_the_game(void)
{
    game_t g;
    play(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 149 120", "Rg3");
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 150);
    CU_ASSERT_EQUAL(g.status.state, STATUS_DRAW);
    CU_ASSERT_EQUAL(g.status.draw_reason, STATUS_DRAW_SEVENTYFIVE_MOVES);

    play(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 148 120", "Rg3");
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_FIFTY_MOVES);
}

static void test_mate_on_the_150th_halfmove_is_mate(void)
{
    game_t g;
    /* Ra8 mates: the rook holds the eighth rank, the king on g6 holds g7 and h7. */
    play(&g, "7k/8/6K1/8/8/8/8/R7 w - - 149 120", "Ra8#");
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 150);
    CU_ASSERT_EQUAL(g.status.state, STATUS_CHECKMATE);
    CU_ASSERT_EQUAL(g.status.draw_reason, STATUS_DRAW_NONE);
}

static void test_fifty_move_rule_is_a_claim_from_100_halfmoves(void)
{
    game_t g;
    play(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 99 80", "");
    CU_ASSERT_FALSE(g.status.claimable & STATUS_CLAIM_FIFTY_MOVES);
    play(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 99 80", "Rg3");
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_FIFTY_MOVES);
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
    /* A pawn move resets the clock. */
    play(&g, "8/8/4k3/8/8/3K4/6RP/8 w - - 99 80", "h3");
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 0);
    CU_ASSERT_FALSE(g.status.claimable & STATUS_CLAIM_FIFTY_MOVES);
}

static void test_threefold_repetition_is_a_claim_counting_the_start(void)
{
    game_t g;
    play(&g, NULL, "Nf3 Nf6 Ng1 Ng8");
    CU_ASSERT_EQUAL(g.status.repetitions, 2);
    CU_ASSERT_FALSE(g.status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
    play(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8");
    CU_ASSERT_EQUAL(g.status.repetitions, 3);
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
}

static void test_fivefold_repetition_ends_the_game(void)
{
    game_t g;
    play(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
    CU_ASSERT_EQUAL(g.status.repetitions, 4);
    play(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8");
    CU_ASSERT_EQUAL(g.status.repetitions, 5);
    CU_ASSERT_EQUAL(g.status.state, STATUS_DRAW);
    CU_ASSERT_EQUAL(g.status.draw_reason, STATUS_DRAW_FIVEFOLD_REPETITION);
    CU_ASSERT_EQUAL(g.status.claimable, 0);
}

static void test_repetition_needs_same_castling_rights(void)
{
    game_t g;
    /* The king walks out and back: same placement, but castling rights are gone. */
    play(&g, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kf1 Kf8 Ke1 Ke8");
    CU_ASSERT_EQUAL(g.status.repetitions, 1);
    play(&g, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kf1 Kf8 Ke1 Ke8 Kf1 Kf8 Ke1 Ke8");
    CU_ASSERT_EQUAL(g.status.repetitions, 2);
}

static void test_repetition_ignores_an_en_passant_square_whose_capture_is_illegal(void)
{
    game_t g;
    /* After d2-d4 the e4 pawn could capture en passant only by exposing its
     * king on h4 to the rook on a4: the capture is illegal, so the position
     * equals the same placement reached later without an en passant square. */
    play(&g, "6n1/8/8/8/R3p2k/8/3P4/1N2K3 w - - 0 1", "d4 Nf6 Nc3 Ng8 Nb1");
    CU_ASSERT_EQUAL(g.status.repetitions, 2);
}

static void test_repetition_distinguishes_a_legal_en_passant_capture(void)
{
    game_t g;
    /* Without the rook the capture exd3 is legal right after d2-d4, so that
     * position differs from the later one with the same placement. */
    play(&g, "6n1/8/8/8/4p2k/8/3P4/1N2K3 w - - 0 1", "d4 Nf6 Nc3 Ng8 Nb1");
    CU_ASSERT_EQUAL(g.status.repetitions, 1);
}

static void test_repetition_stops_at_an_irreversible_move(void)
{
    game_t g;
    /* Same key cannot recur across a pawn move anyway; the clock bounds the look-back. */
    play(&g, NULL, "Nf3 Nf6 Ng1 Ng8 e4 e5 Nf3 Nf6 Ng1 Ng8");
    CU_ASSERT_EQUAL(g.status.repetitions, 2);
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 4);
}

static void test_names_are_stable(void)
{
    CU_ASSERT_STRING_EQUAL(status_state_name(STATUS_CHECKMATE), "checkmate");
    CU_ASSERT_STRING_EQUAL(status_state_name(STATUS_STALEMATE), "stalemate");
    CU_ASSERT_STRING_EQUAL(status_draw_reason_name(STATUS_DRAW_INSUFFICIENT_MATERIAL), "insufficient_material");
    CU_ASSERT_STRING_EQUAL(status_draw_reason_name(STATUS_DRAW_SEVENTYFIVE_MOVES), "seventyfive_moves");
    CU_ASSERT_STRING_EQUAL(status_draw_reason_name(STATUS_DRAW_FIVEFOLD_REPETITION), "fivefold_repetition");
}

/* status_insufficient_material_for: each side judged alone, by material
 * only, as chessops's hasInsufficientMaterial(color) judges it. */
static void test_insufficient_material_for_each_side(void)
{
    static const struct {
        const char *fen;
        bool white, black; /* expected for each colour */
    } cases[] = {
        { "8/8/4k3/8/8/3K4/8/8 w - - 0 1", true, true },          /* K v K */
        { "8/8/4k3/8/8/3K4/8/q7 w - - 0 1", true, false },        /* a bare king against a queen */
        { "8/8/4k3/8/8/3KN3/8/8 w - - 0 1", true, true },         /* K+N v K */
        { "8/8/4k3/8/8/3KN3/8/q7 w - - 0 1", true, false },       /* K+N v K+Q: the queen never blocks its king */
        { "8/8/4k3/8/8/3KN3/8/r7 w - - 0 1", false, false },      /* K+N v K+R: the rook can hem its king in */
        { "8/8/4k3/8/8/3KN3/8/b7 w - - 0 1", false, false },      /* K+N v K+B: each has a blocker for the other */
        { "8/8/2n1k3/8/8/3KN3/8/8 w - - 0 1", false, false },     /* K+N v K+N */
        { "8/8/4k3/4p3/8/3KN3/8/8 w - - 0 1", false, false },     /* K+N v K+P */
        { "8/8/4k3/8/8/3KNN2/8/8 w - - 0 1", false, true },       /* K+N+N v K: no mate can be forced, one can be allowed */
        { "8/8/4k3/8/8/3KNB2/8/8 w - - 0 1", false, true },       /* K+N+B v K */
        { "8/8/4k3/8/8/3KB3/8/8 w - - 0 1", true, true },         /* K+B v K */
        { "8/8/4k3/8/8/3KB3/8/q7 w - - 0 1", true, false },       /* K+B v K+Q */
        { "8/8/4k3/8/8/3KB3/8/r7 w - - 0 1", true, false },       /* K+B v K+R: rooks do not count either */
        { "8/8/3bk3/8/8/3KB3/8/8 w - - 0 1", true, true },        /* bishops on one colour (d6, e3: both dark) */
        { "8/8/2b1k3/8/8/3KB3/8/8 w - - 0 1", false, false },     /* opposite-coloured bishops */
        { "8/8/4k3/8/8/3KB3/6B1/8 w - - 0 1", false, true },      /* K+B+B on both colours v K */
        { "8/8/1b2k3/8/8/2BK4/8/B7 w - - 0 1", true, true },      /* three bishops, all dark */
        { "8/8/4k3/8/8/3KB3/8/n7 w - - 0 1", false, false },      /* K+B v K+N: the same */
        { "8/8/4k3/4p3/8/3KB3/8/8 w - - 0 1", false, false },     /* K+B v K+P: the pawn can block */
        { "8/8/4k3/8/8/3KP3/8/8 b - - 0 1", false, true },        /* a pawn */
        { "8/8/4k3/8/8/3K4/8/R7 b - - 0 1", false, true },        /* a rook */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        position_t pos;
        if (!tests_parse_fen(cases[i].fen, &pos))
            continue;
        bool white = status_insufficient_material_for(&pos, WHITE);
        bool black = status_insufficient_material_for(&pos, BLACK);
        CU_ASSERT_EQUAL(white, cases[i].white);
        CU_ASSERT_EQUAL(black, cases[i].black);
        if (white != cases[i].white || black != cases[i].black)
            fprintf(stderr, "\ninsufficient material for white/black in %s: %d/%d, expected %d/%d\n",
                    cases[i].fen, white, black, cases[i].white, cases[i].black);
    }
}

/* When neither side could mate by the game-ending rule, neither can by the
 * per-side rule: the per-side rule is never the stricter one. */
static void test_a_dead_position_by_material_is_insufficient_for_both_sides(void)
{
    static const char *const dead[] = {
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1", "8/8/4k3/8/8/3KB3/8/8 w - - 0 1", "8/8/4k3/8/8/3Kn3/8/8 b - - 0 1",
        "8/8/3bk3/8/8/3KB3/8/8 w - - 0 1", "8/8/1b2k3/8/8/2BK4/8/B7 w - - 0 1",
    };
    for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++) {
        position_t pos;
        if (!tests_parse_fen(dead[i], &pos))
            continue;
        CU_ASSERT_TRUE(status_insufficient_material(&pos));
        CU_ASSERT_TRUE(status_insufficient_material_for(&pos, WHITE));
        CU_ASSERT_TRUE(status_insufficient_material_for(&pos, BLACK));
    }
}

int test_status_register(void)
{
    CU_pSuite suite = CU_add_suite("status", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_fools_mate_is_checkmate);
    CU_ADD_TEST(suite, test_check_is_reported_in_active_game);
    CU_ADD_TEST(suite, test_stalemate);
    CU_ADD_TEST(suite, test_insufficient_material_cases);
    CU_ADD_TEST(suite, test_opposite_coloured_bishops_are_not_insufficient);
    CU_ADD_TEST(suite, test_insufficient_material_for_each_side);
    CU_ADD_TEST(suite, test_a_dead_position_by_material_is_insufficient_for_both_sides);
    CU_ADD_TEST(suite, test_seventyfive_move_rule_ends_the_game);
    CU_ADD_TEST(suite, test_mate_on_the_150th_halfmove_is_mate);
    CU_ADD_TEST(suite, test_fifty_move_rule_is_a_claim_from_100_halfmoves);
    CU_ADD_TEST(suite, test_threefold_repetition_is_a_claim_counting_the_start);
    CU_ADD_TEST(suite, test_fivefold_repetition_ends_the_game);
    CU_ADD_TEST(suite, test_repetition_needs_same_castling_rights);
    CU_ADD_TEST(suite, test_repetition_ignores_an_en_passant_square_whose_capture_is_illegal);
    CU_ADD_TEST(suite, test_repetition_distinguishes_a_legal_en_passant_capture);
    CU_ADD_TEST(suite, test_repetition_stops_at_an_irreversible_move);
    CU_ADD_TEST(suite, test_names_are_stable);
    return CUE_SUCCESS;
}
