/* Tests for the claims of rules/game.h against an opponent who left. They
 * pin down the wait scaled to the time control, when a claim may be made
 * and by whom, the rules that forbid it, and the ending it makes, which a
 * stored game restores. */
#include <string.h>

#include "../../rules/game.h"
#include "../support/tests.h"

enum { SECOND = 1000, MINUTE = 60000, BASE = 40 * SECOND };

static void start(game_t *g)
{
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, &pos, NULL, 0), FEN_OK);
    game_start(g, &pos);
}

/* A game with the same Fischer clock for both sides (initial_ms 0: none). */
static void clocked(game_t *g, int64_t initial_ms, int64_t increment_ms)
{
    start(g);
    CU_ASSERT_FATAL(game_set_rules(g, initial_ms, increment_ms, GAME_TAKEBACK_AGREEMENT));
}

static void play(game_t *g, const char *san, int64_t now_ms)
{
    game_played_t played;
    CU_ASSERT_EQUAL_FATAL(game_move(g, (color_t)g->pos.side_to_move, san, strlen(san), GAME_MAX_PLIES, now_ms, &played),
                          GAME_OK);
}

static void test_the_wait_scales_with_the_time_control(void)
{
    game_t g;
    clocked(&g, MINUTE, 0); /* bullet */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), BASE);
    clocked(&g, 3 * MINUTE, 2 * SECOND); /* blitz: 3 min + 40 x 2 s = 4 min 20 s */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), BASE);
    clocked(&g, 5 * MINUTE, 5 * SECOND); /* 5 min + 40 x 5 s = 8 min 20 s: rapid */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 2 * BASE);
    clocked(&g, 15 * MINUTE, 10 * SECOND); /* 15 min + 40 x 10 s = 21 min 40 s: rapid */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 2 * BASE);
    clocked(&g, 30 * MINUTE, 0); /* classical */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 3 * BASE);
    clocked(&g, 0, 0); /* no clock: the longest wait */
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 3 * BASE);
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, 0), 0); /* claims switched off */
    clocked(&g, 0, 0);
    CU_ASSERT_FATAL(game_set_correspondence(&g, 3, 86400000, 0));
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 0); /* its move deadline ends it instead */
}

static void test_a_delay_counts_as_an_increment_for_the_speed(void)
{
    game_t g;
    start(&g);
    game_control_t c = { .periods = { { 0, 3 * MINUTE } }, .period_count = 1, .delay_ms = 10 * SECOND,
                         .delay_mode = GAME_DELAY_SIMPLE };
    CU_ASSERT_FATAL(game_set_controls(&g, &c, &c));
    CU_ASSERT_EQUAL(game_claim_wait_ms(&g, BASE), 2 * BASE); /* 3 min + 40 x 10 s = 9 min 40 s */
}

static void test_the_wait_counts_from_the_later_of_the_turns_start_and_the_last_sign(void)
{
    game_t g;
    clocked(&g, 0, 0);
    play(&g, "e4", 1000);
    play(&g, "e5", 2000);
    g.clock.turn_started_ms = 5000; /* White's turn began then */
    int64_t at = -1;
    /* White left while Black thought: counted from White's turn. */
    CU_ASSERT_EQUAL(game_claim_at(&g, BLACK, GAME_CLAIM_VICTORY, 3000, BASE, &at), GAME_OK);
    CU_ASSERT_EQUAL(at, 5000 + 3 * BASE);
    /* White was last seen during its turn: counted from then. */
    CU_ASSERT_EQUAL(game_claim_at(&g, BLACK, GAME_CLAIM_VICTORY, 9000, BASE, &at), GAME_OK);
    CU_ASSERT_EQUAL(at, 9000 + 3 * BASE);
    /* No sign of White at all. */
    CU_ASSERT_EQUAL(game_claim_at(&g, BLACK, GAME_CLAIM_DRAW, 0, BASE, &at), GAME_OK);
    CU_ASSERT_EQUAL(at, 5000 + 3 * BASE);
}

static void test_only_the_player_whose_opponent_is_to_move_and_gone_may_claim(void)
{
    game_t g;
    clocked(&g, 0, 0);
    play(&g, "e4", 1000);
    play(&g, "e5", 2000);
    int64_t at = -1;
    CU_ASSERT_EQUAL(game_claim(&g, WHITE, GAME_CLAIM_VICTORY, 0, BASE, 10 * MINUTE, &at), GAME_EOPPONENT_NOT_GONE);
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, -1, BASE, 10 * MINUTE, &at), GAME_EOPPONENT_NOT_GONE);
    CU_ASSERT_EQUAL(at, 0); /* here: no time to wait for */
    /* Gone, not long enough: the time a claim becomes possible is told. */
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, 2000, BASE, 2000 + 3 * BASE - 1, &at),
                    GAME_EOPPONENT_NOT_GONE);
    CU_ASSERT_EQUAL(at, 2000 + 3 * BASE);
    CU_ASSERT_FALSE(game_is_over(&g));
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, 2000, BASE, 2000 + 3 * BASE, &at), GAME_OK);
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT);
    CU_ASSERT_EQUAL(g.result, GAME_BLACK_WINS);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_ABANDONMENT);
    CU_ASSERT_STRING_EQUAL(game_termination_name(g.termination), "abandonment");
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_DRAW, 2000, BASE, 10 * MINUTE, &at), GAME_EOVER);
}

