/* The PGN reader's tree events (variations played in their own positions,
 * comments, NAGs, the path of a bad variation move), reading on after a
 * game's error, and the comment commands of rules/pgn_comment.h. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "../../rules/pgn_comment.h"
#include "../../rules/pgn_read.h"
#include "../../rules/rules.h"
#include "../support/tests.h"

/* Every event as a word: "d1:e2e4" a move at depth 1, "{x}" a comment,
 * "$5" a NAG, "(" and ")", "G0" a game's end, "E1:code" a game's error. */
typedef struct {
    char events[4096];
    pgn_read_error_t last_error;
} trace_t;

static void add(trace_t *t, const char *word)
{
    size_t n = strlen(t->events);
    snprintf(t->events + n, sizeof t->events - n, "%s%s", n ? " " : "", word);
}

static bool on_node(void *ctx, int game, const pgn_read_node_t *node)
{
    char word[64];
    (void)game;
    snprintf(word, sizeof word, "d%d:%s", node->depth, node->played->uci);
    add(ctx, word);
    return true;
}

static bool on_comment(void *ctx, int game, int depth, const char *text, size_t length)
{
    char word[128];
    (void)game;
    (void)depth;
    snprintf(word, sizeof word, "{%.*s}", (int)length, text);
    add(ctx, word);
    return true;
}

static bool on_nag(void *ctx, int game, int depth, int nag)
{
    char word[16];
    (void)game;
    (void)depth;
    snprintf(word, sizeof word, "$%d", nag);
    add(ctx, word);
    return true;
}

static bool on_variation(void *ctx, int game, int depth, bool open)
{
    (void)game;
    (void)depth;
    add(ctx, open ? "(" : ")");
    return true;
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    char word[16];
    snprintf(word, sizeof word, "G%d", done->index);
    add(ctx, word);
    return true;
}

static bool on_error(void *ctx, const pgn_read_error_t *e)
{
    trace_t *t = ctx;
    char word[64];
    snprintf(word, sizeof word, "E%d:%s", e->game, pgn_read_status_code(e->status));
    add(t, word);
    t->last_error = *e;
    return true;
}

static int trace(const char *text, bool keep_going, trace_t *t, pgn_read_error_t *e)
{
    memset(t, 0, sizeof *t);
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    pgn_read_callbacks_t callbacks = { .game = on_game, .node = on_node, .comment = on_comment, .nag = on_nag,
                                       .variation = on_variation, .error = keep_going ? on_error : NULL };
    return pgn_read(text, strlen(text), &limits, &callbacks, t, e);
}

