/* Legal move generation. One generator, specialised at compile time for the
 * side to move and for "list" versus "count" mode, so the white and black
 * code and the counting and listing code are written once. Perft's last two
 * plies play each move on a scratch copy's bitboards only, then count.
 * The hot entry points are compiled several times (baseline, popcnt,
 * x86-64-v3) and the loader picks the variant the CPU supports. */
#include "movegen.h"

#include <stddef.h>
#include <string.h>


#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Appends the moves from `from` to every square of `targets`, or counts them. */
static ALWAYS_INLINE int emit(move_t *out, int n, int from, bitboard_t targets)
{
    if (!out)
        return n + bb_count(targets);
    while (targets)
        out[n++] = move_make(from, bb_pop_lsb(&targets), MOVE_NORMAL, PAWN);
    return n;
}

/* Moves of pawns shifted by `delta` squares to reach `targets`. */
static ALWAYS_INLINE int emit_pawns(move_t *out, int n, bitboard_t targets, int delta, bool promotion)
{
    if (!out)
        return n + bb_count(targets) * (promotion ? 4 : 1);
    while (targets) {
        int to = bb_pop_lsb(&targets);
        if (promotion) {
            for (int t = QUEEN; t >= KNIGHT; t--)
                out[n++] = move_make(to - delta, to, MOVE_PROMOTION, (piece_type_t)t);
        } else {
            out[n++] = move_make(to - delta, to, MOVE_NORMAL, PAWN);
        }
    }
    return n;
}

static ALWAYS_INLINE bitboard_t shift(bitboard_t b, int delta)
{
    return delta > 0 ? b << delta : b >> -delta;
}

static ALWAYS_INLINE int gen_pawns(const position_t *pos, move_t *out, int n, color_t us,
                                   bitboard_t pawns, bitboard_t target, bitboard_t empty, bitboard_t theirs)
{
    const int up = us == WHITE ? 8 : -8;
    const int up_west = us == WHITE ? 7 : -9, up_east = us == WHITE ? 9 : -7;
    const bitboard_t last_rank = us == WHITE ? BB_RANK_8 : BB_RANK_1;
    const bitboard_t third_rank = us == WHITE ? bb_rank(2) : bb_rank(5);

    bitboard_t single = shift(pawns, up) & empty;
    bitboard_t twice = shift(single & third_rank, up) & empty & target;
    single &= target;
    bitboard_t west = shift(pawns & ~BB_FILE_A, up_west) & theirs & target;
    bitboard_t east = shift(pawns & ~BB_FILE_H, up_east) & theirs & target;

    n = emit_pawns(out, n, single & ~last_rank, up, false);
    n = emit_pawns(out, n, twice, 2 * up, false);
    n = emit_pawns(out, n, west & ~last_rank, up_west, false);
    n = emit_pawns(out, n, east & ~last_rank, up_east, false);
    if ((single | west | east) & last_rank) {
        n = emit_pawns(out, n, single & last_rank, up, true);
        n = emit_pawns(out, n, west & last_rank, up_west, true);
        n = emit_pawns(out, n, east & last_rank, up_east, true);
    }
    (void)pos;
    return n;
}

/* Every square the pawns, knights and king of colour `by` attack: cheap,
 * with no sliding lookups, so the king's targets are screened by it first. */
static ALWAYS_INLINE bitboard_t step_attacked_squares(const position_t *pos, color_t by)
{
    const bitboard_t *t = pos->by_type;
    const bitboard_t theirs = pos->by_color[by];
    const bitboard_t pawns = t[PAWN] & theirs;
    bitboard_t attacked = by == WHITE ? ((pawns & ~BB_FILE_A) << 7) | ((pawns & ~BB_FILE_H) << 9)
                                      : ((pawns & ~BB_FILE_A) >> 9) | ((pawns & ~BB_FILE_H) >> 7);
    attacked |= attacks_king(pos->king_square[by]);
    for (bitboard_t b = t[KNIGHT] & theirs; b;)
        attacked |= attacks_knight(bb_pop_lsb(&b));
    return attacked;
}

/* Whether a slider of colour `by` attacks sq with the given occupancy; both
 * lookups done, with no branch between them. */
static ALWAYS_INLINE bool slider_attacks(const position_t *pos, int sq, color_t by, bitboard_t occupied)
{
    const bitboard_t *t = pos->by_type;
    const bitboard_t theirs = pos->by_color[by];
    return ((attacks_bishop(sq, occupied) & (t[BISHOP] | t[QUEEN]))
            | (attacks_rook(sq, occupied) & (t[ROOK] | t[QUEEN]))) & theirs;
}

