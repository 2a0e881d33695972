/* The game state machine of game.h. Each operation checks everything first
 * and changes g only when it succeeds. A move costs the same at any length:
 * it updates the position, the bounded repetition history, the status and
 * the clock; only undo, takeback and replay walk the move list. The clock
 * (game_clock.c) is charged by settling it; undo and takeback settle it, then
 * take back what the moves they remove earned: time spent stays spent. */
#include "game.h"

#include <string.h>

#include "base/decimal.h"
#include "game_clock.h"
#include "movegen.h"
#include "notation.h"
#include "variant.h"

static const char *const state_names[GAME_STATE_COUNT] = { "active",  "checkmate", "stalemate", "draw",
                                                            "resigned", "timeout",   "aborted",   "variant_end" };
static const char *const result_names[GAME_RESULT_COUNT] = { "*", "1-0", "0-1", "1/2-1/2" };
static const char *const termination_names[GAME_TERMINATION_COUNT] = {
    "none", "checkmate", "stalemate", "insufficient_material", "fivefold_repetition", "seventyfive_moves",
    "threefold_repetition", "fifty_moves", "agreement", "resignation", "time_forfeit", "aborted",
    "king_exploded", "no_pieces", "stalemate_win", "king_of_the_hill", "three_checks", "horde_captured",
    "race_finished", "idle_end", "draw_odds", "abandonment",
};
static const char *const offer_names[GAME_OFFER_COUNT] = { "none", "white", "black" };
static const char *const status_names[GAME_STATUS_COUNT] = {
    "ok", "not_your_turn", "game_over", "illegal_move", "game_too_long", "nothing_to_undo", "no_draw_offer",
    "draw_already_offered", "draw_not_claimable", "bad_record", "takeback_not_allowed", "takeback_already_offered",
    "no_takeback_offer", "abort_too_late", "abort_not_allowed", "draw_too_early", "give_time_not_allowed",
    "give_time_too_much", "no_clock", "clock_running", "claim_not_allowed", "opponent_not_gone",
};
static const char *const takeback_names[GAME_TAKEBACK_COUNT] = { "agreement", "free", "none" };

static const char *name_of(const char *const *names, int count, int value)
{
    return value >= 0 && value < count ? names[value] : "unknown";
}

static int from_name(const char *const *names, int count, const char *name, size_t length)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == length && !memcmp(names[i], name, length))
            return i;
    return -1;
}

const char *game_state_name(game_state_t state) { return name_of(state_names, GAME_STATE_COUNT, (int)state); }
const char *game_result_name(game_result_t result) { return name_of(result_names, GAME_RESULT_COUNT, (int)result); }
const char *game_termination_name(game_termination_t termination)
{
    return name_of(termination_names, GAME_TERMINATION_COUNT, (int)termination);
}
const char *game_offer_name(game_offer_t offer) { return name_of(offer_names, GAME_OFFER_COUNT, (int)offer); }
const char *game_status_name(game_status_t status) { return name_of(status_names, GAME_STATUS_COUNT, (int)status); }
const char *game_takeback_name(game_takeback_t takeback)
{
    return name_of(takeback_names, GAME_TAKEBACK_COUNT, (int)takeback);
}
int game_takeback_from_name(const char *name, size_t length)
{
    return from_name(takeback_names, GAME_TAKEBACK_COUNT, name, length);
}

int game_state_from_name(const char *name, size_t length)
{
    return from_name(state_names, GAME_STATE_COUNT, name, length);
}
int game_result_from_name(const char *name, size_t length)
{
    return from_name(result_names, GAME_RESULT_COUNT, name, length);
}
int game_termination_from_name(const char *name, size_t length)
{
    return from_name(termination_names, GAME_TERMINATION_COUNT, name, length);
}
int game_offer_from_name(const char *name, size_t length)
{
    return from_name(offer_names, GAME_OFFER_COUNT, name, length);
}

bool game_is_over(const game_t *g) { return g->state != GAME_ACTIVE; }

