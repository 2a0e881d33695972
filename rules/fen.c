/* FEN parser and formatter. The parser walks the input with explicit lengths
 * (fields are spans into the caller's buffer, nothing is copied or
 * terminated), builds the position, then validates it as a whole. Every
 * rejection has its own error code and sentence. */
#include "fen.h"

#include <string.h>

#include "base/decimal.h"
#include "message.h"
#include "movegen.h"
#include "variant.h"

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
    [FEN_EPOCKET] = "pocket",
    [FEN_EKING_IN_POCKET] = "king_in_pocket",
    [FEN_EPROMOTED_MARKER] = "promoted_marker",
    [FEN_ECHECK_COUNT] = "check_count",
    [FEN_EVARIANT_RULE] = "variant_rule",
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

static bool has_hand(variant_t variant)
{
    return variant_rules(variant)->flags & (VARIANT_HAS_POCKETS | VARIANT_HAS_RESERVES);
}

/* Reads a pocket's or a reserve's letters into pos->pocket. */
static fen_error_t parse_pocket(span_t field, variant_t variant, position_t *pos, char *message, size_t message_size)
{
    if (!has_hand(variant))
        return FAIL(FEN_EPOCKET, "the board has a pocket, but %s has none", variant_rules(variant)->key);
    bool reserves = variant == VARIANT_SEIRAWAN;
    for (size_t i = 0; i < field.length; i++) {
        char c = field.text[i], lower = (char)(c | 0x20);
        if (c == '-' && field.length == 1)
            break;
        const char *found = (c >= 'A' && c <= 'z') ? strchr(PIECE_LETTERS, lower) : NULL;
        if (!found || lower == '\0')
            return FAIL(FEN_EPOCKET, "'%c' in the pocket is not a piece letter", (c >= 32 && c < 127) ? c : '?');
        piece_type_t type = (piece_type_t)(found - PIECE_LETTERS);
        if (type == KING)
            return FAIL(FEN_EKING_IN_POCKET, "a king cannot be in a pocket");
        bool allowed = reserves ? (type == HAWK || type == ELEPHANT) : type <= QUEEN;
        if (!allowed)
            return FAIL(FEN_EPOCKET, "'%c' cannot be in %s's %s", c, variant_rules(variant)->key,
                        reserves ? "reserve (only H and E)" : "pocket (only P, N, B, R, Q)");
        color_t color = (c >= 'a') ? BLACK : WHITE;
        int most = reserves ? 1 : 62;
        if (pos->pocket[color][type] >= most)
            return FAIL(FEN_EPOCKET, "the %s %s holds more '%c' than the game has", color_name(color),
                        reserves ? "reserve" : "pocket", c);
        pos->pocket[color][type]++;
    }
    return FEN_OK;
}

/* Splits a board field into the board and the pocket after it: "[...]"
 * or, as scalachess writes it, a ninth rank. *pocket is empty with no text
 * when there is none. */
static void split_pocket(span_t *board, span_t *pocket, bool ninth_rank)
{
    pocket->text = NULL;
    pocket->length = 0;
    for (size_t i = 0; i < board->length; i++)
        if (board->text[i] == '[') {
            pocket->text = board->text + i + 1;
            pocket->length = board->length - i - 1;
            board->length = i;
            return;
        }
    int slashes = 0;
    for (size_t i = 0; i < board->length && ninth_rank; i++)
        if (board->text[i] == '/' && ++slashes == 8) {
            pocket->text = board->text + i + 1;
            pocket->length = board->length - i - 1;
            board->length = i;
            return;
        }
}

