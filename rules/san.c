/* SAN writing and reading. Reading first takes the text apart (piece,
 * disambiguation, target, promotion), then matches it against the legal
 * moves; when nothing matches it asks legality_explain() why, for the
 * piece(s) the text could mean. */
#include "san.h"

#include <stdio.h>
#include <string.h>

#include "attacks.h"
#include "movegen.h"
#include "variant.h"

static int append_square(char *buf, int n, int sq)
{
    buf[n++] = (char)('a' + square_file(sq));
    buf[n++] = (char)('1' + square_rank(sq));
    return n;
}

/* Minimal disambiguation of a piece move among the other legal moves. A
 * piece (not a pawn) moves only to squares it attacks, so when no other
 * piece of its kind attacks the target, no other legal move can share it
 * and the list is not searched. */
static int append_disambiguation(const position_t *pos, const move_list_t *legal, move_t move, char *buf, int n)
{
    int from = move_from(move), to = move_to(move);
    piece_t piece = pos->board[from];
    bitboard_t others = position_pieces(pos, piece_color(piece), piece_type(piece)) & ~bb_square(from);
    if (!(others & attacks_of(piece_type(piece), to, position_occupied(pos))))
        return n;
    move_list_t own;
    if (!legal) { /* san_format: the list is made only when another piece may go there too */
        movegen_legal(pos, &own);
        legal = &own;
    }
    bool ambiguous = false, same_file = false, same_rank = false;
    for (int i = 0; i < legal->count; i++) {
        move_t other = legal->moves[i];
        int other_from = move_from(other);
        if (other == move || other_from == from || move_to(other) != to || move_kind(other) == MOVE_CASTLING
            || pos->board[other_from] != piece)
            continue;
        ambiguous = true;
        same_file |= square_file(other_from) == square_file(from);
        same_rank |= square_rank(other_from) == square_rank(from);
    }
    if (!ambiguous)
        return n;
    if (!same_file)
        buf[n++] = (char)('a' + square_file(from));
    else if (!same_rank)
        buf[n++] = (char)('1' + square_rank(from));
    else
        n = append_square(buf, n, from);
    return n;
}

/* Whether move may give check, so that the position after it must be
 * looked at: false only when it certainly does not. A plain move or
 * capture changes the board on its two squares alone, so it checks only
 * from its target or by opening a line through its origin to the king;
 * castling, en passant and promotion are always looked at. */
static bool may_check(const position_t *pos, move_t move)
{
    int kind = move_kind(move), from = move_from(move), to = move_to(move);
    /* Crazyhouse, king of the hill and three-check check as chess does. */
    bool chess_checks = pos->variant == VARIANT_STANDARD || pos->variant == VARIANT_CRAZYHOUSE
                        || pos->variant == VARIANT_KING_OF_THE_HILL || pos->variant == VARIANT_THREE_CHECK;
    if (!chess_checks || (kind != MOVE_NORMAL && kind != MOVE_DROP))
        return true;
    color_t us = (color_t)pos->side_to_move;
    int king = pos->king_square[!us];
    if (kind == MOVE_DROP) { /* a drop opens no line: it checks from where it lands or not at all */
        piece_type_t dropped = move_dropped(move);
        bitboard_t reach = dropped == PAWN ? attacks_pawn(us, to)
                                           : attacks_of(dropped, to, position_occupied(pos) | bb_square(to));
        return bb_has(reach, king);
    }
    if (attacks_line(king, from))
        return true; /* on a line with the king: a discovered check is possible */
    piece_type_t type = piece_type(pos->board[from]);
    bitboard_t occupied = (position_occupied(pos) & ~bb_square(from)) | bb_square(to);
    bitboard_t reach = type == PAWN ? attacks_pawn(us, to) : attacks_of(type, to, occupied);
    return (reach & bb_square(king)) != 0;
}

/* S-chess's gate: "/H" after the move, and for castling the square too. */
static int append_gate(const position_t *pos, move_t move, char *buf, int n)
{
    if (!move_gate(move))
        return n;
    buf[n++] = '/';
    buf[n++] = piece_type_capital(move_gate(move));
    if (move_kind(move) == MOVE_CASTLING)
        n = append_square(buf, n, move_gate_on_rook(move) ? move_to(move) : move_from(move));
    (void)pos;
    return n;
}

