/* UCI move notation, reading and writing. */
#include "uci.h"


char *uci_format(const position_t *pos, move_t move, char *buf)
{
    int from = move_from(move), to = move_to(move);
    if (move_kind(move) == MOVE_CASTLING && !pos->chess960)
        to = position_castle_king_to(pos, to);
    buf[0] = (char)('a' + square_file(from));
    buf[1] = (char)('1' + square_rank(from));
    buf[2] = (char)('a' + square_file(to));
    buf[3] = (char)('1' + square_rank(to));
    buf[4] = move_kind(move) == MOVE_PROMOTION ? piece_type_letter(move_promotion(move)) : '\0';
    buf[5] = '\0';
    return buf;
}

static bool read_square(const char *s, int *sq)
{
    if (s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8')
        return false;
    *sq = square_make(s[0] - 'a', s[1] - '1');
    return true;
}

bool uci_read(const char *text, size_t length, uci_text_t *out)
{
    if (length != 4 && length != 5)
        return false;
    if (!read_square(text, &out->from) || !read_square(text + 2, &out->to))
        return false;
    out->promotion = NO_PIECE_TYPE;
    if (length == 5) {
        char c = (char)(text[4] | 0x20);
        int t;
        for (t = 0; t < PIECE_TYPE_COUNT; t++)
            if (piece_type_letter((piece_type_t)t) == c)
                break;
        if (t == PIECE_TYPE_COUNT)
            return false;
        out->promotion = (piece_type_t)t; /* pawn and king are kept, to be refused with a reason */
    }
    return true;
}

move_t uci_to_move(const position_t *pos, const uci_text_t *uci)
{
    color_t us = (color_t)pos->side_to_move;
    piece_t piece = pos->board[uci->from];
    if (piece == piece_make(us, KING)) {
        /* King takes own castling rook: castling in either variant. */
        int right = position_castle_index(pos, uci->to);
        if (right >= 0 && right / 2 == (int)us)
            return move_make(uci->from, uci->to, MOVE_CASTLING, PAWN);
        /* The king's two-step in standard chess. */
        if (!pos->chess960 && square_rank(uci->from) == square_rank(uci->to)
            && square_file(uci->from) == 4 && (square_file(uci->to) == 6 || square_file(uci->to) == 2)) {
            castle_side_t side = square_file(uci->to) == 6 ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
            int rook = pos->castle_rook[us * 2 + side];
            if (rook != SQ_NONE)
                return move_make(uci->from, rook, MOVE_CASTLING, PAWN);
        }
    }
    if (piece == piece_make(us, PAWN)) {
        if (uci->to == pos->en_passant)
            return move_make(uci->from, uci->to, MOVE_EN_PASSANT, PAWN);
        if (uci->promotion >= KNIGHT && uci->promotion <= QUEEN)
            return move_make(uci->from, uci->to, MOVE_PROMOTION, uci->promotion);
    }
    return move_make(uci->from, uci->to, MOVE_NORMAL, PAWN);
}
