/* Seeded random games shared by the Stockfish and chess.js suites: the
 * xorshift64 generator, the kinds of move a suite's preferences ask for, the
 * biased pick and the game loop. Each suite keeps its own seed and table, so
 * its games are the same on every machine and every run. */
#include "random_game.h"

/* xorshift64 (Marsaglia 13/7/17). */
static uint64_t xorshift64_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

int random_game_below(uint64_t *rng, int bound)
{
    return (int)(xorshift64_next(rng) % (uint64_t)bound);
}

static bool move_is_capture(const position_t *pos, move_t move)
{
    return move_kind(move) == MOVE_EN_PASSANT
        || (move_kind(move) != MOVE_CASTLING && pos->board[move_to(move)] != NO_PIECE);
}

/* Whether another piece of the same kind can legally go where move goes, so
 * its SAN needs a disambiguation. */
static bool move_needs_disambiguation(const position_t *pos, const move_list_t *legal, move_t move)
{
    int from = move_from(move);
    if (move_kind(move) == MOVE_CASTLING || piece_type(pos->board[from]) == PAWN)
        return false;
    for (int i = 0; i < legal->count; i++) {
        move_t other = legal->moves[i];
        if (move_from(other) != from && move_to(other) == move_to(move) && move_kind(other) != MOVE_CASTLING
            && pos->board[move_from(other)] == pos->board[from])
            return true;
    }
    return false;
}

/* A pawn's double step that lands beside an enemy pawn: en passant may follow. */
static bool move_offers_en_passant(const position_t *pos, move_t move)
{
    int from = move_from(move), to = move_to(move);
    if (piece_type(pos->board[from]) != PAWN || (from > to ? from - to : to - from) != 16)
        return false;
    piece_t enemy_pawn = piece_make((color_t)(pos->side_to_move ^ 1), PAWN);
    return (square_file(to) > 0 && pos->board[to - 1] == enemy_pawn)
        || (square_file(to) < FILE_COUNT - 1 && pos->board[to + 1] == enemy_pawn);
}

/* 0: no check, 1: check, 2: checkmate, once move is played. */
static int move_check_level(const position_t *pos, move_t move)
{
    position_t after = *pos;
    position_undo_t undo;
    position_make(&after, move, &undo);
    if (!position_in_check(&after))
        return 0;
    return movegen_count(&after) == 0 ? 2 : 1;
}

bool random_game_move_is(const position_t *pos, const move_list_t *legal, move_t move, random_game_pick_t kind)
{
    switch (kind) {
    case RANDOM_GAME_PICK_MATE: return move_check_level(pos, move) == 2;
    case RANDOM_GAME_PICK_PROMOTION: return move_kind(move) == MOVE_PROMOTION;
    case RANDOM_GAME_PICK_EN_PASSANT: return move_kind(move) == MOVE_EN_PASSANT;
    case RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN: return move_offers_en_passant(pos, move);
    case RANDOM_GAME_PICK_DISAMBIGUATED: return move_needs_disambiguation(pos, legal, move);
    case RANDOM_GAME_PICK_CHECK: return move_check_level(pos, move) > 0;
    case RANDOM_GAME_PICK_CASTLING: return move_kind(move) == MOVE_CASTLING;
    case RANDOM_GAME_PICK_CAPTURE: return move_is_capture(pos, move);
    case RANDOM_GAME_PICK_PAWN: return piece_type(pos->board[move_from(move)]) == PAWN;
    default: return true;
    }
}

/* A random move of the given kind, or MOVE_NONE when there is none. */
static move_t pick_of_kind(const position_t *pos, const move_list_t *legal, random_game_pick_t kind, uint64_t *rng)
{
    move_t candidates[MOVE_LIST_MAX];
    int count = 0;
    for (int i = 0; i < legal->count; i++) {
        if (random_game_move_is(pos, legal, legal->moves[i], kind))
            candidates[count++] = legal->moves[i];
    }
    return count ? candidates[random_game_below(rng, count)] : MOVE_NONE;
}

move_t random_game_pick(const position_t *pos, const move_list_t *legal, const random_game_style_t *style,
                        uint64_t *rng)
{
    for (size_t i = 0; i < style->preference_count; i++) {
        if (random_game_below(rng, 100) >= style->preferences[i].percent)
            continue;
        move_t move = pick_of_kind(pos, legal, style->preferences[i].kind, rng);
        if (move != MOVE_NONE)
            return move;
    }
    return legal->moves[random_game_below(rng, legal->count)];
}

void random_game_play(position_t start, const random_game_style_t *style, uint64_t *rng, random_game_visit_t visit,
                      void *context)
{
    position_t pos = start;
    for (int ply = 0;; ply++) {
        move_list_t legal;
        movegen_legal(&pos, &legal);
        if (!visit(&pos, &legal, context) || legal.count == 0 || ply == style->ply_max)
            return;
        position_undo_t undo;
        position_make(&pos, random_game_pick(&pos, &legal, style, rng), &undo);
    }
}
