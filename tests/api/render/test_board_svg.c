/* Tests for api/render/board_svg.c and its HTTP side, api/handlers/board_svg_http.c:
 * every option, each piece shape defined once, a variant's strips, the query
 * read strictly, and a failed allocation answered 500, never half a picture.
 * The oracles are an XML well-formedness check written here and the bytes
 * kept in tests/data/board_svg, which standard pictures must repeat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../api/handlers/board_svg_http.h"
#include "../../../api/render/board_svg.h"
#include "../../../api/http/request.h"
#include "../../../api/http/target.h"
#include "../../support/tests.h"

static const char *const ITALIAN = "r1bqkbnr/pppp1Qpp/2n5/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4"; /* mate */

/* The picture of fen with options, as a malloc'd string (NULL when refused). */
static char *picture(const char *fen, const board_svg_options_t *options)
{
    position_t pos;
    if (!tests_parse_fen(fen, &pos))
        return NULL;
    buf_t b;
    buf_init(&b);
    bool written = board_svg_write(&b, &pos, options);
    CU_ASSERT_EQUAL(b.length == 0, !written); /* a refusal appends nothing */
    char *text = buf_finish(&b, NULL);
    if (!written) {
        free(text);
        return NULL;
    }
    return text;
}

/* The picture of fen read in variant, as picture() does. */
static char *variant_picture(const char *fen, variant_t variant, const board_svg_options_t *options)
{
    position_t pos;
    char message[256];
    fen_error_t err = fen_parse_variant(fen, strlen(fen), variant, 0, &pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    buf_t b;
    buf_init(&b);
    bool written = board_svg_write(&b, &pos, options);
    char *text = buf_finish(&b, NULL);
    CU_ASSERT_TRUE(written);
    return text;
}

/* The whole of a file under the repository root, malloc'd (NULL when unreadable). */
static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
        text[fread(text, 1, (size_t)size, f)] = '\0';
    }
    fclose(f);
    return text;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The <rect> that fills square sq (viewBox units) with color, as written. */
static void square_fill(char *out, size_t size, int x, int y, const char *color)
{
    snprintf(out, size, "<rect x=\"%d\" y=\"%d\" width=\"100\" height=\"100\" fill=\"%s\"/>", x, y, color);
}

/* Whether text is one element whose tags all nest and close (no DTD, no
 * comments: the renderer writes none), attributes quoted. */
static bool xml_well_formed(const char *text)
{
    enum { DEPTH = 16 };
    const char *open[DEPTH];
    size_t open_length[DEPTH];
    int depth = 0, roots = 0;
    for (const char *p = text; *p; p++) {
        if (*p != '<')
            continue;
        bool closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t name_length = strcspn(name, " />");
        const char *end = name + name_length;
        for (char quote = 0; *end && (quote || *end != '>'); end++)
            if (*end == '"')
                quote = quote ? 0 : '"';
        if (!*end || name_length == 0)
            return false;
        bool empty = end[-1] == '/';
        if (closing) {
            if (depth == 0 || open_length[depth - 1] != name_length || strncmp(open[depth - 1], name, name_length))
                return false;
            depth--;
        } else if (!empty) {
            if (depth == DEPTH)
                return false;
            roots += depth == 0;
            open[depth] = name;
            open_length[depth++] = name_length;
        } else if (depth == 0) {
            return false;
        }
        p = end;
    }
    return depth == 0 && roots == 1;
}

static void test_size_is_bounded_and_written_as_width_and_height(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    const int refused[] = { 0, BOARD_SVG_SIZE_MIN - 1, BOARD_SVG_SIZE_MAX + 1, -360 };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        o.size = refused[i];
        CU_ASSERT_PTR_NULL(picture(FEN_START, &o));
    }
    const int accepted[] = { BOARD_SVG_SIZE_MIN, BOARD_SVG_SIZE_DEFAULT, BOARD_SVG_SIZE_MAX };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        o.size = accepted[i];
        char *svg = picture(FEN_START, &o), expected[64];
        CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
        snprintf(expected, sizeof expected, " width=\"%d\" height=\"%d\" ", o.size, o.size);
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, expected));
        free(svg);
    }
}

