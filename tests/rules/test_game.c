/* Tests for rules/game.c, the game state machine: every operation, the
 * clock at explicit instants, replay and restore, with no real time. Every
 * refusal must leave the game_t byte for byte as it was; random games are
 * judged by status_evaluate on a full history kept here. Long because
 * game.c is one state machine, and its suite stays one suite, as STYLE.md's
 * tests mirror modules. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/game.h"
#include "../support/epd.h"
#include "../support/random_game.h"
#include "../support/tests.h"

enum { LINE_MOVES_MAX = 640, LINE_SIZE = LINE_MOVES_MAX * (GAME_LINE_ENTRY_SIZE + 1) + 1 };

/* Move-list text built as the store builds it, with game_line_entry(). */
typedef struct {
    char text[LINE_SIZE];
    size_t length;
} line_t;

/* A refused operation: it returns `expected` and leaves *g exactly as it was. */
#define EXPECT_REFUSED(g, call, expected)                                    \
    do {                                                                     \
        game_t before_ = *(g);                                               \
        game_status_t got_ = (call);                                         \
        CU_ASSERT_EQUAL(got_, (expected));                                   \
        CU_ASSERT(memcmp(&before_, (g), sizeof before_) == 0);               \
    } while (0)

#define EXPECT_SAME_GAME(a, b) CU_ASSERT(memcmp((a), (b), sizeof(game_t)) == 0)

#define EXPECT_ENDING(g, state_, result_, termination_)                      \
    do {                                                                     \
        CU_ASSERT_EQUAL((g)->state, (state_));                               \
        CU_ASSERT_EQUAL((g)->result, (result_));                             \
        CU_ASSERT_EQUAL((g)->termination, (termination_));                   \
        CU_ASSERT_EQUAL((g)->draw_offer, GAME_OFFER_NONE);                   \
        CU_ASSERT_EQUAL(game_is_over(g), (state_) != GAME_ACTIVE);           \
    } while (0)

#define EXPECT_ACTIVE(g) EXPECT_ENDING(g, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE)

static void line_clear(line_t *line) { line->length = 0, line->text[0] = '\0'; }

/* Appends the entry of a played move: "uci:san", or the bare UCI. */
static void line_append(line_t *line, const game_played_t *played, bool bare)
{
    CU_ASSERT_FATAL(line->length + GAME_LINE_ENTRY_SIZE + 1 < sizeof line->text);
    if (line->length)
        line->text[line->length++] = ' ';
    if (bare) {
        size_t n = strlen(played->uci);
        memcpy(line->text + line->length, played->uci, n + 1);
        line->length += n;
    } else {
        line->length += game_line_entry(played, line->text + line->length);
    }
}

/* A game from fen (NULL: the standard start). */
static void start(game_t *g, const char *fen)
{
    position_t pos;
    tests_parse_fen(fen ? fen : FEN_START, &pos);
    game_start(g, &pos);
}

/* Plays one move for the side to move; CU-asserts it is accepted. */
static void move(game_t *g, const char *text, game_played_t *played)
{
    game_status_t status = game_move(g, (color_t)g->pos.side_to_move, text, strlen(text), GAME_MAX_PLIES, 0, played);
    if (status != GAME_OK)
        fprintf(stderr, "\nmove '%s' refused: %s (%s)\n", text, game_status_name(status), played->message);
    CU_ASSERT_EQUAL_FATAL(status, GAME_OK);
}

/* Plays space-separated moves (UCI or SAN) for whoever is to move, appending
 * their entries to line when it is not NULL (bare UCI when bare). */
static void play(game_t *g, const char *moves, line_t *line, bool bare)
{
    for (const char *p = moves; *p;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        char text[SAN_INPUT_MAX + 1];
        CU_ASSERT_FATAL(n < sizeof text);
        memcpy(text, p, n);
        text[n] = '\0';
        game_played_t played;
        move(g, text, &played);
        if (line)
            line_append(line, &played, bare);
        p += n;
    }
}

/* A game from fen with moves played; its line in *line when not NULL. */
static void game_of(game_t *g, const char *fen, const char *moves, line_t *line)
{
    if (line)
        line_clear(line);
    start(g, fen);
    play(g, moves, line, false);
}

/* Sets a new game's takeback policy (untimed); CU-asserts it is taken. */
static void set_policy(game_t *g, game_takeback_t takeback)
{
    CU_ASSERT_FATAL(game_set_rules(g, 0, 0, takeback));
}

/* game_of() under the free takeback policy, where the mover may undo alone. */
static void free_game_of(game_t *g, const char *fen, const char *moves, line_t *line)
{
    if (line)
        line_clear(line);
    start(g, fen);
    set_policy(g, GAME_TAKEBACK_FREE);
    play(g, moves, line, false);
}

static game_status_t move_for(game_t *g, color_t who, const char *text, game_played_t *played)
{
    return game_move(g, who, text, strlen(text), GAME_MAX_PLIES, 0, played);
}

static game_status_t replay(game_t *g, const position_t *initial, const char *line, game_state_t state,
                            game_result_t result, game_termination_t termination, game_offer_t offer)
{
    return game_replay(g, initial, line, strlen(line), state, result, termination, offer);
}

static game_status_t replay_active(game_t *g, const position_t *initial, const char *line)
{
    return replay(g, initial, line, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_NONE);
}

/* Restores *g from the parts of `from` (its opening too). */
static game_status_t restore(game_t *g, const game_t *from)
{
    game_status_t status = game_restore(g, &from->initial, &from->pos, from->history, from->history_count,
                                        from->ply_count, from->state, from->result, from->termination, from->draw_offer);
    if (status == GAME_OK)
        game_restore_opening(g, from->opening_key);
    return status;
}

static const char *const knight_shuffle = "Nf3 Nf6 Ng1 Ng8";
static const char *const fools_mate = "f3 e5 g4 Qh4#";

/* ---- game_start ---- */

static void test_start_position_is_an_active_game(void)
{
    game_t g;
    start(&g, NULL);
    EXPECT_ACTIVE(&g);
    CU_ASSERT(memcmp(&g.initial, &g.pos, sizeof g.pos) == 0);
    CU_ASSERT_EQUAL(g.ply_count, 0);
    CU_ASSERT_EQUAL(g.history_count, 0);
    CU_ASSERT_EQUAL(g.status.state, STATUS_ACTIVE);
    CU_ASSERT_EQUAL(g.status.legal_move_count, 20);
    CU_ASSERT_EQUAL(g.status.repetitions, 1);
    CU_ASSERT_FALSE(g.status.check);
}

static void test_start_in_checkmate_is_over_at_once(void)
{
    game_t g;
    start(&g, "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_BLACK_WINS, GAME_TERMINATION_CHECKMATE);
    start(&g, "R6k/8/6K1/8/8/8/8/8 b - - 0 1");
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_WHITE_WINS, GAME_TERMINATION_CHECKMATE);
}

static void test_start_in_stalemate_is_over_at_once(void)
{
    game_t g;
    start(&g, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    EXPECT_ENDING(&g, GAME_STALEMATE, GAME_DRAWN, GAME_TERMINATION_STALEMATE);
}

static void test_start_with_insufficient_material_is_drawn_at_once(void)
{
    game_t g;
    start(&g, "8/8/4k3/8/8/3K4/8/8 w - - 0 1");
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_INSUFFICIENT_MATERIAL);
    start(&g, "8/8/4k3/8/8/3KN3/8/8 b - - 0 1");
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_INSUFFICIENT_MATERIAL);
}

static void test_start_at_halfmove_150_is_drawn_by_the_seventyfive_move_rule(void)
{
    game_t g;
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 149 120");
    EXPECT_ACTIVE(&g);
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 150 120");
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES);
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 b - - 400 120");
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES);
}

static void test_start_in_checkmate_at_halfmove_150_is_checkmate(void)
{
    game_t g;
    start(&g, "R6k/8/6K1/8/8/8/8/8 b - - 150 120");
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_WHITE_WINS, GAME_TERMINATION_CHECKMATE);
}

/* ---- game_move ---- */

static void test_move_in_san_is_played_and_reported_in_uci_and_san(void)
{
    game_t g;
    game_played_t played;
    start(&g, NULL);
    CU_ASSERT_EQUAL(move_for(&g, WHITE, "Nf3", &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.uci, "g1f3");
    CU_ASSERT_STRING_EQUAL(played.san, "Nf3");
    CU_ASSERT_EQUAL(played.move, move_make(square_make(6, 0), square_make(5, 2), MOVE_NORMAL, NO_PIECE_TYPE));
    CU_ASSERT_EQUAL(played.reason, LEGALITY_OK);
    CU_ASSERT_EQUAL(g.ply_count, 1);
    CU_ASSERT_EQUAL(g.pos.side_to_move, BLACK);
    CU_ASSERT_EQUAL(g.history_count, 1);
    CU_ASSERT_EQUAL(g.history[0], g.initial.key);
    EXPECT_ACTIVE(&g);
}

static void test_move_in_uci_is_played_and_reported_in_uci_and_san(void)
{
    game_t g;
    game_played_t played;
    start(&g, NULL);
    CU_ASSERT_EQUAL(move_for(&g, WHITE, "g1f3", &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.uci, "g1f3");
    CU_ASSERT_STRING_EQUAL(played.san, "Nf3");
    /* Only `length` bytes are read. */
    CU_ASSERT_EQUAL(game_move(&g, BLACK, "e7e5e2e4", 4, GAME_MAX_PLIES, 0, &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.uci, "e7e5");
    CU_ASSERT_STRING_EQUAL(played.san, "e5");
    CU_ASSERT_EQUAL(g.ply_count, 2);
}

static void test_castling_is_reported_as_the_kings_two_step_and_o_o(void)
{
    static const char *const fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    static const struct {
        const char *text, *uci, *san;
    } cases[] = {
        { "O-O", "e1g1", "O-O" },       { "e1g1", "e1g1", "O-O" },     { "e1h1", "e1g1", "O-O" },
        { "O-O-O", "e1c1", "O-O-O" }, { "e1c1", "e1c1", "O-O-O" }, { "e1a1", "e1c1", "O-O-O" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g;
        game_played_t played;
        start(&g, fen);
        CU_ASSERT_EQUAL(move_for(&g, WHITE, cases[i].text, &played), GAME_OK);
        CU_ASSERT_STRING_EQUAL(played.uci, cases[i].uci);
        CU_ASSERT_STRING_EQUAL(played.san, cases[i].san);
        CU_ASSERT_EQUAL(move_kind(played.move), MOVE_CASTLING);
    }
}

static void test_promotion_is_reported_with_the_piece_and_the_check(void)
{
    static const char *const fen = "k7/4P3/8/8/8/8/8/4K3 w - - 0 1";
    /* A minor piece leaves K + minor v K: that draw comes with the move. */
    static const struct {
        const char *text, *uci, *san;
        bool insufficient;
    } cases[] = {
        { "e7e8q", "e7e8q", "e8=Q+", false }, { "e8=Q", "e7e8q", "e8=Q+", false },
        { "e7e8r", "e7e8r", "e8=R+", false }, { "e7e8b", "e7e8b", "e8=B", true },
        { "e8=N", "e7e8n", "e8=N", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g;
        game_played_t played;
        start(&g, fen);
        CU_ASSERT_EQUAL(move_for(&g, WHITE, cases[i].text, &played), GAME_OK);
        CU_ASSERT_STRING_EQUAL(played.uci, cases[i].uci);
        CU_ASSERT_STRING_EQUAL(played.san, cases[i].san);
        CU_ASSERT_EQUAL(move_kind(played.move), MOVE_PROMOTION);
        CU_ASSERT_EQUAL(g.history_count, 0);
        if (cases[i].insufficient)
            EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_INSUFFICIENT_MATERIAL);
        else
            EXPECT_ACTIVE(&g);
    }
}

static void test_check_is_marked_with_a_plus_and_the_game_goes_on(void)
{
    game_t g;
    game_played_t played;
    game_of(&g, NULL, "e4 f5", NULL);
    CU_ASSERT_EQUAL(move_for(&g, WHITE, "d1h5", &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.san, "Qh5+");
    CU_ASSERT_TRUE(g.status.check);
    EXPECT_ACTIVE(&g);
}

static void test_checkmate_is_marked_ends_the_game_and_clears_the_draw_offer(void)
{
    game_t g;
    game_played_t played;
    game_of(&g, NULL, "f3 e5 g4", NULL);
    /* Black's own offer would stand after Black's move; the mate ends it. */
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
    CU_ASSERT_EQUAL(move_for(&g, BLACK, "d8h4", &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.uci, "d8h4");
    CU_ASSERT_STRING_EQUAL(played.san, "Qh4#");
    CU_ASSERT_EQUAL(g.status.state, STATUS_CHECKMATE);
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_BLACK_WINS, GAME_TERMINATION_CHECKMATE);
    CU_ASSERT_EQUAL(g.ply_count, 4);
}

static void test_stalemating_move_ends_the_game_drawn(void)
{
    game_t g;
    game_played_t played;
    start(&g, "7k/4Q3/6K1/8/8/8/8/8 w - - 0 1");
    EXPECT_ACTIVE(&g);
    CU_ASSERT_EQUAL(move_for(&g, WHITE, "e7f7", &played), GAME_OK);
    CU_ASSERT_STRING_EQUAL(played.san, "Qf7");
    EXPECT_ENDING(&g, GAME_STALEMATE, GAME_DRAWN, GAME_TERMINATION_STALEMATE);
}

static void test_move_by_the_player_not_to_move_changes_nothing(void)
{
    game_t g;
    game_played_t played;
    start(&g, NULL);
    EXPECT_REFUSED(&g, move_for(&g, BLACK, "e7e5", &played), GAME_ENOT_YOUR_TURN);
    EXPECT_REFUSED(&g, move_for(&g, BLACK, "e4", &played), GAME_ENOT_YOUR_TURN); /* legal for White, not Black's */
    play(&g, "e4", NULL, false);
    EXPECT_REFUSED(&g, move_for(&g, WHITE, "d2d4", &played), GAME_ENOT_YOUR_TURN);
    /* With a draw offer by the other player standing, which a move would end. */
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_REFUSED(&g, move_for(&g, WHITE, "d2d4", &played), GAME_ENOT_YOUR_TURN);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
}

static void test_illegal_move_is_refused_with_the_rules_reason_and_changes_nothing(void)
{
    static const struct {
        const char *fen, *text;
        legality_reason_t reason;
    } cases[] = {
        { NULL, "e2e5", LEGALITY_CANNOT_MOVE_SO },
        { NULL, "e1e2", LEGALITY_OWN_PIECE_ON_TARGET },
        { NULL, "e3e4", LEGALITY_NO_PIECE },
        { NULL, "e7e5", LEGALITY_NOT_YOUR_PIECE },
        { NULL, "f1c4", LEGALITY_PATH_BLOCKED },
        { NULL, "hello", LEGALITY_UNPARSEABLE },
        { NULL, "", LEGALITY_UNPARSEABLE },
        { "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1", "e2d3", LEGALITY_LEAVES_KING_IN_CHECK },
        { "4k3/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8", LEGALITY_PATH_BLOCKED },
        { "k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8", LEGALITY_PROMOTION_MISSING },
        { "r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", "e1g1", LEGALITY_CASTLING_NO_RIGHT },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g;
        game_played_t played;
        start(&g, cases[i].fen);
        EXPECT_REFUSED(&g, move_for(&g, WHITE, cases[i].text, &played), GAME_EILLEGAL_MOVE);
        if (played.reason != cases[i].reason)
            fprintf(stderr, "\n'%s': reason %s, expected %s\n", cases[i].text, legality_reason_code(played.reason),
                    legality_reason_code(cases[i].reason));
        CU_ASSERT_EQUAL(played.reason, cases[i].reason);
        CU_ASSERT(played.message[0] != '\0');
        CU_ASSERT(memchr(played.message, '\0', sizeof played.message) != NULL);
        CU_ASSERT_STRING_EQUAL(played.uci, "");
        CU_ASSERT_STRING_EQUAL(played.san, "");
    }
}

static void test_move_on_a_finished_game_is_refused(void)
{
    game_t g;
    game_played_t played;
    game_of(&g, NULL, fools_mate, NULL);
    EXPECT_REFUSED(&g, move_for(&g, WHITE, "a2a3", &played), GAME_EOVER);
    EXPECT_REFUSED(&g, move_for(&g, BLACK, "a7a6", &played), GAME_EOVER);
    game_of(&g, NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_resign(&g, WHITE, 0), GAME_OK);
    EXPECT_REFUSED(&g, move_for(&g, BLACK, "e7e5", &played), GAME_EOVER);
    start(&g, "8/8/4k3/8/8/3K4/8/8 w - - 0 1");
    EXPECT_REFUSED(&g, move_for(&g, WHITE, "Kd4", &played), GAME_EOVER);
}

static void test_move_beyond_max_plies_is_refused(void)
{
    game_t g;
    game_played_t played;
    start(&g, NULL);
    EXPECT_REFUSED(&g, game_move(&g, WHITE, "e4", 2, 0, 0, &played), GAME_ETOO_LONG);
    CU_ASSERT_EQUAL(game_move(&g, WHITE, "e4", 2, 2, 0, &played), GAME_OK);
    CU_ASSERT_EQUAL(game_move(&g, BLACK, "e5", 2, 2, 0, &played), GAME_OK);
    EXPECT_REFUSED(&g, game_move(&g, WHITE, "Nf3", 3, 2, 0, &played), GAME_ETOO_LONG);
    CU_ASSERT_EQUAL(game_move(&g, WHITE, "Nf3", 3, 3, 0, &played), GAME_OK);
}

static void test_max_plies_above_the_limit_is_clamped_to_game_max_plies(void)
{
    game_t played_game, g;
    game_played_t played;
    /* A game one ply short of the limit, restored from its parts. */
    game_of(&played_game, NULL, "e4", NULL);
    CU_ASSERT_EQUAL_FATAL(game_restore(&g, &played_game.initial, &played_game.pos, played_game.history, 0,
                                       GAME_MAX_PLIES - 1, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                                       GAME_OFFER_NONE),
                          GAME_OK);
    CU_ASSERT_EQUAL(game_move(&g, BLACK, "e5", 2, GAME_MAX_PLIES + 1000, 0, &played), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, GAME_MAX_PLIES);
    EXPECT_REFUSED(&g, game_move(&g, WHITE, "Nf3", 3, INT_MAX, 0, &played), GAME_ETOO_LONG);
    EXPECT_REFUSED(&g, game_move(&g, WHITE, "Nf3", 3, GAME_MAX_PLIES + 1, 0, &played), GAME_ETOO_LONG);
    EXPECT_REFUSED(&g, game_move(&g, WHITE, "Nf3", 3, GAME_MAX_PLIES, 0, &played), GAME_ETOO_LONG);
}

static void test_draw_offer_lapses_when_the_other_player_moves_instead_of_answering(void)
{
    game_t g;
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    play(&g, "e4", NULL, false);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_WHITE);
    play(&g, "e5", NULL, false);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_NONE);
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_ACCEPT, 0), GAME_ENO_DRAW_OFFER);
}

static void test_own_draw_offer_stands_after_own_move(void)
{
    game_t g;
    game_of(&g, NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    play(&g, "e5", NULL, false);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_ACCEPT, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT);
}

static void test_fivefold_repetition_ends_the_game_on_the_fifth_occurrence(void)
{
    game_t g;
    game_played_t played;
    start(&g, NULL);
    for (int i = 0; i < 3; i++)
        play(&g, knight_shuffle, NULL, false);
    play(&g, "Nf3 Nf6 Ng1", NULL, false);
    EXPECT_ACTIVE(&g);
    CU_ASSERT_EQUAL(g.status.repetitions, 4); /* the position after Ng1 */
    play(&g, "Ng8", NULL, false);
    CU_ASSERT_EQUAL(g.status.repetitions, 5);
    CU_ASSERT_EQUAL(g.ply_count, 16);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_FIVEFOLD_REPETITION);
    EXPECT_REFUSED(&g, move_for(&g, WHITE, "Nf3", &played), GAME_EOVER);
}

