/* Explains why a requested move is illegal. The checks run from the most
 * basic (is there a piece) to the most subtle (king safety), and the sentence
 * names the squares involved. The final verdict always agrees with
 * movegen_legal(): a move is reported legal exactly when the generator
 * produces it. */
#include "legality.h"

#include <stdio.h>

#include "message.h"
#include "movegen.h"
#include "uci_move.h"
#include "variant.h"

static const char *const reason_codes[LEGALITY_REASON_COUNT] = {
    [LEGALITY_OK] = "ok",
    [LEGALITY_UNPARSEABLE] = "unparseable",
    [LEGALITY_NO_PIECE] = "no_piece",
    [LEGALITY_NOT_YOUR_PIECE] = "not_your_piece",
    [LEGALITY_CANNOT_MOVE_SO] = "cannot_move_so",
    [LEGALITY_PATH_BLOCKED] = "path_blocked",
    [LEGALITY_OWN_PIECE_ON_TARGET] = "own_piece_on_target",
    [LEGALITY_LEAVES_KING_IN_CHECK] = "leaves_king_in_check",
    [LEGALITY_CASTLING_NO_RIGHT] = "castling_no_right",
    [LEGALITY_CASTLING_BLOCKED] = "castling_blocked",
    [LEGALITY_CASTLING_OUT_OF_CHECK] = "castling_out_of_check",
    [LEGALITY_CASTLING_THROUGH_CHECK] = "castling_through_check",
    [LEGALITY_CASTLING_INTO_CHECK] = "castling_into_check",
    [LEGALITY_PROMOTION_MISSING] = "promotion_missing",
    [LEGALITY_PROMOTION_INVALID] = "promotion_invalid",
    [LEGALITY_AMBIGUOUS] = "ambiguous",
    [LEGALITY_GAME_OVER] = "game_over",
    [LEGALITY_DROP_INVALID] = "drop_invalid",
    [LEGALITY_GATING_INVALID] = "gating_invalid",
    [LEGALITY_MUST_CAPTURE] = "must_capture",
    [LEGALITY_GIVES_CHECK] = "gives_check",
    [LEGALITY_EXPLODES_OWN_KING] = "explodes_own_king",
};

const char *legality_reason_code(legality_reason_t reason)
{
    return (unsigned)reason < LEGALITY_REASON_COUNT ? reason_codes[reason] : "unknown";
}

#define SAY(reason, ...) (legality_reason_t)message_set(reason, message, message_size, __VA_ARGS__)
#define SQ(sq) 'a' + square_file(sq), '1' + square_rank(sq)

static legality_reason_t explain_castling(const position_t *pos, int king, int rook, castle_side_t side,
                                          char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    const char *side_name = side == CASTLE_KING_SIDE ? "king side" : "queen side";
    if (rook == SQ_NONE || pos->castle_rook[us * 2 + side] != rook)
        return SAY(LEGALITY_CASTLING_NO_RIGHT, "%s has no right to castle %s", color_name(us), side_name);
    if (position_in_check(pos))
        return SAY(LEGALITY_CASTLING_OUT_OF_CHECK, "%s cannot castle out of check", color_name(us));
    int king_to = position_castle_king_to(pos, rook), rook_to = position_castle_rook_to(pos, rook);
    bitboard_t movers = bb_square(king) | bb_square(rook);
    bitboard_t must_be_empty = (attacks_between(king, king_to) | bb_square(king_to) | attacks_between(rook, rook_to)
                                | bb_square(rook_to)) & ~movers;
    bitboard_t blockers = must_be_empty & position_occupied(pos);
    if (blockers)
        return SAY(LEGALITY_CASTLING_BLOCKED, "castling %s needs %c%c empty", side_name, SQ(bb_lsb(blockers)));
    bitboard_t after = position_occupied(pos) ^ movers;
    bitboard_t path = attacks_between(king, king_to);
    while (path) {
        int sq = bb_pop_lsb(&path);
        if (position_attacked_by(pos, sq, (color_t)!us, after))
            return SAY(LEGALITY_CASTLING_THROUGH_CHECK, "the king would pass through %c%c, which is attacked",
                       SQ(sq));
    }
    if (position_attacked_by(pos, king_to, (color_t)!us, after))
        return SAY(LEGALITY_CASTLING_INTO_CHECK, "the king would castle into check on %c%c", SQ(king_to));
    return LEGALITY_OK;
}

