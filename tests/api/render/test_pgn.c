/* Tests for api/render/pgn.c (pgn_write): the tag section (the roster in
 * order, the server's Event and Site, a game's own tags in their order,
 * SetUp/FEN, Variant, Termination, escaping) and the movetext (move numbers,
 * the result, lines of at most 80 characters). The oracle is chessd's SAN
 * reader: the movetext replays to where its line leads. An allocation
 * failure gives NULL, never part of the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../../api/render/pgn.h"
#include "../../../rules/game.h"
#include "../../../store/game_meta.h"
#include "../../support/tests.h"

/* A move line of up to LINE_PLIES plies, built as the store builds it. */
enum { LINE_PLIES = 300 };

typedef struct {
    position_t initial, final;
    char text[LINE_PLIES * (GAME_LINE_ENTRY_SIZE + 1)];
    size_t length;
    int plies;
    char sans[LINE_PLIES][SAN_BUFFER_SIZE];
} line_t;

static void line_start(line_t *line, const position_t *initial)
{
    memset(line, 0, sizeof *line);
    line->initial = *initial;
    line->final = *initial;
}

/* Appends the "uci:san" entry of move (legal in line->final) and plays it. */
static void line_push(line_t *line, move_t move)
{
    game_played_t played;
    memset(&played, 0, sizeof played);
    played.move = move;
    uci_format(&line->final, move, played.uci);
    san_format(&line->final, move, played.san);
    if (line->length)
        line->text[line->length++] = ' ';
    line->length += game_line_entry(&played, line->text + line->length);
    snprintf(line->sans[line->plies], SAN_BUFFER_SIZE, "%s", played.san);
    line->plies++;
    position_undo_t undo;
    position_make(&line->final, move, &undo);
}

/* Plays the space-separated moves (UCI or SAN) onto the line. */
static void line_play(line_t *line, const char *moves)
{
    for (const char *p = moves; *p;) {
        size_t length = strcspn(p, " ");
        move_t move;
        char message[200];
        CU_ASSERT_EQUAL_FATAL(notation_parse_move(&line->final, p, length, &move, message, sizeof message),
                              LEGALITY_OK);
        line_push(line, move);
        p += length;
        while (*p == ' ')
            p++;
    }
}

/* A line of up to `plies` random legal moves (seeded xorshift64); it stops
 * early only at mate or stalemate. */
static void line_random(line_t *line, int plies, uint64_t seed)
{
    uint64_t rng = seed;
    for (int i = 0; i < plies; i++) {
        move_list_t legal;
        if (movegen_legal(&line->final, &legal) == 0)
            break;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        line_push(line, legal.moves[rng % (uint64_t)legal.count]);
    }
}