static ALWAYS_INLINE int gen_castling(const position_t *pos, move_t *out, int n, color_t us, int king)
{
    bitboard_t occupied = position_occupied(pos);
    for (int side = 0; side < CASTLE_SIDE_COUNT; side++) {
        int rook = pos->castle_rook[us * 2 + side];
        if (rook == SQ_NONE)
            continue;
        /* The squares between king and rook must empty too: a cheap first test. */
        if (occupied & attacks_between(king, rook))
            continue;
        int king_to, rook_to;
        if (occupied & position_castle_empty(king, rook, side, &king_to, &rook_to))
            continue;
        bitboard_t path = attacks_between(king, king_to) | bb_square(king_to);
        if (path & step_attacked_squares(pos, (color_t)!us))
            continue;
        bitboard_t after = occupied ^ bb_square(king) ^ bb_square(rook);
        bool safe = true;
        while (path && safe)
            safe = !slider_attacks(pos, bb_pop_lsb(&path), (color_t)!us, after);
        if (safe) {
            if (out)
                out[n] = move_make(king, rook, MOVE_CASTLING, PAWN);
            n++;
        }
    }
    return n;
}

/* The sliders of the side that replies to a position's moves, as they
 * attack before the move: a slider whose attacks and square hold none of
 * the squares a move changes attacks the same squares after it, so its
 * count is reused instead of looked up again (count_children). */
typedef struct {
    int count;                                 /* entries: a queen has two */
    int total;                                 /* sum of moves[] */
    bitboard_t changed;                        /* the squares the current move changes */
    bitboard_t reach[2 * SQ_COUNT];            /* attacks, with the slider's own square */
    int moves[2 * SQ_COUNT];                   /* attacked squares not holding its side's pieces */
    uint8_t square[2 * SQ_COUNT];
    bool straight[2 * SQ_COUNT];               /* rook lines, else bishop lines */
} slider_cache_t;

/* The moves of the sliders of `ours` (none pinned, no check) in a child of
 * the position cache was filled from: each slider that the move touched
 * is looked up again, or dropped when it was captured. */
static ALWAYS_INLINE int cached_slider_moves(const slider_cache_t *cache, bitboard_t ours, bitboard_t occupied,
                                             bitboard_t target)
{
    int moves = cache->total;
    for (int i = 0; i < cache->count; i++) {
        if (!(cache->reach[i] & cache->changed))
            continue;
        int sq = cache->square[i];
        moves -= cache->moves[i];
        if (bb_has(ours, sq))
            moves += bb_count((cache->straight[i] ? attacks_rook(sq, occupied) : attacks_bishop(sq, occupied)) & target);
    }
    return moves;
}

/* cache NULL: no reuse. With a cache (count mode only), a position neither
 * in check nor with a pinned piece counts its sliders' moves from it. */
