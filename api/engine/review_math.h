/* The arithmetic of a game's review, as Lichess publishes it: winning
 * chances and win% of an evaluation, a move's judgement, and each side's
 * average centipawn loss and accuracy. Pure: no allocation, no I/O, safe on
 * any thread. Evaluations are from White's point of view throughout. */
#ifndef CHESSD_API_ENGINE_REVIEW_MATH_H
#define CHESSD_API_ENGINE_REVIEW_MATH_H

#include <stdbool.h>

/* An evaluation: centipawns, or a mate in `value` moves (positive: White
 * mates; negative: Black mates; 0 with is_mate: the side to move is mated,
 * mated_white says whether that is White). */
typedef struct {
    bool is_mate;
    int value;
    bool mated_white;
} review_eval_t;

typedef enum {
    REVIEW_JUDGEMENT_NONE = 0,
    REVIEW_JUDGEMENT_INACCURACY,
    REVIEW_JUDGEMENT_MISTAKE,
    REVIEW_JUDGEMENT_BLUNDER,
    REVIEW_JUDGEMENT_COUNT
} review_judgement_t;

enum { REVIEW_CP_CEILING = 1000 };

/* The evaluation as centipawns for White, clamped to +-REVIEW_CP_CEILING
 * (a mate is the ceiling of its winner). */
int review_eval_cp(const review_eval_t *e);
/* Winning chances, -1..1, of cp centipawns (clamped first). */
double review_winning_chances(int cp);
/* Win%, 0..100, of cp centipawns: 50 + 50 * winning chances. */
double review_win_percent(int cp);
/* A move's accuracy, 0..100, from the mover's win% before and after it. */
double review_move_accuracy(double win_before, double win_after);

/* The judgement of a move by white_moved's side from before to after. */
review_judgement_t review_judge(const review_eval_t *before, const review_eval_t *after, bool white_moved);
/* "inaccuracy", "mistake", "blunder"; NULL for none. */
const char *review_judgement_name(review_judgement_t j);

/* Each side's figures: average centipawn loss and accuracy (0..100); a
 * side that made no move has moves 0 and both figures 0. */
typedef struct {
    double acpl, accuracy;
    int moves;
} review_side_t;

/* The figures of a game of count plies whose evaluations after each ply
 * are evals[1..count] and before the first evals[0]; white_first: White
 * made the first ply. Out: [0] White, [1] Black. */
void review_sides(const review_eval_t *evals, int count, bool white_first, review_side_t out[2]);

#endif
