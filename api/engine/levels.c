/* Levels of play (levels.h): one table of what levels 1..8 ask of the
 * engine, the rating range of {"elo": N}, and level_move(), which searches
 * within a level's caps and picks the move the level plays. The strength of
 * every setting here is measured by tests/bench/engine_match.c, whose full
 * run fills api/engine/README.md's table of levels: change a setting, run it
 * again. */
#include "levels.h"

#include <stdio.h>
#include <string.h>

#include "../../rules/base/clock.h"

enum {
    /* Stockfish 15.1's lowest UCI_Elo: below it, a rating is played by
     * weakening the floor's play (random and weaker moves). */
    UCI_ELO_FLOOR = 1350,
    /* The budget of a rating of the "elo" range. */
    ELO_NODES = 400000,
    ELO_MOVETIME_MS = 1000,
    ELO_MULTIPV = 4, /* the lines a weakened rating chooses among */
    /* Under a clock, a move takes at most remaining / CLOCK_SHARE + increment,
     * and never more than half of what is left. */
    CLOCK_SHARE = 30,
    /* The most a level may cap a move at, and the longest clock time read. */
    MOVETIME_MAX_MS = 60000,
    DEPTH_MAX = 245,
    /* A search asked to end by a caller's deadline ends this much before it. */
    DEADLINE_MARGIN_MS = 20,
};

const int level_elo_min = 800, level_elo_max = 2850;

/* The lowest UCI_Elo at which Stockfish 15.1's skill reaches 1, 2 ... 20
 * (its Skill(): skill = ((elo - 1346.6) / 143.4) ^ (1 / 0.806), picked at
 * depth 1 + (int)skill; computed with that same double arithmetic). */
static const int skill_thresholds[] = {1490, 1598, 1695, 1785, 1872, 1955, 2035, 2113, 2190, 2264,
                                       2338, 2410, 2481, 2550, 2619, 2687, 2754, 2820, 2886, 2951};

/* The depth at which Stockfish 15.1 picks its move for a UCI_Elo. It plays
 * a UCI_Elo by picking, at depth 1 + its skill, a move among its four best
 * (at random, weighted by their scores): a depth cap at that depth keeps the
 * pick and spends nothing after it. */
static int elo_pick_depth(int elo)
{
    int skill = 0;
    while (skill < (int)(sizeof skill_thresholds / sizeof skill_thresholds[0]) && elo >= skill_thresholds[skill])
        skill++;
    return 1 + skill;
}

#define LIMITED(uci) {.limit_strength = true, .uci_elo = (uci)}

/* Levels 1..8. Node caps make a level as strong on any machine; movetime_ms
 * is the cap a slow machine (or a clock) meets first. Levels 1 and 2 play
 * the UCI_Elo floor with random and weaker moves; 3..7 are UCI_Elo ratings
 * searched to their pick depth; 8 is full strength. */
static const level_t levels[LEVEL_MAX] = {
    {.level = 1, .strength = LIMITED(1350), .depth = 1, .nodes = 20000, .movetime_ms = 50, .multipv = 4,
     .random_permille = 250, .weaker_permille = 250},
    {.level = 2, .strength = LIMITED(1350), .depth = 1, .nodes = 20000, .movetime_ms = 100, .multipv = 4,
     .random_permille = 100, .weaker_permille = 150},
    {.level = 3, .strength = LIMITED(1400), .depth = 1, .nodes = 50000, .movetime_ms = 150, .multipv = 1},
    {.level = 4, .strength = LIMITED(1700), .depth = 4, .nodes = 50000, .movetime_ms = 200, .multipv = 1},
    {.level = 5, .strength = LIMITED(2000), .depth = 7, .nodes = 100000, .movetime_ms = 300, .multipv = 1},
    {.level = 6, .strength = LIMITED(2300), .depth = 11, .nodes = 150000, .movetime_ms = 400, .multipv = 1},
    {.level = 7, .strength = LIMITED(2600), .depth = 15, .nodes = 200000, .movetime_ms = 500, .multipv = 1},
    {.level = 8, .nodes = 400000, .movetime_ms = 1000, .multipv = 1},
};

