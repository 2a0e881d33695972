/* FEN parser and formatter. The parser walks the input with explicit lengths
 * (fields are spans into the caller's buffer, nothing is copied or
 * terminated), builds the position, then validates it as a whole. Every
 * rejection has its own error code and sentence. */
#include "fen.h"

#include <string.h>

#include "decimal.h"
#include "message.h"
#include "movegen.h"

typedef struct {
    const char *text;
    size_t length;
} span_t;

static const char *const error_codes[FEN_ERROR_COUNT] = {
    [FEN_OK] = "ok",
    [FEN_ETOO_LONG] = "too_long",
    [FEN_EFIELD_COUNT] = "field_count",
    [FEN_ERANK_COUNT] = "rank_count",
    [FEN_ERANK_WIDTH] = "rank_width",
    [FEN_EPIECE_LETTER] = "piece_letter",
    [FEN_ESIDE_TO_MOVE] = "side_to_move",
    [FEN_ECASTLING_LETTERS] = "castling_letters",
    [FEN_ECASTLING_RIGHTS] = "castling_rights",
    [FEN_ECASTLING_NEEDS_CHESS960] = "castling_needs_chess960",
    [FEN_EEN_PASSANT_SQUARE] = "en_passant_square",
    [FEN_EEN_PASSANT_RANK] = "en_passant_rank",
    [FEN_EEN_PASSANT_NO_PAWN] = "en_passant_no_pawn",
    [FEN_EEN_PASSANT_BLOCKED] = "en_passant_blocked",
    [FEN_EHALFMOVE_CLOCK] = "halfmove_clock",
    [FEN_EFULLMOVE_NUMBER] = "fullmove_number",
    [FEN_EKING_COUNT] = "king_count",
    [FEN_EPAWN_ON_BACK_RANK] = "pawn_on_back_rank",
    [FEN_ETOO_MANY_PIECES] = "too_many_pieces",
    [FEN_ETOO_MANY_PAWNS] = "too_many_pawns",
    [FEN_EOPPOSITE_CHECK] = "opposite_check",
    [FEN_ETOO_MANY_CHECKERS] = "too_many_checkers",
    [FEN_EIMPOSSIBLE_CHECK] = "impossible_check",
};

const char *fen_error_code(fen_error_t error)
{
    return (unsigned)error < FEN_ERROR_COUNT ? error_codes[error] : "unknown";
}

#define FAIL(error, ...) (fen_error_t)message_set(error, message, message_size, __VA_ARGS__)

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Splits text into at most max_fields blank-separated spans; returns the count
 * found, or max_fields + 1 when there are more. */
static int split_fields(const char *text, size_t length, span_t *fields, int max_fields)
{
    int count = 0;
    size_t i = 0;
    while (i < length) {
        while (i < length && is_blank(text[i]))
            i++;
        if (i == length)
            break;
        size_t start = i;
        while (i < length && !is_blank(text[i]))
            i++;
        if (count == max_fields)
            return max_fields + 1;
        fields[count].text = text + start;
        fields[count].length = i - start;
        count++;
    }
    return count;
}

/* Quotes a span for messages, cut short if long. */
static int quote_length(span_t s) { return s.length > 16 ? 16 : (int)s.length; }

