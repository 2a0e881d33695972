/* Timers as an indexed binary min-heap: each timer is an entry embedded in
 * its owner (a topic, a waiter) and knows its place in the heap. Arming,
 * moving and disarming are O(log n), and nothing is left behind when an
 * owner goes. No locks: the owner of the heap serializes its use. */
#ifndef CHESSD_API_LIVE_TIMERS_H
#define CHESSD_API_LIVE_TIMERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t when_us; /* when it is due */
    size_t slot;      /* 1 + its index in the heap; 0: not armed */
} timers_entry_t;

typedef struct {
    timers_entry_t **items;
    size_t count, capacity;
} timers_t;

/* An empty heap; allocates nothing. */
void timers_init(timers_t *t);
/* Frees the heap (not the entries, which belong to their owners). */
void timers_free(timers_t *t);

/* Arms e (or moves it, when armed) to be due at when_us. False when out of
 * memory (e is then not armed). */
bool timers_set(timers_t *t, timers_entry_t *e, uint64_t when_us);
/* Disarms e; nothing when it is not armed. */
void timers_clear(timers_t *t, timers_entry_t *e);
/* The entry due first, or NULL when none is armed. */
timers_entry_t *timers_first(const timers_t *t);
static inline bool timers_armed(const timers_entry_t *e) { return e->slot != 0; }

#endif