/* Below the UCI_Elo floor a rating is played as the floor with a share of
 * random and weaker moves, interpolated between these points by rating:
 * the measured ratings of levels 1 and 2 (tests/bench/engine_match.c; the
 * table of levels in api/engine/README.md) and the floor itself. */
typedef struct {
    int elo;
    int random_permille, weaker_permille;
} weak_point_t;

static const weak_point_t weak_points[] = {
    {708, 250, 250},
    {975, 100, 150},
    {UCI_ELO_FLOOR, 0, 0},
};

/* From the floor up, a rating is sent as the UCI_Elo that plays it:
 * Stockfish's strength is not linear in its UCI_Elo between the anchors
 * (it changes its pick depth in steps), so these are the ratings the
 * UCI_Elo settings of the levels and of "elo" measured against the anchors
 * (tests/bench/engine_match.c), the anchors themselves exact; between two
 * points the UCI_Elo is interpolated, above the last it is the rating.
 * From 1490 to 1597 Stockfish picks at depth 2 and plays about 1420 to
 * 1500; at 1598 it picks at depth 3 and plays about 1600: ratings from
 * 1500 to 1600 play near one end of that step. */
typedef struct {
    int rating, uci_elo;
} calibration_t;

static const calibration_t calibration[] = {
    {UCI_ELO_FLOOR, UCI_ELO_FLOOR}, {1414, 1400}, {1435, 1500}, {1467, 1534}, {1477, 1560}, {1495, 1590},
    {1600, 1600}, {1655, 1700}, {1850, 1850}, {2037, 2000}, {2100, 2100}, {2359, 2300}, {2400, 2400},
};

/* The UCI_Elo that plays rating elo (>= the floor). */
static int calibrated_uci_elo(int elo)
{
    size_t n = sizeof calibration / sizeof calibration[0];
    if (elo >= calibration[n - 1].rating)
        return elo;
    size_t i = 0;
    while (i + 2 < n && elo >= calibration[i + 1].rating)
        i++;
    const calibration_t *low = &calibration[i], *high = &calibration[i + 1];
    return low->uci_elo + (high->uci_elo - low->uci_elo) * (elo - low->rating) / (high->rating - low->rating);
}

bool level_of(int level, level_t *out)
{
    if (level < LEVEL_MIN || level > LEVEL_MAX || !out)
        return false;
    *out = levels[level - LEVEL_MIN];
    return true;
}

#define SKILL(n) {.skill_level = (n)}

/* Levels 1..8 in the variants, on the variant engine (Fairy-Stockfish):
 * no UCI_Elo there is calibrated for a variant, so each level is a Skill
 * Level (which picks among the engine's best lines at depth 1 + skill, the
 * weaker the lower) and a node cap; levels 1 and 2 add random and weaker
 * moves as in chess. The depth cap is the pick's depth: nothing is spent
 * after it. From level 5 up the node cap is what decides, about 2.7 times
 * the one below; the time cap leaves room for Fairy-Stockfish's 300k nodes
 * a second (at 400 ms and 500 ms for levels 6 and 7 it was the time that
 * capped both, and 7 did not beat 6). tests/bench/variant_levels.c checks
 * each level against the one below in every variant; change a setting,
 * run it again. */
static const level_t variant_levels[LEVEL_MAX] = {
    {.level = 1, .strength = SKILL(1), .depth = 1, .nodes = 2000, .movetime_ms = 50, .multipv = 4,
     .random_permille = 500, .weaker_permille = 300},
    {.level = 2, .strength = SKILL(1), .depth = 2, .nodes = 5000, .movetime_ms = 100, .multipv = 4,
     .random_permille = 150, .weaker_permille = 200},
    {.level = 3, .strength = SKILL(4), .depth = 5, .nodes = 20000, .movetime_ms = 150, .multipv = 1},
    {.level = 4, .strength = SKILL(6), .depth = 7, .nodes = 40000, .movetime_ms = 200, .multipv = 1},
    {.level = 5, .strength = SKILL(9), .depth = 10, .nodes = 50000, .movetime_ms = 400, .multipv = 1},
    {.level = 6, .strength = SKILL(13), .depth = 14, .nodes = 130000, .movetime_ms = 1000, .multipv = 1},
    {.level = 7, .strength = SKILL(17), .depth = 18, .nodes = 350000, .movetime_ms = 2000, .multipv = 1},
    {.level = 8, .nodes = 1000000, .movetime_ms = 3000, .multipv = 1},
};

