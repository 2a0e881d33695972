/* Tests for api/engine/levels.c, the levels of play, on the real Stockfish
 * (/usr/games/stockfish, or $CHESSD_STOCKFISH). Settings rise in strength
 * with the level and the rating, and out-of-range ones are refused.
 * level_move() always answers a legal move within the clock and the
 * deadline, its draws following the rng state. A four-game smoke match by
 * chessd's rules: level 6 (short node budgets) clearly beats level 1. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../api/engine/levels.h"
#include "../../../rules/base/clock.h"
#include "../../support/match.h"
#include "../../support/random_game.h"
#include "../../support/tests.h"

static engine_t *engines[COLOR_COUNT];

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *path = getenv("CHESSD_STOCKFISH");
    if (!path || !*path)
        path = "/usr/games/stockfish";
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "\nlevels suite: %s is not an executable (%s); install the 'stockfish' package "
                        "(make deps) or set CHESSD_STOCKFISH\n", path, strerror(errno));
        return 1;
    }
    for (int c = WHITE; c <= BLACK; c++) {
        char err[256];
        engine_status_t status;
        engines[c] = engine_start(&(engine_options_t){.path = path}, &status, err, sizeof err);
        if (!engines[c]) {
            fprintf(stderr, "\nlevels suite: cannot start %s: %s: %s\n", path, engine_status_name(status), err);
            return 1;
        }
    }
    return 0;
}

static int suite_cleanup(void)
{
    for (int c = WHITE; c <= BLACK; c++) {
        engine_free(engines[c]);
        engines[c] = NULL;
    }
    return 0;
}

/* The first engine, restarted when an earlier test left it dead. */
static engine_t *live_engine(void)
{
    char err[256];
    if (!engine_alive(engines[WHITE]))
        CU_ASSERT_EQUAL_FATAL(engine_restart(engines[WHITE], err, sizeof err), ENGINE_OK);
    return engines[WHITE];
}

/* A rank of strength for comparing settings: the UCI_Elo played, full
 * strength above every rating. */
static int effective_uci_elo(const level_t *l)
{
    return l->strength.limit_strength ? l->strength.uci_elo : 100000;
}

/* A cap where 0 means none, as a number that grows with the budget. */
static uint64_t cap(uint64_t value)
{
    return value ? value : UINT64_MAX;
}

/* Whether b plays at least as strongly as a, setting by setting. */
static bool at_least_as_strong(const level_t *a, const level_t *b)
{
    return b->random_permille <= a->random_permille && b->weaker_permille <= a->weaker_permille &&
           effective_uci_elo(b) >= effective_uci_elo(a) && cap(b->nodes) >= cap(a->nodes) &&
           cap((uint64_t)b->depth) >= cap((uint64_t)a->depth) && b->movetime_ms >= a->movetime_ms;
}

static void test_the_settings_rise_with_the_level(void)
{
    level_t previous, current;
    CU_ASSERT_TRUE_FATAL(level_of(LEVEL_MIN, &previous));
    CU_ASSERT_EQUAL(previous.level, 1);
    CU_ASSERT_TRUE(previous.random_permille > 0); /* level 1 blunders on purpose */
    for (int level = LEVEL_MIN + 1; level <= LEVEL_MAX; level++) {
        CU_ASSERT_TRUE_FATAL(level_of(level, &current));
        CU_ASSERT_EQUAL(current.level, level);
        CU_ASSERT_EQUAL(current.elo, 0);
        if (!at_least_as_strong(&previous, &current))
            fprintf(stderr, "\nlevel %d is weaker than level %d in a setting\n", level, level - 1);
        CU_ASSERT_TRUE(at_least_as_strong(&previous, &current));
        level_t below = previous;
        below.level = current.level;
        CU_ASSERT_NOT_EQUAL(memcmp(&below, &current, sizeof current), 0); /* no level repeats the one below */
        previous = current;
    }
    /* the top level is full strength, with no blunder */
    CU_ASSERT_FALSE(current.strength.limit_strength);
    CU_ASSERT_EQUAL(current.strength.skill_level, 0);
    CU_ASSERT_EQUAL(current.random_permille + current.weaker_permille, 0);
}

