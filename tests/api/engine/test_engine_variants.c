/* Tests for the variants in api/engine/uci.c: the UCI_Variant option read at
 * the handshake, the setoption sent only when the variant changes, what is
 * never sent, and an engine's move chessd's rules refuse read as garbage.
 * The oracles are the real engines (Debian's Fairy-Stockfish 11.1, at
 * /usr/games/fairy-stockfish or $CHESSD_VARIANT_ENGINE, and Stockfish, which
 * has no such option) and a fake engine that records what it reads. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../api/engine/uci.h"
#include "../../../rules/base/clock.h"
#include "../../support/tests.h"

static const char *fairy_path, *stockfish_path;
static engine_t *fairy;
static char fake_dir[64];

/* Every variant but atomic, and standard chess: what 11.1 lists. */
static const unsigned fairy_11_variants = ((1u << VARIANT_COUNT) - 1) & ~(1u << VARIANT_ATOMIC);

static const char *path_from(const char *variable, const char *fallback)
{
    const char *path = getenv(variable);
    return path && *path ? path : fallback;
}

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    fairy_path = path_from("CHESSD_VARIANT_ENGINE", "/usr/games/fairy-stockfish");
    stockfish_path = path_from("CHESSD_STOCKFISH", "/usr/games/stockfish");
    if (access(fairy_path, X_OK) != 0) {
        fprintf(stderr, "\nengine_variants suite: %s is not an executable (%s); install the 'fairy-stockfish' "
                        "package (make deps) or set CHESSD_VARIANT_ENGINE\n", fairy_path, strerror(errno));
        return 1;
    }
    char err[256];
    engine_status_t status;
    fairy = engine_start(&(engine_options_t){.path = fairy_path}, &status, err, sizeof err);
    if (!fairy) {
        fprintf(stderr, "\nengine_variants suite: cannot start %s: %s: %s\n", fairy_path, engine_status_name(status),
                err);
        return 1;
    }
    return tests_temp_dir(fake_dir, "engine-variants") ? 0 : 1;
}

static int suite_cleanup(void)
{
    engine_free(fairy);
    fairy = NULL;
    tests_remove_dir(fake_dir);
    return 0;
}

/* The shared Fairy-Stockfish, restarted when an earlier test left it dead. */
static engine_t *live_fairy(void)
{
    char err[256];
    if (!engine_alive(fairy))
        CU_ASSERT_EQUAL_FATAL(engine_restart(fairy, err, sizeof err), ENGINE_OK);
    return fairy;
}

static unsigned bits(variant_t a, variant_t b, variant_t c)
{
    return 1u << a | 1u << b | 1u << c;
}

static void test_the_uci_variant_option_lists_the_variants_chessd_knows(void)
{
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default chess var 3check var chess "
                                              "var crazyhouse var xiangqi var shogi"),
                    bits(VARIANT_THREE_CHECK, VARIANT_STANDARD, VARIANT_CRAZYHOUSE));
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default chess var kingofthehill "
                                              "var racingkings var seirawan"),
                    bits(VARIANT_KING_OF_THE_HILL, VARIANT_RACING_KINGS, VARIANT_SEIRAWAN));
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default chess\tvar  atomic var horde"),
                    bits(VARIANT_ATOMIC, VARIANT_HORDE, VARIANT_HORDE));
}

static void test_only_whole_var_names_are_read_never_a_default_alone(void)
{
    /* names are the engine's exactly: no prefix, no other case, no alias */
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default chess var 3checks "
                                              "var crazyhousex var kingofthehil var Crazyhouse var threecheck "
                                              "var giveaway var koth"),
                    0u);
    /* a default is not a var: an engine that plays atomic lists it */
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default atomic var chess"),
                    1u << VARIANT_STANDARD);
    /* a var with no name after it, at the end */
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variant type combo default chess var horde var"),
                    1u << VARIANT_HORDE);
}

static void test_a_line_that_is_not_the_uci_variant_option_lists_nothing(void)
{
    CU_ASSERT_EQUAL(engine_variants_announced("option name UCI_Variants type combo default chess var crazyhouse"), 0u);
    CU_ASSERT_EQUAL(engine_variants_announced("option name Protocol type combo default uci var uci var horde"), 0u);
    CU_ASSERT_EQUAL(engine_variants_announced("info string var crazyhouse"), 0u);
    CU_ASSERT_EQUAL(engine_variants_announced(""), 0u);
    CU_ASSERT_EQUAL(engine_variants_announced(NULL), 0u);
}