static void test_variations_play_from_the_position_before_the_move_they_replace(void)
{
    trace_t t;
    pgn_read_error_t e;
    CU_ASSERT_EQUAL(trace("1. e4 {a} e5!? (1... c5 $14 (1... e6) 2. Nf3) 2. Nf3 *", false, &t, &e), 1);
    CU_ASSERT_STRING_EQUAL(t.events, "d0:e2e4 {a} d0:e7e5 $5 ( d1:c7c5 $14 ( d2:e7e6 ) d1:g1f3 ) d0:g1f3 G0");
    /* a null move in a variation; not while in check, nor in the mainline */
    CU_ASSERT_EQUAL(trace("1. e4 e5 (1... -- 2. d4) *", false, &t, &e), 1);
    CU_ASSERT_STRING_EQUAL(t.events, "d0:e2e4 d0:e7e5 ( d1:0000 d1:d2d4 ) G0");
    CU_ASSERT_EQUAL(trace("1. e4 -- *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ENULL_MOVE);
    CU_ASSERT_EQUAL(trace("1. e4 f5 2. Qh5+ g6 (2... -- ) *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_ENULL_MOVE);
    /* '(' with no move to replace */
    CU_ASSERT_EQUAL(trace("(1. d4) 1. e4 *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_EVARIATION_WITHOUT_MOVE);
    CU_ASSERT_EQUAL(trace("1. e4 ((1. d4)) *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_EVARIATION_WITHOUT_MOVE);
}

static void test_an_illegal_variation_move_has_its_path(void)
{
    trace_t t;
    pgn_read_error_t e;
    /* the second move of the second variation on the third mainline move, inside it the first of the first */
    CU_ASSERT_EQUAL(trace("1. e4 e5 2. Nf3 (2. d4) (2. Bc4 Nc6 (2... Nf6 3. Qxf7)) *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.status, PGN_READ_EILLEGAL_MOVE);
    CU_ASSERT_EQUAL(e.path_length, 5);
    int want[] = { 2, 1, 1, 0, 1 };
    for (int i = 0; i < 5 && i < e.path_length; i++)
        CU_ASSERT_EQUAL(e.path[i], want[i]);
    CU_ASSERT_EQUAL(e.column, 50);
    /* a mainline move's path is its index */
    CU_ASSERT_EQUAL(trace("1. e4 e5 2. Ke3 *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.path_length, 1);
    CU_ASSERT_EQUAL(e.path[0], 2);
    CU_ASSERT_EQUAL(e.ply, 2);
    /* a line that ended in mate takes no more moves */
    CU_ASSERT_EQUAL(trace("1. f3 e5 2. g4 Nc6 (2... Qh4# 3. a3) *", false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.reason, LEGALITY_GAME_OVER);
}

static void test_reading_goes_on_after_a_bad_game(void)
{
    trace_t t;
    pgn_read_error_t e;
    const char *text = "[Event \"a\"]\n\n1. e4 e5 *\n\n"
                       "[Event \"b\"]\n\n1. e4 e5 2. Ke2 (2. Qxf7) *\n\n"         /* illegal in a variation */
                       "[Event \"c\"\n[Site \"d\"]\n\n1. d4 *\n\n"                 /* a broken tag */
                       "[Event \"e\"]\n\n1. e4 {never closed\n\n[Event \"f\"]\n\n1. c4 *";
    CU_ASSERT_EQUAL(trace(text, true, &t, &e), 4);
    CU_ASSERT_STRING_EQUAL(t.events, "d0:e2e4 d0:e7e5 G0 d0:e2e4 d0:e7e5 d0:e1e2 ( E1:illegal_move "
                                     "E2:unterminated_tag d0:e2e4 E3:unterminated_comment");
    /* the same without the error callback: the first error stops it */
    CU_ASSERT_EQUAL(trace(text, false, &t, &e), -1);
    CU_ASSERT_EQUAL(e.game, 1);
    /* a good game after a bad one is read whole */
    CU_ASSERT_EQUAL(trace("1. e4 e5 2. Ke3 Nc6 1-0\n\n1. d4 (1. c4) d5 *\n", true, &t, &e), 2);
    CU_ASSERT_STRING_EQUAL(t.events, "d0:e2e4 d0:e7e5 E0:illegal_move d0:d2d4 ( d1:c2c4 ) d0:d7d5 G1");
    /* bytes that are not UTF-8 fail their game once */
    CU_ASSERT_EQUAL(trace("1. e4 {\xff} *\n\n1. d4 *", true, &t, &e), 2);
    CU_ASSERT_STRING_EQUAL(t.events, "d0:e2e4 E0:invalid_utf8 d0:d2d4 G1");
}

static void test_comment_commands_are_lifted_as_chessops_lifts_them(void)
{
    pgn_comment_t c;
    char text[256];
    const char *in = "good [%eval -1.5,20] move [%clk 1:02:03.45] [%emt 0:00:07][%cal Ge2e4,Rd1d8,Ba1a1] [%csl Yh8] "
                     "[%unknown 1] end";
    size_t n = pgn_comment_parse(in, strlen(in), &c, text);
    CU_ASSERT_STRING_EQUAL(text, "good  move       [%unknown 1] end"); /* as chessops gives it */
    CU_ASSERT_EQUAL(n, strlen(text));
    CU_ASSERT_TRUE(c.has_clock && c.has_emt && c.has_eval && !c.eval_mate);
    CU_ASSERT_EQUAL(c.clock_ms, 3723450);
    CU_ASSERT_EQUAL(c.emt_ms, 7000);
    CU_ASSERT_EQUAL(c.eval, -150);
    CU_ASSERT_EQUAL(c.eval_depth, 20);
    CU_ASSERT_EQUAL(c.shape_count, 4);
    CU_ASSERT_EQUAL(c.shapes[2].from, c.shapes[2].to); /* Ba1a1 is a square */
    char commands[PGN_COMMENT_COMMANDS_MAX];
    pgn_comment_commands(&c, commands);
    CU_ASSERT_STRING_EQUAL(commands, "[%csl Ba1,Yh8] [%cal Ge2e4,Rd1d8] [%eval -1.50,20] [%emt 0:00:07] "
                                     "[%clk 1:02:03.45]");
    /* mates, the last of two, and what is not a command */
    in = "[%eval #-3] [%eval #2,30] [%clk 0:1:2] [%eval 1.234] [%clk 0:00:61.1234] [%eval .5]";
    pgn_comment_parse(in, strlen(in), &c, text);
    CU_ASSERT_TRUE(c.has_eval && !c.eval_mate);
    CU_ASSERT_EQUAL(c.eval, 50); /* ".5" is the last */
    CU_ASSERT_EQUAL(c.eval_depth, -1);
    CU_ASSERT_EQUAL(c.clock_ms, 62000);
    CU_ASSERT_STRING_EQUAL(text, "[%eval 1.234] [%clk 0:00:61.1234]");
}

int test_pgn_tree_events_register(void)
{
    CU_pSuite suite = CU_add_suite("pgn_tree_events", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "variations play from the position before the move they replace",
                test_variations_play_from_the_position_before_the_move_they_replace);
    CU_add_test(suite, "an illegal variation move has its path", test_an_illegal_variation_move_has_its_path);
    CU_add_test(suite, "reading goes on after a bad game", test_reading_goes_on_after_a_bad_game);
    CU_add_test(suite, "comment commands are lifted as chessops lifts them",
                test_comment_commands_are_lifted_as_chessops_lifts_them);
    return CU_get_error();
}
