/* The spectator delay: who sees a game being played live (its players,
 * backends whose key reads live, everyone once it is over or when it has
 * no delay), and the view everyone else gets, the game some plies behind
 * (rules/game_view.h). Knows the record and the rules, never HTTP: the
 * caller says whether the request's key reads live. */
#ifndef CHESSD_API_GAME_SPECTATOR_H
#define CHESSD_API_GAME_SPECTATOR_H

#include <stdbool.h>

#include "service.h"

/* Whether a reader sees r live: one of its players (player: the request
 * holds a player's token of r, game_svc_is_player), or live_key (it holds
 * a service key with games:read-live or admin), or r is over, or r has no
 * spectator delay. */
bool spectator_sees_live(const game_record_t *r, bool player, bool live_key);

/* Makes g, loaded in full (its move list), the spectator's view of it:
 * the game as it was spectator_delay_plies plies earlier (record.game),
 * its move list cut to the moves shown, record.plies_hidden and
 * record.view set. Its version stays the game's. GAME_SVC_EBAD_RECORD
 * (g unchanged) when its move list does not replay. */
game_svc_status_t spectator_view(game_svc_game_t *g);

/* spectator_view unless spectator_sees_live: what the reader sees. */
game_svc_status_t spectator_apply(game_svc_game_t *g, bool player, bool live_key);

#endif
