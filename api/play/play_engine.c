/* The computer of the local session (play_engine.h): the engine process, and
 * the random state level_move draws from, seeded from the kernel
 * (play_random.h). The game's moves reach the engine as move_t values
 * replayed from the session's move-list text, so it sees the repetitions. */
#include "play_engine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "play_random.h"

struct play_engine {
    engine_t *engine;
    bool chess960;
    uint64_t rng;  /* xorshift state, never 0 */
    move_t *moves; /* GAME_MAX_PLIES: the game's moves for a search */
};

/* A starting state for the level's random draws: the kernel's, else the clock and pid. */
static uint64_t seed(void)
{
    uint64_t s;
    if (!play_random_u64(&s))
        s = clock_now_us() ^ (uint64_t)getpid() << 40;
    return s ? s : 0x9e3779b97f4a7c15ull;
}

play_engine_t *play_engine_start(const char *path, bool chess960, char *err, size_t err_size)
{
    play_engine_t *pe = calloc(1, sizeof *pe);
    move_t *moves = malloc(sizeof *moves * GAME_MAX_PLIES);
    if (!pe || !moves) {
        free(pe);
        free(moves);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    pe->moves = moves;
    pe->chess960 = chess960;
    pe->rng = seed();
    engine_status_t status;
    pe->engine = engine_start(&(engine_options_t){ .path = path }, &status, err, err_size);
    if (!pe->engine || engine_new_game(pe->engine, chess960, err, err_size) != ENGINE_OK) {
        play_engine_free(pe);
        return NULL;
    }
    return pe;
}

void play_engine_free(play_engine_t *pe)
{
    if (!pe)
        return;
    engine_free(pe->engine);
    free(pe->moves);
    free(pe);
}

const char *play_engine_name(const play_engine_t *pe) { return engine_name(pe->engine); }

pid_t play_engine_pid(const play_engine_t *pe) { return engine_pid(pe->engine); }

/* The game's moves into pe->moves; their count, or -1 when line does not replay. */
static int game_moves(play_engine_t *pe, const game_t *g, const char *line, size_t length)
{
    int count = game_line_moves(&g->initial, line ? line : "", length, pe->moves, NULL, GAME_MAX_PLIES);
    return count == g->ply_count ? count : -1;
}

/* Whether a search that ended in status may be tried again on a restarted
 * engine: the statuses that leave it dead (uci.h), once the restart worked. */
static bool restarted(play_engine_t *pe, engine_status_t status, char *err, size_t err_size)
{
    if (status == ENGINE_OK || status == ENGINE_ENO_MOVES || status == ENGINE_EINVALID)
        return false;
    return engine_restart(pe->engine, err, err_size) == ENGINE_OK
           && engine_new_game(pe->engine, pe->chess960, err, err_size) == ENGINE_OK;
}

engine_status_t play_engine_move(play_engine_t *pe, const level_t *level, const game_t *g, const char *line,
                                 size_t length, move_t *out, char *err, size_t err_size)
{
    int count = game_moves(pe, g, line, length);
    if (count < 0) {
        snprintf(err, err_size, "the game's moves do not replay");
        return ENGINE_EINVALID;
    }
    engine_status_t status = ENGINE_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        status = level_move(pe->engine, &g->initial, pe->moves, count, level, NULL, 0, &pe->rng, out, err, err_size);
        if (!restarted(pe, status, err, err_size))
            break;
    }
    return status;
}

engine_status_t play_engine_hint(play_engine_t *pe, const game_t *g, const char *line, size_t length,
                                 play_hint_t *out, char *err, size_t err_size)
{
    int count = game_moves(pe, g, line, length);
    if (count < 0) {
        snprintf(err, err_size, "the game's moves do not replay");
        return ENGINE_EINVALID;
    }
    engine_status_t status = ENGINE_OK;
    engine_result_t result;
    for (int attempt = 0; attempt < 2; attempt++) {
        engine_limits_t limits = { .nodes = PLAY_HINT_NODES, .deadline_ms = clock_now_ms() + PLAY_HINT_MAX_MS };
        status = engine_set_strength(pe->engine, &(engine_strength_t){ 0 }, err, err_size); /* full strength */
        if (status == ENGINE_OK)
            status = engine_search(pe->engine, &g->initial, pe->moves, count, &limits, &result, err, err_size);
        if (!restarted(pe, status, err, err_size))
            break;
    }
    if (status != ENGINE_OK)
        return status;
    *out = (play_hint_t){ .move = result.bestmove };
    if (result.line_count > 0) {
        out->is_mate = result.lines[0].is_mate;
        out->value = result.lines[0].value;
    }
    return ENGINE_OK;
}