static position_t parse(const char *fen, unsigned flags)
{
    position_t pos;
    char message[200];
    fen_error_t err = fen_parse(fen, strlen(fen), flags, &pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    return pos;
}

static pgn_game_t game_of(const line_t *line, const char *white, const char *black, const char *result, bool over)
{
    pgn_game_t game = {
        .white = white,
        .black = black,
        .created_at_ms = 1709251199999, /* 2024-02-29 23:59:59.999 UTC */
        .initial = &line->initial,
        .result = result,
        .over = over,
        .moves = line->text,
        .moves_length = line->length,
    };
    return game;
}

/* pgn_write's text, checked to be as long as it says. The caller frees it. */
static char *write_pgn(const pgn_game_t *game)
{
    size_t length = 0;
    char *text = pgn_write(game, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(strlen(text), length);
    return text;
}

/* The movetext: what follows the blank line that ends the tags. */
static const char *movetext_of(const char *text)
{
    const char *blank = strstr(text, "\n\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(blank);
    return blank + 2;
}

/* --- the tags --- */

static void test_the_seven_tag_roster_comes_first_in_order_with_the_games_values(void)
{
    /* Twelve hours east of UTC, so a Date from local time would be a day later. */
    char *old_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
    setenv("TZ", "XXX-12", 1);
    tzset();
    line_t line;
    position_t start = parse(FEN_START, 0);
    line_start(&line, &start);
    line_play(&line, "e4 e5 Nf3");
    pgn_game_t game = game_of(&line, "Alice", "Bob", "*", false);
    char *text = write_pgn(&game);
    if (old_tz)
        setenv("TZ", old_tz, 1);
    else
        unsetenv("TZ");
    tzset();
    free(old_tz);
    CU_ASSERT_STRING_EQUAL(text, "[Event \"?\"]\n"
                                 "[Site \"?\"]\n"
                                 "[Date \"2024.02.29\"]\n"
                                 "[Round \"-\"]\n"
                                 "[White \"Alice\"]\n"
                                 "[Black \"Bob\"]\n"
                                 "[Result \"*\"]\n"
                                 "[Termination \"unterminated\"]\n"
                                 "\n"
                                 "1. e4 e5 2. Nf3 *\n");
    free(text);
}

static void test_the_date_is_the_utc_day_of_created_at(void)
{
    static const struct {
        int64_t ms;
        const char *tag;
    } cases[] = {
        { 0, "[Date \"1970.01.01\"]" },
        { 86399999, "[Date \"1970.01.01\"]" },
        { 86400000, "[Date \"1970.01.02\"]" },
        { 1709251200000, "[Date \"2024.03.01\"]" },
        { 4102444800000, "[Date \"2100.01.01\"]" },
    };
    position_t start = parse(FEN_START, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgn_game_t game = { .white = "", .black = "", .created_at_ms = cases[i].ms, .initial = &start,
                            .result = "*", .moves = "" };
        char *text = write_pgn(&game);
        if (!strstr(text, cases[i].tag))
            fprintf(stderr, "\nno %s in:\n%s\n", cases[i].tag, text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, cases[i].tag));
        free(text);
    }
}

static void test_unnamed_players_are_question_marks(void)
{
    position_t start = parse(FEN_START, 0);
    pgn_game_t game = { .white = "", .black = "", .created_at_ms = 0, .initial = &start, .result = "*", .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[White \"?\"]\n[Black \"?\"]\n"));
    free(text);
    game.black = "Carol";
    text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[White \"?\"]\n[Black \"Carol\"]\n"));
    free(text);
}

static void test_quotes_and_backslashes_in_tag_values_are_escaped(void)
{
    position_t start = parse(FEN_START, 0);
    pgn_game_t game = { .white = "Ann \"The Rook\" O\\Neil", .black = "\\\"", .created_at_ms = 0,
                        .initial = &start, .result = "*", .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[White \"Ann \\\"The Rook\\\" O\\\\Neil\"]\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[Black \"\\\\\\\"\"]\n"));
    free(text);
}

/* A meta with these tags set, name then value, NULL-terminated. */
static game_meta_t *tags_of(const char *const *pairs)
{
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    for (int i = 0; pairs[i]; i += 2)
        CU_ASSERT_EQUAL_FATAL(game_meta_set_tag(meta, pairs[i], pairs[i + 1], strlen(pairs[i + 1]), NULL, 0),
                              GAME_TAG_OK);
    return meta;
}

static void test_the_servers_event_and_site_fill_in_for_a_game_without_its_own(void)
{
    position_t start = parse(FEN_START, 0);
    pgn_game_t game = { .white = "Ann", .black = "Bob", .created_at_ms = 1709251199999, .initial = &start,
                        .result = "*", .moves = "",
                        .defaults = { .event = "Club \"Open\"", .site = "https://chess.example/" } };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[Event \"Club \\\"Open\\\"\"]\n"
                                        "[Site \"https://chess.example/\"]\n"
                                        "[Date \"2024.02.29\"]\n"
                                        "[Round \"-\"]\n"
                                        "[White \"Ann\"]\n"));
    free(text);
    /* The game's own Event, Date and Round win; Site is still the server's. */
    game_meta_t *tags = tags_of((const char *const[]){ "Round", "3.1", "Date", "2026.??.??", "Event", "Final", NULL });
    game.tags = tags;
    text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[Event \"Final\"]\n"
                                        "[Site \"https://chess.example/\"]\n"
                                        "[Date \"2026.??.??\"]\n"
                                        "[Round \"3.1\"]\n"
                                        "[White \"Ann\"]\n"
                                        "[Black \"Bob\"]\n"
                                        "[Result \"*\"]\n"
                                        "[Termination \"unterminated\"]\n\n"));
    CU_ASSERT_PTR_NULL(strstr(strstr(text, "[Round"), "[Event")); /* once each, in the roster */
    free(text);
    game_meta_free(tags);
}