static ALWAYS_INLINE int generate(const position_t *pos, move_t *out, color_t us, const slider_cache_t *cache)
{
    const color_t them = (color_t)!us;
    const bitboard_t *t = pos->by_type;
    const bitboard_t ours = pos->by_color[us], theirs = pos->by_color[them];
    const bitboard_t occupied = ours | theirs;
    const int king = pos->king_square[us];
    int n = 0;

    /* Checks and pins from one look along the king's lines: an enemy slider
     * that sees the king through none of our pieces gives check, through
     * exactly one pins it (the rays pass our pieces and stop at theirs). */
    bitboard_t checkers = ((attacks_knight(king) & t[KNIGHT]) | (attacks_pawn(us, king) & t[PAWN])) & theirs;
    bitboard_t pinned = 0;
    bitboard_t snipers = 0;
    const bitboard_t their_straight = (t[ROOK] | t[QUEEN]) & theirs, their_diagonal = (t[BISHOP] | t[QUEEN]) & theirs;
    if (attacks_rook_empty(king) & their_straight)
        snipers = attacks_rook(king, theirs) & their_straight;
    if (attacks_bishop_empty(king) & their_diagonal)
        snipers |= attacks_bishop(king, theirs) & their_diagonal;
    while (snipers) {
        int sniper = bb_pop_lsb(&snipers);
        bitboard_t blockers = attacks_between(king, sniper) & occupied;
        if (!blockers)
            checkers |= bb_square(sniper);
        else if (!bb_more_than_one(blockers))
            pinned |= blockers;
    }

    /* King moves: each target tested with the king off the board, so it cannot
     * hide behind itself from a slider. */
    bitboard_t king_targets = attacks_king(king) & ~ours;
    if (king_targets)
        king_targets &= ~step_attacked_squares(pos, them);
    bitboard_t without_king = occupied ^ bb_square(king);
    while (king_targets) {
        int to = bb_pop_lsb(&king_targets);
        if (!slider_attacks(pos, to, them, without_king)) {
            if (out)
                out[n] = move_make(king, to, MOVE_NORMAL, PAWN);
            n++;
        }
    }
    if (bb_more_than_one(checkers))
        return n;

    bitboard_t target = ~ours;
    if (checkers)
        target &= attacks_between(king, bb_lsb(checkers)) | checkers;
    else
        n = gen_castling(pos, out, n, us, king);

    bitboard_t pawns = t[PAWN] & ours;
    n = gen_pawns(pos, out, n, us, pawns & ~pinned, target, ~occupied, theirs);
    /* A pinned pawn moves only along its pin line. */
    bitboard_t pinned_pawns = pawns & pinned;
    while (pinned_pawns) {
        int from = bb_pop_lsb(&pinned_pawns);
        n = gen_pawns(pos, out, n, us, bb_square(from), target & attacks_line(king, from), ~occupied, theirs);
    }

    if (pos->en_passant != SQ_NONE) {
        bitboard_t capturers = attacks_pawn(them, pos->en_passant) & pawns;
        while (capturers) {
            int from = bb_pop_lsb(&capturers);
            if (position_en_passant_legal(pos, from, pos->en_passant)) {
                if (out)
                    out[n] = move_make(from, pos->en_passant, MOVE_EN_PASSANT, PAWN);
                n++;
            }
        }
    }

    bitboard_t knights = t[KNIGHT] & ours & ~pinned;
    while (knights) {
        int from = bb_pop_lsb(&knights);
        n = emit(out, n, from, attacks_knight(from) & target);
    }
    /* Sliders, in square order, diagonal moves first; the pin test only
     * when something is pinned. */
    bitboard_t diagonal = (t[BISHOP] | t[QUEEN]) & ours, straight = (t[ROOK] | t[QUEEN]) & ours;
    if (cache && !pinned && !checkers)
        return n + cached_slider_moves(cache, ours, occupied, target);
    if (!pinned) {
        while (diagonal) {
            int from = bb_pop_lsb(&diagonal);
            n = emit(out, n, from, attacks_bishop(from, occupied) & target);
        }
        while (straight) {
            int from = bb_pop_lsb(&straight);
            n = emit(out, n, from, attacks_rook(from, occupied) & target);
        }
        return n;
    }
    while (diagonal) {
        int from = bb_pop_lsb(&diagonal);
        bitboard_t moves = attacks_bishop(from, occupied) & target;
        if (bb_has(pinned, from))
            moves &= attacks_line(king, from);
        n = emit(out, n, from, moves);
    }
    while (straight) {
        int from = bb_pop_lsb(&straight);
        bitboard_t moves = attacks_rook(from, occupied) & target;
        if (bb_has(pinned, from))
            moves &= attacks_line(king, from);
        n = emit(out, n, from, moves);
    }
    return n;
}

/* The part of the position after `move` that generate() reads: bitboards,
 * kings, castling rooks, side to move and a possible en passant square (set
 * on any double step next to an enemy pawn: generate() tests each capture's
 * legality itself). The key, board[] and counters of child stay stale, so
 * child serves only to count its moves. The parent's board[] must be valid. */
static ALWAYS_INLINE void make_for_count(const position_t *pos, position_t *child, move_t move, color_t us,
                                         bitboard_t castle_rooks)
{
    const color_t them = (color_t)!us;
    const int from = move_from(move), to = move_to(move), kind = move_kind(move);
    const piece_type_t type = piece_type(pos->board[from]);
    const bitboard_t from_bb = bb_square(from), to_bb = bb_square(to);

    memcpy(child->by_type, pos->by_type, sizeof child->by_type);
    memcpy(child->by_color, pos->by_color, sizeof child->by_color);
    memcpy(child->castle_rook, pos->castle_rook, sizeof child->castle_rook);
    child->king_square[us] = pos->king_square[us];
    child->side_to_move = (uint8_t)them;
    child->en_passant = SQ_NONE;

    if (kind == MOVE_CASTLING) {
        int king_to, rook_to;
        (void)position_castle_empty(from, to, to > from ? CASTLE_KING_SIDE : CASTLE_QUEEN_SIDE, &king_to, &rook_to);
        /* Set after clearing: in Chess960 a piece may land where either stood. */
        child->by_type[KING] = (child->by_type[KING] & ~from_bb) | bb_square(king_to);
        child->by_type[ROOK] = (child->by_type[ROOK] & ~to_bb) | bb_square(rook_to);
        child->by_color[us] = (child->by_color[us] & ~(from_bb | to_bb)) | bb_square(king_to) | bb_square(rook_to);
        child->king_square[us] = (square_t)king_to;
        child->castle_rook[us * 2] = child->castle_rook[us * 2 + 1] = SQ_NONE;
        return;
    }
    if (kind == MOVE_EN_PASSANT) {
        bitboard_t captured = bb_square(to + (us == WHITE ? -8 : 8));
        child->by_type[PAWN] ^= captured;
        child->by_color[them] ^= captured;
    } else if (pos->by_color[them] & to_bb) {
        child->by_type[piece_type(pos->board[to])] ^= to_bb;
        child->by_color[them] ^= to_bb;
    }
    child->by_type[type] ^= from_bb | to_bb;
    child->by_color[us] ^= from_bb | to_bb;
    if (kind == MOVE_PROMOTION) {
        child->by_type[PAWN] ^= to_bb;
        child->by_type[move_promotion(move)] ^= to_bb;
    }
    if (type == KING) {
        child->king_square[us] = (square_t)to;
        child->castle_rook[us * 2] = child->castle_rook[us * 2 + 1] = SQ_NONE;
    }
    if (castle_rooks & (from_bb | to_bb))
        for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
            if (child->castle_rook[i] == from || child->castle_rook[i] == to)
                child->castle_rook[i] = SQ_NONE;
    if (type == PAWN && (to ^ from) == 16
        && (attacks_pawn(us, (from + to) / 2) & pos->by_type[PAWN] & pos->by_color[them]))
        child->en_passant = (square_t)((from + to) / 2);
}