static void test_options_out_of_their_range_are_refused(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.lastmove_from = SQ_NONE + 1;
    CU_ASSERT_PTR_NULL(picture(FEN_START, &o));
    board_svg_options_default(&o);
    o.lastmove_to = -1;
    CU_ASSERT_PTR_NULL(picture(FEN_START, &o));
    board_svg_options_default(&o);
    o.orientation = COLOR_COUNT;
    CU_ASSERT_PTR_NULL(picture(FEN_START, &o));
}

static void test_the_document_is_well_formed_svg_with_a_view_box(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    for (int coordinates = 0; coordinates < 2; coordinates++) {
        o.coordinates = coordinates;
        char *svg = picture(ITALIAN, &o), view_box[64];
        CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
        CU_ASSERT_EQUAL(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 40), 0);
        int extent = 8 * BOARD_SVG_SQUARE + (coordinates ? 2 * BOARD_SVG_MARGIN : 0);
        snprintf(view_box, sizeof view_box, " viewBox=\"0 0 %d %d\"", extent, extent);
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, view_box));
        CU_ASSERT_TRUE(xml_well_formed(svg));
        CU_ASSERT_EQUAL(count(svg, "<text"), coordinates ? 16 : 0);
        char title[128];
        snprintf(title, sizeof title, "<title>%s</title>", ITALIAN);
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, title));
        free(svg);
    }
    /* the checker itself finds a tag left open and one closed out of turn */
    CU_ASSERT_FALSE(xml_well_formed("<svg><g></svg>"));
    CU_ASSERT_FALSE(xml_well_formed("<svg><g></svg></g>"));
    CU_ASSERT_TRUE(xml_well_formed("<svg><g a=\"/>\"/></svg>"));
}

static void test_each_shape_is_defined_once_and_each_piece_used_once(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    char *svg = picture(FEN_START, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
    const char *const shapes[] = { "pawn", "knight", "bishop", "rook", "queen", "king" };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char id[32];
        snprintf(id, sizeof id, "id=\"%s\"", shapes[i]);
        CU_ASSERT_EQUAL(count(svg, id), 1);
        snprintf(id, sizeof id, "xlink:href=\"#%s\"", shapes[i]);
        CU_ASSERT_EQUAL(count(svg, id), 2); /* once per side */
    }
    CU_ASSERT_EQUAL(count(svg, "xlink:href=\"#white-pawn\""), 8);
    CU_ASSERT_EQUAL(count(svg, "xlink:href=\"#black-king\""), 1);
    CU_ASSERT_EQUAL(count(svg, "<use "), 12 + 32);
    CU_ASSERT(strlen(svg) < 16 * 1024);
    free(svg);
}

