/* Perft: counts the leaf nodes of the legal move tree to a fixed depth, the
 * standard proof of a move generator. Bulk counting at the last ply: the
 * legal moves there are counted, not made. The budgeted variants bound the
 * work of one call (every position visited, not only the leaves) so a server
 * can refuse a tree that is too big; the budget is caller-owned state. */
#ifndef CHESSD_RULES_PERFT_H
#define CHESSD_RULES_PERFT_H

#include "position.h"

typedef enum { PERFT_OK = 0, PERFT_OVER_BUDGET, PERFT_STATUS_COUNT } perft_status_t;

/* The work allowance of a budgeted perft. Work is counted in nodes: every
 * position of the tree is one, the root, the interior and the leaves (a node
 * one ply above the leaves adds 1 plus its number of legal moves, which are
 * bulk-counted). A complete count to depth d visits perft(0) + ... + perft(d)
 * nodes. One budget per call (or per chain of calls sharing it); never share
 * one between threads. */
typedef struct {
    uint64_t limit;   /* the most nodes the call may visit */
    uint64_t visited; /* nodes visited so far; start at 0, only ever grows */
} perft_budget_t;

/* Leaf count of the tree of depth `depth` below pos (depth 0 counts 1).
 * pos is used as scratch and restored before return. */
uint64_t perft_count(position_t *pos, int depth);

/* Per-root-move counts for depth >= 1: fills moves[] and counts[] (each
 * MOVE_LIST_MAX long, caller-owned) and returns the number of root moves. */
int perft_divide(position_t *pos, int depth, move_t *moves, uint64_t *counts);

/* perft_count within budget: adds the nodes it visits to budget->visited and
 * stops as soon as visited passes budget->limit, checking after every node
 * above the last ply, so visited ends at most 1 + MOVE_LIST_MAX past limit.
 * Returns PERFT_OK with the leaf count in *leaves, or PERFT_OVER_BUDGET with
 * the leaves counted before stopping (an incomplete count, not to be shown as
 * the perft). pos is restored either way. */
perft_status_t perft_count_budgeted(position_t *pos, int depth, perft_budget_t *budget, uint64_t *leaves);

/* perft_divide within budget (depth >= 1), one budget shared by all root
 * moves: *root_moves, moves[] and counts[] as perft_divide; on
 * PERFT_OVER_BUDGET the counts are incomplete. */
perft_status_t perft_divide_budgeted(position_t *pos, int depth, perft_budget_t *budget, move_t *moves,
                                     uint64_t *counts, int *root_moves);

#endif
