/* The clocks of game.h: time controls (periods, increment, delay, a control
 * per side), correspondence days, the idle end, start times and time given.
 * game.c calls the charging and take-back steps of game_clock.h; time is an
 * input (now_ms), and every check comes before any change. */
#include "game_clock.h"

#include <string.h>

static const char *const delay_mode_names[GAME_DELAY_MODE_COUNT] = { "none", "bronstein", "simple" };
static const char *const rule_names[] = { "no_abort", "no_give_time", "no_claim_win" }; /* bit i: 1 << i */
enum { RULE_COUNT = sizeof rule_names / sizeof rule_names[0] };

const char *game_delay_mode_name(game_delay_mode_t mode)
{
    return (unsigned)mode < GAME_DELAY_MODE_COUNT ? delay_mode_names[mode] : "unknown";
}

int game_delay_mode_from_name(const char *name, size_t length)
{
    for (int i = 0; i < GAME_DELAY_MODE_COUNT; i++)
        if (strlen(delay_mode_names[i]) == length && !memcmp(delay_mode_names[i], name, length))
            return i;
    return -1;
}

const char *game_rule_name(int64_t flag)
{
    for (int i = 0; i < RULE_COUNT; i++)
        if (flag == (INT64_C(1) << i))
            return rule_names[i];
    return "unknown";
}

int64_t game_rule_from_name(const char *name, size_t length)
{
    for (int i = 0; i < RULE_COUNT; i++)
        if (strlen(rule_names[i]) == length && !memcmp(rule_names[i], name, length))
            return INT64_C(1) << i;
    return 0;
}

bool game_is_timed(const game_t *g) { return g->clock.control[WHITE].period_count > 0; }

bool game_is_correspondence(const game_t *g) { return g->clock.move_ms > 0; }

bool game_clock_running(const game_t *g)
{
    return game_is_timed(g) && g->state == GAME_ACTIVE && (g->ply_count >= CLOCK_FREE_PLIES || g->clock.start_at_ms);
}

/* When the side to move's clock counts from: its turn's start, or the
 * start time when that is later. */
static int64_t turn_start(const game_t *g)
{
    return g->clock.start_at_ms > g->clock.turn_started_ms ? g->clock.start_at_ms : g->clock.turn_started_ms;
}

static const game_control_t *control_to_move(const game_t *g) { return &g->clock.control[g->pos.side_to_move]; }

/* What the side to move's clock has lost by now_ms: its turn's time, less
 * a simple delay's wait. */
static int64_t charged(const game_t *g, int64_t now_ms)
{
    int64_t used = now_ms - turn_start(g);
    if (used <= 0)
        return 0;
    const game_control_t *c = control_to_move(g);
    if (c->delay_mode == GAME_DELAY_SIMPLE)
        used = used > c->delay_ms ? used - c->delay_ms : 0;
    return used;
}

int64_t game_clock_remaining(const game_t *g, color_t color, int64_t now_ms)
{
    int64_t left = g->clock.remaining_ms[color];
    if (game_clock_running(g) && color == g->pos.side_to_move)
        left -= charged(g, now_ms);
    return left > 0 ? left : 0;
}

int64_t game_first_move_deadline(const game_t *g)
{
    if (!game_is_timed(g) || g->state != GAME_ACTIVE || g->ply_count >= CLOCK_FREE_PLIES || !g->clock.first_move_ms
        || g->clock.start_at_ms)
        return 0;
    return g->clock.turn_started_ms + g->clock.first_move_ms;
}

int64_t game_flag_deadline(const game_t *g)
{
    if (g->state != GAME_ACTIVE)
        return 0;
    if (game_clock_running(g)) {
        const game_control_t *c = control_to_move(g);
        int64_t wait = c->delay_mode == GAME_DELAY_SIMPLE ? c->delay_ms : 0;
        return turn_start(g) + wait + g->clock.remaining_ms[g->pos.side_to_move];
    }
    if (game_is_timed(g))
        return game_first_move_deadline(g);
    if (game_is_correspondence(g))
        return g->clock.turn_started_ms + g->clock.move_ms;
    if (g->clock.idle_ms > 0 && g->clock.turn_started_ms > 0)
        return g->clock.turn_started_ms + g->clock.idle_ms;
    return 0;
}