/* The check mark: '#' for a mate (never for a variant's own end, such as
 * three-check's third check, as chessops writes it), '+' for a check. */
static int append_check(const position_t *pos, move_t move, char *buf, int n)
{
    if (!may_check(pos, move))
        return n;
    position_t after = *pos;
    position_undo_t undo;
    position_make(&after, move, &undo);
    if (!position_in_check(&after))
        return n;
    color_t winner;
    bool mate = movegen_count(&after) == 0
                && (after.variant == VARIANT_STANDARD || variant_end(&after, &winner) == VARIANT_END_NONE);
    buf[n++] = mate ? '#' : '+';
    return n;
}

char *san_format_with(const position_t *pos, const move_list_t *legal, move_t move, char *buf)
{
    int n = 0, from = move_from(move), to = move_to(move), kind = move_kind(move);
    if (kind == MOVE_DROP) {
        buf[n++] = piece_type_capital(move_dropped(move));
        buf[n++] = '@';
        n = append_square(buf, n, to);
    } else if (kind == MOVE_CASTLING) {
        const char *text = square_file(to) > square_file(from) ? "O-O" : "O-O-O";
        n = (int)strlen(text);
        memcpy(buf, text, (size_t)n);
    } else {
        piece_type_t type = piece_type(pos->board[from]);
        bool capture = pos->board[to] != NO_PIECE || kind == MOVE_EN_PASSANT;
        if (type == PAWN) {
            if (capture)
                buf[n++] = (char)('a' + square_file(from));
        } else {
            buf[n++] = piece_type_capital(type);
            n = append_disambiguation(pos, legal, move, buf, n);
        }
        if (capture)
            buf[n++] = 'x';
        n = append_square(buf, n, to);
        if (kind == MOVE_PROMOTION) {
            buf[n++] = '=';
            buf[n++] = piece_type_capital(move_promotion(move));
        }
    }
    n = append_gate(pos, move, buf, n);
    n = append_check(pos, move, buf, n);
    buf[n] = '\0';
    return buf;
}

char *san_format(const position_t *pos, move_t move, char *buf) { return san_format_with(pos, NULL, move, buf); }

/* SAN taken apart; -1 marks a part the text leaves out. */
typedef struct {
    piece_type_t type;
    int from_file, from_rank, to;
    piece_type_t promotion; /* NO_PIECE_TYPE when not given */
    int castle_side;        /* CASTLE_KING_SIDE, CASTLE_QUEEN_SIDE, or -1 */
    bool drop;              /* "N@f3", "P@e4", "@e4": type is the piece dropped */
    piece_type_t gate;      /* S-chess's "/H": the piece gated, 0 when none */
    int gate_square;        /* "/Hh1": where (castling), or -1 */
} san_text_t;

static int letter_type(char c)
{
    for (int t = KNIGHT; t < PIECE_TYPE_COUNT; t++)
        if (piece_type_capital((piece_type_t)t) == c)
            return t;
    return -1;
}

static bool is_file(char c) { return c >= 'a' && c <= 'h'; }
static bool is_rank(char c) { return c >= '1' && c <= '8'; }

/* Takes a gate ("/H", "/Hh1") off the end of the text. */
static bool read_gate(const char *text, size_t *length, san_text_t *out)
{
    const char *slash = memchr(text, '/', *length);
    if (!slash)
        return true;
    size_t rest = *length - (size_t)(slash - text) - 1;
    int t = rest >= 1 ? letter_type((char)(slash[1] & ~0x20)) : -1;
    if (t != HAWK && t != ELEPHANT)
        return false;
    if (rest == 3 && is_file(slash[2]) && is_rank(slash[3]))
        out->gate_square = square_make(slash[2] - 'a', slash[3] - '1');
    else if (rest != 1)
        return false;
    out->gate = (piece_type_t)t;
    *length = (size_t)(slash - text);
    return true;
}