static void test_threefold_repetition_becomes_claimable_on_the_third_occurrence(void)
{
    game_t g;
    game_of(&g, NULL, knight_shuffle, NULL);
    play(&g, "Nf3 Nf6 Ng1", NULL, false);
    CU_ASSERT_FALSE(g.status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
    play(&g, "Ng8", NULL, false);
    CU_ASSERT_EQUAL(g.status.repetitions, 3);
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
    EXPECT_ACTIVE(&g); /* a claim, not an ending by itself */
}

static void test_seventyfive_move_rule_ends_the_game_after_one_quiet_move(void)
{
    game_t g;
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 149 120");
    EXPECT_ACTIVE(&g);
    play(&g, "Rg3", NULL, false);
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 150);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES);
}

static void test_capture_leaving_insufficient_material_ends_the_game(void)
{
    game_t g;
    game_played_t played;
    start(&g, "8/8/4k3/8/8/3K4/4r3/8 w - - 10 40");
    EXPECT_ACTIVE(&g);
    move(&g, "d3e2", &played);
    CU_ASSERT_STRING_EQUAL(played.san, "Kxe2");
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_INSUFFICIENT_MATERIAL);
    CU_ASSERT_EQUAL(g.history_count, 0);
}

static void test_history_restarts_at_a_pawn_move_and_at_a_capture(void)
{
    game_t g;
    game_of(&g, NULL, "Nf3 Nf6", NULL);
    CU_ASSERT_EQUAL(g.history_count, 2);
    uint64_t after_nf3 = g.history[1];
    CU_ASSERT_EQUAL(g.history[0], g.initial.key);
    play(&g, "e4", NULL, false);
    CU_ASSERT_EQUAL(g.history_count, 0);
    play(&g, "Nc6 Nc3", NULL, false);
    CU_ASSERT_EQUAL(g.history_count, 2);
    CU_ASSERT_NOT_EQUAL(g.history[0], after_nf3);
    play(&g, "Nxe4", NULL, false);
    CU_ASSERT_EQUAL(g.history_count, 0);
    CU_ASSERT_EQUAL(g.pos.halfmove_clock, 0);
}

/* A quiet walk of kings, rooks and knights from halfmove 0, never repeating a
 * position, until the 75-move rule ends it. */
static void test_history_never_exceeds_game_history_max(void)
{
    game_t g;
    start(&g, "r3k1n1/8/8/8/8/8/8/1N2K2R w - - 0 1");
    uint64_t rng = 0x9e3779b97f4a7c15u;
    uint64_t seen[GAME_HISTORY_MAX + 1];
    int seen_count = 0;
    seen[seen_count++] = g.pos.key;
    while (!game_is_over(&g)) {
        move_list_t legal, quiet;
        movegen_legal(&g.pos, &legal);
        quiet.count = 0;
        for (int i = 0; i < legal.count; i++) {
            move_t m = legal.moves[i];
            if (random_game_move_is(&g.pos, NULL, m, RANDOM_GAME_PICK_CAPTURE))
                continue;
            position_t after = g.pos;
            position_undo_t undo;
            position_make(&after, m, &undo);
            bool repeated = false;
            for (int s = 0; s < seen_count; s++)
                repeated |= seen[s] == after.key;
            if (!repeated && movegen_count(&after) > 0)
                quiet.moves[quiet.count++] = m;
        }
        CU_ASSERT_FATAL(quiet.count > 0);
        char uci[UCI_BUFFER_SIZE];
        uci_format(&g.pos, quiet.moves[random_game_below(&rng, quiet.count)], uci);
        game_played_t played;
        move(&g, uci, &played);
        CU_ASSERT_FATAL(seen_count <= GAME_HISTORY_MAX);
        seen[seen_count++] = g.pos.key;
        CU_ASSERT_EQUAL(g.history_count, g.ply_count);
        CU_ASSERT(g.history_count <= GAME_HISTORY_MAX);
        CU_ASSERT(memcmp(g.history, seen, sizeof seen[0] * (size_t)g.history_count) == 0);
    }
    CU_ASSERT_EQUAL(g.ply_count, 150);
    CU_ASSERT_EQUAL(g.history_count, GAME_HISTORY_MAX);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES);
}

/* ---- game_undo (the free takeback policy: the mover alone takes a move back) ---- */

static void test_undo_gives_back_exactly_the_game_before_the_last_move(void)
{
    static const struct {
        const char *fen, *before, *last;
    } cases[] = {
        { NULL, "", "e4" },
        { NULL, "e4 e5", "Nf3" },
        { NULL, "e4 e5 Nf3", "Nc6" },
        { NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1", "Ng8" }, /* undoes a threefold repetition */
        { "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 30 20", "Rb1", "O-O" },
        { "k7/4P3/8/8/8/8/8/4K3 w - - 5 60", "", "e8=Q" },
        { "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "", "exd6" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t expected, g;
        line_t line;
        free_game_of(&expected, cases[i].fen, cases[i].before, NULL);
        free_game_of(&g, cases[i].fen, cases[i].before, &line);
        play(&g, cases[i].last, &line, false);
        color_t mover = (color_t)!g.pos.side_to_move;
        CU_ASSERT_EQUAL(game_undo(&g, mover, line.text, line.length, 0), GAME_OK);
        EXPECT_SAME_GAME(&g, &expected);
    }
}

static void test_undo_accepts_a_line_of_bare_uci(void)
{
    game_t expected, g;
    line_t line;
    free_game_of(&expected, NULL, "e4 e5", NULL);
    free_game_of(&g, NULL, "", &line);
    play(&g, "e4 e5 Nf3", &line, true);
    CU_ASSERT_STRING_EQUAL(line.text, "e2e4 e7e5 g1f3");
    CU_ASSERT_EQUAL(game_undo(&g, WHITE, line.text, line.length, 0), GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
}

static void test_undo_by_the_player_who_did_not_make_the_last_move_is_refused(void)
{
    game_t g;
    line_t line;
    free_game_of(&g, NULL, "e4", &line);
    EXPECT_REFUSED(&g, game_undo(&g, BLACK, line.text, line.length, 0), GAME_ENOTHING_TO_UNDO);
    play(&g, "e5", &line, false);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, line.text, line.length, 0), GAME_ENOTHING_TO_UNDO);
}

static void test_undo_without_a_move_is_refused(void)
{
    game_t g;
    free_game_of(&g, NULL, "", NULL);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, "", 0, 0), GAME_ENOTHING_TO_UNDO);
    EXPECT_REFUSED(&g, game_undo(&g, BLACK, "", 0, 0), GAME_ENOTHING_TO_UNDO);
    free_game_of(&g, "4k3/8/8/8/8/8/8/R3K3 b - - 0 1", "", NULL);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, "", 0, 0), GAME_ENOTHING_TO_UNDO);
}

static void test_undo_on_a_finished_game_is_refused(void)
{
    game_t g;
    line_t line;
    free_game_of(&g, NULL, fools_mate, &line);
    EXPECT_REFUSED(&g, game_undo(&g, BLACK, line.text, line.length, 0), GAME_EOVER);
    free_game_of(&g, NULL, "e4", &line);
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, line.text, line.length, 0), GAME_EOVER);
    free_game_of(&g, NULL, "e4", &line);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_ACCEPT, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, line.text, line.length, 0), GAME_EOVER);
}

/* The line must be this game's: every entry a legal move, ply_count of them,
 * leading to the game's position. */
static void test_undo_with_a_line_that_is_not_the_games_is_refused(void)
{
    static const char *const lines[] = {
        "",                              /* no moves */
        "e2e4:e4",                       /* one too few */
        "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6", /* one too many */
        "e2e4:e4 e2e4:e4 g1f3:Nf3",      /* an illegal move */
        "e2e4:e4 e7e5:e5 zzzz",          /* a last entry that is no move */
        "e2e4:e4 e7e5:e5 ",              /* an empty last entry */
        "e2e4:e4 e7e5:e5 g1f3:Nf3 ",     /* a trailing space */
        "e2e4:e4  e7e5:e5 g1f3:Nf3",     /* a double space */
        "d2d4:d4 d7d5:d5 g1f3:Nf3",      /* another game of the same length */
        "e2e4:e4 e7e5:e5 b1c3:Nc3",      /* another last move */
        "e2e4:e4 e7e5:e5 g1f3:Nc3",      /* the last move's SAN is another move's */
    };
    game_t g;
    line_t line;
    free_game_of(&g, NULL, "e4 e5 Nf3", &line);
    CU_ASSERT_STRING_EQUAL(line.text, "e2e4:e4 e7e5:e5 g1f3:Nf3");
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        game_t before = g;
        game_status_t status = game_undo(&g, WHITE, lines[i], strlen(lines[i]), 0);
        if (status != GAME_EBAD_RECORD)
            fprintf(stderr, "\nundo with line '%s': %s\n", lines[i], game_status_name(status));
        CU_ASSERT_EQUAL(status, GAME_EBAD_RECORD);
        CU_ASSERT(memcmp(&before, &g, sizeof g) == 0);
        g = before;
    }
    /* The right line still works afterwards. */
    CU_ASSERT_EQUAL(game_undo(&g, WHITE, line.text, line.length, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, 2);
}

/* ---- game_resign ---- */

static void test_resignation_gives_the_game_to_the_other_side(void)
{
    static const struct {
        color_t who;
        game_result_t result;
    } cases[] = { { WHITE, GAME_BLACK_WINS }, { BLACK, GAME_WHITE_WINS } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* On the player's own turn, on the other's, and with a draw offer standing. */
        game_t g;
        start(&g, NULL);
        CU_ASSERT_EQUAL(game_resign(&g, cases[i].who, 0), GAME_OK);
        EXPECT_ENDING(&g, GAME_RESIGNED, cases[i].result, GAME_TERMINATION_RESIGNATION);
        game_of(&g, NULL, "e4", NULL);
        CU_ASSERT_EQUAL(game_resign(&g, cases[i].who, 0), GAME_OK);
        EXPECT_ENDING(&g, GAME_RESIGNED, cases[i].result, GAME_TERMINATION_RESIGNATION);
        game_of(&g, NULL, "e4", NULL);
        CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
        CU_ASSERT_EQUAL(game_resign(&g, cases[i].who, 0), GAME_OK);
        EXPECT_ENDING(&g, GAME_RESIGNED, cases[i].result, GAME_TERMINATION_RESIGNATION);
        CU_ASSERT_EQUAL(g.ply_count, 1);
    }
}

static void test_resigning_a_finished_game_is_refused(void)
{
    game_t g;
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_resign(&g, WHITE, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_resign(&g, WHITE, 0), GAME_EOVER);
    EXPECT_REFUSED(&g, game_resign(&g, BLACK, 0), GAME_EOVER);
    game_of(&g, NULL, fools_mate, NULL);
    EXPECT_REFUSED(&g, game_resign(&g, WHITE, 0), GAME_EOVER);
    start(&g, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    EXPECT_REFUSED(&g, game_resign(&g, BLACK, 0), GAME_EOVER);
}

/* ---- game_draw ---- */

static void test_draw_offer_is_recorded_for_either_player_on_either_turn(void)
{
    game_t g;
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_WHITE);
    CU_ASSERT_EQUAL(g.state, GAME_ACTIVE);
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
    CU_ASSERT_EQUAL(g.state, GAME_ACTIVE);
    CU_ASSERT_EQUAL(g.result, GAME_RESULT_NONE);
}

static void test_repeated_draw_offer_is_refused(void)
{
    game_t g;
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_EDRAW_ALREADY_OFFERED);
}

static void test_crossing_draw_offers_are_an_agreement(void)
{
    game_t g;
    game_of(&g, NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT);
}

static void test_accept_or_decline_without_the_other_players_offer_is_refused(void)
{
    game_t g;
    start(&g, NULL);
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_ACCEPT, 0), GAME_ENO_DRAW_OFFER);
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_DECLINE, 0), GAME_ENO_DRAW_OFFER);
    /* One's own offer cannot be accepted or declined by oneself. */
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_ACCEPT, 0), GAME_ENO_DRAW_OFFER);
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_DECLINE, 0), GAME_ENO_DRAW_OFFER);
}

static void test_accepting_a_draw_offer_draws_by_agreement(void)
{
    game_t g;
    game_of(&g, NULL, "e4 e5", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT);
    CU_ASSERT_EQUAL(g.ply_count, 2);
}

static void test_declining_a_draw_offer_clears_it(void)
{
    game_t g, before;
    game_of(&g, NULL, "e4 e5", NULL);
    before = g;
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_DECLINE, 0), GAME_OK);
    EXPECT_SAME_GAME(&g, &before);
    EXPECT_ACTIVE(&g);
    /* Declined, it can neither be accepted nor declined again, and can be made again. */
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_ACCEPT, 0), GAME_ENO_DRAW_OFFER);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
}

static void test_draw_claim_by_the_player_not_to_move_is_refused(void)
{
    game_t g;
    game_of(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_ENOT_YOUR_TURN);
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 100 80");
    EXPECT_REFUSED(&g, game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_ENOT_YOUR_TURN);
}

static void test_draw_claim_under_threefold_repetition_ends_the_game(void)
{
    game_t g;
    game_of(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION);
    /* Black may claim on the third occurrence of the position after Nf6... */
    game_of(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION);
    /* ...and a claim ends a standing offer too. */
    game_of(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION);
}

static void test_draw_claim_under_the_fifty_move_rule_ends_the_game(void)
{
    game_t g;
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 100 80");
    CU_ASSERT_TRUE(g.status.claimable & STATUS_CLAIM_FIFTY_MOVES);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_FIFTY_MOVES);
    /* From halfmove 99, the hundredth quiet halfmove makes it claimable for the other side. */
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 99 80");
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
    play(&g, "Rg3", NULL, false);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_FIFTY_MOVES);
}

static void test_draw_claim_when_neither_rule_applies_is_refused(void)
{
    game_t g;
    start(&g, NULL);
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
    game_of(&g, NULL, knight_shuffle, NULL); /* twice is not three times */
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
    start(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 99 80");
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
    /* With a draw offer standing, the failed claim keeps it. */
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_REFUSED(&g, game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_EDRAW_NOT_CLAIMABLE);
}

static void test_unknown_draw_action_changes_nothing(void)
{
    game_t g, before;
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    before = g;
    CU_ASSERT_NOT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_ACTION_COUNT, 0), GAME_OK);
    EXPECT_SAME_GAME(&g, &before);
}