int64_t game_claim_wait_ms(const game_t *g, int64_t base_ms)
{
    if (base_ms <= 0 || game_is_correspondence(g))
        return 0;
    if (!game_is_timed(g))
        return 3 * base_ms;
    /* Lichess's estimate of a game's length, its speeds' bounds in ms. */
    const game_control_t *c = control_to_move(g);
    int64_t lasts = c->periods[0].ms + 40 * (c->increment_ms + c->delay_ms);
    return lasts < 480000 ? base_ms : lasts < 1500000 ? 2 * base_ms : 3 * base_ms;
}

clock_due_t clock_due(const game_t *g, int64_t now_ms)
{
    int64_t deadline = game_flag_deadline(g);
    if (!deadline || now_ms < deadline)
        return CLOCK_DUE_NONE;
    if (game_first_move_deadline(g))
        return CLOCK_DUE_ABORT;
    if (game_is_timed(g))
        return CLOCK_DUE_FLAG;
    if (g->ply_count < CLOCK_FREE_PLIES)
        return CLOCK_DUE_ABORT;
    return game_is_correspondence(g) ? CLOCK_DUE_FLAG : CLOCK_DUE_IDLE;
}

bool game_set_first_move(game_t *g, int64_t grace_ms, int64_t now_ms)
{
    if (grace_ms < 0 || grace_ms > GAME_FIRST_MOVE_MAX || (grace_ms && !game_is_timed(g)) || now_ms < 0)
        return false;
    g->clock.first_move_ms = grace_ms;
    g->clock.turn_started_ms = now_ms;
    return true;
}

/* The time the mover of the move at ply index `ply` earns by the period
 * it completes, if any (see game_clock_t). */
static int64_t period_earned(const game_t *g, color_t mover, int ply)
{
    const game_control_t *c = &g->clock.control[mover];
    int64_t moves = (ply + (mover == (color_t)g->initial.side_to_move ? 2 : 1)) / 2, through = 0;
    for (int64_t i = 0; i + 1 < c->period_count && c->periods[i].moves > 0; i++) {
        through += c->periods[i].moves;
        if (moves == through)
            return c->periods[i + 1].ms;
    }
    return 0;
}

int64_t game_clock_earned(const game_t *g, int ply)
{
    if (!game_is_timed(g) || ply < g->clock.imported_plies)
        return 0;
    color_t mover = (color_t)(g->initial.side_to_move ^ (ply & 1));
    int64_t earned = period_earned(g, mover, ply);
    if (ply >= CLOCK_FREE_PLIES)
        earned += g->clock.control[mover].increment_ms;
    return earned;
}

int game_clock_moves_to_go(const game_t *g, color_t side)
{
    if (!game_is_timed(g))
        return 0;
    const game_control_t *c = &g->clock.control[side];
    int ply = g->ply_count + (side != (color_t)g->pos.side_to_move); /* the ply of side's next move */
    int64_t next = (ply + (side == (color_t)g->initial.side_to_move ? 2 : 1)) / 2, through = 0;
    for (int64_t i = 0; i + 1 < c->period_count && c->periods[i].moves > 0; i++) {
        through += c->periods[i].moves;
        if (next <= through)
            return (int)(through - next + 1);
    }
    return 0;
}

int64_t clock_imported_kept(int64_t plies) { return plies > CLOCK_FREE_PLIES ? plies : 0; }

void clock_settle(game_t *g, int64_t now_ms)
{
    if (!game_clock_running(g))
        return;
    color_t side = g->pos.side_to_move;
    g->clock.remaining_ms[side] = game_clock_remaining(g, side, now_ms);
    if (now_ms > g->clock.turn_started_ms)
        g->clock.turn_started_ms = now_ms;
}

void clock_restart(game_t *g, int64_t now_ms) { g->clock.turn_started_ms = now_ms; }

