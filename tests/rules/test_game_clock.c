/* Tests for rules/game_clock.c: each kind of clock against times worked
 * out by hand (Bronstein and simple delay, periods, odds, a start time,
 * time given). Also correspondence and idle deadlines, the rules a game
 * switches, draw odds, and the clock written into move-list entries. */
#include <stdio.h>
#include <string.h>

#include "../../rules/game.h"
#include "../support/tests.h"

enum { SECOND = 1000, MINUTE = 60000 };

static void start(game_t *g)
{
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, &pos, NULL, 0), FEN_OK);
    game_start(g, &pos);
}

/* One control for both sides: a single period of ms, with an increment
 * and a delay of the given mode. */
static game_control_t control(int64_t ms, int64_t increment_ms, int64_t delay_ms, game_delay_mode_t mode)
{
    return (game_control_t){
        .periods = { { 0, ms } }, .period_count = 1, .increment_ms = increment_ms, .delay_ms = delay_ms, .delay_mode = mode
    };
}

static void timed(game_t *g, game_control_t white, game_control_t black)
{
    start(g);
    CU_ASSERT_FATAL(game_set_controls(g, &white, &black));
    CU_ASSERT_FATAL(game_set_first_move(g, 0, 0));
}

/* Plays the move (SAN) for the side to move at now_ms; returns the
 * mover's clock the move-list entry keeps. */
static int64_t move_at(game_t *g, const char *san, int64_t now_ms)
{
    game_played_t played;
    game_status_t status = game_move(g, (color_t)g->pos.side_to_move, san, strlen(san), GAME_MAX_PLIES, now_ms, &played);
    if (status != GAME_OK)
        fprintf(stderr, "\n%s at %lld: %s\n", san, (long long)now_ms, game_status_name(status));
    CU_ASSERT_EQUAL_FATAL(status, GAME_OK);
    CU_ASSERT_EQUAL(played.clocked, game_is_timed(g));
    return played.clock_ms;
}

static void test_bronstein_delay_gives_back_the_time_a_move_took_up_to_the_delay(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 5 * SECOND, GAME_DELAY_BRONSTEIN), control(MINUTE, 0, 5 * SECOND, GAME_DELAY_BRONSTEIN));
    move_at(&g, "e4", 1000);
    move_at(&g, "e5", 10000); /* the second ply: the clock runs from here */
    /* White thinks 3 s (under the delay): all of it comes back. */
    CU_ASSERT_EQUAL(move_at(&g, "Nf3", 13000), MINUTE);
    /* Black thinks 8 s: 5 s come back. */
    CU_ASSERT_EQUAL(move_at(&g, "Nc6", 21000), MINUTE - 8000 + 5000);
    /* While White thinks, its clock counts down at once, and its flag falls at its time's end. */
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 23000), MINUTE - 2000);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 21000 + MINUTE);
}

static void test_simple_delay_waits_before_the_clock_counts_down(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 5 * SECOND, GAME_DELAY_SIMPLE), control(MINUTE, 0, 5 * SECOND, GAME_DELAY_SIMPLE));
    move_at(&g, "e4", 1000);
    move_at(&g, "e5", 10000);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 14000), MINUTE); /* 4 s in: the delay still runs */
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 17000), MINUTE - 2000);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 10000 + 5000 + MINUTE);
    CU_ASSERT_EQUAL(move_at(&g, "Nf3", 13000), MINUTE);
    CU_ASSERT_EQUAL(move_at(&g, "Nc6", 21000), MINUTE - 3000);
    CU_ASSERT_FALSE(game_flag(&g, 21000 + 5000 + MINUTE - 1));
    CU_ASSERT_TRUE(game_flag(&g, 21000 + 5000 + MINUTE));
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_TIME_FORFEIT);
    CU_ASSERT_EQUAL(g.result, GAME_BLACK_WINS);
}

/* Two moves in 1 minute, then 30 s for the rest with 1 s a move. */
static game_control_t two_periods(void)
{
    return (game_control_t){ .periods = { { 2, MINUTE }, { 0, 30 * SECOND } }, .period_count = 2, .increment_ms = SECOND };
}

