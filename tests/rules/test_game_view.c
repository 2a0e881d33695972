/* Tests for rules/game_view.c: the game a spectator sees some plies
 * behind, its position and moves, its clocks of that moment, no offer, and
 * the start when more plies are hidden than were played. */
#include <stdio.h>
#include <string.h>

#include "../../rules/fen.h"
#include "../../rules/game.h"
#include "../../rules/game_view.h"
#include "../support/tests.h"

enum { SECOND = 1000, MINUTE = 60000 };

/* A game and its move-list text, as the store keeps them. */
typedef struct {
    game_t game;
    char line[1024];
    size_t length;
} played_game_t;

static void start_timed(played_game_t *p, int64_t initial_ms, int64_t increment_ms)
{
    position_t pos;
    memset(p, 0, sizeof *p);
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, &pos, NULL, 0), FEN_OK);
    game_start(&p->game, &pos);
    if (initial_ms)
        CU_ASSERT_FATAL(game_set_rules(&p->game, initial_ms, increment_ms, GAME_TAKEBACK_AGREEMENT));
    CU_ASSERT_FATAL(game_set_first_move(&p->game, 0, 0));
}

/* Plays san for the side to move at now_ms and appends its entry. */
static void play(played_game_t *p, const char *san, int64_t now_ms)
{
    game_played_t played;
    char entry[GAME_LINE_ENTRY_SIZE];
    CU_ASSERT_EQUAL_FATAL(game_move(&p->game, (color_t)p->game.pos.side_to_move, san, strlen(san), GAME_MAX_PLIES,
                                    now_ms, &played),
                          GAME_OK);
    size_t n = game_line_entry(&played, entry);
    if (p->length)
        p->line[p->length++] = ' ';
    memcpy(p->line + p->length, entry, n);
    p->length += n;
    p->line[p->length] = '\0';
}

static void fen_of(const game_t *g, char fen[FEN_BUFFER_SIZE]) { fen_format(&g->pos, fen, FEN_BUFFER_SIZE); }

static void test_a_view_two_plies_behind_shows_the_position_before_the_last_two_moves(void)
{
    played_game_t p, before;
    start_timed(&p, 0, 0);
    start_timed(&before, 0, 0);
    const char *moves[] = { "e4", "e5", "Nf3", "Nc6", "Bb5" };
    for (int i = 0; i < 5; i++) {
        play(&p, moves[i], 0);
        if (i < 3)
            play(&before, moves[i], 0);
    }
    game_t view;
    int hidden = -1;
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 2, 0, &view, &hidden), GAME_OK);
    char got[FEN_BUFFER_SIZE], want[FEN_BUFFER_SIZE];
    fen_of(&view, got);
    fen_of(&before.game, want);
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_EQUAL(view.ply_count, 3);
    CU_ASSERT_EQUAL(hidden, 2);
    CU_ASSERT_EQUAL(view.state, GAME_ACTIVE);
    CU_ASSERT_EQUAL(view.pos.side_to_move, BLACK);
}

static void test_a_view_shows_the_clocks_of_its_moment(void)
{
    played_game_t p;
    start_timed(&p, 5 * MINUTE, 2 * SECOND);
    /* The clock runs from the third ply: White thinks 10 s, Black 20 s, White 30 s, Black 40 s. */
    play(&p, "e4", 1000);
    play(&p, "e5", 2000);
    play(&p, "Nf3", 12000);
    play(&p, "Nc6", 32000);
    play(&p, "Bb5", 62000);
    play(&p, "a6", 102000);
    game_t view;
    int hidden;
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 2, 500000, &view, &hidden), GAME_OK);
    /* Shown: 1. e4 e5 2. Nf3 Nc6; White after Nf3: 5:00 - 10 s + 2 s; Black after Nc6: 5:00 - 20 s + 2 s. */
    CU_ASSERT_EQUAL(game_clock_remaining(&view, WHITE, 500000), 5 * MINUTE - 8 * SECOND);
    CU_ASSERT_EQUAL(game_clock_remaining(&view, BLACK, 500000), 5 * MINUTE - 18 * SECOND);
    /* The live game's figures differ: the view holds none of the later moves' time. */
    CU_ASSERT_NOT_EQUAL(game_clock_remaining(&p.game, WHITE, 102000), 5 * MINUTE - 8 * SECOND);
    /* One ply behind, Black's clock is still the one after e5 (the first two plies are free). */
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 3, 500000, &view, &hidden), GAME_OK);
    CU_ASSERT_EQUAL(game_clock_remaining(&view, WHITE, 500000), 5 * MINUTE - 8 * SECOND);
    CU_ASSERT_EQUAL(game_clock_remaining(&view, BLACK, 500000), 5 * MINUTE);
}