static fen_error_t parse_board(span_t field, position_t *pos, char *message, size_t message_size)
{
    int rank = 7, file = 0;
    bool last_was_digit = false;
    for (size_t i = 0; i < field.length; i++) {
        char c = field.text[i];
        if (c == '/') {
            if (file != 8)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has %d squares, expected 8", rank + 1, file);
            if (rank == 0)
                return FAIL(FEN_ERANK_COUNT, "the board has more than 8 ranks");
            rank--;
            file = 0;
            last_was_digit = false;
        } else if (c >= '1' && c <= '8') {
            if (last_was_digit)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has two digits in a row", rank + 1);
            file += c - '0';
            last_was_digit = true;
            if (file > 8)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has more than 8 squares", rank + 1);
        } else {
            char lower = (char)(c | 0x20);
            const char *found = (c >= 'A' && c <= 'z') ? strchr(PIECE_LETTERS, lower) : NULL;
            if (!found || lower == '\0')
                return FAIL(FEN_EPIECE_LETTER, "'%c' is not a piece letter (use PNBRQK and pnbrqk)",
                            (c >= 32 && c < 127) ? c : '?');
            if (file >= 8)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has more than 8 squares", rank + 1);
            color_t color = (c >= 'a') ? BLACK : WHITE;
            position_put_piece(pos, piece_make(color, (piece_type_t)(found - PIECE_LETTERS)), square_make(file, rank));
            file++;
            last_was_digit = false;
        }
    }
    if (rank != 0)
        return FAIL(FEN_ERANK_COUNT, "the board has %d ranks, expected 8", 8 - rank);
    if (file != 8)
        return FAIL(FEN_ERANK_WIDTH, "rank 1 has %d squares, expected 8", file);
    return FEN_OK;
}

/* Reads a decimal counter of at most 4 digits into *value. */
static bool parse_counter(span_t field, int *value)
{
    if (field.length == 0 || field.length > 4)
        return false;
    int v = 0;
    for (size_t i = 0; i < field.length; i++) {
        if (field.text[i] < '0' || field.text[i] > '9')
            return false;
        v = v * 10 + (field.text[i] - '0');
    }
    *value = v;
    return true;
}

/* The outermost rook of colour c on its first rank on one side of the king, or SQ_NONE. */
static int outermost_rook(const position_t *pos, color_t c, castle_side_t side)
{
    int rank = c == WHITE ? 0 : 7;
    int king_file = square_file(pos->king_square[c]);
    piece_t rook = piece_make(c, ROOK);
    if (side == CASTLE_KING_SIDE) {
        for (int f = 7; f > king_file; f--)
            if (pos->board[square_make(f, rank)] == rook)
                return square_make(f, rank);
    } else {
        for (int f = 0; f < king_file; f++)
            if (pos->board[square_make(f, rank)] == rook)
                return square_make(f, rank);
    }
    return SQ_NONE;
}

