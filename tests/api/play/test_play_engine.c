/* Tests for api/play/play_engine.c, the computer of `chessd play`'s local
 * session, on real Stockfish (/usr/games/stockfish, or $CHESSD_STOCKFISH),
 * with rules/ judging each move's legality. A failed start is a sentence;
 * every level answers legal moves (standard and Chess960) from the session's
 * move-list text; hints find a mate in one and score from the side to move;
 * an engine killed between moves is restarted for the next one. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../api/http/buf.h"
#include "../../../api/play/play_engine.h"
#include "../../support/random_game.h"
#include "../../support/tests.h"

static const char *stockfish;
static play_engine_t *shared; /* a standard-chess engine for the tests that need no other */

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    stockfish = getenv("CHESSD_STOCKFISH");
    if (!stockfish || !*stockfish)
        stockfish = "/usr/games/stockfish";
    if (access(stockfish, X_OK) != 0) {
        fprintf(stderr, "\nplay_engine suite: %s is not an executable (%s); install the 'stockfish' package "
                        "(make deps) or set CHESSD_STOCKFISH\n", stockfish, strerror(errno));
        return 1;
    }
    char err[256];
    shared = play_engine_start(stockfish, false, err, sizeof err);
    if (!shared) {
        fprintf(stderr, "\nplay_engine suite: cannot start %s: %s\n", stockfish, err);
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    play_engine_free(shared);
    shared = NULL;
    return 0;
}

/* A game being played, with its move-list text, as the session keeps it. */
typedef struct {
    game_t game;
    buf_t line;
} played_game_t;

static void game_from_fen(played_game_t *pg, const char *fen)
{
    position_t start;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(fen, &start));
    game_start(&pg->game, &start);
    buf_init(&pg->line);
}

/* Plays move (legal) on the game and its line. */
static void play(played_game_t *pg, move_t move)
{
    char uci[UCI_BUFFER_SIZE], entry[GAME_LINE_ENTRY_SIZE];
    uci_format(&pg->game.pos, move, uci);
    game_played_t played;
    CU_ASSERT_EQUAL_FATAL(game_move(&pg->game, (color_t)pg->game.pos.side_to_move, uci, strlen(uci), GAME_MAX_PLIES,
                                    0, &played),
                          GAME_OK);
    size_t n = game_line_entry(&played, entry);
    if (pg->line.length)
        buf_putc(&pg->line, ' ');
    buf_append(&pg->line, entry, n);
}

static void test_an_engine_that_cannot_start_is_a_sentence(void)
{
    char err[256] = "";
    play_engine_t *pe = play_engine_start("/nonexistent/stockfish", false, err, sizeof err);
    CU_ASSERT_PTR_NULL(pe);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/stockfish"));
    play_engine_free(NULL); /* NULL is fine */
}

/* A few plies at level: a random move by "the person", the level's reply,
 * which must be legal in the position it is asked in. */
static void play_against_level(play_engine_t *pe, const char *fen, int level_number, int rounds, uint64_t *rng)
{
    level_t level;
    CU_ASSERT_TRUE_FATAL(level_of(level_number, &level));
    played_game_t pg;
    game_from_fen(&pg, fen);
    for (int i = 0; i < rounds && !game_is_over(&pg.game); i++) {
        move_list_t legal;
        movegen_legal(&pg.game.pos, &legal);
        play(&pg, legal.moves[random_game_below(rng, legal.count)]);
        if (game_is_over(&pg.game))
            break;
        move_t reply = MOVE_NONE;
        char err[256] = "";
        engine_status_t s = play_engine_move(pe, &level, &pg.game, pg.line.data, pg.line.length, &reply, err,
                                             sizeof err);
        if (s != ENGINE_OK)
            fprintf(stderr, "\nlevel %d: %s: %s\n", level_number, engine_status_name(s), err);
        CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
        CU_ASSERT_TRUE_FATAL(movegen_is_legal(&pg.game.pos, reply));
        play(&pg, reply);
    }
    CU_ASSERT_FALSE(buf_failed(&pg.line));
    buf_free(&pg.line);
}

static void test_every_level_answers_a_legal_move(void)
{
    uint64_t rng = 0x5eed0001;
    for (int level = LEVEL_MIN; level <= LEVEL_MAX; level++)
        play_against_level(shared, FEN_START, level, level == LEVEL_MAX ? 2 : 4, &rng);
}

static void test_chess960_moves_are_legal_with_castling_as_king_takes_rook(void)
{
    char err[256];
    play_engine_t *pe = play_engine_start(stockfish, true, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pe);
    uint64_t rng = 0x5eed0960;
    /* Chess960 start 0 (its castling rights as Shredder-FEN files) */
    play_against_level(pe, "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1", 5, 6, &rng);
    play_engine_free(pe);
}

