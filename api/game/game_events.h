/* A game's events as they travel between replicas. Every change written to
 * a game is published on the game's Pub/Sub channel, in the same atomic
 * step as the write, as one message (game_event_meta_t). The stream side
 * reads messages with game_event_parse and asks the game service for whole
 * games (game_svc_snapshot) and for flag checks (game_svc_check_flag,
 * service.h). */
#ifndef CHESSD_API_GAME_GAME_EVENTS_H
#define CHESSD_API_GAME_GAME_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message is a header line, "<version> <ended 0|1> <at_ms> <deadline_ms>
 * <type>", then one JSON object (the event, {"type": "change", "event": ...}). */
typedef struct {
    uint64_t version;
    bool ended;          /* the game is over after this event */
    int64_t at_ms;       /* Redis's clock when the figures were taken */
    int64_t deadline_ms; /* when the side to move's flag falls, on Redis's clock (0: none) */
    char type[16];       /* "change", or "game" for a snapshot */
} game_event_meta_t;

/* Parses a published message; *json points into message. False when it is not one. */
bool game_event_parse(const char *message, size_t length, game_event_meta_t *meta, const char **json,
                      size_t *json_length);

/* The Pub/Sub channel of game id's events, into out. */
enum { GAME_EVENTS_CHANNEL_SIZE = 64 };
void game_events_channel(const char *id, char *out);

#endif