static void test_fairy_stockfish_11_lists_every_variant_but_atomic(void)
{
    engine_t *e = live_fairy();
    CU_ASSERT_EQUAL(engine_variants(e), fairy_11_variants);
    CU_ASSERT_FALSE(engine_variants(e) & 1u << VARIANT_ATOMIC);
    CU_ASSERT_PTR_NOT_NULL(strstr(engine_name(e), "Fairy-Stockfish"));
}

static void test_stockfish_has_no_uci_variant_and_plays_chess_alone(void)
{
    if (access(stockfish_path, X_OK) != 0) {
        CU_FAIL("no Stockfish: install the 'stockfish' package (make deps) or set CHESSD_STOCKFISH");
        return;
    }
    char err[256];
    engine_status_t status;
    engine_t *e = engine_start(&(engine_options_t){.path = stockfish_path}, &status, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(engine_variants(e), 1u << VARIANT_STANDARD);
    position_t pos;
    fen_start(VARIANT_CRAZYHOUSE, &pos);
    engine_limits_t limits = {.depth = 2, .deadline_ms = clock_now_ms() + 2000};
    engine_result_t r;
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_TRUE(engine_alive(e));
    engine_free(e);
    CU_ASSERT_EQUAL(engine_variants(NULL), 0u);
}

/* Writes an engine that logs every line it reads, lists crazyhouse and
 * 3check in its UCI_Variant option and answers "go" with go_answer. */
static const char *recording_variant_engine(const char *name, const char *go_answer, char *log, size_t log_size)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fake_dir, name);
    snprintf(log, log_size, "%s/%s.log", fake_dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#!/bin/sh\n"
               ": > '%s'\n"
               "while read -r line; do\n"
               "  echo \"$line\" >> '%s'\n"
               "  case \"$line\" in\n"
               "    uci) echo 'id name Fake'; echo 'option name UCI_Variant type combo default chess var chess "
               "var crazyhouse var 3check var xiangqi'; echo uciok ;;\n"
               "    isready) echo readyok ;;\n"
               "    go*) echo '%s' ;;\n"
               "    quit) exit 0 ;;\n"
               "  esac\n"
               "done\n",
            log, log, go_answer);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
    return path;
}

static engine_t *start_engine(const char *path)
{
    char err[256];
    engine_status_t s;
    engine_t *e = engine_start(&(engine_options_t){.path = path, .handshake_timeout_ms = 2000}, &s, err, sizeof err);
    if (!e)
        fprintf(stderr, "\nengine %s: %s: %s\n", path, engine_status_name(s), err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    return e;
}

/* What the engine has read since *seen bytes of its log, after an isready
 * round trip (engine_new_game) so that it has read everything. */
static void read_since(engine_t *e, const char *log, long *seen, char *out, size_t size)
{
    char err[256];
    CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
    FILE *f = fopen(log, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(fseek(f, *seen, SEEK_SET), 0);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    *seen += (long)n;
    fclose(f);
}

static engine_status_t search_start(engine_t *e, variant_t v, engine_result_t *r)
{
    char err[256];
    position_t pos;
    fen_start(v, &pos);
    engine_limits_t limits = {.depth = 3, .deadline_ms = clock_now_ms() + 2000};
    return engine_search(e, &pos, NULL, 0, &limits, r, err, sizeof err);
}

static void test_uci_variant_is_set_before_the_position_and_only_when_it_changes(void)
{
    char log[160], text[4096];
    long seen = 0;
    engine_result_t r;
    engine_t *e = start_engine(recording_variant_engine("records", "bestmove e2e4", log, sizeof log));
    CU_ASSERT_EQUAL(engine_variants(e), bits(VARIANT_STANDARD, VARIANT_CRAZYHOUSE, VARIANT_THREE_CHECK));
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NULL(strstr(text, "UCI_Variant")); /* nothing until a search asks */

    CU_ASSERT_EQUAL(search_start(e, VARIANT_CRAZYHOUSE, &r), ENGINE_OK);
    read_since(e, log, &seen, text, sizeof text);
    const char *set = strstr(text, "setoption name UCI_Variant value crazyhouse\n");
    const char *position = strstr(text, "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1\n");
    CU_ASSERT_PTR_NOT_NULL(set);
    CU_ASSERT_PTR_NOT_NULL(position);
    CU_ASSERT_TRUE(set && position && set < position);

    CU_ASSERT_EQUAL(search_start(e, VARIANT_CRAZYHOUSE, &r), ENGINE_OK);
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NULL(strstr(text, "UCI_Variant")); /* the same variant: not sent again */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "position fen "));

    /* three-check's counters go as X-FEN's checks remaining, which 11.1 reads */
    CU_ASSERT_EQUAL(search_start(e, VARIANT_THREE_CHECK, &r), ENGINE_OK);
    read_since(e, log, &seen, text, sizeof text);
    set = strstr(text, "setoption name UCI_Variant value 3check\n");
    position = strstr(text, "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1\n");
    CU_ASSERT_TRUE(set && position && set < position);

    /* back to chess: the engine is told (its own name for it) */
    CU_ASSERT_EQUAL(search_start(e, VARIANT_STANDARD, &r), ENGINE_OK);
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "setoption name UCI_Variant value chess\n"));

    /* a variant it does not list: refused, nothing sent, the engine kept */
    pid_t pid = engine_pid(e);
    CU_ASSERT_EQUAL(search_start(e, VARIANT_ATOMIC, &r), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(search_start(e, VARIANT_HORDE, &r), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(engine_pid(e), pid);
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NULL(strstr(text, "UCI_Variant"));
    CU_ASSERT_PTR_NULL(strstr(text, "position"));
    CU_ASSERT_PTR_NULL(strstr(text, "go"));

    /* a restart forgets what was set */
    char err[256];
    CU_ASSERT_EQUAL(engine_restart(e, err, sizeof err), ENGINE_OK);
    seen = 0;
    CU_ASSERT_EQUAL(search_start(e, VARIANT_STANDARD, &r), ENGINE_OK);
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "setoption name UCI_Variant value chess\n"));
    engine_free(e);
}

