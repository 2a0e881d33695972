/* Tests for api/play/play.c: the local `chessd play` session, driven through
 * play_session with in-memory input and output, two people or one against
 * the computer (real Stockfish: /usr/games/stockfish or $CHESSD_STOCKFISH);
 * hints, the last move's marks, the colour board and the table of commands.
 * tests/e2e/play.test.mjs compares the HTTP API's answers for the same
 * moves; test_http_client.c tests the remote mode's client. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../api/play/play.h"
#include "../../support/tests.h"

/* Runs a session from fen (NULL: the start position) on input, with local
 * (NULL: two people, no engine); returns the output (caller frees) and the
 * session's result in *status. */
static char *run_local_in(variant_t variant, const char *fen, const char *input, bool unicode, bool flip,
                          int max_plies, const play_local_t *local, int *status)
{
    position_t start;
    const char *text = fen ? fen : variant_rules(variant)->start_fen;
    CU_ASSERT_EQUAL_FATAL(fen_parse_variant(text, strlen(text), variant, FEN_DETECT_CHESS960, &start, NULL, 0), FEN_OK);
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    char *output = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&output, &length);
    CU_ASSERT_FATAL(in && out);
    play_view_t view = { .unicode = unicode, .flip = flip, .prompt = false, .max_plies = max_plies };
    play_input_t *lines = play_input_open(in, out, false, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lines);
    *status = play_session(lines, out, &start, &view, local ? local : &(play_local_t){ 0 });
    play_input_free(lines);
    fclose(in);
    fclose(out);
    return output;
}

static char *run_local(const char *fen, const char *input, bool unicode, bool flip, int max_plies,
                       const play_local_t *local, int *status)
{
    return run_local_in(VARIANT_STANDARD, fen, input, unicode, flip, max_plies, local, status);
}

/* A session of two people in variant, from fen (NULL: the variant's start). */
static char *run_variant(variant_t variant, const char *fen, const char *input, bool unicode)
{
    int status;
    char *out = run_local_in(variant, fen, input, unicode, false, 1000, NULL, &status);
    CU_ASSERT_EQUAL(status, 0);
    return out;
}

static char *run_flags(const char *fen, const char *input, bool unicode, bool flip, int max_plies, int *status)
{
    return run_local(fen, input, unicode, flip, max_plies, NULL, status);
}

static char *run(const char *fen, const char *input)
{
    int status;
    char *out = run_flags(fen, input, false, false, 1000, &status);
    CU_ASSERT_EQUAL(status, 0);
    return out;
}

/* The last position block's line starting with prefix (NULL when none). */
static const char *last_line(const char *out, const char *prefix, char *line, size_t size)
{
    const char *found = NULL;
    for (const char *p = out; p && *p;) {
        if (!strncmp(p, prefix, strlen(prefix)))
            found = p;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!found)
        return NULL;
    size_t n = strcspn(found, "\n");
    snprintf(line, size, "%.*s", (int)n, found);
    return line;
}

static void expect_last(const char *out, const char *prefix, const char *expected)
{
    char line[512];
    const char *got = last_line(out, prefix, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(got);
    if (got && strcmp(got, expected)) {
        fprintf(stderr, "\nexpected '%s'\n     got '%s'\n", expected, got);
        CU_FAIL("line differs");
    }
}

static void test_fools_mate_ends_the_game_in_checkmate(void)
{
    char *out = run(NULL, "f3\ne5\ng4\nQh4#\nmoves\na3\n");
    expect_last(out, "Status:", "Status: checkmate, result 0-1");
    expect_last(out, "White to move", "White to move, in check");
    expect_last(out, "Moves:", "Moves: 1. f3 e5 2. g4 Qh4#");
    expect_last(out, "Legal moves", "Legal moves (0):");
    expect_last(out, "error:", "error: game_over: the game is over; nothing can change it");
    CU_ASSERT_PTR_NULL(strchr(out, '\x1b'));
    free(out);
}

static void test_moves_print_their_san_without_the_clocks_the_line_keeps(void)
{
    position_t start;
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, &start, NULL, 0), FEN_OK);
    static const char line[] = "e2e4:e4:60000 e7e5:e5:59000 g1f3:Nf3";
    char *output = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&output, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    play_print_moves(out, &start, line, strlen(line));
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(output, "Moves: 1. e4 e5 2. Nf3"));
    free(output);
}

