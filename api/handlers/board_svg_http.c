/* The HTTP side of the board pictures: a picture's options read from a
 * request's query (bad ones become 400 invalid_parameter problems; a
 * lastmove in the forms its variant writes) and the 200 answer that carries
 * the SVG api/render/board_svg.c draws. Used by GET /v1/position and GET
 * /v1/games/{id}/board.svg. */
#include "board_svg_http.h"

#include <stdio.h>
#include <string.h>

#include "../input.h"
#include "../problem.h"

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

/* The promotion letters a variant's pawns may name: n, b, r or q; antichess
 * adds k, S-chess h and e. */
static bool promotes_to(piece_type_t letter, variant_t variant, unsigned flags)
{
    return (letter >= KNIGHT && letter <= QUEEN) || (letter == KING && variant == VARIANT_ANTICHESS)
           || ((letter == HAWK || letter == ELEPHANT) && flags & VARIANT_HAS_RESERVES);
}

/* Whether a lastmove in UCI could be a move of variant, by its form alone:
 * two different squares, and a promotion letter only on a pawn's step or
 * capture from the 7th rank to the 8th (or the 2nd to the 1st). Crazyhouse
 * adds drops of P, N, B, R or Q (P@e4); S-chess a gate, h or e, after any
 * move (b1c3h). */
static bool lastmove_fits(const uci_text_t *move, variant_t variant)
{
    const variant_rules_t *rules = variant_rules(variant);
    unsigned flags = rules ? rules->flags : 0;
    if (move->drop != NO_PIECE_TYPE)
        return flags & VARIANT_HAS_POCKETS && move->drop <= QUEEN;
    if (move->from == move->to)
        return false;
    bool gate = move->promotion == HAWK || move->promotion == ELEPHANT;
    if (move->promotion == NO_PIECE_TYPE || (gate && flags & VARIANT_HAS_RESERVES))
        return true;
    int from_rank = square_rank(move->from), to_rank = square_rank(move->to);
    int files = square_file(move->from) - square_file(move->to);
    return promotes_to(move->promotion, variant, flags) && files >= -1 && files <= 1
           && ((from_rank == 6 && to_rank == 7) || (from_rank == 1 && to_rank == 0));
}

/* The 400 for a lastmove variant does not write: the forms it does. */
static bool bad_lastmove(api_response_t *res, variant_t variant)
{
    const variant_rules_t *rules = variant_rules(variant);
    unsigned flags = rules ? rules->flags : 0;
    const char *letters = variant == VARIANT_ANTICHESS ? "n, b, r, q or k"
                          : flags & VARIANT_HAS_RESERVES ? "n, b, r, q, h or e"
                                                         : "n, b, r or q";
    char detail[320];
    snprintf(detail, sizeof detail,
             "query parameter 'lastmove' must be a move in UCI, two different squares and, for a pawn reaching the "
             "last rank, an optional promotion piece %s (e2e4, e7e8q)%s%s",
             letters, flags & VARIANT_HAS_POCKETS ? "; in crazyhouse a drop of P, N, B, R or Q too (P@e4)" : "",
             flags & VARIANT_HAS_RESERVES ? "; in S-chess any move with a gate, h or e (b1c3h)" : "");
    return bad_parameter(res, detail);
}

bool board_svg_read_lastmove(const api_request_t *req, variant_t variant, board_svg_options_t *options,
                             api_response_t *res)
{
    const char *value = api_request_query(req, "lastmove");
    if (!value)
        return true;
    uci_text_t move;
    if (!uci_read(value, strlen(value), &move) || !lastmove_fits(&move, variant))
        return bad_lastmove(res, variant);
    options->lastmove_from = move.from;
    options->lastmove_to = move.to; /* a drop's one square: from == to */
    return true;
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
    return !with_lastmove || board_svg_read_lastmove(req, VARIANT_STANDARD, options, res);
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