static void test_orientation_decides_the_square_at_the_top_left(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.coordinates = false;
    /* a8 holds a black rook and h1 a white one: whichever is at (0, 0) */
    const char *fen = "r5k1/p7/8/8/8/8/P7/K6R w - - 0 1";
    char *white = picture(fen, &o);
    o.orientation = BLACK;
    char *black = picture(fen, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(white);
    CU_ASSERT_PTR_NOT_NULL_FATAL(black);
    CU_ASSERT_PTR_NOT_NULL(strstr(white, "<use xlink:href=\"#black-rook\" x=\"0\" y=\"0\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(white, "<use xlink:href=\"#white-rook\" x=\"700\" y=\"700\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(black, "<use xlink:href=\"#white-rook\" x=\"0\" y=\"0\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(black, "<use xlink:href=\"#black-rook\" x=\"700\" y=\"700\"/>"));
    /* g8's king: second from the right at the top for white, from the left at the bottom for black */
    CU_ASSERT_PTR_NOT_NULL(strstr(white, "<use xlink:href=\"#black-king\" x=\"600\" y=\"0\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(black, "<use xlink:href=\"#black-king\" x=\"100\" y=\"700\"/>"));
    free(white);
    free(black);
    /* the coordinates frame shifts every square by the margin */
    o.coordinates = true;
    char *framed = picture(fen, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(framed);
    CU_ASSERT_PTR_NOT_NULL(strstr(framed, "<use xlink:href=\"#white-rook\" x=\"40\" y=\"40\"/>"));
    free(framed);
}

static void test_the_last_move_is_highlighted_only_when_given(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.coordinates = false;
    const char *fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    char *plain = picture(fen, &o);
    o.lastmove_from = square_make(4, 1); /* e2: light */
    o.lastmove_to = square_make(4, 3);   /* e4: light */
    char *marked = picture(fen, &o);
    o.lastmove_from = square_make(6, 0); /* g1: dark */
    o.lastmove_to = square_make(5, 2);   /* f3: light */
    char *knight = picture(fen, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(marked);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knight);
    CU_ASSERT_PTR_NULL(strstr(plain, BOARD_SVG_LASTMOVE_LIGHT));
    CU_ASSERT_PTR_NULL(strstr(plain, BOARD_SVG_LASTMOVE_DARK));
    char e2[128], e4[128], g1[128], f3[128];
    square_fill(e2, sizeof e2, 400, 600, BOARD_SVG_LASTMOVE_LIGHT);
    square_fill(e4, sizeof e4, 400, 400, BOARD_SVG_LASTMOVE_LIGHT);
    square_fill(g1, sizeof g1, 600, 700, BOARD_SVG_LASTMOVE_DARK);
    square_fill(f3, sizeof f3, 500, 500, BOARD_SVG_LASTMOVE_LIGHT);
    CU_ASSERT_PTR_NOT_NULL(strstr(marked, e2));
    CU_ASSERT_PTR_NOT_NULL(strstr(marked, e4));
    CU_ASSERT_EQUAL(count(marked, BOARD_SVG_LASTMOVE_LIGHT), 2);
    CU_ASSERT_PTR_NULL(strstr(marked, BOARD_SVG_LASTMOVE_DARK));
    CU_ASSERT_PTR_NOT_NULL(strstr(knight, g1));
    CU_ASSERT_PTR_NOT_NULL(strstr(knight, f3));
    /* marks lie under the pieces: the pawn on e4 is drawn after its square */
    CU_ASSERT(strstr(marked, e4) < strstr(marked, "<use xlink:href=\"#white-pawn\" x=\"400\" y=\"400\"/>"));
    free(plain);
    free(marked);
    free(knight);
}

static void test_the_checked_king_is_marked_unless_turned_off(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.coordinates = false;
    char *mate = picture(ITALIAN, &o), e8[128];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mate);
    square_fill(e8, sizeof e8, 400, 0, BOARD_SVG_CHECK);
    CU_ASSERT_PTR_NOT_NULL(strstr(mate, e8));
    CU_ASSERT_EQUAL(count(mate, BOARD_SVG_CHECK), 1);
    o.mark_check = false;
    char *unmarked = picture(ITALIAN, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(unmarked);
    CU_ASSERT_PTR_NULL(strstr(unmarked, BOARD_SVG_CHECK));
    o.mark_check = true;
    char *quiet = picture(FEN_START, &o); /* no check: nothing to mark */
    CU_ASSERT_PTR_NOT_NULL_FATAL(quiet);
    CU_ASSERT_PTR_NULL(strstr(quiet, BOARD_SVG_CHECK));
    free(mate);
    free(unmarked);
    free(quiet);
}

static void test_the_same_input_gives_the_same_bytes(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.orientation = BLACK;
    o.lastmove_from = square_make(7, 4);
    o.lastmove_to = square_make(5, 6);
    char *first = picture(ITALIAN, &o), *second = picture(ITALIAN, &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    CU_ASSERT_STRING_EQUAL(first, second);
    free(first);
    free(second);
}

/* The standard pictures of tests/data/board_svg were written before the
 * variants drew anything: they must not change by a byte. */
static void test_standard_pictures_keep_their_bytes(void)
{
    static const struct {
        const char *file, *fen;
        color_t orientation;
        bool coordinates;
        int size, from, to;
    } kept[] = {
        { "start.svg", FEN_START, WHITE, true, 360, SQ_NONE, SQ_NONE },
        { "kiwipete_black_bare_720_e1g1.svg", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
          BLACK, false, 720, 4, 6 },
        { "italian_mate_h5f7.svg", "r1bqkbnr/pppp1Qpp/2n5/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4", WHITE, true, 360,
          39, 53 },
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "tests/data/board_svg/%s", kept[i].file);
        char *want = read_whole(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(want);
        board_svg_options_t o;
        board_svg_options_default(&o);
        o.orientation = kept[i].orientation;
        o.coordinates = kept[i].coordinates;
        o.size = kept[i].size;
        o.lastmove_from = kept[i].from;
        o.lastmove_to = kept[i].to;
        char *svg = picture(kept[i].fen, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
        if (strcmp(svg, want))
            fprintf(stderr, "\n%s: the picture changed\n", kept[i].file);
        CU_ASSERT_STRING_EQUAL(svg, want);
        free(svg);
        free(want);
    }
}

/* Atomic, antichess, king of the hill, horde and racing kings have nothing
 * beside the board: their pictures are standard chess's. */
static void test_a_variant_without_pockets_or_checks_is_the_board_alone(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    char *standard = picture(FEN_START, &o);
    const variant_t same_start[] = { VARIANT_ATOMIC, VARIANT_KING_OF_THE_HILL };
    for (size_t i = 0; i < sizeof same_start / sizeof same_start[0]; i++) {
        char *svg = variant_picture(FEN_START, same_start[i], &o);
        CU_ASSERT_STRING_EQUAL(svg, standard);
        free(svg);
    }
    const variant_t others[] = { VARIANT_ANTICHESS, VARIANT_HORDE, VARIANT_RACING_KINGS };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        char *svg = variant_picture(variant_rules(others[i])->start_fen, others[i], &o);
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, " width=\"360\" height=\"360\" viewBox=\"0 0 880 880\""));
        CU_ASSERT_PTR_NULL(strstr(svg, BOARD_SVG_STRIP_FILL));
        CU_ASSERT_PTR_NULL(strstr(svg, "translate("));
        CU_ASSERT_PTR_NULL(strstr(svg, "id=\"hawk\""));
        free(svg);
    }
    free(standard);
}

static void test_s_chess_defines_the_hawk_and_the_elephant_and_draws_them(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.coordinates = false;
    char *svg = variant_picture("rnbqkbnr/pppppppp/3he3/8/8/3HE3/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
                                VARIANT_SEIRAWAN, &o);
    const char *const shapes[] = { "pawn", "knight", "bishop", "rook", "queen", "king", "hawk", "elephant" };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char id[48];
        snprintf(id, sizeof id, "<g id=\"%s\"><", shapes[i]); /* defined once, not empty */
        CU_ASSERT_EQUAL(count(svg, id), 1);
    }
    /* d3 and e3 (board moved down by the strip), d6 and e6 */
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<use xlink:href=\"#white-hawk\" x=\"300\" y=\"500\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<use xlink:href=\"#white-elephant\" x=\"400\" y=\"500\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<use xlink:href=\"#black-hawk\" x=\"300\" y=\"200\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<use xlink:href=\"#black-elephant\" x=\"400\" y=\"200\"/>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<g transform=\"translate(0 100)\">"));
    CU_ASSERT_TRUE(xml_well_formed(svg));
    free(svg);
}

