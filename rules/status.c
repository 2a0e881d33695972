/* Game status. Order of precedence: checkmate and stalemate first (a mate on
 * the 150th halfmove is a mate), then the automatic draws, then the claims,
 * which exist only while the game is still going. */
#include "status.h"

#include "movegen.h"
#include "variant.h"

static const char *const state_names[STATUS_STATE_COUNT] = { "active", "checkmate", "stalemate", "draw",
                                                              "variant_end" };
static const char *const draw_names[STATUS_DRAW_REASON_COUNT] = { "none", "insufficient_material",
                                                                  "seventyfive_moves", "fivefold_repetition" };

const char *status_state_name(status_state_t state)
{
    return (unsigned)state < STATUS_STATE_COUNT ? state_names[state] : "unknown";
}

const char *status_draw_reason_name(status_draw_reason_t reason)
{
    return (unsigned)reason < STATUS_DRAW_REASON_COUNT ? draw_names[reason] : "unknown";
}

bool status_insufficient_material(const position_t *pos)
{
    const bitboard_t *t = pos->by_type;
    if (t[PAWN] | t[ROOK] | t[QUEEN])
        return false;
    bitboard_t minors = t[KNIGHT] | t[BISHOP];
    if (!bb_more_than_one(minors))
        return true; /* K v K, or K + one minor v K */
    if (t[KNIGHT])
        return false;
    /* Only bishops: mate needs bishops on both square colours. */
    return !(t[BISHOP] & BB_DARK_SQUARES) || !(t[BISHOP] & ~BB_DARK_SQUARES);
}

/* Standard chess's rule (see status.h). */
static bool chess_insufficient_for(const position_t *pos, color_t color)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t own = pos->by_color[color], theirs = pos->by_color[(color_t)!color];
    if (own & (t[PAWN] | t[ROOK] | t[QUEEN]))
        return false;
    if (own & t[KNIGHT]) /* a lone knight mates only against a king hemmed in by its own men */
        return bb_count(own) <= 2 && !(theirs & ~(t[KING] | t[QUEEN]));
    if (own & t[BISHOP]) {
        bool one_square_colour = !(t[BISHOP] & BB_DARK_SQUARES) || !(t[BISHOP] & ~BB_DARK_SQUARES);
        return one_square_colour && !(t[PAWN] | t[KNIGHT]);
    }
    return true; /* a bare king */
}

bool status_insufficient_material_for(const position_t *pos, color_t color)
{
    switch (pos->variant) {
    case VARIANT_STANDARD:
        return chess_insufficient_for(pos, color);
    case VARIANT_SEIRAWAN: /* a Hawk or an Elephant, on the board or still to come, can mate */
        return !(pos->by_type[HAWK] | pos->by_type[ELEPHANT] | pos->gates) && chess_insufficient_for(pos, color);
    default:
        return variant_insufficient_material_for(pos, color);
    }
}

int status_repetitions(const position_t *pos, const uint64_t *history, size_t history_count)
{
    size_t reach = pos->halfmove_clock < history_count ? pos->halfmove_clock : history_count;
    int count = 1;
    /* Only positions with the same side to move can match: every second ply back. */
    for (size_t back = 2; back <= reach; back += 2)
        if (history[history_count - back] == pos->key)
            count++;
    return count;
}

/* A variant's own end, or antichess's stalemate (a win): true when pos
 * ends so, with out filled. */
static bool variant_ended(const position_t *pos, status_t *out)
{
    color_t winner = COLOR_COUNT;
    variant_end_t end = variant_end(pos, &winner);
    if (end == VARIANT_END_NONE && pos->variant == VARIANT_ANTICHESS && out->legal_move_count == 0) {
        end = VARIANT_END_STALEMATE_WIN;
        winner = (color_t)pos->side_to_move;
    }
    if (end == VARIANT_END_NONE)
        return false;
    out->state = STATUS_VARIANT_END;
    out->variant_end = end;
    out->winner = winner;
    return true;
}

void status_evaluate(const position_t *pos, const uint64_t *history, size_t history_count, status_t *out)
{
    out->check = position_in_check(pos);
    out->legal_move_count = movegen_count(pos);
    out->repetitions = status_repetitions(pos, history, history_count);
    out->state = STATUS_ACTIVE;
    out->draw_reason = STATUS_DRAW_NONE;
    out->claimable = 0;
    out->variant_end = VARIANT_END_NONE;
    out->winner = COLOR_COUNT;

    bool variant = pos->variant != VARIANT_STANDARD;
    if (variant && variant_ended(pos, out))
        return;
    if (out->legal_move_count == 0) {
        out->state = out->check ? STATUS_CHECKMATE : STATUS_STALEMATE;
        return;
    }
    bool fifty = !variant || !(variant_rules((variant_t)pos->variant)->flags & VARIANT_NO_FIFTY_MOVES);
    bool insufficient = variant ? status_insufficient_material_for(pos, WHITE)
                                      && status_insufficient_material_for(pos, BLACK)
                                : status_insufficient_material(pos);
    if (insufficient)
        out->draw_reason = STATUS_DRAW_INSUFFICIENT_MATERIAL;
    else if (out->repetitions >= 5)
        out->draw_reason = STATUS_DRAW_FIVEFOLD_REPETITION;
    else if (fifty && pos->halfmove_clock >= 150)
        out->draw_reason = STATUS_DRAW_SEVENTYFIVE_MOVES;
    if (out->draw_reason != STATUS_DRAW_NONE) {
        out->state = STATUS_DRAW;
        return;
    }
    if (fifty && pos->halfmove_clock >= 100)
        out->claimable |= STATUS_CLAIM_FIFTY_MOVES;
    if (out->repetitions >= 3)
        out->claimable |= STATUS_CLAIM_THREEFOLD_REPETITION;
}