static void test_a_view_hides_draw_and_takeback_offers(void)
{
    played_game_t p;
    start_timed(&p, 0, 0);
    play(&p, "e4", 0);
    play(&p, "e5", 0);
    play(&p, "Nf3", 0);
    CU_ASSERT_EQUAL_FATAL(game_draw(&p.game, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    int back = 0;
    CU_ASSERT_EQUAL_FATAL(game_takeback(&p.game, WHITE, GAME_TAKEBACK_OFFER, p.line, p.length, 0, &back), GAME_OK);
    CU_ASSERT_EQUAL_FATAL(p.game.draw_offer, GAME_OFFER_WHITE);
    CU_ASSERT_EQUAL_FATAL(p.game.takeback_offer, GAME_OFFER_WHITE);
    game_t view;
    int hidden;
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 1, 0, &view, &hidden), GAME_OK);
    CU_ASSERT_EQUAL(view.draw_offer, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(view.takeback_offer, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(view.takeback, GAME_TAKEBACK_AGREEMENT);
    /* A delay of 0 hides no move, and still no offer. */
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 0, 0, &view, &hidden), GAME_OK);
    CU_ASSERT_EQUAL(hidden, 0);
    CU_ASSERT_EQUAL(view.ply_count, 3);
    CU_ASSERT_EQUAL(view.draw_offer, GAME_OFFER_NONE);
}

static void test_a_delay_longer_than_the_game_shows_its_start(void)
{
    played_game_t p;
    start_timed(&p, 3 * MINUTE, 0);
    play(&p, "d4", 0);
    play(&p, "d5", 0);
    play(&p, "c4", 5000);
    game_t view;
    int hidden;
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 20, 9000, &view, &hidden), GAME_OK);
    char got[FEN_BUFFER_SIZE];
    fen_of(&view, got);
    CU_ASSERT_STRING_EQUAL(got, FEN_START);
    CU_ASSERT_EQUAL(hidden, 3);
    CU_ASSERT_EQUAL(view.ply_count, 0);
    CU_ASSERT_EQUAL(game_clock_remaining(&view, WHITE, 9000), 3 * MINUTE);
    CU_ASSERT_EQUAL(game_clock_remaining(&view, BLACK, 9000), 3 * MINUTE);
    CU_ASSERT_FALSE(game_clock_running(&view));
}

static void test_a_view_of_a_finished_game_is_in_progress_and_a_bad_line_is_refused(void)
{
    played_game_t p;
    start_timed(&p, 0, 0);
    const char *mate[] = { "f3", "e5", "g4", "Qh4#" };
    for (int i = 0; i < 4; i++)
        play(&p, mate[i], 0);
    CU_ASSERT_EQUAL_FATAL(p.game.state, GAME_CHECKMATE);
    game_t view;
    int hidden;
    CU_ASSERT_EQUAL_FATAL(game_view_at(&p.game, p.line, p.length, 1, 0, &view, &hidden), GAME_OK);
    CU_ASSERT_EQUAL(view.state, GAME_ACTIVE);
    CU_ASSERT_EQUAL(view.result, GAME_RESULT_NONE);
    CU_ASSERT_EQUAL(view.termination, GAME_TERMINATION_NONE);
    memset(&view, 0x5a, sizeof view);
    game_t untouched = view;
    CU_ASSERT_EQUAL(game_view_at(&p.game, "e2e5:e5", 7, 0, 0, &view, &hidden), GAME_EBAD_RECORD);
    CU_ASSERT_EQUAL(memcmp(&view, &untouched, sizeof view), 0);
}

int test_game_view_register(void)
{
    CU_pSuite suite = CU_add_suite("game_view", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_view_two_plies_behind_shows_the_position_before_the_last_two_moves);
    CU_ADD_TEST(suite, test_a_view_shows_the_clocks_of_its_moment);
    CU_ADD_TEST(suite, test_a_view_hides_draw_and_takeback_offers);
    CU_ADD_TEST(suite, test_a_delay_longer_than_the_game_shows_its_start);
    CU_ADD_TEST(suite, test_a_view_of_a_finished_game_is_in_progress_and_a_bad_line_is_refused);
    return CUE_SUCCESS;
}