static void test_start_board_in_letters_with_labels(void)
{
    char *out = run(NULL, "");
    const char *board = "8 r n b q k b n r\n7 p p p p p p p p\n6 . . . . . . . .\n5 . . . . . . . .\n"
                        "4 . . . . . . . .\n3 . . . . . . . .\n2 P P P P P P P P\n1 R N B Q K B N R\n"
                        "  a b c d e f g h\nWhite to move\nStatus: active\nMaterial - white 39, black 39\nMoves:\n\n";
    CU_ASSERT_STRING_EQUAL(out, board);
    free(out);
}

static void test_unicode_board_and_em_dash(void)
{
    int status;
    char *out = run_flags(NULL, "", true, false, 1000, &status);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "8 \u265c \u265e \u265d \u265b \u265a \u265d \u265e \u265c\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 \u2656 \u2658 \u2657 \u2655 \u2654 \u2657 \u2658 \u2656\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "5 \u00b7 \u00b7 \u00b7 \u00b7 \u00b7 \u00b7 \u00b7 \u00b7\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Material \u2014 white 39, black 39\n"));
    free(out);
}

static void test_flip_puts_black_at_the_bottom(void)
{
    int status;
    char *out = run_flags(NULL, "e4\n", false, true, 1000, &status);
    CU_ASSERT_EQUAL(strncmp(out, "1 R N B K Q B N R\n2 P P P P P P P P\n", 36), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "8 r n b k q b n r\n  h g f e d c b a\n"));
    /* e4 is the fourth file from the right; e2 and e4, the last move's squares, in brackets */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "4 . . .[P]. . . .\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 P P P[.]P P P P\n"));
    free(out);
}

static void test_material_counts_captures(void)
{
    char *out = run(NULL, "e4\nd5\nexd5\nQxd5\nNc3\nQxa2\nRxa2\n");
    expect_last(out, "Material", "Material - white 37, black 29");
    free(out);
}

static void test_illegal_move_gives_the_api_reason(void)
{
    char *out = run(NULL, "e4\ne5\nKe3\nNf9\nN\n");
    expect_last(out, "error: illegal_move", "error: illegal_move: 2. Ke3: a king cannot move from e1 to e3");
    expect_last(out, "error: invalid_move_text",
                "error: invalid_move_text: 2. N: 'N' is neither UCI (e2e4) nor SAN (e4, Nf3, O-O)");
    expect_last(out, "Moves:", "Moves: 1. e4 e5"); /* nothing changed */
    free(out);
}

