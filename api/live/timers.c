/* See timers.h. items[i]->slot == i + 1 for every armed entry. */
#include "timers.h"

#include <stdlib.h>

void timers_init(timers_t *t)
{
    t->items = NULL;
    t->count = t->capacity = 0;
}

void timers_free(timers_t *t)
{
    for (size_t i = 0; i < t->count; i++)
        t->items[i]->slot = 0;
    free(t->items);
    timers_init(t);
}

static void place(timers_t *t, size_t i, timers_entry_t *e)
{
    t->items[i] = e;
    e->slot = i + 1;
}

static void sift_up(timers_t *t, size_t i)
{
    timers_entry_t *e = t->items[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (t->items[parent]->when_us <= e->when_us)
            break;
        place(t, i, t->items[parent]);
        i = parent;
    }
    place(t, i, e);
}

static void sift_down(timers_t *t, size_t i)
{
    timers_entry_t *e = t->items[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= t->count)
            break;
        if (child + 1 < t->count && t->items[child + 1]->when_us < t->items[child]->when_us)
            child++;
        if (e->when_us <= t->items[child]->when_us)
            break;
        place(t, i, t->items[child]);
        i = child;
    }
    place(t, i, e);
}

bool timers_set(timers_t *t, timers_entry_t *e, uint64_t when_us)
{
    if (e->slot) {
        uint64_t before = e->when_us;
        e->when_us = when_us;
        if (when_us < before)
            sift_up(t, e->slot - 1);
        else
            sift_down(t, e->slot - 1);
        return true;
    }
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 64;
        timers_entry_t **items = realloc(t->items, capacity * sizeof *items);
        if (!items)
            return false;
        t->items = items;
        t->capacity = capacity;
    }
    e->when_us = when_us;
    place(t, t->count++, e);
    sift_up(t, t->count - 1);
    return true;
}

void timers_clear(timers_t *t, timers_entry_t *e)
{
    if (!e->slot)
        return;
    size_t i = e->slot - 1;
    e->slot = 0;
    timers_entry_t *last = t->items[--t->count];
    if (i == t->count)
        return;
    place(t, i, last);
    if (i > 0 && t->items[(i - 1) / 2]->when_us > last->when_us)
        sift_up(t, i);
    else
        sift_down(t, i);
}

timers_entry_t *timers_first(const timers_t *t) { return t->count ? t->items[0] : NULL; }
