/* The message format of game_events.h: parsing a published message and
 * naming a game's channel (the store's name for it). */
#include "game_events.h"

#include <stdlib.h>
#include <string.h>

#include "../store/store.h"

void game_events_channel(const char *id, char *out) { store_game_channel(id, out); }

/* A whole number at *p (digits only, at most 18), then one space or the line's end. */
static bool read_number(const char **p, const char *end, int64_t *out)
{
    int64_t v = 0;
    int digits = 0;
    while (*p < end && **p >= '0' && **p <= '9' && digits < 18) {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    if (!digits || *p >= end || (**p != ' ' && **p != '\n'))
        return false;
    *out = v;
    return true;
}

bool game_event_parse(const char *message, size_t length, game_event_meta_t *meta, const char **json,
                      size_t *json_length)
{
    memset(meta, 0, sizeof *meta);
    const char *p = message, *end = message + length;
    const char *newline = memchr(message, '\n', length);
    if (!newline)
        return false;
    int64_t fields[4];
    for (int i = 0; i < 4; i++) {
        if (!read_number(&p, newline + 1, &fields[i]) || *p != ' ')
            return false;
        p++;
    }
    size_t type_length = (size_t)(newline - p);
    if (fields[0] < 1 || fields[1] > 1 || type_length == 0 || type_length >= sizeof meta->type)
        return false;
    for (size_t i = 0; i < type_length; i++)
        if (p[i] < 'a' || p[i] > 'z')
            return false;
    meta->version = (uint64_t)fields[0];
    meta->ended = fields[1] == 1;
    meta->at_ms = fields[2];
    meta->deadline_ms = fields[3];
    memcpy(meta->type, p, type_length);
    *json = newline + 1;
    *json_length = (size_t)(end - *json);
    return *json_length > 0 && **json == '{';
}
