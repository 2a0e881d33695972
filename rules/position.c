/* Position primitives: piece placement, attack queries, Zobrist keys, and
 * make/unmake. The key covers pieces, side to move, castling rooks, and the en
 * passant file only while pos->en_passant is set (that is, only while an en
 * passant capture is legal). */
#include "position.h"

#include <string.h>

#include "zobrist.h"

position_variant_hooks_t position_variant_hooks;

void position_clear(position_t *pos)
{
    memset(pos, 0, sizeof *pos);
    memset(pos->board, NO_PIECE, sizeof pos->board);
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        pos->castle_rook[i] = SQ_NONE;
    pos->king_square[WHITE] = pos->king_square[BLACK] = SQ_NONE;
    pos->en_passant = SQ_NONE;
    pos->fullmove_number = 1;
}

void position_put_piece(position_t *pos, piece_t piece, int sq)
{
    bitboard_t b = bb_square(sq);
    pos->board[sq] = piece;
    pos->by_type[piece_type(piece)] |= b;
    pos->by_color[piece_color(piece)] |= b;
    if (piece_type(piece) == KING)
        pos->king_square[piece_color(piece)] = (square_t)sq;
}

void position_remove_piece(position_t *pos, int sq)
{
    piece_t piece = pos->board[sq];
    bitboard_t b = bb_square(sq);
    pos->board[sq] = NO_PIECE;
    pos->by_type[piece_type(piece)] &= ~b;
    pos->by_color[piece_color(piece)] &= ~b;
}

uint64_t position_compute_key(const position_t *pos)
{
    uint64_t key = 0;
    for (bitboard_t occupied = position_occupied(pos); occupied;) {
        int sq = bb_pop_lsb(&occupied);
        key ^= zobrist_piece_square[pos->board[sq]][sq];
    }
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] != SQ_NONE)
            key ^= zobrist_castle_rook[pos->castle_rook[i]];
    if (pos->en_passant != SQ_NONE)
        key ^= zobrist_en_passant_file[square_file(pos->en_passant)];
    if (pos->side_to_move == BLACK)
        key ^= zobrist_black_to_move;
    if (pos->variant != VARIANT_STANDARD)
        key ^= position_variant_key(pos);
    return key;
}

uint64_t position_variant_key(const position_t *pos)
{
    uint64_t key = zobrist_variant[pos->variant < VARIANT_COUNT ? pos->variant : 0];
    for (int c = 0; c < COLOR_COUNT; c++) {
        for (int t = 0; t < PIECE_TYPE_COUNT; t++)
            key ^= zobrist_pocket[c][t][pos->pocket[c][t] & (ZOBRIST_POCKET_MAX - 1)];
        key ^= zobrist_checks[c][pos->checks[c] & 3];
    }
    for (bitboard_t b = pos->gates; b;)
        key ^= zobrist_gate[bb_pop_lsb(&b)];
    for (bitboard_t b = pos->promoted; b;)
        key ^= zobrist_promoted[bb_pop_lsb(&b)];
    return key;
}

bitboard_t position_checkers(const position_t *pos)
{
    if (pos->variant != VARIANT_STANDARD)
        return position_variant_hooks.checkers(pos);
    color_t us = (color_t)pos->side_to_move;
    return position_attackers_to(pos, pos->king_square[us], position_occupied(pos)) & pos->by_color[!us];
}

bool position_in_check(const position_t *pos)
{
    if (pos->variant != VARIANT_STANDARD)
        return position_variant_hooks.checkers(pos) != 0;
    color_t us = (color_t)pos->side_to_move;
    return position_attacked_by(pos, pos->king_square[us], (color_t)!us, position_occupied(pos));
}

bool position_en_passant_legal(const position_t *pos, int from, int ep_square)
{
    color_t us = (color_t)pos->side_to_move;
    int captured = ep_square + (us == WHITE ? -8 : 8);
    bitboard_t occupied = (position_occupied(pos) ^ bb_square(from) ^ bb_square(captured)) | bb_square(ep_square);
    bitboard_t attackers = position_attackers_to(pos, pos->king_square[us], occupied)
                           & pos->by_color[!us] & ~bb_square(captured);
    return attackers == 0;
}

bool position_any_en_passant_legal(const position_t *pos, int ep_square)
{
    color_t us = (color_t)pos->side_to_move;
    bitboard_t candidates = attacks_pawn((color_t)!us, ep_square) & position_pieces(pos, us, PAWN);
    while (candidates)
        if (position_en_passant_legal(pos, bb_pop_lsb(&candidates), ep_square))
            return true;
    return false;
}

