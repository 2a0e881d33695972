/* Perft with make/unmake and bulk counting at depth 1. */
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
    uint64_t nodes = 0;
    for (int i = 0; i < list.count; i++) {
        position_undo_t undo;
        position_make(pos, list.moves[i], &undo);
        nodes += depth == 2 ? (uint64_t)movegen_count(pos) : perft_count(pos, depth - 1);
        position_unmake(pos, list.moves[i], &undo);
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