/* Whether from->to is a castling request: the king onto its own rook (a
 * castling rook, any first-rank rook in Chess960, a corner rook from e1/e8 in
 * standard chess), or in standard chess the king's two-step from the e-file.
 * Sets rook and side. */
static bool castling_request(const position_t *pos, int from, int to, int *rook, castle_side_t *side)
{
    color_t us = (color_t)pos->side_to_move;
    int right = position_castle_index(pos, to);
    bool from_home = square_rank(from) == (us == WHITE ? 0 : 7) && square_rank(to) == square_rank(from);
    bool corner_from_e = square_file(from) == 4 && (square_file(to) == 0 || square_file(to) == 7);
    if (pos->board[to] == piece_make(us, ROOK) && from_home
        && ((right >= 0 && right / 2 == (int)us) || pos->chess960 || corner_from_e)) {
        *side = square_file(to) > square_file(from) ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
        *rook = to;
        return true;
    }
    if (!pos->chess960 && square_file(from) == 4 && square_rank(from) == (us == WHITE ? 0 : 7)
        && square_rank(to) == square_rank(from) && (square_file(to) == 6 || square_file(to) == 2)) {
        *side = square_file(to) == 6 ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
        *rook = pos->castle_rook[us * 2 + *side];
        return true;
    }
    return false;
}

/* The pieces a pawn may become: antichess adds the king, S-chess its two. */
static bool promotion_allowed(const position_t *pos, piece_type_t t)
{
    if (t >= KNIGHT && t <= QUEEN)
        return true;
    return (t == KING && pos->variant == VARIANT_ANTICHESS)
           || ((t == HAWK || t == ELEPHANT) && pos->variant == VARIANT_SEIRAWAN);
}

static const char *promotion_list(const position_t *pos)
{
    return pos->variant == VARIANT_ANTICHESS ? "queen, rook, bishop, knight or king"
           : pos->variant == VARIANT_SEIRAWAN ? "queen, rook, bishop, knight, hawk or elephant"
                                              : "queen, rook, bishop or knight";
}

/* Geometry and path of a pawn move; LEGALITY_OK when pseudo-legal. */
static legality_reason_t explain_pawn(const position_t *pos, int from, int to, piece_type_t promotion,
                                      char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    int forward = us == WHITE ? 8 : -8;
    int start_rank = us == WHITE ? 1 : 6, last_rank = us == WHITE ? 7 : 0;
    if (to == from + forward) {
        if (pos->board[to] != NO_PIECE)
            return SAY(LEGALITY_PATH_BLOCKED, "the pawn on %c%c is blocked by the piece on %c%c", SQ(from), SQ(to));
    } else if (to == from + 2 * forward) {
        bool horde_first_rank = pos->variant == VARIANT_HORDE && square_rank(from) == (us == WHITE ? 0 : 7);
        if (square_rank(from) != start_rank && !horde_first_rank)
            return SAY(LEGALITY_CANNOT_MOVE_SO, "a pawn moves two squares only from its starting rank");
        int blocker = pos->board[from + forward] != NO_PIECE ? from + forward : to;
        if (pos->board[from + forward] != NO_PIECE || pos->board[to] != NO_PIECE)
            return SAY(LEGALITY_PATH_BLOCKED, "the pawn on %c%c is blocked by the piece on %c%c", SQ(from),
                       SQ(blocker));
    } else if (bb_has(attacks_pawn(us, from), to)) {
        if (pos->board[to] == NO_PIECE && to != pos->en_passant)
            return SAY(LEGALITY_CANNOT_MOVE_SO, "a pawn moves diagonally only to capture, and %c%c is empty%s",
                       SQ(to), square_rank(to) == (us == WHITE ? 5 : 2) ? " (no en passant capture is possible)" : "");
    } else {
        return SAY(LEGALITY_CANNOT_MOVE_SO, "a pawn cannot move from %c%c to %c%c", SQ(from), SQ(to));
    }
    if (square_rank(to) == last_rank) {
        if (promotion == NO_PIECE_TYPE)
            return SAY(LEGALITY_PROMOTION_MISSING, "a pawn reaching %c%c must promote: add q, r, b or n", SQ(to));
        if (!promotion_allowed(pos, promotion))
            return SAY(LEGALITY_PROMOTION_INVALID, "a pawn promotes to a %s, not a %s", promotion_list(pos),
                       piece_type_name(promotion));
    } else if (promotion != NO_PIECE_TYPE) {
        return SAY(LEGALITY_PROMOTION_INVALID, "only a pawn reaching the last rank promotes");
    }
    return LEGALITY_OK;
}

