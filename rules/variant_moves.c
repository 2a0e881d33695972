/* A variant's moves and how they are played. Where the board moves are
 * chess's, movegen.c makes them and drops are added; elsewhere every piece
 * moves by its attack set (the Hawk and the Elephant by unions of the usual
 * ones), gating is added, and a move is kept when the position after it is
 * legal by the variant's rule. Standard chess never runs this code. */
#include "variant.h"

#include <string.h>

#include "movegen.h"
#include "zobrist.h"

static bool has(const position_t *pos, unsigned flag)
{
    return variant_rules((variant_t)pos->variant)->flags & flag;
}

/* A piece's attacks: attacks_of's, the pawn's by its colour. */
static bitboard_t piece_attacks(piece_type_t type, color_t c, int sq, bitboard_t occupied)
{
    return type == PAWN ? attacks_pawn(c, sq) : attacks_of(type, sq, occupied);
}

/* What threatens a king on sq: nothing in antichess, where kings are
 * ordinary pieces; in atomic nothing from a side without a king, nor
 * where that side's king touches sq (it could not capture without
 * exploding itself). */
static bitboard_t king_attackers(const position_t *pos, int sq, color_t by, bitboard_t occupied)
{
    if (pos->variant == VARIANT_ANTICHESS)
        return 0;
    if (pos->variant == VARIANT_ATOMIC) {
        bitboard_t kings = position_pieces(pos, by, KING);
        if (!kings || (attacks_king(sq) & kings))
            return 0;
    }
    return variant_attackers(pos, sq, by, occupied);
}

/* The square of colour c's one king, or SQ_NONE (none, or antichess's many). */
static int lone_king(const position_t *pos, color_t c)
{
    bitboard_t kings = position_pieces(pos, c, KING);
    return kings && !bb_more_than_one(kings) ? bb_lsb(kings) : SQ_NONE;
}

bitboard_t variant_checkers(const position_t *pos)
{
    color_t us = (color_t)pos->side_to_move;
    int king = lone_king(pos, us);
    return king == SQ_NONE ? 0 : king_attackers(pos, king, (color_t)!us, position_occupied(pos));
}

/* ---- Playing a move ---- */

static void take(position_t *pos, int sq)
{
    position_remove_piece(pos, sq);
    pos->promoted &= ~bb_square(sq);
}

static void drop_rights_at(position_t *pos, int sq)
{
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] == sq)
            pos->castle_rook[i] = SQ_NONE;
}

static void drop_rights_of(position_t *pos, color_t c)
{
    pos->castle_rook[c * 2] = pos->castle_rook[c * 2 + 1] = SQ_NONE;
}

static void gate(position_t *pos, color_t us, piece_type_t type, int sq)
{
    position_put_piece(pos, piece_make(us, type), sq);
    pos->pocket[us][type]--;
}

/* Atomic: the capturer, and every piece but a pawn around the square, go. */
static void explode(position_t *pos, int at)
{
    take(pos, at);
    bitboard_t around = attacks_king(at) & position_occupied(pos) & ~pos->by_type[PAWN];
    while (around) {
        int sq = bb_pop_lsb(&around);
        piece_t p = pos->board[sq];
        take(pos, sq);
        drop_rights_at(pos, sq);
        if (piece_type(p) == KING)
            drop_rights_of(pos, piece_color(p));
    }
}

static void make_castling(position_t *pos, color_t us, move_t move)
{
    int from = move_from(move), to = move_to(move);
    int king_to = position_castle_king_to(pos, to), rook_to = position_castle_rook_to(pos, to);
    piece_t king = pos->board[from], rook = pos->board[to];
    take(pos, from);
    take(pos, to);
    position_put_piece(pos, king, king_to);
    position_put_piece(pos, rook, rook_to);
    drop_rights_of(pos, us);
    if (move_gate(move))
        gate(pos, us, move_gate(move), move_gate_on_rook(move) ? to : from);
    pos->gates &= ~(bb_square(from) | bb_square(to));
}

/* Plays a normal move, a promotion or en passant; the en passant square a
 * double step may make is returned, for the caller to keep if it is used. */
