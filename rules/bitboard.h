/* Bitboard helpers: one bit per square, a1 is bit 0. Header-only so every hot
 * loop inlines them; the popcount is the compiler builtin, which the
 * performance-critical callers compile with hardware popcnt via target clones. */
#ifndef CHESSD_RULES_BITBOARD_H
#define CHESSD_RULES_BITBOARD_H

#include "types.h"

#define BB_FILE_A 0x0101010101010101ULL
#define BB_FILE_H (BB_FILE_A << 7)
#define BB_RANK_1 0xffULL
#define BB_RANK_8 (BB_RANK_1 << 56)
#define BB_DARK_SQUARES 0xAA55AA55AA55AA55ULL

/* Marks a hot entry point: compiled for x86-64-v3 (BMI2, popcnt), for popcnt
 * alone and for baseline x86-64, the loader picking what the CPU supports, so
 * one binary is both portable and fast. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(CHESSD_NO_CLONES)
#define RULES_HOT __attribute__((target_clones("arch=x86-64-v3", "popcnt", "default")))
#else
#define RULES_HOT
#endif

static inline bitboard_t bb_square(int sq) { return 1ULL << sq; }
static inline bool bb_has(bitboard_t b, int sq) { return (b >> sq) & 1; }
static inline int bb_lsb(bitboard_t b) { return __builtin_ctzll(b); }
static inline int bb_msb(bitboard_t b) { return 63 - __builtin_clzll(b); }
static inline int bb_count(bitboard_t b) { return __builtin_popcountll(b); }
static inline bool bb_more_than_one(bitboard_t b) { return (b & (b - 1)) != 0; }
static inline int bb_pop_lsb(bitboard_t *b)
{
    int sq = bb_lsb(*b);
    *b &= *b - 1;
    return sq;
}
static inline bitboard_t bb_rank(int rank) { return BB_RANK_1 << (8 * rank); }
static inline bitboard_t bb_file(int file) { return BB_FILE_A << file; }

/* Shift every bit one rank towards the opponent of `c`. */
static inline bitboard_t bb_forward(bitboard_t b, color_t c) { return c == WHITE ? b << 8 : b >> 8; }

#endif
