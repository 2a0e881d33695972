/* Zobrist keys for position hashing. The keys come from a fixed seed, so a
 * position hashes to the same 64-bit value on every machine and every run:
 * keys may be stored (in Redis, in game histories) and compared later.
 * Written once by zobrist_init(); read-only afterwards. */
#ifndef CHESSD_RULES_ZOBRIST_H
#define CHESSD_RULES_ZOBRIST_H

#include "types.h"

extern uint64_t zobrist_piece_square[16][SQ_COUNT]; /* indexed by piece_t */
extern uint64_t zobrist_castle_rook[SQ_COUNT];      /* by castling rook square */
extern uint64_t zobrist_en_passant_file[FILE_COUNT];
extern uint64_t zobrist_black_to_move;

void zobrist_init(void);

#endif
