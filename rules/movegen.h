/* Fully legal move generation with check and pin masks: every move produced is
 * legal, nothing is generated and then tested by making it. Results go into a
 * caller-owned buffer; nothing here allocates or keeps state. */
#ifndef CHESSD_RULES_MOVEGEN_H
#define CHESSD_RULES_MOVEGEN_H

#include "position.h"

/* Fills list with every legal move of the side to move; returns the count. */
int movegen_legal(const position_t *pos, move_list_t *list);
/* Number of legal moves, without listing them (used by perft at the leaves). */
int movegen_count(const position_t *pos);
/* Standard chess only: the sum, over the legal moves in list (those of
 * pos), of the number of legal moves after each; perft's last two plies.
 * The moves are not made on a full position (no key, board or counters). */
uint64_t movegen_count_children(const position_t *pos, const move_list_t *list);
/* Standard chess's generator whatever pos->variant says (out NULL: counts):
 * for the variants whose board moves are chess's (crazyhouse, king of the
 * hill, three-check), which add to it or end sooner. */
int movegen_standard(const position_t *pos, move_t *out);
/* The legal moves that move a piece already on the board: all of them but
 * crazyhouse's drops (SAN that names no drop is matched against these). */
int movegen_legal_board(const position_t *pos, move_list_t *list);
/* Whether move is among the legal moves of pos. */
bool movegen_is_legal(const position_t *pos, move_t move);

#endif
