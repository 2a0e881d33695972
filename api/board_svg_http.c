/* The HTTP side of the board pictures: a picture's options read from a
 * request's query (bad ones become 400 invalid_parameter problems) and the
 * 200 answer that carries the SVG api/render/board_svg.c draws. Used by GET
 * /v1/position and GET /v1/games/{id}/board.svg. */
#include "board_svg_http.h"

#include <stdio.h>
#include <string.h>

#include "input.h"
#include "problem.h"

static bool bad_parameter(api_response_t *res, const char *detail)
{
    api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
    return false;
}

/* A whole number of pixels in the size bounds (at most 4 digits are read). */
static bool read_size(const char *text, int *size)
{
    size_t digits = strspn(text, "0123456789");
    if (digits == 0 || digits > 4 || text[digits])
        return false;
    int n = 0;
    for (size_t i = 0; i < digits; i++)
        n = n * 10 + (text[i] - '0');
    if (n < BOARD_SVG_SIZE_MIN || n > BOARD_SVG_SIZE_MAX)
        return false;
    *size = n;
    return true;
}

/* Whether a lastmove in UCI could be a move: two different squares, and a
 * promotion only to a knight, bishop, rook or queen by a pawn's step or
 * capture from the 7th rank to the 8th (or the 2nd to the 1st). */
static bool lastmove_fits(const uci_text_t *move)
{
    if (move->from == move->to)
        return false;
    if (move->promotion == NO_PIECE_TYPE)
        return true;
    int from_rank = square_rank(move->from), to_rank = square_rank(move->to);
    int files = square_file(move->from) - square_file(move->to);
    return move->promotion >= KNIGHT && move->promotion <= QUEEN && files >= -1 && files <= 1
           && ((from_rank == 6 && to_rank == 7) || (from_rank == 1 && to_rank == 0));
}

bool board_svg_read_query(const api_request_t *req, bool with_lastmove, board_svg_options_t *options,
                          api_response_t *res)
{
    board_svg_options_default(options);
    const char *value = api_request_query(req, "orientation");
    if (value) {
        int c = 0;
        while (c < COLOR_COUNT && strcmp(value, color_name((color_t)c)))
            c++;
        if (c == COLOR_COUNT)
            return bad_parameter(res, "query parameter 'orientation' must be white or black");
        options->orientation = (color_t)c;
    }
    if (!input_query_bool(req, "check", true, &options->mark_check, res) ||
        !input_query_bool(req, "coordinates", true, &options->coordinates, res))
        return false;
    value = api_request_query(req, "size");
    if (value && !read_size(value, &options->size)) {
        char detail[96];
        snprintf(detail, sizeof detail, "query parameter 'size' must be a whole number of pixels from %d to %d",
                 BOARD_SVG_SIZE_MIN, BOARD_SVG_SIZE_MAX);
        return bad_parameter(res, detail);
    }
    value = with_lastmove ? api_request_query(req, "lastmove") : NULL;
    if (value) {
        uci_text_t move;
        if (!uci_read(value, strlen(value), &move) || !lastmove_fits(&move))
            return bad_parameter(res, "query parameter 'lastmove' must be a move in UCI, two different squares "
                                      "and, for a pawn reaching the last rank, an optional promotion piece "
                                      "n, b, r or q (e2e4, e7e8q)");
        options->lastmove_from = move.from;
        options->lastmove_to = move.to;
    }
    return true;
}

void board_svg_respond(api_response_t *res, const position_t *pos, const board_svg_options_t *options)
{
    buf_t out;
    buf_init(&out);
    if (!board_svg_write(&out, pos, options)) {
        buf_free(&out);
        api_problem(res, API_EINTERNAL, "the picture's options are out of their bounds", NULL, NULL);
        return;
    }
    size_t length = 0;
    char *body = buf_finish(&out, &length);
    api_response_set(res, 200, BOARD_SVG_CONTENT_TYPE, body, length);
}
