/* JSON and text renderings of rules-core values for HTTP answers: the Move
 * and Position objects of openapi.yaml, and the text/plain board diagram. */
#ifndef CHESSD_API_JSON_OUT_H
#define CHESSD_API_JSON_OUT_H

#include "../../rules/rules.h"
#include "../http/jsonw.h"

/* A Move object for move (legal in pos; legal holds pos's legal moves). */
void json_out_move(jsonw_t *w, const position_t *pos, const move_list_t *legal, move_t move);

/* A Position object; legal_moves listed when with_moves. */
void json_out_position(jsonw_t *w, const position_t *pos, const status_t *status, bool with_moves);

/* What a game's Position says in place of the board's own verdict once the
 * game is over, so that its status and result are the game's: status (e.g.
 * "resigned"), result, draw_reason (NULL: null). Claimable draws are then
 * none. */
typedef struct {
    const char *status, *result, *draw_reason;
} json_out_ending_t;

/* json_out_position(), with ending's status, result and draw_reason (and no
 * claimable draws) when ending is not NULL. */
void json_out_position_ended(jsonw_t *w, const position_t *pos, const status_t *status, const json_out_ending_t *ending,
                             bool with_moves);

/* "1-0", "0-1", "1/2-1/2" or "*". */
const char *json_out_result(const position_t *pos, const status_t *status);

/* A board diagram with status and legal moves in SAN, for terminals. The
 * text is malloc'd (caller frees); NULL when out of memory. */
char *text_out_position(const position_t *pos, const status_t *status, bool with_moves, size_t *length);

#endif
