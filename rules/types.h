/* Basic chess types shared by every rules module: squares, colours, pieces,
 * bitboards and the move encoding. Pure values, no state.
 * Squares run a1 = 0, b1 = 1, ... h8 = 63. A move is from | to << 6 | kind << 12
 * | piece << 15 | gate << 18; castling is the king capturing its own rook, so
 * standard chess and Chess960 share one representation; a drop has from == to. */
#ifndef CHESSD_RULES_TYPES_H
#define CHESSD_RULES_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t bitboard_t;
typedef uint8_t square_t;
typedef uint32_t move_t;

enum { SQ_COUNT = 64, SQ_NONE = 64 };
enum { FILE_COUNT = 8, RANK_COUNT = 8 };

typedef enum { WHITE = 0, BLACK = 1, COLOR_COUNT = 2 } color_t;

/* The rule sets. Chess960 is standard chess with position_t.chess960 set;
 * variant.h has each one's names, start and rules. */
typedef enum {
    VARIANT_STANDARD = 0,
    VARIANT_CRAZYHOUSE,
    VARIANT_ATOMIC,
    VARIANT_ANTICHESS,
    VARIANT_KING_OF_THE_HILL,
    VARIANT_THREE_CHECK,
    VARIANT_HORDE,
    VARIANT_RACING_KINGS,
    VARIANT_SEIRAWAN,
    VARIANT_COUNT
} variant_t;

/* Piece types; NO_PIECE_TYPE marks an empty square. The Hawk (bishop +
 * knight) and the Elephant (rook + knight) are S-chess's; no other variant
 * puts them on the board. */
typedef enum {
    PAWN = 0, KNIGHT, BISHOP, ROOK, QUEEN, KING, HAWK, ELEPHANT, PIECE_TYPE_COUNT, NO_PIECE_TYPE = PIECE_TYPE_COUNT
} piece_type_t;

/* A coloured piece is color * 8 + type; NO_PIECE (0xff) marks an empty square. */
typedef uint8_t piece_t;
enum { NO_PIECE = 0xff };

/* Move kinds, bits 12-14. */
enum { MOVE_NORMAL = 0, MOVE_PROMOTION = 1, MOVE_EN_PASSANT = 2, MOVE_CASTLING = 3, MOVE_DROP = 4 };

/* MOVE_NONE is never a legal move (a1 to a1). A list holds every legal move
 * of any variant's position: a crazyhouse pocket alone adds up to 5 * 62. */
enum { MOVE_NONE = 0, MOVE_LIST_MAX = 1024 };

/* Castling rights are indexed by colour * 2 + side. */
typedef enum { CASTLE_KING_SIDE = 0, CASTLE_QUEEN_SIDE = 1, CASTLE_SIDE_COUNT = 2 } castle_side_t;
enum { CASTLE_RIGHT_COUNT = 4 };

static inline int square_file(int sq) { return sq & 7; }
static inline int square_rank(int sq) { return sq >> 3; }
static inline int square_make(int file, int rank) { return rank * 8 + file; }
/* The one table of colour names, by colour: "white", "black" (the API's
 * values, the messages of fen, legality and san), and "White", "Black"
 * (sentences and the text board). Static strings; c must be WHITE or BLACK. */
const char *color_name(color_t c);
/* "pawn" ... "king", "hawk", "elephant": a piece type's name in answers and messages. */
const char *piece_type_name(piece_type_t t);
const char *color_title(color_t c);

static inline piece_t piece_make(color_t c, piece_type_t t) { return (piece_t)(c * 8 + t); }
static inline piece_type_t piece_type(piece_t p) { return (piece_type_t)(p & 7); }
static inline color_t piece_color(piece_t p) { return (color_t)(p >> 3); }
/* The one table of piece letters, by piece type: "pnbrqkhe" (FEN's black
 * pieces, UCI's promotions); capitals for white and for SAN. */
#define PIECE_LETTERS "pnbrqkhe"
static inline char piece_type_letter(piece_type_t t) { return PIECE_LETTERS[t]; }
static inline char piece_type_capital(piece_type_t t) { return (char)(PIECE_LETTERS[t] - 'a' + 'A'); }
/* A piece's FEN letter: capital for white. */
static inline char piece_letter(piece_t p)
{
    return piece_color(p) == WHITE ? piece_type_capital(piece_type(p)) : piece_type_letter(piece_type(p));
}

/* promotion: the piece a pawn becomes (MOVE_PROMOTION) or the piece
 * dropped (MOVE_DROP); ignored for the other kinds. */
static inline move_t move_make(int from, int to, int kind, piece_type_t promotion)
{
    unsigned piece_bits = kind == MOVE_PROMOTION || kind == MOVE_DROP ? (unsigned)promotion : 0;
    return (move_t)((unsigned)from | (unsigned)to << 6 | (unsigned)kind << 12 | piece_bits << 15);
}
static inline move_t move_make_drop(piece_type_t piece, int to) { return move_make(to, to, MOVE_DROP, piece); }
static inline int move_from(move_t m) { return m & 63; }
static inline int move_to(move_t m) { return (m >> 6) & 63; }
static inline int move_kind(move_t m) { return (m >> 12) & 7; }
static inline piece_type_t move_promotion(move_t m) { return (piece_type_t)((m >> 15) & 7); }
static inline piece_type_t move_dropped(move_t m) { return (piece_type_t)((m >> 15) & 7); }

/* S-chess gating: a reserve piece placed on the square the move left (for
 * castling, the king's square, or the rook's when on_rook is set). The gate
 * is the piece type (HAWK or ELEPHANT), 0 when the move gates nothing. */
static inline move_t move_with_gate(move_t m, piece_type_t gate, bool on_rook)
{
    return m | (move_t)gate << 18 | (move_t)on_rook << 21;
}
static inline piece_type_t move_gate(move_t m) { return (piece_type_t)((m >> 18) & 7); }
static inline bool move_gate_on_rook(move_t m) { return (m >> 21) & 1; }

/* A caller-owned list of moves, filled by movegen_legal(). */
typedef struct {
    int count;
    move_t moves[MOVE_LIST_MAX];
} move_list_t;

#endif