static void test_every_setting_has_a_cap_and_room_for_its_pick(void)
{
    for (int level = LEVEL_MIN; level <= LEVEL_MAX; level++) {
        level_t l;
        CU_ASSERT_TRUE_FATAL(level_of(level, &l));
        CU_ASSERT_TRUE(l.movetime_ms > 0);
        CU_ASSERT_TRUE(l.nodes > 0);
        CU_ASSERT_TRUE(l.multipv >= 1 && l.multipv <= ENGINE_MULTIPV_MAX);
        CU_ASSERT_TRUE(l.weaker_permille == 0 || l.multipv >= 2); /* a weaker line needs lines to choose among */
        if (l.strength.limit_strength) {
            level_t rated;
            CU_ASSERT_TRUE_FATAL(level_of_elo(l.strength.uci_elo, &rated));
            CU_ASSERT_TRUE(l.depth >= rated.depth); /* the depth cap never comes before Stockfish's pick */
        }
    }
}

/* Stockfish 15.1 picks a UCI_Elo's move at depth 1 + its skill, skill =
 * ((elo - 1346.6) / 143.4) ^ (1 / 0.806) (its Skill()); a rating is
 * searched to that depth of the UCI_Elo it is sent as, and no further.
 * The anchors of the measurement are sent as themselves. */
static int pick_depth(int uci_elo)
{
    double skill = pow((uci_elo - 1346.6) / 143.4, 1 / 0.806);
    return 1 + (int)(skill > 20 ? 20 : skill < 0 ? 0 : skill);
}

static void test_a_rating_is_searched_to_stockfishs_pick_depth(void)
{
    for (int elo = 1350; elo <= level_elo_max; elo++) {
        level_t l;
        CU_ASSERT_TRUE_FATAL(level_of_elo(elo, &l));
        CU_ASSERT_TRUE(l.strength.limit_strength);
        CU_ASSERT_TRUE(l.strength.uci_elo >= 1350 && l.strength.uci_elo <= 2850);
        if (l.depth != pick_depth(l.strength.uci_elo)) {
            fprintf(stderr, "\nrating %d (UCI_Elo %d) searched to depth %d\n", elo, l.strength.uci_elo, l.depth);
            CU_FAIL("a rating not searched to its pick depth");
            return;
        }
        CU_ASSERT_EQUAL(l.random_permille, 0);
    }
    static const int anchors[] = {1350, 1600, 1850, 2100, 2400, 2600, 2850};
    for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
        level_t l;
        CU_ASSERT_TRUE_FATAL(level_of_elo(anchors[i], &l));
        CU_ASSERT_EQUAL(l.strength.uci_elo, anchors[i]);
    }
    level_t l;
    CU_ASSERT_TRUE_FATAL(level_of_elo(1500, &l));
    CU_ASSERT_TRUE(l.strength.uci_elo > 1500); /* Stockfish's 1500 plays below 1500 */
}

static void test_the_settings_rise_with_the_rating(void)
{
    level_t previous, current;
    CU_ASSERT_TRUE_FATAL(level_of_elo(level_elo_min, &previous));
    CU_ASSERT_EQUAL(previous.level, 0);
    CU_ASSERT_EQUAL(previous.elo, level_elo_min);
    CU_ASSERT_TRUE(previous.random_permille > 0);
    for (int elo = level_elo_min + 1; elo <= level_elo_max; elo++) {
        CU_ASSERT_TRUE_FATAL(level_of_elo(elo, &current));
        CU_ASSERT_EQUAL(current.elo, elo);
        if (!at_least_as_strong(&previous, &current)) {
            fprintf(stderr, "\nrating %d is weaker than %d in a setting\n", elo, elo - 1);
            CU_FAIL("a rating weaker than the one below");
            return;
        }
        previous = current;
    }
    CU_ASSERT_EQUAL(current.strength.uci_elo, level_elo_max);
}