static fen_error_t parse_board(span_t field, variant_t variant, position_t *pos, char *message, size_t message_size)
{
    int rank = 7, file = 0;
    bool last_was_digit = false;
    int last_square = SQ_NONE;
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
            last_square = SQ_NONE;
        } else if (c >= '1' && c <= '8') {
            if (last_was_digit)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has two digits in a row", rank + 1);
            file += c - '0';
            last_was_digit = true;
            last_square = SQ_NONE;
            if (file > 8)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has more than 8 squares", rank + 1);
        } else if (c == '~') {
            if (variant != VARIANT_CRAZYHOUSE)
                return FAIL(FEN_EPROMOTED_MARKER, "'~' marks a promoted piece, which only crazyhouse keeps");
            if (last_square == SQ_NONE || piece_type(pos->board[last_square]) == PAWN
                || piece_type(pos->board[last_square]) == KING)
                return FAIL(FEN_EPROMOTED_MARKER, "'~' must follow a promoted piece (N, B, R or Q)");
            pos->promoted |= bb_square(last_square);
            last_square = SQ_NONE;
        } else {
            char lower = (char)(c | 0x20);
            const char *found = (c >= 'A' && c <= 'z') ? strchr(PIECE_LETTERS, lower) : NULL;
            if (!found || lower == '\0')
                return FAIL(FEN_EPIECE_LETTER, "'%c' is not a piece letter (use PNBRQK and pnbrqk)",
                            (c >= 32 && c < 127) ? c : '?');
            piece_type_t type = (piece_type_t)(found - PIECE_LETTERS);
            if (type >= HAWK && variant != VARIANT_SEIRAWAN)
                return FAIL(FEN_EPIECE_LETTER, "'%c' is S-chess's %s; set the variant seirawan", c,
                            type == HAWK ? "Hawk" : "Elephant");
            if (file >= 8)
                return FAIL(FEN_ERANK_WIDTH, "rank %d has more than 8 squares", rank + 1);
            color_t color = (c >= 'a') ? BLACK : WHITE;
            last_square = square_make(file, rank);
            position_put_piece(pos, piece_make(color, type), last_square);
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

/* The most pieces and pawns a side may have in a variant, and whether it
 * must have exactly one king. */
typedef struct {
    int pieces, pawns;
} material_bound_t;

static material_bound_t bound_of(variant_t variant, color_t c)
{
    switch (variant) {
    case VARIANT_HORDE:
        return c == WHITE ? (material_bound_t){ 36, 36 } : (material_bound_t){ 16, 8 };
    case VARIANT_CRAZYHOUSE: /* drops bring back what was taken */
        return (material_bound_t){ 64, 16 };
    case VARIANT_SEIRAWAN: /* two more from the reserve */
        return (material_bound_t){ 18, 8 };
    default:
        return (material_bound_t){ 16, 8 };
    }
}

static fen_error_t validate_kings(const position_t *pos, variant_t variant, char *message, size_t message_size)
{
    int kings[COLOR_COUNT];
    for (int c = 0; c < COLOR_COUNT; c++)
        kings[c] = bb_count(position_pieces(pos, (color_t)c, KING));
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    switch (variant) {
    case VARIANT_ANTICHESS: /* kings are ordinary pieces: any number */
        return FEN_OK;
    case VARIANT_HORDE:
        if (kings[WHITE])
            return FAIL(FEN_EKING_COUNT, "white is the horde in horde and has no king");
        if (kings[BLACK] != 1)
            return FAIL(FEN_EKING_COUNT, "black has %d kings, expected exactly 1", kings[BLACK]);
        return FEN_OK;
    case VARIANT_ATOMIC: /* the side to move's king may have just exploded */
        if (kings[them] != 1 || kings[us] > 1)
            return FAIL(FEN_EKING_COUNT, "%s has %d kings, expected exactly 1", color_name(kings[them] != 1 ? them : us),
                        kings[them] != 1 ? kings[them] : kings[us]);
        return FEN_OK;
    default:
        for (int c = 0; c < COLOR_COUNT; c++)
            if (kings[c] != 1)
                return FAIL(FEN_EKING_COUNT, "%s has %d kings, expected exactly 1", color_name((color_t)c), kings[c]);
        return FEN_OK;
    }
}

static fen_error_t validate_material(const position_t *pos, variant_t variant, char *message, size_t message_size)
{
    fen_error_t err = validate_kings(pos, variant, message, message_size);
    if (err != FEN_OK)
        return err;
    for (int c = 0; c < COLOR_COUNT; c++) {
        material_bound_t most = bound_of(variant, (color_t)c);
        /* S-chess's bound holds the reserve too: a gate moves a piece from it to the board. */
        int reserve = variant == VARIANT_SEIRAWAN ? pos->pocket[c][HAWK] + pos->pocket[c][ELEPHANT] : 0;
        if (bb_count(pos->by_color[c]) + reserve > most.pieces)
            return FAIL(FEN_ETOO_MANY_PIECES, "%s has %d pieces%s, at most %d are possible", color_name((color_t)c),
                        bb_count(pos->by_color[c]) + reserve, reserve ? " with its reserve" : "", most.pieces);
        if (bb_count(position_pieces(pos, (color_t)c, PAWN)) > most.pawns)
            return FAIL(FEN_ETOO_MANY_PAWNS, "%s has %d pawns, at most %d are possible", color_name((color_t)c),
                        bb_count(position_pieces(pos, (color_t)c, PAWN)), most.pawns);
    }
    /* Horde's white pawns may stand on rank 1: they start there. */
    bitboard_t misplaced = pos->by_type[PAWN] & (BB_RANK_1 | BB_RANK_8);
    if (variant == VARIANT_HORDE)
        misplaced &= ~(pos->by_color[WHITE] & BB_RANK_1);
    if (misplaced)
        return FAIL(FEN_EPAWN_ON_BACK_RANK, "a pawn stands on %c%d; pawns cannot be on the first or last rank",
                    'a' + square_file(bb_lsb(misplaced)), square_rank(bb_lsb(misplaced)) + 1);
    if (variant == VARIANT_RACING_KINGS && pos->by_type[PAWN])
        return FAIL(FEN_EVARIANT_RULE, "racing kings is played without pawns");
    int in_hand = 0;
    for (int c = 0; c < COLOR_COUNT; c++)
        for (int t = 0; t < PIECE_TYPE_COUNT; t++)
            in_hand += pos->pocket[c][t];
    if (bb_count(position_occupied(pos)) + in_hand > 64)
        return FAIL(FEN_EPOCKET, "the board and the pockets hold %d pieces, more than 64",
                    bb_count(position_occupied(pos)) + in_hand);
    return FEN_OK;
}

/* A variant's check rule at setup: the side not to move may not be in
 * check (in racing kings neither side may be). */
static fen_error_t validate_variant_checks(position_t *pos, variant_t variant, char *message, size_t message_size)
{
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    if (variant == VARIANT_RACING_KINGS && variant_checkers(pos))
        return FAIL(FEN_EVARIANT_RULE, "%s is in check, which racing kings never allows", color_name(us));
    pos->side_to_move = (uint8_t)them;
    bool opposite = variant_checkers(pos) != 0;
    pos->side_to_move = (uint8_t)us;
    if (opposite)
        return FAIL(FEN_EOPPOSITE_CHECK, "%s is in check but it is %s's move", color_name(them), color_name(us));
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

/* S-chess's castling field: KQkq as in chess (each also a gate on the
 * king's and the rook's square), file letters for the other gates. */
static fen_error_t parse_gating_castling(span_t field, bool chess960, position_t *pos, char *message,
                                        size_t message_size)
{
    char rights[8];
    size_t n = 0;
    bitboard_t gates = 0;
    if (!(field.length == 1 && field.text[0] == '-')) {
        if (field.length > 20)
            return FAIL(FEN_ECASTLING_LETTERS, "castling field '%.*s' is too long", quote_length(field), field.text);
        for (size_t i = 0; i < field.length; i++) {
            char c = field.text[i], lower = (char)(c | 0x20);
            color_t color = (c >= 'a') ? BLACK : WHITE;
            if (lower == 'k' || lower == 'q') {
                if (n == sizeof rights)
                    return FAIL(FEN_ECASTLING_LETTERS, "castling field '%.*s' gives a right twice",
                                quote_length(field), field.text);
                rights[n++] = c;
            } else if (lower >= 'a' && lower <= 'h' && ((c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h'))) {
                int sq = square_make(lower - 'a', color == WHITE ? 0 : 7);
                if (!bb_has(pos->by_color[color], sq))
                    return FAIL(FEN_ECASTLING_RIGHTS, "gate '%c' but no %s piece stands on %c%d", c,
                                color_name(color), lower, color == WHITE ? 1 : 8);
                gates |= bb_square(sq);
            } else {
                return FAIL(FEN_ECASTLING_LETTERS, "'%c' is not a castling or gating letter",
                            (c >= 32 && c < 127) ? c : '?');
            }
        }
    }
    if (n) {
        span_t castling = { rights, n };
        fen_error_t err = parse_castling(castling, chess960, pos, message, message_size);
        if (err != FEN_OK)
            return err;
    }
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] != SQ_NONE)
            gates |= bb_square(pos->castle_rook[i]) | bb_square(pos->king_square[i / 2]);
    /* Gates serve only a side with a reserve piece left to place. */
    for (int c = 0; c < COLOR_COUNT; c++)
        if (!pos->pocket[c][HAWK] && !pos->pocket[c][ELEPHANT])
            gates &= ~bb_rank(c == WHITE ? 0 : 7);
    pos->gates = gates;
    return FEN_OK;
}

/* "W+B": three-check's counters, checks remaining (X-FEN) or, with a
 * leading '+', checks given (Lichess). */
static bool read_checks(span_t field, bool given, int out[COLOR_COUNT])
{
    size_t i = 0;
    if (given && (field.length == 0 || field.text[i++] != '+'))
        return false;
    for (int c = 0; c < COLOR_COUNT; c++) {
        if (c == 1 && (i >= field.length || field.text[i++] != '+'))
            return false;
        if (i >= field.length || field.text[i] < '0' || field.text[i] > '9')
            return false;
        out[c] = field.text[i++] - '0';
    }
    return i == field.length;
}

static bool looks_like_checks(span_t field)
{
    for (size_t i = 0; i < field.length; i++)
        if (field.text[i] == '+')
            return true;
    return false;
}

/* Takes three-check counters out of the fields after the fourth, leaving
 * the move counters (0 or 2 of them) in *counters. */
static fen_error_t parse_checks(span_t *fields, int count, variant_t variant, position_t *pos, span_t *counters,
                                int *counter_count, char *message, size_t message_size)
{
    int given[COLOR_COUNT] = { 0, 0 };
    bool seen = false;
    *counter_count = 0;
    for (int i = 4; i < count; i++) {
        if (!looks_like_checks(fields[i])) {
            if (*counter_count == 2)
                return FAIL(FEN_EFIELD_COUNT, "FEN has too many fields");
            counters[(*counter_count)++] = fields[i];
            continue;
        }
        if (variant != VARIANT_THREE_CHECK)
            return FAIL(FEN_ECHECK_COUNT, "check counters '%.*s' belong to three-check only",
                        quote_length(fields[i]), fields[i].text);
        if (seen)
            return FAIL(FEN_ECHECK_COUNT, "the FEN gives the check counters twice");
        seen = true;
        int values[COLOR_COUNT];
        bool lichess = fields[i].text[0] == '+';
        if (!read_checks(fields[i], lichess, values))
            return FAIL(FEN_ECHECK_COUNT, "check counters '%.*s' must read 3+3 (checks remaining) or +0+0 "
                        "(checks given)", quote_length(fields[i]), fields[i].text);
        for (int c = 0; c < COLOR_COUNT; c++) {
            if (values[c] > 3)
                return FAIL(FEN_ECHECK_COUNT, "check counters '%.*s' go past 3", quote_length(fields[i]),
                            fields[i].text);
            given[c] = lichess ? values[c] : 3 - values[c];
        }
    }
    if (*counter_count == 1)
        return FAIL(FEN_EFIELD_COUNT, "FEN has one move counter, expected both (or neither)");
    if (variant == VARIANT_THREE_CHECK) {
        if (given[WHITE] == 3 && given[BLACK] == 3)
            return FAIL(FEN_ECHECK_COUNT, "both sides cannot have given three checks");
        pos->checks[WHITE] = (uint8_t)given[WHITE];
        pos->checks[BLACK] = (uint8_t)given[BLACK];
    }
    return FEN_OK;
}

void fen_start(variant_t variant, position_t *pos)
{
    const char *fen = variant_rules(variant)->start_fen;
    fen_parse_variant(fen, strlen(fen), variant, 0, pos, NULL, 0);
}

fen_error_t fen_parse(const char *text, size_t length, unsigned flags, position_t *pos, char *message,
                      size_t message_size)
{
    return fen_parse_variant(text, length, VARIANT_STANDARD, flags, pos, message, message_size);
}

fen_error_t fen_parse_variant(const char *text, size_t length, variant_t variant, unsigned flags, position_t *pos,
                              char *message, size_t message_size)
{
    bool chess960 = flags & FEN_CHESS960;
    span_t fields[8], counters[2];
    int counter_count = 0;
    fen_error_t err;
    if (message && message_size)
        message[0] = '\0';
    position_clear(pos);
    if ((unsigned)variant >= VARIANT_COUNT)
        variant = VARIANT_STANDARD;
    pos->variant = (uint8_t)variant;
    /* No Chess960 castling in S-chess: its UCI could not tell a gate on the
     * king's square from one on the rook's. */
    if (chess960 && variant == VARIANT_SEIRAWAN)
        return FAIL(FEN_EVARIANT_RULE, "S-chess has no Chess960 castling");
    if (length > FEN_INPUT_MAX)
        return FAIL(FEN_ETOO_LONG, "FEN is %zu bytes long, at most %d are accepted", length, FEN_INPUT_MAX);
    int most = variant == VARIANT_STANDARD ? 6 : 7;
    int count = split_fields(text, length, fields, most);
    if (variant == VARIANT_STANDARD ? (count != 4 && count != 6) : (count < 4 || count > 7))
        return FAIL(FEN_EFIELD_COUNT, "FEN has %s%d fields, expected 6 (or 4 without the move counters)",
                    count > most ? "more than " : "", count > most ? most : count);

    span_t board = fields[0], pocket;
    split_pocket(&board, &pocket, has_hand(variant));
    if (pocket.text && variant == VARIANT_STANDARD)
        return FAIL(FEN_EPOCKET, "the board has a pocket, but standard chess has none");
    if ((err = parse_board(board, variant, pos, message, message_size)) != FEN_OK)
        return err;
    if (pocket.text) {
        if (pocket.length && pocket.text[pocket.length - 1] == ']')
            pocket.length--;
        else if (pocket.text[-1] == '[')
            return FAIL(FEN_EPOCKET, "the pocket after '[' has no ']'");
        if ((err = parse_pocket(pocket, variant, pos, message, message_size)) != FEN_OK)
            return err;
    }
    if (fields[1].length != 1 || (fields[1].text[0] != 'w' && fields[1].text[0] != 'b'))
        return FAIL(FEN_ESIDE_TO_MOVE, "side to move '%.*s' must be 'w' or 'b'", quote_length(fields[1]),
                    fields[1].text);
    pos->side_to_move = fields[1].text[0] == 'w' ? WHITE : BLACK;
    if ((err = validate_material(pos, variant, message, message_size)) != FEN_OK)
        return err;
    pos->chess960 = chess960;
    if (variant_rules(variant)->flags & VARIANT_NO_CASTLING) {
        if (!(fields[2].length == 1 && fields[2].text[0] == '-'))
            return FAIL(FEN_ECASTLING_RIGHTS, "%s is played without castling: the castling field must be '-'",
                        variant_rules(variant)->key);
        err = FEN_OK;
    } else if (variant == VARIANT_SEIRAWAN) {
        err = parse_gating_castling(fields[2], chess960, pos, message, message_size);
    } else {
        err = parse_castling(fields[2], chess960, pos, message, message_size);
    }
    if (err == FEN_ECASTLING_NEEDS_CHESS960 && (flags & FEN_DETECT_CHESS960) && variant != VARIANT_SEIRAWAN)
        return fen_parse_variant(text, length, variant, (flags | FEN_CHESS960) & ~(unsigned)FEN_DETECT_CHESS960, pos,
                                 message, message_size);
    if (err != FEN_OK)
        return err;
    int ep_square;
    if ((err = parse_en_passant(fields[3], pos, &ep_square, message, message_size)) != FEN_OK)
        return err;

    if (variant == VARIANT_STANDARD) {
        counter_count = count == 6 ? 2 : 0;
        counters[0] = fields[4];
        counters[1] = fields[5];
    } else if ((err = parse_checks(fields, count, variant, pos, counters, &counter_count, message, message_size))
               != FEN_OK) {
        return err;
    }
    int halfmove = 0, fullmove = 1;
    if (counter_count == 2) {
        if (!parse_counter(counters[0], &halfmove))
            return FAIL(FEN_EHALFMOVE_CLOCK, "halfmove clock '%.*s' must be a number from 0 to %d",
                        quote_length(counters[0]), counters[0].text, FEN_COUNTER_MAX);
        if (!parse_counter(counters[1], &fullmove) || fullmove < 1)
            return FAIL(FEN_EFULLMOVE_NUMBER, "fullmove number '%.*s' must be a number from 1 to %d",
                        quote_length(counters[1]), counters[1].text, FEN_COUNTER_MAX);
    }
    pos->halfmove_clock = (uint16_t)halfmove;
    pos->fullmove_number = (uint16_t)fullmove;

    if (variant == VARIANT_STANDARD) {
        if ((err = validate_checks(pos, ep_square, flags & FEN_ALLOW_IMPOSSIBLE_CHECK, message, message_size))
            != FEN_OK)
            return err;
        if (ep_square != SQ_NONE && position_any_en_passant_legal(pos, ep_square))
            pos->en_passant = (square_t)ep_square;
    } else {
        if ((err = validate_variant_checks(pos, variant, message, message_size)) != FEN_OK)
            return err;
        if (ep_square != SQ_NONE)
            pos->en_passant = (square_t)ep_square;
        if (ep_square != SQ_NONE) {
            /* Kept only when a capture there is legal, as in standard chess. */
            move_t moves[MOVE_LIST_MAX];
            int n = variant_generate(pos, moves);
            bool used = false;
            for (int i = 0; i < n && !used; i++)
                used = move_kind(moves[i]) == MOVE_EN_PASSANT;
            if (!used)
                pos->en_passant = SQ_NONE;
        }
    }
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

/* S-chess: the gates of colour c not already said by a castling right. */
static size_t write_gates(const position_t *pos, color_t c, char *out)
{
    size_t n = 0;
    int rank = c == WHITE ? 0 : 7;
    bool castles = pos->castle_rook[c * 2] != SQ_NONE || pos->castle_rook[c * 2 + 1] != SQ_NONE;
    for (int f = 0; f < FILE_COUNT; f++) {
        int sq = square_make(f, rank);
        if (!bb_has(pos->gates, sq) || (castles && sq == pos->king_square[c]) || pos->castle_rook[c * 2] == sq
            || pos->castle_rook[c * 2 + 1] == sq)
            continue;
        out[n++] = (char)((c == WHITE ? 'A' : 'a') + f);
    }
    return n;
}

static size_t write_pocket(const position_t *pos, char *out)
{
    static const piece_type_t order[] = { QUEEN, ROOK, BISHOP, KNIGHT, PAWN, HAWK, ELEPHANT };
    size_t n = 0;
    out[n++] = '[';
    for (int c = 0; c < COLOR_COUNT; c++)
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
            for (int k = 0; k < pos->pocket[c][order[i]] && n < 72; k++)
                out[n++] = piece_letter(piece_make((color_t)c, order[i]));
    out[n++] = ']';
    return n;
}

char *fen_format(const position_t *pos, char *buf, size_t buf_size)
{
    char out[FEN_BUFFER_SIZE + 64];
    size_t n = 0;
    variant_t variant = (variant_t)pos->variant;
    for (int rank = 7; rank >= 0; rank--) {
        int empty = 0;
        for (int file = 0; file < 8; file++) {
            int sq = square_make(file, rank);
            piece_t p = pos->board[sq];
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                out[n++] = (char)('0' + empty);
            empty = 0;
            out[n++] = piece_letter(p);
            if (bb_has(pos->promoted, sq))
                out[n++] = '~';
        }
        if (empty)
            out[n++] = (char)('0' + empty);
        if (rank)
            out[n++] = '/';
    }
    if (variant != VARIANT_STANDARD && has_hand(variant))
        n += write_pocket(pos, out + n);
    out[n++] = ' ';
    out[n++] = pos->side_to_move == WHITE ? 'w' : 'b';
    out[n++] = ' ';
    size_t castling_start = n;
    for (int c = 0; c < COLOR_COUNT; c++) {
        for (int side = 0; side < CASTLE_SIDE_COUNT; side++)
            if (pos->castle_rook[c * 2 + side] != SQ_NONE)
                out[n++] = castling_letter(pos, c * 2 + side);
        if (pos->gates)
            n += write_gates(pos, (color_t)c, out + n);
    }
    if (n == castling_start)
        out[n++] = '-';
    out[n++] = ' ';
    if (pos->en_passant != SQ_NONE) {
        out[n++] = (char)('a' + square_file(pos->en_passant));
        out[n++] = (char)('1' + square_rank(pos->en_passant));
    } else {
        out[n++] = '-';
    }
    if (variant == VARIANT_THREE_CHECK) {
        out[n++] = ' ';
        out[n++] = (char)('0' + 3 - pos->checks[WHITE]);
        out[n++] = '+';
        out[n++] = (char)('0' + 3 - pos->checks[BLACK]);
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
