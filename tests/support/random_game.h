/* Seeded random games for the differential suites (Stockfish, chess.js). An
 * xorshift64 generator gives the same games everywhere from a fixed seed; a
 * move picker leans, by a suite's own table, towards the moves it must see
 * (promotions, en passant, castling, checks...). The caller owns the state. */
#ifndef CHESSD_TESTS_SUPPORT_RANDOM_GAME_H
#define CHESSD_TESTS_SUPPORT_RANDOM_GAME_H

#include <stddef.h>

#include "tests.h"

/* Kinds of move a preference can ask for. */
typedef enum {
    RANDOM_GAME_PICK_MATE,
    RANDOM_GAME_PICK_PROMOTION,
    RANDOM_GAME_PICK_EN_PASSANT,
    RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN, /* a double step that en passant may answer */
    RANDOM_GAME_PICK_DISAMBIGUATED,           /* its SAN needs a file, rank or square */
    RANDOM_GAME_PICK_CHECK,
    RANDOM_GAME_PICK_CASTLING,
    RANDOM_GAME_PICK_CAPTURE,
    RANDOM_GAME_PICK_PAWN,
    RANDOM_GAME_PICK_COUNT
} random_game_pick_t;

/* "percent of the time, play a move of this kind when there is one". */
typedef struct {
    random_game_pick_t kind;
    int percent;
} random_game_preference_t;

/* How a suite's games are played. */
typedef struct {
    const random_game_preference_t *preferences; /* tried in order */
    size_t preference_count;
    int ply_max;                                 /* a game stops after this many plies */
} random_game_style_t;

/* Sees each position of a game with its legal moves; returns whether the
 * game goes on. */
typedef bool (*random_game_visit_t)(const position_t *pos, const move_list_t *legal, void *context);

/* A number in [0, bound) from the generator state *rng (not 0); bound > 0. */
int random_game_below(uint64_t *rng, int bound);

/* Whether move (legal in pos) is of the given kind. legal, the list move
 * comes from, is read only for RANDOM_GAME_PICK_DISAMBIGUATED and may be NULL
 * for the other kinds. */
bool random_game_move_is(const position_t *pos, const move_list_t *legal, move_t move, random_game_pick_t kind);

/* A random move of legal (count > 0): each preference in turn, with its
 * percent chance, picks a random move of its kind when there is one; failing
 * all, any move. */
move_t random_game_pick(const position_t *pos, const move_list_t *legal, const random_game_style_t *style,
                        uint64_t *rng);

/* Plays one game from start with random_game_pick(), calling visit on every
 * position from start on; the game ends when no move is legal, after
 * style->ply_max plies, or when visit returns false. */
void random_game_play(position_t start, const random_game_style_t *style, uint64_t *rng, random_game_visit_t visit,
                      void *context);

#endif