static void test_a_period_adds_its_time_when_the_moves_before_it_are_made(void)
{
    game_t g;
    timed(&g, two_periods(), two_periods());
    CU_ASSERT_EQUAL(move_at(&g, "e4", 0), MINUTE);  /* the free plies earn no increment */
    CU_ASSERT_EQUAL(move_at(&g, "e5", 0), MINUTE);
    /* White's second move, 10 s in: the period ends, +30 s, and +1 s. */
    CU_ASSERT_EQUAL(move_at(&g, "Nf3", 10000), MINUTE - 10000 + 30000 + 1000);
    CU_ASSERT_EQUAL(move_at(&g, "Nc6", 12000), MINUTE - 2000 + 30000 + 1000);
    /* The third move is in the last period: the increment alone. */
    CU_ASSERT_EQUAL(move_at(&g, "Bb5", 15000), 81000 - 3000 + 1000);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 2), 31000);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 4), 1000);
}

/* The engine is told the moves left in the period (UCI's movestogo): two
 * moves a side in the first period, none in the last. */
static void test_moves_to_go_count_down_to_the_next_period(void)
{
    game_t g;
    timed(&g, two_periods(), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_EQUAL(game_clock_moves_to_go(&g, WHITE), 2);
    CU_ASSERT_EQUAL(game_clock_moves_to_go(&g, BLACK), 0); /* sudden death */
    move_at(&g, "e4", 0);
    CU_ASSERT_EQUAL(game_clock_moves_to_go(&g, WHITE), 1);
    move_at(&g, "e5", 0);
    move_at(&g, "Nf3", 1000);
    CU_ASSERT_EQUAL(game_clock_moves_to_go(&g, WHITE), 0);
    game_t untimed;
    start(&untimed);
    CU_ASSERT_EQUAL(game_clock_moves_to_go(&untimed, WHITE), 0);
}

static void test_a_takeback_takes_back_the_period_its_move_earned(void)
{
    game_t g;
    timed(&g, two_periods(), two_periods());
    char line[256];
    size_t length = 0;
    const char *moves[] = { "e4", "e5", "Nf3" };
    int64_t at[] = { 0, 0, 10000 };
    for (int i = 0; i < 3; i++) {
        game_played_t played;
        CU_ASSERT_EQUAL_FATAL(game_move(&g, (color_t)g.pos.side_to_move, moves[i], strlen(moves[i]), GAME_MAX_PLIES,
                                        at[i], &played),
                              GAME_OK);
        if (length)
            line[length++] = ' ';
        length += game_line_entry(&played, line + length);
    }
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 81000);
    g.takeback = GAME_TAKEBACK_FREE;
    CU_ASSERT_EQUAL_FATAL(game_undo(&g, WHITE, line, length, 11000), GAME_OK);
    /* The 10 s spent stay spent; the period and the increment go. */
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], MINUTE - 10000);
}

static void test_each_side_may_have_its_own_clock(void)
{
    game_t g;
    timed(&g, control(5 * MINUTE, 0, 0, GAME_DELAY_NONE), control(4 * MINUTE, 2 * SECOND, 0, GAME_DELAY_NONE));
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 0), 5 * MINUTE);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, 0), 4 * MINUTE);
    move_at(&g, "e4", 0);
    move_at(&g, "e5", 0);
    CU_ASSERT_EQUAL(move_at(&g, "Nf3", 1000), 5 * MINUTE - 1000);
    CU_ASSERT_EQUAL(move_at(&g, "Nc6", 2000), 4 * MINUTE - 1000 + 2000);
}

static void test_controls_out_of_bounds_are_refused(void)
{
    game_t g;
    start(&g);
    game_t before = g;
    const game_control_t bad[] = {
        control(999, 0, 0, GAME_DELAY_NONE),
        control(MINUTE, 0, 5000, GAME_DELAY_NONE),            /* a delay with no mode */
        control(MINUTE, 0, 0, GAME_DELAY_BRONSTEIN),          /* a mode with no delay */
        control(MINUTE, 0, GAME_CLOCK_DELAY_MAX + 1, GAME_DELAY_SIMPLE),
        control(MINUTE, 0, 5000, GAME_DELAY_MODE_COUNT),
        { .periods = { { 0, MINUTE }, { 0, MINUTE } }, .period_count = 2 }, /* a first period of no moves */
        { .periods = { { 40, MINUTE }, { 10, MINUTE } }, .period_count = 2 }, /* a last one of some */
        { .periods = { { 40, MINUTE } }, .period_count = 1 },
        { .periods = { { 0, MINUTE }, { 0, MINUTE } }, .period_count = 1 }, /* a period past the count */
        { .periods = { { 0, MINUTE } }, .period_count = GAME_PERIODS_MAX + 1 },
    };
    game_control_t ok = control(MINUTE, 0, 0, GAME_DELAY_NONE);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_FALSE(game_control_ok(&bad[i]));
        CU_ASSERT_FALSE(game_set_controls(&g, &ok, &bad[i]));
        CU_ASSERT_FALSE(game_set_controls(&g, &bad[i], &ok));
        CU_ASSERT(!memcmp(&g, &before, sizeof g));
    }
    game_control_t fide = { .periods = { { 40, 90 * MINUTE }, { 0, 30 * MINUTE } }, .period_count = 2, .increment_ms = 30 * SECOND };
    CU_ASSERT_TRUE(game_control_ok(&fide));
}