static int make_board_move(position_t *pos, color_t us, move_t move)
{
    int from = move_from(move), to = move_to(move), kind = move_kind(move);
    piece_t piece = pos->board[from];
    bool was_promoted = bb_has(pos->promoted, from);
    int capture_square = kind == MOVE_EN_PASSANT ? to + (us == WHITE ? -8 : 8) : to;
    piece_t captured = pos->board[capture_square];
    if (captured != NO_PIECE) {
        pos->halfmove_clock = 0;
        piece_type_t back = bb_has(pos->promoted, capture_square) ? PAWN : piece_type(captured);
        if (has(pos, VARIANT_HAS_POCKETS) && pos->pocket[us][back] < 63)
            pos->pocket[us][back]++;
        take(pos, capture_square);
        drop_rights_at(pos, capture_square);
    }
    take(pos, from);
    position_put_piece(pos, kind == MOVE_PROMOTION ? piece_make(us, move_promotion(move)) : piece, to);
    if (was_promoted || (kind == MOVE_PROMOTION && has(pos, VARIANT_HAS_POCKETS)))
        pos->promoted |= bb_square(to);
    drop_rights_at(pos, from);
    if (piece_type(piece) == KING)
        drop_rights_of(pos, us);
    if (move_gate(move))
        gate(pos, us, move_gate(move), from);
    pos->gates &= ~(bb_square(from) | bb_square(to));
    if (pos->variant == VARIANT_ATOMIC && captured != NO_PIECE)
        explode(pos, to);
    if (piece_type(piece) == PAWN) {
        pos->halfmove_clock = 0;
        int start_rank = us == WHITE ? 1 : 6;
        if ((to ^ from) == 16 && square_rank(from) == start_rank)
            return (from + to) / 2;
    }
    return SQ_NONE;
}

/* Plays move on pos, keys aside; returns a double step's en passant square. */
static int apply(position_t *pos, move_t move)
{
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    int kind = move_kind(move), en_passant = SQ_NONE;
    pos->en_passant = SQ_NONE;
    if (pos->halfmove_clock < POSITION_COUNTER_MAX)
        pos->halfmove_clock++;
    if (us == BLACK && pos->fullmove_number < POSITION_COUNTER_MAX)
        pos->fullmove_number++;
    if (kind == MOVE_DROP) {
        piece_type_t type = move_dropped(move);
        position_put_piece(pos, piece_make(us, type), move_to(move));
        pos->pocket[us][type]--;
        if (type == PAWN)
            pos->halfmove_clock = 0;
    } else if (kind == MOVE_CASTLING) {
        make_castling(pos, us, move);
    } else {
        en_passant = make_board_move(pos, us, move);
    }
    /* A reserve that is empty can gate nothing: its gates go with it. */
    if (has(pos, VARIANT_HAS_RESERVES) && !pos->pocket[us][HAWK] && !pos->pocket[us][ELEPHANT])
        pos->gates &= ~bb_rank(us == WHITE ? 0 : 7);
    for (int c = 0; c < COLOR_COUNT; c++) {
        bitboard_t kings = position_pieces(pos, (color_t)c, KING);
        pos->king_square[c] = (square_t)(kings ? bb_lsb(kings) : SQ_NONE);
    }
    pos->side_to_move = (uint8_t)them;
    if (has(pos, VARIANT_HAS_CHECKS) && pos->checks[us] < 3 && variant_checkers(pos))
        pos->checks[us]++;
    return en_passant;
}

/* ---- Legality ---- */

/* Whether `after`, reached from `before` by a move, is legal by the
 * variant's rule. */
static bool legal_after(const position_t *before, const position_t *after)
{
    color_t us = (color_t)before->side_to_move, them = (color_t)!us;
    bitboard_t occupied = position_occupied(after);
    int king = lone_king(after, us);
    switch (before->variant) {
    case VARIANT_ANTICHESS:
        return true;
    case VARIANT_ATOMIC:
        if (!position_pieces(after, us, KING))
            return false;
        return !position_pieces(after, them, KING) || !king_attackers(after, king, them, occupied);
    case VARIANT_RACING_KINGS: {
        int theirs = lone_king(after, them);
        return (king == SQ_NONE || !variant_attackers(after, king, them, occupied))
               && (theirs == SQ_NONE || !variant_attackers(after, theirs, us, occupied));
    }
    default:
        return king == SQ_NONE || !variant_attackers(after, king, them, occupied);
    }
}

