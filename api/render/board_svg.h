/* Board pictures: an SVG of a position, written into a buf_t, drawn as its
 * options say (the query that sets them is read in api/handlers/board_svg_http.c).
 * Each piece's shape is defined once in <defs> and coloured for white and
 * black from the one palette below; squares and pieces are <use>d, so a
 * picture is a few KiB. The output is a function of its inputs alone
 * (integer coordinates, a fixed order): same input, same bytes. */
#ifndef CHESSD_API_RENDER_BOARD_SVG_H
#define CHESSD_API_RENDER_BOARD_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "../../rules/rules.h"
#include "../http/buf.h"

#define BOARD_SVG_CONTENT_TYPE "image/svg+xml"

/* The Content-Security-Policy every picture is sent with: opened on its own
 * in a browser it may run no script and fetch nothing (it is sandboxed, its
 * own origin). It needs nothing of that: its colours and fonts are
 * presentation attributes (fill, stroke, font-family), which no policy
 * governs, and inline CSS would still apply. */
#define BOARD_SVG_CONTENT_SECURITY_POLICY "default-src 'none'; style-src 'unsafe-inline'; sandbox"

/* The palette, one colour per role, all distinct so that a picture can be
 * read back by sampling pixels. */
#define BOARD_SVG_LIGHT_SQUARE "#eedcb4"
#define BOARD_SVG_DARK_SQUARE "#b08660"
#define BOARD_SVG_LASTMOVE_LIGHT "#d8e07a" /* a highlighted light square */
#define BOARD_SVG_LASTMOVE_DARK "#a8ae48"  /* a highlighted dark square */
#define BOARD_SVG_CHECK "#e5463a"          /* the checked king's whole square */
#define BOARD_SVG_WHITE_FILL "#fbfbf7"
#define BOARD_SVG_WHITE_LINE "#1d1d1d" /* outline and inner lines of white pieces */
#define BOARD_SVG_BLACK_FILL "#2b2b2b"
#define BOARD_SVG_BLACK_LINE "#000000" /* outline of black pieces */
#define BOARD_SVG_BLACK_DETAIL "#e8e8e8" /* inner lines of black pieces */
#define BOARD_SVG_FRAME "#4a3b2e"        /* the border that holds the coordinates */
#define BOARD_SVG_LABEL "#eedcb4"
#define BOARD_SVG_STRIP_FILL "#c9c1b1" /* the strips of a variant's pockets, reserves and checks */
#define BOARD_SVG_STRIP_INK "#1f3a5f"  /* their counts, and the outline of a check not given */

/* The geometry, in viewBox units: a square is 100 units; with coordinates
 * the board has a frame of BOARD_SVG_MARGIN on every side (ranks written on
 * the left, files below), so the viewBox is 800 or 880 units wide, scaled to
 * `size` pixels. Every piece covers the disc of radius BOARD_SVG_PIECE_CORE
 * about its square's centre with its fill colour (no line crosses it) and
 * keeps 10 units clear of its square's edges, so a square's centre shows
 * the piece's fill and its corners the square's colour.
 * A variant's strips are BOARD_SVG_STRIP high, one above the board (the
 * side at the top's) and one below, as wide as the picture; the viewBox is
 * that much taller and the height in pixels in proportion. In a strip, from
 * the board's left edge: a cell of BOARD_SVG_STRIP_CELL units per piece type
 * of the pocket (crazyhouse: P N B R Q) or reserve (S-chess: H E), the
 * piece drawn in the cell's first 100 units (as on a square) and its count
 * after it, both only when the count is not 0; then, in three-check, three
 * discs of radius BOARD_SVG_CHECK_RADIUS centred BOARD_SVG_CHECK_STEP apart
 * from half a step in, filled BOARD_SVG_CHECK for each check the side has
 * given (with a '+' across its centre; its quarters stay that red) and
 * only outlined for each not given. No variant has both. */
enum {
    BOARD_SVG_SQUARE = 100,
    BOARD_SVG_MARGIN = 40,
    BOARD_SVG_PIECE_CORE = 8,
    BOARD_SVG_STRIP = 100,
    BOARD_SVG_STRIP_CELL = 160,
    BOARD_SVG_CHECK_STEP = 60,
    BOARD_SVG_CHECK_RADIUS = 22,
    BOARD_SVG_SIZE_MIN = 64,
    BOARD_SVG_SIZE_MAX = 2048,
    BOARD_SVG_SIZE_DEFAULT = 360,
};

typedef struct {
    color_t orientation;            /* the side whose first rank is at the bottom */
    int lastmove_from, lastmove_to; /* squares to highlight; SQ_NONE for none */
    bool mark_check;                /* fill the square of a king in check with BOARD_SVG_CHECK */
    bool coordinates;               /* the frame with rank and file labels */
    int size;                       /* width in pixels (and height, but for a variant's strips), MIN..MAX */
} board_svg_options_t;

/* White at the bottom, no last move, check marked, coordinates shown,
 * BOARD_SVG_SIZE_DEFAULT pixels. */
void board_svg_options_default(board_svg_options_t *options);

/* Appends the SVG document of pos (a position fen_parse accepted) drawn as
 * options say to out. False, appending nothing, when an option is out of
 * its bounds; otherwise true (check buf_failed(out) for memory). A variant
 * with pockets, reserves or checks given adds a strip above and below the
 * board; every other picture is the board alone. */
bool board_svg_write(buf_t *out, const position_t *pos, const board_svg_options_t *options);

#endif
