/* Tests for rules/pgn_read.c: every construct of the import format (tags
 * and their escapes, move numbers, SAN suffixes, castling with O and 0,
 * comments, escape lines, NAGs, nested variations, results, odd whitespace,
 * set-up tags, several games). Every error is checked with the game, line
 * and column it names. */
#include <stdio.h>
#include <string.h>

#include "../../rules/pgn_read.h"
#include "../support/tests.h"

/* What the callbacks saw, flattened to text. */
typedef struct {
    char tags[1024];
    char moves[4096]; /* "uci:san" a move, games separated by " | " */
    char results[128];
    char fens[1024];  /* final FENs, separated by " | " */
    int games;
    int stop_after_tags; /* 0: never */
    int tag_count;
} seen_t;

static void append(char *out, size_t size, const char *text)
{
    size_t n = strlen(out);
    snprintf(out + n, size - n, "%s", text);
}

static bool on_tag(void *ctx, int game, const char *name, const char *value, size_t length)
{
    seen_t *s = ctx;
    char line[PGN_READ_TAG_VALUE_MAX + 100];
    snprintf(line, sizeof line, "%d:%s=%.*s;", game, name, (int)length, value);
    append(s->tags, sizeof s->tags, line);
    return !s->stop_after_tags || ++s->tag_count < s->stop_after_tags;
}

static bool on_move(void *ctx, int game, const position_t *before, const game_played_t *played)
{
    seen_t *s = ctx;
    char entry[40];
    (void)game;
    CU_ASSERT_TRUE(movegen_is_legal(before, played->move));
    snprintf(entry, sizeof entry, "%s%s:%s", s->moves[0] && s->moves[strlen(s->moves) - 1] != ' ' ? " " : "",
             played->uci, played->san);
    append(s->moves, sizeof s->moves, entry);
    return true;
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    seen_t *s = ctx;
    char fen[FEN_BUFFER_SIZE];
    CU_ASSERT_EQUAL(done->index, s->games);
    s->games++;
    append(s->results, sizeof s->results, s->results[0] ? " " : "");
    append(s->results, sizeof s->results, done->result);
    append(s->fens, sizeof s->fens, s->fens[0] ? " | " : "");
    append(s->fens, sizeof s->fens, fen_format(&done->game->pos, fen, sizeof fen));
    append(s->moves, sizeof s->moves, " | ");
    return true;
}

static const pgn_read_callbacks_t callbacks = { .tag = on_tag, .move = on_move, .game = on_game };

static int read_with(const char *text, const pgn_read_limits_t *limits, seen_t *seen, pgn_read_error_t *error)
{
    memset(seen, 0, sizeof *seen);
    return pgn_read(text, strlen(text), limits, &callbacks, seen, error);
}

static int read_text(const char *text, seen_t *seen, pgn_read_error_t *error)
{
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    return read_with(text, &limits, seen, error);
}

static void test_tags_are_unescaped_and_in_order(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("[Event \"a \\\"b\\\" \\\\ c\"]\n[ Site  \"x\" ]\n[White \"\"]\n\n1. e4 *\n", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.tags, "0:Event=a \"b\" \\ c;0:Site=x;0:White=;");
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 | ");
    CU_ASSERT_EQUAL(e.status, PGN_READ_OK);
}