static void test_uci_and_san_both_play(void)
{
    char *out = run(NULL, "e2e4\ne7e5\ng1f3\nNc6\nfen\n");
    expect_last(out, "Moves:", "Moves: 1. e4 e5 2. Nf3 Nc6");
    expect_last(out, "r1bqkbnr", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    free(out);
}

static void test_undo_takes_back_one_ply_and_a_mate(void)
{
    char *out = run(NULL, "undo\nf3\ne5\ng4\nQh4#\nundo\nfen\nundo\nundo\nundo\nfen\nundo\n");
    expect_last(out, "error: nothing_to_undo", "error: nothing_to_undo: no move has been played");
    expect_last(out, "rnbqkbnr/pppp1ppp", "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2");
    expect_last(out, "rnbqkbnr/pppppppp", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    expect_last(out, "Status:", "Status: active");
    expect_last(out, "Moves:", "Moves:");
    free(out);
}

static void test_claim_after_threefold_repetition(void)
{
    char *out = run(NULL, "claim\nNf3\nNf6\nNg1\nNg8\nNf3\nNf6\nNg1\nNg8\nmoves\nclaim\ne4\nmoves\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nLegal moves (20): ")); /* before the claim */
    expect_last(out, "Legal moves", "Legal moves (0):");       /* none once the game is over, as the API */
    expect_last(out, "error: draw_not_claimable",
                "error: draw_not_claimable: neither the 50-move rule nor threefold repetition applies");
    expect_last(out, "Draw may be claimed", "Draw may be claimed: threefold_repetition");
    expect_last(out, "Status:", "Status: draw (threefold_repetition), result 1/2-1/2");
    expect_last(out, "error: game_over", "error: game_over: the game is over; nothing can change it");
    free(out);
}

static void test_fifty_move_claim_from_a_fen(void)
{
    char *out = run("8/8/8/4k3/8/8/8/R3K3 w - - 99 80", "Ra2\nclaim\n");
    expect_last(out, "Draw may be claimed", "Draw may be claimed: fifty_moves");
    expect_last(out, "Status:", "Status: draw (fifty_moves), result 1/2-1/2");
    expect_last(out, "Moves:", "Moves: 80. Ra2");
    free(out);
}

static void test_stalemate_and_automatic_draws(void)
{
    char *out = run("7k/8/6Q1/8/8/8/8/6K1 w - - 0 1", "Qf7\n");
    expect_last(out, "Status:", "Status: stalemate, result 1/2-1/2");
    expect_last(out, "Black to move", "Black to move");
    free(out);
    out = run("8/8/8/4k3/8/8/3n4/2B1K3 w - - 0 1", "Kxd2\n");
    expect_last(out, "Status:", "Status: draw (insufficient_material), result 1/2-1/2");
    expect_last(out, "Material", "Material - white 3, black 0");
    free(out);
}

static void test_pgn_of_the_session(void)
{
    char *out = run(NULL, "f3\ne5\ng4\nQh4#\npgn\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[Result \"0-1\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[Termination \"normal\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n1. f3 e5 2. g4 Qh4# 0-1\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "[SetUp"));
    free(out);
}

static void test_chess960_fen_castles_king_takes_rook(void)
{
    /* Shredder-FEN rights HA: the king on b1 castles with the rooks on h1 and a1. */
    char *out = run("4k3/8/8/8/8/8/8/RK5R w HA - 0 1", "O-O\nfen\npgn\nundo\nb1h1\n");
    expect_last(out, "Moves:", "Moves: 1. O-O");
    expect_last(out, "4k3", "4k3/8/8/8/8/8/8/R4RK1 b - - 1 1");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[Variant \"Chess960\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n1. O-O *\n"));
    CU_ASSERT_PTR_NULL(strstr(out, "error:")); /* UCI king-takes-rook castles too */
    free(out);
}

static void test_standard_chess_has_no_variant_lines(void)
{
    char *out = run(NULL, "e4\n");
    CU_ASSERT_PTR_NULL(strstr(out, "pocket:"));
    CU_ASSERT_PTR_NULL(strstr(out, "Checks given:"));
    free(out);
}

static void test_crazyhouse_shows_the_pockets_drops_and_undo_gives_the_piece_back(void)
{
    char *out = run_variant(VARIANT_CRAZYHOUSE, NULL, "e4\nd5\nexd5\nQxd5\nNc3\nQa5\nP@b4\nQxb4\n", false);
    const char *board = "8 r n b . k b n r\n7 p p p . p p p p\n6 . . . . . . . .\n5[.]. . . . . . .\n"
                        "4 .[q]. . . . . .\n3 . . N . . . . .\n2 P P P P . P P P\n1 R . B Q K B N R\n"
                        "  a b c d e f g h\nWhite pocket: -\nBlack pocket: p p\nWhite to move\n"
                        "Status: active\nMaterial - white 38, black 38\n"
                        "Moves: 1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5 4. P@b4 Qxb4\n\n";
    size_t length = strlen(out), tail = strlen(board);
    CU_ASSERT(length >= tail && !strcmp(out + length - tail, board));
    free(out);
    /* Two undos: the queen gives the pawn back, then the drop goes back to the pocket. */
    out = run_variant(VARIANT_CRAZYHOUSE, NULL, "e4\nd5\nexd5\nQxd5\nNc3\nQa5\nP@b4\nQxb4\nundo\nundo\nfen\n", true);
    expect_last(out, "White pocket:", "White pocket: \u2659");
    expect_last(out, "Black pocket:", "Black pocket: \u265f");
    expect_last(out, "rnb1kbnr", "rnb1kbnr/ppp1pppp/8/q7/8/2N5/PPPP1PPP/R1BQKBNR[Pp] w KQkq - 2 4");
    expect_last(out, "Moves:", "Moves: 1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5");
    free(out);
    /* A mate by a drop; the PGN names the variant and the position it started from. */
    out = run_variant(VARIANT_CRAZYHOUSE, "k7/8/1K6/8/8/8/8/8[Q] w - - 0 1", "Q@b7\npgn\n", false);
    expect_last(out, "Status:", "Status: checkmate, result 1-0");
    expect_last(out, "White pocket:", "White pocket: -");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[Variant \"Crazyhouse\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[FEN \"k7/8/1K6/8/8/8/8/8[Q] w - - 0 1\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n1. Q@b7# 1-0\n"));
    free(out);
}

static void test_three_check_counts_the_checks_and_the_third_ends_the_game(void)
{
    char *out = run_variant(VARIANT_THREE_CHECK, NULL, "e4\ne5\nBc4\nNc6\nBxf7+\nKxf7\nQh5+\ng6\nQxe5\nQe7\nQxe7+\n",
                            false);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Checks given: white 2, black 0 (three win)\n"));
    expect_last(out, "Checks given:", "Checks given: white 3, black 0 (three win)");
    expect_last(out, "Status:", "Status: variant_end (three_checks), result 1-0");
    free(out);
}

static void test_schess_shows_the_hawk_and_the_elephant_and_counts_the_reserves(void)
{
    char *out = run_variant(VARIANT_SEIRAWAN, NULL, "Nc3/H\ne5\n", false);
    expect_last(out, "1 ", "1 R H B Q K B N R");
    expect_last(out, "White reserve:", "White reserve: E");
    expect_last(out, "Black reserve:", "Black reserve: h e");
    expect_last(out, "Material", "Material - white 46, black 39"); /* the Hawk on b1 counts 7 */
    free(out);
    out = run_variant(VARIANT_SEIRAWAN, NULL, "Nc3/H\ne5\n", true);
    expect_last(out, "1 ", "1 \u2656 H \u2657 \u2655 \u2654 \u2657 \u2658 \u2656"); /* letters: no glyph of their own */
    expect_last(out, "White reserve:", "White reserve: E");
    free(out);
}

static void test_variant_ends_show_their_termination(void)
{
    static const struct {
        variant_t variant;
        const char *fen, *moves, *status;
    } ends[] = {
        { VARIANT_ATOMIC, "kn6/8/8/8/8/8/8/KR6 w - - 0 1", "Rxb8\n", "Status: variant_end (king_exploded), result 1-0" },
        { VARIANT_ANTICHESS, "8/8/8/8/8/8/p7/R7 w - - 0 1", "Rxa2\n", "Status: variant_end (no_pieces), result 0-1" },
        { VARIANT_KING_OF_THE_HILL, "k7/8/8/8/8/3K4/8/8 w - - 0 1", "Kd4\n",
          "Status: variant_end (king_of_the_hill), result 1-0" },
        { VARIANT_HORDE, "k7/8/8/8/8/8/8/rP6 b - - 0 1", "Rxb1\n", "Status: variant_end (horde_captured), result 0-1" },
        { VARIANT_RACING_KINGS, "8/1K5k/8/8/8/8/8/8 w - - 0 1", "Kb8\nKh8\n",
          "Status: variant_end (race_finished), result 1/2-1/2" },
    };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char *out = run_variant(ends[i].variant, ends[i].fen, ends[i].moves, false);
        expect_last(out, "Status:", ends[i].status);
        free(out);
    }
}

