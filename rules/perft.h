/* Perft: counts the leaf nodes of the legal move tree to a fixed depth, the
 * standard proof of a move generator. Bulk counting at the last ply: the
 * legal moves there are counted, not made. */
#ifndef CHESSD_RULES_PERFT_H
#define CHESSD_RULES_PERFT_H

#include "position.h"

/* Leaf count of the tree of depth `depth` below pos (depth 0 counts 1).
 * pos is used as scratch and restored before return. */
uint64_t perft_count(position_t *pos, int depth);

/* Per-root-move counts for depth >= 1: fills moves[] and counts[] (each
 * MOVE_LIST_MAX long, caller-owned) and returns the number of root moves. */
int perft_divide(position_t *pos, int depth, move_t *moves, uint64_t *counts);

#endif
