/* The message format of game_events.h: parsing a published message (the
 * wire format shared with the write script) and naming a game's channel
 * (the store's name for it). The snapshot and the flag check are the game
 * service's (service.c). */
#include "game_events.h"

#include <cJSON.h>
#include <string.h>

#include "../../store/store.h"
#include "../../rules/base/utf8.h"

/* Reads a decimal number of at most 18 digits (no sign) ending at `stop`;
 * advances *p past the stop character. */
static bool read_number(const char **p, const char *end, char stop, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int digits = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        if (++digits > 18)
            return false;
        v = v * 10 + (uint64_t)(*s++ - '0');
    }
    if (!digits || s >= end || *s != stop)
        return false;
    *p = s + 1;
    *out = v;
    return true;
}

/* Whether body is one JSON object, valid UTF-8, without a control
 * character (a newline would break the stream's framing, a NUL a client's
 * parser): what reaches a stream's client is what chessd would write, even
 * when someone else publishes on the channel. */
static bool json_object_line(const char *body, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if ((unsigned char)body[i] < 0x20)
            return false;
    if (!utf8_valid(body, length))
        return false;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, length, &end, 0);
    bool ok = root && cJSON_IsObject(root) && end == body + length;
    cJSON_Delete(root);
    return ok;
}

bool game_event_parse(const char *message, size_t length, game_event_meta_t *meta, const char **json,
                      size_t *json_length)
{
    const char *p = message, *end = message + length;
    uint64_t version, ended, at_ms, deadline_ms;
    if (!read_number(&p, end, ' ', &version) || version == 0 || !read_number(&p, end, ' ', &ended) || ended > 1
        || !read_number(&p, end, ' ', &at_ms) || !read_number(&p, end, ' ', &deadline_ms))
        return false;
    size_t type_length = 0;
    while (p + type_length < end && ((p[type_length] >= 'a' && p[type_length] <= 'z') || p[type_length] == '_'))
        type_length++;
    if (type_length == 0 || type_length >= sizeof meta->type || p + type_length >= end || p[type_length] != '\n')
        return false;
    const char *body = p + type_length + 1;
    size_t body_length = (size_t)(end - body);
    /* One object on one line: a newline would break the stream's framing. */
    if (body_length < 2 || body[0] != '{' || body[body_length - 1] != '}' || !json_object_line(body, body_length))
        return false;
    meta->version = version;
    meta->ended = ended == 1;
    meta->at_ms = (int64_t)at_ms;
    meta->deadline_ms = (int64_t)deadline_ms;
    memcpy(meta->type, p, type_length);
    meta->type[type_length] = '\0';
    *json = body;
    *json_length = body_length;
    return true;
}

void game_events_channel(const char *id, char *out) { store_game_channel(id, out); }