static void test_a_games_tags_follow_the_roster_known_ones_first_its_own_last_by_name_escaped(void)
{
    position_t initial = parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", 0);
    game_meta_t *tags = tags_of((const char *const[]){
        "Zebra", "z", "Annotator", "A. \"Quote\" \\ Back", "ClubId", "c\\1", "WhiteElo", "2100", "Site", "Here",
        "BlackTitle", "IM", "AClub", "Caf\xc3\xa9", NULL });
    pgn_game_t game = { .white = "W", .black = "B", .created_at_ms = 0, .tags = tags, .initial = &initial,
                        .result = "*", .time_control = "300+2", .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_STRING_EQUAL(text, "[Event \"?\"]\n"
                                 "[Site \"Here\"]\n"
                                 "[Date \"1970.01.01\"]\n"
                                 "[Round \"-\"]\n"
                                 "[White \"W\"]\n"
                                 "[Black \"B\"]\n"
                                 "[Result \"*\"]\n"
                                 "[BlackTitle \"IM\"]\n"
                                 "[WhiteElo \"2100\"]\n"
                                 "[Annotator \"A. \\\"Quote\\\" \\\\ Back\"]\n"
                                 "[SetUp \"1\"]\n"
                                 "[FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12\"]\n"
                                 "[Termination \"unterminated\"]\n"
                                 "[TimeControl \"300+2\"]\n"
                                 "[AClub \"Caf\xc3\xa9\"]\n"
                                 "[ClubId \"c\\\\1\"]\n"
                                 "[Zebra \"z\"]\n"
                                 "\n"
                                 "*\n");
    free(text);
    game_meta_free(tags);
}

static void test_the_standard_start_has_no_setup_fen_or_variant_tags(void)
{
    position_t start = parse(FEN_START, 0);
    pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NULL(strstr(text, "[SetUp "));
    CU_ASSERT_PTR_NULL(strstr(text, "[FEN "));
    CU_ASSERT_PTR_NULL(strstr(text, "[Variant "));
    free(text);
}

/* A review's evaluations share a move's comment with its clock, as Lichess
 * writes them; a black move after a comment takes its number again. */
static void test_a_reviews_evals_share_the_moves_comment_with_its_clock(void)
{
    position_t start = parse(FEN_START, 0);
    static const char moves[] = "e2e4:e4:299000 e7e5:e5:298000 g1f3:Nf3";
    const char *evals[] = { "0.35", NULL, "#-2" };
    pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = moves,
                        .moves_length = sizeof moves - 1, .evals = evals, .eval_count = 3 };
    char *text = write_pgn(&game);
    /* The line breaks at 80 characters, between tokens. */
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "1. e4 { [%eval 0.35] [%clk 0:04:59] } 1... e5 { [%clk 0:04:58] } 2. Nf3\n{ [%eval #-2] } *"));
    free(text);
}

/* An import's notes (pgn_tree_notes's JSON) as a stored game keeps them. */
static const char notes_json[] =
    "{\"line\":\"e2e4 e7e5 g1f3\",\"comments\":[\"Start\"],\"moves\":["
    "{\"ply\":1,\"nags\":[1],\"text\":\"Best\",\"shapes\":\"[%cal Ge2e4]\",\"eval\":\"[%eval 0.20,15]\","
    "\"variations\":[\"(\",\"1.\",\"d4\",\"{ also }\",\")\"]},"
    "{\"ply\":2,\"more\":[\"second\"],\"emt\":\"[%emt 0:00:03]\"}]}";

/* The notes go with their moves in python-chess's places: NAGs, the first
 * comment with its commands (a review's eval replacing the import's, the
 * clock last), more comments, variations; a black move after them takes
 * its number again. */
static void test_an_imports_notes_are_written_with_their_moves(void)
{
    position_t start = parse(FEN_START, 0);
    static const char moves[] = "e2e4:e4:299000 e7e5:e5 g1f3:Nf3";
    pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = moves,
                        .moves_length = sizeof moves - 1, .notes = notes_json, .notes_length = sizeof notes_json - 1 };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n\n{ Start } 1. e4 $1 { Best [%cal Ge2e4] [%eval 0.20,15] [%clk 0:04:59] } ( 1. d4\n"
                                        "{ also } ) 1... e5 { [%emt 0:00:03] } { second } 2. Nf3 *\n"));
    free(text);
    const char *evals[] = { "0.35", NULL, "#-2" };
    game.evals = evals;
    game.eval_count = 3;
    text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "1. e4 $1 { Best [%cal Ge2e4] [%eval 0.35] [%clk 0:04:59] }"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "2. Nf3 { [%eval #-2] } *"));
    free(text);
}

