/* The tables behind types.h's names: the colours' and the pieces'. Piece
 * letters are types.h's PIECE_LETTERS. Constant data, read from any thread. */
#include "types.h"

static const struct {
    const char *name, *title;
} colors[COLOR_COUNT] = {
    [WHITE] = { "white", "White" },
    [BLACK] = { "black", "Black" },
};

const char *color_name(color_t c) { return colors[c].name; }

const char *color_title(color_t c) { return colors[c].title; }

static const char *const piece_names[PIECE_TYPE_COUNT] = {
    [PAWN] = "pawn", [KNIGHT] = "knight", [BISHOP] = "bishop", [ROOK] = "rook",
    [QUEEN] = "queen", [KING] = "king", [HAWK] = "hawk", [ELEPHANT] = "elephant",
};

const char *piece_type_name(piece_type_t t) { return (unsigned)t < PIECE_TYPE_COUNT ? piece_names[t] : "piece"; }