/* Three-check with White's three checks given (X-FEN: White has 0 left),
 * White to move: given to "go", Fairy-Stockfish 11.1 dies of SIGFPE (a
 * client may send it: Lichess's form is "... 0 1 +3+0"). And White to give
 * the third check (1 left: Qh5+ down the open diagonal). */
static const char finished_three_check[] = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0+3 0 1";
static const char third_check_to_give[] = "rnbqkbnr/ppppp1pp/8/5p2/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1+3 0 2";

static void test_a_finished_three_check_position_never_reaches_the_engine(void)
{
    char log[160], text[4096], err[256];
    long seen = 0;
    engine_result_t r;
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse_variant(finished_three_check, strlen(finished_three_check), VARIANT_THREE_CHECK, 0,
                                            &pos, err, sizeof err),
                          FEN_OK);
    color_t winner;
    CU_ASSERT_EQUAL(variant_end(&pos, &winner), VARIANT_END_THREE_CHECKS);
    engine_limits_t limits = {.depth = 5, .deadline_ms = clock_now_ms() + 2000};
    engine_t *e = start_engine(recording_variant_engine("finished", "bestmove e7e6", log, sizeof log));
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_ENO_MOVES);
    read_since(e, log, &seen, text, sizeof text);
    CU_ASSERT_PTR_NULL(strstr(text, "position"));
    CU_ASSERT_PTR_NULL(strstr(text, "go "));
    engine_free(e);
    /* the third check reached by a move of the list: the same */
    position_t start;
    CU_ASSERT_EQUAL_FATAL(fen_parse_variant(third_check_to_give, strlen(third_check_to_give), VARIANT_THREE_CHECK, 0,
                                            &start, err, sizeof err),
                          FEN_OK);
    move_t check;
    CU_ASSERT_EQUAL_FATAL(notation_parse_move(&start, "Qh5", 3, &check, err, sizeof err), LEGALITY_OK);
    /* ... and the real 11.1, which would die of it (SIGFPE), stays up */
    engine_t *f = live_fairy();
    pid_t pid = engine_pid(f);
    CU_ASSERT_EQUAL(engine_search(f, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_ENO_MOVES);
    CU_ASSERT_EQUAL(engine_search(f, &start, &check, 1, &limits, &r, err, sizeof err), ENGINE_ENO_MOVES);
    CU_ASSERT_EQUAL(engine_pid(f), pid);
    CU_ASSERT_TRUE(engine_alive(f));
    limits.deadline_ms = clock_now_ms() + 2000;
    CU_ASSERT_EQUAL(engine_search(f, &start, NULL, 0, &limits, &r, err, sizeof err), ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&start, r.bestmove));
}

