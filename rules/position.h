/* The position: a fixed-size value with no pointers, cheap to copy onto a
 * request's stack. Castling rights are held as the squares of the castling
 * rooks (SQ_NONE when the right is gone), so Chess960 needs no special case.
 * The en passant square is kept only when an en passant capture is legal, so
 * it, the key and the canonical FEN agree with FIDE's notion of "same
 * position". position_make() and position_unmake() are exact inverses. */
#ifndef CHESSD_RULES_POSITION_H
#define CHESSD_RULES_POSITION_H

#include "attacks.h"

typedef struct {
    bitboard_t by_type[PIECE_TYPE_COUNT];
    bitboard_t by_color[COLOR_COUNT];
    uint64_t key;
    bitboard_t promoted;                      /* crazyhouse: pieces that were pawns (they go back as pawns) */
    bitboard_t gates;                         /* S-chess: back-rank squares a reserve piece may still be gated on */
    piece_t board[SQ_COUNT];
    square_t castle_rook[CASTLE_RIGHT_COUNT]; /* [colour * 2 + side] */
    square_t king_square[COLOR_COUNT];
    uint8_t side_to_move;                     /* color_t */
    square_t en_passant;                      /* SQ_NONE unless a capture there is legal */
    uint16_t halfmove_clock;
    uint16_t fullmove_number;
    uint8_t chess960;                         /* castling is written king-takes-rook */
    uint8_t variant;                          /* variant_t; every other variant field is 0 in standard chess */
    uint8_t checks[COLOR_COUNT];              /* three-check: the checks each colour has given */
    uint8_t pocket[COLOR_COUNT][PIECE_TYPE_COUNT]; /* crazyhouse pockets, S-chess reserves: counts by type */
} position_t;

/* What position_unmake() needs to undo a move; owned by the caller. */
typedef struct {
    uint64_t key;
    square_t castle_rook[CASTLE_RIGHT_COUNT];
    piece_t captured;
    square_t en_passant;
    uint16_t halfmove_clock;
    uint16_t fullmove_number;
    position_t before; /* a variant's position before the move (standard chess leaves it unset) */
} position_undo_t;

/* The move counters stop at this value (a FEN may not name more), so every
 * position reached by moves still has a FEN fen_parse() accepts. */
enum { POSITION_COUNTER_MAX = 9999 };

/* What a variant's position needs from the code above this module (the
 * variants' moves, variant_moves.c), set once by rules_init(): position.c
 * and movegen.c dispatch a variant position to them, so that the variant
 * code links above them and never below. */
typedef struct {
    void (*make)(position_t *pos, move_t move, position_undo_t *undo);
    bitboard_t (*checkers)(const position_t *pos);
    int (*generate)(const position_t *pos, move_t *out);
} position_variant_hooks_t;
extern position_variant_hooks_t position_variant_hooks;

/* Clears pos to an empty board (no kings: not a playable position). */
void position_clear(position_t *pos);
void position_put_piece(position_t *pos, piece_t piece, int sq);
void position_remove_piece(position_t *pos, int sq);

/* Recomputes pos->key from scratch. */
uint64_t position_compute_key(const position_t *pos);
/* The part of the key a variant adds: its rule set, pockets, checks, gates
 * and promoted pieces (0 in standard chess). */
uint64_t position_variant_key(const position_t *pos);

/* Plays a legal move (the caller guarantees legality). The counters stop at
 * POSITION_COUNTER_MAX. A variant's position goes to variant_make(). */
void position_make(position_t *pos, move_t move, position_undo_t *undo);
/* Takes back the move just made with the same undo record. */
void position_unmake(position_t *pos, move_t move, const position_undo_t *undo);

/* Enemy pieces giving check to the side to move (by the variant's rules:
 * none in antichess, none from a king-less side, and in atomic none while
 * the kings touch). */
bitboard_t position_checkers(const position_t *pos);
bool position_in_check(const position_t *pos);

/* Whether the side to move's pawn on `from` may legally capture en passant on
 * `ep_square` (the board must hold the pawn that just moved two squares). */
bool position_en_passant_legal(const position_t *pos, int from, int ep_square);
/* Whether any en passant capture onto ep_square is legal for the side to move. */
bool position_any_en_passant_legal(const position_t *pos, int ep_square);

/* The king's and the rook's destination when castling with `rook_square`. */
int position_castle_king_to(const position_t *pos, int rook_square);
int position_castle_rook_to(const position_t *pos, int rook_square);
/* Castling on side with the king on king and the rook on rook (one rank):
 * the squares that must be empty (either piece may stand on the other's
 * way), with the king's and the rook's destinations in *king_to, *rook_to. */
static inline bitboard_t position_castle_empty(int king, int rook, int side, int *king_to, int *rook_to)
{
    *king_to = square_make(side == CASTLE_KING_SIDE ? 6 : 2, square_rank(king));
    *rook_to = square_make(side == CASTLE_KING_SIDE ? 5 : 3, square_rank(king));
    return (attacks_between(king, *king_to) | bb_square(*king_to) | attacks_between(rook, *rook_to)
            | bb_square(*rook_to))
           & ~(bb_square(king) | bb_square(rook));
}
/* Index (colour * 2 + side) of the castling right held by the rook on sq, or -1. */
int position_castle_index(const position_t *pos, int sq);

/* Consistency check for asserts and tests: bitboards, board array, kings and
 * key agree. Returns true when consistent. */
bool position_ok(const position_t *pos);

static inline bitboard_t position_occupied(const position_t *pos)
{
    return pos->by_color[WHITE] | pos->by_color[BLACK];
}
static inline bitboard_t position_pieces(const position_t *pos, color_t c, piece_type_t t)
{
    return pos->by_color[c] & pos->by_type[t];
}

/* Every piece of either colour attacking sq, with the given occupancy.
 * Inline, so the move generator's compiled variants carry their own. */
static inline bitboard_t position_attackers_to(const position_t *pos, int sq, bitboard_t occupied)
{
    const bitboard_t *t = pos->by_type;
    return (attacks_pawn(WHITE, sq) & pos->by_color[BLACK] & t[PAWN])
           | (attacks_pawn(BLACK, sq) & pos->by_color[WHITE] & t[PAWN])
           | (attacks_knight(sq) & t[KNIGHT]) | (attacks_king(sq) & t[KING])
           | (attacks_bishop(sq, occupied) & (t[BISHOP] | t[QUEEN]))
           | (attacks_rook(sq, occupied) & (t[ROOK] | t[QUEEN]));
}

/* Whether pieces of colour `by` attack sq, with the given occupancy. */
static inline bool position_attacked_by(const position_t *pos, int sq, color_t by, bitboard_t occupied)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t them = pos->by_color[by];
    return (attacks_pawn((color_t)!by, sq) & them & t[PAWN])
           || (attacks_knight(sq) & them & t[KNIGHT]) || (attacks_king(sq) & them & t[KING])
           || (attacks_bishop(sq, occupied) & them & (t[BISHOP] | t[QUEEN]))
           || (attacks_rook(sq, occupied) & them & (t[ROOK] | t[QUEEN]));
}

#endif
