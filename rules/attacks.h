/* Attack tables: knight, king and pawn attacks, sliding attacks by magic
 * bitboards, and the between/line tables used for pins and checks.
 * attacks_init() fills them once (rules_init() calls it); after that they are
 * read-only and every lookup is safe on any thread. */
#ifndef CHESSD_RULES_ATTACKS_H
#define CHESSD_RULES_ATTACKS_H

#include "bitboard.h"

typedef struct {
    bitboard_t mask;
    bitboard_t magic;
    const bitboard_t *table;
    unsigned shift;
} attacks_magic_t;

extern attacks_magic_t attacks_rook_magic[SQ_COUNT];
extern attacks_magic_t attacks_bishop_magic[SQ_COUNT];
extern bitboard_t attacks_knight_table[SQ_COUNT];
extern bitboard_t attacks_king_table[SQ_COUNT];
extern bitboard_t attacks_pawn_table[COLOR_COUNT][SQ_COUNT];
extern bitboard_t attacks_between_table[SQ_COUNT][SQ_COUNT];
extern bitboard_t attacks_line_table[SQ_COUNT][SQ_COUNT];
extern bitboard_t attacks_bishop_empty_table[SQ_COUNT];
extern bitboard_t attacks_rook_empty_table[SQ_COUNT];

/* Builds every table. Deterministic; call once before any other rules call. */
void attacks_init(void);

static inline bitboard_t attacks_rook(int sq, bitboard_t occupied)
{
    const attacks_magic_t *m = &attacks_rook_magic[sq];
    return m->table[((occupied & m->mask) * m->magic) >> m->shift];
}
static inline bitboard_t attacks_bishop(int sq, bitboard_t occupied)
{
    const attacks_magic_t *m = &attacks_bishop_magic[sq];
    return m->table[((occupied & m->mask) * m->magic) >> m->shift];
}
static inline bitboard_t attacks_queen(int sq, bitboard_t occupied)
{
    return attacks_rook(sq, occupied) | attacks_bishop(sq, occupied);
}
static inline bitboard_t attacks_knight(int sq) { return attacks_knight_table[sq]; }
static inline bitboard_t attacks_king(int sq) { return attacks_king_table[sq]; }
/* Squares a pawn of colour `c` on `sq` attacks. */
static inline bitboard_t attacks_pawn(color_t c, int sq) { return attacks_pawn_table[c][sq]; }
/* Squares strictly between a and b when they share a line, else empty. */
static inline bitboard_t attacks_between(int a, int b) { return attacks_between_table[a][b]; }
/* A bishop's and a rook's attacks from sq on an empty board: the squares
 * sharing a diagonal or a rank or file with sq, a cheap test before a
 * sliding lookup. */
static inline bitboard_t attacks_bishop_empty(int sq) { return attacks_bishop_empty_table[sq]; }
static inline bitboard_t attacks_rook_empty(int sq) { return attacks_rook_empty_table[sq]; }
/* The whole line (edge to edge) through a and b, or empty if none. */
static inline bitboard_t attacks_line(int a, int b) { return attacks_line_table[a][b]; }

/* Attacks of a piece type from sq given the occupancy; PAWN is not handled. */
bitboard_t attacks_of(piece_type_t type, int sq, bitboard_t occupied);

#endif