static bool castle_is_king_side(const position_t *pos, int rook_square)
{
    return square_file(rook_square) > square_file(pos->king_square[piece_color(pos->board[rook_square])]);
}

int position_castle_king_to(const position_t *pos, int rook_square)
{
    return square_make(castle_is_king_side(pos, rook_square) ? 6 : 2, square_rank(rook_square));
}

int position_castle_rook_to(const position_t *pos, int rook_square)
{
    return square_make(castle_is_king_side(pos, rook_square) ? 5 : 3, square_rank(rook_square));
}

int position_castle_index(const position_t *pos, int sq)
{
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] == sq)
            return i;
    return -1;
}

static void move_piece(position_t *pos, int from, int to)
{
    piece_t piece = pos->board[from];
    bitboard_t both = bb_square(from) | bb_square(to);
    pos->board[from] = NO_PIECE;
    pos->board[to] = piece;
    pos->by_type[piece_type(piece)] ^= both;
    pos->by_color[piece_color(piece)] ^= both;
}

/* Drops the castling rights a move from `from` to `to` destroys (a rook
 * that moves or is taken). */
static void drop_castle_rights_at(position_t *pos, int from, int to)
{
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++) {
        int rook = pos->castle_rook[i];
        if (rook == from || rook == to) {
            pos->key ^= zobrist_castle_rook[rook];
            pos->castle_rook[i] = SQ_NONE;
        }
    }
}

static void drop_castle_rights_of(position_t *pos, color_t c)
{
    for (int side = 0; side < CASTLE_SIDE_COUNT; side++) {
        square_t *rook = &pos->castle_rook[c * 2 + side];
        if (*rook != SQ_NONE) {
            pos->key ^= zobrist_castle_rook[*rook];
            *rook = SQ_NONE;
        }
    }
}

static void make_castling(position_t *pos, color_t us, int king_from, int rook_from)
{
    int king_to = position_castle_king_to(pos, rook_from);
    int rook_to = position_castle_rook_to(pos, rook_from);
    piece_t king = pos->board[king_from], rook = pos->board[rook_from];
    position_remove_piece(pos, king_from);
    position_remove_piece(pos, rook_from);
    position_put_piece(pos, king, king_to);
    position_put_piece(pos, rook, rook_to);
    pos->key ^= zobrist_piece_square[king][king_from] ^ zobrist_piece_square[king][king_to]
                ^ zobrist_piece_square[rook][rook_from] ^ zobrist_piece_square[rook][rook_to];
    drop_castle_rights_of(pos, us);
}

void position_make(position_t *pos, move_t move, position_undo_t *undo)
{
    if (pos->variant != VARIANT_STANDARD) {
        position_variant_hooks.make(pos, move, undo);
        return;
    }
    color_t us = (color_t)pos->side_to_move, them = (color_t)!us;
    int from = move_from(move), to = move_to(move), kind = move_kind(move);
    piece_t piece = pos->board[from];

    undo->key = pos->key;
    memcpy(undo->castle_rook, pos->castle_rook, sizeof undo->castle_rook);
    undo->en_passant = pos->en_passant;
    undo->halfmove_clock = pos->halfmove_clock;
    undo->fullmove_number = pos->fullmove_number;
    undo->captured = NO_PIECE;

    if (pos->halfmove_clock < POSITION_COUNTER_MAX)
        pos->halfmove_clock++;
    if (us == BLACK && pos->fullmove_number < POSITION_COUNTER_MAX)
        pos->fullmove_number++;
    if (pos->en_passant != SQ_NONE) {
        pos->key ^= zobrist_en_passant_file[square_file(pos->en_passant)];
        pos->en_passant = SQ_NONE;
    }

    if (kind == MOVE_CASTLING) {
        make_castling(pos, us, from, to);
    } else {
        int capture_square = kind == MOVE_EN_PASSANT ? to + (us == WHITE ? -8 : 8) : to;
        piece_t captured = pos->board[capture_square];
        if (captured != NO_PIECE) {
            undo->captured = captured;
            pos->key ^= zobrist_piece_square[captured][capture_square];
            position_remove_piece(pos, capture_square);
            pos->halfmove_clock = 0;
        }
        move_piece(pos, from, to);
        pos->key ^= zobrist_piece_square[piece][from] ^ zobrist_piece_square[piece][to];
        if (piece_type(piece) == PAWN) {
            pos->halfmove_clock = 0;
            if (kind == MOVE_PROMOTION) {
                piece_t promoted = piece_make(us, move_promotion(move));
                position_remove_piece(pos, to);
                position_put_piece(pos, promoted, to);
                pos->key ^= zobrist_piece_square[piece][to] ^ zobrist_piece_square[promoted][to];
            }
        } else if (piece_type(piece) == KING) {
            pos->king_square[us] = (square_t)to;
            drop_castle_rights_of(pos, us);
        }
        if (pos->castle_rook[0] != SQ_NONE || pos->castle_rook[1] != SQ_NONE
            || pos->castle_rook[2] != SQ_NONE || pos->castle_rook[3] != SQ_NONE) {
            drop_castle_rights_at(pos, from, to);
        }
    }

    pos->side_to_move = (uint8_t)them;
    pos->key ^= zobrist_black_to_move;

    if (piece_type(piece) == PAWN && (to ^ from) == 16) {
        int ep_square = (from + to) / 2;
        if ((attacks_pawn(us, ep_square) & position_pieces(pos, them, PAWN))
            && position_any_en_passant_legal(pos, ep_square)) {
            pos->en_passant = (square_t)ep_square;
            pos->key ^= zobrist_en_passant_file[square_file(ep_square)];
        }
    }
}