static void test_every_draw_action_on_a_finished_game_is_refused(void)
{
    game_t finished[4];
    game_of(&finished[0], NULL, fools_mate, NULL);
    game_of(&finished[1], NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_resign(&finished[1], WHITE, 0), GAME_OK);
    game_of(&finished[2], NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    CU_ASSERT_EQUAL(game_draw(&finished[2], WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    start(&finished[3], "8/8/4k3/8/8/3K4/8/8 w - - 0 1");
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_TRUE(game_is_over(&finished[i]));
        for (int who = WHITE; who <= BLACK; who++)
            for (int action = 0; action < GAME_DRAW_ACTION_COUNT; action++)
                EXPECT_REFUSED(&finished[i], game_draw(&finished[i], (color_t)who, (game_draw_action_t)action, 0),
                               GAME_EOVER);
    }
}

/* ---- game_line_entry ---- */

static void test_line_entry_is_uci_colon_san(void)
{
    game_t g;
    game_played_t played;
    char entry[GAME_LINE_ENTRY_SIZE];
    start(&g, "k7/4P3/8/8/8/8/8/4K3 w - - 0 1");
    move(&g, "e8=Q", &played);
    CU_ASSERT_EQUAL(game_line_entry(&played, entry), strlen("e7e8q:e8=Q+"));
    CU_ASSERT_STRING_EQUAL(entry, "e7e8q:e8=Q+");
    start(&g, NULL);
    move(&g, "Nf3", &played);
    CU_ASSERT_EQUAL(game_line_entry(&played, entry), 8);
    CU_ASSERT_STRING_EQUAL(entry, "g1f3:Nf3");
}

/* ---- game_replay ---- */

static const char *const varied_moves = "e4 Nf6 e5 d5 exd6 e6 dxc7 Be7 cxb8=Q O-O Nf3 Qxd2+ Nbxd2 a6 Bc4 Kh8 O-O";

static void test_replay_of_uci_san_entries_equals_playing_the_moves(void)
{
    game_t played_game, g;
    line_t line;
    game_of(&played_game, NULL, varied_moves, &line);
    CU_ASSERT_EQUAL(replay_active(&g, &played_game.initial, line.text), GAME_OK);
    EXPECT_SAME_GAME(&g, &played_game);
    /* Only `length` bytes are read: the first two entries. */
    game_t two;
    game_of(&two, NULL, "e4 Nf6", NULL);
    size_t length = strlen("e2e4:e4 g8f6:Nf6");
    CU_ASSERT_EQUAL(game_replay(&g, &played_game.initial, line.text, length, GAME_ACTIVE, GAME_RESULT_NONE,
                                GAME_TERMINATION_NONE, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &two);
}

static void test_replay_of_bare_uci_entries_equals_playing_the_moves(void)
{
    game_t played_game, g;
    line_t line;
    line_clear(&line);
    start(&played_game, NULL);
    play(&played_game, varied_moves, &line, true);
    CU_ASSERT(strchr(line.text, ':') == NULL);
    CU_ASSERT_EQUAL(replay_active(&g, &played_game.initial, line.text), GAME_OK);
    EXPECT_SAME_GAME(&g, &played_game);
    /* Entries of both kinds in one line. */
    start(&played_game, NULL);
    line_clear(&line);
    play(&played_game, "e4 e5", &line, true);
    play(&played_game, "Nf3 Nc6", &line, false);
    play(&played_game, "Bb5", &line, true);
    CU_ASSERT_STRING_EQUAL(line.text, "e2e4 e7e5 g1f3:Nf3 b8c6:Nc6 f1b5");
    CU_ASSERT_EQUAL(replay_active(&g, &played_game.initial, line.text), GAME_OK);
    EXPECT_SAME_GAME(&g, &played_game);
}

static void test_replay_of_an_empty_line_is_the_start(void)
{
    game_t expected, g;
    start(&expected, "8/8/4k3/8/8/3K4/6R1/8 w - - 30 40");
    CU_ASSERT_EQUAL(game_replay(&g, &expected.initial, "", 0, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                                GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
}

static void test_replay_keeps_the_ending_and_the_offer_given(void)
{
    game_t expected, g;
    line_t line;
    /* Checkmate, as the line ends. */
    game_of(&expected, NULL, fools_mate, &line);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_CHECKMATE, GAME_BLACK_WINS,
                           GAME_TERMINATION_CHECKMATE, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    /* A draw offer standing in an active game. */
    game_of(&expected, NULL, "e4 e5", &line);
    CU_ASSERT_EQUAL(game_draw(&expected, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                           GAME_OFFER_WHITE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    /* Resignations, agreements and claims. */
    game_of(&expected, NULL, "e4 e5", &line);
    CU_ASSERT_EQUAL(game_resign(&expected, WHITE, 0), GAME_OK);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_RESIGNED, GAME_BLACK_WINS,
                           GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    game_of(&expected, NULL, "e4 e5", &line);
    CU_ASSERT_EQUAL(game_draw(&expected, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&expected, BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT,
                           GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    game_of(&expected, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", &line);
    CU_ASSERT_EQUAL(game_draw(&expected, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_DRAW, GAME_DRAWN,
                           GAME_TERMINATION_THREEFOLD_REPETITION, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    /* The automatic draws. */
    game_of(&expected, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", &line);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_DRAW, GAME_DRAWN,
                           GAME_TERMINATION_FIVEFOLD_REPETITION, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    game_of(&expected, "8/8/4k3/8/8/3K4/6R1/8 w - - 149 120", "Rg3", &line);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_DRAW, GAME_DRAWN,
                           GAME_TERMINATION_SEVENTYFIVE_MOVES, GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    game_of(&expected, "7k/4Q3/6K1/8/8/8/8/8 w - - 0 1", "Qf7", &line);
    CU_ASSERT_EQUAL(replay(&g, &expected.initial, line.text, GAME_STALEMATE, GAME_DRAWN, GAME_TERMINATION_STALEMATE,
                           GAME_OFFER_NONE),
                    GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
}

/* Each line is refused whatever ending is given with it, and g is untouched. */
static void test_replay_refuses_text_that_is_not_a_legal_move_list(void)
{
    static const char *const lines[] = {
        "e2e5",                         /* an illegal move */
        "e2e4 e2e4",                    /* the same pawn again: no piece there */
        "e2e4 d2d4",                    /* White twice */
        "zzzz",                         /* garbage */
        "e2e4 hello",                   /* garbage later on */
        "Nf3",                          /* SAN is not an entry's first part */
        "e2e4:e4:e4",                   /* a clock that is not a figure */
        "e2e4:e4:",                     /* an empty clock */
        "e2e4:e4:1:2",                  /* three colons */
        "e2e4:e4 e7e5:Nf6",             /* a SAN that is not the move's */
        "e2e4:",                        /* an empty SAN */
        ":e4",                          /* an empty UCI */
        " ",                            /* one space */
        "e2e4  e7e5",                   /* a double space */
        " e2e4",                        /* a leading space */
        "e2e4 ",                        /* a trailing space */
        "e2e4\te7e5",                   /* another separator */
        "f2f3 e7e5 g2g4 d8h4 a2a3",     /* a move after the mate */
        "f2f3:f3 e7e5:e5 g2g4:g4 d8h4:Qh4# a2a3:a3",
    };
    game_t g, before;
    game_of(&g, NULL, "d4 d5", NULL);
    before = g;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        game_status_t status = replay_active(&g, &before.initial, lines[i]);
        if (status != GAME_EBAD_RECORD)
            fprintf(stderr, "\nreplay of '%s': %s\n", lines[i], game_status_name(status));
        CU_ASSERT_EQUAL(status, GAME_EBAD_RECORD);
        for (int state = GAME_CHECKMATE; state < GAME_STATE_COUNT; state++)
            for (int termination = 0; termination < GAME_TERMINATION_COUNT; termination++)
                for (int result = 0; result < GAME_RESULT_COUNT; result++)
                    CU_ASSERT_EQUAL(replay(&g, &before.initial, lines[i], (game_state_t)state, (game_result_t)result,
                                           (game_termination_t)termination, GAME_OFFER_NONE),
                                    GAME_EBAD_RECORD);
        EXPECT_SAME_GAME(&g, &before);
        g = before;
    }
}

static void test_replay_refuses_an_ending_the_line_does_not_have(void)
{
    static const struct {
        const char *moves;
        game_state_t state;
        game_result_t result;
        game_termination_t termination;
        game_offer_t offer;
    } cases[] = {
        /* A line ending in mate is mate, and White lost it. */
        { "f2f3 e7e5 g2g4 d8h4", GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
        { "f2f3 e7e5 g2g4 d8h4", GAME_CHECKMATE, GAME_WHITE_WINS, GAME_TERMINATION_CHECKMATE, GAME_OFFER_NONE },
        { "f2f3 e7e5 g2g4 d8h4", GAME_RESIGNED, GAME_BLACK_WINS, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE },
        { "f2f3 e7e5 g2g4 d8h4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT, GAME_OFFER_NONE },
        { "f2f3 e7e5 g2g4 d8h4", GAME_CHECKMATE, GAME_BLACK_WINS, GAME_TERMINATION_CHECKMATE, GAME_OFFER_WHITE },
        /* An active line is not mate, stalemate or an automatic draw. */
        { "e2e4", GAME_CHECKMATE, GAME_WHITE_WINS, GAME_TERMINATION_CHECKMATE, GAME_OFFER_NONE },
        { "e2e4", GAME_STALEMATE, GAME_DRAWN, GAME_TERMINATION_STALEMATE, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_INSUFFICIENT_MATERIAL, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_FIVEFOLD_REPETITION, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES, GAME_OFFER_NONE },
        /* Claims need a claimable position. */
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION, GAME_OFFER_NONE },
        { "g1f3 g8f6 f3g1 f6g8", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_FIFTY_MOVES, GAME_OFFER_NONE },
        /* A resignation is a win; an agreement is a draw. */
        { "e2e4", GAME_RESIGNED, GAME_DRAWN, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE },
        { "e2e4", GAME_RESIGNED, GAME_RESULT_NONE, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE },
        { "e2e4", GAME_RESIGNED, GAME_WHITE_WINS, GAME_TERMINATION_AGREEMENT, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_WHITE_WINS, GAME_TERMINATION_AGREEMENT, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE },
        /* An active game has no result or termination. */
        { "e2e4", GAME_ACTIVE, GAME_WHITE_WINS, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
        { "e2e4", GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_AGREEMENT, GAME_OFFER_NONE },
        /* A finished game has no draw offer. */
        { "e2e4", GAME_RESIGNED, GAME_BLACK_WINS, GAME_TERMINATION_RESIGNATION, GAME_OFFER_BLACK },
        { "e2e4", GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT, GAME_OFFER_WHITE },
        /* Values outside the enums. */
        { "e2e4", GAME_STATE_COUNT, GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
        { "e2e4", GAME_ACTIVE, GAME_RESULT_COUNT, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
        { "e2e4", GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_COUNT, GAME_OFFER_NONE },
        { "e2e4", GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_COUNT },
        { "e2e4", (game_state_t)-1, GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_NONE },
    };
    game_t g, before;
    game_of(&g, NULL, "d4", NULL);
    before = g;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_status_t status = replay(&g, &before.initial, cases[i].moves, cases[i].state, cases[i].result,
                                      cases[i].termination, cases[i].offer);
        if (status != GAME_EBAD_RECORD)
            fprintf(stderr, "\nreplay case %zu: %s\n", i, game_status_name(status));
        CU_ASSERT_EQUAL(status, GAME_EBAD_RECORD);
        EXPECT_SAME_GAME(&g, &before);
    }
}

/* ---- game_restore ---- */

/* Restores *r from g's parts with its positions written as FEN text and read
 * back, as the store keeps them. */
static game_status_t restore_from_fen(game_t *r, const game_t *g)
{
    char initial_fen[FEN_BUFFER_SIZE], current_fen[FEN_BUFFER_SIZE];
    position_t initial, current;
    unsigned flags = g->initial.chess960 ? FEN_CHESS960 : 0;
    variant_t variant = (variant_t)g->initial.variant; /* the store reads both FENs in the record's variant */
    fen_format(&g->initial, initial_fen, sizeof initial_fen);
    fen_format(&g->pos, current_fen, sizeof current_fen);
    if (fen_parse_variant(initial_fen, strlen(initial_fen), variant, flags, &initial, NULL, 0) != FEN_OK
        || fen_parse_variant(current_fen, strlen(current_fen), variant, flags, &current, NULL, 0) != FEN_OK)
        return GAME_EBAD_RECORD;
    game_status_t status = game_restore(r, &initial, &current, g->history, g->history_count, g->ply_count, g->state,
                                        g->result, g->termination, g->draw_offer);
    if (status == GAME_OK)
        game_restore_opening(r, g->opening_key);
    return status;
}

/* Restoring g from its parts, and from them through FEN text, gives g back. */
static void expect_restored(const game_t *g)
{
    game_t r;
    CU_ASSERT_EQUAL(restore(&r, g), GAME_OK);
    EXPECT_SAME_GAME(&r, g);
    CU_ASSERT_EQUAL(restore_from_fen(&r, g), GAME_OK);
    EXPECT_SAME_GAME(&r, g);
}

static void test_restore_from_the_parts_of_a_game_gives_it_back(void)
{
    game_t g;
    start(&g, NULL);
    expect_restored(&g);
    /* A pawn move after quiet ones: the history is empty again, whatever it held. */
    game_of(&g, NULL, "Nf3 Nf6 e4", NULL);
    CU_ASSERT_EQUAL(g.history_count, 0);
    expect_restored(&g);
    game_of(&g, NULL, varied_moves, NULL);
    expect_restored(&g);
    game_of(&g, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    expect_restored(&g);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    expect_restored(&g);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    expect_restored(&g);
    game_of(&g, NULL, fools_mate, NULL);
    expect_restored(&g);
    game_of(&g, NULL, "e4 e5", NULL);
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, 0), GAME_OK);
    expect_restored(&g);
    game_of(&g, NULL, "e4 e5", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    expect_restored(&g);
    game_of(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 100 80", "Rg3 Kd5 Rg4", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_CLAIM, 0), GAME_OK);
    expect_restored(&g);
    game_of(&g, "8/8/4k3/8/8/3K4/6R1/8 w - - 149 120", "Rg3", NULL);
    expect_restored(&g);
    game_of(&g, "7k/4Q3/6K1/8/8/8/8/8 w - - 0 1", "Qf7", NULL);
    expect_restored(&g);
    game_of(&g, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 9", "a3a4 d6d5", NULL);
    CU_ASSERT_TRUE(g.initial.chess960);
    expect_restored(&g);
}

static void test_restore_refuses_parts_that_do_not_belong_together(void)
{
    game_t g, mated, resigned, chess960, before;
    game_of(&g, NULL, "e4 e5 Nf3 Nc6 Nc3", NULL); /* history 3, halfmove clock 3, 5 plies */
    game_of(&mated, NULL, fools_mate, NULL);
    game_of(&resigned, NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_resign(&resigned, WHITE, 0), GAME_OK);
    game_of(&chess960, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 9", "", NULL);
    uint64_t long_history[GAME_HISTORY_MAX + 1] = { 0 };
    game_t r;
    game_of(&r, NULL, "d4", NULL);
    before = r;
    const game_t *a = &g;
#define EXPECT_BAD_RESTORE(initial, current, history, history_count, ply_count, state, result, termination, offer) \
    EXPECT_REFUSED(&r,                                                                                           \
                   game_restore(&r, initial, current, history, history_count, ply_count, state, result,          \
                                termination, offer),                                                             \
                   GAME_EBAD_RECORD)
    /* The parts as they are do restore. */
    CU_ASSERT_EQUAL(restore(&r, a), GAME_OK);
    r = before;
    /* Counts. */
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 4, 5, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE); /* longer than the halfmove clock */
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, -1, 5, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, -1, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 0, -1, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, GAME_MAX_PLIES + 1, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    /* Longer than ply_count: two plies from a position whose clock was at 100. */
    game_t late;
    game_of(&late, "8/8/4k3/8/8/3K4/6R1/8 w - - 100 80", "Rg3 Kd5", NULL);
    EXPECT_BAD_RESTORE(&late.initial, &late.pos, long_history, 3, 2, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&late.initial, &late.pos, long_history, 4, 2, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(game_restore(&r, &late.initial, &late.pos, long_history, 2, 2, GAME_ACTIVE, GAME_RESULT_NONE,
                                 GAME_TERMINATION_NONE, GAME_OFFER_NONE),
                    GAME_OK);
    r = before;
    /* Longer than GAME_HISTORY_MAX, with the clock and the plies for more (a game
     * the 75-move rule ended), and exactly GAME_HISTORY_MAX for comparison. */
    game_t long_game;
    start(&long_game, "8/8/4k3/8/8/3K4/6R1/8 b - - 400 80");
    CU_ASSERT_EQUAL(long_game.termination, GAME_TERMINATION_SEVENTYFIVE_MOVES);
    EXPECT_BAD_RESTORE(&long_game.initial, &long_game.pos, long_history, GAME_HISTORY_MAX + 1, 200, GAME_DRAW,
                       GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(game_restore(&r, &long_game.initial, &long_game.pos, long_history, GAME_HISTORY_MAX, 200,
                                 GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_SEVENTYFIVE_MOVES, GAME_OFFER_NONE),
                    GAME_OK);
    r = before;
    /* The side to move must follow from the ply count. */
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 4, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 6, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    /* The variant cannot change. */
    EXPECT_BAD_RESTORE(&chess960.initial, &a->pos, a->history, 3, 5, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &chess960.pos, long_history, 0, 0, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    /* Nor the rule set: a crazyhouse start and the standard one, either way round. */
    position_t crazyhouse;
    fen_start(VARIANT_CRAZYHOUSE, &crazyhouse);
    EXPECT_BAD_RESTORE(&crazyhouse, &before.initial, long_history, 0, 0, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&before.initial, &crazyhouse, long_history, 0, 0, GAME_ACTIVE, GAME_RESULT_NONE,
                       GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(game_restore(&r, &crazyhouse, &crazyhouse, long_history, 0, 0, GAME_ACTIVE, GAME_RESULT_NONE,
                                 GAME_TERMINATION_NONE, GAME_OFFER_NONE),
                    GAME_OK);
    r = before;
    /* The state must be the position's. */
    EXPECT_BAD_RESTORE(&mated.initial, &mated.pos, mated.history, mated.history_count, mated.ply_count, GAME_ACTIVE,
                       GAME_RESULT_NONE, GAME_TERMINATION_NONE, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&mated.initial, &mated.pos, mated.history, mated.history_count, mated.ply_count, GAME_CHECKMATE,
                       GAME_WHITE_WINS, GAME_TERMINATION_CHECKMATE, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&mated.initial, &mated.pos, mated.history, mated.history_count, mated.ply_count, GAME_RESIGNED,
                       GAME_BLACK_WINS, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_CHECKMATE, GAME_WHITE_WINS,
                       GAME_TERMINATION_CHECKMATE, GAME_OFFER_NONE);
    /* Result and termination must match the state. */
    EXPECT_BAD_RESTORE(&resigned.initial, &resigned.pos, resigned.history, resigned.history_count,
                       resigned.ply_count, GAME_RESIGNED, GAME_DRAWN, GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&resigned.initial, &resigned.pos, resigned.history, resigned.history_count,
                       resigned.ply_count, GAME_RESIGNED, GAME_BLACK_WINS, GAME_TERMINATION_AGREEMENT,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_DRAW, GAME_DRAWN,
                       GAME_TERMINATION_THREEFOLD_REPETITION, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_DRAW, GAME_BLACK_WINS,
                       GAME_TERMINATION_AGREEMENT, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_ACTIVE, GAME_DRAWN, GAME_TERMINATION_NONE,
                       GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT,
                       GAME_OFFER_WHITE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                       GAME_OFFER_COUNT);
    /* A loss on time is the side to move's, or a draw; an abort comes before the second ply and has no result. */
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_BLACK_WINS,
                       GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_NONE); /* Black to move */
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_RESULT_NONE,
                       GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_WHITE_WINS,
                       GAME_TERMINATION_RESIGNATION, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_WHITE_WINS,
                       GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_BLACK);
    EXPECT_BAD_RESTORE(&mated.initial, &mated.pos, mated.history, mated.history_count, mated.ply_count, GAME_TIMEOUT,
                       GAME_BLACK_WINS, GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&a->initial, &a->pos, a->history, 3, 5, GAME_ABORTED, GAME_RESULT_NONE,
                       GAME_TERMINATION_ABORTED, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&resigned.initial, &resigned.pos, resigned.history, resigned.history_count,
                       resigned.ply_count, GAME_ABORTED, GAME_BLACK_WINS, GAME_TERMINATION_ABORTED, GAME_OFFER_NONE);
    EXPECT_BAD_RESTORE(&resigned.initial, &resigned.pos, resigned.history, resigned.history_count,
                       resigned.ply_count, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_RESIGNATION,
                       GAME_OFFER_NONE);
    /* What does fit is restored (the cases above differ from these in one thing). */
    CU_ASSERT_EQUAL(game_restore(&r, &a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_WHITE_WINS,
                                 GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_NONE),
                    GAME_OK);
    CU_ASSERT_EQUAL(game_restore(&r, &a->initial, &a->pos, a->history, 3, 5, GAME_TIMEOUT, GAME_DRAWN,
                                 GAME_TERMINATION_TIME_FORFEIT, GAME_OFFER_NONE),
                    GAME_OK);
    CU_ASSERT_EQUAL(game_restore(&r, &resigned.initial, &resigned.pos, resigned.history, resigned.history_count,
                                 resigned.ply_count, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED,
                                 GAME_OFFER_NONE),
                    GAME_OK);
    r = before;
    /* A threefold claim needs the history that makes it one. */
    game_t claimed;
    game_of(&claimed, NULL, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL);
    EXPECT_BAD_RESTORE(&claimed.initial, &claimed.pos, claimed.history, 4, claimed.ply_count, GAME_DRAW, GAME_DRAWN,
                       GAME_TERMINATION_THREEFOLD_REPETITION, GAME_OFFER_NONE);
#undef EXPECT_BAD_RESTORE
}

/* ---- the clock ---- */

enum { MINUTE_MS = 60000, HOUR_MS = 3600000 };

/* A game's rules with no switch set: what every game before them had. */
static const game_rules_t no_rules;

/* A clock as records of one Fischer control for both sides hold it (an
 * initial_ms of 0 with no other figure: untimed; with one: out of bounds). */
static game_clock_t fischer(int64_t initial_ms, int64_t increment_ms, int64_t white_ms, int64_t black_ms,
                            int64_t turn_started_ms, int64_t imported_plies, int64_t first_move_ms)
{
    game_clock_t c = { .remaining_ms = { white_ms, black_ms },
                       .turn_started_ms = turn_started_ms,
                       .imported_plies = imported_plies,
                       .first_move_ms = first_move_ms };
    if (initial_ms || increment_ms)
        for (int side = 0; side < COLOR_COUNT; side++)
            c.control[side] = (game_control_t){ .periods = { { 0, initial_ms } },
                                                .period_count = 1,
                                                .increment_ms = increment_ms };
    return c;
}

/* A new game from fen (NULL: the standard start) on a clock of initial_ms
 * each plus increment_ms a move, takebacks under policy. */
static void timed_start(game_t *g, const char *fen, int64_t initial_ms, int64_t increment_ms, game_takeback_t policy)
{
    start(g, fen);
    CU_ASSERT_FATAL(game_set_rules(g, initial_ms, increment_ms, policy));
}

/* Plays one move (UCI or SAN) for the side to move at now_ms, appending its
 * entry to line when not NULL; CU-asserts it is accepted. */
static void move_at(game_t *g, const char *text, int64_t now_ms, line_t *line)
{
    game_played_t played;
    game_status_t status = game_move(g, (color_t)g->pos.side_to_move, text, strlen(text), GAME_MAX_PLIES, now_ms,
                                     &played);
    if (status != GAME_OK)
        fprintf(stderr, "\nmove '%s' at %lld refused: %s\n", text, (long long)now_ms, game_status_name(status));
    CU_ASSERT_EQUAL_FATAL(status, GAME_OK);
    if (line)
        line_append(line, &played, false);
}

/* game_flag at now_ms does not end the game, and changes nothing. */
#define EXPECT_NO_FLAG(g, now_ms)                                            \
    do {                                                                     \
        game_t before_ = *(g);                                               \
        CU_ASSERT_FALSE(game_flag((g), (now_ms)));                           \
        CU_ASSERT(memcmp(&before_, (g), sizeof before_) == 0);               \
    } while (0)

/* The clock stands at white_ms and black_ms whenever it is read. */
static void expect_clock_stands(const game_t *g, int64_t white_ms, int64_t black_ms)
{
    static const int64_t later[] = { 0, 1, MINUTE_MS, HOUR_MS, INT64_C(1) << 50 };
    CU_ASSERT_FALSE(game_clock_running(g));
    CU_ASSERT_EQUAL(game_flag_deadline(g), 0);
    CU_ASSERT_EQUAL(g->clock.remaining_ms[WHITE], white_ms);
    CU_ASSERT_EQUAL(g->clock.remaining_ms[BLACK], black_ms);
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
        CU_ASSERT_EQUAL(game_clock_remaining(g, WHITE, g->clock.turn_started_ms + later[i]), white_ms);
        CU_ASSERT_EQUAL(game_clock_remaining(g, BLACK, g->clock.turn_started_ms + later[i]), black_ms);
    }
}

static void test_first_two_plies_charge_no_time_and_add_no_increment(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 2000, GAME_TAKEBACK_AGREEMENT);
    CU_ASSERT_TRUE(game_is_timed(&g));
    CU_ASSERT_EQUAL(g.clock.control[WHITE].periods[0].ms, MINUTE_MS);
    CU_ASSERT_EQUAL(g.clock.control[WHITE].increment_ms, 2000);
    expect_clock_stands(&g, MINUTE_MS, MINUTE_MS);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    move_at(&g, "e4", 5000, NULL); /* White thought 5 s: free */
    expect_clock_stands(&g, MINUTE_MS, MINUTE_MS);
    EXPECT_NO_FLAG(&g, 5000 + HOUR_MS);
    move_at(&g, "e5", 5000 + 2 * MINUTE_MS, NULL); /* Black thought two minutes, more than it has: free too */
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], MINUTE_MS);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], MINUTE_MS);
    /* From here White's clock runs. */
    CU_ASSERT_TRUE(game_clock_running(&g));
    CU_ASSERT_EQUAL(g.clock.turn_started_ms, 5000 + 2 * MINUTE_MS);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 5000 + 3 * MINUTE_MS);
}

static void test_from_the_third_ply_the_mover_is_charged_the_elapsed_time_and_gets_the_increment(void)
{
    static const struct {
        const char *move;
        int64_t at_ms, white_ms, black_ms; /* the clock after the move */
    } plies[] = {
        { "e4", 1000, 60000, 60000 },
        { "e5", 2000, 60000, 60000 },
        { "Nf3", 5500, 60000 - 3500 + 2000, 60000 },       /* 3.5 s */
        { "Nc6", 5500, 58500, 60000 + 2000 },              /* no time at all */
        { "Bb5", 17845, 58500 - 12345 + 2000, 62000 },     /* 12.345 s */
        { "a6", 17846, 48155, 62000 - 1 + 2000 },          /* 1 ms */
        { "Ba4", 17846 + 48154, 1 + 2000, 63999 },       /* with 1 ms to spare */
    };
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 2000, GAME_TAKEBACK_AGREEMENT);
    for (size_t i = 0; i < sizeof plies / sizeof plies[0]; i++) {
        move_at(&g, plies[i].move, plies[i].at_ms, NULL);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], plies[i].white_ms);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], plies[i].black_ms);
        CU_ASSERT_EQUAL(g.clock.turn_started_ms, plies[i].at_ms);
        CU_ASSERT_EQUAL(g.clock.control[WHITE].periods[0].ms, MINUTE_MS);
        CU_ASSERT_EQUAL(g.clock.control[WHITE].increment_ms, 2000);
    }
}

static void test_a_move_that_ends_the_game_is_charged_and_then_the_clock_stands(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    move_at(&g, "f3", 0, NULL);
    move_at(&g, "e5", 0, NULL);
    move_at(&g, "g4", 4000, NULL); /* White: 60 - 4 + 1 */
    move_at(&g, "Qh4#", 10000, NULL); /* Black: 60 - 6 + 1 */
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_BLACK_WINS, GAME_TERMINATION_CHECKMATE);
    expect_clock_stands(&g, 57000, 55000);
}

static void test_remaining_time_of_the_side_to_move_runs_down_to_zero_and_the_other_stands_still(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    move_at(&g, "e4", 0, NULL);
    move_at(&g, "e5", 10000, NULL); /* White's turn starts at 10 s */
    static const struct {
        int64_t at_ms, white_ms;
    } reads[] = {
        { 0, 60000 },     /* before the turn started: not more than it has */
        { 10000, 60000 }, { 11000, 59000 }, { 69999, 1 }, { 70000, 0 },
        { 70001, 0 },     /* never below zero */
        { INT64_C(1) << 50, 0 },
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        game_t before = g;
        CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, reads[i].at_ms), reads[i].white_ms);
        CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, reads[i].at_ms), MINUTE_MS);
        EXPECT_SAME_GAME(&g, &before); /* reading changes nothing */
    }
    /* After White's move at 25 s, White's 45 s stand and Black's run. */
    move_at(&g, "Nf3", 25000, NULL);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, 25000), 45000);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, WHITE, HOUR_MS), 45000);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, 25000), 60000);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, 55000), 30000);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, HOUR_MS), 0);
}

