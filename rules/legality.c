/* Explains why a requested move is illegal. The checks run from the most
 * basic (is there a piece) to the most subtle (king safety), and the sentence
 * names the squares involved. The final verdict always agrees with
 * movegen_legal(): a move is reported legal exactly when the generator
 * produces it. */
#include "legality.h"

#include <stdio.h>

#include "message.h"
#include "movegen.h"

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
};

static const char *const piece_names[PIECE_TYPE_COUNT] = { "pawn", "knight", "bishop", "rook", "queen", "king" };

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
        if (square_rank(from) != start_rank)
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
        if (promotion == PAWN || promotion == KING)
            return SAY(LEGALITY_PROMOTION_INVALID, "a pawn promotes to a queen, rook, bishop or knight, not a %s",
                       piece_names[promotion]);
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
        return SAY(LEGALITY_CANNOT_MOVE_SO, "a %s cannot move from %c%c to %c%c", piece_names[type], SQ(from), SQ(to));
    }
    bitboard_t blockers = attacks_between(from, to) & position_occupied(pos);
    if (type != KNIGHT && type != KING && blockers)
        return SAY(LEGALITY_PATH_BLOCKED, "the %s's path from %c%c to %c%c is blocked on %c%c", piece_names[type],
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
        return SAY(LEGALITY_NOT_YOUR_PIECE, "the %s on %c%c is %s's, and it is %s's move", piece_names[piece_type(piece)],
                   SQ(from), color_name((color_t)!us), color_name(us));
    if (from == to)
        return SAY(LEGALITY_CANNOT_MOVE_SO, "a move must leave its square");
    piece_type_t type = piece_type(piece);

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
               piece_names[type], SQ(from));
}