static void test_a_move_chessd_refuses_in_the_variant_is_garbage(void)
{
    char log[160];
    engine_result_t r;
    /* a drop from an empty pocket, a gate outside S-chess, a king's promotion outside antichess */
    const char *answers[] = { "bestmove P@e4", "bestmove g1f3h", "bestmove e2e4k", "bestmove e2e5" };
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "garbage%zu", i);
        engine_t *e = start_engine(recording_variant_engine(name, answers[i], log, sizeof log));
        CU_ASSERT_EQUAL(search_start(e, VARIANT_CRAZYHOUSE, &r), ENGINE_EGARBAGE);
        CU_ASSERT_FALSE(engine_alive(e));
        CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
        engine_free(e);
    }
}

/* Searches fen (in v) on the real Fairy-Stockfish; the bestmove must be legal. */
static void fairy_bestmove(variant_t v, const char *fen, int depth, engine_result_t *r)
{
    char err[256];
    position_t pos;
    if (fen) {
        CU_ASSERT_EQUAL_FATAL(fen_parse_variant(fen, strlen(fen), v, 0, &pos, err, sizeof err), FEN_OK);
    } else {
        fen_start(v, &pos);
    }
    engine_limits_t limits = {.depth = depth, .multipv = 2, .deadline_ms = clock_now_ms() + 5000};
    engine_status_t s = engine_search(live_fairy(), &pos, NULL, 0, &limits, r, err, sizeof err);
    if (s != ENGINE_OK)
        fprintf(stderr, "\n%s: %s: %s\n", variant_rules(v)->key, engine_status_name(s), err);
    CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&pos, r->bestmove));
    CU_ASSERT_EQUAL(r->illegal_pv_moves, 0);
    CU_ASSERT_EQUAL(r->line_count, 2);
}

static void test_fairy_stockfish_answers_a_legal_move_in_every_variant_it_lists(void)
{
    engine_result_t r;
    for (int v = VARIANT_STANDARD; v < VARIANT_COUNT; v++) {
        if (!(engine_variants(live_fairy()) & 1u << v))
            continue;
        fairy_bestmove((variant_t)v, NULL, 6, &r);
        CU_ASSERT_TRUE(r.lines[0].pv_count >= 2);
    }
}

static void test_fairy_stockfish_drops_and_gates_are_read_as_chessd_moves(void)
{
    engine_result_t r;
    /* crazyhouse: the rook in hand mates on the back rank */
    fairy_bestmove(VARIANT_CRAZYHOUSE, "7k/5ppp/8/8/8/8/5PPP/6K1[R] w - - 0 1", 5, &r);
    CU_ASSERT_EQUAL(move_kind(r.bestmove), MOVE_DROP);
    CU_ASSERT_TRUE(r.lines[0].is_mate && r.lines[0].value == 1);
    CU_ASSERT_EQUAL(r.bestmove_uci[1], '@');
    /* S-chess: a knight that leaves g1 with the Hawk gated behind it is read whole */
    fairy_bestmove(VARIANT_SEIRAWAN, NULL, 8, &r);
    int gated = 0;
    for (int i = 0; i < r.line_count; i++)
        for (int m = 0; m < r.lines[i].pv_count; m++)
            gated += move_gate(r.lines[i].pv[m]) == HAWK || move_gate(r.lines[i].pv[m]) == ELEPHANT;
    CU_ASSERT_TRUE(gated > 0);
    /* three-check: the third check wins at once, and is seen as a win */
    fairy_bestmove(VARIANT_THREE_CHECK, third_check_to_give, 4, &r);
    CU_ASSERT_TRUE(r.lines[0].is_mate && r.lines[0].value == 1);
}

int test_engine_variants_register(void)
{
    CU_pSuite suite = CU_add_suite("engine_variants", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_the_uci_variant_option_lists_the_variants_chessd_knows);
    CU_ADD_TEST(suite, test_only_whole_var_names_are_read_never_a_default_alone);
    CU_ADD_TEST(suite, test_a_line_that_is_not_the_uci_variant_option_lists_nothing);
    CU_ADD_TEST(suite, test_fairy_stockfish_11_lists_every_variant_but_atomic);
    CU_ADD_TEST(suite, test_stockfish_has_no_uci_variant_and_plays_chess_alone);
    CU_ADD_TEST(suite, test_uci_variant_is_set_before_the_position_and_only_when_it_changes);
    CU_ADD_TEST(suite, test_a_finished_three_check_position_never_reaches_the_engine);
    CU_ADD_TEST(suite, test_a_move_chessd_refuses_in_the_variant_is_garbage);
    CU_ADD_TEST(suite, test_fairy_stockfish_answers_a_legal_move_in_every_variant_it_lists);
    CU_ADD_TEST(suite, test_fairy_stockfish_drops_and_gates_are_read_as_chessd_moves);
    return CU_get_error();
}
