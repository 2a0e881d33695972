/* Why a requested move is not legal: a stable reason code and a sentence.
 * Reasons are checked in the order a player would expect (no piece, wrong
 * colour, impossible geometry, blocked path, king safety), so the first
 * applicable one is reported. */
#ifndef CHESSD_RULES_LEGALITY_H
#define CHESSD_RULES_LEGALITY_H

#include <stddef.h>

#include "position.h"

typedef enum {
    LEGALITY_OK = 0,
    LEGALITY_UNPARSEABLE,
    LEGALITY_NO_PIECE,
    LEGALITY_NOT_YOUR_PIECE,
    LEGALITY_CANNOT_MOVE_SO,
    LEGALITY_PATH_BLOCKED,
    LEGALITY_OWN_PIECE_ON_TARGET,
    LEGALITY_LEAVES_KING_IN_CHECK,
    LEGALITY_CASTLING_NO_RIGHT,
    LEGALITY_CASTLING_BLOCKED,
    LEGALITY_CASTLING_OUT_OF_CHECK,
    LEGALITY_CASTLING_THROUGH_CHECK,
    LEGALITY_CASTLING_INTO_CHECK,
    LEGALITY_PROMOTION_MISSING,
    LEGALITY_PROMOTION_INVALID,
    LEGALITY_AMBIGUOUS,
    LEGALITY_GAME_OVER, /* the game already ended by itself (set by callers that know the history) */
    LEGALITY_DROP_INVALID,     /* a drop outside crazyhouse, of a piece not in the pocket, or onto a bad square */
    LEGALITY_GATING_INVALID,   /* a gate outside S-chess, with no such reserve piece, or from a square with none */
    LEGALITY_MUST_CAPTURE,     /* antichess: a capture is possible, so a capture must be made */
    LEGALITY_GIVES_CHECK,      /* racing kings: no move may give check */
    LEGALITY_EXPLODES_OWN_KING, /* atomic: the capture would blow up the mover's own king */
    LEGALITY_REASON_COUNT
} legality_reason_t;

/* Stable snake_case name of a reason, e.g. "leaves_king_in_check". */
const char *legality_reason_code(legality_reason_t reason);

/* Explains why moving from `from` to `to` (promoting to `promotion`, or
 * NO_PIECE_TYPE) is not legal in pos; LEGALITY_OK when it is legal. The
 * sentence goes to message (always terminated). */
legality_reason_t legality_explain(const position_t *pos, int from, int to, piece_type_t promotion,
                                   char *message, size_t message_size);

/* The same for dropping a piece of `type` from the pocket on `to`. */
legality_reason_t legality_explain_drop(const position_t *pos, piece_type_t type, int to, char *message,
                                        size_t message_size);

#endif