static void test_levels_and_ratings_out_of_range_are_refused(void)
{
    level_t l;
    memset(&l, 0x5a, sizeof l);
    level_t untouched = l;
    CU_ASSERT_FALSE(level_of(0, &l));
    CU_ASSERT_FALSE(level_of(LEVEL_MAX + 1, &l));
    CU_ASSERT_FALSE(level_of(-3, &l));
    CU_ASSERT_FALSE(level_of_elo(level_elo_min - 1, &l));
    CU_ASSERT_FALSE(level_of_elo(level_elo_max + 1, &l));
    CU_ASSERT_FALSE(level_of_elo(0, &l));
    CU_ASSERT_FALSE(level_of_elo(-1500, &l));
    CU_ASSERT_EQUAL(memcmp(&l, &untouched, sizeof l), 0);
    CU_ASSERT_FALSE(level_of(3, NULL));
    CU_ASSERT_TRUE(level_of(LEVEL_MIN, &l));
    CU_ASSERT_TRUE(level_of(LEVEL_MAX, &l));
    CU_ASSERT_TRUE(level_of_elo(level_elo_min, &l));
    CU_ASSERT_TRUE(level_of_elo(level_elo_max, &l));
    CU_ASSERT_TRUE(level_elo_min < 1000 && level_elo_max >= 2850);
}

static void test_a_level_is_named_for_pgn(void)
{
    level_t l;
    char name[LEVEL_NAME_MAX];
    CU_ASSERT_TRUE_FATAL(level_of(3, &l));
    level_name(&l, name, sizeof name);
    CU_ASSERT_STRING_EQUAL(name, "chessd level 3");
    CU_ASSERT_TRUE_FATAL(level_of_elo(1500, &l));
    level_name(&l, name, sizeof name);
    CU_ASSERT_STRING_EQUAL(name, "chessd 1500");
    char small[8];
    level_name(&l, small, sizeof small);
    CU_ASSERT_STRING_EQUAL(small, "chessd ");
}

/* A copy of level with its node cap lowered, for tests that must be quick. */
static level_t quick(int level, uint64_t nodes)
{
    level_t l;
    CU_ASSERT_TRUE(level_of(level, &l));
    if (l.nodes > nodes)
        l.nodes = nodes;
    return l;
}

typedef struct {
    const level_t *levels;
    int level_count;
    int every;      /* ask every nth position */
    int seen, asked;
    uint64_t rng;
} legality_run_t;

static bool ask_each_level(const position_t *pos, const move_list_t *legal, void *context)
{
    legality_run_t *run = context;
    if (legal->count == 0 || run->seen++ % run->every)
        return true;
    for (int i = 0; i < run->level_count; i++) {
        char err[256];
        move_t move = MOVE_NONE;
        engine_status_t s =
            level_move(live_engine(), pos, NULL, 0, &run->levels[i], NULL, 0, &run->rng, &move, err, sizeof err);
        if (s != ENGINE_OK)
            fprintf(stderr, "\nlevel_move: %s: %s\n", engine_status_name(s), err);
        CU_ASSERT_EQUAL(s, ENGINE_OK);
        CU_ASSERT_TRUE(movegen_is_legal(pos, move));
        run->asked++;
    }
    return true;
}

/* Positions of random games from the standard start and four Chess960
 * starts (castling written king-takes-rook), each asked of level 1 (random
 * and weaker moves at the UCI_Elo floor), level 5 and level 8 (node caps
 * lowered) and a random mover. */
static void test_level_move_answers_a_legal_move_in_random_games_and_chess960(void)
{
    level_t random_mover = {.movetime_ms = 1, .random_permille = 1000};
    level_t levels[] = {quick(1, 2000), quick(5, 3000), quick(8, 3000), random_mover};
    legality_run_t run = {.levels = levels, .level_count = 4, .every = 5, .rng = 0x2545f4914f6cdd1dull};
    random_game_style_t style = {.ply_max = 120};
    uint64_t game_rng = 0x853c49e6748fea9bull;
    static const int starts[] = {CHESS960_STANDARD, 0, 959, 123, 700};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        position_t start;
        CU_ASSERT_TRUE_FATAL(chess960_start(starts[i], &start));
        if (starts[i] == CHESS960_STANDARD)
            CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &start));
        random_game_play(start, &style, &game_rng, ask_each_level, &run);
    }
    CU_ASSERT_TRUE(run.asked >= 200);
}

/* Castling in Chess960: the only mate is b1 taking a1 (queen side). */
static void test_a_chess960_castling_mate_is_played_by_level_8(void)
{
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("2rkr3/2p1p3/8/8/8/8/8/RK6 w Q - 0 1", &pos));
    level_t l = quick(8, 20000);
    uint64_t rng = 7;
    move_t move;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(level_move(live_engine(), &pos, NULL, 0, &l, NULL, 0, &rng, &move, err, sizeof err),
                          ENGINE_OK);
    CU_ASSERT_EQUAL(move_kind(move), MOVE_CASTLING);
    CU_ASSERT_EQUAL(move_from(move), 1);
    CU_ASSERT_EQUAL(move_to(move), 0);
}