/* The strip's piece at cell `cell` (0 first) of the strip whose top is at y,
 * and its count, as written. */
static void pocket_piece(char *out, size_t size, const char *piece, int margin, int cell, int y, int held)
{
    int x = margin + cell * BOARD_SVG_STRIP_CELL;
    snprintf(out, size, "<use xlink:href=\"#%s\" x=\"%d\" y=\"%d\"/><text x=\"%d\" y=\"%d\">%d</text>", piece, x, y,
             x + BOARD_SVG_SQUARE + 4, y + BOARD_SVG_STRIP / 2 + 16, held);
}

static void test_crazyhouse_pockets_are_strips_above_and_below_the_board(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    const char *fen = "r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R[PPNqqqbbbbbbbbbbbb] w KQkq - 0 5";
    char *svg = variant_picture(fen, VARIANT_CRAZYHOUSE, &o), want[256];
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, " width=\"360\" height=\"442\" viewBox=\"0 0 880 1080\""));
    CU_ASSERT_TRUE(xml_well_formed(svg));
    CU_ASSERT_EQUAL(count(svg, BOARD_SVG_STRIP_FILL), 2);
    /* white's below (its top at 100 + 880), black's above */
    pocket_piece(want, sizeof want, "white-pawn", BOARD_SVG_MARGIN, 0, 980, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "white-knight", BOARD_SVG_MARGIN, 1, 980, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "black-bishop", BOARD_SVG_MARGIN, 2, 0, 12);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "black-queen", BOARD_SVG_MARGIN, 4, 0, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    CU_ASSERT_EQUAL(count(svg, "<text x=\"") - 16, 4); /* the four types held, beside the 16 labels */
    CU_ASSERT_EQUAL(count(svg, "<use ") - 32 - 12, 4); /* beside the 32 on the board and the 12 in defs */
    free(svg);
    /* turned, without coordinates: black's below from x 0, white's above */
    o.orientation = BLACK;
    o.coordinates = false;
    o.size = 800;
    svg = variant_picture(fen, VARIANT_CRAZYHOUSE, &o);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, " width=\"800\" height=\"1000\" viewBox=\"0 0 800 1000\""));
    pocket_piece(want, sizeof want, "white-pawn", 0, 0, 0, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "black-queen", 0, 4, 900, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    free(svg);
}

