/* The JSON renderings of rules-core values for HTTP answers: the Move and
 * Position objects of openapi.yaml, written into a jsonw. */
#ifndef CHESSD_API_RENDER_POSITION_JSON_H
#define CHESSD_API_RENDER_POSITION_JSON_H

#include "../../rules/opening.h"
#include "../../rules/rules.h"
#include "../http/jsonw.h"

/* A Move object for move (legal in pos; legal holds pos's legal moves). */
void position_json_move(jsonw_t *w, const position_t *pos, const move_list_t *legal, move_t move);

/* A Position object, in the opening `opening` (NULL: none, "opening": null);
 * legal_moves listed when with_moves. */
void position_json_write(jsonw_t *w, const position_t *pos, const status_t *status, const opening_t *opening,
                         bool with_moves);

/* What a game's Position says in place of the board's own verdict once the
 * game is over, so that its status and result are the game's: status (e.g.
 * "resigned"), result, draw_reason (NULL: null). Claimable draws are then
 * none. */
typedef struct {
    const char *status, *result, *draw_reason;
} position_json_ending_t;

/* position_json_write(), with ending's status, result and draw_reason (and
 * no claimable draws) when ending is not NULL. moves_span, when not NULL,
 * gets where the legal_moves member lies in w's text (jsonw_length
 * offsets, from the comma before it to the end of its array; the same
 * offset twice when it is not written). */
void position_json_write_ended(jsonw_t *w, const position_t *pos, const status_t *status,
                               const position_json_ending_t *ending, const opening_t *opening, bool with_moves,
                               size_t moves_span[2]);

/* An Opening object ({"eco", "name"}), or null when opening is NULL. */
void position_json_opening(jsonw_t *w, const opening_t *opening);

/* The board's result: "1-0", "0-1", "1/2-1/2" or "*". */
const char *position_json_result(const position_t *pos, const status_t *status);

#endif
