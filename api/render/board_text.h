/* The text/plain rendering of a position: a board diagram with its status
 * and legal moves, for terminals (GET/POST /v1/position with Accept:
 * text/plain). */
#ifndef CHESSD_API_RENDER_BOARD_TEXT_H
#define CHESSD_API_RENDER_BOARD_TEXT_H

#include <stddef.h>

#include "../../rules/rules.h"

/* A board diagram with a variant's pockets, reserves and checks given,
 * status and legal moves in SAN, for terminals. The text is malloc'd
 * (caller frees) and its length set in *length; NULL when out of memory. */
char *board_text_render(const position_t *pos, const status_t *status, bool with_moves, size_t *length);

#endif