/* A drop: "N@f3", "P@e4" or "@e4" (a pawn). */
static bool read_drop(const char *text, size_t length, san_text_t *out)
{
    size_t at = length >= 3 ? length - 3 : 0;
    if (length < 3 || length > 4 || text[at] != '@' || !is_file(text[at + 1]) || !is_rank(text[at + 2]))
        return false;
    out->type = PAWN;
    if (length == 4) {
        int t = letter_type((char)(text[0] & ~0x20));
        if (t < 0 && (text[0] | 0x20) == 'p')
            t = PAWN;
        if (t < 0)
            return false;
        out->type = (piece_type_t)t;
    }
    out->drop = true;
    out->to = square_make(text[at + 1] - 'a', text[at + 2] - '1');
    return true;
}

static bool read_san(const char *text, size_t length, san_text_t *out)
{
    out->type = PAWN;
    out->from_file = out->from_rank = out->to = out->castle_side = -1;
    out->promotion = NO_PIECE_TYPE;
    out->drop = false;
    out->gate = (piece_type_t)0;
    out->gate_square = -1;
    while (length > 0 && strchr("+#!?", text[length - 1]) && text[length - 1] != '\0')
        length--;
    if (length == 0 || !read_gate(text, &length, out))
        return false;
    if (memchr(text, '@', length))
        return read_drop(text, length, out);
    char castle[8];
    if (length <= 5) {
        for (size_t i = 0; i < length; i++)
            castle[i] = text[i] == '0' ? 'O' : text[i];
        castle[length] = '\0';
        if (!strcmp(castle, "O-O") || !strcmp(castle, "O-O-O")) {
            out->castle_side = length == 3 ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE;
            return true;
        }
    }
    size_t i = 0;
    if (letter_type(text[0]) >= 0) {
        out->type = (piece_type_t)letter_type(text[0]);
        i = 1;
    }
    /* Promotion at the end: "=Q", "Q" or "q" after a rank digit. */
    if (out->type == PAWN && length >= 3) {
        char c = text[length - 1];
        int t = letter_type((char)(c & ~0x20));
        if (t < 0 && (c == 'p' || c == 'P'))
            t = PAWN;
        if (t >= 0 && (text[length - 2] == '=' || is_rank(text[length - 2]))) {
            out->promotion = (piece_type_t)t;
            length -= text[length - 2] == '=' ? 2 : 1;
        }
    }
    if (length < i + 2 || !is_file(text[length - 2]) || !is_rank(text[length - 1]))
        return false;
    out->to = square_make(text[length - 2] - 'a', text[length - 1] - '1');
    length -= 2;
    if (i < length && is_file(text[i]))
        out->from_file = text[i++] - 'a';
    if (i < length && is_rank(text[i]))
        out->from_rank = text[i++] - '1';
    if (i < length && (text[i] == 'x' || text[i] == ':' || text[i] == '-'))
        i++;
    return i == length;
}

/* Whether a move gates what the SAN says: nothing, or the piece (and the
 * square, when given). */
static bool gate_fits(const san_text_t *san, move_t m)
{
    if (move_gate(m) != san->gate)
        return false;
    if (!san->gate || san->gate_square < 0)
        return true;
    int square = move_kind(m) == MOVE_CASTLING && move_gate_on_rook(m) ? move_to(m) : move_from(m);
    return square == san->gate_square;
}

static legality_reason_t find_castling(const position_t *pos, const san_text_t *san, int side, move_t *move,
                                       char *message, size_t message_size, const move_list_t *legal)
{
    color_t us = (color_t)pos->side_to_move;
    for (int i = 0; i < legal->count; i++) {
        move_t m = legal->moves[i];
        if (move_kind(m) == MOVE_CASTLING
            && (square_file(move_to(m)) > square_file(move_from(m))) == (side == CASTLE_KING_SIDE)
            && gate_fits(san, m)) {
            *move = m;
            return LEGALITY_OK;
        }
    }
    if (san->gate) {
        snprintf(message, message_size, "no castling %s can gate that piece there",
                 side == CASTLE_KING_SIDE ? "king side" : "queen side");
        return LEGALITY_GATING_INVALID;
    }
    int king = pos->king_square[us];
    int rook = pos->castle_rook[us * 2 + side];
    if (rook == SQ_NONE) {
        snprintf(message, message_size, "%s has no right to castle %s", color_name(us),
                 side == CASTLE_KING_SIDE ? "king side" : "queen side");
        return LEGALITY_CASTLING_NO_RIGHT;
    }
    return legality_explain(pos, king, rook, NO_PIECE_TYPE, message, message_size);
}