static game_offer_t offer_by(color_t who) { return who == WHITE ? GAME_OFFER_WHITE : GAME_OFFER_BLACK; }
static game_result_t win_for(color_t who) { return who == WHITE ? GAME_WHITE_WINS : GAME_BLACK_WINS; }

/* Ends g; a draw in a game with draw odds is a win for the side that has them. */
static void end_game(game_t *g, game_state_t state, game_result_t result, game_termination_t termination)
{
    if (result == GAME_DRAWN && g->rules.draw_odds) {
        result = win_for((color_t)(g->rules.draw_odds - 1));
        termination = GAME_TERMINATION_DRAW_ODDS;
    }
    g->state = state;
    g->result = result;
    g->termination = termination;
    g->draw_offer = GAME_OFFER_NONE;
    g->takeback_offer = GAME_OFFER_NONE;
}

bool game_set_rules(game_t *g, int64_t initial_ms, int64_t increment_ms, game_takeback_t takeback)
{
    if ((unsigned)takeback >= GAME_TAKEBACK_COUNT)
        return false;
    if (initial_ms == 0 && increment_ms == 0) {
        memset(&g->clock, 0, sizeof g->clock);
    } else {
        game_control_t c = { .periods = { { 0, initial_ms } }, .period_count = 1, .increment_ms = increment_ms };
        if (!game_set_controls(g, &c, &c))
            return false;
    }
    g->takeback = takeback;
    return true;
}

