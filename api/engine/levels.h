/* Levels of play against the computer: what each level 1..8, and each
 * rating of the "elo" range, asks of the engine (strength options, search
 * caps), and how a move is chosen from its answer. The weakest levels
 * sometimes play a worse move on purpose, from the MultiPV lines or among
 * all legal moves. tests/bench/engine_match measures the strength of each
 * setting; its figures fill api/engine/README.md's table of levels. */
#ifndef CHESSD_API_ENGINE_LEVELS_H
#define CHESSD_API_ENGINE_LEVELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../rules/rules.h"
#include "uci.h"

enum {
    LEVEL_MIN = 1,
    LEVEL_MAX = 8,
    LEVEL_NAME_MAX = 32,
};

/* The documented range of "engine": {"elo": N}. */
extern const int level_elo_min, level_elo_max;

typedef struct {
    int level;                 /* 1..8, or 0 for a rating */
    int elo;                   /* the rating asked for (0 for a level) */
    engine_strength_t strength;
    int depth;                 /* search caps: 0 none (at least one is set) */
    uint64_t nodes;
    int movetime_ms;           /* the most one move may take (also the cap under a clock) */
    int multipv;               /* lines asked for, to choose a weaker move among */
    int random_permille;       /* chance in 1000 that a move is drawn among all legal moves */
    int weaker_permille;       /* chance in 1000 that a line other than the best is played */
} level_t;

/* The settings of level (1..8); false when out of range. */
bool level_of(int level, level_t *out);
/* The settings of level (1..8) in variant: level_of's in standard chess;
 * in the other variants the variant engine's own Skill Level and node
 * caps, on the same 1..8 scale but measured only against each other
 * (tests/bench/variant_levels.c: each level beats the one below; no
 * rating is claimed). false when out of range. */
bool level_of_variant(int level, variant_t variant, level_t *out);
/* The settings for a rating within [level_elo_min, level_elo_max]; false otherwise. */
bool level_of_elo(int elo, level_t *out);
/* "chessd level 3" or "chessd 1500": the engine player's name in PGN tags. */
void level_name(const level_t *level, char *out, size_t size);

/* Chooses the engine's move in the position reached from start by moves:
 * sets the level's strength, searches within its caps (and, with clock, the
 * engine's clock: clock's has_clock/wtime/btime/winc/binc, the think time
 * capped by movetime_ms), then picks the move as the level says, drawing
 * from *rng (xorshift state, never 0). deadline_ms (absolute clock_now_ms
 * time, 0: from the caps) bounds the whole call. The move is always legal.
 * Under a clock a move takes at most the side's remaining time / 30 plus
 * its increment, and never more than half of what is left. A position with
 * one legal move, and a move drawn at random (random_permille), are played
 * without a search: e may be NULL for a level that never searches
 * (random_permille 1000). ENGINE_ENO_MOVES when the game is over;
 * ENGINE_EINVALID for an illegal move in the list, a setting out of range
 * or a negative clock; any other failure is the engine's (uci.h). */
engine_status_t level_move(engine_t *e, const position_t *start, const move_t *moves, int move_count,
                           const level_t *level, const engine_limits_t *clock, uint64_t deadline_ms, uint64_t *rng,
                           move_t *out, char *err, size_t err_size);

#endif
