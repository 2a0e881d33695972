/* See webhook_kinds.h. The kinds a subscription names are few and fixed; an
 * event's kind is read off its name, the one the streams send. */
#include "webhook_kinds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[WEBHOOK_KIND_COUNT] = { "move", "offer", "takeback", "clock", "end" };

const char *webhook_kind_name(unsigned i) { return i < WEBHOOK_KIND_COUNT ? kind_names[i] : ""; }

unsigned webhook_kind_of(const char *name, size_t length)
{
    for (unsigned i = 0; i < WEBHOOK_KIND_COUNT; i++)
        if (strlen(kind_names[i]) == length && !memcmp(kind_names[i], name, length))
            return 1u << i;
    return 0;
}

unsigned webhook_event_kinds(const char *event, bool ended)
{
    static const struct {
        const char *event;
        unsigned kind;
    } table[] = {
        { "move", WEBHOOK_KIND_MOVE },           { "undo", WEBHOOK_KIND_TAKEBACK },
        { "takeback_accept", WEBHOOK_KIND_TAKEBACK }, { "takeback_offer", WEBHOOK_KIND_OFFER },
        { "takeback_decline", WEBHOOK_KIND_OFFER },   { "draw_offer", WEBHOOK_KIND_OFFER },
        { "draw_decline", WEBHOOK_KIND_OFFER },       { "give_time", WEBHOOK_KIND_CLOCK },
        { "clock_start", WEBHOOK_KIND_CLOCK },
    };
    unsigned kinds = ended ? WEBHOOK_KIND_END : 0;
    for (size_t i = 0; event && i < sizeof table / sizeof *table; i++)
        if (!strcmp(event, table[i].event))
            kinds |= table[i].kind;
    return kinds;
}

bool webhook_subs_text_add(char *text, size_t size, const char *sub, unsigned kinds)
{
    char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE];
    if (webhook_subs_hit(text, WEBHOOK_KIND_ALL, hits) >= STORE_WEBHOOKS_PER_GAME)
        return false;
    size_t used = strlen(text);
    int n = snprintf(text + used, size - used, "%s%s=%u", used ? " " : "", sub, kinds & WEBHOOK_KIND_ALL);
    if (n < 0 || (size_t)n >= size - used) {
        text[used] = '\0';
        return false;
    }
    return true;
}

unsigned webhook_subs_hit(const char *text, unsigned kinds, char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE])
{
    unsigned count = 0;
    const char *p = text;
    while (*p && count < STORE_WEBHOOKS_PER_GAME) {
        size_t word = strcspn(p, " "), id = strcspn(p, "=");
        if (id < word && id < STORE_WEBHOOK_ID_SIZE && (strtoul(p + id + 1, NULL, 10) & kinds)) {
            memcpy(hits[count], p, id);
            hits[count++][id] = '\0';
        }
        p += word;
        while (*p == ' ')
            p++;
    }
    return count;
}