/* Whether a legal move fits the SAN parts (promotion checked separately). */
static bool matches(const position_t *pos, const san_text_t *san, move_t m)
{
    int from = move_from(m);
    if (san->drop || move_kind(m) == MOVE_DROP)
        return san->drop && move_kind(m) == MOVE_DROP && move_to(m) == san->to && move_dropped(m) == san->type;
    if (move_kind(m) == MOVE_CASTLING || move_to(m) != san->to || piece_type(pos->board[from]) != san->type
        || !gate_fits(san, m))
        return false;
    if (san->from_file >= 0 && square_file(from) != san->from_file)
        return false;
    if (san->from_rank >= 0 && square_rank(from) != san->from_rank)
        return false;
    /* A pawn named without a file moves straight ahead. */
    if (san->type == PAWN && san->from_file < 0 && square_file(from) != square_file(san->to))
        return false;
    return true;
}

/* Preference among explanations when several pieces could be meant: the one
 * that got furthest (closest to legal) is the most useful to report. */
static int explanation_rank(legality_reason_t r)
{
    switch (r) {
    case LEGALITY_LEAVES_KING_IN_CHECK:
    case LEGALITY_GIVES_CHECK:
    case LEGALITY_EXPLODES_OWN_KING:
    case LEGALITY_MUST_CAPTURE:
    case LEGALITY_GATING_INVALID: return 5;
    case LEGALITY_PROMOTION_MISSING:
    case LEGALITY_PROMOTION_INVALID: return 4;
    case LEGALITY_PATH_BLOCKED: return 3;
    case LEGALITY_OWN_PIECE_ON_TARGET: return 2;
    default: return 1;
    }
}

/* The fifth letter UCI would carry: the promotion, or the gate. */
static piece_type_t letter_of(const san_text_t *san)
{
    return san->promotion != NO_PIECE_TYPE ? san->promotion : san->gate ? san->gate : NO_PIECE_TYPE;
}

static legality_reason_t explain_no_match(const position_t *pos, const san_text_t *san, char *message,
                                          size_t message_size)
{
    color_t us = (color_t)pos->side_to_move;
    bitboard_t candidates = position_pieces(pos, us, san->type);
    if (san->from_file >= 0)
        candidates &= bb_file(san->from_file);
    else if (san->type == PAWN)
        candidates &= bb_file(square_file(san->to));
    if (san->from_rank >= 0)
        candidates &= bb_rank(san->from_rank);
    if (!candidates) {
        snprintf(message, message_size, "%s has no %s that could move to %c%c", color_name(us),
                 piece_type_name(san->type), 'a' + square_file(san->to), '1' + square_rank(san->to));
        return LEGALITY_NO_PIECE;
    }
    legality_reason_t best = LEGALITY_OK;
    int best_rank = 0;
    char attempt[160];
    while (candidates) {
        int from = bb_pop_lsb(&candidates);
        legality_reason_t r = legality_explain(pos, from, san->to, letter_of(san), attempt, sizeof attempt);
        /* The only request legality_explain() can call legal here is the king
         * onto its castling square or rook: in SAN that is written O-O/O-O-O. */
        if (r == LEGALITY_OK) {
            r = LEGALITY_CANNOT_MOVE_SO;
            snprintf(attempt, sizeof attempt, "in SAN castling is written O-O or O-O-O");
        }
        if (explanation_rank(r) > best_rank) {
            best = r;
            best_rank = explanation_rank(r);
            snprintf(message, message_size, "%s", attempt);
        }
    }
    /* Several pieces could not: say so for all of them; one piece keeps its own reason. */
    if (best == LEGALITY_CANNOT_MOVE_SO && bb_more_than_one(position_pieces(pos, us, san->type)))
        snprintf(message, message_size, "no %s %s can move to %c%c", color_name(us),
                 piece_type_name(san->type), 'a' + square_file(san->to), '1' + square_rank(san->to));
    return best;
}

/* The legal moves that fit the SAN parts, keeping only those of the promotion
 * piece it names; none when it names a promotion the moves do not make or
 * leaves out one they must. */
