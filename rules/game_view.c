/* See game_view.h. The view is replayed from the initial position over the
 * moves shown, so nothing of the hidden plies can reach it. Only what was
 * set at the game's creation is copied on purpose: the takeback policy,
 * the controls and the rules. */
#include "game_view.h"

#include <string.h>

/* The clock of a move-list entry (entry..stop), or -1 when it has none. */
static int64_t entry_clock(const char *entry, const char *stop)
{
    const char *colon = memchr(entry, ':', (size_t)(stop - entry));
    const char *clock = colon ? memchr(colon + 1, ':', (size_t)(stop - colon - 1)) : NULL;
    if (!clock || clock + 1 == stop)
        return -1;
    int64_t v = 0;
    for (const char *p = clock + 1; p < stop; p++) {
        if (*p < '0' || *p > '9' || v > INT64_C(900000000000000))
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* Each side's clock after its last move in line (length bytes, moves from
 * a position with first to move), into left[] where an entry has one. */
static void last_clocks(const char *line, size_t length, color_t first, int64_t left[COLOR_COUNT])
{
    const char *end = line + length;
    int index = 0;
    for (const char *p = line; p < end; index++) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        int64_t clock = entry_clock(p, stop);
        if (clock >= 0)
            left[(first + index) % COLOR_COUNT] = clock;
        p = stop < end ? stop + 1 : end;
    }
}

game_status_t game_view_at(const game_t *g, const char *line, size_t length, int plies, int64_t now_ms, game_t *view,
                           int *hidden)
{
    int cut = plies < 0 ? 0 : plies > g->ply_count ? g->ply_count : plies;
    size_t shown = game_line_keep(line, length, cut);
    game_t t;
    if (game_replay(&t, &g->initial, line, shown, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                    GAME_OFFER_NONE)
            != GAME_OK
        || t.ply_count != g->ply_count - cut)
        return GAME_EBAD_RECORD;
    t.takeback = g->takeback;
    t.takeback_offer = GAME_OFFER_NONE;
    t.rules = g->rules;
    t.clock = g->clock;
    if (game_is_timed(g)) {
        for (int c = 0; c < COLOR_COUNT; c++)
            t.clock.remaining_ms[c] = g->clock.control[c].periods[0].ms;
        last_clocks(line, shown, (color_t)g->initial.side_to_move, t.clock.remaining_ms);
    }
    t.clock.turn_started_ms = now_ms;
    if (t.clock.imported_plies > t.ply_count)
        t.clock.imported_plies = 0;
    *view = t;
    *hidden = cut;
    return GAME_OK;
}
