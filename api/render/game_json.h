/* The JSON of a stored game (render layer): the Game object (the record
 * with its tags, metadata and moves, the clock at an instant, a creation's
 * tokens) and the GameChange object (a change's new version and state). Both
 * also come as the events streams carry ({"type": "game"} and {"type":
 * "change", "event": ...}). Knows rules/ values and the record, no HTTP.
 * Every function returns malloc'd text the caller frees, NULL when out of memory. */
#ifndef CHESSD_API_RENDER_GAME_JSON_H
#define CHESSD_API_RENDER_GAME_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "../../rules/game.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"

enum {
    GAME_JSON_LEGAL_MOVES = 1, /* the position lists its legal moves (an active game only) */
    GAME_JSON_EVENT = 2,       /* as an event: with "type" (and a change's "event") */
};

/* The Game object of r with its tags and metadata (NULL: none), its move
 * list (moves_length bytes of "uci:san" entries split by spaces, well
 * formed; NULL: none), the clock as of now_ms (Unix ms, Redis's clock), and
 * when tokens is not NULL the two player tokens (white, black). */
char *game_json_game(const game_record_t *r, const game_meta_t *meta, const char *moves, size_t moves_length,
                     int64_t now_ms, unsigned flags, const char *const tokens[COLOR_COUNT], size_t *length);

/* The GameChange object of r after a change: the move played (NULL: none),
 * the new state; event names the change ("move", "resign"...) and is
 * written with GAME_JSON_EVENT only. No move list. */
char *game_json_change(const game_record_t *r, const game_played_t *played, const char *event, unsigned flags,
                       int64_t now_ms, size_t *length);

/* The instant ms (Unix milliseconds) as the answers write it, in UTC:
 * "2026-12-03T16:59:35.123Z". */
enum { GAME_JSON_TIME_SIZE = 40 };
void game_json_iso_time(int64_t ms, char out[GAME_JSON_TIME_SIZE]);

/* The GameChange answer (flags as game_json_change's, GAME_JSON_EVENT
 * ignored) and, in *event_json (length in *event_length), the same change
 * as its event, byte for byte what game_json_change with GAME_JSON_EVENT
 * alone writes: the two share every member but the event's "type" and
 * "event" and the answer's legal moves, so the shared part is written once.
 * NULL (and *event_json NULL) when out of memory. */
char *game_json_change_and_event(const game_record_t *r, const game_played_t *played, const char *event,
                                 unsigned flags, int64_t now_ms, size_t *length, char **event_json,
                                 size_t *event_length);

#endif