bool level_of_variant(int level, variant_t variant, level_t *out)
{
    if (variant == VARIANT_STANDARD)
        return level_of(level, out);
    if (level < LEVEL_MIN || level > LEVEL_MAX || !out || (unsigned)variant >= VARIANT_COUNT)
        return false;
    *out = variant_levels[level - LEVEL_MIN];
    return true;
}

/* Linear interpolation of a permille between two weak points. */
static int interpolate(int elo, const weak_point_t *low, const weak_point_t *high, int low_value, int high_value)
{
    int span = high->elo - low->elo;
    return low_value + (high_value - low_value) * (elo - low->elo) / span;
}

bool level_of_elo(int elo, level_t *out)
{
    if (elo < level_elo_min || elo > level_elo_max || !out)
        return false;
    int uci_elo = elo < UCI_ELO_FLOOR ? UCI_ELO_FLOOR : calibrated_uci_elo(elo);
    *out = (level_t){
        .elo = elo,
        .strength = LIMITED(uci_elo),
        .depth = elo_pick_depth(uci_elo),
        .nodes = ELO_NODES,
        .movetime_ms = ELO_MOVETIME_MS,
        .multipv = 1,
    };
    if (elo >= UCI_ELO_FLOOR)
        return true;
    size_t i = 0;
    while (i + 2 < sizeof weak_points / sizeof weak_points[0] && elo >= weak_points[i + 1].elo)
        i++;
    const weak_point_t *low = &weak_points[i], *high = &weak_points[i + 1];
    out->random_permille = interpolate(elo, low, high, low->random_permille, high->random_permille);
    out->weaker_permille = interpolate(elo, low, high, low->weaker_permille, high->weaker_permille);
    out->multipv = ELO_MULTIPV;
    return true;
}

void level_name(const level_t *level, char *out, size_t size)
{
    if (!out || size == 0)
        return;
    if (level && level->level)
        snprintf(out, size, "chessd level %d", level->level);
    else if (level && level->elo)
        snprintf(out, size, "chessd %d", level->elo);
    else
        snprintf(out, size, "chessd");
}

/* xorshift64: the next value of *state (never 0 when it starts non-zero). */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* A draw in 0..bound-1 (bound > 0). */
static int rng_below(uint64_t *state, int bound)
{
    return (int)(rng_next(state) % (uint64_t)bound);
}

static engine_status_t fail(engine_status_t status, char *err, size_t err_size, const char *message)
{
    if (err && err_size)
        snprintf(err, err_size, "%s", message);
    return status;
}

static bool level_valid(const level_t *l)
{
    return l->level >= 0 && l->level <= LEVEL_MAX && l->depth >= 0 && l->depth <= DEPTH_MAX &&
           l->movetime_ms >= 1 && l->movetime_ms <= MOVETIME_MAX_MS && l->multipv >= 0 &&
           l->multipv <= ENGINE_MULTIPV_MAX && l->random_permille >= 0 && l->random_permille <= 1000 &&
           l->weaker_permille >= 0 && l->weaker_permille <= 1000;
}

/* The think time: movetime_ms, or under a clock the side's share of its
 * time when that is less. -1 when a clock time is negative. */
static long think_time_ms(const level_t *level, const engine_limits_t *clock, color_t side)
{
    long think = level->movetime_ms;
    if (!clock || !clock->has_clock)
        return think;
    long remaining = side == WHITE ? clock->wtime_ms : clock->btime_ms;
    long increment = side == WHITE ? clock->winc_ms : clock->binc_ms;
    if (remaining < 0 || increment < 0)
        return -1;
    if (remaining > MOVETIME_MAX_MS * 1000L)
        remaining = MOVETIME_MAX_MS * 1000L;
    if (increment > MOVETIME_MAX_MS)
        increment = MOVETIME_MAX_MS;
    /* A period's last moves share what is left of it, a reserve kept. */
    long moves = clock->movestogo > 0 && clock->movestogo < CLOCK_SHARE ? clock->movestogo + 1 : CLOCK_SHARE;
    long share = remaining / moves + increment;
    if (share > remaining / 2)
        share = remaining / 2;
    if (share < 1)
        share = 1;
    return share < think ? share : think;
}

