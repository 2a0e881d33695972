/* The tables behind types.h's names: the colour names. Piece letters are
 * types.h's PIECE_LETTERS. Constant data, read from any thread. */
#include "types.h"

static const struct {
    const char *name, *title;
} colors[COLOR_COUNT] = {
    [WHITE] = { "white", "White" },
    [BLACK] = { "black", "Black" },
};

const char *color_name(color_t c) { return colors[c].name; }

const char *color_title(color_t c) { return colors[c].title; }