int64_t clock_charge_move(game_t *g, int64_t now_ms)
{
    if (!game_is_timed(g))
        return -1;
    color_t mover = g->pos.side_to_move;
    const game_control_t *c = &g->clock.control[mover];
    bool running = game_clock_running(g);
    int64_t took = running && now_ms > turn_start(g) ? now_ms - turn_start(g) : 0;
    clock_settle(g, now_ms);
    int64_t *left = &g->clock.remaining_ms[mover];
    *left += game_clock_earned(g, g->ply_count);
    if (running && c->delay_mode == GAME_DELAY_BRONSTEIN)
        *left += took < c->delay_ms ? took : c->delay_ms;
    return *left;
}

void clock_take_back(game_clock_t *clock, const game_t *g, int from)
{
    for (int ply = from; ply < g->ply_count; ply++) {
        color_t mover = (color_t)(g->initial.side_to_move ^ (ply & 1));
        int64_t earned = game_clock_earned(g, ply);
        int64_t *left = &clock->remaining_ms[mover];
        *left = *left > earned ? *left - earned : 0;
    }
    if (clock->imported_plies > from)
        clock->imported_plies = clock_imported_kept(from);
}

bool game_control_ok(const game_control_t *c)
{
    if (c->period_count < 1 || c->period_count > GAME_PERIODS_MAX || c->periods[0].ms < GAME_CLOCK_INITIAL_MIN
        || c->periods[0].ms > GAME_CLOCK_INITIAL_MAX || c->increment_ms < 0 || c->increment_ms > GAME_CLOCK_INCREMENT_MAX
        || c->delay_ms < 0 || c->delay_ms > GAME_CLOCK_DELAY_MAX || c->delay_mode < 0
        || c->delay_mode >= GAME_DELAY_MODE_COUNT || (c->delay_ms > 0) != (c->delay_mode != GAME_DELAY_NONE))
        return false;
    for (int64_t i = 0; i < GAME_PERIODS_MAX; i++) {
        const game_period_t *p = &c->periods[i];
        bool last = i + 1 == c->period_count;
        if (i >= c->period_count ? p->moves || p->ms
                                 : p->ms < 0 || p->ms > GAME_CLOCK_INITIAL_MAX
                                       || (last ? p->moves != 0 : p->moves < 1 || p->moves > GAME_CLOCK_PERIOD_MOVES_MAX))
            return false;
    }
    return true;
}

static bool control_is_zero(const game_control_t *c)
{
    static const game_control_t zero;
    return !memcmp(c, &zero, sizeof zero);
}

bool game_set_controls(game_t *g, const game_control_t *white, const game_control_t *black)
{
    if (!game_control_ok(white) || !game_control_ok(black))
        return false;
    memset(&g->clock, 0, sizeof g->clock);
    g->clock.control[WHITE] = *white;
    g->clock.control[BLACK] = *black;
    g->clock.remaining_ms[WHITE] = white->periods[0].ms;
    g->clock.remaining_ms[BLACK] = black->periods[0].ms;
    return true;
}

bool game_set_correspondence(game_t *g, int64_t days, int64_t day_ms, int64_t now_ms)
{
    if (game_is_timed(g) || days < 1 || days > GAME_DAYS_PER_MOVE_MAX || day_ms < 1 || day_ms > GAME_DAY_MS_MAX
        || now_ms < 0)
        return false;
    g->clock.days_per_move = days;
    g->clock.move_ms = days * day_ms;
    g->clock.turn_started_ms = now_ms;
    return true;
}

bool game_set_start_at(game_t *g, int64_t start_at_ms)
{
    if (!game_is_timed(g) || start_at_ms <= 0)
        return false;
    g->clock.start_at_ms = start_at_ms;
    g->clock.first_move_ms = 0;
    return true;
}