/* Fills cache with the sliders of colour `side` in pos. */
static ALWAYS_INLINE void fill_slider_cache(const position_t *pos, color_t side, slider_cache_t *cache)
{
    const bitboard_t *t = pos->by_type;
    const bitboard_t own = pos->by_color[side], occupied = position_occupied(pos);
    cache->count = cache->total = 0;
    for (int straight = 0; straight < 2; straight++) {
        for (bitboard_t b = (t[straight ? ROOK : BISHOP] | t[QUEEN]) & own; b;) {
            int sq = bb_pop_lsb(&b), i = cache->count++;
            bitboard_t attacks = straight ? attacks_rook(sq, occupied) : attacks_bishop(sq, occupied);
            cache->square[i] = (uint8_t)sq;
            cache->straight[i] = straight;
            cache->reach[i] = attacks | bb_square(sq);
            cache->moves[i] = bb_count(attacks & ~own);
            cache->total += cache->moves[i];
        }
    }
}

/* Sum over list of the legal-move counts after each move, for side `us`. */
static ALWAYS_INLINE uint64_t count_children(const position_t *pos, const move_list_t *list, color_t us)
{
    position_t child = *pos;
    bitboard_t castle_rooks = 0;
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++)
        if (pos->castle_rook[i] != SQ_NONE)
            castle_rooks |= bb_square(pos->castle_rook[i]);
    slider_cache_t cache;
    fill_slider_cache(pos, (color_t)!us, &cache);
    uint64_t nodes = 0;
    for (int i = 0; i < list->count; i++) {
        move_t move = list->moves[i];
        make_for_count(pos, &child, move, us, castle_rooks);
        /* Castling and en passant change more than two squares: every slider is looked up. */
        cache.changed = move_kind(move) == MOVE_CASTLING || move_kind(move) == MOVE_EN_PASSANT
                            ? ~0ULL
                            : bb_square(move_from(move)) | bb_square(move_to(move));
        nodes += (uint64_t)generate(&child, NULL, (color_t)!us, &cache);
    }
    return nodes;
}

RULES_HOT uint64_t movegen_count_children(const position_t *pos, const move_list_t *list)
{
    return pos->side_to_move == WHITE ? count_children(pos, list, WHITE) : count_children(pos, list, BLACK);
}

RULES_HOT int movegen_legal(const position_t *pos, move_list_t *list)
{
    if (pos->variant != VARIANT_STANDARD)
        return list->count = position_variant_hooks.generate(pos, list->moves);
    list->count = pos->side_to_move == WHITE ? generate(pos, list->moves, WHITE, NULL) : generate(pos, list->moves, BLACK, NULL);
    return list->count;
}

RULES_HOT int movegen_count(const position_t *pos)
{
    if (pos->variant != VARIANT_STANDARD)
        return position_variant_hooks.generate(pos, NULL);
    return pos->side_to_move == WHITE ? generate(pos, NULL, WHITE, NULL) : generate(pos, NULL, BLACK, NULL);
}

RULES_HOT int movegen_standard(const position_t *pos, move_t *out)
{
    return pos->side_to_move == WHITE ? generate(pos, out, WHITE, NULL) : generate(pos, out, BLACK, NULL);
}

int movegen_legal_board(const position_t *pos, move_list_t *list)
{
    if (pos->variant == VARIANT_CRAZYHOUSE) /* it has no end of its own: its board moves are chess's */
        return list->count = movegen_standard(pos, list->moves);
    return movegen_legal(pos, list);
}

bool movegen_is_legal(const position_t *pos, move_t move)
{
    move_list_t list;
    movegen_legal(pos, &list);
    for (int i = 0; i < list.count; i++)
        if (list.moves[i] == move)
            return true;
    return false;
}
