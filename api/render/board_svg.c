/* Board pictures as SVG (see board_svg.h). The piece shapes are chessd's
 * own: plain geometric outlines on a 100-unit square, drawn with the fill,
 * outline and inner-line colours of their side (inner lines use
 * currentColor, so one shape serves both sides). Everything is written in
 * integer units; the viewBox scales them to the asked size. A variant's
 * strips wrap the board, which is drawn exactly as it is alone, moved down. */
#include "board_svg.h"


/* Each shape draws inside x, y in 10..90 and covers the disc of radius
 * BOARD_SVG_PIECE_CORE about (50, 50) with its fill: the parts are ordered
 * so that no outline crosses that disc. */
static const struct {
    const char *id;
    const char *shape;
} pieces[PIECE_TYPE_COUNT] = {
    [PAWN] = { "pawn", "<rect x=\"24\" y=\"76\" width=\"52\" height=\"12\" rx=\"3\"/>"
                       "<path d=\"M36 78C38 68 42 62 44 58H56C58 62 62 68 64 78Z\"/>"
                       "<rect x=\"36\" y=\"57\" width=\"28\" height=\"8\" rx=\"3\"/>"
                       "<circle cx=\"50\" cy=\"44\" r=\"18\"/>" },
    [KNIGHT] = { "knight", "<path d=\"M28 86L74 86C78 66 78 42 66 26L64 12L55 21C45 21 34 29 24 44L20 54"
                           "C22 59 26 62 30 62L42 57C38 68 31 76 28 86Z\"/>"
                           "<rect x=\"24\" y=\"78\" width=\"54\" height=\"10\" rx=\"3\"/>"
                           "<path d=\"M64 24C72 38 74 56 70 72\" fill=\"none\" stroke=\"currentColor\"/>"
                           "<circle cx=\"47\" cy=\"32\" r=\"3.5\" fill=\"currentColor\" stroke=\"none\"/>"
                           "<circle cx=\"27\" cy=\"49\" r=\"2\" fill=\"currentColor\" stroke=\"none\"/>" },
    [BISHOP] = { "bishop", "<rect x=\"26\" y=\"78\" width=\"48\" height=\"10\" rx=\"3\"/>"
                           "<rect x=\"34\" y=\"67\" width=\"32\" height=\"11\" rx=\"3\"/>"
                           "<circle cx=\"50\" cy=\"13\" r=\"5\"/>"
                           "<path d=\"M50 17C68 30 70 52 62 69H38C30 52 32 30 50 17Z\"/>"
                           "<path d=\"M58 27L47 38\" fill=\"none\" stroke=\"currentColor\"/>" },
    [ROOK] = { "rook", "<rect x=\"24\" y=\"78\" width=\"52\" height=\"10\" rx=\"2\"/>"
                       "<rect x=\"32\" y=\"34\" width=\"36\" height=\"46\"/>"
                       "<path d=\"M26 12h10v8h8v-8h12v8h8v-8h10v24H26Z\"/>"
                       "<path d=\"M32 70H68\" fill=\"none\" stroke=\"currentColor\"/>" },
    [QUEEN] = { "queen", "<rect x=\"24\" y=\"78\" width=\"52\" height=\"10\" rx=\"3\"/>"
                         "<path d=\"M30 80L18 30L30 44L33 20L42 38L50 16L58 38L67 20L70 44L82 30L70 80Z\"/>"
                         "<circle cx=\"18\" cy=\"30\" r=\"4.5\"/><circle cx=\"33\" cy=\"20\" r=\"4.5\"/>"
                         "<circle cx=\"50\" cy=\"16\" r=\"4.5\"/><circle cx=\"67\" cy=\"20\" r=\"4.5\"/>"
                         "<circle cx=\"82\" cy=\"30\" r=\"4.5\"/>"
                         "<path d=\"M30 68H70\" fill=\"none\" stroke=\"currentColor\"/>" },
    [KING] = { "king", "<rect x=\"24\" y=\"78\" width=\"52\" height=\"10\" rx=\"3\"/>"
                       "<path d=\"M46 6h8v8h8v8h-8v14h-8v-14h-8v-8h8Z\"/>"
                       "<path d=\"M28 80C22 58 28 36 50 34C72 36 78 58 72 80Z\"/>"
                       "<path d=\"M30 66C44 62 56 62 70 66\" fill=\"none\" stroke=\"currentColor\"/>" },
    /* S-chess's. The Hawk (bishop + knight): the bishop's base under a
     * bird of prey's head on a slender neck, facing right (the knight
     * faces left), its hooked beak to the right, a knight's ear up to the
     * left. The Elephant (rook + knight): the rook's tower and battlements
     * with an elephant's ears spread wide on both sides and two tusks below
     * the core. */
    [HAWK] = { "hawk", "<rect x=\"26\" y=\"78\" width=\"48\" height=\"10\" rx=\"3\"/>"
                       "<rect x=\"34\" y=\"67\" width=\"32\" height=\"11\" rx=\"3\"/>"
                       "<path d=\"M62 69C70 58 70 48 67 42C74 42 80 44 85 49C87 36 81 26 70 21C64 15 54 13 46 15"
                       "L36 12L36 21C28 32 28 52 38 69Z\"/>"
                       "<circle cx=\"58\" cy=\"26\" r=\"3.5\" fill=\"currentColor\" stroke=\"none\"/>"
                       "<path d=\"M37 26C33 36 33 48 36 58\" fill=\"none\" stroke=\"currentColor\"/>" },
    [ELEPHANT] = { "elephant", "<rect x=\"24\" y=\"78\" width=\"52\" height=\"10\" rx=\"2\"/>"
                               "<path d=\"M32 40C18 32 11 46 14 60C17 68 26 68 32 64Z\"/>"
                               "<path d=\"M68 40C82 32 89 46 86 60C83 68 74 68 68 64Z\"/>"
                               "<rect x=\"32\" y=\"34\" width=\"36\" height=\"46\"/>"
                               "<path d=\"M26 12h10v8h8v-8h12v8h8v-8h10v24H26Z\"/>"
                               "<path d=\"M40 62C40 70 36 72 32 72M60 62C60 70 64 72 68 72\" fill=\"none\" "
                               "stroke=\"currentColor\"/>" },
};