game_status_t game_start_clocks(game_t *g, int64_t now_ms)
{
    if (g->state != GAME_ACTIVE)
        return GAME_EOVER;
    if (!game_is_timed(g))
        return GAME_ENO_CLOCK;
    if (g->ply_count >= CLOCK_FREE_PLIES || (g->clock.start_at_ms && g->clock.start_at_ms <= now_ms))
        return GAME_ECLOCK_RUNNING;
    g->clock.start_at_ms = now_ms > 0 ? now_ms : 1;
    g->clock.first_move_ms = 0;
    return GAME_OK;
}

game_status_t game_give_time(game_t *g, color_t who, int64_t ms, int64_t now_ms)
{
    if (g->state != GAME_ACTIVE)
        return GAME_EOVER;
    if (!game_is_timed(g) || (g->rules.flags & GAME_RULE_NO_GIVE_TIME))
        return GAME_EGIVE_TIME_NOT_ALLOWED;
    if (ms < 1 || ms > GAME_GIVE_TIME_MAX || g->clock.given_ms[who] + ms > GAME_GIVE_TIME_TOTAL_MAX)
        return GAME_EGIVE_TIME_TOO_MUCH;
    clock_settle(g, now_ms);
    g->clock.remaining_ms[!who] += ms;
    g->clock.given_ms[who] += ms;
    return GAME_OK;
}

bool clock_fits(const game_t *g, const game_clock_t *clock)
{
    const int64_t ms_max = INT64_C(9000000000000000);
    bool timed = clock->control[WHITE].period_count > 0;
    if (timed ? !game_control_ok(&clock->control[WHITE]) || !game_control_ok(&clock->control[BLACK])
              : !control_is_zero(&clock->control[WHITE]) || !control_is_zero(&clock->control[BLACK]))
        return false;
    for (int c = 0; c < COLOR_COUNT; c++)
        if (clock->remaining_ms[c] < 0 || clock->remaining_ms[c] > ms_max || clock->given_ms[c] < 0
            || clock->given_ms[c] > GAME_GIVE_TIME_TOTAL_MAX || (!timed && (clock->remaining_ms[c] || clock->given_ms[c])))
            return false;
    bool correspondence = clock->days_per_move != 0;
    if (clock->turn_started_ms < 0 || clock->turn_started_ms > ms_max || clock->first_move_ms < 0
        || clock->first_move_ms > GAME_FIRST_MOVE_MAX || (!timed && clock->first_move_ms) || clock->start_at_ms < 0
        || clock->start_at_ms > ms_max || (clock->start_at_ms && (!timed || clock->first_move_ms))
        || clock->imported_plies != clock_imported_kept(clock->imported_plies) || clock->imported_plies > g->ply_count
        || (!timed && clock->imported_plies) || (correspondence && timed) || clock->days_per_move < 0
        || clock->days_per_move > GAME_DAYS_PER_MOVE_MAX || (clock->move_ms > 0) != correspondence
        || clock->move_ms < 0 || clock->move_ms > clock->days_per_move * GAME_DAY_MS_MAX)
        return false;
    return true;
}

bool game_set_game_rules(game_t *g, const game_rules_t *rules)
{
    if ((rules->flags & ~(int64_t)GAME_RULE_ALL) || rules->draw_offers_from_move < 0
        || rules->draw_offers_from_move > GAME_MAX_PLIES || rules->draw_odds < 0 || rules->draw_odds > COLOR_COUNT)
        return false;
    g->rules = *rules;
    return true;
}

int game_line_clocks(const char *line, size_t length, int64_t *clocks, int max)
{
    const char *p = line, *end = line + length;
    int count = 0;
    while (p < end) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        if (count >= max || stop == p)
            return -1;
        const char *first = memchr(p, ':', (size_t)(stop - p));
        const char *second = first ? memchr(first + 1, ':', (size_t)(stop - first - 1)) : NULL;
        int64_t ms = -1;
        if (second) {
            ms = 0;
            for (const char *d = second + 1; d < stop; d++) {
                if (*d < '0' || *d > '9' || ms > INT64_C(900000000000000))
                    return -1;
                ms = ms * 10 + (*d - '0');
            }
            if (second + 1 == stop)
                return -1;
        }
        clocks[count++] = ms;
        p = stop < end ? stop + 1 : end;
    }
    return count;
}