static void test_flag_deadline_is_when_the_side_to_move_runs_out_and_zero_while_the_clock_stands(void)
{
    game_t g;
    start(&g, NULL);
    play(&g, "e4 e5 Nf3", NULL, false);
    CU_ASSERT_FALSE(game_is_timed(&g));
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0); /* untimed */
    timed_start(&g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0);
    move_at(&g, "e4", 3000, NULL);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0);
    move_at(&g, "e5", 7000, NULL);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 7000 + MINUTE_MS);
    move_at(&g, "Nf3", 10000, NULL); /* Black's turn: its whole minute */
    int64_t deadline = game_flag_deadline(&g);
    CU_ASSERT_EQUAL(deadline, 10000 + MINUTE_MS);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, deadline - 1), 1);
    CU_ASSERT_EQUAL(game_clock_remaining(&g, BLACK, deadline), 0);
    CU_ASSERT_EQUAL(game_resign(&g, WHITE, 12000), GAME_OK);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0);
}

/* ---- game_flag ---- */

static void test_flag_before_the_deadline_changes_nothing(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    move_at(&g, "e4", 0, NULL);
    move_at(&g, "e5", 1000, NULL);
    int64_t deadline = game_flag_deadline(&g);
    CU_ASSERT_EQUAL(deadline, 1000 + MINUTE_MS);
    EXPECT_NO_FLAG(&g, deadline - 1);
    EXPECT_NO_FLAG(&g, 1000);
    EXPECT_NO_FLAG(&g, 0);
    EXPECT_NO_FLAG(&g, -HOUR_MS);
    EXPECT_ACTIVE(&g);
}

/* White flags on move 2 (after e4 e5) or Black (after e4 e5 Nf3), with a
 * draw offer by the loser and a takeback offer by the other standing. */
static void test_flag_at_or_after_the_deadline_loses_on_time_for_the_side_to_move(void)
{
    static const int64_t late[] = { 0, 1, HOUR_MS };
    for (int loser = WHITE; loser <= BLACK; loser++) {
        for (size_t i = 0; i < sizeof late / sizeof late[0]; i++) {
            game_t g;
            timed_start(&g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
            move_at(&g, "e4", 0, NULL);
            move_at(&g, "e5", 0, NULL);
            if (loser == BLACK)
                move_at(&g, "Nf3", 2000, NULL);
            color_t other = (color_t)!loser;
            int plies = -1;
            CU_ASSERT_EQUAL(game_draw(&g, (color_t)loser, GAME_DRAW_OFFER, 2500), GAME_OK);
            CU_ASSERT_EQUAL(game_takeback(&g, other, GAME_TAKEBACK_OFFER, "", 0, 2500, &plies), GAME_OK);
            int64_t other_ms = g.clock.remaining_ms[other], deadline = game_flag_deadline(&g);
            game_t before = g;
            CU_ASSERT_TRUE(game_flag(&g, deadline + late[i]));
            EXPECT_ENDING(&g, GAME_TIMEOUT, other == WHITE ? GAME_WHITE_WINS : GAME_BLACK_WINS,
                          GAME_TERMINATION_TIME_FORFEIT);
            CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
            expect_clock_stands(&g, loser == WHITE ? 0 : other_ms, loser == BLACK ? 0 : other_ms);
            /* The moves stand as they were. */
            CU_ASSERT(memcmp(&g.pos, &before.pos, sizeof g.pos) == 0);
            CU_ASSERT_EQUAL(g.ply_count, before.ply_count);
            CU_ASSERT(memcmp(&g.status, &before.status, sizeof g.status) == 0);
            /* A flag falls once. */
            EXPECT_NO_FLAG(&g, deadline + late[i] + HOUR_MS);
        }
    }
}

/* FIDE 6.9: the side whose flag fell loses, unless the other side cannot
 * checkmate by any series of legal moves; then the game is drawn. */
static void test_flag_against_a_side_that_cannot_mate_is_a_draw(void)
{
    static const struct {
        const char *fen, *moves; /* then the side to move flags */
        game_result_t result;
    } cases[] = {
        /* White flags against a bare king, king and knight, king and bishop: drawn. */
        { "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "Qd2 Kf7", GAME_DRAWN },
        { "n3k3/8/8/8/8/8/8/3QK3 w - - 0 1", "Qd2 Kf7", GAME_DRAWN },
        { "b3k3/8/8/8/8/8/8/3QK3 w - - 0 1", "Qd2 Kf7", GAME_DRAWN },
        /* Against king and rook, king and pawn: lost. */
        { "r3k3/8/8/8/8/8/8/3QK3 w - - 0 1", "Qd2 Kf7", GAME_BLACK_WINS },
        { "4k3/p7/8/8/8/8/8/3QK3 w - - 0 1", "Qd2 Kf7", GAME_BLACK_WINS },
        /* Black flags against king and knight, king and bishop: drawn; */
        { "3qk3/8/8/8/8/8/8/1N2K3 w - - 0 1", "Nc3 Qd7 Nb1", GAME_DRAWN },
        { "3qk3/8/8/8/8/8/8/2B1K3 w - - 0 1", "Bd2 Qd7 Bc1", GAME_DRAWN },
        /* against king and rook, king and pawn: lost; and a knight can mate a king hemmed in by its own pawns. */
        { "3qk3/8/8/8/8/8/8/R3K3 w - - 0 1", "Ra2 Qd7 Ra1", GAME_WHITE_WINS },
        { "3qk3/8/8/8/8/8/P7/4K3 w - - 0 1", "a3 Qd7 a4", GAME_WHITE_WINS },
        { "3qk3/p7/8/8/8/8/8/1N2K3 w - - 0 1", "Nc3 Qd7 Nb1", GAME_WHITE_WINS },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g;
        timed_start(&g, cases[i].fen, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
        play(&g, cases[i].moves, NULL, false);
        EXPECT_ACTIVE(&g);
        CU_ASSERT_TRUE_FATAL(game_clock_running(&g));
        CU_ASSERT_TRUE(game_flag(&g, game_flag_deadline(&g)));
        if (g.result != cases[i].result)
            fprintf(stderr, "\n%s %s: %s on time\n", cases[i].fen, cases[i].moves, game_result_name(g.result));
        EXPECT_ENDING(&g, GAME_TIMEOUT, cases[i].result, GAME_TERMINATION_TIME_FORFEIT);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[g.pos.side_to_move], 0);
    }
}

static void test_untimed_game_never_flags(void)
{
    game_t g;
    start(&g, NULL);
    play(&g, "e4 e5 Nf3", NULL, false);
    CU_ASSERT_FALSE(game_is_timed(&g));
    CU_ASSERT_FALSE(game_clock_running(&g));
    EXPECT_NO_FLAG(&g, 0);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    EXPECT_NO_FLAG(&g, INT64_C(1) << 60);
}

static void test_finished_game_never_flags(void)
{
    game_t g;
    /* Resigned, mated, drawn by agreement, aborted: all on a clock. */
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    play(&g, "e4 e5 Nf3", NULL, false);
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, 1000), GAME_OK);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    play(&g, fools_mate, NULL, false);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    play(&g, "e4 e5", NULL, false);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    CU_ASSERT_EQUAL(game_abort(&g, WHITE, 0), GAME_OK);
    EXPECT_NO_FLAG(&g, HOUR_MS);
}

/* ---- endings on the clock ---- */

/* Nf3 Nf6 Ng1 Ng8 twice, every move at 0 on a clock of a minute plus a
 * second: 63 s each, White to move since 0, the repetition claimable. */
static void repetition_on_the_clock(game_t *g)
{
    timed_start(g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    play(g, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", NULL, false);
    CU_ASSERT_EQUAL_FATAL(g->clock.remaining_ms[WHITE], 63000);
    CU_ASSERT_EQUAL_FATAL(g->clock.remaining_ms[BLACK], 63000);
    CU_ASSERT_EQUAL_FATAL(g->clock.turn_started_ms, 0);
    CU_ASSERT_TRUE_FATAL(g->status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION);
}

/* Every ending by a player charges the side to move (White) the 7 s since
 * its turn started, whoever ends it, and adds no increment. */
static void test_resignation_agreement_and_claim_settle_the_clock_so_the_ending_shows_the_time_used(void)
{
    game_t g;
    for (int who = WHITE; who <= BLACK; who++) {
        repetition_on_the_clock(&g);
        CU_ASSERT_EQUAL(game_resign(&g, (color_t)who, 7000), GAME_OK);
        EXPECT_ENDING(&g, GAME_RESIGNED, who == WHITE ? GAME_BLACK_WINS : GAME_WHITE_WINS,
                      GAME_TERMINATION_RESIGNATION);
        expect_clock_stands(&g, 56000, 63000);
        /* A draw offered by one and accepted by the other. */
        repetition_on_the_clock(&g);
        game_t before = g;
        CU_ASSERT_EQUAL(game_draw(&g, (color_t)who, GAME_DRAW_OFFER, 3000), GAME_OK);
        CU_ASSERT(memcmp(&g.clock, &before.clock, sizeof g.clock) == 0); /* an offer does not touch the clock */
        CU_ASSERT_EQUAL(game_draw(&g, (color_t)!who, GAME_DRAW_ACCEPT, 7000), GAME_OK);
        EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT);
        expect_clock_stands(&g, 56000, 63000);
        /* Offers crossing. */
        repetition_on_the_clock(&g);
        CU_ASSERT_EQUAL(game_draw(&g, (color_t)who, GAME_DRAW_OFFER, 3000), GAME_OK);
        CU_ASSERT_EQUAL(game_draw(&g, (color_t)!who, GAME_DRAW_OFFER, 7000), GAME_OK);
        EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_AGREEMENT);
        expect_clock_stands(&g, 56000, 63000);
    }
    repetition_on_the_clock(&g);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 7000), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION);
    expect_clock_stands(&g, 56000, 63000);
    /* Later than the flag (the caller runs game_flag first): the clock shows 0, never less. */
    repetition_on_the_clock(&g);
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, HOUR_MS), GAME_OK);
    expect_clock_stands(&g, 0, 63000);
}

static void test_abort_before_the_clock_runs_leaves_both_clocks_full(void)
{
    for (int plies = 0; plies < 2; plies++) {
        game_t g;
        timed_start(&g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
        if (plies)
            move_at(&g, "e4", 4000, NULL);
        CU_ASSERT_EQUAL(game_abort(&g, BLACK, 9000), GAME_OK);
        EXPECT_ENDING(&g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
        expect_clock_stands(&g, MINUTE_MS, MINUTE_MS);
    }
}

/* ---- game_takeback ---- */

static game_status_t takeback(game_t *g, color_t who, game_takeback_action_t action, const line_t *line, int64_t now_ms,
                              int *plies_back)
{
    return game_takeback(g, who, action, line->text, line->length, now_ms, plies_back);
}

/* g with a takeback offer by who made: OK, nothing else changed, nothing taken back. */
static void offer_takeback(game_t *g, color_t who, const line_t *line)
{
    game_t before = *g;
    int plies = -1;
    CU_ASSERT_EQUAL_FATAL(takeback(g, who, GAME_TAKEBACK_OFFER, line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 0);
    CU_ASSERT_EQUAL(g->takeback_offer, who == WHITE ? GAME_OFFER_WHITE : GAME_OFFER_BLACK);
    before.takeback_offer = g->takeback_offer;
    EXPECT_SAME_GAME(g, &before);
}

static void test_takeback_offer_by_the_player_who_just_moved_goes_back_one_ply_on_acceptance(void)
{
    game_t g, expected;
    line_t line;
    game_of(&expected, NULL, "e4 e5", NULL);
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    CU_ASSERT_EQUAL(g.takeback, GAME_TAKEBACK_AGREEMENT); /* the policy of a new game */
    CU_ASSERT_EQUAL(game_takeback_plies(&g, WHITE), 1);
    offer_takeback(&g, WHITE, &line);
    int plies = -1;
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 1);
    EXPECT_SAME_GAME(&g, &expected);
}

static void test_takeback_offer_by_the_player_to_move_goes_back_two_plies_on_acceptance(void)
{
    game_t g, expected;
    line_t line;
    game_of(&expected, NULL, "e4", NULL);
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    CU_ASSERT_EQUAL(game_takeback_plies(&g, BLACK), 2);
    offer_takeback(&g, BLACK, &line); /* Black's e5, and White's reply */
    int plies = -1;
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 2);
    EXPECT_SAME_GAME(&g, &expected);
    CU_ASSERT_EQUAL(g.pos.side_to_move, BLACK); /* the proposer's turn again */
}

static void test_takeback_offer_with_nothing_to_take_back_is_refused(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "", &line);
    CU_ASSERT_EQUAL(game_takeback_plies(&g, WHITE), 0);
    CU_ASSERT_EQUAL(game_takeback_plies(&g, BLACK), 0);
    EXPECT_REFUSED(&g, takeback(&g, WHITE, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_ENOTHING_TO_UNDO);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_ENOTHING_TO_UNDO);
    /* After White's first move Black, to move, has no move of its own to take back. */
    play(&g, "e4", &line, false);
    CU_ASSERT_EQUAL(game_takeback_plies(&g, BLACK), 0);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_ENOTHING_TO_UNDO);
    offer_takeback(&g, WHITE, &line);
    /* A game started with Black to move: White has no move before the start. */
    game_of(&g, "4k3/8/8/8/8/8/8/R3K3 b - - 0 1", "Kd7", &line);
    CU_ASSERT_EQUAL(game_takeback_plies(&g, WHITE), 0);
    EXPECT_REFUSED(&g, takeback(&g, WHITE, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_ENOTHING_TO_UNDO);
    CU_ASSERT_EQUAL(plies, 0);
}

static void test_second_takeback_offer_by_the_same_player_is_refused(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "e4 e5", &line);
    offer_takeback(&g, BLACK, &line);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_ETAKEBACK_ALREADY_OFFERED);
}

static void test_takeback_accept_or_decline_without_the_other_players_offer_is_refused(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "e4 e5", &line);
    for (int who = WHITE; who <= BLACK; who++) {
        EXPECT_REFUSED(&g, takeback(&g, (color_t)who, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
        EXPECT_REFUSED(&g, takeback(&g, (color_t)who, GAME_TAKEBACK_DECLINE, &line, 0, &plies),
                       GAME_ENO_TAKEBACK_OFFER);
    }
    /* One's own offer cannot be accepted or declined by oneself. */
    offer_takeback(&g, BLACK, &line);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_DECLINE, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
    /* A draw offer is not a takeback offer. */
    game_of(&g, NULL, "e4 e5", &line);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    EXPECT_REFUSED(&g, takeback(&g, WHITE, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
}

static void test_declining_a_takeback_offer_drops_it_and_keeps_the_game(void)
{
    game_t g, before;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    before = g;
    offer_takeback(&g, WHITE, &line);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_DECLINE, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 0);
    EXPECT_SAME_GAME(&g, &before);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
    offer_takeback(&g, WHITE, &line); /* and it can be made again */
}

static void test_crossing_takeback_offers_are_an_acceptance_of_the_first(void)
{
    game_t g, expected;
    line_t line;
    int plies = -1;
    /* White's offer (its Nf3) accepted by Black's. */
    game_of(&expected, NULL, "e4 e5", NULL);
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    offer_takeback(&g, WHITE, &line);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 1);
    EXPECT_SAME_GAME(&g, &expected);
    /* Black's offer (its e5 and White's reply) accepted by White's. */
    game_of(&expected, NULL, "e4", NULL);
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    offer_takeback(&g, BLACK, &line);
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_OFFER, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 2);
    EXPECT_SAME_GAME(&g, &expected);
}

