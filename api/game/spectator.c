/* See spectator.h. The view is made after the load, on the caller's copy:
 * the game cache and the store only ever hold the live game, so no read
 * can hand one caller's view to another. */
#include "spectator.h"

#include "../../rules/game_view.h"

bool spectator_sees_live(const game_record_t *r, bool player, bool live_key)
{
    return r->spectator_delay_plies <= 0 || game_is_over(&r->game) || live_key || player;
}

game_svc_status_t spectator_view(game_svc_game_t *g)
{
    game_record_t *r = &g->record;
    game_t view;
    int hidden = 0;
    const char *moves = g->moves ? g->moves : "";
    size_t length = g->moves ? g->moves_length : 0;
    if (game_view_at(&r->game, moves, length, r->spectator_delay_plies, g->now_ms, &view, &hidden) != GAME_OK)
        return GAME_SVC_EBAD_RECORD;
    r->game = view;
    r->plies_hidden = hidden;
    r->view = true;
    g->moves_length = game_line_keep(moves, length, hidden);
    return GAME_SVC_OK;
}

game_svc_status_t spectator_apply(game_svc_game_t *g, bool player, bool live_key)
{
    return spectator_sees_live(&g->record, player, live_key) ? GAME_SVC_OK : spectator_view(g);
}