static void test_long_line_is_refused_and_the_session_goes_on(void)
{
    char input[2 * PLAY_LINE_MAX + 16];
    memset(input, 'a', 2 * PLAY_LINE_MAX);
    strcpy(input + 2 * PLAY_LINE_MAX, "\ne4\n");
    char *out = run(NULL, input);
    expect_last(out, "error:", "error: line_too_long: a line may hold at most 256 bytes");
    expect_last(out, "Moves:", "Moves: 1. e4");
    free(out);
}

static void test_control_characters_are_not_echoed(void)
{
    char *out = run(NULL, "\x1b[31mx\n");
    CU_ASSERT_PTR_NULL(strchr(out, '\x1b'));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "error: invalid_move_text: 1. ?[31mx: "));
    free(out);
}

static void test_plies_are_capped(void)
{
    int status;
    char *out = run_flags(NULL, "e4\ne5\nNf3\n", false, false, 2, &status);
    expect_last(out, "error:", "error: game_too_long: the game has as many moves as this server keeps");
    expect_last(out, "Moves:", "Moves: 1. e4 e5");
    free(out);
}

static void test_quit_stops_reading_and_eof_ends_cleanly(void)
{
    char *out = run(NULL, "e4\nquit\ne5\n");
    expect_last(out, "Moves:", "Moves: 1. e4");
    free(out);
    out = run(NULL, "e4\ne5"); /* the last line without its newline still counts */
    expect_last(out, "Moves:", "Moves: 1. e4 e5");
    free(out);
}

/* ---- hints and the computer ---- */

static const char *stockfish_path(void)
{
    const char *path = getenv("CHESSD_STOCKFISH");
    return path && *path ? path : "/usr/games/stockfish";
}

static void test_hint_line_formats_pawns_and_mates(void)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    play_print_hint(out, "Nf3", false, 36);
    play_print_hint(out, "e5", false, -105);
    play_print_hint(out, "Kg1", false, 0);
    play_print_hint(out, "a3", false, -7);
    play_print_hint(out, "Rd8#", true, 1);
    play_print_hint(out, "Kg8", true, -3);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(text, "hint: Nf3 (+0.36)\nhint: e5 (-1.05)\nhint: Kg1 (+0.00)\nhint: a3 (-0.07)\n"
                                 "hint: Rd8# (mate in 1)\nhint: Kg8 (mated in 3)\n");
    free(text);
}

