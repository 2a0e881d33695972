/* The HTTP side of the board pictures: their options read from a request's
 * query, and the answer carrying the picture. The drawing itself is
 * api/render/board_svg.h, which knows nothing of requests. */
#ifndef CHESSD_API_HANDLERS_BOARD_SVG_HTTP_H
#define CHESSD_API_HANDLERS_BOARD_SVG_HTTP_H

#include <stdbool.h>

#include "../../rules/rules.h"
#include "../http/request.h"
#include "../render/board_svg.h"

/* Reads orientation (white|black), check, coordinates (true|false, 1|0),
 * size (BOARD_SVG_SIZE_MIN..MAX) and, when with_lastmove, lastmove as
 * standard chess writes it (board_svg_read_lastmove) from req's query into
 * *options (defaults for those absent). False with res filled (400
 * invalid_parameter) when one is bad. */
bool board_svg_read_query(const api_request_t *req, bool with_lastmove, board_svg_options_t *options,
                          api_response_t *res);

/* Reads lastmove from req's query into *options, in the forms variant
 * writes: UCI squares (e2e4, e7e8q; a promotion only from the 7th rank to
 * the 8th or the 2nd to the 1st, to n, b, r or q, antichess's k, S-chess's h
 * or e), crazyhouse's drops (P@e4: from and to its one square), S-chess's
 * gates after any move (b1c3h). True when absent; false with res filled
 * (400 invalid_parameter) when it is not one of those. */
bool board_svg_read_lastmove(const api_request_t *req, variant_t variant, board_svg_options_t *options,
                             api_response_t *res);

/* Sets res to 200 with the picture of pos (or 500 when memory runs out). */
void board_svg_respond(api_response_t *res, const position_t *pos, const board_svg_options_t *options);

#endif
