/* The game side of live events: what a game's write publishes, on which
 * channel, and the game read as an event (a snapshot) for a stream that
 * starts or has fallen behind. The message published on every successful
 * write of game <id>, on channel chessd:events:{<id>}, is
 *     "<version> <ended 0|1> <at_ms> <deadline_ms> <type>\n<json>"
 * version: the new version; ended: 1 once the game is over; at_ms: Redis's
 * time of the write (may be 0 for an untimed game); deadline_ms: Redis's time
 * at which the side to move's flag falls (0: no clock running); type: the
 * event's type ("change"); json: one JSON object without a newline. */
#ifndef CHESSD_API_GAME_EVENTS_H
#define CHESSD_API_GAME_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct store;

typedef struct {
    uint64_t version;
    bool ended;
    int64_t at_ms;
    int64_t deadline_ms;
    char type[16];
} game_event_meta_t;

/* Parses a published message: true with *meta filled and *json (inside
 * message, not terminated) and *json_length set; false when it is not one
 * (nothing is then promised about the outputs). */
bool game_event_parse(const char *message, size_t length, game_event_meta_t *meta, const char **json,
                      size_t *json_length);

/* The channel of game id ("chessd:events:{<id>}") into out (at least
 * GAME_EVENTS_CHANNEL_SIZE bytes; an id longer than any game's is cut). */
enum { GAME_EVENTS_CHANNEL_SIZE = 64 };
void game_events_channel(const char *id, char *out);

typedef enum { GAME_EVENTS_OK = 0, GAME_EVENTS_NOT_FOUND, GAME_EVENTS_UNAVAILABLE } game_events_status_t;

/* Appends the whole game as an event object ({"type":"game", ...the Game
 * fields, no tokens, no legal moves}) to out, and fills *meta (type "game").
 * A fallen flag is recorded first. Safe on any thread. */
game_events_status_t game_events_snapshot(struct store *store, const char *id, buf_t *out, game_event_meta_t *meta);

/* Records the ending of game id when its flag has fallen (that write
 * publishes its event); *meta is the game's state afterwards, so a caller
 * can arm its timer again when the flag has not fallen yet by Redis's clock. */
game_events_status_t game_events_check_flag(struct store *store, const char *id, game_event_meta_t *meta);

#endif