static void test_hint_without_an_engine_is_an_error_and_the_session_goes_on(void)
{
    int status;
    play_local_t missing = { .engine_path = "/nonexistent/stockfish" };
    char *out = run_local(NULL, "hint\ne4\nfen\n", false, false, 1000, &missing, &status);
    CU_ASSERT_EQUAL(status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nerror: engine_unavailable: no engine for hints at /nonexistent/stockfish: "));
    expect_last(out, "rnbqkbnr", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    free(out);
    char *none = run_local(NULL, "hint\n", false, false, 1000, NULL, &status);
    expect_last(none, "error:", "error: engine_unavailable: no engine for hints (--engine PATH names one)");
    free(none);
}

static void test_hint_after_a_mate_is_game_over_without_an_engine(void)
{
    int status;
    play_local_t missing = { .engine_path = "/nonexistent/stockfish" };
    char *out = run_local(NULL, "f3\ne5\ng4\nQh4#\nhint\n", false, false, 1000, &missing, &status);
    expect_last(out, "error:", "error: game_over: the game is over and its position has no legal move");
    free(out);
}

static void test_hint_between_two_people_finds_the_mate_in_one(void)
{
    int status;
    play_local_t local = { .engine_path = stockfish_path() };
    char *out = run_local("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "hint\nRd8#\n", false, false, 1000, &local,
                          &status);
    CU_ASSERT_EQUAL(status, 0);
    expect_last(out, "hint:", "hint: Rd8# (mate in 1)");
    expect_last(out, "Status:", "Status: checkmate, result 1-0");
    free(out);
}

/* A session against the computer at level, which plays computer_color. */
static char *run_computer(const char *fen, const char *input, int level, int computer_color, int *status)
{
    char err[256];
    play_local_t local = { .computer = true, .computer_color = computer_color };
    CU_ASSERT_TRUE_FATAL(level_of(level, &local.level));
    local.engine = play_engine_start(stockfish_path(), false, err, sizeof err);
    if (!local.engine)
        fprintf(stderr, "\ncannot start %s: %s\n", stockfish_path(), err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(local.engine);
    char *out = run_local(fen, input, false, false, 1000, &local, status);
    play_engine_free(local.engine);
    return out;
}

static void test_the_computer_as_white_moves_first_and_its_moves_are_named(void)
{
    int status;
    char *out = run_computer(NULL, "moves\npgn\n", 2, WHITE, &status);
    CU_ASSERT_EQUAL(status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "You play black against chessd level 2 (Stockfish"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nwhite played "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n[White \"chessd level 2\"]\n"));
    char line[512];
    CU_ASSERT_PTR_NOT_NULL(last_line(out, "Moves: 1. ", line, sizeof line)); /* one move, white's */
    CU_ASSERT_PTR_NULL(strstr(line, " 1... "));
    expect_last(out, "Black to move", "Black to move");
    free(out);
}

static void test_undo_against_the_computer_takes_back_its_reply_too(void)
{
    int status;
    /* Black moves first from this FEN: nothing of the person's to undo yet. */
    char *out = run_computer("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1", "undo\nKd7\nundo\nfen\n", 3, WHITE, &status);
    CU_ASSERT_EQUAL(status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nerror: nothing_to_undo: no move has been played\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nwhite played "));
    expect_last(out, "4k3", "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1");
    free(out);
    /* The computer moved first: its move alone is not the person's to undo. */
    char *first = run_computer(NULL, "undo\nfen\n", 1, WHITE, &status);
    expect_last(first, "error:", "error: nothing_to_undo: you have not moved yet");
    const char *played = strstr(first, "\nwhite played ");
    CU_ASSERT_PTR_NOT_NULL(played); /* once: the undo changed nothing */
    CU_ASSERT_PTR_NULL(played ? strstr(played + 1, "\nwhite played ") : NULL);
    char fen[512];
    CU_ASSERT_PTR_NOT_NULL(last_line(first, "rnbqkbnr/pppppppp/", fen, sizeof fen));
    CU_ASSERT_PTR_NOT_NULL(strstr(fen, " b KQkq - ")); /* black, the person, still to move */
    free(first);
}

static void test_an_engine_that_dies_on_every_search_ends_the_session_with_status_1(void)
{
    signal(SIGPIPE, SIG_IGN); /* as chessd play does: a write to the dead engine is EPIPE */
    /* A fake engine: a good handshake, then an exit at each "go" (its restart too). */
    char dir[] = "/tmp/chessd-play-test-XXXXXX", path[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/engine", dir);
    FILE *script = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(script);
    fputs("#!/bin/sh\nwhile read -r line; do case \"$line\" in\n"
          "uci) echo 'id name dies on go'; echo uciok;;\nisready) echo readyok;;\ngo*|quit) exit 0;;\nesac; done\n",
          script);
    fclose(script);
    CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
    char err[256];
    play_local_t local = { .computer = true, .computer_color = BLACK };
    CU_ASSERT_TRUE_FATAL(level_of(4, &local.level));
    local.engine = play_engine_start(path, false, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(local.engine);
    int status;
    char *out = run_local(NULL, "e4\nfen\n", false, false, 1000, &local, &status);
    CU_ASSERT_EQUAL(status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nerror: engine_failed: "));
    CU_ASSERT_PTR_NULL(strstr(out, "rnbqkbnr/pppppppp/8/8/4P3")); /* fen was never read */
    free(out);
    play_engine_free(local.engine);
    unlink(path);
    rmdir(dir);
}

/* A variant's board shows what is held beside it: pockets, reserves, checks. */
static void test_variant_boards_show_pockets_reserves_and_checks(void)
{
    static const struct {
        variant_t variant;
        const char *fen, *want;
    } cases[] = {
        { VARIANT_CRAZYHOUSE, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R[QNp] w KQkq - 2 3",
          "White pocket: N Q\nBlack pocket: p\n" },
        { VARIANT_SEIRAWAN, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Ehe] w KQBCDFGkqbcdfg - 0 1",
          "White reserve: E\nBlack reserve: h e\n" },
        { VARIANT_THREE_CHECK, "4k3/8/8/8/8/8/8/3QK3 w - - 1+3 0 1", "Checks given: white 2, black 0" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        position_t pos;
        CU_ASSERT_EQUAL_FATAL(fen_parse_variant(cases[i].fen, strlen(cases[i].fen), cases[i].variant, 0, &pos, NULL, 0),
                              FEN_OK);
        char *text = NULL;
        size_t length = 0;
        FILE *out = open_memstream(&text, &length);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        play_print_board(out, &pos, 0, &(play_view_t){ .unicode = false });
        fclose(out);
        if (!strstr(text, cases[i].want))
            fprintf(stderr, "\n%s", text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, cases[i].want));
        free(text);
    }
}

/* ---- the last move, colours, the commands ---- */

static bitboard_t squares(const char *a, const char *b)
{
    bitboard_t set = bb_square(square_make(a[0] - 'a', a[1] - '1'));
    return b ? set | bb_square(square_make(b[0] - 'a', b[1] - '1')) : set;
}

static void test_last_move_is_the_last_entrys_squares(void)
{
    CU_ASSERT_EQUAL(play_last_move("", 0), 0);
    CU_ASSERT_EQUAL(play_last_move(NULL, 0), 0);
    const char *line = "e2e4:e4 e7e5:e5 e1g1:O-O";
    CU_ASSERT_EQUAL(play_last_move(line, strlen(line)), squares("e1", "g1")); /* the king's two squares */
    CU_ASSERT_EQUAL(play_last_move(line, 7), squares("e2", "e4"));            /* "e2e4:e4" alone */
    const char *drop = "e2e4:e4 d7d5:d5 e4d5:exd5 d8d5:Qxd5 P@e6:P@e6";
    CU_ASSERT_EQUAL(play_last_move(drop, strlen(drop)), squares("e6", NULL)); /* a drop has one square */
    CU_ASSERT_EQUAL(play_last_move("e7e8q", 5), squares("e7", "e8"));         /* no SAN: the UCI alone */
    CU_ASSERT_EQUAL(play_last_move("junk", 4), 0);
}

static void test_last_move_in_brackets_side_by_side_sharing_a_pair(void)
{
    char *out = run("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "O-O\n");
    expect_last(out, "1 ", "1 . . . .[.]R[K]."); /* e1 and g1: the king's move */
    free(out);
    out = run("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "Kd1\n");
    expect_last(out, "1 ", "1 R . .[K .]. . .");
    free(out);
}

/* The backgrounds of the eight squares of a rank drawn in colour (the SGR before each). */
static void rank_backgrounds(const char *board, int rank, int backgrounds[8])
{
    char prefix[4];
    snprintf(prefix, sizeof prefix, "\n%d ", rank);
    const char *p = strstr(board, prefix);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    for (int file = 0; file < 8; file++) {
        p = strstr(p, "\033[48;5;");
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        p += strlen("\033[48;5;");
        backgrounds[file] = atoi(p);
    }
}

static void test_colour_board_tints_the_last_move_and_resets_each_line(void)
{
    position_t pos;
    const char *fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    CU_ASSERT_EQUAL_FATAL(fen_parse_variant(fen, strlen(fen), VARIANT_STANDARD, 0, &pos, NULL, 0), FEN_OK);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    fputc('\n', out);
    play_print_board(out, &pos, squares("e2", "e4"), &(play_view_t){ .unicode = true, .color = true });
    fclose(out);
    int rank4[8], rank2[8];
    rank_backgrounds(text, 4, rank4);
    rank_backgrounds(text, 2, rank2);
    CU_ASSERT_NOT_EQUAL(rank4[4], rank4[2]); /* e4 and c4, both light: e4 tinted */
    CU_ASSERT_NOT_EQUAL(rank2[4], rank2[2]); /* e2 and c2 likewise */
    CU_ASSERT_EQUAL(rank4[3], rank4[5]);     /* d4 and f4, both dark, alike */
    CU_ASSERT_NOT_EQUAL(rank4[2], rank4[3]); /* light and dark differ */
    CU_ASSERT_PTR_NULL(strstr(text, "\u2659")); /* in colour both sides take the solid glyphs */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ";38;5;231m \u265f ")); /* a white pawn, white on its square */
    int resets = 0;
    for (const char *p = text; (p = strstr(p, "\033[0m\n")); p++)
        resets++;
    CU_ASSERT_EQUAL(resets, 8); /* each rank ends its colours before the line does */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n   a  b  c  d  e  f  g  h\n"));
    free(text);
}

static void test_commands_come_from_one_table_for_both_sessions(void)
{
    CU_ASSERT_EQUAL(play_command_find("hint", 4, false), PLAY_COMMAND_HINT);
    CU_ASSERT_EQUAL(play_command_find("exit", 4, false), PLAY_COMMAND_QUIT);
    CU_ASSERT_EQUAL(play_command_find("hin", 3, false), PLAY_COMMAND_MOVE);
    CU_ASSERT_EQUAL(play_command_find("hints", 5, false), PLAY_COMMAND_MOVE);
    CU_ASSERT_EQUAL(play_command_find("e4", 2, true), PLAY_COMMAND_MOVE);
    CU_ASSERT_EQUAL(play_command_find("draw", 4, false), PLAY_COMMAND_MOVE); /* the remote mode's only */
    CU_ASSERT_EQUAL(play_command_find("draw", 4, true), PLAY_COMMAND_DRAW);
    CU_ASSERT_EQUAL(play_command_find("resign", 6, true), PLAY_COMMAND_RESIGN);
    char *local = NULL, *remote = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&local, &length);
    play_print_help(out, false);
    fclose(out);
    out = open_memstream(&remote, &length);
    play_print_help(out, true);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(local, "\n  quit     leave (the end of input too)\n"));
    CU_ASSERT_PTR_NULL(strstr(local, "resign"));
    CU_ASSERT_PTR_NULL(strstr(local, "exit")); /* an alias, not listed */
    CU_ASSERT_PTR_NOT_NULL(strstr(remote, "with --server only:\n  draw     offer a draw\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(remote, "           (with --server: GET /analysis"));
    free(local);
    free(remote);
}

/* How many boards text shows (one "Moves:" line each). */
static int boards(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\nMoves:")); p++)
        n++;
    return n;
}

static void test_against_the_computer_a_turn_shows_one_board_with_its_reply_marked(void)
{
    int status;
    char *out = run_computer(NULL, "e4\n", 1, BLACK, &status);
    CU_ASSERT_EQUAL(status, 0);
    CU_ASSERT_EQUAL(boards(out), 2); /* the start, then one after e4 and the reply */
    const char *reply = strstr(out, "\nblack played ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
    CU_ASSERT_EQUAL(boards(reply), 1);
    CU_ASSERT_PTR_NULL(strstr(out, "\n4 . . . .[P]")); /* e4 is not the last move on the board shown */
    free(out);
    out = run_computer(NULL, "", 1, WHITE, &status); /* the computer opens: its move and one board */
    CU_ASSERT_EQUAL(boards(out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nwhite played "));
    CU_ASSERT_PTR_NOT_NULL(strchr(out, '['));
    free(out);
}

int test_play_register(void)
{
    CU_pSuite suite = CU_add_suite("play", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "fools_mate_ends_the_game_in_checkmate", test_fools_mate_ends_the_game_in_checkmate);
    CU_add_test(suite, "moves_print_their_san_without_the_clocks_the_line_keeps",
                test_moves_print_their_san_without_the_clocks_the_line_keeps);
    CU_add_test(suite, "variant_boards_show_pockets_reserves_and_checks",
                test_variant_boards_show_pockets_reserves_and_checks);
    CU_add_test(suite, "start_board_in_letters_with_labels", test_start_board_in_letters_with_labels);
    CU_add_test(suite, "unicode_board_and_em_dash", test_unicode_board_and_em_dash);
    CU_add_test(suite, "flip_puts_black_at_the_bottom", test_flip_puts_black_at_the_bottom);
    CU_add_test(suite, "material_counts_captures", test_material_counts_captures);
    CU_add_test(suite, "illegal_move_gives_the_api_reason", test_illegal_move_gives_the_api_reason);
    CU_add_test(suite, "uci_and_san_both_play", test_uci_and_san_both_play);
    CU_add_test(suite, "undo_takes_back_one_ply_and_a_mate", test_undo_takes_back_one_ply_and_a_mate);
    CU_add_test(suite, "claim_after_threefold_repetition", test_claim_after_threefold_repetition);
    CU_add_test(suite, "fifty_move_claim_from_a_fen", test_fifty_move_claim_from_a_fen);
    CU_add_test(suite, "stalemate_and_automatic_draws", test_stalemate_and_automatic_draws);
    CU_add_test(suite, "pgn_of_the_session", test_pgn_of_the_session);
    CU_add_test(suite, "chess960_fen_castles_king_takes_rook", test_chess960_fen_castles_king_takes_rook);
    CU_add_test(suite, "standard_chess_has_no_variant_lines", test_standard_chess_has_no_variant_lines);
    CU_add_test(suite, "crazyhouse_shows_the_pockets_drops_and_undo_gives_the_piece_back",
                test_crazyhouse_shows_the_pockets_drops_and_undo_gives_the_piece_back);
    CU_add_test(suite, "three_check_counts_the_checks_and_the_third_ends_the_game",
                test_three_check_counts_the_checks_and_the_third_ends_the_game);
    CU_add_test(suite, "schess_shows_the_hawk_and_the_elephant_and_counts_the_reserves",
                test_schess_shows_the_hawk_and_the_elephant_and_counts_the_reserves);
    CU_add_test(suite, "variant_ends_show_their_termination", test_variant_ends_show_their_termination);
    CU_add_test(suite, "long_line_is_refused_and_the_session_goes_on", test_long_line_is_refused_and_the_session_goes_on);
    CU_add_test(suite, "control_characters_are_not_echoed", test_control_characters_are_not_echoed);
    CU_add_test(suite, "plies_are_capped", test_plies_are_capped);
    CU_add_test(suite, "quit_stops_reading_and_eof_ends_cleanly", test_quit_stops_reading_and_eof_ends_cleanly);
    CU_add_test(suite, "hint_line_formats_pawns_and_mates", test_hint_line_formats_pawns_and_mates);
    CU_add_test(suite, "hint_without_an_engine_is_an_error_and_the_session_goes_on",
                test_hint_without_an_engine_is_an_error_and_the_session_goes_on);
    CU_add_test(suite, "hint_after_a_mate_is_game_over_without_an_engine",
                test_hint_after_a_mate_is_game_over_without_an_engine);
    CU_add_test(suite, "hint_between_two_people_finds_the_mate_in_one",
                test_hint_between_two_people_finds_the_mate_in_one);
    CU_add_test(suite, "the_computer_as_white_moves_first_and_its_moves_are_named",
                test_the_computer_as_white_moves_first_and_its_moves_are_named);
    CU_add_test(suite, "undo_against_the_computer_takes_back_its_reply_too",
                test_undo_against_the_computer_takes_back_its_reply_too);
    CU_add_test(suite, "an_engine_that_dies_on_every_search_ends_the_session_with_status_1",
                test_an_engine_that_dies_on_every_search_ends_the_session_with_status_1);
    CU_add_test(suite, "last_move_is_the_last_entrys_squares", test_last_move_is_the_last_entrys_squares);
    CU_add_test(suite, "last_move_in_brackets_side_by_side_sharing_a_pair",
                test_last_move_in_brackets_side_by_side_sharing_a_pair);
    CU_add_test(suite, "colour_board_tints_the_last_move_and_resets_each_line",
                test_colour_board_tints_the_last_move_and_resets_each_line);
    CU_add_test(suite, "commands_come_from_one_table_for_both_sessions",
                test_commands_come_from_one_table_for_both_sessions);
    CU_add_test(suite, "against_the_computer_a_turn_shows_one_board_with_its_reply_marked",
                test_against_the_computer_a_turn_shows_one_board_with_its_reply_marked);
    return 0;
}