/* The position reached from start by moves, each checked legal in turn. */
static bool replay(const position_t *start, const move_t *moves, int move_count, position_t *out)
{
    if (move_count < 0 || (move_count > 0 && !moves))
        return false;
    *out = *start;
    for (int i = 0; i < move_count; i++) {
        if (!movegen_is_legal(out, moves[i]))
            return false;
        position_undo_t undo;
        position_make(out, moves[i], &undo);
    }
    return true;
}

/* Searches pos (reached by moves) at the level's strength and caps, then
 * plays a weaker line with the level's chance. */
static engine_status_t search_move(engine_t *e, const position_t *start, const move_t *moves, int move_count,
                                   const position_t *pos, const level_t *level, long think_ms,
                                   uint64_t deadline_ms, uint64_t *rng, move_t *out, char *err, size_t err_size)
{
    engine_limits_t limits = {
        .depth = level->depth,
        .nodes = level->nodes,
        .movetime_ms = (int)think_ms,
        .multipv = level->multipv ? level->multipv : 1,
        .deadline_ms = deadline_ms,
    };
    if (deadline_ms) {
        uint64_t now = clock_now_ms();
        long left = deadline_ms > now + DEADLINE_MARGIN_MS ? (long)(deadline_ms - now - DEADLINE_MARGIN_MS) : 1;
        if (limits.movetime_ms > left)
            limits.movetime_ms = (int)left;
    }
    engine_status_t s = engine_set_strength(e, &level->strength, err, err_size);
    if (s != ENGINE_OK)
        return s;
    engine_result_t result;
    s = engine_search(e, start, moves, move_count, &limits, &result, err, err_size);
    if (s != ENGINE_OK)
        return s;
    move_t chosen = result.bestmove;
    bool weaker = rng_below(rng, 1000) < level->weaker_permille;
    if (weaker && result.line_count >= 2)
        chosen = result.lines[1 + rng_below(rng, result.line_count - 1)].pv[0];
    *out = movegen_is_legal(pos, chosen) ? chosen : result.bestmove;
    return ENGINE_OK;
}

engine_status_t level_move(engine_t *e, const position_t *start, const move_t *moves, int move_count,
                           const level_t *level, const engine_limits_t *clock, uint64_t deadline_ms, uint64_t *rng,
                           move_t *out, char *err, size_t err_size)
{
    if (!start || !level || !rng || !*rng || !out)
        return fail(ENGINE_EINVALID, err, err_size, "no position, level, random state or move");
    *out = MOVE_NONE;
    if (!level_valid(level))
        return fail(ENGINE_EINVALID, err, err_size, "a level setting is out of range");
    position_t pos;
    if (!replay(start, moves, move_count, &pos))
        return fail(ENGINE_EINVALID, err, err_size, "a move of the list is not legal");
    long think_ms = think_time_ms(level, clock, (color_t)pos.side_to_move);
    if (think_ms < 0)
        return fail(ENGINE_EINVALID, err, err_size, "a clock time is negative");
    move_list_t legal;
    movegen_legal(&pos, &legal);
    if (legal.count == 0)
        return fail(ENGINE_ENO_MOVES, err, err_size, "the position has no legal move");
    if (legal.count == 1) {
        *out = legal.moves[0];
        return ENGINE_OK;
    }
    if (rng_below(rng, 1000) < level->random_permille) {
        *out = legal.moves[rng_below(rng, legal.count)];
        return ENGINE_OK;
    }
    if (!e)
        return fail(ENGINE_EINVALID, err, err_size, "no engine");
    return search_move(e, start, moves, move_count, &pos, level, think_ms, deadline_ms, rng, out, err, err_size);
}