/* Notes are written only while the game's moves are the imported ones. */
static void test_notes_stop_where_the_moves_leave_the_imported_line(void)
{
    position_t start = parse(FEN_START, 0);
    static const char moves[] = "e2e4:e4 c7c5:c5 g1f3:Nf3";
    pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = moves,
                        .moves_length = sizeof moves - 1, .notes = notes_json, .notes_length = sizeof notes_json - 1 };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n\n{ Start } 1. e4 $1 { Best [%cal Ge2e4] [%eval 0.20,15] } ( 1. d4 { also } )\n"
                                        "1... c5 2. Nf3 *\n"));
    free(text);
}

/* Notes a hand-made record could hold that would end a comment or the
 * game early are left out whole; the moves are written as ever. */
static void test_notes_that_would_break_the_pgn_are_left_out(void)
{
    position_t start = parse(FEN_START, 0);
    static const char moves[] = "e2e4:e4";
    static const char *const bad[] = {
        "{\"line\":\"e2e4\",\"comments\":[\"a } 1-0\"],\"moves\":[]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"text\":\"}\"}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"variations\":[\"(\",\"1.\",\"d4\"]}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"variations\":[\"(\",\"d4 1-0\",\")\"]}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"variations\":[\")\",\"(\"]}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"variations\":[\"(\",\"{ a } b }\",\")\"]}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"eval\":\"[%eval 1] } 1-0 {\"}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"nags\":[256]}]}",
        "{\"line\":\"e2e4\",\"moves\":[{\"ply\":2},{\"ply\":1}]}",
        "{\"moves\":[]}",
        "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = moves,
                            .moves_length = sizeof moves - 1, .notes = bad[i], .notes_length = strlen(bad[i]) };
        char *text = write_pgn(&game);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n\n1. e4 *\n"));
        free(text);
    }
}

/* cJSON's allocations, made to fail after a budget. */
static long cjson_budget, cjson_failures;

static void *failing_malloc(size_t size)
{
    if (cjson_budget-- <= 0) {
        cjson_failures++;
        return NULL;
    }
    return malloc(size);
}

/* Out of memory while the notes are read (cJSON) or written (the buffers):
 * NULL, never a text without them. */
static void test_an_allocation_failure_with_notes_gives_null(void)
{
    position_t start = parse(FEN_START, 0);
    static const char moves[] = "e2e4:e4:299000 e7e5:e5 g1f3:Nf3";
    pgn_game_t game = { .white = "", .black = "", .initial = &start, .result = "*", .moves = moves,
                        .moves_length = sizeof moves - 1, .notes = notes_json, .notes_length = sizeof notes_json - 1 };
    char *whole = write_pgn(&game);
    long failures = 0;
    for (int kind = 0; kind < 2; kind++) {
        for (long k = 0; k < 2000; k++) {
            if (kind == 0) {
                tests_fail_allocations_after(k);
            } else {
                cjson_budget = k;
                cjson_failures = 0;
                cJSON_Hooks hooks = { failing_malloc, free };
                cJSON_InitHooks(&hooks);
            }
            size_t length = 0;
            char *text = pgn_write(&game, &length);
            bool failed = kind == 0 ? tests_allocation_calls() > k : cjson_failures > 0;
            tests_allocations_work();
            cJSON_InitHooks(NULL);
            if (failed) {
                failures++;
                CU_ASSERT_PTR_NULL(text);
            } else {
                CU_ASSERT_STRING_EQUAL(text, whole);
            }
            free(text);
            if (!failed)
                break;
        }
    }
    CU_ASSERT(failures >= 20); /* each of cJSON's nodes and each growth of a buffer among them */
    free(whole);
}