static void test_move_numbers_suffixes_and_castling(void)
{
    seen_t s;
    pgn_read_error_t e;
    const char *pgn = "1.e4 e5 2. Nf3! Nc6? 3 Bc4!! Bc5?? 4. 0-0!? Nf6?! 5. d3 d6 6. Bg5 Bg4 7. Nc3 Qd7 8. Qd2 "
                      "O-O-O+ 9. a3 0-0-0 *";
    int games = read_text(pgn, &s, &e);
    CU_ASSERT_EQUAL(games, -1); /* 8...O-O-O is no check: fine; but black castled twice */
    CU_ASSERT_EQUAL(e.status, PGN_READ_EILLEGAL_MOVE);
    CU_ASSERT_EQUAL(e.reason, LEGALITY_CASTLING_NO_RIGHT);
    CU_ASSERT_EQUAL(e.ply, 17);
    CU_ASSERT_EQUAL(e.line, 1);
    CU_ASSERT_EQUAL(e.column, (int)(strstr(pgn, "0-0-0") - pgn) + 1);
    CU_ASSERT_STRING_EQUAL(e.move, "0-0-0");

    CU_ASSERT_EQUAL(read_text("1.e4 e5 2. Nf3! Nc6? 3 Bc4!! Bc5?? 4. 0-0!? Nf6?! 5. d3 O-O 1/2-1/2", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6 f1c4:Bc4 f8c5:Bc5 e1g1:O-O g8f6:Nf6 d2d3:d3 "
                                    "e8g8:O-O | ");
    CU_ASSERT_STRING_EQUAL(s.results, "1/2-1/2");
    /* "1..." before a black move, from a FEN with black to move */
    CU_ASSERT_EQUAL(read_text("[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 12\"]\n12... Kd7 13.e4 Ke6 *", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e8d7:Kd7 e2e4:e4 d7e6:Ke6 | ");
}

static void test_comments_escapes_nags_and_variations_are_read_past(void)
{
    seen_t s;
    pgn_read_error_t e;
    const char *pgn = "% an escape line\n"
                      "[Event \"x\"]\n"
                      "%another\n"
                      "\n"
                      "{before} 1. e4 {a comment\nover lines ( ) [ ;} e5 $1 $22 ; a rest-of-line comment {\n"
                      "2. Nf3 (2. Qh5 {oops)} Nc6 (2... g6 ?" "?) 3. Qxf7#) (2. f4) 2... Nc6 $146\n"
                      "%escape in movetext\n"
                      "3. Bb5 a6 (3... Nf6 4. O-O (4. d3) 4... Nxe4) 4. Ba4 1-0";
    CU_ASSERT_EQUAL(read_text(pgn, &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6 f1b5:Bb5 a7a6:a6 b5a4:Ba4 | ");
    CU_ASSERT_STRING_EQUAL(s.results, "1-0");
    CU_ASSERT_STRING_EQUAL(s.tags, "0:Event=x;");
}

static void test_results_and_several_games(void)
{
    seen_t s;
    pgn_read_error_t e;
    /* ended by a result token, by the next game's tags, and by the end of the text */
    const char *pgn = "[Result \"0-1\"]\n1. f3 e5 2. g4 Qh4# 0-1\n\n"
                      "[Result \"1/2-1/2\"]\n1. d4 d5\n"
                      "[White \"w\"]\n1. c4 *\n"
                      "1. e4\t1-0\n"
                      "[Result \"0-1\"]\n1. e4";
    CU_ASSERT_EQUAL(read_text(pgn, &s, &e), 5);
    CU_ASSERT_STRING_EQUAL(s.results, "0-1 1/2-1/2 * 1-0 0-1");
    CU_ASSERT_STRING_EQUAL(s.tags, "0:Result=0-1;1:Result=1/2-1/2;2:White=w;4:Result=0-1;");
    CU_ASSERT_EQUAL(e.game, 4);
    /* a game of a result alone, and one of tags alone */
    CU_ASSERT_EQUAL(read_text("*\n\n[Event \"e\"]\n", &s, &e), 2);
    CU_ASSERT_STRING_EQUAL(s.moves, " |  | ");
}

static void test_odd_whitespace(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("\xef\xbb\xbf[Event \"x\"]\r\n\r\n1.\te4\r\n\te5  \t2.Nf3\r\n*", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 e7e5:e5 g1f3:Nf3 | ");
    CU_ASSERT_EQUAL(read_text("   \n\n1.e4 e5", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.results, "*");
}

/* Old Mac files end lines with a lone CR: a ';' comment or '%' escape line
 * must stop there, not swallow the rest of the text (silently dropping
 * moves and the result), and errors count those lines. */
static void test_a_lone_cr_ends_a_line(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("[Event \"x\"]\r%escape\r\r1. e4 ; good\r1... e5 2. Nf3 Nc6 1-0\r", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6 | ");
    CU_ASSERT_STRING_EQUAL(s.results, "1-0");
    CU_ASSERT_EQUAL(read_text("1. e4 ; c\r1... e5\r2. Ke3 *", &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_EILLEGAL_MOVE);
    CU_ASSERT_EQUAL(e.line, 3);
    CU_ASSERT_EQUAL(e.column, 4);
    /* CRLF is still one line end */
    CU_ASSERT_EQUAL(read_text("1. e4 ; c\r\n1... e5\r\n2. Ke3 *", &s, &e), -1);
    CU_ASSERT_EQUAL(e.line, 3);
    CU_ASSERT_EQUAL(e.column, 4);
}

/* Whether the n bytes at s are UTF-8 with no sequence cut short. */
static bool whole_utf8(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t length = u[i] < 0x80 ? 1 : u[i] >= 0xf0 ? 4 : u[i] >= 0xe0 ? 3 : u[i] >= 0xc0 ? 2 : 0;
        if (length == 0 || i + length > n)
            return false;
        for (size_t k = 1; k < length; k++)
            if ((u[i + k] & 0xc0) != 0x80)
                return false;
        i += length;
    }
    return true;
}

/* A message quotes a shortened tag value without cutting a character in two
 * (the API would show the half as U+FFFD). */
static void test_a_quoted_tag_value_is_cut_between_characters(void)
{
    seen_t s;
    pgn_read_error_t e;
    char pgn[256];
    const char *const tags[] = { "Variant", "Result" };
    for (int t = 0; t < 2; t++) {
        for (int odd = 0; odd < 4; odd++) { /* the cut at every byte of a 2-, 3- and 4-byte character */
            int n = snprintf(pgn, sizeof pgn, "[%s \"%.*s", tags[t], odd, "xyz");
            static const char *const characters[] = { "\xc3\xa9", "\xe2\x99\x98", "\xf0\x9f\x98\x80" };
            for (int i = 0; i < 20; i++)
                n += snprintf(pgn + n, sizeof pgn - (size_t)n, "%s", characters[i % 3]);
            snprintf(pgn + n, sizeof pgn - (size_t)n, "\"]\n1. e4 *");
            CU_ASSERT_EQUAL(read_text(pgn, &s, &e), -1);
            CU_ASSERT_TRUE(e.status == PGN_READ_EUNSUPPORTED_VARIANT || e.status == PGN_READ_EBAD_RESULT_TAG);
            CU_ASSERT_TRUE(whole_utf8(e.message, strlen(e.message)));
        }
    }
}

static void test_fen_setup_and_chess960(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("[SetUp \"1\"]\n[FEN \"8/8/8/8/8/5k2/8/4K2R w K - 0 1\"]\n1. O-O+ *", &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e1g1:O-O+ | ");
    /* Chess960 by any of its names: castling is king-takes-rook in UCI */
    const char *names[] = { "Chess960", "chess 960", "FischeRandom", "fischerandom" };
    for (int i = 0; i < 4; i++) {
        char pgn[256];
        snprintf(pgn, sizeof pgn,
                 "[Variant \"%s\"]\n[FEN \"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1\"]\n"
                 "1. Ng3 Ng6 2. O-O O-O *", names[i]);
        CU_ASSERT_EQUAL(read_text(pgn, &s, &e), 1);
        CU_ASSERT_STRING_EQUAL(s.moves, "h1g3:Ng3 h8g6:Ng6 f1g1:O-O f8g8:O-O | ");
    }
    /* the standard start read as Chess960 */
    CU_ASSERT_EQUAL(read_text("[Variant \"chess960\"]\n1. e4 *", &s, &e), 1);
    /* a FEN needing Chess960 without a Variant tag */
    CU_ASSERT_EQUAL(read_text("[FEN \"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1\"]\n1. Ng3 *", &s, &e),
                    1);
}

/* An error case: the text, then what the error must say. */
typedef struct {
    const char *text;
    pgn_read_status_t status;
    int game, line, column;
} error_case_t;

static void test_errors_name_game_line_and_column(void)
{
    static const error_case_t cases[] = {
        { "1. e4 {never closed\n2. d4", PGN_READ_EUNTERMINATED_COMMENT, 0, 1, 7 },
        { "1. e4 e5\n*\n1. d4 (1. c4 (1. e4) d5", PGN_READ_EUNTERMINATED_VARIATION, 1, 3, 7 },
        { "1. e4 (1. d4 e5\n[Event \"x\"]\n1. e4 *", PGN_READ_EUNTERMINATED_VARIATION, 0, 1, 7 },
        { "1. e4 ) e5 *", PGN_READ_EUNMATCHED_PARENTHESIS, 0, 1, 7 },
        { "[Event \"x\"\n1. e4 *", PGN_READ_EUNTERMINATED_TAG, 0, 1, 1 },
        { "[Event \"x\"]\n[Site \"y\n1. e4 *", PGN_READ_EUNTERMINATED_STRING, 0, 2, 7 },
        { "[Event \"a\\nb\"]\n1. e4 *", PGN_READ_EBAD_ESCAPE, 0, 1, 10 },
        { "[Event x]\n*", PGN_READ_EBAD_TAG, 0, 1, 1 },
        { "[Event \"x\" y]\n*", PGN_READ_EBAD_TAG, 0, 1, 1 },
        { "*\n[Event \"x\"]\n[Site \"y\"]\n[Event \"z\"]\n*", PGN_READ_EDUPLICATE_TAG, 1, 4, 1 },
        { "[Result \"white wins\"]\n*", PGN_READ_EBAD_RESULT_TAG, 0, 1, 1 },
        { "[Event \"x\"]\n[FEN \"8/8/8 w - - 0 1\"]\n1. e4 *", PGN_READ_EBAD_FEN, 0, 2, 1 },
        { "[SetUp \"1\"]\n1. e4 *", PGN_READ_ESETUP_WITHOUT_FEN, 0, 1, 1 },
        { "[Variant \"Bughouse\"]\n1. e4 *", PGN_READ_EUNSUPPORTED_VARIANT, 0, 1, 1 },
        { "1. e4 -- 2. d4 *", PGN_READ_ENULL_MOVE, 0, 1, 7 },
        { "1. e4 e5\n2. Ke3 *", PGN_READ_EILLEGAL_MOVE, 0, 2, 4 },
        { "1-0\n\n1. e4 e5\n2. Nf3 Ke6 *", PGN_READ_EILLEGAL_MOVE, 1, 4, 8 },
        { "1. f3 e5 2. g4 Qh4# 3. a3 *", PGN_READ_EILLEGAL_MOVE, 0, 1, 24 },
        { "1. e4 xyz *", PGN_READ_EILLEGAL_MOVE, 0, 1, 7 },
        { "[Result \"1-0\"]\n1. e4 e5 0-1", PGN_READ_ERESULT_MISMATCH, 0, 2, 10 },
        { "[Result \"1-0\"]\n1. e4 e5 *", PGN_READ_ERESULT_MISMATCH, 0, 2, 10 },
        { "1. f3 e5 2. g4 Qh4# 1-0", PGN_READ_ERESULT_CONTRADICTS, 0, 1, 21 },
        { "[Result \"1-0\"]\n1. f3 e5 2. g4 Qh4#", PGN_READ_ERESULT_CONTRADICTS, 0, 1, 1 },
        { "[FEN \"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\"]\n1-0", PGN_READ_ERESULT_CONTRADICTS, 0, 2, 1 },
        { "[FEN \"k7/8/1Q6/8/8/8/8/K7 w - - 0 1\"]\n1. Qb7+ Kxb7 1-0", PGN_READ_ERESULT_CONTRADICTS, 0, 2, 14 },
        { "", PGN_READ_ENO_GAME, 0, 1, 1 },
        { "{only a comment}\n; and this\n", PGN_READ_ENO_GAME, 0, 3, 1 },
        { "1. e4 <e5> *", PGN_READ_EUNEXPECTED, 0, 1, 7 },
        { "1. e4 $ e5 *", PGN_READ_EUNEXPECTED, 0, 1, 7 },
        { "1. e4 !!! *", PGN_READ_EUNEXPECTED, 0, 1, 7 },
        { "{\xc3\xa9t\xc3\xa9} \xe2\x99\x98" "f3 *", PGN_READ_EUNEXPECTED, 0, 1, 7 },
        { "1. e4 \t\x01 *", PGN_READ_EUNEXPECTED, 0, 1, 8 },
        { "1. e4 {ok \xc3\xa9 \xe2\x99\x98 not \xc3(} *", PGN_READ_EBAD_UTF8, 0, 1, 19 },
        { "*\n[Event \"\xc0\xaf\"]", PGN_READ_EBAD_UTF8, 1, 2, 9 },
        { "; \xed\xa0\x80 a surrogate\n*", PGN_READ_EBAD_UTF8, 0, 1, 3 },
        { "{\x80} *", PGN_READ_EBAD_UTF8, 0, 1, 2 },
        { "{\xf0\x9f\x98}", PGN_READ_EBAD_UTF8, 0, 1, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        seen_t s;
        pgn_read_error_t e;
        int games = read_text(cases[i].text, &s, &e);
        CU_ASSERT_EQUAL(games, -1);
        if (e.status != cases[i].status || e.game != cases[i].game || e.line != cases[i].line
            || e.column != cases[i].column)
            fprintf(stderr, "\ncase %zu: got %s game %d line %d column %d (%s)\n", i, pgn_read_status_code(e.status),
                    e.game, e.line, e.column, e.message);
        CU_ASSERT_EQUAL(e.status, cases[i].status);
        CU_ASSERT_EQUAL(e.game, cases[i].game);
        CU_ASSERT_EQUAL(e.line, cases[i].line);
        CU_ASSERT_EQUAL(e.column, cases[i].column);
        CU_ASSERT(e.message[0] != '\0');
    }
}

static void test_illegal_move_carries_the_move_api_reason(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("1. e4 e5\n2. Ke3 *", &s, &e), -1);
    CU_ASSERT_EQUAL(e.reason, LEGALITY_CANNOT_MOVE_SO);
    CU_ASSERT_EQUAL(e.ply, 2);
    CU_ASSERT_STRING_EQUAL(e.move, "Ke3");
    char fen[FEN_BUFFER_SIZE], message[200];
    CU_ASSERT_STRING_EQUAL(fen_format(&e.position, fen, sizeof fen),
                           "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
    move_t move;
    notation_parse_move(&e.position, "Ke3", 3, &move, message, sizeof message);
    CU_ASSERT_STRING_EQUAL(e.message, message);
    /* ambiguity names the candidates */
    CU_ASSERT_EQUAL(read_text("1. Nf3 d5 2. Na3 d4 3. Nc4 c5 4. Ne5 *\n", &s, &e), -1);
    CU_ASSERT_EQUAL(e.reason, LEGALITY_AMBIGUOUS);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.message, "Nfe5"));
    /* a move after mate */
    CU_ASSERT_EQUAL(read_text("1. f3 e5 2. g4 Qh4# 3. a3 *", &s, &e), -1);
    CU_ASSERT_EQUAL(e.reason, LEGALITY_GAME_OVER);
}

static void test_limits(void)
{
    pgn_read_limits_t limits;
    seen_t s;
    pgn_read_error_t e;
    pgn_read_default_limits(&limits);
    limits.max_games = 2;
    CU_ASSERT_EQUAL(read_with("*\n*\n  *", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETOO_MANY_GAMES);
    CU_ASSERT_EQUAL(e.game, 2);
    CU_ASSERT_EQUAL(e.column, 3);
    pgn_read_default_limits(&limits);
    limits.max_plies = 3;
    CU_ASSERT_EQUAL(read_with("1. e4 e5 2. d4 d5 *", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETOO_MANY_PLIES);
    CU_ASSERT_EQUAL(e.column, 16);
    pgn_read_default_limits(&limits);
    limits.max_tags = 1;
    CU_ASSERT_EQUAL(read_with("[A \"1\"]\n[B \"2\"]\n*", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETOO_MANY_TAGS);
    CU_ASSERT_EQUAL(e.line, 2);
    pgn_read_default_limits(&limits);
    limits.max_tag_value = 3;
    CU_ASSERT_EQUAL(read_with("[A \"123\"]\n[B \"1234\"]\n*", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETAG_TOO_LONG);
    CU_ASSERT_EQUAL(e.line, 2);
    CU_ASSERT_EQUAL(e.column, 4);
    pgn_read_default_limits(&limits);
    limits.max_comment = 4;
    CU_ASSERT_EQUAL(read_with("{1234} 1. e4 {12345} *", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ECOMMENT_TOO_LONG);
    CU_ASSERT_EQUAL(e.column, 14);
    pgn_read_default_limits(&limits);
    limits.max_depth = 2;
    CU_ASSERT_EQUAL(read_with("1. e4 (1. d4 (1. c4)) (1. d4 (1. c4 (1. b3))) *", &limits, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETOO_DEEP);
    CU_ASSERT_EQUAL(e.column, 37);
    /* a tag name over its bound */
    char name[PGN_READ_TAG_NAME_MAX + 20];
    memset(name, 'A', sizeof name);
    memcpy(name, "[", 1);
    memcpy(name + sizeof name - 8, " \"x\"]*", 7);
    CU_ASSERT_EQUAL(read_text(name, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ETAG_TOO_LONG);
}

static void test_a_callback_can_stop_reading(void)
{
    seen_t s;
    pgn_read_error_t e;
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    memset(&s, 0, sizeof s);
    s.stop_after_tags = 2;
    const char *pgn = "[A \"1\"]\n[B \"2\"]\n[C \"3\"]\n*";
    CU_ASSERT_EQUAL(pgn_read(pgn, strlen(pgn), &limits, &callbacks, &s, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ESTOPPED);
    CU_ASSERT_EQUAL(e.line, 2);
    /* no callbacks at all */
    pgn_read_callbacks_t none = { 0 };
    CU_ASSERT_EQUAL(pgn_read(pgn, strlen(pgn), &limits, &none, NULL, &e), 1);
}

static void test_reads_no_byte_past_length(void)
{
    seen_t s;
    pgn_read_error_t e;
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    const char *pgn = "1. e4 e5 *garbage";
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(pgn_read(pgn, 10, &limits, &callbacks, &s, &e), 1);
    CU_ASSERT_STRING_EQUAL(s.moves, "e2e4:e4 e7e5:e5 | ");
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(pgn_read(pgn, 8, &limits, &callbacks, &s, &e), 1); /* "1. e4 e5", no result */
    CU_ASSERT_STRING_EQUAL(s.results, "*");
    /* a glyph at the very end, with no terminator after it (found by fuzz_pgn) */
    const char glyph[2] = { '!', '?' };
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(pgn_read(glyph, sizeof glyph, &limits, &callbacks, &s, &e), 1);
}

static void test_an_error_between_games_names_the_next_game(void)
{
    seen_t s;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(read_text("1/2-1/2\"--\"", &s, &e), -1); /* found by fuzz_pgn */
    CU_ASSERT_EQUAL(e.status, PGN_READ_EUNEXPECTED);
    CU_ASSERT_EQUAL(e.game, 1);
    CU_ASSERT_EQUAL(e.column, 8);
}

int test_pgn_read_register(void)
{
    CU_pSuite suite = CU_add_suite("pgn_read", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "tags are unescaped and in order", test_tags_are_unescaped_and_in_order);
    CU_add_test(suite, "move numbers, suffixes and castling", test_move_numbers_suffixes_and_castling);
    CU_add_test(suite, "comments, escapes, NAGs and variations are read past",
                test_comments_escapes_nags_and_variations_are_read_past);
    CU_add_test(suite, "results and several games", test_results_and_several_games);
    CU_add_test(suite, "odd whitespace", test_odd_whitespace);
    CU_add_test(suite, "a lone CR ends a line", test_a_lone_cr_ends_a_line);
    CU_add_test(suite, "a quoted tag value is cut between characters",
                test_a_quoted_tag_value_is_cut_between_characters);
    CU_add_test(suite, "FEN, SetUp and Chess960", test_fen_setup_and_chess960);
    CU_add_test(suite, "errors name game, line and column", test_errors_name_game_line_and_column);
    CU_add_test(suite, "an illegal move carries the move API's reason", test_illegal_move_carries_the_move_api_reason);
    CU_add_test(suite, "limits", test_limits);
    CU_add_test(suite, "a callback can stop reading", test_a_callback_can_stop_reading);
    CU_add_test(suite, "reads no byte past length", test_reads_no_byte_past_length);
    CU_add_test(suite, "an error between games names the next game", test_an_error_between_games_names_the_next_game);
    return CUE_SUCCESS;
}