/* The colours of each side's pieces; the side's colour name prefixes their
 * ids. */
static const struct {
    const char *fill, *line, *detail;
} sides[COLOR_COUNT] = {
    [WHITE] = { BOARD_SVG_WHITE_FILL, BOARD_SVG_WHITE_LINE, BOARD_SVG_WHITE_LINE },
    [BLACK] = { BOARD_SVG_BLACK_FILL, BOARD_SVG_BLACK_LINE, BOARD_SVG_BLACK_DETAIL },
};

void board_svg_options_default(board_svg_options_t *options)
{
    options->orientation = WHITE;
    options->lastmove_from = options->lastmove_to = SQ_NONE;
    options->mark_check = true;
    options->coordinates = true;
    options->size = BOARD_SVG_SIZE_DEFAULT;
}

static bool options_fit(const board_svg_options_t *o)
{
    return (o->orientation == WHITE || o->orientation == BLACK) && o->lastmove_from >= 0 &&
           o->lastmove_from <= SQ_NONE && o->lastmove_to >= 0 && o->lastmove_to <= SQ_NONE &&
           o->size >= BOARD_SVG_SIZE_MIN && o->size <= BOARD_SVG_SIZE_MAX;
}

static int margin(const board_svg_options_t *o) { return o->coordinates ? BOARD_SVG_MARGIN : 0; }

/* The column (0 on the left) and row (0 at the top) of a file and rank. */
static int column_of(const board_svg_options_t *o, int file) { return o->orientation == WHITE ? file : 7 - file; }
static int row_of(const board_svg_options_t *o, int rank) { return o->orientation == WHITE ? 7 - rank : rank; }

static int square_x(const board_svg_options_t *o, int sq)
{
    return margin(o) + column_of(o, square_file(sq)) * BOARD_SVG_SQUARE;
}

static int square_y(const board_svg_options_t *o, int sq)
{
    return margin(o) + row_of(o, square_rank(sq)) * BOARD_SVG_SQUARE;
}

static bool square_is_light(int sq) { return (square_file(sq) + square_rank(sq)) % 2 == 1; }

/* The variant's VARIANT_HAS_* flags (none for standard chess). */
static unsigned variant_flags(const position_t *pos)
{
    const variant_rules_t *rules = variant_rules((variant_t)pos->variant);
    return rules ? rules->flags : 0;
}