/* The king on a1 can only take the rook on b2: that move, without asking
 * the engine (there is none here). */
static void test_one_legal_move_is_played_without_a_search(void)
{
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("k7/8/8/8/8/8/1r6/K7 w - - 0 1", &pos));
    CU_ASSERT_EQUAL_FATAL(movegen_count(&pos), 1);
    for (int level = LEVEL_MIN; level <= LEVEL_MAX; level++) {
        level_t l;
        CU_ASSERT_TRUE_FATAL(level_of(level, &l));
        uint64_t rng = 99;
        move_t move = MOVE_NONE;
        char err[256];
        CU_ASSERT_EQUAL(level_move(NULL, &pos, NULL, 0, &l, NULL, 0, &rng, &move, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL(move_from(move), 0);
        CU_ASSERT_EQUAL(move_to(move), 9);
        CU_ASSERT_EQUAL(rng, 99u); /* nothing drawn */
    }
}

static void test_bad_arguments_and_finished_games_are_refused(void)
{
    position_t start, mate;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &start));
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1", &mate));
    level_t l = quick(4, 2000);
    uint64_t rng = 5, zero = 0;
    move_t move;
    char err[256];
    engine_t *e = live_engine();
    CU_ASSERT_EQUAL(level_move(e, &mate, NULL, 0, &l, NULL, 0, &rng, &move, err, sizeof err), ENGINE_ENO_MOVES);
    CU_ASSERT_EQUAL(move, MOVE_NONE);
    CU_ASSERT_EQUAL(level_move(e, &start, NULL, 0, &l, NULL, 0, &zero, &move, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(level_move(e, &start, NULL, 0, &l, NULL, 0, NULL, &move, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(level_move(e, &start, NULL, 0, NULL, NULL, 0, &rng, &move, err, sizeof err), ENGINE_EINVALID);
    /* a move list with an illegal move (e2e4 twice) */
    move_t twice[2];
    uci_text_t uci;
    CU_ASSERT_TRUE_FATAL(uci_read("e2e4", 4, &uci));
    twice[0] = twice[1] = uci_to_move(&start, &uci);
    CU_ASSERT_EQUAL(level_move(e, &start, twice, 2, &l, NULL, 0, &rng, &move, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(level_move(e, &start, twice, 1, &l, NULL, 0, &rng, &move, err, sizeof err), ENGINE_OK);
    /* settings out of range */
    level_t bad[] = {l, l, l, l, l, l};
    bad[0].random_permille = 1001;
    bad[1].weaker_permille = -1;
    bad[2].multipv = ENGINE_MULTIPV_MAX + 1;
    bad[3].movetime_ms = 0;
    bad[4].strength.skill_level = 21;
    bad[5].depth = -1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(level_move(e, &start, NULL, 0, &bad[i], NULL, 0, &rng, &move, err, sizeof err),
                        ENGINE_EINVALID);
    engine_limits_t negative = {.has_clock = true, .wtime_ms = -1, .btime_ms = 1000};
    CU_ASSERT_EQUAL(level_move(e, &start, NULL, 0, &l, &negative, 0, &rng, &move, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_TRUE(engine_alive(e)); /* a refused call leaves the engine as it was */
}

/* A random mover from one seed plays the same moves; from another, others. */
static void test_the_same_rng_state_draws_the_same_moves(void)
{
    level_t random_mover = {.movetime_ms = 1, .random_permille = 1000};
    position_t start;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &start));
    move_t games[3][40];
    uint64_t seeds[3] = {11, 11, 12};
    for (int g = 0; g < 3; g++) {
        uint64_t rng = seeds[g];
        for (int ply = 0; ply < 40; ply++) {
            char err[256];
            engine_status_t s = level_move(NULL, &start, games[g], ply, &random_mover, NULL, 0, &rng, &games[g][ply],
                                           err, sizeof err);
            if (s == ENGINE_ENO_MOVES) {
                games[g][ply] = MOVE_NONE;
                break;
            }
            CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
        }
    }
    CU_ASSERT_EQUAL(memcmp(games[0], games[1], sizeof games[0]), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(games[0], games[2], sizeof games[0]), 0);
}

/* Full strength at a fixed depth is deterministic: weaker_permille 0 plays
 * the engine's bestmove, and weaker_permille 1000 always one of the other
 * lines (the second or third of MultiPV 3), the same from the same rng state. */
static void test_a_weaker_line_is_drawn_from_the_rng_among_the_engines_lines(void)
{
    static const char *const fens[] = {
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "rnbqk2r/ppp1bppp/4pn2/3p4/2PP4/2N2N2/PP2PPPP/R1BQKB1R w KQkq - 4 5",
        "r1bq1rk1/ppp1bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R1BQKB1R w KQ - 3 7",
    };
    level_t best = {.depth = 6, .movetime_ms = 5000, .multipv = 1};
    level_t weaker = {.depth = 6, .movetime_ms = 5000, .multipv = 3, .weaker_permille = 1000};
    char err[256];
    engine_t *e = live_engine();
    for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
        position_t pos;
        CU_ASSERT_TRUE_FATAL(tests_parse_fen(fens[i], &pos));
        engine_result_t one, three;
        engine_limits_t limits = {.depth = 6, .deadline_ms = clock_now_ms() + 5000};
        /* engine_search plays at whatever strength was set last (an earlier
         * test may have weakened the shared engine): full strength here. */
        CU_ASSERT_EQUAL_FATAL(engine_set_strength(e, &best.strength, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL_FATAL(engine_search(e, &pos, NULL, 0, &limits, &one, err, sizeof err), ENGINE_OK);
        limits.multipv = 3;
        CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL_FATAL(engine_search(e, &pos, NULL, 0, &limits, &three, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL_FATAL(three.line_count, 3);
        uint64_t rng = 42;
        move_t top, chosen[2];
        CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL_FATAL(level_move(e, &pos, NULL, 0, &best, NULL, 0, &rng, &top, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL(top, one.bestmove);
        for (int k = 0; k < 2; k++) {
            rng = 42 + i;
            CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
            CU_ASSERT_EQUAL_FATAL(level_move(e, &pos, NULL, 0, &weaker, NULL, 0, &rng, &chosen[k], err, sizeof err),
                                  ENGINE_OK);
            CU_ASSERT_TRUE(chosen[k] == three.lines[1].pv[0] || chosen[k] == three.lines[2].pv[0]);
        }
        CU_ASSERT_EQUAL(chosen[0], chosen[1]);
    }
}

/* Times one level_move of a level capped at 5 s from the start position. */
static long timed_move(const engine_limits_t *clock, uint64_t deadline_ms)
{
    level_t slow = {.movetime_ms = 5000};
    position_t start;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &start));
    uint64_t rng = 3;
    move_t move;
    char err[256];
    long begin = tests_monotonic_ms();
    engine_status_t s = level_move(live_engine(), &start, NULL, 0, &slow, clock, deadline_ms, &rng, &move, err,
                                   sizeof err);
    long elapsed = tests_monotonic_ms() - begin;
    if (s != ENGINE_OK)
        fprintf(stderr, "\ntimed level_move: %s: %s\n", engine_status_name(s), err);
    CU_ASSERT_EQUAL(s, ENGINE_OK);
    CU_ASSERT_TRUE(movegen_is_legal(&start, move));
    return elapsed;
}

/* Under a clock a move takes remaining / 30 + increment (remaining /
 * (movestogo + 1) near a period's end), at most half of what is left: 100
 * ms of 3 s, and 100 ms of 200 ms however large the increment; a deadline
 * 200 ms away ends the move by then. (The bounds
 * leave room for a busy machine; the uncapped move would take 5 s.) */
static void test_the_clock_and_the_deadline_bound_the_think_time(void)
{
    engine_limits_t three_seconds = {.has_clock = true, .wtime_ms = 3000, .btime_ms = 60000};
    long elapsed = timed_move(&three_seconds, 0);
    CU_ASSERT_TRUE(elapsed >= 90);
    CU_ASSERT_TRUE(elapsed < 2500);
    engine_limits_t almost_flagged = {.has_clock = true, .wtime_ms = 200, .btime_ms = 60000, .winc_ms = 5000};
    CU_ASSERT_TRUE(timed_move(&almost_flagged, 0) < 2500);
    /* The last move of a period may take half of what is left: 1.5 s of 3 s. */
    engine_limits_t period_end = {.has_clock = true, .wtime_ms = 3000, .btime_ms = 60000, .movestogo = 1};
    CU_ASSERT_TRUE(timed_move(&period_end, 0) >= 1000);
    long begin = tests_monotonic_ms();
    CU_ASSERT_TRUE(timed_move(NULL, clock_now_ms() + 200) < 2500);
    CU_ASSERT_TRUE(tests_monotonic_ms() - begin >= 150);
    /* a deadline already past still answers a legal move (the engine is stopped at once) */
    CU_ASSERT_TRUE(timed_move(NULL, clock_now_ms() - 1) < 2500);
    CU_ASSERT_TRUE(engine_alive(engines[WHITE]));
}

/* The smoke test: level 6 and level 1 (node caps lowered to 20000)
 * play four games, colours alternated, from two openings; chessd's rules
 * judge, and a queen's worth of material ahead for ten plies wins. Level 6
 * must score at least 3.5 of 4. */
static void test_level_6_beats_level_1_clearly(void)
{
    static const char *const openings[] = {"e4 e5 Nf3 Nc6", "d4 d5 c4 e6"};
    level_t strong = quick(6, 20000), weak = quick(1, 20000);
    match_rules_t rules = {.max_plies = 300, .resign_material = 9, .resign_plies = 10};
    double strong_score = 0;
    for (int game = 0; game < 4; game++) {
        position_t start;
        CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &start));
        move_t opening[MATCH_OPENING_MAX];
        int count = match_opening(&start, openings[game / 2], opening);
        CU_ASSERT_EQUAL_FATAL(count, 4);
        bool strong_white = game % 2 == 0;
        const level_t *sides[COLOR_COUNT] = {strong_white ? &strong : &weak, strong_white ? &weak : &strong};
        match_result_t result;
        char err[256];
        engine_status_t s =
            match_play(engines, sides, &start, opening, count, 1000 + (uint64_t)game, &rules, &result, err, sizeof err);
        if (s != ENGINE_OK)
            fprintf(stderr, "\nsmoke game %d: %s: %s\n", game, engine_status_name(s), err);
        CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
        strong_score += strong_white ? result.white_score : 1.0 - result.white_score;
        CU_ASSERT_TRUE(result.plies > 0);
    }
    if (strong_score < 3.5)
        fprintf(stderr, "\nlevel 6 scored %.1f of 4 against level 1\n", strong_score);
    CU_ASSERT_TRUE(strong_score >= 3.5);
}

int test_levels_register(void)
{
    CU_pSuite suite = CU_add_suite("levels", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"the settings rise with the level", test_the_settings_rise_with_the_level},
        {"every setting has a cap and room for its pick", test_every_setting_has_a_cap_and_room_for_its_pick},
        {"a rating is searched to Stockfish's pick depth", test_a_rating_is_searched_to_stockfishs_pick_depth},
        {"the settings rise with the rating", test_the_settings_rise_with_the_rating},
        {"levels and ratings out of range are refused", test_levels_and_ratings_out_of_range_are_refused},
        {"a level is named for PGN", test_a_level_is_named_for_pgn},
        {"level_move answers a legal move in random games and Chess960",
         test_level_move_answers_a_legal_move_in_random_games_and_chess960},
        {"a Chess960 castling mate is played by level 8", test_a_chess960_castling_mate_is_played_by_level_8},
        {"one legal move is played without a search", test_one_legal_move_is_played_without_a_search},
        {"bad arguments and finished games are refused", test_bad_arguments_and_finished_games_are_refused},
        {"the same rng state draws the same moves", test_the_same_rng_state_draws_the_same_moves},
        {"a weaker line is drawn from the rng among the engine's lines",
         test_a_weaker_line_is_drawn_from_the_rng_among_the_engines_lines},
        {"the clock and the deadline bound the think time", test_the_clock_and_the_deadline_bound_the_think_time},
        {"level 6 beats level 1 clearly", test_level_6_beats_level_1_clearly},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (!CU_add_test(suite, tests[i].name, tests[i].fn))
            return CU_get_error();
    }
    return CUE_SUCCESS;
}
