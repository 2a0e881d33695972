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
/* The variants' parts, drawn after the keys above so that those stay as
 * they were: the rule set, pocket counts, checks given, S-chess gates and
 * crazyhouse's promoted pieces. Every one is 0 in standard chess. */
enum { ZOBRIST_POCKET_MAX = 64 };
extern uint64_t zobrist_variant[VARIANT_COUNT];
extern uint64_t zobrist_pocket[COLOR_COUNT][PIECE_TYPE_COUNT][ZOBRIST_POCKET_MAX];
extern uint64_t zobrist_checks[COLOR_COUNT][4];
extern uint64_t zobrist_gate[SQ_COUNT];
extern uint64_t zobrist_promoted[SQ_COUNT];

void zobrist_init(void);

#endif