static void test_a_draw_may_be_claimed_under_no_claim_win_but_not_a_win(void)
{
    game_t g;
    clocked(&g, 0, 0);
    game_rules_t rules = { .flags = GAME_RULE_NO_CLAIM_WIN };
    CU_ASSERT_FATAL(game_set_game_rules(&g, &rules));
    play(&g, "d4", 1000);
    play(&g, "d5", 2000);
    int64_t at;
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, 0, BASE, 10 * MINUTE, &at), GAME_ECLAIM_NOT_ALLOWED);
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_DRAW, 0, BASE, 10 * MINUTE, &at), GAME_OK);
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT);
    CU_ASSERT_EQUAL(g.result, GAME_DRAWN);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_ABANDONMENT);
}

static void test_no_claim_before_both_players_moved_nor_in_correspondence(void)
{
    game_t g;
    clocked(&g, 0, 0);
    play(&g, "e4", 1000);
    int64_t at;
    CU_ASSERT_EQUAL(game_claim(&g, WHITE, GAME_CLAIM_VICTORY, 0, BASE, 10 * MINUTE, &at), GAME_ECLAIM_NOT_ALLOWED);
    clocked(&g, 0, 0);
    CU_ASSERT_FATAL(game_set_correspondence(&g, 1, 86400000, 0));
    play(&g, "e4", 1000);
    play(&g, "e5", 2000);
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_DRAW, 0, BASE, 10 * MINUTE, &at), GAME_ECLAIM_NOT_ALLOWED);
}

static void test_a_win_claimed_by_a_side_that_cannot_mate_is_a_draw(void)
{
    static const char fen[] = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"; /* Black: a bare king */
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse(fen, strlen(fen), 0, &pos, NULL, 0), FEN_OK);
    game_t g;
    game_start(&g, &pos);
    play(&g, "Kd2", 1000);
    play(&g, "Kd7", 2000);
    int64_t at;
    /* White to move and gone: Black claims the win, and cannot mate. */
    CU_ASSERT_EQUAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, 0, BASE, 10 * MINUTE, &at), GAME_OK);
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT);
    CU_ASSERT_EQUAL(g.result, GAME_DRAWN);
}

static void test_a_claimed_ending_restores_from_its_parts(void)
{
    game_t g;
    clocked(&g, 3 * MINUTE, 0);
    play(&g, "e4", 1000);
    play(&g, "e5", 2000);
    int64_t at;
    CU_ASSERT_EQUAL_FATAL(game_claim(&g, BLACK, GAME_CLAIM_VICTORY, 0, BASE, 2000 + BASE, &at), GAME_OK);
    CU_ASSERT(g.clock.remaining_ms[WHITE] > 0); /* no flag fell */
    game_t r;
    CU_ASSERT_EQUAL_FATAL(game_restore(&r, &g.initial, &g.pos, g.history, g.history_count, g.ply_count, g.state,
                                       g.result, g.termination, g.draw_offer),
                          GAME_OK);
    CU_ASSERT_EQUAL(game_restore_rules(&r, g.takeback, g.takeback_offer, &g.clock, &g.rules), GAME_OK);
    /* A claim's ending with a win for the side to move does not fit. */
    CU_ASSERT_NOT_EQUAL(game_restore(&r, &g.initial, &g.pos, g.history, g.history_count, g.ply_count, g.state,
                                     GAME_WHITE_WINS, g.termination, g.draw_offer),
                        GAME_OK);
}

int test_game_claim_register(void)
{
    CU_pSuite suite = CU_add_suite("game_claim", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_the_wait_scales_with_the_time_control);
    CU_ADD_TEST(suite, test_a_delay_counts_as_an_increment_for_the_speed);
    CU_ADD_TEST(suite, test_the_wait_counts_from_the_later_of_the_turns_start_and_the_last_sign);
    CU_ADD_TEST(suite, test_only_the_player_whose_opponent_is_to_move_and_gone_may_claim);
    CU_ADD_TEST(suite, test_a_draw_may_be_claimed_under_no_claim_win_but_not_a_win);
    CU_ADD_TEST(suite, test_no_claim_before_both_players_moved_nor_in_correspondence);
    CU_ADD_TEST(suite, test_a_win_claimed_by_a_side_that_cannot_mate_is_a_draw);
    CU_ADD_TEST(suite, test_a_claimed_ending_restores_from_its_parts);
    return CUE_SUCCESS;
}