void position_unmake(position_t *pos, move_t move, const position_undo_t *undo)
{
    if (pos->variant != VARIANT_STANDARD) {
        *pos = undo->before;
        return;
    }
    color_t them = (color_t)pos->side_to_move, us = (color_t)!them;
    int from = move_from(move), to = move_to(move), kind = move_kind(move);

    pos->side_to_move = (uint8_t)us;

    if (kind == MOVE_CASTLING) {
        /* Castling rights were dropped on make, so the destinations come from
         * the restored rook square and the king's colour. */
        memcpy(pos->castle_rook, undo->castle_rook, sizeof pos->castle_rook);
        bool king_side = square_file(to) > square_file(from);
        int rank = square_rank(from);
        int king_to = square_make(king_side ? 6 : 2, rank), rook_to = square_make(king_side ? 5 : 3, rank);
        piece_t king = pos->board[king_to], rook = pos->board[rook_to];
        position_remove_piece(pos, king_to);
        position_remove_piece(pos, rook_to);
        position_put_piece(pos, king, from);
        position_put_piece(pos, rook, to);
    } else {
        if (kind == MOVE_PROMOTION) {
            position_remove_piece(pos, to);
            position_put_piece(pos, piece_make(us, PAWN), from);
        } else {
            move_piece(pos, to, from);
            if (pos->board[from] == piece_make(us, KING))
                pos->king_square[us] = (square_t)from;
        }
        if (undo->captured != NO_PIECE)
            position_put_piece(pos, undo->captured, kind == MOVE_EN_PASSANT ? to + (us == WHITE ? -8 : 8) : to);
        memcpy(pos->castle_rook, undo->castle_rook, sizeof pos->castle_rook);
    }
    pos->key = undo->key;
    pos->en_passant = undo->en_passant;
    pos->halfmove_clock = undo->halfmove_clock;
    pos->fullmove_number = undo->fullmove_number;
}

bool position_ok(const position_t *pos)
{
    bitboard_t seen = 0;
    for (int sq = 0; sq < SQ_COUNT; sq++) {
        piece_t p = pos->board[sq];
        if (p == NO_PIECE)
            continue;
        if (piece_type(p) >= PIECE_TYPE_COUNT || piece_color(p) >= COLOR_COUNT)
            return false;
        if (!bb_has(pos->by_type[piece_type(p)], sq) || !bb_has(pos->by_color[piece_color(p)], sq))
            return false;
        seen |= bb_square(sq);
    }
    bitboard_t all_types = 0;
    for (int t = 0; t < PIECE_TYPE_COUNT; t++) {
        if (all_types & pos->by_type[t])
            return false;
        all_types |= pos->by_type[t];
    }
    if (all_types != seen || (pos->by_color[WHITE] | pos->by_color[BLACK]) != seen
        || (pos->by_color[WHITE] & pos->by_color[BLACK]))
        return false;
    for (int c = 0; c < COLOR_COUNT; c++) {
        bitboard_t kings = position_pieces(pos, (color_t)c, KING);
        if (pos->variant != VARIANT_STANDARD) {
            /* A variant's side may have no king (horde, atomic, antichess) or several (antichess). */
            if (pos->king_square[c] != (kings ? bb_lsb(kings) : SQ_NONE))
                return false;
        } else if (kings != bb_square(pos->king_square[c] & 63) || pos->king_square[c] >= SQ_COUNT) {
            return false;
        }
    }
    if (pos->variant == VARIANT_STANDARD
        && (pos->promoted || pos->gates || pos->checks[WHITE] || pos->checks[BLACK]))
        return false;
    return pos->key == position_compute_key(pos);
}