static void test_a_non_standard_start_has_setup_and_fen_after_the_roster(void)
{
    const char *fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12";
    position_t initial = parse(fen, 0);
    pgn_game_t game = { .white = "W", .black = "B", .created_at_ms = 0, .initial = &initial, .result = "*",
                        .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[Result \"*\"]\n"
                                        "[SetUp \"1\"]\n"
                                        "[FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12\"]\n"
                                        "[Termination \"unterminated\"]\n\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "[Variant "));
    free(text);

    /* The standard array with other move counters is not the standard start. */
    position_t later = parse("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 5", 0);
    game.initial = &later;
    text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 5\"]\n"));
    free(text);
}

static void test_a_chess960_start_has_variant_setup_and_fen(void)
{
    position_t initial = parse("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1", FEN_CHESS960);
    CU_ASSERT_TRUE_FATAL(initial.chess960);
    char fen[FEN_BUFFER_SIZE], expected[FEN_BUFFER_SIZE + 128];
    fen_format(&initial, fen, sizeof fen);
    snprintf(expected, sizeof expected, "[Result \"*\"]\n[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"%s\"]\n"
             "[Termination \"unterminated\"]\n\n", fen);
    pgn_game_t game = { .white = "", .black = "", .initial = &initial, .result = "*", .moves = "" };
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, expected));
    free(text);
}