static void test_takeback_policy_none_refuses_offers_and_undo(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    start(&g, NULL);
    set_policy(&g, GAME_TAKEBACK_NONE);
    line_clear(&line);
    play(&g, "e4 e5 Nf3", &line, false);
    for (int who = WHITE; who <= BLACK; who++)
        for (int action = 0; action < GAME_TAKEBACK_ACTION_COUNT; action++)
            EXPECT_REFUSED(&g, takeback(&g, (color_t)who, (game_takeback_action_t)action, &line, 0, &plies),
                           GAME_ETAKEBACK_NOT_ALLOWED);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, line.text, line.length, 0), GAME_ETAKEBACK_NOT_ALLOWED);
    CU_ASSERT_EQUAL(plies, 0);
}

static void test_takeback_policy_agreement_refuses_undo(void)
{
    game_t g;
    line_t line;
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    CU_ASSERT_EQUAL(g.takeback, GAME_TAKEBACK_AGREEMENT);
    EXPECT_REFUSED(&g, game_undo(&g, WHITE, line.text, line.length, 0), GAME_ETAKEBACK_NOT_ALLOWED);
}

static void test_takeback_policy_free_allows_undo_and_takebacks_by_agreement(void)
{
    game_t g, expected;
    line_t line;
    int plies = -1;
    free_game_of(&expected, NULL, "e4 e5", NULL);
    free_game_of(&g, NULL, "e4 e5 Nf3", &line);
    CU_ASSERT_EQUAL(game_undo(&g, WHITE, line.text, line.length, 0), GAME_OK);
    EXPECT_SAME_GAME(&g, &expected);
    free_game_of(&g, NULL, "e4 e5 Nf3", &line);
    offer_takeback(&g, WHITE, &line);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 1);
    EXPECT_SAME_GAME(&g, &expected);
}

/* The game as replayed from its start to line (move-list text), under the
 * agreement policy, with the clock given. */
static void replayed_with_clock(game_t *g, const char *line, const game_clock_t *clock)
{
    position_t initial;
    tests_parse_fen(FEN_START, &initial);
    CU_ASSERT_EQUAL_FATAL(replay_active(g, &initial, line), GAME_OK);
    CU_ASSERT_EQUAL_FATAL(game_restore_rules(g, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, clock, &no_rules), GAME_OK);
}

/* e4 e5 Nf3 Nc6 Bb5 at 1, 2, 5, 9 and 10 s on a minute plus a second:
 * White has 58 s, Black 57 s and is to move since 10 s. */
static void ruy_lopez_on_the_clock(game_t *g, line_t *line)
{
    static const char *const moves[] = { "e4", "e5", "Nf3", "Nc6", "Bb5" };
    static const int64_t times[] = { 1000, 2000, 5000, 9000, 10000 };
    timed_start(g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    line_clear(line);
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
        move_at(g, moves[i], times[i], line);
    CU_ASSERT_EQUAL_FATAL(g->clock.remaining_ms[WHITE], 58000);
    CU_ASSERT_EQUAL_FATAL(g->clock.remaining_ms[BLACK], 57000);
    CU_ASSERT_EQUAL_FATAL(g->clock.turn_started_ms, 10000);
}

/* Accepted at 14 s: Black (to move) is charged its 4 s, each move taken
 * back loses the second it earned, and the side to move in the position
 * gone back to starts its turn then. */
static void test_accepted_takeback_is_the_game_replayed_to_that_point_with_the_clock_settled_and_restarted(void)
{
    game_t g, expected;
    line_t line;
    int plies = -1;
    /* White takes back its Bb5 (1 s spent, 1 s earned): White to move with its 57 s from before Bb5. */
    const game_clock_t one_back = fischer(MINUTE_MS, 1000, 57000, 53000, 14000, 0, 0);
    ruy_lopez_on_the_clock(&g, &line);
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_OFFER, &line, 11000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 14000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 1);
    replayed_with_clock(&expected, "e2e4 e7e5 g1f3 b8c6", &one_back);
    EXPECT_SAME_GAME(&g, &expected);
    CU_ASSERT_TRUE(game_clock_running(&g));
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 14000 + 57000);
    /* Black takes back its Nc6 and White's Bb5: Black to move, each without its move's second. */
    const game_clock_t two_back = fischer(MINUTE_MS, 1000, 57000, 52000, 14000, 0, 0);
    ruy_lopez_on_the_clock(&g, &line);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 11000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_ACCEPT, &line, 14000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 2);
    replayed_with_clock(&expected, "e2e4 e7e5 g1f3", &two_back);
    EXPECT_SAME_GAME(&g, &expected);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 14000 + 52000);
}

static void test_takeback_on_the_clock_back_below_two_plies_stops_the_clock(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    timed_start(&g, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    line_clear(&line);
    move_at(&g, "e4", 1000, &line);
    move_at(&g, "e5", 2000, &line);
    move_at(&g, "Nf3", 5000, &line); /* White: 60 - 3 + 1 */
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_OFFER, &line, 6000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_ACCEPT, &line, 8000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(plies, 2);
    CU_ASSERT_EQUAL(g.ply_count, 1);
    /* White's 3 s on Nf3 stay spent, its second goes with Nf3; Black paid its 3 s until the acceptance. */
    expect_clock_stands(&g, 57000, 57000);
    EXPECT_NO_FLAG(&g, HOUR_MS);
    /* The second ply is free again, and the clock then runs from it. */
    move_at(&g, "e5", 20000, NULL);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 57000);
    CU_ASSERT_TRUE(game_clock_running(&g));
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 20000 + 57000);
    /* Taken back to the start, the clock stands with the turn started at the acceptance. */
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    line_clear(&line);
    move_at(&g, "e4", 1000, &line);
    CU_ASSERT_EQUAL(takeback(&g, WHITE, GAME_TAKEBACK_OFFER, &line, 2000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 4000, &plies), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, 0);
    expect_clock_stands(&g, MINUTE_MS, MINUTE_MS);
    CU_ASSERT_EQUAL(g.clock.turn_started_ms, 4000);
    /* An undo (the free policy) of the second ply stops it too, White paying until then. */
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_FREE);
    line_clear(&line);
    move_at(&g, "e4", 0, &line);
    move_at(&g, "e5", 0, &line);
    CU_ASSERT_TRUE(game_clock_running(&g));
    CU_ASSERT_EQUAL(game_undo(&g, BLACK, line.text, line.length, 5000), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, 1);
    expect_clock_stands(&g, 55000, MINUTE_MS);
}

/* ---- a takeback gives back no increment ---- */

static void expect_rules_restored(const game_t *g); /* with game_restore_rules, below */

/* Cuts the last `plies` entries off line, as the store cuts the move list. */
static void line_cut(line_t *line, int plies)
{
    line->length = game_line_keep(line->text, line->length, plies);
    line->text[line->length] = '\0';
}

/* Undo by the player of the last move at now_ms; CU-asserts it is taken, and cuts line. */
static void undo_at(game_t *g, line_t *line, int64_t now_ms)
{
    CU_ASSERT_EQUAL_FATAL(game_undo(g, (color_t)!g->pos.side_to_move, line->text, line->length, now_ms), GAME_OK);
    line_cut(line, 1);
}

/* A takeback offered by `proposer` at offer_ms and accepted at accept_ms;
 * CU-asserts it is taken, takes back `plies`, and cuts line. */
static void takeback_at(game_t *g, color_t proposer, line_t *line, int64_t offer_ms, int64_t accept_ms, int plies)
{
    int back = -1;
    CU_ASSERT_EQUAL_FATAL(takeback(g, proposer, GAME_TAKEBACK_OFFER, line, offer_ms, &back), GAME_OK);
    CU_ASSERT_EQUAL_FATAL(takeback(g, (color_t)!proposer, GAME_TAKEBACK_ACCEPT, line, accept_ms, &back), GAME_OK);
    CU_ASSERT_EQUAL_FATAL(back, plies);
    line_cut(line, plies);
}

static void test_increment_earned_is_the_increment_from_the_third_ply_on_and_nothing_untimed(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 600000, GAME_TAKEBACK_FREE);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 0), 0);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 1), 0);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 2), 600000);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 3), 600000);
    CU_ASSERT_EQUAL(game_clock_earned(&g, GAME_MAX_PLIES - 1), 600000);
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_FREE);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 2), 0);
    start(&g, NULL);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 2), 0);
}

/* One player alone, under the free policy, moving and taking the move back
 * 20 times with a ten-minute increment: each undo leaves White what it had
 * before the move less the 7 ms it thought, never more; Black pays the 3 ms
 * of each undo's wait, its clock running. */
static void test_undo_loop_with_a_large_increment_never_gives_the_mover_more_time(void)
{
    game_t g;
    line_t line;
    timed_start(&g, NULL, MINUTE_MS, 600000, GAME_TAKEBACK_FREE);
    line_clear(&line);
    move_at(&g, "e4", 0, &line);
    move_at(&g, "e5", 0, &line);
    int64_t now = 0, white = MINUTE_MS;
    for (int i = 0; i < 20; i++) {
        now += 7;
        move_at(&g, "Nf3", now, &line);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], white - 7 + 600000); /* the move earned it */
        now += 3;
        undo_at(&g, &line, now);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], white - 7); /* and its undo takes it back */
        CU_ASSERT(game_clock_remaining(&g, WHITE, now) <= white);
        white = g.clock.remaining_ms[WHITE];
        CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], MINUTE_MS - 3 * (i + 1));
        CU_ASSERT_EQUAL(game_flag_deadline(&g), now + white);
        EXPECT_ACTIVE(&g);
    }
    CU_ASSERT_EQUAL(white, MINUTE_MS - 20 * 7);
    CU_ASSERT_EQUAL(g.ply_count, 2);
}

/* Under the agreement policy: five takebacks of the proposer's own last
 * move (one ply), then five of the proposer's move and the reply (two
 * plies). Each side ends with what it had before less the time it spent. */
static void test_accepted_takeback_loop_never_gives_either_side_more_time(void)
{
    game_t g;
    line_t line;
    timed_start(&g, NULL, MINUTE_MS, 600000, GAME_TAKEBACK_AGREEMENT);
    line_clear(&line);
    move_at(&g, "e4", 0, &line);
    move_at(&g, "e5", 0, &line);
    int64_t now = 0, white = MINUTE_MS, black = MINUTE_MS;
    for (int i = 0; i < 5; i++) {
        move_at(&g, "Nf3", now + 5, &line);                      /* White thinks 5 ms */
        takeback_at(&g, WHITE, &line, now + 6, now + 8, 1);       /* Black's clock runs 3 ms until it accepts */
        now += 8;
        white -= 5, black -= 3;
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], white);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], black);
        CU_ASSERT_EQUAL(g.pos.side_to_move, WHITE);
    }
    for (int i = 0; i < 5; i++) {
        move_at(&g, "Nf3", now + 5, &line);                       /* White thinks 5 ms */
        move_at(&g, "Nc6", now + 9, &line);                       /* Black 4 ms */
        takeback_at(&g, WHITE, &line, now + 10, now + 12, 2);     /* White's clock runs 3 ms until Black accepts */
        now += 12;
        white -= 5 + 3, black -= 4;
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], white);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], black);
        CU_ASSERT_EQUAL(g.ply_count, 2);
        CU_ASSERT_EQUAL(game_flag_deadline(&g), now + white);
    }
    CU_ASSERT(white < MINUTE_MS && black < MINUTE_MS);
}

/* The first two plies earn no increment (the clock is not yet running as
 * they are played), so taking them back takes none away: a side whose
 * first move is taken back keeps its whole initial time, not the initial
 * time less an increment it never had. */
static void test_takeback_of_the_first_two_plies_takes_away_no_increment(void)
{
    game_t g;
    line_t line;
    timed_start(&g, NULL, MINUTE_MS, 600000, GAME_TAKEBACK_FREE);
    line_clear(&line);
    move_at(&g, "e4", 1000, &line);
    undo_at(&g, &line, 2000); /* right after the start: nothing runs, nothing was earned */
    expect_clock_stands(&g, MINUTE_MS, MINUTE_MS);
    move_at(&g, "e4", 3000, &line);
    move_at(&g, "e5", 4000, &line); /* the clock starts: White's turn from 4 s */
    undo_at(&g, &line, 6000);       /* White paid 2 s waiting; e5 earned nothing */
    CU_ASSERT_EQUAL(g.ply_count, 1);
    expect_clock_stands(&g, 58000, MINUTE_MS);
    /* By agreement: two plies back from the second, to the start. */
    timed_start(&g, NULL, MINUTE_MS, 600000, GAME_TAKEBACK_AGREEMENT);
    line_clear(&line);
    move_at(&g, "e4", 1000, &line);
    move_at(&g, "e5", 2000, &line);
    takeback_at(&g, WHITE, &line, 2500, 3000, 2);
    CU_ASSERT_EQUAL(g.ply_count, 0);
    expect_clock_stands(&g, 59000, MINUTE_MS);
    /* The third ply is the first that earns: taking it back takes that away, and only that. */
    move_at(&g, "e4", 4000, &line);
    move_at(&g, "e5", 5000, &line);
    move_at(&g, "Nf3", 6000, &line); /* White: 59 - 1 + 600 s */
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 59000 - 1000 + 600000);
    takeback_at(&g, BLACK, &line, 7000, 9000, 2); /* Nf3 and e5; Black paid 3 s */
    CU_ASSERT_EQUAL(g.ply_count, 1);
    expect_clock_stands(&g, 58000, 57000);
}

/* From a position with Black to move: the plies alternate from Black, and
 * Black's moves are the ones whose increments go back with them. */
static void test_undo_takes_back_the_increment_of_the_side_that_made_the_move(void)
{
    game_t g;
    line_t line;
    timed_start(&g, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", MINUTE_MS, 5000,
                GAME_TAKEBACK_FREE);
    line_clear(&line);
    move_at(&g, "e5", 0, &line);
    move_at(&g, "Nf3", 0, &line);
    move_at(&g, "Nc6", 2000, &line); /* Black: 60 - 2 + 5 */
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 63000);
    undo_at(&g, &line, 3000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 58000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 59000);
    CU_ASSERT_EQUAL(g.pos.side_to_move, BLACK);
}

/* White had 1 s before Nf3, thought 0.5 s on it and earned 600 s; after
 * Black's reply White thinks 100 s and asks to take both back. Without
 * Nf3's increment White's time is gone: Black's acceptance leaves White at
 * 0, and White, to move, loses on time there and then. */
static void test_takeback_that_leaves_the_side_to_move_no_time_ends_the_game_on_time(void)
{
    game_t g;
    line_t line;
    timed_start(&g, NULL, 1000, 600000, GAME_TAKEBACK_AGREEMENT);
    line_clear(&line);
    move_at(&g, "e4", 0, &line);
    move_at(&g, "e5", 0, &line);
    move_at(&g, "Nf3", 500, &line);   /* White: 1 - 0.5 + 600 s */
    move_at(&g, "Nc6", 1400, &line);  /* Black: 1 - 0.9 + 600 s */
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 600500);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 600100);
    EXPECT_NO_FLAG(&g, 101400);
    takeback_at(&g, WHITE, &line, 100000, 101400, 2);
    CU_ASSERT_EQUAL(g.ply_count, 2);
    EXPECT_ENDING(&g, GAME_TIMEOUT, GAME_BLACK_WINS, GAME_TERMINATION_TIME_FORFEIT);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 0);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 100); /* what Black had left before Nc6's increment */
    CU_ASSERT_EQUAL(g.clock.turn_started_ms, 101400);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    CU_ASSERT_FALSE(game_clock_running(&g));
    expect_rules_restored(&g);
}

/* A game imported (replayed, then given a new game's rules): its moves
 * earned no increment, so taking them back takes none away, while moves
 * played after the import earn and lose theirs; a takeback into the
 * imported moves makes the moves played from there on earn. In Chess960. */
static void test_imported_moves_earned_no_increment_and_takebacks_of_them_take_none(void)
{
    game_t g, rules;
    line_t line;
    game_of(&g, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 9", "a3a4 d6d5 b2b3 a7a6", &line);
    timed_start(&rules, NULL, MINUTE_MS, 10000, GAME_TAKEBACK_FREE);
    CU_ASSERT_EQUAL_FATAL(game_adopt_rules(&g, &rules, 1000), GAME_OK);
    CU_ASSERT_EQUAL(g.takeback, GAME_TAKEBACK_FREE);
    CU_ASSERT_EQUAL(g.clock.imported_plies, 4);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], MINUTE_MS);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], MINUTE_MS);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 1000 + MINUTE_MS); /* four plies: the clock runs */
    for (int ply = 0; ply < 4; ply++)
        CU_ASSERT_EQUAL(game_clock_earned(&g, ply), 0);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 4), 10000);
    expect_rules_restored(&g);
    /* A move after the import earns, and its undo takes that back. */
    move_at(&g, "e2e4", 3000, &line);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 68000);
    undo_at(&g, &line, 4000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 58000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 59000);
    CU_ASSERT_EQUAL(g.clock.imported_plies, 4);
    /* Black takes back its imported a7a6: no increment to take away. */
    undo_at(&g, &line, 5000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 57000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 59000);
    CU_ASSERT_EQUAL(g.clock.imported_plies, 3);
    expect_rules_restored(&g);
    /* Played again, a7a6 is a move on this clock: it earns, and loses it when taken back. */
    move_at(&g, "a7a6", 6000, &line);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 68000);
    undo_at(&g, &line, 7000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 58000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 56000);
    /* White's imported b2b3 goes back with nothing taken, and no imported move earned anything after all. */
    undo_at(&g, &line, 8000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], 56000);
    CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], 57000);
    CU_ASSERT_EQUAL(g.clock.imported_plies, 0);
    CU_ASSERT_EQUAL(game_clock_earned(&g, 2), 10000);
    CU_ASSERT(g.initial.chess960);
    expect_rules_restored(&g);
}

static void test_adopt_rules_of_an_untimed_game_or_one_of_two_plies_has_no_imported_plies(void)
{
    game_t g, rules, before;
    start(&rules, NULL);
    set_policy(&rules, GAME_TAKEBACK_NONE);
    game_of(&g, NULL, "e4 e5 Nf3", NULL);
    CU_ASSERT_EQUAL(game_adopt_rules(&g, &rules, 5000), GAME_OK);
    CU_ASSERT_FALSE(game_is_timed(&g));
    CU_ASSERT_EQUAL(g.clock.imported_plies, 0);
    CU_ASSERT_EQUAL(g.clock.turn_started_ms, 5000); /* every game's turn starts: the idle end counts from it */
    CU_ASSERT_EQUAL(g.takeback, GAME_TAKEBACK_NONE);
    timed_start(&rules, NULL, MINUTE_MS, 1000, GAME_TAKEBACK_AGREEMENT);
    game_of(&g, NULL, "e4 e5", NULL);
    CU_ASSERT_EQUAL(game_adopt_rules(&g, &rules, 5000), GAME_OK);
    CU_ASSERT_EQUAL(g.clock.imported_plies, 0); /* the first two plies never earn anyway */
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 5000 + MINUTE_MS);
    /* Rules that do not fit (an out-of-bounds clock) change nothing. */
    rules.clock.control[WHITE].periods[0].ms = 1;
    game_of(&g, NULL, "e4 e5 Nf3", NULL);
    before = g;
    EXPECT_REFUSED(&g, game_adopt_rules(&g, &rules, 5000), GAME_EBAD_RECORD);
    EXPECT_SAME_GAME(&g, &before);
}