static void test_s_chess_reserves_and_three_check_counts_are_drawn(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    char *svg = variant_picture(variant_rules(VARIANT_SEIRAWAN)->start_fen, VARIANT_SEIRAWAN, &o), want[256];
    pocket_piece(want, sizeof want, "black-hawk", BOARD_SVG_MARGIN, 0, 0, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "black-elephant", BOARD_SVG_MARGIN, 1, 0, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    pocket_piece(want, sizeof want, "white-elephant", BOARD_SVG_MARGIN, 1, 980, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want));
    free(svg);
    /* X-FEN's remaining checks: White has given 2, Black 1 */
    svg = variant_picture("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 1+2 0 1", VARIANT_THREE_CHECK, &o);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, " viewBox=\"0 0 880 1080\""));
    CU_ASSERT_EQUAL(count(svg, " r=\"22\""), 6);
    CU_ASSERT_EQUAL(count(svg, "r=\"22\" fill=\"" BOARD_SVG_CHECK "\""), 3);
    snprintf(want, sizeof want, "<circle cx=\"%d\" cy=\"%d\" r=\"22\" fill=\"%s\"", BOARD_SVG_MARGIN + 90, 980 + 50,
             BOARD_SVG_CHECK);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want)); /* white's second */
    snprintf(want, sizeof want, "<circle cx=\"%d\" cy=\"50\" r=\"22\" fill=\"none\"", BOARD_SVG_MARGIN + 90);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, want)); /* black's second: not given */
    CU_ASSERT_TRUE(xml_well_formed(svg));
    free(svg);
}

static void test_a_drop_highlights_its_one_square_once(void)
{
    board_svg_options_t o;
    board_svg_options_default(&o);
    o.lastmove_from = o.lastmove_to = square_make(4, 5); /* e6 */
    char *svg = variant_picture("rnbqkbnr/ppp1pppp/4P3/3q4/8/8/PPPP1PPP/RNBQKBNR[p] b KQkq - 0 3",
                                VARIANT_CRAZYHOUSE, &o);
    CU_ASSERT_EQUAL(count(svg, BOARD_SVG_LASTMOVE_LIGHT) + count(svg, BOARD_SVG_LASTMOVE_DARK), 1);
    free(svg);
}

/* A request whose query is the given target's. */
static bool request_for(const char *raw, target_t *target, api_request_t *req)
{
    char detail[160];
    memset(req, 0, sizeof *req);
    if (target_parse(raw, strlen(raw), target, detail, sizeof detail) != TARGET_OK)
        return false;
    req->method = "GET";
    req->target = target;
    req->path = target->path;
    return true;
}