static void test_a_finished_game_has_termination_normal_and_its_result(void)
{
    line_t line;
    position_t start = parse(FEN_START, 0);
    line_start(&line, &start);
    line_play(&line, "f3 e5 g4 Qh4#");
    pgn_game_t game = game_of(&line, "", "", "0-1", true);
    char *text = write_pgn(&game);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n[Result \"0-1\"]\n[Termination \"normal\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "unterminated"));
    free(text);
}

/* --- the movetext --- */

static void test_move_numbers_count_from_the_initial_positions_counters(void)
{
    static const struct {
        const char *fen, *moves, *movetext;
    } cases[] = {
        { FEN_START, "e4 e5 Nf3", "1. e4 e5 2. Nf3 *\n" },
        { FEN_START, "e4", "1. e4 *\n" },
        { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", "e5 Nf3", "12... e5 13. Nf3 *\n" },
        { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", "e5 Nf3 Nc6",
          "12... e5 13. Nf3 Nc6 *\n" },
        { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", "e5", "12... e5 *\n" },
        { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 99", "d4 d5 c4", "99. d4 d5 100. c4 *\n" },
        { "4k3/8/8/8/8/8/4P3/4K3 w - - 40 9999", "e4 Kd7 e5", "9999. e4 Kd7 10000. e5 *\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        line_t line;
        position_t initial = parse(cases[i].fen, 0);
        line_start(&line, &initial);
        line_play(&line, cases[i].moves);
        pgn_game_t game = game_of(&line, "", "", "*", false);
        char *text = write_pgn(&game);
        if (strcmp(movetext_of(text), cases[i].movetext))
            fprintf(stderr, "\nexpected movetext %s got %s\n", cases[i].movetext, movetext_of(text));
        CU_ASSERT_STRING_EQUAL(movetext_of(text), cases[i].movetext);
        free(text);
    }
}

static void test_an_empty_game_is_the_tags_a_blank_line_and_the_result(void)
{
    static const char *const fens[] = { FEN_START, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12" };
    static const char *const results[] = { "*", "1-0", "0-1", "1/2-1/2" };
    for (size_t f = 0; f < 2; f++)
        for (size_t r = 0; r < 4; r++) {
            position_t initial = parse(fens[f], 0);
            pgn_game_t game = { .white = "", .black = "", .initial = &initial, .result = results[r],
                                .over = r > 0, .moves = "", .moves_length = 0 };
            char *text = write_pgn(&game);
            char expected[16];
            snprintf(expected, sizeof expected, "%s\n", results[r]);
            CU_ASSERT_STRING_EQUAL(movetext_of(text), expected);
            /* everything before the blank line is tag pairs, one a line */
            for (const char *p = text; p < movetext_of(text) - 1;) {
                const char *eol = strchr(p, '\n');
                CU_ASSERT_FATAL(eol && p[0] == '[' && eol[-1] == ']');
                p = eol + 1;
            }
            free(text);
        }
}

/* Splits the movetext (after the blank line) into whitespace-separated
 * tokens, checking the line layout: no line longer than 80 characters, none
 * empty, none starting or ending with a space, single spaces within a line,
 * and a final newline. Returns the token count (at most max). */
static size_t movetext_tokens(const char *movetext, char tokens[][SAN_BUFFER_SIZE + 8], size_t max)
{
    size_t count = 0, length = strlen(movetext);
    CU_ASSERT_FATAL(length > 0 && movetext[length - 1] == '\n');
    for (const char *p = movetext; *p;) {
        const char *eol = strchr(p, '\n');
        size_t line_length = (size_t)(eol - p);
        if (line_length > 80)
            fprintf(stderr, "\nmovetext line of %zu characters: %.*s\n", line_length, (int)line_length, p);
        CU_ASSERT_FATAL(line_length > 0 && line_length <= 80);
        CU_ASSERT_FATAL(p[0] != ' ' && eol[-1] != ' ');
        for (const char *q = p; q < eol;) {
            size_t token = strcspn(q, " \n");
            CU_ASSERT_FATAL(token > 0 && token < SAN_BUFFER_SIZE + 8 && count < max);
            memcpy(tokens[count], q, token);
            tokens[count][token] = '\0';
            count++;
            q += token;
            if (q < eol)
                q++; /* the one space between two tokens */
        }
        p = eol + 1;
    }
    return count;
}

/* Whether token is a move number indication ("12." or "12..."). */
static bool is_move_number(const char *token)
{
    size_t digits = strspn(token, "0123456789");
    return digits > 0 && (!strcmp(token + digits, ".") || !strcmp(token + digits, "..."));
}

/* Writes the line's PGN and checks the movetext token by token against the
 * line: numbers where they belong, every SAN in order, the result last, in
 * lines of at most 80 characters. Then replays the SANs read back from the
 * text on the initial position: each must be legal and name the move of the
 * line, and the replay must end on the line's final position. */
static void check_movetext(const line_t *line, const char *result)
{
    pgn_game_t game = game_of(line, "", "", result, strcmp(result, "*") != 0);
    char *text = write_pgn(&game);
    static char tokens[2 * LINE_PLIES + 2][SAN_BUFFER_SIZE + 8];
    size_t count = movetext_tokens(movetext_of(text), tokens, sizeof tokens / sizeof tokens[0]);
    CU_ASSERT_FATAL(count >= 1);
    CU_ASSERT_STRING_EQUAL(tokens[count - 1], result);

    /* the expected tokens, one by one */
    size_t t = 0;
    unsigned number = line->initial.fullmove_number;
    bool white = line->initial.side_to_move == WHITE;
    for (int i = 0; i < line->plies; i++) {
        char expected[32];
        if (white || i == 0) {
            snprintf(expected, sizeof expected, white ? "%u." : "%u...", number);
            CU_ASSERT_FATAL(t < count);
            CU_ASSERT_STRING_EQUAL_FATAL(tokens[t], expected);
            t++;
        }
        CU_ASSERT_FATAL(t < count);
        CU_ASSERT_STRING_EQUAL_FATAL(tokens[t], line->sans[i]);
        t++;
        if (!white)
            number++;
        white = !white;
    }
    CU_ASSERT_EQUAL(t + 1, count);

    /* the differential replay, from the text alone */
    position_t pos = line->initial;
    int replayed = 0;
    for (size_t i = 0; i + 1 < count; i++) {
        if (is_move_number(tokens[i]))
            continue;
        move_t move;
        char message[200];
        legality_reason_t reason = notation_parse_move(&pos, tokens[i], strlen(tokens[i]), &move, message,
                                                       sizeof message);
        if (reason != LEGALITY_OK)
            fprintf(stderr, "\nSAN '%s' from the PGN refused: %s\n", tokens[i], message);
        CU_ASSERT_EQUAL_FATAL(reason, LEGALITY_OK);
        char san[SAN_BUFFER_SIZE];
        CU_ASSERT_STRING_EQUAL(san_format(&pos, move, san), tokens[i]); /* SAN, not UCI */
        position_undo_t undo;
        position_make(&pos, move, &undo);
        replayed++;
    }
    CU_ASSERT_EQUAL(replayed, line->plies);
    char got[FEN_BUFFER_SIZE], want[FEN_BUFFER_SIZE];
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, got, sizeof got), fen_format(&line->final, want, sizeof want));
    CU_ASSERT_EQUAL(pos.key, line->final.key);
    free(text);
}

static void test_a_long_game_keeps_lines_within_80_characters_and_replays_to_its_position(void)
{
    static const struct {
        const char *fen;
        unsigned flags;
    } starts[] = {
        { FEN_START, 0 },
        { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", 0 },
        { "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 0 },
        { "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1", FEN_CHESS960 },
        { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 9990", 0 },
    };
    static line_t line;
    int long_lines = 0;
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            position_t initial = parse(starts[s].fen, starts[s].flags);
            line_start(&line, &initial);
            line_random(&line, LINE_PLIES, seed * 0x9E3779B97F4A7C15ull);
            if (line.plies == LINE_PLIES)
                long_lines++;
            check_movetext(&line, line.plies == LINE_PLIES ? "*" : "1/2-1/2");
        }
    CU_ASSERT(long_lines >= 10); /* most lines really are 300 plies long */
}

/* --- allocation failure --- */

static void test_an_allocation_failure_anywhere_gives_null_never_a_cut_text(void)
{
    static line_t line;
    position_t initial = parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12", 0);
    line_start(&line, &initial);
    line_random(&line, LINE_PLIES, 7);
    pgn_game_t game = game_of(&line, "A \"quoted\" white player", "B", "*", false);
    char *whole = write_pgn(&game);
    size_t whole_length = strlen(whole);
    long failures = 0;
    for (long k = 0;; k++) {
        tests_fail_allocations_after(k);
        size_t length = 12345;
        char *text = pgn_write(&game, &length);
        bool failed = tests_allocation_calls() > k;
        tests_allocations_work();
        if (failed) {
            failures++;
            CU_ASSERT_PTR_NULL(text);
        } else {
            CU_ASSERT_PTR_NOT_NULL_FATAL(text);
            CU_ASSERT_EQUAL(length, whole_length);
            CU_ASSERT_STRING_EQUAL(text, whole);
        }
        free(text);
        if (!failed || k > 1000)
            break;
    }
    CU_ASSERT(failures >= 3); /* the text grew several times, and each growth was made to fail */
    free(whole);
}

int test_pgn_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("pgn", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return CU_get_error();
    if (!CU_add_test(suite, "the seven tag roster comes first, in order, with the game's values",
                     test_the_seven_tag_roster_comes_first_in_order_with_the_games_values)
        || !CU_add_test(suite, "the date is the UTC day of created_at", test_the_date_is_the_utc_day_of_created_at)
        || !CU_add_test(suite, "unnamed players are question marks", test_unnamed_players_are_question_marks)
        || !CU_add_test(suite, "quotes and backslashes in tag values are escaped",
                        test_quotes_and_backslashes_in_tag_values_are_escaped)
        || !CU_add_test(suite, "the server's Event and Site fill in for a game without its own",
                        test_the_servers_event_and_site_fill_in_for_a_game_without_its_own)
        || !CU_add_test(suite, "a game's tags follow the roster, known ones first, its own last by name, escaped",
                        test_a_games_tags_follow_the_roster_known_ones_first_its_own_last_by_name_escaped)
        || !CU_add_test(suite, "an import's notes are written with their moves",
                        test_an_imports_notes_are_written_with_their_moves)
        || !CU_add_test(suite, "notes stop where the moves leave the imported line",
                        test_notes_stop_where_the_moves_leave_the_imported_line)
        || !CU_add_test(suite, "notes that would break the PGN are left out",
                        test_notes_that_would_break_the_pgn_are_left_out)
        || !CU_add_test(suite, "an allocation failure with notes gives NULL",
                        test_an_allocation_failure_with_notes_gives_null)
        || !CU_add_test(suite, "the standard start has no SetUp, FEN or Variant tags",
                        test_the_standard_start_has_no_setup_fen_or_variant_tags)
        || !CU_add_test(suite, "a review's evals share the move's comment with its clock",
                        test_a_reviews_evals_share_the_moves_comment_with_its_clock)
        || !CU_add_test(suite, "a non-standard start has SetUp and FEN after the roster",
                        test_a_non_standard_start_has_setup_and_fen_after_the_roster)
        || !CU_add_test(suite, "a Chess960 start has Variant, SetUp and FEN",
                        test_a_chess960_start_has_variant_setup_and_fen)
        || !CU_add_test(suite, "a finished game has Termination normal and its result",
                        test_a_finished_game_has_termination_normal_and_its_result)
        || !CU_add_test(suite, "move numbers count from the initial position's counters",
                        test_move_numbers_count_from_the_initial_positions_counters)
        || !CU_add_test(suite, "an empty game is the tags, a blank line and the result",
                        test_an_empty_game_is_the_tags_a_blank_line_and_the_result)
        || !CU_add_test(suite, "a long game keeps lines within 80 characters and replays to its position",
                        test_a_long_game_keeps_lines_within_80_characters_and_replays_to_its_position)
        || !CU_add_test(suite, "an allocation failure anywhere gives NULL, never a cut text",
                        test_an_allocation_failure_anywhere_gives_null_never_a_cut_text))
        return CU_get_error();
    return CUE_SUCCESS;
}