/* A gated piece shields its king from nothing: Fairy-Stockfish judges a
 * gating move by the same move without its gate, so chessd does too. */
static bool legal(const position_t *pos, move_t move)
{
    position_t after = *pos;
    apply(&after, move_make(move_from(move), move_to(move), move_kind(move), move_promotion(move)));
    return legal_after(pos, &after);
}

/* ---- Generation ---- */

typedef struct {
    move_t *moves;
    int count;
} sink_t;

static void push(sink_t *s, move_t move)
{
    if (s->count < MOVE_LIST_MAX)
        s->moves[s->count++] = move;
}

/* A move, and the same move gating each reserve piece on `from` when it may. */
static void push_gated(sink_t *s, const position_t *pos, color_t us, move_t move, bool may_gate, bool on_rook)
{
    if (!may_gate)
        return;
    for (piece_type_t t = HAWK; t <= ELEPHANT; t++)
        if (pos->pocket[us][t])
            push(s, move_with_gate(move, t, on_rook));
}

static void push_piece_move(sink_t *s, const position_t *pos, color_t us, int from, int to)
{
    move_t move = move_make(from, to, MOVE_NORMAL, PAWN);
    push(s, move);
    push_gated(s, pos, us, move, bb_has(pos->gates, from), false);
}

static void push_pawn_move(sink_t *s, const position_t *pos, int from, int to)
{
    if (square_rank(to) != 0 && square_rank(to) != 7) {
        push(s, move_make(from, to, MOVE_NORMAL, PAWN));
        return;
    }
    for (piece_type_t t = KNIGHT; t <= QUEEN; t++)
        push(s, move_make(from, to, MOVE_PROMOTION, t));
    if (pos->variant == VARIANT_ANTICHESS)
        push(s, move_make(from, to, MOVE_PROMOTION, KING));
    if (pos->variant == VARIANT_SEIRAWAN) {
        push(s, move_make(from, to, MOVE_PROMOTION, HAWK));
        push(s, move_make(from, to, MOVE_PROMOTION, ELEPHANT));
    }
}

static void gen_pawns(sink_t *s, const position_t *pos, color_t us)
{
    const int up = us == WHITE ? 8 : -8;
    const bitboard_t empty = ~position_occupied(pos), theirs = pos->by_color[!us];
    for (bitboard_t pawns = position_pieces(pos, us, PAWN); pawns;) {
        int from = bb_pop_lsb(&pawns);
        int relative_rank = us == WHITE ? square_rank(from) : 7 - square_rank(from);
        int to = from + up;
        if (bb_has(empty, to)) {
            push_pawn_move(s, pos, from, to);
            /* From the first two ranks: horde's pawns on rank 1 step twice too. */
            if (relative_rank <= 1 && bb_has(empty, to + up))
                push(s, move_make(from, to + up, MOVE_NORMAL, PAWN));
        }
        for (bitboard_t caps = attacks_pawn(us, from) & theirs; caps;)
            push_pawn_move(s, pos, from, bb_pop_lsb(&caps));
        if (pos->en_passant != SQ_NONE && bb_has(attacks_pawn(us, from), pos->en_passant))
            push(s, move_make(from, pos->en_passant, MOVE_EN_PASSANT, PAWN));
    }
}

/* Castling: the squares both pieces cross empty, the king never on a
 * square the variant counts as attacked. Legal as generated. */
