/* The game copies of game_cache.h: an array of slots, each with its own
 * lock (a copy is a few kilobytes, copied in and out under the lock). */
#include "game_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pthread_mutex_t lock;
    bool used;
    game_record_t record;
} slot_t;

static slot_t *slots;
static unsigned slot_count;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static unsigned requested;
static atomic_ullong hits, misses;

static void setup(void)
{
    if (!requested)
        return;
    slot_t *s = calloc(requested, sizeof *s);
    if (!s)
        return; /* no copies: every change reads the store */
    for (unsigned i = 0; i < requested; i++)
        pthread_mutex_init(&s[i].lock, NULL);
    slots = s;
    slot_count = requested;
}

void game_cache_setup(unsigned count)
{
    requested = count;
    pthread_once(&setup_once, setup);
}

/* FNV-1a of the id. */
static slot_t *slot_for(const char *id)
{
    if (!slot_count)
        return NULL;
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 16777619u;
    return &slots[h % slot_count];
}

bool game_cache_get(const char *id, game_record_t *out)
{
    slot_t *s = slot_for(id);
    bool found = false;
    if (s) {
        pthread_mutex_lock(&s->lock);
        if (s->used && !strcmp(s->record.id, id)) {
            memcpy(out, &s->record, sizeof *out);
            found = true;
        }
        pthread_mutex_unlock(&s->lock);
    }
    atomic_fetch_add(found ? &hits : &misses, 1);
    return found;
}

void game_cache_put(const game_record_t *r)
{
    slot_t *s = slot_for(r->id);
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    /* An older version never replaces a newer copy of the same game; the
     * same version does (read from the store, it may be another write's). */
    if (!s->used || strcmp(s->record.id, r->id) || s->record.version <= r->version) {
        memcpy(&s->record, r, sizeof *r);
        s->used = true;
    }
    pthread_mutex_unlock(&s->lock);
}

void game_cache_drop(const char *id)
{
    slot_t *s = slot_for(id);
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->used && !strcmp(s->record.id, id))
        s->used = false;
    pthread_mutex_unlock(&s->lock);
}

void game_cache_stats(game_cache_stats_t *out)
{
    out->hits = atomic_load(&hits);
    out->misses = atomic_load(&misses);
}