/* The shapes a position can show: S-chess's two only where they play. */
static void write_defs(buf_t *out, const position_t *pos)
{
    int types = variant_flags(pos) & VARIANT_HAS_RESERVES ? PIECE_TYPE_COUNT : KING + 1;
    buf_puts(out, "<defs>");
    for (int t = 0; t < types; t++)
        buf_printf(out, "<g id=\"%s\">%s</g>", pieces[t].id, pieces[t].shape);
    for (int c = 0; c < COLOR_COUNT; c++)
        for (int t = 0; t < types; t++)
            buf_printf(out,
                       "<g id=\"%s-%s\" fill=\"%s\" stroke=\"%s\" color=\"%s\" stroke-width=\"3\" "
                       "stroke-linejoin=\"round\" stroke-linecap=\"round\"><use xlink:href=\"#%s\"/></g>",
                       color_name((color_t)c), pieces[t].id, sides[c].fill, sides[c].line, sides[c].detail, pieces[t].id);
    buf_puts(out, "</defs>");
}

/* The frame, with the files below the board and the ranks on its left. */
static void write_coordinates(buf_t *out, const board_svg_options_t *o, int extent)
{
    const int m = BOARD_SVG_MARGIN, half = BOARD_SVG_SQUARE / 2;
    buf_printf(out, "<rect width=\"%d\" height=\"%d\" fill=\"%s\"/>", extent, extent, BOARD_SVG_FRAME);
    buf_printf(out,
               "<g font-family=\"sans-serif\" font-size=\"26\" font-weight=\"bold\" text-anchor=\"middle\" "
               "fill=\"%s\">",
               BOARD_SVG_LABEL);
    for (int file = 0; file < FILE_COUNT; file++)
        buf_printf(out, "<text x=\"%d\" y=\"%d\">%c</text>", m + column_of(o, file) * BOARD_SVG_SQUARE + half,
                   extent - m / 2 + 9, 'a' + file);
    for (int rank = 0; rank < RANK_COUNT; rank++)
        buf_printf(out, "<text x=\"%d\" y=\"%d\">%c</text>", m / 2, m + row_of(o, rank) * BOARD_SVG_SQUARE + half + 9,
                   '1' + rank);
    buf_puts(out, "</g>");
}

/* The light board, then every dark square in one path. */
static void write_squares(buf_t *out, const board_svg_options_t *o)
{
    buf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", margin(o), margin(o),
               8 * BOARD_SVG_SQUARE, 8 * BOARD_SVG_SQUARE, BOARD_SVG_LIGHT_SQUARE);
    buf_printf(out, "<path fill=\"%s\" d=\"", BOARD_SVG_DARK_SQUARE);
    for (int sq = 0; sq < SQ_COUNT; sq++)
        if (!square_is_light(sq))
            buf_printf(out, "M%d %dh100v100h-100z", square_x(o, sq), square_y(o, sq));
    buf_puts(out, "\"/>");
}

static void write_square_fill(buf_t *out, const board_svg_options_t *o, int sq, const char *color)
{
    buf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", square_x(o, sq),
               square_y(o, sq), BOARD_SVG_SQUARE, BOARD_SVG_SQUARE, color);
}

/* The last move's squares (a drop's one square once), then the checked
 * king's square over them. */
static void write_marks(buf_t *out, const position_t *pos, const board_svg_options_t *o)
{
    const int lastmove[2] = { o->lastmove_from, o->lastmove_to };
    for (int i = 0; i < 2; i++)
        if (lastmove[i] != SQ_NONE && (i == 0 || lastmove[1] != lastmove[0]))
            write_square_fill(out, o, lastmove[i],
                              square_is_light(lastmove[i]) ? BOARD_SVG_LASTMOVE_LIGHT : BOARD_SVG_LASTMOVE_DARK);
    if (o->mark_check && position_in_check(pos))
        write_square_fill(out, o, pos->king_square[pos->side_to_move], BOARD_SVG_CHECK);
}

static void write_pieces(buf_t *out, const position_t *pos, const board_svg_options_t *o)
{
    for (int sq = 0; sq < SQ_COUNT; sq++) {
        piece_t p = pos->board[sq];
        if (p == NO_PIECE)
            continue;
        buf_printf(out, "<use xlink:href=\"#%s-%s\" x=\"%d\" y=\"%d\"/>", color_name(piece_color(p)),
                   pieces[piece_type(p)].id, square_x(o, sq), square_y(o, sq));
    }
}

/* The pocket's piece types (crazyhouse) or the reserve's (S-chess), in the
 * order a strip shows them; NULL with *count 0 for a variant with neither. */