static void gen_castling(sink_t *s, const position_t *pos, color_t us)
{
    int king = lone_king(pos, us);
    if (king == SQ_NONE || king_attackers(pos, king, (color_t)!us, position_occupied(pos)))
        return;
    bitboard_t occupied = position_occupied(pos);
    for (int side = 0; side < CASTLE_SIDE_COUNT; side++) {
        int rook = pos->castle_rook[us * 2 + side];
        if (rook == SQ_NONE)
            continue;
        int king_to, rook_to;
        if (occupied & position_castle_empty(king, rook, side, &king_to, &rook_to))
            continue;
        bitboard_t movers = bb_square(king) | bb_square(rook);
        /* The squares the king crosses with the rook still home, its
         * destination with the rook moved (as chessops: in atomic the rook
         * can shield a crossed square that a touching king makes safe). */
        bitboard_t path = attacks_between(king, king_to), without_king = occupied ^ bb_square(king);
        bool safe = !king_attackers(pos, king_to, (color_t)!us, (occupied ^ movers) | bb_square(rook_to));
        while (path && safe)
            safe = !king_attackers(pos, bb_pop_lsb(&path), (color_t)!us, without_king);
        if (!safe)
            continue;
        move_t move = move_make(king, rook, MOVE_CASTLING, PAWN);
        push(s, move);
        push_gated(s, pos, us, move, bb_has(pos->gates, king), false);
        push_gated(s, pos, us, move, bb_has(pos->gates, rook), true);
    }
}

static int pseudo_moves(const position_t *pos, move_t *list)
{
    sink_t s = { list, 0 };
    color_t us = (color_t)pos->side_to_move;
    bitboard_t ours = pos->by_color[us], occupied = position_occupied(pos);
    for (bitboard_t pieces = ours & ~pos->by_type[PAWN]; pieces;) {
        int from = bb_pop_lsb(&pieces);
        bitboard_t targets = piece_attacks(piece_type(pos->board[from]), us, from, occupied) & ~ours;
        while (targets)
            push_piece_move(&s, pos, us, from, bb_pop_lsb(&targets));
    }
    gen_pawns(&s, pos, us);
    if (!has(pos, VARIANT_NO_CASTLING))
        gen_castling(&s, pos, us);
    return s.count;
}

static bool is_capture(const position_t *pos, move_t move)
{
    int kind = move_kind(move);
    return kind == MOVE_EN_PASSANT
           || (kind != MOVE_DROP && kind != MOVE_CASTLING && pos->board[move_to(move)] != NO_PIECE);
}

/* Pieces of ours standing alone between our king and an enemy slider:
 * only their moves (and the king's) can uncover a check. */
static bitboard_t pin_candidates(const position_t *pos, color_t us, int king)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t theirs = pos->by_color[!us], occupied = position_occupied(pos), blockers = 0;
    bitboard_t snipers = ((attacks_rook(king, 0) & (t[ROOK] | t[QUEEN] | t[ELEPHANT]))
                          | (attacks_bishop(king, 0) & (t[BISHOP] | t[QUEEN] | t[HAWK]))) & theirs;
    while (snipers) {
        bitboard_t between = attacks_between(king, bb_pop_lsb(&snipers)) & occupied;
        if (!bb_more_than_one(between))
            blockers |= between;
    }
    return blockers;
}

/* Crazyhouse's drops with standard chess's check rule: anywhere empty when
 * not in check, only between the king and a lone checking slider when in
 * check, never in double check. */
static int legal_drops(const position_t *pos, move_t *out)
{
    color_t us = (color_t)pos->side_to_move;
    int king = pos->king_square[us];
    bitboard_t empty = ~position_occupied(pos);
    bitboard_t checkers = variant_attackers(pos, king, (color_t)!us, position_occupied(pos));
    if (checkers)
        empty &= bb_more_than_one(checkers) ? 0 : attacks_between(king, bb_lsb(checkers));
    int n = 0;
    for (piece_type_t t = PAWN; t <= QUEEN; t++) {
        if (!pos->pocket[us][t])
            continue;
        bitboard_t targets = t == PAWN ? empty & ~(BB_RANK_1 | BB_RANK_8) : empty;
        if (!out) {
            n += bb_count(targets);
            continue;
        }
        while (targets)
            out[n++] = move_make_drop(t, bb_pop_lsb(&targets));
    }
    return n;
}