static void test_a_start_time_runs_the_clock_without_moves_and_loses_on_time(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_FATAL(game_set_first_move(&g, 30000, 0));
    CU_ASSERT_FATAL(game_set_start_at(&g, 5000));
    CU_ASSERT_EQUAL(g.clock.first_move_ms, 0); /* a start time replaces the grace */
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 4000), MINUTE);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 6000), MINUTE - 1000);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 5000 + MINUTE);
    CU_ASSERT_FALSE(game_flag(&g, 5000 + MINUTE - 1));
    CU_ASSERT_TRUE(game_flag(&g, 5000 + MINUTE));
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT); /* not aborted: the clock ran */
    CU_ASSERT_EQUAL(g.result, GAME_BLACK_WINS);
    game_t untimed;
    start(&untimed);
    CU_ASSERT_FALSE(game_set_start_at(&untimed, 5000));
}

static void test_a_move_before_the_start_time_costs_nothing(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_FATAL(game_set_start_at(&g, 50000));
    CU_ASSERT_EQUAL(move_at(&g, "e4", 10000), MINUTE);
    /* Black's clock runs from the start time, not from White's move. */
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, 40000), MINUTE);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, 52000), MINUTE - 2000);
    CU_ASSERT_EQUAL(move_at(&g, "e5", 52000), MINUTE - 2000);
}

static void test_both_players_start_the_clocks_once(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_FATAL(game_set_first_move(&g, 30000, 0));
    CU_ASSERT_EQUAL(game_start_clocks(&g, 7000), GAME_OK);
    CU_ASSERT_EQUAL(g.clock.first_move_ms, 0);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 7000 + MINUTE);
    game_t before = g;
    CU_ASSERT_EQUAL(game_start_clocks(&g, 8000), GAME_ECLOCK_RUNNING);
    CU_ASSERT(!memcmp(&g, &before, sizeof g));
    game_t untimed;
    start(&untimed);
    CU_ASSERT_EQUAL(game_start_clocks(&untimed, 8000), GAME_ENO_CLOCK);
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    move_at(&g, "e4", 0);
    move_at(&g, "e5", 0);
    CU_ASSERT_EQUAL(game_start_clocks(&g, 8000), GAME_ECLOCK_RUNNING);
    /* A start time still to come may be brought forward. */
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_FATAL(game_set_start_at(&g, 50000));
    CU_ASSERT_EQUAL(game_start_clocks(&g, 8000), GAME_OK);
    CU_ASSERT_EQUAL(g.clock.start_at_ms, 8000);
}

static void test_a_player_gives_time_within_the_bounds(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    move_at(&g, "e4", 0);
    move_at(&g, "e5", 0);
    CU_ASSERT_EQUAL(game_give_time(&g, BLACK, 15000, 4000), GAME_OK); /* White, to move, gets 15 s */
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 4000), MINUTE - 4000 + 15000);
    CU_ASSERT_EQUAL(g.clock.given_ms[BLACK], 15000);
    game_t before = g;
    CU_ASSERT_EQUAL(game_give_time(&g, BLACK, 0, 5000), GAME_EGIVE_TIME_TOO_MUCH);
    CU_ASSERT_EQUAL(game_give_time(&g, BLACK, GAME_GIVE_TIME_MAX + 1, 5000), GAME_EGIVE_TIME_TOO_MUCH);
    CU_ASSERT(!memcmp(&g, &before, sizeof g));
    int64_t given = g.clock.given_ms[BLACK];
    while (given + GAME_GIVE_TIME_MAX <= GAME_GIVE_TIME_TOTAL_MAX) {
        CU_ASSERT_EQUAL_FATAL(game_give_time(&g, BLACK, GAME_GIVE_TIME_MAX, 5000), GAME_OK);
        given += GAME_GIVE_TIME_MAX;
    }
    before = g;
    CU_ASSERT_EQUAL(game_give_time(&g, BLACK, GAME_GIVE_TIME_TOTAL_MAX - given + 1, 6000), GAME_EGIVE_TIME_TOO_MUCH);
    CU_ASSERT(!memcmp(&g, &before, sizeof g));
    game_rules_t rules = { .flags = GAME_RULE_NO_GIVE_TIME };
    CU_ASSERT_FATAL(game_set_game_rules(&g, &rules));
    CU_ASSERT_EQUAL(game_give_time(&g, WHITE, 1000, 6000), GAME_EGIVE_TIME_NOT_ALLOWED);
    game_t untimed;
    start(&untimed);
    CU_ASSERT_EQUAL(game_give_time(&untimed, WHITE, 1000, 6000), GAME_EGIVE_TIME_NOT_ALLOWED);
}

