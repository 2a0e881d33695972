/* Perft with copy-make (each move made on a copy of the position, so no
 * unmake) and bulk counting at depth 1; in standard chess the last two plies
 * play their moves on bitboards alone (movegen_count_children). perft_count
 * is the hot loop benchmarked against Stockfish; the budgeted walk is a
 * separate function so that loop carries no budget checks. */
#include "perft.h"

#include "movegen.h"


RULES_HOT uint64_t perft_count(position_t *pos, int depth)
{
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return (uint64_t)movegen_count(pos);
    move_list_t list;
    movegen_legal(pos, &list);
    if (depth == 2 && pos->variant == VARIANT_STANDARD)
        return movegen_count_children(pos, &list);
    uint64_t nodes = 0;
    /* A copy made for each move instead of an unmake: the copy is cheaper. */
    for (int i = 0; i < list.count; i++) {
        position_t child = *pos;
        position_undo_t undo;
        position_make(&child, list.moves[i], &undo);
        nodes += depth == 2 ? (uint64_t)movegen_count(&child) : perft_count(&child, depth - 1);
    }
    return nodes;
}

int perft_divide(position_t *pos, int depth, move_t *moves, uint64_t *counts)
{
    move_list_t list;
    movegen_legal(pos, &list);
    for (int i = 0; i < list.count; i++) {
        position_undo_t undo;
        moves[i] = list.moves[i];
        position_make(pos, list.moves[i], &undo);
        counts[i] = perft_count(pos, depth - 1);
        position_unmake(pos, list.moves[i], &undo);
    }
    return list.count;
}

static bool over_budget(const perft_budget_t *budget)
{
    return budget->visited > budget->limit;
}

/* The leaves below pos, adding this node and every node below it to
 * budget->visited; gives up, pos restored, once the budget is passed
 * (checked before each interior node's move generation and after each child). */
static RULES_HOT uint64_t count_within(position_t *pos, int depth, perft_budget_t *budget)
{
    if (depth <= 0) {
        budget->visited++;
        return 1;
    }
    if (depth == 1) {
        uint64_t moves = (uint64_t)movegen_count(pos);
        budget->visited += 1 + moves;
        return moves;
    }
    budget->visited++;
    if (over_budget(budget))
        return 0;
    move_list_t list;
    movegen_legal(pos, &list);
    uint64_t leaves = 0;
    for (int i = 0; i < list.count && !over_budget(budget); i++) {
        position_t child = *pos;
        position_undo_t undo;
        position_make(&child, list.moves[i], &undo);
        leaves += count_within(&child, depth - 1, budget);
    }
    return leaves;
}

perft_status_t perft_count_budgeted(position_t *pos, int depth, perft_budget_t *budget, uint64_t *leaves)
{
    *leaves = count_within(pos, depth, budget);
    return over_budget(budget) ? PERFT_OVER_BUDGET : PERFT_OK;
}

perft_status_t perft_divide_budgeted(position_t *pos, int depth, perft_budget_t *budget, move_t *moves,
                                     uint64_t *counts, int *root_moves)
{
    move_list_t list;
    budget->visited++;
    movegen_legal(pos, &list);
    *root_moves = list.count;
    for (int i = 0; i < list.count; i++) {
        position_undo_t undo;
        moves[i] = list.moves[i];
        counts[i] = 0;
        if (over_budget(budget))
            continue;
        position_make(pos, list.moves[i], &undo);
        counts[i] = count_within(pos, depth - 1, budget);
        position_unmake(pos, list.moves[i], &undo);
    }
    return over_budget(budget) ? PERFT_OVER_BUDGET : PERFT_OK;
}
