/* A new game's time and rules as its creation request gives them
 * (clock_input.h): the clock, one for both sides or one each, or days a
 * move; a start time; the rules an organiser switches; draw odds. Every
 * field is checked against rules/game.h's bounds and refused by name. */
#include "clock_input.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../input.h"
#include "../problem.h"

/* The furthest ahead a start time may be, and how far back it may lie
 * (a clock that started a moment ago, as the request travelled). */
#define START_AHEAD_MAX_MS (INT64_C(30) * 86400000)
#define START_BEHIND_MAX_MS INT64_C(60000)

static bool invalid(api_response_t *res, const char *detail)
{
    api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
    return false;
}

/* The periods array at `path` into c: 1..GAME_PERIODS_MAX objects of
 * "moves" and "ms", the last without moves (the rest of the game). */
static bool read_periods(const cJSON *periods, const char *path, game_control_t *c, api_response_t *res)
{
    static const char *const members[] = { "moves", "ms", NULL };
    int count = cJSON_IsArray(periods) ? cJSON_GetArraySize(periods) : 0;
    char detail[200], where[64];
    if (count < 1 || count > GAME_PERIODS_MAX) {
        snprintf(detail, sizeof detail, "'%s.periods' must be an array of 1 to %d periods", path, GAME_PERIODS_MAX);
        return invalid(res, detail);
    }
    c->period_count = count;
    int i = 0;
    for (const cJSON *p = periods->child; p; p = p->next, i++) {
        snprintf(where, sizeof where, "%s.periods[%d]", path, i);
        bool last = i + 1 == count;
        if (!cJSON_IsObject(p)) {
            snprintf(detail, sizeof detail, "'%s' must be an object: {\"moves\": 40, \"ms\": 5400000}", where);
            return invalid(res, detail);
        }
        if (!input_members(p, where, members, res)
            || !input_whole(p, where, "ms", i ? 0 : GAME_CLOCK_INITIAL_MIN, GAME_CLOCK_INITIAL_MAX, -1,
                            &c->periods[i].ms, res)
            || !input_whole(p, where, "moves", last ? 0 : 1, last ? 0 : GAME_CLOCK_PERIOD_MOVES_MAX, last ? 0 : -1,
                            &c->periods[i].moves, res))
            return false;
        if (c->periods[i].ms < 0 || c->periods[i].moves < 0) {
            snprintf(detail, sizeof detail, "'%s' needs %s", where,
                     c->periods[i].ms < 0 ? "'ms'" : "'moves' (every period but the last has its moves)");
            return invalid(res, detail);
        }
    }
    return true;
}

/* A control at `path`: initial_ms or periods, an increment, a delay and
 * its mode; the clock's own object (`shared`) also has first_move_ms. */
static bool read_control(const cJSON *object, const char *path, bool shared, game_control_t *c, api_response_t *res)
{
    static const char *const members[] = { "initial_ms", "periods", "increment_ms", "delay_ms", "delay_mode",
                                           "first_move_ms", NULL };
    static const char *const side_members[] = { "initial_ms", "periods", "increment_ms", "delay_ms", "delay_mode",
                                                 NULL };
    const cJSON *initial = cJSON_GetObjectItemCaseSensitive(object, "initial_ms");
    const cJSON *periods = cJSON_GetObjectItemCaseSensitive(object, "periods");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(object, "delay_mode");
    char detail[200];
    memset(c, 0, sizeof *c);
    if (!input_members(object, path, shared ? members : side_members, res))
        return false;
    if ((initial != NULL) == (periods != NULL)) {
        snprintf(detail, sizeof detail, "'%s' takes one of 'initial_ms' and 'periods'", path);
        return invalid(res, detail);
    }
    if (initial) {
        c->period_count = 1;
        if (!input_whole(object, path, "initial_ms", GAME_CLOCK_INITIAL_MIN, GAME_CLOCK_INITIAL_MAX, 0,
                         &c->periods[0].ms, res))
            return false;
    } else if (!read_periods(periods, path, c, res)) {
        return false;
    }
    if (!input_whole(object, path, "increment_ms", 0, GAME_CLOCK_INCREMENT_MAX, 0, &c->increment_ms, res)
        || !input_whole(object, path, "delay_ms", 0, GAME_CLOCK_DELAY_MAX, 0, &c->delay_ms, res))
        return false;
    int value = cJSON_IsString(mode) ? game_delay_mode_from_name(mode->valuestring, strlen(mode->valuestring)) : -1;
    if (c->delay_ms && value != GAME_DELAY_BRONSTEIN && value != GAME_DELAY_SIMPLE) {
        snprintf(detail, sizeof detail, "'%s.delay_mode' must be bronstein or simple with a delay", path);
        return invalid(res, detail);
    }
    if (!c->delay_ms && mode) {
        snprintf(detail, sizeof detail, "'%s.delay_mode' goes with a 'delay_ms' above 0", path);
        api_problem(res, API_ECONFLICTING_FIELDS, detail, NULL, NULL);
        return false;
    }
    c->delay_mode = c->delay_ms ? value : GAME_DELAY_NONE;
    return true;
}

/* "clock": one control for both sides, or "white" and "black" each with
 * one; and the first-move grace. */
