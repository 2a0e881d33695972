/* A game as a spectator sees it some plies behind: the position, moves and
 * clocks of that earlier moment, in progress, with no offer standing. Pure:
 * no malloc, no I/O; the view is a game_t value built from the live one and
 * its move-list text. The spectator delay itself is the service's. */
#ifndef CHESSD_RULES_GAME_VIEW_H
#define CHESSD_RULES_GAME_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "game.h"

/* The bounds of a game's spectator delay, in plies. */
enum { GAME_VIEW_DELAY_MAX = 20 };

/* Builds into *view the game g as it was `plies` plies earlier (more plies
 * than were played: its start). line is g's move-list text (length bytes,
 * all g->ply_count moves). The view is active with no ending, no draw or
 * takeback offer; its clocks are each side's time after its last move
 * shown (from the entries' clocks; a side that has not moved there, or
 * whose entry has none, holds its starting time), as of now_ms: the turn
 * of the side to move starts then. Its policy, controls and rules are g's.
 * *hidden is the count of plies hidden. GAME_EBAD_RECORD, *view unchanged,
 * when the line does not replay on g's initial position. Costs the line's
 * length. */
game_status_t game_view_at(const game_t *g, const char *line, size_t length, int plies, int64_t now_ms, game_t *view,
                           int *hidden);

#endif