static legality_reason_t explain_piece(const position_t *pos, piece_type_t type, int from, int to,
                                       piece_type_t promotion, char *message, size_t message_size)
{
    if (promotion != NO_PIECE_TYPE)
        return SAY(LEGALITY_PROMOTION_INVALID, "only a pawn reaching the last rank promotes");
    if (!bb_has(attacks_of(type, from, 0), to)) {
        if (type == KING && pos->chess960 && square_rank(from) == square_rank(to))
            return SAY(LEGALITY_CANNOT_MOVE_SO, "a king moves one square; in Chess960 castle by moving the king "
                       "onto its rook");
        return SAY(LEGALITY_CANNOT_MOVE_SO, "a %s cannot move from %c%c to %c%c", piece_type_name(type), SQ(from),
                   SQ(to));
    }
    bitboard_t blockers = attacks_between(from, to) & position_occupied(pos);
    if (type != KNIGHT && type != KING && blockers)
        return SAY(LEGALITY_PATH_BLOCKED, "the %s's path from %c%c to %c%c is blocked on %c%c", piece_type_name(type),
                   SQ(from), SQ(to), SQ(bb_lsb(blockers)));
    return LEGALITY_OK;
}

/* The move a pseudo-legal request stands for. */
static move_t request_move(const position_t *pos, int from, int to, piece_type_t promotion)
{
    if (piece_type(pos->board[from]) == PAWN) {
        if (to == pos->en_passant)
            return move_make(from, to, MOVE_EN_PASSANT, PAWN);
        if (promotion != NO_PIECE_TYPE)
            return move_make(from, to, MOVE_PROMOTION, promotion);
    }
    return move_make(from, to, MOVE_NORMAL, PAWN);
}

static legality_reason_t explain_variant(const position_t *pos, int from, int to, piece_type_t promotion,
                                         char *message, size_t message_size);

legality_reason_t legality_explain(const position_t *pos, int from, int to, piece_type_t promotion,
                                   char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    piece_t piece = pos->board[from];
    if (message && message_size)
        message[0] = '\0';
    if (piece == NO_PIECE)
        return SAY(LEGALITY_NO_PIECE, "there is no piece on %c%c", SQ(from));
    if (piece_color(piece) != us)
        return SAY(LEGALITY_NOT_YOUR_PIECE, "the %s on %c%c is %s's, and it is %s's move",
                   piece_type_name(piece_type(piece)), SQ(from), color_name((color_t)!us), color_name(us));
    if (from == to)
        return SAY(LEGALITY_CANNOT_MOVE_SO, "a move must leave its square");
    if (pos->variant != VARIANT_STANDARD)
        return explain_variant(pos, from, to, promotion, message, message_size);
    piece_type_t type = piece_type(piece);
    if (type != PAWN && (promotion == HAWK || promotion == ELEPHANT))
        return SAY(LEGALITY_GATING_INVALID, "only S-chess gates a piece; standard chess has none to gate");

    int rook;
    castle_side_t side;
    if (type == KING && castling_request(pos, from, to, &rook, &side)) {
        if (promotion != NO_PIECE_TYPE)
            return SAY(LEGALITY_PROMOTION_INVALID, "only a pawn reaching the last rank promotes");
        legality_reason_t r = explain_castling(pos, from, rook, side, message, message_size);
        if (r != LEGALITY_OK || movegen_is_legal(pos, move_make(from, rook, MOVE_CASTLING, PAWN)))
            return r;
        return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "castling would leave the king in check");
    }
    if (pos->board[to] != NO_PIECE && piece_color(pos->board[to]) == us)
        return SAY(LEGALITY_OWN_PIECE_ON_TARGET, "%c%c holds a %s piece", SQ(to), color_name(us));

    legality_reason_t r = type == PAWN ? explain_pawn(pos, from, to, promotion, message, message_size)
                                       : explain_piece(pos, type, from, to, promotion, message, message_size);
    if (r != LEGALITY_OK)
        return r;
    if (movegen_is_legal(pos, request_move(pos, from, to, promotion)))
        return LEGALITY_OK;
    if (type == KING)
        return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "the king would be in check on %c%c", SQ(to));
    if (position_in_check(pos))
        return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "%s is in check and %c%c%c%c does not answer it", color_name(us),
                   SQ(from), SQ(to));
    return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "the %s on %c%c is pinned: moving it would expose the king to check",
               piece_type_name(type), SQ(from));
}

