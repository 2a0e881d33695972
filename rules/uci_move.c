/* UCI move notation, reading and writing. */
#include "uci_move.h"

static void write_square(char *buf, int sq)
{
    buf[0] = (char)('a' + square_file(sq));
    buf[1] = (char)('1' + square_rank(sq));
}

char *uci_format(const position_t *pos, move_t move, char *buf)
{
    int from = move_from(move), to = move_to(move), kind = move_kind(move);
    if (kind == MOVE_DROP) {
        buf[0] = piece_type_capital(move_dropped(move));
        buf[1] = '@';
        write_square(buf + 2, to);
        buf[4] = '\0';
        return buf;
    }
    if (kind == MOVE_CASTLING && !pos->chess960) {
        int rook = to;
        to = position_castle_king_to(pos, rook);
        if (move_gate(move) && move_gate_on_rook(move)) {
            from = rook; /* the gate on the rook's square: rook to king, as Fairy-Stockfish writes it */
            to = move_from(move);
        }
    }
    write_square(buf, from);
    write_square(buf + 2, to);
    buf[4] = kind == MOVE_PROMOTION ? piece_type_letter(move_promotion(move))
             : move_gate(move)      ? piece_type_letter(move_gate(move))
                                    : '\0';
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

static int read_letter(char c)
{
    char lower = (char)(c | 0x20);
    for (int t = 0; t < PIECE_TYPE_COUNT; t++)
        if (piece_type_letter((piece_type_t)t) == lower)
            return t;
    return -1;
}

bool uci_read(const char *text, size_t length, uci_text_t *out)
{
    out->promotion = out->drop = NO_PIECE_TYPE;
    if (length == 4 && text[1] == '@') {
        int t = read_letter(text[0]);
        if (t < 0 || !read_square(text + 2, &out->to))
            return false;
        out->from = out->to;
        out->drop = (piece_type_t)t; /* a king is kept, to be refused with a reason */
        return true;
    }
    if (length != 4 && length != 5)
        return false;
    if (!read_square(text, &out->from) || !read_square(text + 2, &out->to))
        return false;
    if (length == 5) {
        int t = read_letter(text[4]);
        if (t < 0)
            return false;
        out->promotion = (piece_type_t)t; /* pawn and king are kept, to be refused with a reason */
    }
    return true;
}

/* S-chess: castling with a gate on the rook's square, written rook to king. */
static move_t gated_castling_from_rook(const position_t *pos, const uci_text_t *uci, color_t us)
{
    if (pos->board[uci->from] != piece_make(us, ROOK) || pos->board[uci->to] != piece_make(us, KING))
        return MOVE_NONE;
    int right = position_castle_index(pos, uci->from);
    if (right < 0 || right / 2 != (int)us)
        return MOVE_NONE;
    return move_with_gate(move_make(uci->to, uci->from, MOVE_CASTLING, PAWN), uci->promotion, true);
}

static move_t gated(move_t move, const uci_text_t *uci)
{
    bool gate = uci->promotion == HAWK || uci->promotion == ELEPHANT;
    return gate ? move_with_gate(move, uci->promotion, false) : move;
}

move_t uci_to_move(const position_t *pos, const uci_text_t *uci)
{
    color_t us = (color_t)pos->side_to_move;
    if (uci->drop != NO_PIECE_TYPE)
        return move_make_drop(uci->drop, uci->to);
    piece_t piece = pos->board[uci->from];
    if (piece == piece_make(us, ROOK) && uci->promotion != NO_PIECE_TYPE) {
        move_t castling = gated_castling_from_rook(pos, uci, us);
        if (castling != MOVE_NONE)
            return castling;
    }
    if (piece == piece_make(us, KING)) {
        /* King takes own castling rook: castling in either variant. */
        int right = position_castle_index(pos, uci->to);
        if (right >= 0 && right / 2 == (int)us)
            return gated(move_make(uci->from, uci->to, MOVE_CASTLING, PAWN), uci);
        /* The king's two-step in standard chess. */
        if (!pos->chess960 && square_rank(uci->from) == square_rank(uci->to)
            && square_file(uci->from) == 4 && (square_file(uci->to) == 6 || square_file(uci->to) == 2)) {
            castle_side_t side = square_file(uci->to) == 6 ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
            int rook = pos->castle_rook[us * 2 + side];
            if (rook != SQ_NONE)
                return gated(move_make(uci->from, rook, MOVE_CASTLING, PAWN), uci);
        }
    }
    if (piece == piece_make(us, PAWN)) {
        if (uci->to == pos->en_passant)
            return move_make(uci->from, uci->to, MOVE_EN_PASSANT, PAWN);
        if (uci->promotion >= KNIGHT && uci->promotion != NO_PIECE_TYPE)
            return move_make(uci->from, uci->to, MOVE_PROMOTION, uci->promotion);
    }
    return gated(move_make(uci->from, uci->to, MOVE_NORMAL, PAWN), uci);
}