static void test_takeback_with_a_line_that_is_not_the_games_is_refused(void)
{
    static const char *const lines[] = {
        "", "e2e4:e4 e7e5:e5", "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6", "d2d4:d4 d7d5:d5 g1f3:Nf3", "e2e4:e4 e7e5:e5 g1f3 ",
    };
    game_t g;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    offer_takeback(&g, WHITE, &line);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        EXPECT_REFUSED(&g, game_takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, lines[i], strlen(lines[i]), 0, &plies),
                       GAME_EBAD_RECORD);
    CU_ASSERT_EQUAL(plies, 0);
    CU_ASSERT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, 2);
}

static void test_unknown_takeback_action_changes_nothing(void)
{
    game_t g, before;
    line_t line;
    int plies = -1;
    game_of(&g, NULL, "e4 e5 Nf3", &line);
    offer_takeback(&g, WHITE, &line);
    before = g;
    CU_ASSERT_NOT_EQUAL(takeback(&g, BLACK, GAME_TAKEBACK_ACTION_COUNT, &line, 0, &plies), GAME_OK);
    EXPECT_SAME_GAME(&g, &before);
    CU_ASSERT_EQUAL(plies, 0);
}

/* ---- offers that lapse ---- */

static void test_a_move_drops_any_takeback_offer(void)
{
    game_t g;
    line_t line;
    int plies = -1;
    /* White's, when Black moves instead of answering. */
    game_of(&g, NULL, "e4", &line);
    offer_takeback(&g, WHITE, &line);
    play(&g, "e5", &line, false);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
    /* The proposer's own, made on its turn, when it then moves: the moves it
     * would take back are no longer the last ones. White's, then Black's. */
    offer_takeback(&g, WHITE, &line);
    play(&g, "Nf3", &line, false);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    EXPECT_REFUSED(&g, takeback(&g, BLACK, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
    offer_takeback(&g, BLACK, &line);
    play(&g, "Nc6", &line, false);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    EXPECT_REFUSED(&g, takeback(&g, WHITE, GAME_TAKEBACK_ACCEPT, &line, 0, &plies), GAME_ENO_TAKEBACK_OFFER);
}

/* A draw offer lapses when the player it was made to moves; the maker's own move keeps it. */
static void test_draw_offer_lapses_when_its_receiver_moves_not_when_its_maker_moves(void)
{
    game_t g;
    game_of(&g, NULL, "e4", NULL);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK); /* Black's, on its turn */
    play(&g, "e5", NULL, false);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_BLACK);
    play(&g, "Nf3", NULL, false); /* White moves instead of answering */
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_NONE);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK); /* White's, on Black's turn */
    play(&g, "Nc6", NULL, false);
    CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_NONE);
}

/* A game with a draw offer by `drawer` and a takeback offer by the other
 * player standing, on a clock, after e4 e5 Nf3 (Black to move). */
static void game_with_both_offers(game_t *g, line_t *line, color_t drawer)
{
    int plies = -1;
    timed_start(g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    line_clear(line);
    play(g, "e4 e5 Nf3", line, false);
    CU_ASSERT_EQUAL_FATAL(game_draw(g, drawer, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL_FATAL(takeback(g, (color_t)!drawer, GAME_TAKEBACK_OFFER, line, 0, &plies), GAME_OK);
}

static void test_every_ending_drops_the_draw_and_takeback_offers(void)
{
    for (int drawer = WHITE; drawer <= BLACK; drawer++) {
        game_t g;
        line_t line;
        game_with_both_offers(&g, &line, (color_t)drawer);
        CU_ASSERT_EQUAL(game_resign(&g, WHITE, 1000), GAME_OK);
        CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_NONE);
        CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
        game_with_both_offers(&g, &line, (color_t)drawer);
        CU_ASSERT_TRUE(game_flag(&g, HOUR_MS));
        CU_ASSERT_EQUAL(g.draw_offer, GAME_OFFER_NONE);
        CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
        game_with_both_offers(&g, &line, (color_t)drawer);
        CU_ASSERT_EQUAL(game_draw(&g, (color_t)!drawer, GAME_DRAW_ACCEPT, 1000), GAME_OK);
        CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    }
    /* A claim, with both offers standing. */
    game_t g;
    line_t line;
    line_clear(&line);
    start(&g, NULL);
    play(&g, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8", &line, false);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    offer_takeback(&g, BLACK, &line);
    CU_ASSERT_EQUAL(game_draw(&g, WHITE, GAME_DRAW_CLAIM, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_DRAW, GAME_DRAWN, GAME_TERMINATION_THREEFOLD_REPETITION);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    /* An abort after White's first move. */
    game_of(&g, NULL, "e4", &line);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    offer_takeback(&g, WHITE, &line);
    CU_ASSERT_EQUAL(game_abort(&g, WHITE, 0), GAME_OK);
    EXPECT_ENDING(&g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
    CU_ASSERT_EQUAL(g.takeback_offer, GAME_OFFER_NONE);
    /* A mate by the player whose draw offer stands. */
    game_of(&g, NULL, "f3 e5 g4", &line);
    CU_ASSERT_EQUAL(game_draw(&g, BLACK, GAME_DRAW_OFFER, 0), GAME_OK);
    play(&g, "Qh4#", &line, false);
    EXPECT_ENDING(&g, GAME_CHECKMATE, GAME_BLACK_WINS, GAME_TERMINATION_CHECKMATE);
}

static void test_every_takeback_action_on_a_finished_game_is_refused(void)
{
    game_t finished[3];
    line_t lines[3];
    int plies = -1;
    game_of(&finished[0], NULL, fools_mate, &lines[0]);
    game_of(&finished[1], NULL, "e4 e5", &lines[1]);
    CU_ASSERT_EQUAL(game_resign(&finished[1], WHITE, 0), GAME_OK);
    free_game_of(&finished[2], NULL, "e4 e5 Nf3", &lines[2]);
    CU_ASSERT_EQUAL(game_draw(&finished[2], WHITE, GAME_DRAW_OFFER, 0), GAME_OK);
    CU_ASSERT_EQUAL(game_draw(&finished[2], BLACK, GAME_DRAW_ACCEPT, 0), GAME_OK);
    for (int i = 0; i < 3; i++) {
        for (int who = WHITE; who <= BLACK; who++) {
            for (int action = 0; action < GAME_TAKEBACK_ACTION_COUNT; action++)
                EXPECT_REFUSED(&finished[i],
                               takeback(&finished[i], (color_t)who, (game_takeback_action_t)action, &lines[i], 0,
                                        &plies),
                               GAME_EOVER);
            EXPECT_REFUSED(&finished[i], game_undo(&finished[i], (color_t)who, lines[i].text, lines[i].length, 0),
                           GAME_EOVER);
        }
    }
    CU_ASSERT_EQUAL(plies, 0);
}

/* ---- game_abort ---- */

static void test_abort_by_either_player_before_both_have_moved_ends_the_game_without_a_result(void)
{
    for (int plies = 0; plies < 2; plies++) {
        for (int who = WHITE; who <= BLACK; who++) {
            game_t g;
            game_of(&g, NULL, plies ? "e4" : "", NULL);
            CU_ASSERT_EQUAL(game_abort(&g, (color_t)who, 0), GAME_OK);
            EXPECT_ENDING(&g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
            CU_ASSERT_STRING_EQUAL(game_result_name(g.result), "*");
            CU_ASSERT_STRING_EQUAL(game_state_name(g.state), "aborted");
            CU_ASSERT_STRING_EQUAL(game_termination_name(g.termination), "aborted");
            CU_ASSERT_EQUAL(g.ply_count, plies);
        }
    }
}

static void test_abort_once_both_players_have_moved_is_refused(void)
{
    game_t g;
    game_of(&g, NULL, "e4 e5", NULL);
    EXPECT_REFUSED(&g, game_abort(&g, WHITE, 0), GAME_EABORT_TOO_LATE);
    EXPECT_REFUSED(&g, game_abort(&g, BLACK, 0), GAME_EABORT_TOO_LATE);
    play(&g, "Nf3", NULL, false);
    EXPECT_REFUSED(&g, game_abort(&g, BLACK, 0), GAME_EABORT_TOO_LATE);
    /* Plies count from the game's start, whatever its move number. */
    game_of(&g, "4k3/8/8/8/8/8/8/R3K3 b - - 0 40", "Kd7 Ra2", NULL);
    EXPECT_REFUSED(&g, game_abort(&g, BLACK, 0), GAME_EABORT_TOO_LATE);
    game_of(&g, "4k3/8/8/8/8/8/8/R3K3 b - - 0 40", "Kd7", NULL);
    CU_ASSERT_EQUAL(game_abort(&g, BLACK, 0), GAME_OK);
}

static void test_every_operation_on_an_aborted_game_is_refused(void)
{
    game_t g;
    line_t line;
    game_played_t played;
    int plies = -1;
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_FREE);
    line_clear(&line);
    move_at(&g, "e4", 0, &line);
    CU_ASSERT_EQUAL(game_abort(&g, BLACK, 0), GAME_OK);
    for (int who = WHITE; who <= BLACK; who++) {
        EXPECT_REFUSED(&g, move_for(&g, (color_t)who, who == WHITE ? "d4" : "e5", &played), GAME_EOVER);
        EXPECT_REFUSED(&g, game_undo(&g, (color_t)who, line.text, line.length, 0), GAME_EOVER);
        for (int action = 0; action < GAME_TAKEBACK_ACTION_COUNT; action++)
            EXPECT_REFUSED(&g, takeback(&g, (color_t)who, (game_takeback_action_t)action, &line, 0, &plies),
                           GAME_EOVER);
        for (int action = 0; action < GAME_DRAW_ACTION_COUNT; action++)
            EXPECT_REFUSED(&g, game_draw(&g, (color_t)who, (game_draw_action_t)action, 0), GAME_EOVER);
        EXPECT_REFUSED(&g, game_resign(&g, (color_t)who, 0), GAME_EOVER);
        EXPECT_REFUSED(&g, game_abort(&g, (color_t)who, 0), GAME_EOVER);
    }
    EXPECT_NO_FLAG(&g, HOUR_MS);
}

/* ---- game_set_rules and game_restore_rules ---- */

static void test_set_rules_takes_a_clock_within_its_bounds_only(void)
{
    static const struct {
        int64_t initial_ms, increment_ms;
        game_takeback_t takeback;
        bool taken;
    } cases[] = {
        { 999, 0, GAME_TAKEBACK_AGREEMENT, false },
        { 1000, 0, GAME_TAKEBACK_AGREEMENT, true },
        { 86400000, 0, GAME_TAKEBACK_FREE, true },
        { 86400001, 0, GAME_TAKEBACK_AGREEMENT, false },
        { 1000, 600000, GAME_TAKEBACK_NONE, true },
        { 1000, 600001, GAME_TAKEBACK_AGREEMENT, false },
        { 1000, -1, GAME_TAKEBACK_AGREEMENT, false },
        { 0, 1000, GAME_TAKEBACK_AGREEMENT, false }, /* an increment on no clock */
        { -1000, 0, GAME_TAKEBACK_AGREEMENT, false },
        { INT64_MAX, 0, GAME_TAKEBACK_AGREEMENT, false },
        { 0, 0, GAME_TAKEBACK_NONE, true },
        { 0, 0, GAME_TAKEBACK_COUNT, false },
        { 1000, 0, (game_takeback_t)-1, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        game_t g, before;
        start(&g, NULL);
        before = g;
        bool taken = game_set_rules(&g, cases[i].initial_ms, cases[i].increment_ms, cases[i].takeback);
        if (taken != cases[i].taken)
            fprintf(stderr, "\ngame_set_rules %lld + %lld: %s\n", (long long)cases[i].initial_ms,
                    (long long)cases[i].increment_ms, taken ? "taken" : "refused");
        CU_ASSERT_EQUAL(taken, cases[i].taken);
        if (!cases[i].taken) {
            EXPECT_SAME_GAME(&g, &before);
            continue;
        }
        CU_ASSERT_EQUAL(g.takeback, cases[i].takeback);
        CU_ASSERT_EQUAL(game_is_timed(&g), cases[i].initial_ms > 0);
        CU_ASSERT_EQUAL(g.clock.control[WHITE].periods[0].ms, cases[i].initial_ms);
        CU_ASSERT_EQUAL(g.clock.control[WHITE].increment_ms, cases[i].increment_ms);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[WHITE], cases[i].initial_ms);
        CU_ASSERT_EQUAL(g.clock.remaining_ms[BLACK], cases[i].initial_ms);
        CU_ASSERT_EQUAL(g.clock.turn_started_ms, 0);
    }
}

/* r restored from g's parts (game_restore) and rules; CU-asserts that it
 * gives g back. */
static void expect_rules_restored(const game_t *g)
{
    game_t r;
    CU_ASSERT_EQUAL_FATAL(restore(&r, g), GAME_OK);
    CU_ASSERT_EQUAL(game_restore_rules(&r, g->takeback, g->takeback_offer, &g->clock, &g->rules), GAME_OK);
    EXPECT_SAME_GAME(&r, g);
}

/* ---- the first-move grace ---- */

static void test_a_first_move_not_made_within_the_grace_aborts_the_game(void)
{
    game_t g;
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_FREE);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 0); /* no grace set: nothing to end */
    CU_ASSERT_FATAL(game_set_first_move(&g, 30000, 1000));
    CU_ASSERT_EQUAL(game_first_move_deadline(&g), 31000);
    CU_ASSERT_EQUAL(game_flag_deadline(&g), 31000);
    CU_ASSERT_FALSE(game_clock_running(&g));
    EXPECT_NO_FLAG(&g, 30999);
    /* White's first move just before the grace ends keeps the game; Black's grace starts then. */
    game_t late = g;
    move_at(&late, "e4", 30999, NULL);
    CU_ASSERT_EQUAL(late.state, GAME_ACTIVE);
    CU_ASSERT_EQUAL(game_first_move_deadline(&late), 60999);
    EXPECT_NO_FLAG(&late, 60998);
    /* Black's first move: the clock runs, the grace is over. */
    game_t both = late;
    move_at(&both, "e5", 60000, NULL);
    CU_ASSERT_EQUAL(game_first_move_deadline(&both), 0);
    CU_ASSERT_TRUE(game_clock_running(&both));
    CU_ASSERT_EQUAL(game_flag_deadline(&both), 60000 + MINUTE_MS);
    /* Black not moving: aborted at the grace's end, no result, no time lost. */
    CU_ASSERT_TRUE(game_flag(&late, 60999));
    CU_ASSERT_EQUAL(late.state, GAME_ABORTED);
    CU_ASSERT_EQUAL(late.result, GAME_RESULT_NONE);
    CU_ASSERT_EQUAL(late.termination, GAME_TERMINATION_ABORTED);
    CU_ASSERT_EQUAL(late.clock.remaining_ms[BLACK], MINUTE_MS);
    CU_ASSERT_EQUAL(game_flag_deadline(&late), 0);
    EXPECT_REFUSED(&late, game_move(&late, BLACK, "e5", 2, GAME_MAX_PLIES, 61000, &(game_played_t){ 0 }), GAME_EOVER);
    /* White not moving. */
    CU_ASSERT_TRUE(game_flag(&g, 31000));
    CU_ASSERT_EQUAL(g.state, GAME_ABORTED);
}

static void test_a_takeback_before_the_second_ply_starts_the_grace_again(void)
{
    game_t g;
    line_t line = { 0 };
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_FREE);
    CU_ASSERT_FATAL(game_set_first_move(&g, 10000, 0));
    move_at(&g, "e4", 5000, &line);
    CU_ASSERT_EQUAL(game_first_move_deadline(&g), 15000);
    CU_ASSERT_EQUAL_FATAL(game_undo(&g, WHITE, line.text, line.length, 9000), GAME_OK);
    CU_ASSERT_EQUAL(g.ply_count, 0);
    CU_ASSERT_EQUAL(game_first_move_deadline(&g), 19000);
    EXPECT_NO_FLAG(&g, 18999);
    CU_ASSERT_TRUE(game_flag(&g, 19000));
    CU_ASSERT_EQUAL(g.state, GAME_ABORTED);
}

static void test_the_grace_is_bounded_and_only_for_a_timed_game(void)
{
    game_t g, untimed;
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_AGREEMENT);
    game_t before = g;
    CU_ASSERT_FALSE(game_set_first_move(&g, -1, 0));
    CU_ASSERT_FALSE(game_set_first_move(&g, GAME_FIRST_MOVE_MAX + 1, 0));
    CU_ASSERT(memcmp(&before, &g, sizeof g) == 0);
    CU_ASSERT_TRUE(game_set_first_move(&g, GAME_FIRST_MOVE_MAX, 0));
    CU_ASSERT_TRUE(game_set_first_move(&g, 0, 5));
    CU_ASSERT_EQUAL(game_first_move_deadline(&g), 0); /* 0: no grace */
    start(&untimed, NULL);
    CU_ASSERT_FALSE(game_set_first_move(&untimed, 30000, 0));
    CU_ASSERT_TRUE(game_set_first_move(&untimed, 0, 0));
    CU_ASSERT_EQUAL(game_flag_deadline(&untimed), 0);
}

static void test_restore_rules_gives_back_the_policy_the_offer_and_the_clock(void)
{
    game_t g;
    line_t line;
    for (int policy = 0; policy < GAME_TAKEBACK_COUNT; policy++) {
        start(&g, NULL);
        set_policy(&g, (game_takeback_t)policy);
        expect_rules_restored(&g);
    }
    ruy_lopez_on_the_clock(&g, &line); /* running */
    expect_rules_restored(&g);
    offer_takeback(&g, BLACK, &line);
    expect_rules_restored(&g);
    CU_ASSERT_TRUE(game_flag(&g, HOUR_MS)); /* a timeout */
    expect_rules_restored(&g);
    ruy_lopez_on_the_clock(&g, &line);
    CU_ASSERT_EQUAL(game_resign(&g, BLACK, 12000), GAME_OK); /* stopped */
    expect_rules_restored(&g);
    timed_start(&g, NULL, MINUTE_MS, 0, GAME_TAKEBACK_NONE);
    play(&g, "e4", NULL, false); /* not running yet */
    expect_rules_restored(&g);
    CU_ASSERT_EQUAL(game_abort(&g, WHITE, 0), GAME_OK);
    expect_rules_restored(&g);
}

static void test_restore_rules_refuses_rules_that_do_not_fit_the_game(void)
{
    game_t active, timeout, resigned, r;
    line_t line;
    ruy_lopez_on_the_clock(&active, &line); /* Black to move, White just moved */
    timeout = active;
    CU_ASSERT_TRUE_FATAL(game_flag(&timeout, HOUR_MS)); /* Black lost on time */
    resigned = active;
    CU_ASSERT_EQUAL_FATAL(game_resign(&resigned, WHITE, 12000), GAME_OK);
    const game_clock_t ok = active.clock, untimed = { 0 };
#define EXPECT_BAD_RULES(game, takeback_, offer_, ...)                                                       \
    do {                                                                                                   \
        const game_clock_t clock_ = __VA_ARGS__;                                                           \
        r = (game);                                                                                        \
        EXPECT_REFUSED(&r, game_restore_rules(&r, takeback_, offer_, &clock_, &no_rules), GAME_EBAD_RECORD);          \
    } while (0)
    /* The clock's bounds. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(999, 0, 1000, 1000, 0, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(86400001, 0, 1000, 1000, 0, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 600001, 1000, 1000, 0, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, -1, 1000, 1000, 0, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 1000, 0, 0, 0, 0, 0));
    /* Negative or absurd figures. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, -1, 1000, 10000, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, -1, 10000, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, -1, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE,
                     fischer(MINUTE_MS, 1000, INT64_C(9000000000000001), 1000, 10000, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE,
                     fischer(MINUTE_MS, 1000, 1000, 1000, INT64_C(9000000000000001), 0, 0));
    /* An untimed game with figures. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 0, 1, 0, 0, 0, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 0, 0, 1, 0, 0, 0));
    /* A timeout on no clock, or with the loser's time left. */
    EXPECT_BAD_RULES(timeout, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 0, 0, 0, 0, 0, 0));
    EXPECT_BAD_RULES(timeout, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 58000, 1, HOUR_MS, 0, 0));
    /* Takeback offers: in a finished game, under the policy none, by a player with nothing to take back. */
    EXPECT_BAD_RULES(resigned, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_WHITE, resigned.clock);
    EXPECT_BAD_RULES(timeout, GAME_TAKEBACK_FREE, GAME_OFFER_BLACK, timeout.clock);
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_NONE, GAME_OFFER_WHITE, ok);
    game_t one;
    game_of(&one, NULL, "e4", NULL);
    EXPECT_BAD_RULES(one, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_BLACK, untimed);
    game_t none;
    game_of(&none, NULL, "", NULL);
    EXPECT_BAD_RULES(none, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_WHITE, untimed);
    /* Imported plies: 1 and 2 are kept as 0, none beyond the game's 5 plies, none on no clock. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 1, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 2, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, 10000, -1, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 6, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE,
                     fischer(MINUTE_MS, 1000, 1000, 1000, 10000, INT64_MAX, 0));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 0, 0, 0, 0, 3, 0));
    /* Values outside the enums. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_COUNT, GAME_OFFER_NONE, ok);
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_COUNT, ok);
    /* The first-move grace: within its bounds, and none in an untimed game. */
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 0, -1));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE,
                     fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 0, GAME_FIRST_MOVE_MAX + 1));
    EXPECT_BAD_RULES(active, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_NONE, fischer(0, 0, 0, 0, 0, 0, 30000));