static void test_a_correspondence_move_is_due_its_days_after_the_turn_began(void)
{
    game_t g;
    start(&g);
    CU_ASSERT_FATAL(game_set_correspondence(&g, 3, SECOND, 100)); /* three one-second "days" */
    CU_ASSERT_TRUE(game_is_correspondence(&g));
    CU_ASSERT_FALSE(game_is_timed(&g));
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 3100);
    move_at(&g, "e4", 2000);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 5000); /* each move resets the deadline */
    game_t before_both = g;
    CU_ASSERT_TRUE(game_flag(&before_both, 5000));
    CU_ASSERT_EQUAL(before_both.state, GAME_ABORTED); /* Black never moved */
    move_at(&g, "e5", 4000);
    CU_ASSERT_FALSE(game_flag(&g, 6999));
    CU_ASSERT_TRUE(game_flag(&g, 7000));
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_TIME_FORFEIT);
    CU_ASSERT_EQUAL(g.result, GAME_BLACK_WINS);
    game_t bad;
    start(&bad);
    CU_ASSERT_FALSE(game_set_correspondence(&bad, 0, SECOND, 0));
    CU_ASSERT_FALSE(game_set_correspondence(&bad, GAME_DAYS_PER_MOVE_MAX + 1, SECOND, 0));
    CU_ASSERT_FALSE(game_set_correspondence(&bad, 1, GAME_DAY_MS_MAX + 1, 0));
    timed(&bad, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    CU_ASSERT_FALSE(game_set_correspondence(&bad, 1, SECOND, 0));
}

static void test_an_idle_game_ends_lost_to_the_side_to_move_or_aborted_before_both_moved(void)
{
    game_t g;
    start(&g);
    CU_ASSERT_FATAL(game_set_first_move(&g, 0, 1000));
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0); /* no idle end set */
    g.clock.idle_ms = 10000;
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 11000);
    game_t early = g;
    CU_ASSERT_TRUE(game_flag(&early, 11000));
    CU_ASSERT_EQUAL(early.state, GAME_ABORTED);
    move_at(&g, "e4", 2000);
    move_at(&g, "e5", 3000);
    move_at(&g, "Qh5", 4000);
    CU_ASSERT_FALSE(game_flag(&g, 13999));
    CU_ASSERT_TRUE(game_flag(&g, 14000));
    CU_ASSERT_EQUAL(g.state, GAME_TIMEOUT);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_IDLE_END);
    CU_ASSERT_EQUAL(g.result, GAME_WHITE_WINS);
}

static void test_the_rules_refuse_aborts_and_early_draw_offers_but_not_claims(void)
{
    game_t g;
    start(&g);
    game_rules_t rules = { .flags = GAME_RULE_NO_ABORT, .draw_offers_from_move = 3 };
    CU_ASSERT_FATAL(game_set_game_rules(&g, &rules));
    CU_ASSERT_EQUAL(game_abort(&g, WHITE, 0), GAME_EABORT_NOT_ALLOWED);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_EDRAW_TOO_EARLY);
    move_at(&g, "Nf3", 0);
    move_at(&g, "Nf6", 0);
    move_at(&g, "Ng1", 0);
    move_at(&g, "Ng8", 0);
    CU_ASSERT_EQUAL(g.pos.fullmove_number, 3);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_AGREEMENT);
    game_t bad;
    start(&bad);
    const game_rules_t out[] = { { .flags = 8 }, { .draw_offers_from_move = -1 }, { .draw_odds = 3 } };
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        CU_ASSERT_FALSE(game_set_game_rules(&bad, &out[i]));
}