static bool read_clock(const cJSON *clock, game_svc_new_t *spec, api_response_t *res)
{
    static const char *const sides[] = { "white", "black", "first_move_ms", NULL };
    if (!cJSON_IsObject(clock))
        return invalid(res, "'clock' must be an object: {\"initial_ms\": 300000, \"increment_ms\": 2000}");
    const cJSON *white = cJSON_GetObjectItemCaseSensitive(clock, "white");
    const cJSON *black = cJSON_GetObjectItemCaseSensitive(clock, "black");
    if (!input_whole(clock, "clock", "first_move_ms", 0, GAME_FIRST_MOVE_MAX, GAME_SVC_FIRST_MOVE_DEFAULT_MS,
                     &spec->first_move_ms, res))
        return false;
    if (!white && !black) {
        if (!read_control(clock, "clock", true, &spec->controls[WHITE], res))
            return false;
        spec->controls[BLACK] = spec->controls[WHITE];
        return true;
    }
    if (!input_members(clock, "clock", sides, res))
        return false;
    if (!cJSON_IsObject(white) || !cJSON_IsObject(black))
        return invalid(res, "'clock.white' and 'clock.black' go together, each a clock of its own");
    return read_control(white, "clock.white", false, &spec->controls[WHITE], res)
           && read_control(black, "clock.black", false, &spec->controls[BLACK], res);
}

/* The number of days from 1970-01-01 to year-month-day (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* An RFC 3339 date-time ("2026-12-07T18:00:00Z", fractions and offsets
 * allowed) as Unix milliseconds; false when text is not one. */
static bool rfc3339_ms(const char *text, int64_t *out)
{
    int y, mo, d, h, mi, s, n = 0;
    if (sscanf(text, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19 || mo < 1
        || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    const char *p = text + n;
    int64_t ms = 0, scale = 100;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            ms += scale * (*p - '0');
        if (p[-1] == '.')
            return false;
    }
    int64_t offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, m = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &m) != 2 || m != 5 || oh > 23 || om > 59)
            return false;
        offset = (*p == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        p += 6;
    } else {
        return false;
    }
    if (*p)
        return false;
    *out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (s > 59 ? 59 : s)) - offset) * 1000 + ms;
    return true;
}

/* "start_clocks_at": Unix milliseconds or an RFC 3339 date-time, at most a
 * minute past and 30 days ahead of now_ms, for a game with a clock. */
static bool read_start(const cJSON *root, int64_t now_ms, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(root, "start_clocks_at");
    spec->start_at_ms = 0;
    if (!at || cJSON_IsNull(at))
        return true;
    if (!spec->controls[WHITE].period_count) {
        api_problem(res, API_ECONFLICTING_FIELDS, "'start_clocks_at' needs a 'clock'", NULL, NULL);
        return false;
    }
    int64_t ms = -1;
    if (cJSON_IsNumber(at) && at->valuedouble == (double)(int64_t)at->valuedouble)
        ms = (int64_t)at->valuedouble;
    else if (!cJSON_IsString(at) || !rfc3339_ms(at->valuestring, &ms))
        return invalid(res, "'start_clocks_at' must be Unix milliseconds or an RFC 3339 date-time");
    if (ms < now_ms - START_BEHIND_MAX_MS || ms > now_ms + START_AHEAD_MAX_MS)
        return invalid(res, "'start_clocks_at' must lie between a minute ago and 30 days ahead");
    spec->start_at_ms = ms;
    return true;
}

/* input_whole for a top-level field whose null means absent. */
static bool read_nullable(const cJSON *root, const char *key, int64_t min, int64_t max, int64_t *out,
                          api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = 0;
    return cJSON_IsNull(item) || input_whole(root, "", key, min, max, 0, out, res);
}

/* "rules": names of rules (each once); "draw_offers_from_move"; "draw_odds". */
static bool read_game_rules(const cJSON *root, game_rules_t *rules, api_response_t *res)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "rules");
    const cJSON *odds = cJSON_GetObjectItemCaseSensitive(root, "draw_odds");
    memset(rules, 0, sizeof *rules);
    if (names && !cJSON_IsNull(names)) {
        if (!cJSON_IsArray(names))
            return invalid(res, "'rules' must be an array of no_abort, no_give_time, no_claim_win");
        for (const cJSON *name = names->child; name; name = name->next) {
            int64_t bit = cJSON_IsString(name) ? game_rule_from_name(name->valuestring, strlen(name->valuestring)) : 0;
            if (!bit || (rules->flags & bit))
                return invalid(res, "'rules' must name no_abort, no_give_time and no_claim_win, each at most once");
            rules->flags |= bit;
        }
    }
    if (!read_nullable(root, "draw_offers_from_move", 1, GAME_MAX_PLIES / 2, &rules->draw_offers_from_move, res))
        return false;
    if (odds && !cJSON_IsNull(odds)) {
        bool white = cJSON_IsString(odds) && !strcmp(odds->valuestring, "white");
        if (!white && !(cJSON_IsString(odds) && !strcmp(odds->valuestring, "black")))
            return invalid(res, "'draw_odds' must be white or black: the side a draw counts as a win for");
        rules->draw_odds = 1 + (white ? WHITE : BLACK);
    }
    return true;
}

bool clock_input_read(const cJSON *root, int64_t now_ms, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "clock");
    memset(spec->controls, 0, sizeof spec->controls);
    spec->first_move_ms = 0;
    if (clock && !cJSON_IsNull(clock) && !read_clock(clock, spec, res))
        return false;
    if (!read_nullable(root, "days_per_move", 1, GAME_DAYS_PER_MOVE_MAX, &spec->days_per_move, res))
        return false;
    if (spec->days_per_move && spec->controls[WHITE].period_count) {
        api_problem(res, API_ECONFLICTING_FIELDS, "a game has a 'clock' or 'days_per_move', not both", NULL, NULL);
        return false;
    }
    return read_start(root, now_ms, spec, res) && read_game_rules(root, &spec->rules, res);
}
