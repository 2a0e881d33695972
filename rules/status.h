/* Game status under the FIDE Laws: check, checkmate, stalemate, the draws
 * that end a game by themselves (insufficient material, the 75-move rule,
 * fivefold repetition) and the draws a player may claim (50-move rule,
 * threefold repetition). Repetition is judged from the game's history of
 * position keys, which the caller supplies. */
#ifndef CHESSD_RULES_STATUS_H
#define CHESSD_RULES_STATUS_H

#include <stddef.h>

#include "position.h"

/* STATUS_VARIANT_END: the variant's own end (variant.h), with its winner. */
typedef enum {
    STATUS_ACTIVE = 0, STATUS_CHECKMATE, STATUS_STALEMATE, STATUS_DRAW, STATUS_VARIANT_END, STATUS_STATE_COUNT
} status_state_t;

typedef enum {
    STATUS_DRAW_NONE = 0,
    STATUS_DRAW_INSUFFICIENT_MATERIAL,
    STATUS_DRAW_SEVENTYFIVE_MOVES,
    STATUS_DRAW_FIVEFOLD_REPETITION,
    STATUS_DRAW_REASON_COUNT
} status_draw_reason_t;

/* Bits of status_t.claimable. */
enum { STATUS_CLAIM_FIFTY_MOVES = 1, STATUS_CLAIM_THREEFOLD_REPETITION = 2 };

typedef struct {
    bool check;
    status_state_t state;
    status_draw_reason_t draw_reason; /* set when state is STATUS_DRAW */
    unsigned claimable;               /* STATUS_CLAIM_* bits; 0 once the game is over */
    int repetitions;                  /* occurrences of this position, this one included */
    int legal_move_count;
    int variant_end;                  /* variant_end_t, set when state is STATUS_VARIANT_END */
    int winner;                       /* STATUS_VARIANT_END: WHITE, BLACK, or COLOR_COUNT for a draw */
} status_t;

/* Evaluates pos by its variant's rules (a variant's own end first, then
 * mate and stalemate, then the draws it keeps). history holds the keys of the game's earlier positions,
 * oldest first, without pos itself (may be NULL when history_count is 0). */
void status_evaluate(const position_t *pos, const uint64_t *history, size_t history_count, status_t *out);

/* How many times pos has occurred: 1 + the earlier positions with its key
 * since the last irreversible move (bounded by the halfmove clock). */
int status_repetitions(const position_t *pos, const uint64_t *history, size_t history_count);

/* Neither side can ever mate: K v K, K + minor v K, or only bishops besides
 * the kings, all on squares of one colour. */
bool status_insufficient_material(const position_t *pos);

/* Whether `color` has too little material ever to checkmate, judged by
 * material alone, exactly as chessops's hasInsufficientMaterial(color)
 * (Lichess's rule for a flag fall, FIDE 6.9): true when `color` has
 *   - a bare king;
 *   - king and one knight, and the other side has nothing but its king and
 *     queens (any other piece or pawn of theirs could hem its king in; a
 *     queen next to its king could always take the checking knight);
 *   - king and bishops, and every bishop on the board stands on squares of
 *     one colour, with no pawn and no knight anywhere (the other side's
 *     rooks and queens do not count: they can always interpose or capture).
 * A safe under-approximation of FIDE 6.9's "no series of legal moves can
 * mate": it may say "can mate" where no mate is possible (where the pieces
 * stand, blocked pawns and whose turn it is are not looked at), never the
 * reverse. When the other side's flag falls, the game is drawn if this is
 * true for `color`, and won by `color` otherwise. A variant's position is
 * judged by the variant's rule (variant.h; S-chess: this one, unless a
 * Hawk or an Elephant is on the board or still to gate). */
bool status_insufficient_material_for(const position_t *pos, color_t color);

/* Stable names: "active", "checkmate", ...; "insufficient_material", ... */
const char *status_state_name(status_state_t state);
const char *status_draw_reason_name(status_draw_reason_t reason);

#endif