static void test_a_draw_with_odds_is_a_win_for_the_side_that_has_them(void)
{
    game_t g;
    start(&g);
    game_rules_t rules = { .draw_odds = 1 + BLACK };
    CU_ASSERT_FATAL(game_set_game_rules(&g, &rules));
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.state, GAME_DRAW);
    CU_ASSERT_EQUAL(g.result, GAME_BLACK_WINS);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_DRAW_ODDS);
    /* A win stays a win. */
    start(&g);
    CU_ASSERT_FATAL(game_set_game_rules(&g, &rules));
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.result, GAME_WHITE_WINS);
    CU_ASSERT_EQUAL(g.termination, GAME_TERMINATION_RESIGNATION);
}

static void test_move_list_entries_keep_the_movers_clock(void)
{
    game_t g;
    timed(&g, control(MINUTE, 0, 0, GAME_DELAY_NONE), control(MINUTE, 0, 0, GAME_DELAY_NONE));
    game_played_t played;
    CU_ASSERT_EQUAL_FATAL(game_move(&g, WHITE, "e4", 2, GAME_MAX_PLIES, 0, &played), GAME_OK);
    char line[256];
    size_t length = game_line_entry(&played, line);
    CU_ASSERT_STRING_EQUAL(line, "e2e4:e4:60000");
    CU_ASSERT_EQUAL_FATAL(game_move(&g, BLACK, "e5", 2, GAME_MAX_PLIES, 0, &played), GAME_OK);
    line[length++] = ' ';
    length += game_line_entry(&played, line + length);
    memcpy(line + length, " g1f3:Nf3", 10);
    length += 9;
    int64_t clocks[4];
    CU_ASSERT_EQUAL(game_line_clocks(line, length, clocks, 4), 3);
    CU_ASSERT_EQUAL(clocks[0], MINUTE);
    CU_ASSERT_EQUAL(clocks[1], MINUTE);
    CU_ASSERT_EQUAL(clocks[2], -1); /* an entry without a clock */
    CU_ASSERT_EQUAL(game_line_clocks(line, length, clocks, 2), -1);
    CU_ASSERT_EQUAL(game_line_clocks("e2e4:e4:x", 9, clocks, 4), -1);
    /* An untimed game's entries have none. */
    start(&g);
    CU_ASSERT_EQUAL_FATAL(game_move(&g, WHITE, "e4", 2, GAME_MAX_PLIES, 0, &played), GAME_OK);
    game_line_entry(&played, line);
    CU_ASSERT_STRING_EQUAL(line, "e2e4:e4");
}

int test_game_clock_register(void)
{
    CU_pSuite suite = CU_add_suite("game_clock", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_bronstein_delay_gives_back_the_time_a_move_took_up_to_the_delay);
    CU_ADD_TEST(suite, test_simple_delay_waits_before_the_clock_counts_down);
    CU_ADD_TEST(suite, test_a_period_adds_its_time_when_the_moves_before_it_are_made);
    CU_ADD_TEST(suite, test_a_takeback_takes_back_the_period_its_move_earned);
    CU_ADD_TEST(suite, test_each_side_may_have_its_own_clock);
    CU_ADD_TEST(suite, test_controls_out_of_bounds_are_refused);
    CU_ADD_TEST(suite, test_a_start_time_runs_the_clock_without_moves_and_loses_on_time);
    CU_ADD_TEST(suite, test_a_move_before_the_start_time_costs_nothing);
    CU_ADD_TEST(suite, test_both_players_start_the_clocks_once);
    CU_ADD_TEST(suite, test_a_player_gives_time_within_the_bounds);
    CU_ADD_TEST(suite, test_a_correspondence_move_is_due_its_days_after_the_turn_began);
    CU_ADD_TEST(suite, test_an_idle_game_ends_lost_to_the_side_to_move_or_aborted_before_both_moved);
    CU_ADD_TEST(suite, test_the_rules_refuse_aborts_and_early_draw_offers_but_not_claims);
    CU_ADD_TEST(suite, test_a_draw_with_odds_is_a_win_for_the_side_that_has_them);
    CU_ADD_TEST(suite, test_move_list_entries_keep_the_movers_clock);
    CU_ADD_TEST(suite, test_moves_to_go_count_down_to_the_next_period);
    return CUE_SUCCESS;
}