static void test_a_move_list_that_does_not_replay_is_refused(void)
{
    level_t level;
    CU_ASSERT_TRUE_FATAL(level_of(3, &level));
    played_game_t pg;
    game_from_fen(&pg, FEN_START);
    move_list_t legal;
    movegen_legal(&pg.game.pos, &legal);
    play(&pg, legal.moves[0]);
    move_t move;
    char err[256];
    /* the game has one ply; a line of none does not describe it */
    CU_ASSERT_EQUAL(play_engine_move(shared, &level, &pg.game, "", 0, &move, err, sizeof err), ENGINE_EINVALID);
    buf_free(&pg.line);
}

static play_hint_t hint_of(const char *fen)
{
    played_game_t pg;
    game_from_fen(&pg, fen);
    play_hint_t hint = { .move = MOVE_NONE };
    char err[256] = "";
    engine_status_t s = play_engine_hint(shared, &pg.game, "", 0, &hint, err, sizeof err);
    if (s != ENGINE_OK)
        fprintf(stderr, "\nhint of %s: %s: %s\n", fen, engine_status_name(s), err);
    CU_ASSERT_EQUAL(s, ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&pg.game.pos, hint.move));
    buf_free(&pg.line);
    return hint;
}

static void test_hint_finds_the_mate_in_one(void)
{
    const char *fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
    play_hint_t hint = hint_of(fen);
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(fen, &pos));
    char uci[UCI_BUFFER_SIZE];
    CU_ASSERT_STRING_EQUAL(uci_format(&pos, hint.move, uci), "d1d8");
    CU_ASSERT_TRUE(hint.is_mate);
    CU_ASSERT_EQUAL(hint.value, 1);
}

static void test_hint_when_being_mated_counts_negative(void)
{
    /* Black's only move is Kg8, and Ra8 mates. */
    play_hint_t hint = hint_of("7k/8/6K1/8/8/8/8/R7 b - - 0 1");
    CU_ASSERT_TRUE(hint.is_mate);
    CU_ASSERT_EQUAL(hint.value, -1);
}

static void test_hint_scores_from_the_side_to_move(void)
{
    /* Black has no queen: good for White to move, bad for Black to move. */
    play_hint_t white = hint_of("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    play_hint_t black = hint_of("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
    CU_ASSERT_FALSE(white.is_mate);
    CU_ASSERT_FALSE(black.is_mate);
    CU_ASSERT(white.value > 500);
    CU_ASSERT(black.value < -500);
}

static void test_an_engine_killed_between_moves_is_restarted(void)
{
    char err[256] = "";
    play_engine_t *pe = play_engine_start(stockfish, false, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pe);
    pid_t first = play_engine_pid(pe);
    CU_ASSERT_FATAL(first > 0);
    CU_ASSERT_EQUAL(kill(-first, SIGKILL), 0);
    level_t level;
    CU_ASSERT_TRUE_FATAL(level_of(4, &level));
    played_game_t pg;
    game_from_fen(&pg, FEN_START);
    move_t move = MOVE_NONE;
    engine_status_t s = play_engine_move(pe, &level, &pg.game, "", 0, &move, err, sizeof err);
    if (s != ENGINE_OK)
        fprintf(stderr, "\nafter the kill: %s: %s\n", engine_status_name(s), err);
    CU_ASSERT_EQUAL(s, ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&pg.game.pos, move));
    CU_ASSERT(play_engine_pid(pe) > 0 && play_engine_pid(pe) != first);
    /* and a hint after another kill */
    CU_ASSERT_EQUAL(kill(-play_engine_pid(pe), SIGKILL), 0);
    play_hint_t hint;
    CU_ASSERT_EQUAL(play_engine_hint(pe, &pg.game, "", 0, &hint, err, sizeof err), ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&pg.game.pos, hint.move));
    play_engine_free(pe);
    buf_free(&pg.line);
}

int test_play_engine_register(void)
{
    CU_pSuite suite = CU_add_suite("play_engine", suite_init, suite_cleanup);
    if (!suite)
        return -1;
    CU_add_test(suite, "an_engine_that_cannot_start_is_a_sentence", test_an_engine_that_cannot_start_is_a_sentence);
    CU_add_test(suite, "every_level_answers_a_legal_move", test_every_level_answers_a_legal_move);
    CU_add_test(suite, "chess960_moves_are_legal_with_castling_as_king_takes_rook",
                test_chess960_moves_are_legal_with_castling_as_king_takes_rook);
    CU_add_test(suite, "a_move_list_that_does_not_replay_is_refused", test_a_move_list_that_does_not_replay_is_refused);
    CU_add_test(suite, "hint_finds_the_mate_in_one", test_hint_finds_the_mate_in_one);
    CU_add_test(suite, "hint_when_being_mated_counts_negative", test_hint_when_being_mated_counts_negative);
    CU_add_test(suite, "hint_scores_from_the_side_to_move", test_hint_scores_from_the_side_to_move);
    CU_add_test(suite, "an_engine_killed_between_moves_is_restarted", test_an_engine_killed_between_moves_is_restarted);
    return 0;
}