#undef EXPECT_BAD_RULES
    /* What does fit is taken (the cases above differ from these in one thing). */
    const game_clock_t fits[] = { ok, fischer(MINUTE_MS, 1000, 0, 9000000000000000, 9000000000000000, 0, 0),
                                  fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 3, 0),
                                  fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 5, 0),
                                  fischer(MINUTE_MS, 1000, 1000, 1000, 10000, 0, GAME_FIRST_MOVE_MAX) };
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        r = active;
        CU_ASSERT_EQUAL(game_restore_rules(&r, GAME_TAKEBACK_FREE, GAME_OFFER_WHITE, &fits[i], &no_rules), GAME_OK);
    }
    r = one;
    CU_ASSERT_EQUAL(game_restore_rules(&r, GAME_TAKEBACK_AGREEMENT, GAME_OFFER_WHITE, &untimed, &no_rules), GAME_OK);
    r = timeout;
    const game_clock_t timeout_clock = fischer(MINUTE_MS, 1000, 58000, 0, HOUR_MS, 0, 0);
    CU_ASSERT_EQUAL(game_restore_rules(&r, GAME_TAKEBACK_NONE, GAME_OFFER_NONE, &timeout_clock, &no_rules), GAME_OK);
}

/* ---- names ---- */

typedef struct {
    const char *(*name)(int value);
    int (*from_name)(const char *name, size_t length);
    int count;
} name_table_t;

static const char *state_name(int v) { return game_state_name((game_state_t)v); }
static const char *result_name(int v) { return game_result_name((game_result_t)v); }
static const char *termination_name(int v) { return game_termination_name((game_termination_t)v); }
static const char *offer_name(int v) { return game_offer_name((game_offer_t)v); }
static const char *status_name(int v) { return game_status_name((game_status_t)v); }
static const char *takeback_name(int v) { return game_takeback_name((game_takeback_t)v); }

static void test_every_value_has_a_distinct_name_that_reads_back(void)
{
    const name_table_t tables[] = {
        { state_name, game_state_from_name, GAME_STATE_COUNT },
        { result_name, game_result_from_name, GAME_RESULT_COUNT },
        { termination_name, game_termination_from_name, GAME_TERMINATION_COUNT },
        { offer_name, game_offer_from_name, GAME_OFFER_COUNT },
        { status_name, NULL, GAME_STATUS_COUNT },
        { takeback_name, game_takeback_from_name, GAME_TAKEBACK_COUNT },
    };
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (int v = 0; v < tables[t].count; v++) {
            const char *name = tables[t].name(v);
            CU_ASSERT_PTR_NOT_NULL_FATAL(name);
            CU_ASSERT(name[0] != '\0');
            CU_ASSERT_STRING_NOT_EQUAL(name, "unknown");
            for (int w = 0; w < v; w++)
                CU_ASSERT_STRING_NOT_EQUAL(name, tables[t].name(w));
            if (tables[t].from_name)
                CU_ASSERT_EQUAL(tables[t].from_name(name, strlen(name)), v);
        }
        CU_ASSERT_STRING_EQUAL(tables[t].name(tables[t].count), "unknown");
        CU_ASSERT_STRING_EQUAL(tables[t].name(-1), "unknown");
    }
}

static void test_names_are_the_documented_ones(void)
{
    CU_ASSERT_STRING_EQUAL(game_state_name(GAME_ACTIVE), "active");
    CU_ASSERT_STRING_EQUAL(game_state_name(GAME_RESIGNED), "resigned");
    CU_ASSERT_STRING_EQUAL(game_result_name(GAME_RESULT_NONE), "*");
    CU_ASSERT_STRING_EQUAL(game_result_name(GAME_WHITE_WINS), "1-0");
    CU_ASSERT_STRING_EQUAL(game_result_name(GAME_BLACK_WINS), "0-1");
    CU_ASSERT_STRING_EQUAL(game_result_name(GAME_DRAWN), "1/2-1/2");
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_THREEFOLD_REPETITION), "threefold_repetition");
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_NONE), "none");
    CU_ASSERT_STRING_EQUAL(game_offer_name(GAME_OFFER_NONE), "none");
    CU_ASSERT_STRING_EQUAL(game_offer_name(GAME_OFFER_WHITE), "white");
    CU_ASSERT_STRING_EQUAL(game_offer_name(GAME_OFFER_BLACK), "black");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_OK), "ok");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_ENOT_YOUR_TURN), "not_your_turn");
    CU_ASSERT_STRING_EQUAL(game_state_name(GAME_TIMEOUT), "timeout");
    CU_ASSERT_STRING_EQUAL(game_state_name(GAME_ABORTED), "aborted");
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_TIME_FORFEIT), "time_forfeit");
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_ABORTED), "aborted");
    CU_ASSERT_STRING_EQUAL(game_takeback_name(GAME_TAKEBACK_AGREEMENT), "agreement");
    CU_ASSERT_STRING_EQUAL(game_takeback_name(GAME_TAKEBACK_FREE), "free");
    CU_ASSERT_STRING_EQUAL(game_takeback_name(GAME_TAKEBACK_NONE), "none");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_ETAKEBACK_NOT_ALLOWED), "takeback_not_allowed");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_ETAKEBACK_ALREADY_OFFERED), "takeback_already_offered");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_ENO_TAKEBACK_OFFER), "no_takeback_offer");
    CU_ASSERT_STRING_EQUAL(game_status_name(GAME_EABORT_TOO_LATE), "abort_too_late");
    /* The termination names of the automatic draws are status.c's. */
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_INSUFFICIENT_MATERIAL),
                           status_draw_reason_name(STATUS_DRAW_INSUFFICIENT_MATERIAL));
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_SEVENTYFIVE_MOVES),
                           status_draw_reason_name(STATUS_DRAW_SEVENTYFIVE_MOVES));
    CU_ASSERT_STRING_EQUAL(game_termination_name(GAME_TERMINATION_FIVEFOLD_REPETITION),
                           status_draw_reason_name(STATUS_DRAW_FIVEFOLD_REPETITION));
}

static void test_unknown_names_read_as_minus_one(void)
{
    int (*const readers[])(const char *, size_t) = { game_state_from_name, game_result_from_name,
                                                      game_termination_from_name, game_offer_from_name,
                                                      game_takeback_from_name };
    static const char *const unknown[] = { "", "unknown", "Active", "activ", "actives", "1-1", "1/2", "1/2-1/2 ",
                                           "whites", "whit", "NONE", "ok", "checkmate\n", "Free", "agree", "undo" };
    for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++)
        for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
            CU_ASSERT_EQUAL(readers[r](unknown[i], strlen(unknown[i])), -1);
    /* Only `length` bytes are read: a prefix of a name is not it, a name in a longer buffer is. */
    CU_ASSERT_EQUAL(game_state_from_name("active", 3), -1);
    CU_ASSERT_EQUAL(game_state_from_name("activeXYZ", 6), GAME_ACTIVE);
    CU_ASSERT_EQUAL(game_result_from_name("1-0 ", 3), GAME_WHITE_WINS);
    /* A name of one table is not a name of another. */
    CU_ASSERT_EQUAL(game_state_from_name("agreement", 9), -1);
    CU_ASSERT_EQUAL(game_offer_from_name("draw", 4), -1);
    CU_ASSERT_EQUAL(game_state_from_name("checkmate", 9), GAME_CHECKMATE);
    CU_ASSERT_EQUAL(game_termination_from_name("checkmate", 9), GAME_TERMINATION_CHECKMATE);
}

/* ---- differential: random games against status_evaluate, replay, restore, undo and a clock model ---- */

enum { RANDOM_GAMES = 300, RANDOM_PLY_MAX = 600, CHESS960_STARTS_MAX = 1024 };
enum { RANDOM_VARIANT_GAMES = 160, RANDOM_VARIANT_PLY_MAX = 300 };

static const random_game_preference_t decisive_preferences[] = {
    { RANDOM_GAME_PICK_MATE, 80 },      { RANDOM_GAME_PICK_PROMOTION, 70 }, { RANDOM_GAME_PICK_EN_PASSANT, 60 },
    { RANDOM_GAME_PICK_CASTLING, 20 },  { RANDOM_GAME_PICK_CAPTURE, 40 },   { RANDOM_GAME_PICK_PAWN, 30 },
};
/* Mostly captures and no hunt for mate: the board empties, and insufficient
 * material, the clock or repetitions end most of these games. */
static const random_game_preference_t drawish_preferences[] = {
    { RANDOM_GAME_PICK_CAPTURE, 60 },
};
static const random_game_style_t styles[] = {
    { decisive_preferences, sizeof decisive_preferences / sizeof decisive_preferences[0], RANDOM_PLY_MAX },
    { drawish_preferences, sizeof drawish_preferences / sizeof drawish_preferences[0], RANDOM_PLY_MAX },
};
/* Variant games are shorter: a crazyhouse game of random moves rarely ends. */
static const random_game_style_t variant_styles[] = {
    { decisive_preferences, sizeof decisive_preferences / sizeof decisive_preferences[0], RANDOM_VARIANT_PLY_MAX },
    { drawish_preferences, sizeof drawish_preferences / sizeof drawish_preferences[0], RANDOM_VARIANT_PLY_MAX },
};

typedef struct {
    int games, plies, chess960_games, variant_games, timed_games, replays, undos;
    int claimable_threefold, claimable_fifty;
    int endings[GAME_TERMINATION_COUNT];
    int mismatches;
} differential_t;

static game_termination_t expected_termination(const status_t *st)
{
    switch (st->state) {
    case STATUS_CHECKMATE: return GAME_TERMINATION_CHECKMATE;
    case STATUS_STALEMATE: return GAME_TERMINATION_STALEMATE;
    case STATUS_DRAW:
        return st->draw_reason == STATUS_DRAW_INSUFFICIENT_MATERIAL ? GAME_TERMINATION_INSUFFICIENT_MATERIAL
               : st->draw_reason == STATUS_DRAW_FIVEFOLD_REPETITION ? GAME_TERMINATION_FIVEFOLD_REPETITION
                                                                     : GAME_TERMINATION_SEVENTYFIVE_MOVES;
    case STATUS_VARIANT_END: return (game_termination_t)(GAME_TERMINATION_ABORTED + st->variant_end);
    default: return GAME_TERMINATION_NONE;
    }
}

static void mismatch(differential_t *d, int game, int ply, const char *what)
{
    if (d->mismatches++ < 10)
        fprintf(stderr, "\ngame %d ply %d: %s\n", game, ply, what);
}

/* The game_t's own checks after a move: status as status_evaluate gives it on
 * the full history, the ending it implies, the bounded history's tail. */
static void check_step(differential_t *d, int game, const game_t *g, const position_t *pos, const uint64_t *history,
                       int history_count)
{
    status_t st;
    memset(&st, 0, sizeof st);
    status_evaluate(pos, history, (size_t)history_count, &st);
    if (memcmp(&g->pos, pos, sizeof *pos) != 0)
        mismatch(d, game, g->ply_count, "position differs");
    if (memcmp(&g->status, &st, sizeof st) != 0)
        mismatch(d, game, g->ply_count, "status differs from status_evaluate on the full history");
    int kept = pos->halfmove_clock < history_count ? pos->halfmove_clock : history_count;
    if (g->history_count != kept || g->history_count > GAME_HISTORY_MAX
        || memcmp(g->history, history + history_count - kept, sizeof history[0] * (size_t)kept) != 0)
        mismatch(d, game, g->ply_count, "history is not the full history's tail since the last irreversible move");
    static const game_state_t states[STATUS_STATE_COUNT] = { GAME_ACTIVE, GAME_CHECKMATE, GAME_STALEMATE, GAME_DRAW,
                                                             GAME_VARIANT_END };
    color_t winner = st.state == STATUS_VARIANT_END ? (color_t)st.winner
                     : st.state == STATUS_CHECKMATE ? (color_t)!pos->side_to_move
                                                    : COLOR_COUNT;
    game_result_t result = st.state == STATUS_ACTIVE ? GAME_RESULT_NONE
                           : winner == WHITE         ? GAME_WHITE_WINS
                           : winner == BLACK         ? GAME_BLACK_WINS
                                                     : GAME_DRAWN;
    if (g->state != states[st.state] || g->result != result || g->termination != expected_termination(&st)
        || g->draw_offer != GAME_OFFER_NONE)
        mismatch(d, game, g->ply_count, "ending differs from the position's status");
    d->claimable_threefold += (st.claimable & STATUS_CLAIM_THREEFOLD_REPETITION) != 0;
    d->claimable_fifty += (st.claimable & STATUS_CLAIM_FIFTY_MOVES) != 0;
}

/* Replay of the line so far and restore from the parts (also through FEN
 * text) give g back. */
static void check_replay_and_restore(differential_t *d, int game, const game_t *g, const line_t *line)
{
    game_t r;
    if (game_replay(&r, &g->initial, line->text, line->length, g->state, g->result, g->termination, g->draw_offer)
            != GAME_OK
        || game_restore_rules(&r, g->takeback, g->takeback_offer, &g->clock, &g->rules) != GAME_OK || memcmp(&r, g, sizeof r) != 0)
        mismatch(d, game, g->ply_count, "game_replay of the line differs");
    if (restore(&r, g) != GAME_OK || game_restore_rules(&r, g->takeback, g->takeback_offer, &g->clock, &g->rules) != GAME_OK
        || memcmp(&r, g, sizeof r) != 0)
        mismatch(d, game, g->ply_count, "game_restore from the parts differs");
    if (restore_from_fen(&r, g) != GAME_OK
        || game_restore_rules(&r, g->takeback, g->takeback_offer, &g->clock, &g->rules) != GAME_OK
        || memcmp(&r, g, sizeof r) != 0)
        mismatch(d, game, g->ply_count, "game_restore from the parts through FEN text differs");
    d->replays++;
}

/* The clock of a timed random game as this test keeps it: the time now,
 * each side's time, and a random stream of its own, so that the moves
 * played are the same as untimed. */
typedef struct {
    bool timed;
    int64_t now_ms, increment_ms, remaining_ms[COLOR_COUNT];
    uint64_t rng;
    int flag_at_ply; /* the ply at which the side to move lets its flag fall (-1: never) */
} clock_model_t;

enum { CLOCK_THINK_MAX_MS = 20000 };

/* Milliseconds below bound (at least 1) from the model's stream. */
static int64_t clock_below(clock_model_t *c, int64_t bound)
{
    return random_game_below(&c->rng, (int)(bound < INT_MAX ? (bound > 1 ? bound : 1) : INT_MAX));
}

/* Undo of the last move at undo_ms gives back the game before it, with the
 * clock as the move left it charged up to undo_ms, without the increment
 * the move earned when the clock ran as it was played, and restarted then:
 * the mover never holds more than before the move. */
static void check_undo(differential_t *d, int game, const game_t *g, const game_t *before_last, const line_t *line,
                       int64_t undo_ms)
{
    game_t r = *g, expected = *before_last;
    color_t mover = (color_t)!g->pos.side_to_move;
    expected.clock = g->clock;
    if (game_clock_running(g))
        expected.clock.remaining_ms[g->pos.side_to_move] -= undo_ms - g->clock.turn_started_ms;
    if (game_clock_running(before_last))
        expected.clock.remaining_ms[mover] -= g->clock.control[mover].increment_ms;
    if (game_is_timed(g))
        expected.clock.turn_started_ms = undo_ms;
    if (game_undo(&r, mover, line->text, line->length, undo_ms) != GAME_OK || memcmp(&r, &expected, sizeof r) != 0)
        mismatch(d, game, g->ply_count, "game_undo differs from the game before the last move");
    if (r.clock.remaining_ms[mover] > before_last->clock.remaining_ms[mover])
        mismatch(d, game, g->ply_count, "game_undo left the mover more time than before the move");
    d->undos++;
}

/* The clock after a move is the model's: the mover charged its thinking
 * time and given the increment once the clock ran, the other's turn started. */
static void check_clock(differential_t *d, int game, const game_t *g, const clock_model_t *c)
{
    if (!c->timed)
        return;
    if (g->clock.remaining_ms[WHITE] != c->remaining_ms[WHITE] || g->clock.remaining_ms[BLACK] != c->remaining_ms[BLACK]
        || g->clock.turn_started_ms != c->now_ms || g->clock.control[WHITE].increment_ms != c->increment_ms)
        mismatch(d, game, g->ply_count, "clock differs from the model");
    int64_t deadline = game_clock_running(g) ? c->now_ms + c->remaining_ms[g->pos.side_to_move] : 0;
    if (game_flag_deadline(g) != deadline)
        mismatch(d, game, g->ply_count, "flag deadline differs from the model");
}

/* The side to move lets its flag fall: not a millisecond before the
 * deadline, and at or after it the game is lost, or drawn when the other
 * side cannot mate. */
static void check_flag(differential_t *d, int game, game_t *g, clock_model_t *c)
{
    color_t loser = g->pos.side_to_move, other = (color_t)!loser;
    int64_t deadline = c->now_ms + c->remaining_ms[loser];
    game_t before = *g;
    if (game_flag(g, deadline - 1) || memcmp(&before, g, sizeof before) != 0)
        mismatch(d, game, g->ply_count, "flag fell before the deadline");
    c->now_ms = deadline + clock_below(c, 1000);
    game_result_t result = status_insufficient_material_for(&g->pos, other) ? GAME_DRAWN
                           : other == WHITE                                 ? GAME_WHITE_WINS
                                                                            : GAME_BLACK_WINS;
    if (!game_flag(g, c->now_ms) || g->state != GAME_TIMEOUT || g->result != result
        || g->termination != GAME_TERMINATION_TIME_FORFEIT || g->clock.remaining_ms[loser] != 0
        || g->clock.remaining_ms[other] != c->remaining_ms[other] || g->ply_count != before.ply_count)
        mismatch(d, game, g->ply_count, "flag fall differs from the model");
}