static const piece_type_t *strip_types(const position_t *pos, int *count)
{
    static const piece_type_t pocket[] = { PAWN, KNIGHT, BISHOP, ROOK, QUEEN };
    static const piece_type_t reserve[] = { HAWK, ELEPHANT };
    unsigned flags = variant_flags(pos);
    *count = flags & VARIANT_HAS_POCKETS ? 5 : flags & VARIANT_HAS_RESERVES ? 2 : 0;
    return flags & VARIANT_HAS_POCKETS ? pocket : flags & VARIANT_HAS_RESERVES ? reserve : NULL;
}

/* Whether the picture has strips: the variant holds pockets, a reserve or
 * checks given. */
static bool has_strips(const position_t *pos)
{
    return variant_flags(pos) & (VARIANT_HAS_POCKETS | VARIANT_HAS_RESERVES | VARIANT_HAS_CHECKS);
}

/* One side's strip, its top at y: each pocket or reserve piece the side
 * holds with its count, then three-check's discs (see board_svg.h). */
static void write_strip(buf_t *out, const position_t *pos, const board_svg_options_t *o, color_t side, int y,
                        int width)
{
    const int half = BOARD_SVG_STRIP / 2;
    int x = margin(o), count;
    const piece_type_t *types = strip_types(pos, &count);
    buf_printf(out, "<rect y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", y, width, BOARD_SVG_STRIP,
               BOARD_SVG_STRIP_FILL);
    buf_printf(out, "<g font-family=\"sans-serif\" font-size=\"44\" font-weight=\"bold\" fill=\"%s\">",
               BOARD_SVG_STRIP_INK);
    for (int i = 0; i < count; i++, x += BOARD_SVG_STRIP_CELL) {
        int held = pos->pocket[side][types[i]];
        if (held)
            buf_printf(out, "<use xlink:href=\"#%s-%s\" x=\"%d\" y=\"%d\"/><text x=\"%d\" y=\"%d\">%d</text>",
                       color_name(side), pieces[types[i]].id, x, y, x + BOARD_SVG_SQUARE + 4, y + half + 16, held);
    }
    buf_puts(out, "</g>");
    if (!(variant_flags(pos) & VARIANT_HAS_CHECKS))
        return;
    for (int i = 0; i < 3; i++) {
        int cx = x + BOARD_SVG_CHECK_STEP / 2 + i * BOARD_SVG_CHECK_STEP, cy = y + half, r = BOARD_SVG_CHECK_RADIUS;
        bool given = i < pos->checks[side];
        buf_printf(out, "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"4\"/>", cx,
                   cy, r, given ? BOARD_SVG_CHECK : "none", BOARD_SVG_STRIP_INK);
        if (given) /* check's sign, in the strip's colour: the disc's quarters stay red */
            buf_printf(out, "<path d=\"M%d %dh%dM%d %dv%d\" stroke=\"%s\" stroke-width=\"5\"/>", cx - r / 2, cy, r,
                       cx, cy - r / 2, r, BOARD_SVG_STRIP_FILL);
    }
}

/* The board as a picture without strips is: frame, squares, marks, pieces. */
static void write_board(buf_t *out, const position_t *pos, const board_svg_options_t *options, int extent)
{
    if (options->coordinates)
        write_coordinates(out, options, extent);
    write_squares(out, options);
    write_marks(out, pos, options);
    write_pieces(out, pos, options);
}

bool board_svg_write(buf_t *out, const position_t *pos, const board_svg_options_t *options)
{
    if (!options_fit(options))
        return false;
    const int extent = 8 * BOARD_SVG_SQUARE + 2 * margin(options);
    const int strip = has_strips(pos) ? BOARD_SVG_STRIP : 0, height = extent + 2 * strip;
    char fen[FEN_BUFFER_SIZE];
    buf_printf(out,
               "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
               "version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
               options->size, (options->size * height + extent / 2) / extent, extent, height);
    /* A FEN holds no character XML would need escaped. */
    buf_printf(out, "<title>%s</title>", fen_format(pos, fen, sizeof fen));
    write_defs(out, pos);
    if (!strip) {
        write_board(out, pos, options, extent);
    } else {
        color_t top = options->orientation == WHITE ? BLACK : WHITE;
        write_strip(out, pos, options, top, 0, extent);
        buf_printf(out, "<g transform=\"translate(0 %d)\">", strip);
        write_board(out, pos, options, extent);
        buf_puts(out, "</g>");
        write_strip(out, pos, options, (color_t)!top, strip + extent, extent);
    }
    buf_puts(out, "</svg>\n");
    return true;
}
