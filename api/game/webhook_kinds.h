/* The kinds of game event a webhook subscription may ask for (move,
 * offer, takeback, clock, end), and which a change's event is. A game keeps
 * its subscriptions as a text ("<sub>=<kinds> ...") in its hash. A write
 * reads both to know which outboxes take its event (webhook_kinds.c). */
#ifndef CHESSD_API_GAME_WEBHOOK_KINDS_H
#define CHESSD_API_GAME_WEBHOOK_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../store/webhooks.h"

enum {
    WEBHOOK_KIND_MOVE = 1u << 0,
    WEBHOOK_KIND_OFFER = 1u << 1,
    WEBHOOK_KIND_TAKEBACK = 1u << 2,
    WEBHOOK_KIND_CLOCK = 1u << 3,
    WEBHOOK_KIND_END = 1u << 4,
    WEBHOOK_KIND_ALL = (1u << 5) - 1,
    WEBHOOK_KIND_COUNT = 5,
    WEBHOOK_HEAD_SIZE = 64, /* an outbox entry's first line, "<event> <kinds>\n", and a NUL */
};

/* The kind's name ("move"...), bit i of the mask. */
const char *webhook_kind_name(unsigned i);
/* The bit of a kind's name (length bytes); 0 when it is none. */
unsigned webhook_kind_of(const char *name, size_t length);

/* The kinds of a change's event (its name, as the streams send it) that
 * ended the game or not; 0 for an event no kind covers. */
unsigned webhook_event_kinds(const char *event, bool ended);

/* Appends "<sub>=<kinds>" to a subscriptions text (size bytes, NUL
 * included); false when it would not fit or the game has as many as it may. */
bool webhook_subs_text_add(char *text, size_t size, const char *sub, unsigned kinds);

/* The subscriptions of text that want an event of kinds, into hits; their count. */
unsigned webhook_subs_hit(const char *text, unsigned kinds, char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE]);

#endif