/* ---- Variants ---- */

static legality_reason_t variant_over(const position_t *pos, char *message, size_t message_size)
{
    color_t winner;
    variant_end_t end = variant_end(pos, &winner);
    if (end == VARIANT_END_NONE)
        return LEGALITY_OK;
    return SAY(LEGALITY_GAME_OVER, "the game is over (%s): no move can be played", variant_end_name(end));
}

static bool any_capture(const position_t *pos)
{
    move_list_t legal;
    movegen_legal(pos, &legal);
    for (int i = 0; i < legal.count; i++)
        if (move_kind(legal.moves[i]) == MOVE_EN_PASSANT
            || (move_kind(legal.moves[i]) != MOVE_DROP && move_kind(legal.moves[i]) != MOVE_CASTLING
                && pos->board[move_to(legal.moves[i])] != NO_PIECE))
            return true;
    return false;
}

/* Why a move that is geometrically fine is refused by the variant. */
static legality_reason_t explain_variant_rule(const position_t *pos, move_t move, char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    int from = move_from(move), to = move_to(move);
    piece_type_t type = piece_type(pos->board[from]);
    bool capture = move_kind(move) == MOVE_EN_PASSANT || pos->board[to] != NO_PIECE;
    if (pos->variant == VARIANT_ANTICHESS && !capture && any_capture(pos))
        return SAY(LEGALITY_MUST_CAPTURE, "a capture is possible, and in antichess a capture must be made");
    position_t after = *pos;
    position_undo_t undo;
    position_make(&after, move, &undo);
    if (pos->variant == VARIANT_RACING_KINGS) {
        int theirs = after.king_square[!us];
        if (theirs != SQ_NONE && variant_attackers(&after, theirs, us, position_occupied(&after)))
            return SAY(LEGALITY_GIVES_CHECK, "%c%c%c%c would give check, which racing kings forbids", SQ(from),
                       SQ(to));
    }
    if (pos->variant == VARIANT_ATOMIC && !position_pieces(&after, us, KING))
        return type == KING && capture
                   ? SAY(LEGALITY_EXPLODES_OWN_KING, "in atomic a king cannot capture: it would explode")
                   : SAY(LEGALITY_EXPLODES_OWN_KING, "the capture on %c%c would blow up the %s king", SQ(to),
                         color_name(us));
    if (position_in_check(pos))
        return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "%s is in check and %c%c%c%c does not answer it", color_name(us),
                   SQ(from), SQ(to));
    if (type == KING)
        return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "the king would be in check on %c%c", SQ(to));
    return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "the %s on %c%c is pinned: moving it would expose the king to check",
               piece_type_name(type), SQ(from));
}

static legality_reason_t explain_gate(const position_t *pos, move_t move, char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    piece_type_t gate = move_gate(move);
    if (pos->variant != VARIANT_SEIRAWAN)
        return SAY(LEGALITY_GATING_INVALID, "only S-chess gates a piece; %s has none to gate",
                   variant_rules((variant_t)pos->variant)->key);
    if (!pos->pocket[us][gate])
        return SAY(LEGALITY_GATING_INVALID, "%s has no %s in reserve", color_name(us), piece_type_name(gate));
    int square = move_kind(move) == MOVE_CASTLING && move_gate_on_rook(move) ? move_to(move) : move_from(move);
    if (!bb_has(pos->gates, square))
        return SAY(LEGALITY_GATING_INVALID, "nothing can be gated on %c%c: the piece there has moved before",
                   SQ(square));
    return LEGALITY_OK;
}