/* Plays one game through game_move by UCI text, checking every step; the
 * line's entries are bare UCI when bare. */
static void play_random_game(differential_t *d, int game, const position_t *start_pos,
                             const random_game_style_t *style, uint64_t *rng, bool bare)
{
    game_t g, before_last;
    line_t line;
    uint64_t history[RANDOM_PLY_MAX + 1];
    int history_count = 0;
    position_t pos = *start_pos;
    game_start(&g, start_pos);
    /* One game in three on a clock, half of those ending on time. */
    clock_model_t clock = { .timed = game % 3 == 1, .rng = 0x9e3779b97f4a7c15u ^ (uint64_t)game, .flag_at_ply = -1 };
    if (clock.timed) {
        int64_t initial_ms = GAME_CLOCK_INITIAL_MIN + clock_below(&clock, 10 * MINUTE_MS);
        clock.increment_ms = clock_below(&clock, 5000);
        clock.remaining_ms[WHITE] = clock.remaining_ms[BLACK] = initial_ms;
        clock.now_ms = INT64_C(1732800000000);
        if (clock_below(&clock, 2))
            clock.flag_at_ply = 2 + (int)clock_below(&clock, 200);
        d->timed_games++;
    }
    CU_ASSERT_FATAL(game_set_rules(&g, clock.timed ? clock.remaining_ms[WHITE] : 0, clock.increment_ms,
                                   GAME_TAKEBACK_FREE)); /* undo is the free policy's */
    line_clear(&line);
    check_step(d, game, &g, &pos, history, history_count);
    int replay_countdown = 1 + random_game_below(rng, 7), undo_countdown = 1 + random_game_below(rng, 15);
    while (!game_is_over(&g) && g.ply_count < style->ply_max) {
        if (g.ply_count == clock.flag_at_ply) {
            check_flag(d, game, &g, &clock);
            check_replay_and_restore(d, game, &g, &line);
            break;
        }
        move_list_t legal;
        movegen_legal(&pos, &legal);
        move_t m = random_game_pick(&pos, &legal, style, rng);
        char uci[UCI_BUFFER_SIZE], san[SAN_BUFFER_SIZE];
        uci_format(&pos, m, uci);
        san_format(&pos, m, san);
        game_played_t played;
        before_last = g;
        /* The mover thinks, never as long as it has once its clock runs. */
        color_t mover = (color_t)pos.side_to_move;
        bool running = game_clock_running(&g);
        int64_t think_ms = 0;
        if (clock.timed) {
            think_ms = clock_below(&clock, running && clock.remaining_ms[mover] < CLOCK_THINK_MAX_MS
                                               ? clock.remaining_ms[mover]
                                               : CLOCK_THINK_MAX_MS);
            clock.now_ms += think_ms;
            if (running)
                clock.remaining_ms[mover] += clock.increment_ms - think_ms;
        }
        game_status_t status = game_move(&g, mover, uci, strlen(uci), GAME_MAX_PLIES, clock.now_ms, &played);
        if (status != GAME_OK || played.move != m || strcmp(played.uci, uci) != 0 || strcmp(played.san, san) != 0) {
            mismatch(d, game, g.ply_count, "game_move refused or misreported a legal move");
            return;
        }
        line_append(&line, &played, bare);
        history[history_count++] = pos.key;
        position_undo_t undo;
        position_make(&pos, m, &undo);
        d->plies++;
        check_step(d, game, &g, &pos, history, history_count);
        check_clock(d, game, &g, &clock);
        /* Replays cost the line's length: at random plies, one in four on
         * average, and at the end; undo (two replays) one in eight. */
        if (--replay_countdown == 0 || game_is_over(&g)) {
            check_replay_and_restore(d, game, &g, &line);
            replay_countdown = 1 + random_game_below(rng, 7);
        }
        if (--undo_countdown == 0 && !game_is_over(&g)) {
            int64_t undo_ms = clock.now_ms;
            if (game_clock_running(&g)) /* before the flag of the side to move */
                undo_ms += clock_below(&clock, clock.remaining_ms[g.pos.side_to_move]);
            check_undo(d, game, &g, &before_last, &line, undo_ms);
            undo_countdown = 1 + random_game_below(rng, 15);
        }
    }
    d->endings[g.termination]++;
}

static void test_game_matches_status_replay_restore_and_undo_on_random_games(void)
{
    position_t *chess960_starts = malloc(CHESS960_STARTS_MAX * sizeof *chess960_starts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(chess960_starts);
    int refused;
    int chess960_count = epd_read_positions("chess960.epd", FEN_CHESS960, chess960_starts, CHESS960_STARTS_MAX,
                                            &refused);
    CU_ASSERT(chess960_count > 0);
    position_t standard;
    tests_parse_fen(FEN_START, &standard);
    differential_t d = { 0 };
    uint64_t rng = 0x2545f4914f6cdd1du;
    long started = tests_monotonic_ms();
    for (int game = 0; game < RANDOM_GAMES; game++) {
        const position_t *start_pos = &standard;
        if (game % 4 == 3 && chess960_count > 0) {
            start_pos = &chess960_starts[random_game_below(&rng, chess960_count)];
            d.chess960_games++;
        }
        play_random_game(&d, game, start_pos, &styles[game % 2], &rng, game % 3 == 0);
        d.games++;
    }
    free(chess960_starts);
    fprintf(stderr,
            "\n  game random games: %d games (%d Chess960, %d on a clock), %d plies, %d replays, %d undos, %d threefold "
            "and %d fifty-move claimable positions; endings:",
            d.games, d.chess960_games, d.timed_games, d.plies, d.replays, d.undos, d.claimable_threefold,
            d.claimable_fifty);
    for (int t = 0; t < GAME_TERMINATION_COUNT; t++)
        fprintf(stderr, " %s %d", game_termination_name((game_termination_t)t), d.endings[t]);
    fprintf(stderr, "; %d mismatches, %ld ms\n", d.mismatches, tests_monotonic_ms() - started);
    CU_ASSERT_EQUAL(d.mismatches, 0);
    CU_ASSERT_EQUAL(d.games, RANDOM_GAMES);
    CU_ASSERT(d.chess960_games > 0);
    CU_ASSERT(d.timed_games > 0);
    CU_ASSERT(d.endings[GAME_TERMINATION_TIME_FORFEIT] > 0);
    CU_ASSERT(d.undos > 0);
    CU_ASSERT(d.claimable_threefold > 0);
    CU_ASSERT(d.claimable_fifty > 0);
    CU_ASSERT(d.endings[GAME_TERMINATION_CHECKMATE] > 0);
    CU_ASSERT(d.endings[GAME_TERMINATION_INSUFFICIENT_MATERIAL] > 0);
}

/* The same checks in every variant, from its start: replay and undo go
 * through the move list in the variant (drops, gates, explosions), and
 * restore through FEN text reads both positions in it. */
static void test_game_matches_status_replay_restore_and_undo_in_every_variant(void)
{
    differential_t d = { 0 };
    uint64_t rng = 0x9e3779b97f4a7c15u;
    long started = tests_monotonic_ms();
    for (int game = 0; game < RANDOM_VARIANT_GAMES; game++) {
        position_t start_pos;
        fen_start((variant_t)(1 + game % (VARIANT_COUNT - 1)), &start_pos);
        play_random_game(&d, game, &start_pos, &variant_styles[game % 2], &rng, game % 3 == 0);
        d.games++;
        d.variant_games++;
    }
    fprintf(stderr, "\n  game random variant games: %d games (%d on a clock), %d plies, %d replays, %d undos; endings:",
            d.games, d.timed_games, d.plies, d.replays, d.undos);
    for (int t = 0; t < GAME_TERMINATION_COUNT; t++)
        if (d.endings[t])
            fprintf(stderr, " %s %d", game_termination_name((game_termination_t)t), d.endings[t]);
    fprintf(stderr, "; %d mismatches, %ld ms\n", d.mismatches, tests_monotonic_ms() - started);
    CU_ASSERT_EQUAL(d.mismatches, 0);
    CU_ASSERT(d.undos > 0);
    CU_ASSERT(d.endings[GAME_TERMINATION_TIME_FORFEIT] > 0);
    int variant_ends = 0;
    for (int t = GAME_TERMINATION_ABORTED + 1; t < GAME_TERMINATION_COUNT; t++)
        variant_ends += d.endings[t];
    CU_ASSERT(variant_ends > 0);
}

int test_game_register(void)
{
    CU_pSuite suite = CU_add_suite("game", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_start_position_is_an_active_game);
    CU_ADD_TEST(suite, test_start_in_checkmate_is_over_at_once);
    CU_ADD_TEST(suite, test_start_in_stalemate_is_over_at_once);
    CU_ADD_TEST(suite, test_start_with_insufficient_material_is_drawn_at_once);
    CU_ADD_TEST(suite, test_start_at_halfmove_150_is_drawn_by_the_seventyfive_move_rule);
    CU_ADD_TEST(suite, test_start_in_checkmate_at_halfmove_150_is_checkmate);
    CU_ADD_TEST(suite, test_move_in_san_is_played_and_reported_in_uci_and_san);
    CU_ADD_TEST(suite, test_move_in_uci_is_played_and_reported_in_uci_and_san);
    CU_ADD_TEST(suite, test_castling_is_reported_as_the_kings_two_step_and_o_o);
    CU_ADD_TEST(suite, test_promotion_is_reported_with_the_piece_and_the_check);
    CU_ADD_TEST(suite, test_check_is_marked_with_a_plus_and_the_game_goes_on);
    CU_ADD_TEST(suite, test_checkmate_is_marked_ends_the_game_and_clears_the_draw_offer);
    CU_ADD_TEST(suite, test_stalemating_move_ends_the_game_drawn);
    CU_ADD_TEST(suite, test_move_by_the_player_not_to_move_changes_nothing);
    CU_ADD_TEST(suite, test_illegal_move_is_refused_with_the_rules_reason_and_changes_nothing);
    CU_ADD_TEST(suite, test_move_on_a_finished_game_is_refused);
    CU_ADD_TEST(suite, test_move_beyond_max_plies_is_refused);
    CU_ADD_TEST(suite, test_max_plies_above_the_limit_is_clamped_to_game_max_plies);
    CU_ADD_TEST(suite, test_draw_offer_lapses_when_the_other_player_moves_instead_of_answering);
    CU_ADD_TEST(suite, test_own_draw_offer_stands_after_own_move);
    CU_ADD_TEST(suite, test_fivefold_repetition_ends_the_game_on_the_fifth_occurrence);
    CU_ADD_TEST(suite, test_threefold_repetition_becomes_claimable_on_the_third_occurrence);
    CU_ADD_TEST(suite, test_seventyfive_move_rule_ends_the_game_after_one_quiet_move);
    CU_ADD_TEST(suite, test_capture_leaving_insufficient_material_ends_the_game);
    CU_ADD_TEST(suite, test_history_restarts_at_a_pawn_move_and_at_a_capture);
    CU_ADD_TEST(suite, test_history_never_exceeds_game_history_max);
    CU_ADD_TEST(suite, test_undo_gives_back_exactly_the_game_before_the_last_move);
    CU_ADD_TEST(suite, test_undo_accepts_a_line_of_bare_uci);
    CU_ADD_TEST(suite, test_undo_by_the_player_who_did_not_make_the_last_move_is_refused);
    CU_ADD_TEST(suite, test_undo_without_a_move_is_refused);
    CU_ADD_TEST(suite, test_undo_on_a_finished_game_is_refused);
    CU_ADD_TEST(suite, test_undo_with_a_line_that_is_not_the_games_is_refused);
    CU_ADD_TEST(suite, test_resignation_gives_the_game_to_the_other_side);
    CU_ADD_TEST(suite, test_resigning_a_finished_game_is_refused);
    CU_ADD_TEST(suite, test_draw_offer_is_recorded_for_either_player_on_either_turn);
    CU_ADD_TEST(suite, test_repeated_draw_offer_is_refused);
    CU_ADD_TEST(suite, test_crossing_draw_offers_are_an_agreement);
    CU_ADD_TEST(suite, test_accept_or_decline_without_the_other_players_offer_is_refused);
    CU_ADD_TEST(suite, test_accepting_a_draw_offer_draws_by_agreement);
    CU_ADD_TEST(suite, test_declining_a_draw_offer_clears_it);
    CU_ADD_TEST(suite, test_draw_claim_by_the_player_not_to_move_is_refused);
    CU_ADD_TEST(suite, test_draw_claim_under_threefold_repetition_ends_the_game);
    CU_ADD_TEST(suite, test_draw_claim_under_the_fifty_move_rule_ends_the_game);
    CU_ADD_TEST(suite, test_draw_claim_when_neither_rule_applies_is_refused);
    CU_ADD_TEST(suite, test_unknown_draw_action_changes_nothing);
    CU_ADD_TEST(suite, test_every_draw_action_on_a_finished_game_is_refused);
    CU_ADD_TEST(suite, test_line_entry_is_uci_colon_san);
    CU_ADD_TEST(suite, test_replay_of_uci_san_entries_equals_playing_the_moves);
    CU_ADD_TEST(suite, test_replay_of_bare_uci_entries_equals_playing_the_moves);
    CU_ADD_TEST(suite, test_replay_of_an_empty_line_is_the_start);
    CU_ADD_TEST(suite, test_replay_keeps_the_ending_and_the_offer_given);
    CU_ADD_TEST(suite, test_replay_refuses_text_that_is_not_a_legal_move_list);
    CU_ADD_TEST(suite, test_replay_refuses_an_ending_the_line_does_not_have);
    CU_ADD_TEST(suite, test_restore_from_the_parts_of_a_game_gives_it_back);
    CU_ADD_TEST(suite, test_restore_refuses_parts_that_do_not_belong_together);
    CU_ADD_TEST(suite, test_first_two_plies_charge_no_time_and_add_no_increment);
    CU_ADD_TEST(suite, test_from_the_third_ply_the_mover_is_charged_the_elapsed_time_and_gets_the_increment);
    CU_ADD_TEST(suite, test_a_move_that_ends_the_game_is_charged_and_then_the_clock_stands);
    CU_ADD_TEST(suite, test_remaining_time_of_the_side_to_move_runs_down_to_zero_and_the_other_stands_still);
    CU_ADD_TEST(suite, test_flag_deadline_is_when_the_side_to_move_runs_out_and_zero_while_the_clock_stands);
    CU_ADD_TEST(suite, test_flag_before_the_deadline_changes_nothing);
    CU_ADD_TEST(suite, test_flag_at_or_after_the_deadline_loses_on_time_for_the_side_to_move);
    CU_ADD_TEST(suite, test_flag_against_a_side_that_cannot_mate_is_a_draw);
    CU_ADD_TEST(suite, test_untimed_game_never_flags);
    CU_ADD_TEST(suite, test_finished_game_never_flags);
    CU_ADD_TEST(suite, test_resignation_agreement_and_claim_settle_the_clock_so_the_ending_shows_the_time_used);
    CU_ADD_TEST(suite, test_abort_before_the_clock_runs_leaves_both_clocks_full);
    CU_ADD_TEST(suite, test_takeback_offer_by_the_player_who_just_moved_goes_back_one_ply_on_acceptance);
    CU_ADD_TEST(suite, test_takeback_offer_by_the_player_to_move_goes_back_two_plies_on_acceptance);
    CU_ADD_TEST(suite, test_takeback_offer_with_nothing_to_take_back_is_refused);
    CU_ADD_TEST(suite, test_second_takeback_offer_by_the_same_player_is_refused);
    CU_ADD_TEST(suite, test_takeback_accept_or_decline_without_the_other_players_offer_is_refused);
    CU_ADD_TEST(suite, test_declining_a_takeback_offer_drops_it_and_keeps_the_game);
    CU_ADD_TEST(suite, test_crossing_takeback_offers_are_an_acceptance_of_the_first);
    CU_ADD_TEST(suite, test_takeback_policy_none_refuses_offers_and_undo);
    CU_ADD_TEST(suite, test_takeback_policy_agreement_refuses_undo);
    CU_ADD_TEST(suite, test_takeback_policy_free_allows_undo_and_takebacks_by_agreement);
    CU_ADD_TEST(suite, test_accepted_takeback_is_the_game_replayed_to_that_point_with_the_clock_settled_and_restarted);
    CU_ADD_TEST(suite, test_takeback_on_the_clock_back_below_two_plies_stops_the_clock);
    CU_ADD_TEST(suite, test_increment_earned_is_the_increment_from_the_third_ply_on_and_nothing_untimed);
    CU_ADD_TEST(suite, test_undo_loop_with_a_large_increment_never_gives_the_mover_more_time);
    CU_ADD_TEST(suite, test_accepted_takeback_loop_never_gives_either_side_more_time);
    CU_ADD_TEST(suite, test_takeback_of_the_first_two_plies_takes_away_no_increment);
    CU_ADD_TEST(suite, test_undo_takes_back_the_increment_of_the_side_that_made_the_move);
    CU_ADD_TEST(suite, test_takeback_that_leaves_the_side_to_move_no_time_ends_the_game_on_time);
    CU_ADD_TEST(suite, test_imported_moves_earned_no_increment_and_takebacks_of_them_take_none);
    CU_ADD_TEST(suite, test_adopt_rules_of_an_untimed_game_or_one_of_two_plies_has_no_imported_plies);
    CU_ADD_TEST(suite, test_takeback_with_a_line_that_is_not_the_games_is_refused);
    CU_ADD_TEST(suite, test_unknown_takeback_action_changes_nothing);
    CU_ADD_TEST(suite, test_a_move_drops_any_takeback_offer);
    CU_ADD_TEST(suite, test_draw_offer_lapses_when_its_receiver_moves_not_when_its_maker_moves);
    CU_ADD_TEST(suite, test_every_ending_drops_the_draw_and_takeback_offers);
    CU_ADD_TEST(suite, test_every_takeback_action_on_a_finished_game_is_refused);
    CU_ADD_TEST(suite, test_abort_by_either_player_before_both_have_moved_ends_the_game_without_a_result);
    CU_ADD_TEST(suite, test_abort_once_both_players_have_moved_is_refused);
    CU_ADD_TEST(suite, test_every_operation_on_an_aborted_game_is_refused);
    CU_ADD_TEST(suite, test_set_rules_takes_a_clock_within_its_bounds_only);
    CU_ADD_TEST(suite, test_restore_rules_gives_back_the_policy_the_offer_and_the_clock);
    CU_ADD_TEST(suite, test_restore_rules_refuses_rules_that_do_not_fit_the_game);
    CU_ADD_TEST(suite, test_a_first_move_not_made_within_the_grace_aborts_the_game);
    CU_ADD_TEST(suite, test_a_takeback_before_the_second_ply_starts_the_grace_again);
    CU_ADD_TEST(suite, test_the_grace_is_bounded_and_only_for_a_timed_game);
    CU_ADD_TEST(suite, test_every_value_has_a_distinct_name_that_reads_back);
    CU_ADD_TEST(suite, test_names_are_the_documented_ones);
    CU_ADD_TEST(suite, test_unknown_names_read_as_minus_one);
    CU_ADD_TEST(suite, test_game_matches_status_replay_restore_and_undo_on_random_games);
    CU_ADD_TEST(suite, test_game_matches_status_replay_restore_and_undo_in_every_variant);
    return CUE_SUCCESS;
}
