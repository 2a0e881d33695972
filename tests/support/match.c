/* Engine games judged by chessd's rules (match.h): one loop over plies that
 * asks levels.h for each move, keeps the keys of the earlier positions for
 * repetition, and adjudicates by material. */
#include "match.h"

#include <stdio.h>
#include <string.h>

static const char *const end_names[MATCH_END_COUNT] = {
    [MATCH_END_CHECKMATE] = "checkmate",     [MATCH_END_STALEMATE] = "stalemate",
    [MATCH_END_DRAWN] = "drawn",             [MATCH_END_FIFTY_MOVES] = "fifty_moves",
    [MATCH_END_REPETITION] = "repetition",   [MATCH_END_MATERIAL] = "material",
    [MATCH_END_PLY_CAP] = "ply_cap", [MATCH_END_VARIANT] = "variant_end",
};

const char *match_end_name(match_end_t end)
{
    return (unsigned)end < MATCH_END_COUNT ? end_names[end] : "unknown";
}

int match_opening(const position_t *start, const char *line, move_t out[MATCH_OPENING_MAX])
{
    position_t pos = *start;
    int count = 0;
    const char *cursor = line, *text;
    size_t length;
    while (notation_next_in_list(&cursor, &text, &length)) {
        char message[128];
        if (count == MATCH_OPENING_MAX ||
            notation_parse_move(&pos, text, length, &out[count], message, sizeof message) != LEGALITY_OK)
            return -1;
        position_undo_t undo;
        position_make(&pos, out[count++], &undo);
    }
    return count;
}

int match_material(const position_t *pos, color_t c)
{
    static const int value[PIECE_TYPE_COUNT] = {[PAWN] = 1, [KNIGHT] = 3, [BISHOP] = 3, [ROOK] = 5, [QUEEN] = 9};
    int total = 0;
    for (int t = PAWN; t < KING; t++)
        total += value[t] * __builtin_popcountll(position_pieces(pos, c, (piece_type_t)t));
    return total;
}

typedef struct {
    position_t start, pos;
    move_t moves[MATCH_OPENING_MAX + MATCH_PLIES_MAX];
    uint64_t history[MATCH_OPENING_MAX + MATCH_PLIES_MAX];
    int count;
} game_t;

static void game_push(game_t *g, move_t move)
{
    g->history[g->count] = g->pos.key;
    g->moves[g->count++] = move;
    position_undo_t undo;
    position_make(&g->pos, move, &undo);
}

/* Whether the rules end the game here; *out's score and end set if so. */
static bool rules_end(const game_t *g, match_result_t *out)
{
    status_t status;
    status_evaluate(&g->pos, g->history, (size_t)g->count, &status);
    switch (status.state) {
    case STATUS_CHECKMATE:
        out->white_score = g->pos.side_to_move == WHITE ? 0.0 : 1.0;
        out->end = MATCH_END_CHECKMATE;
        return true;
    case STATUS_STALEMATE:
        out->white_score = 0.5;
        out->end = MATCH_END_STALEMATE;
        return true;
    case STATUS_DRAW:
        out->white_score = 0.5;
        out->end = MATCH_END_DRAWN;
        return true;
    case STATUS_VARIANT_END:
        out->white_score = status.winner == WHITE ? 1.0 : status.winner == BLACK ? 0.0 : 0.5;
        out->end = MATCH_END_VARIANT;
        return true;
    default:
        break;
    }
    if (status.claimable & (STATUS_CLAIM_FIFTY_MOVES | STATUS_CLAIM_THREEFOLD_REPETITION)) {
        out->white_score = 0.5;
        out->end = status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION ? MATCH_END_REPETITION
                                                                        : MATCH_END_FIFTY_MOVES;
        return true;
    }
    return false;
}

/* One move of the side to move, its engine restarted and asked again once. */
static engine_status_t next_move(engine_t *e, const level_t *level, game_t *g, uint64_t *rng,
                                 match_result_t *out, move_t *move, char *err, size_t err_size)
{
    engine_status_t s = level_move(e, &g->start, g->moves, g->count, level, NULL, 0, rng, move, err, err_size);
    if (s == ENGINE_OK || s == ENGINE_EINVALID || s == ENGINE_ENO_MOVES || !e)
        return s;
    out->restarts++;
    s = engine_restart(e, err, err_size);
    if (s == ENGINE_OK)
        s = engine_new_game(e, g->start.chess960, err, err_size);
    if (s == ENGINE_OK)
        s = level_move(e, &g->start, g->moves, g->count, level, NULL, 0, rng, move, err, err_size);
    return s;
}

engine_status_t match_play(engine_t *engines[COLOR_COUNT], const level_t *levels[COLOR_COUNT],
                           const position_t *start, const move_t *opening, int opening_count, uint64_t seed,
                           const match_rules_t *rules, match_result_t *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (!start || !levels[WHITE] || !levels[BLACK] || !rules || rules->max_plies < 1 ||
        rules->max_plies > MATCH_PLIES_MAX || opening_count < 0 || opening_count > MATCH_OPENING_MAX) {
        snprintf(err, err_size, "bad match arguments");
        return ENGINE_EINVALID;
    }
    game_t g;
    g.start = g.pos = *start;
    g.count = 0;
    for (int i = 0; i < opening_count; i++) {
        if (!movegen_is_legal(&g.pos, opening[i])) {
            snprintf(err, err_size, "opening move %d is not legal", i + 1);
            return ENGINE_EINVALID;
        }
        game_push(&g, opening[i]);
    }
    for (int c = WHITE; c <= BLACK; c++) {
        engine_status_t s = engines[c] ? engine_new_game(engines[c], start->chess960, err, err_size) : ENGINE_OK;
        if (s != ENGINE_OK)
            return s;
    }
    uint64_t rng = seed ? seed : 0x9e3779b97f4a7c15ull;
    int ahead_plies = 0, ahead_side = 0;
    int resign_material = start->variant == VARIANT_STANDARD ? rules->resign_material : 0;
    for (out->plies = 0; out->plies < rules->max_plies; out->plies++) {
        if (rules_end(&g, out))
            return ENGINE_OK;
        color_t side = (color_t)g.pos.side_to_move;
        move_t move;
        engine_status_t s = next_move(engines[side], levels[side], &g, &rng, out, &move, err, err_size);
        if (s != ENGINE_OK)
            return s;
        game_push(&g, move);
        int diff = match_material(&g.pos, WHITE) - match_material(&g.pos, BLACK);
        int sign = diff > 0 ? 1 : diff < 0 ? -1 : 0;
        bool far_ahead = resign_material > 0 && diff * sign >= resign_material;
        if (!far_ahead) {
            ahead_plies = ahead_side = 0;
        } else if (sign == ahead_side) {
            ahead_plies++;
        } else {
            ahead_side = sign;
            ahead_plies = 1;
        }
        if (far_ahead && ahead_plies >= rules->resign_plies) {
            out->plies++;
            if (rules_end(&g, out)) /* a mate or a draw on the board comes first */
                return ENGINE_OK;
            out->white_score = sign > 0 ? 1.0 : 0.0;
            out->end = MATCH_END_MATERIAL;
            return ENGINE_OK;
        }
    }
    if (rules_end(&g, out))
        return ENGINE_OK;
    int diff = start->variant == VARIANT_STANDARD ? match_material(&g.pos, WHITE) - match_material(&g.pos, BLACK) : 0;
    out->white_score = diff >= 3 ? 1.0 : diff <= -3 ? 0.0 : 0.5;
    out->end = MATCH_END_PLY_CAP;
    return ENGINE_OK;
}
