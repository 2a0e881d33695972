/* Engine games between two levels of play (api/engine/levels.h), judged by
 * chessd's own rules (rules/status.h): the game's own ends, and the 50-move
 * rule and threefold repetition as soon as either may be claimed. Material
 * may adjudicate, to keep games short (match_rules_t). Used by the levels
 * suite's smoke test and the strength benchmarks (tests/bench/engine_match.c,
 * variant_levels.c); no CUnit here. */
#ifndef CHESSD_TESTS_SUPPORT_MATCH_H
#define CHESSD_TESTS_SUPPORT_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../../api/engine/levels.h"

enum { MATCH_PLIES_MAX = 600, MATCH_OPENING_MAX = 40 };

/* In standard chess material adjudicates: a side ahead by resign_material
 * (pawn 1, knight and bishop 3, rook 5, queen 9) after resign_plies plies in
 * a row wins, and at max_plies the side ahead by 3 or more wins, else it is
 * a draw. In a variant, where material means something else (antichess,
 * horde, crazyhouse's pockets), max_plies is a draw. */
typedef struct {
    int max_plies;       /* plies after the opening, 1..MATCH_PLIES_MAX */
    int resign_material; /* 0: no adjudication before max_plies */
    int resign_plies;
} match_rules_t;

typedef enum {
    MATCH_END_CHECKMATE = 0,
    MATCH_END_STALEMATE,
    MATCH_END_DRAWN,      /* insufficient material, the 75-move rule, fivefold repetition */
    MATCH_END_FIFTY_MOVES,
    MATCH_END_REPETITION,
    MATCH_END_MATERIAL,   /* resign_material for resign_plies */
    MATCH_END_PLY_CAP,
    MATCH_END_VARIANT,    /* the variant's own end (variant.h) */
    MATCH_END_COUNT
} match_end_t;

typedef struct {
    double white_score; /* 1, 0.5 or 0 */
    match_end_t end;
    int plies;          /* played after the opening */
    int restarts;       /* engines restarted after a failure */
} match_result_t;

/* Plays a game from start after the opening moves (each legal in turn):
 * levels[c] plays colour c on engines[c] (NULL for a level that never
 * searches), each given "ucinewgame" first. Move choices draw from an
 * xorshift state seeded with seed. An engine that fails is restarted and
 * asked again, once per move; a second failure ends the call with its
 * status (the game then has no result). */
engine_status_t match_play(engine_t *engines[COLOR_COUNT], const level_t *levels[COLOR_COUNT],
                           const position_t *start, const move_t *opening, int opening_count, uint64_t seed,
                           const match_rules_t *rules, match_result_t *out, char *err, size_t err_size);

/* Reads an opening, moves in UCI or SAN separated by spaces, each legal in
 * turn from start, into out (MATCH_OPENING_MAX moves at most): the number
 * of moves, or -1 for an illegal or unreadable one or too many. */
int match_opening(const position_t *start, const char *line, move_t out[MATCH_OPENING_MAX]);

/* Material of colour c: pawn 1, knight and bishop 3, rook 5, queen 9. */
int match_material(const position_t *pos, color_t c);

/* Stable names: "checkmate", "stalemate", ... */
const char *match_end_name(match_end_t end);

#endif