int variant_generate(const position_t *pos, move_t *out)
{
    color_t winner;
    if (variant_end(pos, &winner) != VARIANT_END_NONE)
        return 0;
    /* Where the board moves are chess's, chess's generator makes them. */
    if (pos->variant == VARIANT_CRAZYHOUSE || pos->variant == VARIANT_KING_OF_THE_HILL
        || pos->variant == VARIANT_THREE_CHECK) {
        int n = movegen_standard(pos, out);
        if (pos->variant == VARIANT_CRAZYHOUSE)
            n += legal_drops(pos, out ? out + n : NULL);
        return n;
    }
    move_t pseudo[MOVE_LIST_MAX];
    int count = pseudo_moves(pos, pseudo), n = 0;
    color_t us = (color_t)pos->side_to_move;
    if (pos->variant == VARIANT_ANTICHESS) {
        bool must_capture = false;
        for (int i = 0; i < count && !must_capture; i++)
            must_capture = is_capture(pos, pseudo[i]);
        for (int i = 0; i < count; i++)
            if (!must_capture || is_capture(pos, pseudo[i])) {
                if (out)
                    out[n] = pseudo[i];
                n++;
            }
        return n;
    }
    /* Where the usual king safety is the whole rule, a move of a piece that
     * shields nothing, while not in check, needs no trial. */
    int king = lone_king(pos, us);
    bool racing = pos->variant == VARIANT_RACING_KINGS;
    bool plain = pos->variant != VARIANT_ATOMIC && !racing;
    bool usual = (plain || racing) && king != SQ_NONE;
    bool in_check = usual && variant_attackers(pos, king, (color_t)!us, position_occupied(pos));
    bitboard_t shields = usual ? pin_candidates(pos, us, king) : 0;
    /* Racing kings: a move also may not check theirs, from its target or by
     * uncovering a line (the pieces alone between their king and ours). */
    int theirs = racing ? lone_king(pos, (color_t)!us) : SQ_NONE;
    bitboard_t uncover = theirs != SQ_NONE ? pin_candidates(pos, (color_t)!us, theirs) : 0;
    for (int i = 0; i < count; i++) {
        move_t move = pseudo[i];
        int kind = move_kind(move), from = move_from(move);
        bool sure = kind == MOVE_CASTLING || (plain && king == SQ_NONE)
                    || (usual && !in_check && kind != MOVE_EN_PASSANT
                        && (kind == MOVE_DROP || (from != king && !bb_has(shields, from))));
        if (sure && racing && kind != MOVE_CASTLING) {
            int to = move_to(move);
            bitboard_t after = (position_occupied(pos) ^ bb_square(from)) | bb_square(to);
            sure = theirs == SQ_NONE
                   || (!bb_has(uncover, from)
                       && !bb_has(piece_attacks(piece_type(pos->board[from]), us, to, after), theirs));
        }
        if (sure || legal(pos, move)) {
            if (out)
                out[n] = move;
            n++;
        }
    }
    return n;
}

void variant_make(position_t *pos, move_t move, position_undo_t *undo)
{
    undo->before = *pos;
    undo->key = pos->key;
    memcpy(undo->castle_rook, pos->castle_rook, sizeof undo->castle_rook);
    undo->captured = NO_PIECE;
    undo->en_passant = pos->en_passant;
    undo->halfmove_clock = pos->halfmove_clock;
    undo->fullmove_number = pos->fullmove_number;
    int en_passant = apply(pos, move);
    /* Kept only when a capture there is legal, as in standard chess. */
    if (en_passant != SQ_NONE && (attacks_pawn(pos->side_to_move ? WHITE : BLACK, en_passant)
                                  & position_pieces(pos, (color_t)pos->side_to_move, PAWN))) {
        pos->en_passant = (square_t)en_passant;
        move_t captures[MOVE_LIST_MAX];
        int count = variant_generate(pos, captures);
        bool used = false;
        for (int i = 0; i < count && !used; i++)
            used = move_kind(captures[i]) == MOVE_EN_PASSANT;
        if (!used)
            pos->en_passant = SQ_NONE;
    }
    pos->key = position_compute_key(pos);
}