static void test_query_parameters_are_read_strictly(void)
{
    static const struct {
        const char *target;
        bool with_lastmove, ok;
    } cases[] = {
        { "/p", true, true },
        { "/p?orientation=black&check=false&coordinates=0&size=64&lastmove=e7e8q", true, true },
        { "/p?orientation=Black", true, false },
        { "/p?orientation=", true, false },
        { "/p?size=63", true, false },
        { "/p?size=2049", true, false },
        { "/p?size=360px", true, false },
        { "/p?size=-360", true, false },
        { "/p?size=99999999999999999999", true, false },
        { "/p?check=maybe", true, false },
        { "/p?coordinates=yes", true, false },
        { "/p?lastmove=e2e2", true, false },
        { "/p?lastmove=e2e9", true, false },
        { "/p?lastmove=e2-e4", true, false },
        { "/p?lastmove=Nf3", true, false },
        { "/p?lastmove=Nf3", false, true }, /* not read when the last move is the game's */
        { "/p?lastmove=P@e4", true, false }, /* standard chess: no drops, gates or king promotions */
        { "/p?lastmove=b1c3h", true, false },
        { "/p?lastmove=e7e8k", true, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        target_t target;
        api_request_t req;
        api_response_t res;
        memset(&res, 0, sizeof res);
        board_svg_options_t o;
        CU_ASSERT_TRUE_FATAL(request_for(cases[i].target, &target, &req));
        bool ok = board_svg_read_query(&req, cases[i].with_lastmove, &o, &res);
        if (ok != cases[i].ok)
            fprintf(stderr, "\n%s: read %s\n", cases[i].target, ok ? "ok" : "refused");
        CU_ASSERT_EQUAL(ok, cases[i].ok);
        if (!ok) {
            CU_ASSERT_EQUAL(res.status, 400);
            CU_ASSERT_STRING_EQUAL(res.problem_code ? res.problem_code : "", "invalid_parameter");
        }
        free(res.body);
    }
    target_t target;
    api_request_t req;
    api_response_t res;
    board_svg_options_t o;
    memset(&res, 0, sizeof res);
    CU_ASSERT_TRUE_FATAL(request_for("/p?orientation=black&check=false&coordinates=0&size=64&lastmove=e7e8q",
                                     &target, &req));
    CU_ASSERT_TRUE_FATAL(board_svg_read_query(&req, true, &o, &res));
    CU_ASSERT_EQUAL(o.orientation, BLACK);
    CU_ASSERT_FALSE(o.mark_check);
    CU_ASSERT_FALSE(o.coordinates);
    CU_ASSERT_EQUAL(o.size, 64);
    CU_ASSERT_EQUAL(o.lastmove_from, square_make(4, 6));
    CU_ASSERT_EQUAL(o.lastmove_to, square_make(4, 7));
    CU_ASSERT_TRUE_FATAL(request_for("/p", &target, &req));
    CU_ASSERT_TRUE_FATAL(board_svg_read_query(&req, true, &o, &res));
    CU_ASSERT_EQUAL(o.orientation, WHITE);
    CU_ASSERT_TRUE(o.mark_check);
    CU_ASSERT_TRUE(o.coordinates);
    CU_ASSERT_EQUAL(o.size, BOARD_SVG_SIZE_DEFAULT);
    CU_ASSERT_EQUAL(o.lastmove_from, SQ_NONE);
}

/* Each variant's lastmove: crazyhouse's drops, antichess's king promotion,
 * S-chess's gates and promotions; none of them in another variant. */
static void test_lastmove_is_read_in_the_forms_its_variant_writes(void)
{
    static const struct {
        const char *lastmove;
        variant_t variant;
        bool ok;
    } cases[] = {
        { "e7e8q", VARIANT_STANDARD, true },        { "P@e4", VARIANT_STANDARD, false },
        { "P@e4", VARIANT_CRAZYHOUSE, true },       { "q@d5", VARIANT_CRAZYHOUSE, true },
        { "K@e4", VARIANT_CRAZYHOUSE, false },      { "H@e4", VARIANT_CRAZYHOUSE, false },
        { "P@e4", VARIANT_SEIRAWAN, false },        { "b1c3h", VARIANT_SEIRAWAN, true },
        { "e1g1e", VARIANT_SEIRAWAN, true },        { "e7e8h", VARIANT_SEIRAWAN, true },
        { "e7e8k", VARIANT_SEIRAWAN, false },       { "b1c3h", VARIANT_CRAZYHOUSE, false },
        { "e7e8k", VARIANT_ANTICHESS, true },       { "e2e4k", VARIANT_ANTICHESS, false },
        { "e7e8k", VARIANT_ATOMIC, false },         { "e7e8p", VARIANT_ANTICHESS, false },
        { "e2e2", VARIANT_CRAZYHOUSE, false },      { "e7e8e", VARIANT_THREE_CHECK, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char raw[64];
        snprintf(raw, sizeof raw, "/p?lastmove=%s", cases[i].lastmove);
        target_t target;
        api_request_t req;
        api_response_t res;
        memset(&res, 0, sizeof res);
        board_svg_options_t o;
        board_svg_options_default(&o);
        CU_ASSERT_TRUE_FATAL(request_for(raw, &target, &req));
        bool ok = board_svg_read_lastmove(&req, cases[i].variant, &o, &res);
        if (ok != cases[i].ok)
            fprintf(stderr, "\n%s in %s: read %s\n", cases[i].lastmove, variant_rules(cases[i].variant)->key,
                    ok ? "ok" : "refused");
        CU_ASSERT_EQUAL(ok, cases[i].ok);
        if (!ok)
            CU_ASSERT_STRING_EQUAL(res.problem_code ? res.problem_code : "", "invalid_parameter");
        free(res.body);
    }
    /* a drop's one square, both ends */
    target_t target;
    api_request_t req;
    api_response_t res;
    memset(&res, 0, sizeof res);
    board_svg_options_t o;
    board_svg_options_default(&o);
    CU_ASSERT_TRUE_FATAL(request_for("/p?lastmove=N@f3", &target, &req));
    CU_ASSERT_TRUE_FATAL(board_svg_read_lastmove(&req, VARIANT_CRAZYHOUSE, &o, &res));
    CU_ASSERT_EQUAL(o.lastmove_from, square_make(5, 2));
    CU_ASSERT_EQUAL(o.lastmove_to, square_make(5, 2));
}

static void test_a_failed_allocation_answers_500_without_a_body(void)
{
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    board_svg_options_t o;
    board_svg_options_default(&o);
    for (long successes = 0; successes < 4; successes++) {
        api_response_t res;
        memset(&res, 0, sizeof res);
        tests_fail_allocations_after(successes);
        board_svg_respond(&res, &pos, &o);
        tests_allocations_work();
        CU_ASSERT_EQUAL(res.status, 500);
        CU_ASSERT_PTR_NULL(res.body);
        free(res.body);
    }
    api_response_t res;
    memset(&res, 0, sizeof res);
    board_svg_respond(&res, &pos, &o);
    CU_ASSERT_EQUAL(res.status, 200);
    CU_ASSERT_STRING_EQUAL(res.content_type, "image/svg+xml");
    CU_ASSERT_EQUAL(res.body_length, strlen(res.body));
    free(res.body);
}

int test_board_svg_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("board_svg", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return -1;
    CU_add_test(suite, "size is bounded and written as width and height",
                test_size_is_bounded_and_written_as_width_and_height);
    CU_add_test(suite, "options out of their range are refused", test_options_out_of_their_range_are_refused);
    CU_add_test(suite, "the document is well-formed SVG with a viewBox",
                test_the_document_is_well_formed_svg_with_a_view_box);
    CU_add_test(suite, "each shape is defined once and each piece used once",
                test_each_shape_is_defined_once_and_each_piece_used_once);
    CU_add_test(suite, "orientation decides the square at the top left",
                test_orientation_decides_the_square_at_the_top_left);
    CU_add_test(suite, "the last move is highlighted only when given",
                test_the_last_move_is_highlighted_only_when_given);
    CU_add_test(suite, "the checked king is marked unless turned off",
                test_the_checked_king_is_marked_unless_turned_off);
    CU_add_test(suite, "the same input gives the same bytes", test_the_same_input_gives_the_same_bytes);
    CU_add_test(suite, "standard pictures keep their bytes", test_standard_pictures_keep_their_bytes);
    CU_add_test(suite, "a variant without pockets or checks is the board alone",
                test_a_variant_without_pockets_or_checks_is_the_board_alone);
    CU_add_test(suite, "S-chess defines the Hawk and the Elephant and draws them",
                test_s_chess_defines_the_hawk_and_the_elephant_and_draws_them);
    CU_add_test(suite, "crazyhouse pockets are strips above and below the board",
                test_crazyhouse_pockets_are_strips_above_and_below_the_board);
    CU_add_test(suite, "S-chess reserves and three-check counts are drawn",
                test_s_chess_reserves_and_three_check_counts_are_drawn);
    CU_add_test(suite, "a drop highlights its one square once", test_a_drop_highlights_its_one_square_once);
    CU_add_test(suite, "query parameters are read strictly", test_query_parameters_are_read_strictly);
    CU_add_test(suite, "lastmove is read in the forms its variant writes",
                test_lastmove_is_read_in_the_forms_its_variant_writes);
    CU_add_test(suite, "a failed allocation answers 500 without a body",
                test_a_failed_allocation_answers_500_without_a_body);
    return CU_get_error();
}