static fen_error_t parse_castling(span_t field, bool chess960, position_t *pos, char *message, size_t message_size)
{
    if (field.length == 1 && field.text[0] == '-')
        return FEN_OK;
    if (field.length == 0 || field.length > 4)
        return FAIL(FEN_ECASTLING_LETTERS, "castling field '%.*s' must be '-' or up to 4 letters",
                    quote_length(field), field.text);
    for (size_t i = 0; i < field.length; i++) {
        char c = field.text[i];
        char lower = (char)(c | 0x20);
        bool letter = (c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h') || lower == 'k' || lower == 'q';
        if (!letter)
            return FAIL(FEN_ECASTLING_LETTERS, "'%c' is not a castling letter (use KQkq or rook files A-H, a-h)",
                        (c >= 32 && c < 127) ? c : '?');
        color_t color = (c >= 'a') ? BLACK : WHITE;
        int rank = color == WHITE ? 0 : 7;
        int king = pos->king_square[color];
        if (king == SQ_NONE || square_rank(king) != rank)
            return FAIL(FEN_ECASTLING_RIGHTS, "castling right '%c' but the %s king is not on its first rank", c,
                        color_name(color));
        int rook;
        if (lower == 'k')
            rook = outermost_rook(pos, color, CASTLE_KING_SIDE);
        else if (lower == 'q')
            rook = outermost_rook(pos, color, CASTLE_QUEEN_SIDE);
        else
            rook = square_make(lower - 'a', rank);
        if (rook == SQ_NONE || pos->board[rook] != piece_make(color, ROOK))
            return FAIL(FEN_ECASTLING_RIGHTS, "castling right '%c' but no %s rook stands where it needs to", c,
                        color_name(color));
        if (rook == king)
            return FAIL(FEN_ECASTLING_RIGHTS, "castling right '%c' names the king's own file", c);
        castle_side_t side = square_file(rook) > square_file(king) ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
        square_t *slot = &pos->castle_rook[color * 2 + side];
        if (*slot != SQ_NONE)
            return FAIL(FEN_ECASTLING_RIGHTS, "castling field '%.*s' gives the %s %s side twice",
                        quote_length(field), field.text, color_name(color),
                        side == CASTLE_KING_SIDE ? "king" : "queen");
        *slot = (square_t)rook;
        if (!chess960 && (square_file(king) != 4 || square_file(rook) != (side == CASTLE_KING_SIDE ? 7 : 0)))
            return FAIL(FEN_ECASTLING_NEEDS_CHESS960,
                        "castling right '%c' fits only Chess960 (king not on e%d or rook not in the corner); "
                        "set chess960", c, rank + 1);
    }
    return FEN_OK;
}

/* Checks the en passant field; sets *ep_square (SQ_NONE for '-') when it fits the board. */
static fen_error_t parse_en_passant(span_t field, const position_t *pos, int *ep_square, char *message,
                                    size_t message_size)
{
    *ep_square = SQ_NONE;
    if (field.length == 1 && field.text[0] == '-')
        return FEN_OK;
    if (field.length != 2 || field.text[0] < 'a' || field.text[0] > 'h' || field.text[1] < '1' || field.text[1] > '8')
        return FAIL(FEN_EEN_PASSANT_SQUARE, "en passant field '%.*s' is not '-' or a square", quote_length(field),
                    field.text);
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    int sq = square_make(field.text[0] - 'a', field.text[1] - '1');
    int expected_rank = us == WHITE ? 5 : 2;
    if (square_rank(sq) != expected_rank)
        return FAIL(FEN_EEN_PASSANT_RANK, "en passant square %.2s must be on rank %d when %s is to move",
                    field.text, expected_rank + 1, color_name(us));
    int pawn = sq + (us == WHITE ? -8 : 8), origin = sq + (us == WHITE ? 8 : -8);
    if (pos->board[pawn] != piece_make(them, PAWN))
        return FAIL(FEN_EEN_PASSANT_NO_PAWN, "en passant square %.2s but no %s pawn on %c%d that just moved two squares",
                    field.text, color_name(them), field.text[0], square_rank(pawn) + 1);
    if (pos->board[sq] != NO_PIECE || pos->board[origin] != NO_PIECE)
        return FAIL(FEN_EEN_PASSANT_BLOCKED, "en passant square %.2s but %c%d or %c%d is occupied, so no pawn just "
                    "moved two squares", field.text, field.text[0], square_rank(sq) + 1, field.text[0],
                    square_rank(origin) + 1);
    *ep_square = sq;
    return FEN_OK;
}

static fen_error_t validate_material(const position_t *pos, char *message, size_t message_size)
{
    for (int c = 0; c < COLOR_COUNT; c++) {
        int kings = bb_count(position_pieces(pos, (color_t)c, KING));
        if (kings != 1)
            return FAIL(FEN_EKING_COUNT, "%s has %d kings, expected exactly 1", color_name((color_t)c), kings);
        if (bb_count(pos->by_color[c]) > 16)
            return FAIL(FEN_ETOO_MANY_PIECES, "%s has %d pieces, at most 16 are possible", color_name((color_t)c),
                        bb_count(pos->by_color[c]));
        if (bb_count(position_pieces(pos, (color_t)c, PAWN)) > 8)
            return FAIL(FEN_ETOO_MANY_PAWNS, "%s has %d pawns, at most 8 are possible", color_name((color_t)c),
                        bb_count(position_pieces(pos, (color_t)c, PAWN)));
    }
    if (pos->by_type[PAWN] & (BB_RANK_1 | BB_RANK_8))
        return FAIL(FEN_EPAWN_ON_BACK_RANK, "a pawn stands on %c%d; pawns cannot be on the first or last rank",
                    'a' + square_file(bb_lsb(pos->by_type[PAWN] & (BB_RANK_1 | BB_RANK_8))),
                    square_rank(bb_lsb(pos->by_type[PAWN] & (BB_RANK_1 | BB_RANK_8))) + 1);
    return FEN_OK;
}

/* Whether checkers could all have come from the opponent's last move. */
static fen_error_t validate_checks(const position_t *pos, int ep_square, bool allow_impossible, char *message,
                                   size_t message_size)
{
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    bitboard_t occupied = position_occupied(pos);
    if (position_attacked_by(pos, pos->king_square[them], us, occupied))
        return FAIL(FEN_EOPPOSITE_CHECK, "%s is in check but it is %s's move", color_name(them), color_name(us));
    bitboard_t checkers = position_checkers(pos);
    int count = bb_count(checkers);
    if (count == 0 || allow_impossible)
        return FEN_OK;
    if (count > 2)
        return FAIL(FEN_ETOO_MANY_CHECKERS, "%s is in check by %d pieces; no move gives more than a double check",
                    color_name(us), count);
    int king = pos->king_square[us];
    if (ep_square != SQ_NONE) {
        /* The last move was a double pawn push: the pawn gave check, or it
         * uncovered a check that was not there before. */
        int pushed_to = ep_square + (us == WHITE ? -8 : 8), pushed_from = ep_square + (us == WHITE ? 8 : -8);
        bitboard_t before = (occupied ^ bb_square(pushed_to)) | bb_square(pushed_from);
        position_t previous = *pos;
        position_remove_piece(&previous, pushed_to);
        if (count > 1 || (bb_lsb(checkers) != pushed_to && position_attacked_by(&previous, king, them, before)))
            return FAIL(FEN_EIMPOSSIBLE_CHECK, "the check on the %s king cannot follow a double pawn push to %c%d",
                        color_name(us), 'a' + square_file(pushed_to), square_rank(pushed_to) + 1);
        return FEN_OK;
    }
    if (count == 2) {
        int a = bb_lsb(checkers), b = bb_msb(checkers);
        bitboard_t sliders = pos->by_type[BISHOP] | pos->by_type[ROOK] | pos->by_type[QUEEN];
        if (bb_has(attacks_line(a, b), king))
            return FAIL(FEN_EIMPOSSIBLE_CHECK, "the %s king is checked from both sides of one line, which no move "
                        "can do", color_name(us));
        if (!(checkers & sliders))
            return FAIL(FEN_EIMPOSSIBLE_CHECK, "the %s king is in double check without a bishop, rook or queen "
                        "among the checkers, which no move can do", color_name(us));
    }
    return FEN_OK;
}

fen_error_t fen_parse(const char *text, size_t length, unsigned flags, position_t *pos, char *message,
                      size_t message_size)
{
    bool chess960 = flags & FEN_CHESS960;
    span_t fields[6];
    fen_error_t err;
    if (message && message_size)
        message[0] = '\0';
    position_clear(pos);
    if (length > FEN_INPUT_MAX)
        return FAIL(FEN_ETOO_LONG, "FEN is %zu bytes long, at most %d are accepted", length, FEN_INPUT_MAX);
    int count = split_fields(text, length, fields, 6);
    if (count != 4 && count != 6)
        return FAIL(FEN_EFIELD_COUNT, "FEN has %s%d fields, expected 6 (or 4 without the move counters)",
                    count > 6 ? "more than " : "", count > 6 ? 6 : count);

    if ((err = parse_board(fields[0], pos, message, message_size)) != FEN_OK)
        return err;
    if (fields[1].length != 1 || (fields[1].text[0] != 'w' && fields[1].text[0] != 'b'))
        return FAIL(FEN_ESIDE_TO_MOVE, "side to move '%.*s' must be 'w' or 'b'", quote_length(fields[1]),
                    fields[1].text);
    pos->side_to_move = fields[1].text[0] == 'w' ? WHITE : BLACK;
    if ((err = validate_material(pos, message, message_size)) != FEN_OK)
        return err;
    pos->chess960 = chess960;
    err = parse_castling(fields[2], chess960, pos, message, message_size);
    if (err == FEN_ECASTLING_NEEDS_CHESS960 && (flags & FEN_DETECT_CHESS960))
        return fen_parse(text, length, (flags | FEN_CHESS960) & ~(unsigned)FEN_DETECT_CHESS960, pos, message,
                         message_size);
    if (err != FEN_OK)
        return err;
    int ep_square;
    if ((err = parse_en_passant(fields[3], pos, &ep_square, message, message_size)) != FEN_OK)
        return err;

    int halfmove = 0, fullmove = 1;
    if (count == 6) {
        if (!parse_counter(fields[4], &halfmove))
            return FAIL(FEN_EHALFMOVE_CLOCK, "halfmove clock '%.*s' must be a number from 0 to %d",
                        quote_length(fields[4]), fields[4].text, FEN_COUNTER_MAX);
        if (!parse_counter(fields[5], &fullmove) || fullmove < 1)
            return FAIL(FEN_EFULLMOVE_NUMBER, "fullmove number '%.*s' must be a number from 1 to %d",
                        quote_length(fields[5]), fields[5].text, FEN_COUNTER_MAX);
    }
    pos->halfmove_clock = (uint16_t)halfmove;
    pos->fullmove_number = (uint16_t)fullmove;

    if ((err = validate_checks(pos, ep_square, flags & FEN_ALLOW_IMPOSSIBLE_CHECK, message, message_size)) != FEN_OK)
        return err;
    if (ep_square != SQ_NONE && position_any_en_passant_legal(pos, ep_square))
        pos->en_passant = (square_t)ep_square;
    pos->key = position_compute_key(pos);
    return FEN_OK;
}

/* The castling letter for the right held by `rook`: K/Q (X-FEN) when the rook
 * is the outermost on its side, else its file (Shredder style). */
static char castling_letter(const position_t *pos, int index)
{
    color_t c = (color_t)(index / 2);
    castle_side_t side = (castle_side_t)(index % 2);
    int rook = pos->castle_rook[index];
    char letter;
    if (!pos->chess960 || outermost_rook(pos, c, side) == rook)
        letter = side == CASTLE_KING_SIDE ? 'K' : 'Q';
    else
        letter = (char)('A' + square_file(rook));
    return c == WHITE ? letter : (char)(letter | 0x20);
}

char *fen_format(const position_t *pos, char *buf, size_t buf_size)
{
    char out[FEN_BUFFER_SIZE];
    size_t n = 0;
    for (int rank = 7; rank >= 0; rank--) {
        int empty = 0;
        for (int file = 0; file < 8; file++) {
            piece_t p = pos->board[square_make(file, rank)];
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                out[n++] = (char)('0' + empty);
            empty = 0;
            out[n++] = piece_letter(p);
        }
        if (empty)
            out[n++] = (char)('0' + empty);
        if (rank)
            out[n++] = '/';
    }
    out[n++] = ' ';
    out[n++] = pos->side_to_move == WHITE ? 'w' : 'b';
    out[n++] = ' ';
    size_t castling_start = n;
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] != SQ_NONE)
            out[n++] = castling_letter(pos, i);
    if (n == castling_start)
        out[n++] = '-';
    out[n++] = ' ';
    if (pos->en_passant != SQ_NONE) {
        out[n++] = (char)('a' + square_file(pos->en_passant));
        out[n++] = (char)('1' + square_rank(pos->en_passant));
    } else {
        out[n++] = '-';
    }
    out[n++] = ' ';
    n += decimal_write(pos->halfmove_clock, out + n);
    out[n++] = ' ';
    n += decimal_write(pos->fullmove_number, out + n);
    /* As much as buf holds, NUL-terminated. */
    if (buf_size) {
        size_t length = n < buf_size - 1 ? n : buf_size - 1;
        memcpy(buf, out, length);
        buf[length] = '\0';
    }
    return buf;
}
