/* Chess960 start positions by Scharnagl number: 0..959, 518 being the
 * standard position. The number's digits place the light-squared bishop,
 * the dark-squared bishop, the queen and the knights (one of ten pairs); the
 * rooks and the king fill the last three squares as R K R. Pure: no malloc,
 * no I/O, no state. */
#ifndef CHESSD_RULES_CHESS960_H
#define CHESSD_RULES_CHESS960_H

#include "position.h"

enum { CHESS960_COUNT = 960, CHESS960_STANDARD = 518 };

/* Writes the piece types of start `number`'s first rank, a-file first (the
 * black rank mirrors it). False, rank untouched, when number is not in
 * 0..CHESS960_COUNT-1. */
bool chess960_back_rank(int number, piece_type_t rank[FILE_COUNT]);

/* Sets *pos to start `number`: pawns on their second ranks, both back ranks
 * as chess960_back_rank() gives, all four castling rights, white to move, no
 * en passant, counters 0 and 1, pos->chess960 set. False when number is out
 * of range (then *pos is untouched). */
bool chess960_start(int number, position_t *pos);

/* The number of the start pos is, or -1 when pos is none of the 960 starts
 * (another piece, a missing castling right, black to move, an en passant
 * square or counters other than 0 and 1). pos->chess960 is not looked at:
 * the standard start position is 518 in either mode. */
int chess960_number(const position_t *pos);

#endif