static int fitting(const position_t *pos, const move_list_t *legal, const san_text_t *san, move_list_t *found)
{
    found->count = 0;
    for (int i = 0; i < legal->count; i++)
        if (matches(pos, san, legal->moves[i]))
            found->moves[found->count++] = legal->moves[i];
    if (found->count == 0)
        return 0;
    bool promotes = move_kind(found->moves[0]) == MOVE_PROMOTION;
    int kept = 0;
    for (int i = 0; i < found->count; i++)
        if (promotes == (san->promotion != NO_PIECE_TYPE)
            && (!promotes || move_promotion(found->moves[i]) == san->promotion))
            found->moves[kept++] = found->moves[i];
    return found->count = kept;
}

/* A lower-case piece letter (nf3, qxh5, ke2) is read as the piece when SAN as
 * written cannot mean a move: n, r, q and k are not files, so such text is
 * not SAN as written at all. b is also a file, and "bxc4" is first what it
 * says, a b-pawn's capture; it is the bishop's only when no b-pawn move fits.
 * Returns whether the text reads as a piece; its parts go to san. */
static bool read_lower_case_piece(const char *text, size_t length, san_text_t *san)
{
    if (length < 3 || !strchr("nbrqk", text[0]) || text[0] == '\0')
        return false;
    char capital[SAN_INPUT_MAX];
    memcpy(capital, text, length);
    capital[0] = (char)(text[0] & ~0x20);
    return read_san(capital, length, san);
}

legality_reason_t san_parse(const position_t *pos, const char *text, size_t length, move_t *move,
                            char *message, size_t message_size)
{
    san_text_t san, piece;
    if (message && message_size)
        message[0] = '\0';
    bool fits_text = length > 0 && length <= SAN_INPUT_MAX && !memchr(text, '\0', length);
    bool as_written = fits_text && read_san(text, length, &san);
    bool as_piece = fits_text && read_lower_case_piece(text, length, &piece);
    if (!as_written && !as_piece) {
        snprintf(message, message_size, "'%.*s' is neither UCI (e2e4) nor SAN (e4, Nf3, O-O)",
                 (int)(length > SAN_INPUT_MAX ? SAN_INPUT_MAX : length), text);
        return LEGALITY_UNPARSEABLE;
    }
    move_list_t legal, found;
    bool drop = (as_written && san.drop) || (as_piece && piece.drop);
    if (drop)
        movegen_legal(pos, &legal);
    else
        movegen_legal_board(pos, &legal);
    if (!as_written || (as_piece && !fitting(pos, &legal, &san, &found) && fitting(pos, &legal, &piece, &found)))
        san = piece;
    if (san.castle_side >= 0)
        return find_castling(pos, &san, san.castle_side, move, message, message_size, &legal);

    if (fitting(pos, &legal, &san, &found) == 1) {
        *move = found.moves[0];
        return LEGALITY_OK;
    }
    if (found.count > 1) { /* several pieces fit: name them all */
        size_t n = (size_t)snprintf(message, message_size, "'%.*s' is ambiguous: it could be", (int)length, text);
        for (int i = 0; i < found.count && n < message_size; i++) {
            char san_text[SAN_BUFFER_SIZE];
            n += (size_t)snprintf(message + n, message_size - n, "%s %s", i ? "," : "",
                                  san_format_with(pos, &legal, found.moves[i], san_text));
        }
        return LEGALITY_AMBIGUOUS;
    }
    if (san.drop)
        return legality_explain_drop(pos, san.type, san.to, message, message_size);
    /* Nothing fits: why, for the pieces that are there or the promotion the text names. */
    move_list_t any = { 0 };
    for (int i = 0; i < legal.count; i++)
        if (matches(pos, &san, legal.moves[i]))
            any.moves[any.count++] = legal.moves[i];
    if (any.count == 0)
        return explain_no_match(pos, &san, message, message_size);
    legality_reason_t r =
        legality_explain(pos, move_from(any.moves[0]), san.to, letter_of(&san), message, message_size);
    if (r == LEGALITY_OK) { /* never OK without a move: the text fits none */
        snprintf(message, message_size, "'%.*s' fits no legal move", (int)length, text);
        return LEGALITY_UNPARSEABLE;
    }
    return r;
}