static legality_reason_t explain_variant(const position_t *pos, int from, int to, piece_type_t promotion,
                                         char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    piece_type_t type = piece_type(pos->board[from]);
    uci_text_t text = { from, to, promotion, NO_PIECE_TYPE };
    move_t move = uci_to_move(pos, &text);
    /* A fifth letter must become a promotion or a gate: "e2e3q" is no e2e3. */
    bool promotes = type == PAWN && (bb_square(to) & (BB_RANK_1 | BB_RANK_8));
    if (promotion != NO_PIECE_TYPE && !promotes && !move_gate(move))
        return pos->variant == VARIANT_SEIRAWAN && (promotion == HAWK || promotion == ELEPHANT)
                   ? SAY(LEGALITY_GATING_INVALID, "the %s can be gated only where a piece leaves the back rank, "
                                                  "not from %c%c", piece_type_name(promotion), SQ(from))
                   : SAY(LEGALITY_PROMOTION_INVALID, "only a pawn reaching the last rank promotes");
    if (movegen_is_legal(pos, move))
        return LEGALITY_OK;
    legality_reason_t r = variant_over(pos, message, message_size);
    if (r != LEGALITY_OK)
        return r;
    if (move_gate(move) && (r = explain_gate(pos, move, message, message_size)) != LEGALITY_OK)
        return r;
    if (move_kind(move) == MOVE_CASTLING) {
        if (variant_rules((variant_t)pos->variant)->flags & VARIANT_NO_CASTLING)
            return SAY(LEGALITY_CASTLING_NO_RIGHT, "%s is played without castling",
                       variant_rules((variant_t)pos->variant)->key);
        castle_side_t side = square_file(move_to(move)) > square_file(move_from(move)) ? CASTLE_KING_SIDE
                                                                                       : CASTLE_QUEEN_SIDE;
        r = explain_castling(pos, move_from(move), move_to(move), side, message, message_size);
        return r != LEGALITY_OK ? r : SAY(LEGALITY_LEAVES_KING_IN_CHECK, "castling would leave the king in check");
    }
    if (pos->board[to] != NO_PIECE && piece_color(pos->board[to]) == us)
        return SAY(LEGALITY_OWN_PIECE_ON_TARGET, "%c%c holds a %s piece", SQ(to), color_name(us));
    r = type == PAWN ? explain_pawn(pos, from, to, promotion, message, message_size)
                     : explain_piece(pos, type, from, to, NO_PIECE_TYPE, message, message_size);
    if (r != LEGALITY_OK)
        return r;
    return explain_variant_rule(pos, move, message, message_size);
}

legality_reason_t legality_explain_drop(const position_t *pos, piece_type_t type, int to, char *message,
                                        size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    if (message && message_size)
        message[0] = '\0';
    if (!(variant_rules((variant_t)pos->variant)->flags & VARIANT_HAS_POCKETS))
        return SAY(LEGALITY_DROP_INVALID, "only crazyhouse drops pieces; %s has no pocket",
                   variant_rules((variant_t)pos->variant)->key);
    legality_reason_t r = variant_over(pos, message, message_size);
    if (r != LEGALITY_OK)
        return r;
    if (type > QUEEN)
        return SAY(LEGALITY_DROP_INVALID, "a %s cannot be dropped", piece_type_name(type));
    if (!pos->pocket[us][type])
        return SAY(LEGALITY_DROP_INVALID, "%s has no %s in the pocket", color_name(us), piece_type_name(type));
    if (pos->board[to] != NO_PIECE)
        return SAY(LEGALITY_DROP_INVALID, "%c%c is occupied: a piece is dropped on an empty square", SQ(to));
    if (type == PAWN && (square_rank(to) == 0 || square_rank(to) == 7))
        return SAY(LEGALITY_DROP_INVALID, "a pawn cannot be dropped on the first or the last rank");
    if (movegen_is_legal(pos, move_make_drop(type, to)))
        return LEGALITY_OK;
    return SAY(LEGALITY_LEAVES_KING_IN_CHECK, "%s is in check and a drop on %c%c does not answer it", color_name(us),
               SQ(to));
}