bool game_flag(game_t *g, int64_t now_ms)
{
    clock_due_t due = clock_due(g, now_ms);
    if (due == CLOCK_DUE_NONE)
        return false;
    if (due == CLOCK_DUE_ABORT) {
        end_game(g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
        return true;
    }
    color_t loser = g->pos.side_to_move, other = (color_t)!loser;
    if (game_is_timed(g))
        g->clock.remaining_ms[loser] = 0;
    g->clock.turn_started_ms = now_ms;
    /* FIDE 6.9: a side that cannot mate does not win on time. */
    end_game(g, GAME_TIMEOUT, status_insufficient_material_for(&g->pos, other) ? GAME_DRAWN : win_for(other),
             due == CLOCK_DUE_IDLE ? GAME_TERMINATION_IDLE_END : GAME_TERMINATION_TIME_FORFEIT);
    return true;
}

static game_termination_t termination_for_draw(status_draw_reason_t reason)
{
    switch (reason) {
    case STATUS_DRAW_INSUFFICIENT_MATERIAL: return GAME_TERMINATION_INSUFFICIENT_MATERIAL;
    case STATUS_DRAW_FIVEFOLD_REPETITION: return GAME_TERMINATION_FIVEFOLD_REPETITION;
    case STATUS_DRAW_SEVENTYFIVE_MOVES: return GAME_TERMINATION_SEVENTYFIVE_MOVES;
    default: return GAME_TERMINATION_NONE;
    }
}

/* A variant's own end as a game's termination and result. */
static game_termination_t termination_for_end(int end)
{
    return (game_termination_t)(GAME_TERMINATION_ABORTED + end);
}

static game_result_t result_for_end(const status_t *st)
{
    return st->winner == COLOR_COUNT ? GAME_DRAWN : win_for((color_t)st->winner);
}

/* Evaluates the position and ends the game when it ended by itself. */
static void evaluate(game_t *g)
{
    status_evaluate(&g->pos, g->history, (size_t)g->history_count, &g->status);
    switch (g->status.state) {
    case STATUS_CHECKMATE:
        end_game(g, GAME_CHECKMATE, win_for((color_t)!g->pos.side_to_move), GAME_TERMINATION_CHECKMATE);
        break;
    case STATUS_STALEMATE:
        end_game(g, GAME_STALEMATE, GAME_DRAWN, GAME_TERMINATION_STALEMATE);
        break;
    case STATUS_DRAW:
        end_game(g, GAME_DRAW, GAME_DRAWN, termination_for_draw(g->status.draw_reason));
        break;
    case STATUS_VARIANT_END:
        end_game(g, GAME_VARIANT_END, result_for_end(&g->status), termination_for_end(g->status.variant_end));
        break;
    default:
        break;
    }
}

/* Follows the opening to g's position (opening_follow). */
static void follow_opening(game_t *g)
{
    const opening_t *named = opening_at(&g->pos);
    if (named)
        g->opening_key = named->key;
}

const opening_t *game_opening(const game_t *g) { return g->opening_key ? opening_find(g->opening_key) : NULL; }

void game_restore_opening(game_t *g, uint64_t key)
{
    const opening_t *named = key ? opening_find(key) : NULL;
    g->opening_key = named ? named->key : 0;
}

void game_start(game_t *g, const position_t *initial)
{
    memset(g, 0, sizeof *g);
    g->initial = *initial;
    g->pos = *initial;
    follow_opening(g);
    evaluate(g);
}

/* Plays a legal move: the history keeps the keys since the last irreversible
 * move (an active game never needs more than GAME_HISTORY_MAX of them). The
 * slots past history_count stay zero, as game_start() and game_restore() leave
 * them, so a game_t is the same value however it was reached. */
static void play(game_t *g, move_t move)
{
    position_undo_t undo;
    uint64_t before = g->pos.key;
    position_make(&g->pos, move, &undo);
    if (g->pos.halfmove_clock == 0) {
        memset(g->history, 0, sizeof g->history[0] * (size_t)g->history_count);
        g->history_count = 0;
    } else {
        if (g->history_count == GAME_HISTORY_MAX) {
            memmove(g->history, g->history + 1, sizeof g->history[0] * (GAME_HISTORY_MAX - 1));
            g->history_count--;
        }
        g->history[g->history_count++] = before;
    }
    g->ply_count++;
    follow_opening(g);
}

game_status_t game_move(game_t *g, color_t who, const char *text, size_t length, int max_plies, int64_t now_ms,
                        game_played_t *out)
{
    memset(out, 0, sizeof *out);
    if (game_is_over(g))
        return GAME_EOVER;
    if (who != g->pos.side_to_move)
        return GAME_ENOT_YOUR_TURN;
    out->reason = notation_parse_move(&g->pos, text, length, &out->move, out->message, sizeof out->message);
    if (out->reason != LEGALITY_OK)
        return GAME_EILLEGAL_MOVE;
    if (max_plies > GAME_MAX_PLIES)
        max_plies = GAME_MAX_PLIES;
    if (g->ply_count >= max_plies)
        return GAME_ETOO_LONG;
    uci_format(&g->pos, out->move, out->uci);
    san_format(&g->pos, out->move, out->san);
    /* An offer lapses when the player it was made to moves instead of
     * answering; a takeback offer by the mover is void once the moves it
     * would take back are no longer the last ones. */
    if (g->draw_offer == offer_by((color_t)!who))
        g->draw_offer = GAME_OFFER_NONE;
    g->takeback_offer = GAME_OFFER_NONE;
    out->clock_ms = clock_charge_move(g, now_ms);
    out->clocked = out->clock_ms >= 0;
    play(g, out->move);
    evaluate(g);
    clock_restart(g, now_ms);
    return GAME_OK;
}

size_t game_line_keep(const char *line, size_t length, int plies)
{
    size_t keep = length;
    for (int i = 0; i < plies; i++) {
        while (keep > 0 && line[keep - 1] != ' ')
            keep--;
        if (keep > 0)
            keep--;
    }
    return keep;
}

size_t game_line_entry(const game_played_t *played, char *out)
{
    size_t uci = strlen(played->uci), san = strlen(played->san), length = uci + 1 + san;
    memcpy(out, played->uci, uci);
    out[uci] = ':';
    memcpy(out + uci + 1, played->san, san + 1);
    if (played->clocked) {
        out[length++] = ':';
        length += decimal_write((uint64_t)played->clock_ms, out + length);
        out[length] = '\0';
    }
    return length;
}

/* The next entry of a move list at *p (before end): its UCI part, and its
 * SAN part (NULL when the entry has none). False at the end; *bad set when
 * the text is not move-list text. */
static bool next_entry(const char **p, const char *end, const char **uci, size_t *uci_length, const char **san,
                       size_t *san_length, bool *bad)
{
    if (*p >= end)
        return false;
    const char *entry = *p;
    const char *stop = memchr(entry, ' ', (size_t)(end - entry));
    if (!stop)
        stop = end;
    const char *colon = memchr(entry, ':', (size_t)(stop - entry));
    const char *clock = colon ? memchr(colon + 1, ':', (size_t)(stop - colon - 1)) : NULL;
    *uci = entry;
    *uci_length = (size_t)((colon ? colon : stop) - entry);
    *san = colon ? colon + 1 : NULL;
    *san_length = colon ? (size_t)((clock ? clock : stop) - colon - 1) : 0;
    /* One space between entries, none at either end; a clock is digits. */
    bool clock_ok = !clock || clock + 1 < stop;
    for (const char *d = clock ? clock + 1 : stop; d < stop; d++)
        clock_ok = clock_ok && *d >= '0' && *d <= '9';
    if (*uci_length == 0 || (stop < end && stop + 1 == end) || !clock_ok) {
        *bad = true;
        return false;
    }
    *p = stop < end ? stop + 1 : end;
    return true;
}

/* Whether g's ending is one a rule could have drawn: the ending a draw
 * with odds keeps (its state says which kind of draw it was). */
static bool drawn_by_rule(const game_t *g)
{
    const status_t *st = &g->status;
    switch (g->state) {
    case GAME_STALEMATE: return st->state == STATUS_STALEMATE;
    case GAME_DRAW: return st->state == STATUS_DRAW || st->state == STATUS_ACTIVE;
    case GAME_TIMEOUT: return st->state == STATUS_ACTIVE;
    case GAME_VARIANT_END: return st->state == STATUS_VARIANT_END && st->winner == COLOR_COUNT;
    default: return false;
    }
}

/* Whether the ending, result, offer and the position's own status belong together. */
static bool consistent(const game_t *g)
{
    const status_t *st = &g->status;
    if ((unsigned)g->state >= GAME_STATE_COUNT || (unsigned)g->result >= GAME_RESULT_COUNT
        || (unsigned)g->termination >= GAME_TERMINATION_COUNT || (unsigned)g->draw_offer >= GAME_OFFER_COUNT)
        return false;
    if (g->state != GAME_ACTIVE && (g->draw_offer != GAME_OFFER_NONE || g->takeback_offer != GAME_OFFER_NONE))
        return false;
    if (g->termination == GAME_TERMINATION_DRAW_ODDS)
        return (g->result == GAME_WHITE_WINS || g->result == GAME_BLACK_WINS) && drawn_by_rule(g);
    switch (g->state) {
    case GAME_ACTIVE:
        return st->state == STATUS_ACTIVE && g->result == GAME_RESULT_NONE && g->termination == GAME_TERMINATION_NONE;
    case GAME_CHECKMATE:
        return st->state == STATUS_CHECKMATE && g->termination == GAME_TERMINATION_CHECKMATE
               && g->result == win_for((color_t)!g->pos.side_to_move);
    case GAME_STALEMATE:
        return st->state == STATUS_STALEMATE && g->termination == GAME_TERMINATION_STALEMATE && g->result == GAME_DRAWN;
    case GAME_DRAW:
        if (g->result != GAME_DRAWN)
            return false;
        if (st->state == STATUS_DRAW)
            return g->termination == termination_for_draw(st->draw_reason);
        return st->state == STATUS_ACTIVE
               && (g->termination == GAME_TERMINATION_AGREEMENT
                   || (g->termination == GAME_TERMINATION_THREEFOLD_REPETITION
                       && (st->claimable & STATUS_CLAIM_THREEFOLD_REPETITION))
                   || (g->termination == GAME_TERMINATION_FIFTY_MOVES && (st->claimable & STATUS_CLAIM_FIFTY_MOVES)));
    case GAME_RESIGNED:
        return st->state == STATUS_ACTIVE && g->termination == GAME_TERMINATION_RESIGNATION
               && (g->result == GAME_WHITE_WINS || g->result == GAME_BLACK_WINS);
    case GAME_TIMEOUT: /* the side to move lost on time or left (or drew: the other cannot mate, or claimed a draw) */
        return st->state == STATUS_ACTIVE
               && (g->termination == GAME_TERMINATION_TIME_FORFEIT || g->termination == GAME_TERMINATION_IDLE_END
                   || g->termination == GAME_TERMINATION_ABANDONMENT)
               && (g->result == GAME_DRAWN || g->result == win_for((color_t)!g->pos.side_to_move));
    case GAME_ABORTED:
        return st->state == STATUS_ACTIVE && g->termination == GAME_TERMINATION_ABORTED
               && g->result == GAME_RESULT_NONE && g->ply_count < 2;
    case GAME_VARIANT_END:
        return st->state == STATUS_VARIANT_END && g->termination == termination_for_end(st->variant_end)
               && g->result == result_for_end(st);
    default:
        return false;
    }
}

/* Sets the stored ending on a game whose moves are in place; false when it
 * does not fit the position. */
static bool set_ending(game_t *g, game_state_t state, game_result_t result, game_termination_t termination,
                       game_offer_t offer)
{
    g->state = state;
    g->result = result;
    g->termination = termination;
    g->draw_offer = offer;
    return consistent(g);
}

game_status_t game_replay(game_t *g, const position_t *initial, const char *line, size_t length, game_state_t state,
                          game_result_t result, game_termination_t termination, game_offer_t offer)
{
    game_t t;
    game_start(&t, initial);
    const char *p = line, *end = line + length, *uci, *san;
    size_t uci_length, san_length;
    bool bad = false;
    while (next_entry(&p, end, &uci, &uci_length, &san, &san_length, &bad)) {
        uci_text_t text;
        if (game_is_over(&t) || t.ply_count >= GAME_MAX_PLIES || !uci_read(uci, uci_length, &text))
            return GAME_EBAD_RECORD;
        move_t move = uci_to_move(&t.pos, &text);
        if (!movegen_is_legal(&t.pos, move))
            return GAME_EBAD_RECORD;
        /* An entry's SAN, when it has one, is its move's. */
        char expected[SAN_BUFFER_SIZE];
        if (san && (san_length != strlen(san_format(&t.pos, move, expected)) || memcmp(san, expected, san_length)))
            return GAME_EBAD_RECORD;
        play(&t, move);
        evaluate(&t);
    }
    if (bad || !set_ending(&t, state, result, termination, offer))
        return GAME_EBAD_RECORD;
    *g = t;
    return GAME_OK;
}

int game_line_moves(const position_t *initial, const char *line, size_t length, move_t *moves, uint64_t *keys, int max)
{
    position_t pos = *initial;
    const char *p = line, *end = line + length, *uci, *san;
    size_t uci_length, san_length;
    bool bad = false;
    int count = 0;
    while (next_entry(&p, end, &uci, &uci_length, &san, &san_length, &bad)) {
        uci_text_t text;
        if (count >= max || !uci_read(uci, uci_length, &text))
            return -1;
        move_t move = uci_to_move(&pos, &text);
        if (!movegen_is_legal(&pos, move))
            return -1;
        if (keys)
            keys[count] = pos.key;
        moves[count++] = move;
        position_undo_t undo;
        position_make(&pos, move, &undo);
    }
    return bad ? -1 : count;
}

game_status_t game_restore(game_t *g, const position_t *initial, const position_t *current, const uint64_t *history,
                           int history_count, int ply_count, game_state_t state, game_result_t result,
                           game_termination_t termination, game_offer_t offer)
{
    if (history_count < 0 || history_count > GAME_HISTORY_MAX || history_count > ply_count
        || history_count > current->halfmove_clock || ply_count < 0 || ply_count > GAME_MAX_PLIES
        || initial->chess960 != current->chess960 || initial->variant != current->variant
        || (initial->side_to_move ^ (ply_count & 1)) != current->side_to_move)
        return GAME_EBAD_RECORD;
    game_t t;
    memset(&t, 0, sizeof t);
    t.initial = *initial;
    t.pos = *current;
    if (history_count > 0)
        memcpy(t.history, history, sizeof history[0] * (size_t)history_count);
    t.history_count = history_count;
    t.ply_count = ply_count;
    status_evaluate(&t.pos, t.history, (size_t)t.history_count, &t.status);
    if (!set_ending(&t, state, result, termination, offer))
        return GAME_EBAD_RECORD;
    *g = t;
    return GAME_OK;
}

/* Goes back `plies` plies: line (the whole move list) is checked to be
 * this game's, cut, and replayed. The clock is charged up to now_ms, the
 * increments of the moves taken back are taken back too, and the side to
 * move then starts its turn; its flag falls at once when that left it no
 * time. Offers are dropped. */
static game_status_t go_back(game_t *g, int plies, const char *line, size_t length, int64_t now_ms)
{
    game_t t;
    if (game_replay(&t, &g->initial, line, length, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                    GAME_OFFER_NONE) != GAME_OK
        || t.ply_count != g->ply_count || t.pos.key != g->pos.key)
        return GAME_EBAD_RECORD;
    size_t keep = game_line_keep(line, length, plies);
    if (game_replay(&t, &g->initial, line, keep, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                    GAME_OFFER_NONE) != GAME_OK
        || t.ply_count != g->ply_count - plies)
        return GAME_EBAD_RECORD;
    game_t settled = *g;
    clock_settle(&settled, now_ms);
    t.takeback = g->takeback;
    t.rules = g->rules;
    t.clock = settled.clock;
    clock_take_back(&t.clock, g, t.ply_count);
    clock_restart(&t, now_ms);
    (void)game_flag(&t, now_ms); /* ends the game only when the side to move has no time left */
    *g = t;
    return GAME_OK;
}

game_status_t game_undo(game_t *g, color_t who, const char *line, size_t length, int64_t now_ms)
{
    if (game_is_over(g))
        return GAME_EOVER;
    if (g->takeback != GAME_TAKEBACK_FREE)
        return GAME_ETAKEBACK_NOT_ALLOWED;
    if (g->ply_count == 0 || who == g->pos.side_to_move)
        return GAME_ENOTHING_TO_UNDO;
    return go_back(g, 1, line, length, now_ms);
}

int game_takeback_plies(const game_t *g, color_t who)
{
    int plies = who == g->pos.side_to_move ? 2 : 1;
    return g->ply_count >= plies ? plies : 0;
}

game_status_t game_takeback(game_t *g, color_t who, game_takeback_action_t action, const char *line, size_t length,
                            int64_t now_ms, int *plies_back)
{
    *plies_back = 0;
    if (game_is_over(g))
        return GAME_EOVER;
    if (g->takeback == GAME_TAKEBACK_NONE)
        return GAME_ETAKEBACK_NOT_ALLOWED;
    game_offer_t mine = offer_by(who), theirs = offer_by((color_t)!who);
    if (action == GAME_TAKEBACK_OFFER && g->takeback_offer == mine)
        return GAME_ETAKEBACK_ALREADY_OFFERED;
    if (action == GAME_TAKEBACK_OFFER && g->takeback_offer != theirs) {
        if (!game_takeback_plies(g, who))
            return GAME_ENOTHING_TO_UNDO;
        g->takeback_offer = mine;
        return GAME_OK;
    }
    /* Accept, decline, or an offer crossing the other player's (an acceptance). */
    if (g->takeback_offer != theirs || (unsigned)action >= GAME_TAKEBACK_ACTION_COUNT)
        return GAME_ENO_TAKEBACK_OFFER;
    if (action == GAME_TAKEBACK_DECLINE) {
        g->takeback_offer = GAME_OFFER_NONE;
        return GAME_OK;
    }
    int plies = game_takeback_plies(g, (color_t)!who);
    if (!plies)
        return GAME_ENOTHING_TO_UNDO;
    game_status_t status = go_back(g, plies, line, length, now_ms);
    if (status == GAME_OK)
        *plies_back = plies;
    return status;
}

game_status_t game_abort(game_t *g, color_t who, int64_t now_ms)
{
    (void)who; /* either player may */
    if (game_is_over(g))
        return GAME_EOVER;
    if (g->rules.flags & GAME_RULE_NO_ABORT)
        return GAME_EABORT_NOT_ALLOWED;
    if (g->ply_count >= 2)
        return GAME_EABORT_TOO_LATE;
    clock_settle(g, now_ms);
    end_game(g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
    return GAME_OK;
}

game_status_t game_cancel(game_t *g, int64_t now_ms)
{
    if (game_is_over(g))
        return GAME_EOVER;
    if (g->ply_count > 0)
        return GAME_EABORT_TOO_LATE;
    if (g->clock.start_at_ms && g->clock.start_at_ms <= now_ms)
        return GAME_ECLOCK_RUNNING;
    clock_settle(g, now_ms);
    end_game(g, GAME_ABORTED, GAME_RESULT_NONE, GAME_TERMINATION_ABORTED);
    return GAME_OK;
}

game_status_t game_resign(game_t *g, color_t who, int64_t now_ms)
{
    if (game_is_over(g))
        return GAME_EOVER;
    clock_settle(g, now_ms);
    end_game(g, GAME_RESIGNED, win_for((color_t)!who), GAME_TERMINATION_RESIGNATION);
    return GAME_OK;
}

game_status_t game_claim_at(const game_t *g, color_t who, game_claim_t claim, int64_t gone_since_ms,
                            int64_t base_ms, int64_t *at_ms)
{
    *at_ms = 0;
    if (game_is_over(g))
        return GAME_EOVER;
    int64_t wait = game_claim_wait_ms(g, base_ms);
    if (!wait || (claim == GAME_CLAIM_VICTORY && (g->rules.flags & GAME_RULE_NO_CLAIM_WIN)) || g->ply_count < 2)
        return GAME_ECLAIM_NOT_ALLOWED;
    if (who == g->pos.side_to_move || gone_since_ms < 0)
        return GAME_EOPPONENT_NOT_GONE;
    /* Time gone while the opponent thought cost no one anything. */
    int64_t since = gone_since_ms > g->clock.turn_started_ms ? gone_since_ms : g->clock.turn_started_ms;
    *at_ms = since + wait;
    return GAME_OK;
}

game_status_t game_claim(game_t *g, color_t who, game_claim_t claim, int64_t gone_since_ms, int64_t base_ms,
                         int64_t now_ms, int64_t *at_ms)
{
    game_status_t status = game_claim_at(g, who, claim, gone_since_ms, base_ms, at_ms);
    if (status != GAME_OK)
        return status;
    if (now_ms < *at_ms)
        return GAME_EOPPONENT_NOT_GONE;
    clock_settle(g, now_ms);
    /* As on time (FIDE 6.9): a side that cannot mate does not win. */
    bool win = claim == GAME_CLAIM_VICTORY && !status_insufficient_material_for(&g->pos, who);
    end_game(g, GAME_TIMEOUT, win ? win_for(who) : GAME_DRAWN, GAME_TERMINATION_ABANDONMENT);
    return GAME_OK;
}

/* Ends the game drawn at now_ms. */
static void end_drawn(game_t *g, game_termination_t termination, int64_t now_ms)
{
    clock_settle(g, now_ms);
    end_game(g, GAME_DRAW, GAME_DRAWN, termination);
}

game_status_t game_draw(game_t *g, color_t who, game_draw_action_t action, int64_t now_ms)
{
    if (game_is_over(g))
        return GAME_EOVER;
    game_offer_t mine = offer_by(who), theirs = offer_by((color_t)!who);
    if ((action == GAME_DRAW_OFFER || action == GAME_DRAW_ACCEPT)
        && g->pos.fullmove_number < g->rules.draw_offers_from_move)
        return GAME_EDRAW_TOO_EARLY;
    switch (action) {
    case GAME_DRAW_OFFER:
        if (g->draw_offer == mine)
            return GAME_EDRAW_ALREADY_OFFERED;
        if (g->draw_offer == theirs) /* offers crossed: that is an agreement */
            end_drawn(g, GAME_TERMINATION_AGREEMENT, now_ms);
        else
            g->draw_offer = mine;
        return GAME_OK;
    case GAME_DRAW_ACCEPT:
    case GAME_DRAW_DECLINE:
        if (g->draw_offer != theirs)
            return GAME_ENO_DRAW_OFFER;
        if (action == GAME_DRAW_ACCEPT)
            end_drawn(g, GAME_TERMINATION_AGREEMENT, now_ms);
        else
            g->draw_offer = GAME_OFFER_NONE;
        return GAME_OK;
    case GAME_DRAW_CLAIM:
        if (who != g->pos.side_to_move)
            return GAME_ENOT_YOUR_TURN;
        if (g->status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION)
            end_drawn(g, GAME_TERMINATION_THREEFOLD_REPETITION, now_ms);
        else if (g->status.claimable & STATUS_CLAIM_FIFTY_MOVES)
            end_drawn(g, GAME_TERMINATION_FIFTY_MOVES, now_ms);
        else
            return GAME_EDRAW_NOT_CLAIMABLE;
        return GAME_OK;
    default:
        return GAME_EDRAW_NOT_CLAIMABLE;
    }
}

game_status_t game_restore_rules(game_t *g, game_takeback_t takeback, game_offer_t takeback_offer,
                                 const game_clock_t *clock, const game_rules_t *rules)
{
    game_t t = *g;
    if ((unsigned)takeback >= GAME_TAKEBACK_COUNT || (unsigned)takeback_offer >= GAME_OFFER_COUNT
        || !clock_fits(&t, clock) || !game_set_game_rules(&t, rules))
        return GAME_EBAD_RECORD;
    t.takeback = takeback;
    t.clock = *clock;
    t.takeback_offer = takeback_offer;
    /* A timeout by draw odds may be a flag's or a claim's: only a forfeit's clock is checked. */
    bool flag_fell = t.state == GAME_TIMEOUT && t.termination == GAME_TERMINATION_TIME_FORFEIT;
    if ((flag_fell && !game_is_timed(&t) && !game_is_correspondence(&t))
        || (flag_fell && game_is_timed(&t) && clock->remaining_ms[t.pos.side_to_move] != 0)
        || (t.termination == GAME_TERMINATION_IDLE_END && (game_is_timed(&t) || game_is_correspondence(&t)))
        || (t.termination == GAME_TERMINATION_DRAW_ODDS
            && t.result != (rules->draw_odds == 1 + WHITE ? GAME_WHITE_WINS : GAME_BLACK_WINS))
        || (t.termination == GAME_TERMINATION_DRAW_ODDS && !rules->draw_odds))
        return GAME_EBAD_RECORD;
    /* An offer stands only in an active game, by a player who has a move to take back, under a policy with offers. */
    if (takeback_offer != GAME_OFFER_NONE
        && (t.state != GAME_ACTIVE || takeback == GAME_TAKEBACK_NONE
            || !game_takeback_plies(&t, takeback_offer == GAME_OFFER_WHITE ? WHITE : BLACK)))
        return GAME_EBAD_RECORD;
    *g = t;
    return GAME_OK;
}

game_status_t game_adopt_rules(game_t *g, const game_t *rules, int64_t now_ms)
{
    game_clock_t clock = rules->clock;
    for (int c = 0; c < COLOR_COUNT; c++) {
        clock.remaining_ms[c] = game_is_timed(rules) ? rules->clock.control[c].periods[0].ms : 0;
        clock.given_ms[c] = 0;
    }
    clock.turn_started_ms = now_ms;
    clock.imported_plies = game_is_timed(rules) ? clock_imported_kept(g->ply_count) : 0;
    return game_restore_rules(g, rules->takeback, GAME_OFFER_NONE, &clock, &rules->rules);
}
