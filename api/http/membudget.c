/* See membudget.h. The total is one atomic; the registry of readers is a
 * list under one mutex, walked only to shed (past the limit) and changed
 * when a reader starts or ends. The lock order is the registry's, then a
 * reader's own (its close takes it). */
#define _GNU_SOURCE /* malloc_trim */
#include "membudget.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/clock.h"

static atomic_size_t limit_bytes, used_bytes, freed_since_trim;
static _Atomic uint64_t last_trim_us;
static void (*_Atomic over_hook)(void *);
static void *_Atomic over_arg;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static membudget_reader_t *registry;

void membudget_set_limit(size_t limit) { atomic_store(&limit_bytes, limit); }
size_t membudget_limit(void) { return atomic_load(&limit_bytes); }
size_t membudget_used(void) { return atomic_load_explicit(&used_bytes, memory_order_relaxed); }

bool membudget_full(void)
{
    size_t limit = membudget_limit();
    return limit && membudget_used() >= limit;
}

bool membudget_over(void)
{
    size_t limit = membudget_limit();
    return limit && membudget_used() > limit;
}

void membudget_add(membudget_reader_t *r, ptrdiff_t delta)
{
    if (!delta)
        return;
    if (r)
        atomic_fetch_add_explicit(&r->bytes, (size_t)delta, memory_order_relaxed);
    size_t before = atomic_fetch_add_explicit(&used_bytes, (size_t)delta, memory_order_relaxed);
    void (*hook)(void *) = atomic_load(&over_hook);
    if (delta < 0) {
        size_t freed = atomic_fetch_add_explicit(&freed_since_trim, (size_t)-delta, memory_order_relaxed);
        if (hook && freed < MEMBUDGET_TRIM_AFTER && freed + (size_t)-delta >= MEMBUDGET_TRIM_AFTER)
            hook(atomic_load(&over_arg)); /* a trim is due */
        return;
    }
    size_t limit = membudget_limit();
    if (limit && hook && before + (size_t)delta > limit)
        hook(atomic_load(&over_arg));
}

void membudget_track(membudget_reader_t *r, size_t *charged, size_t now)
{
    ptrdiff_t delta = (ptrdiff_t)now - (ptrdiff_t)*charged;
    *charged = now;
    membudget_add(r, delta);
}

void membudget_waiting(membudget_reader_t *r)
{
    uint64_t none = 0;
    atomic_compare_exchange_strong(&r->since_us, &none, clock_now_us());
}

void membudget_drained(membudget_reader_t *r) { atomic_store(&r->since_us, 0); }

void membudget_on_over(void (*hook)(void *arg), void *arg)
{
    atomic_store(&over_arg, arg);
    atomic_store(&over_hook, hook);
}

void membudget_register(membudget_reader_t *r, void (*close)(void *arg), void *arg)
{
    pthread_mutex_lock(&registry_lock);
    r->close = close;
    r->arg = arg;
    r->shed = false;
    r->registered = true;
    r->prev = NULL;
    r->next = registry;
    if (registry)
        registry->prev = r;
    registry = r;
    pthread_mutex_unlock(&registry_lock);
}

void membudget_unregister(membudget_reader_t *r)
{
    pthread_mutex_lock(&registry_lock);
    if (r->registered) {
        if (r->prev)
            r->prev->next = r->next;
        else
            registry = r->next;
        if (r->next)
            r->next->prev = r->prev;
        r->registered = false;
    }
    pthread_mutex_unlock(&registry_lock);
}

unsigned membudget_shed(void)
{
    size_t limit = membudget_limit();
    unsigned closed = 0;
    if (!limit)
        return 0;
    pthread_mutex_lock(&registry_lock);
    for (;;) {
        uint64_t now = clock_now_us();
        membudget_reader_t *worst = NULL;
        double worst_score = 0;
        for (membudget_reader_t *r = registry; r; r = r->next) {
            size_t bytes = atomic_load_explicit(&r->bytes, memory_order_relaxed);
            if (r->shed)
                continue;
            uint64_t since = atomic_load_explicit(&r->since_us, memory_order_relaxed);
            if (!since || !bytes)
                continue; /* its client takes all it is sent */
            /* Bytes times how long they have waited (a millisecond at least):
             * of two that hold as much, the one that stopped reading first. */
            double age_ms = since < now ? (double)(now - since) / 1000.0 + 1.0 : 1.0;
            double score = (double)bytes * age_ms;
            if (score > worst_score) {
                worst = r;
                worst_score = score;
            }
        }
        /* What readers closed but not yet released hold counts too: the
         * budget holds however slowly their connections go. */
        if (!worst || membudget_used() <= limit)
            break;
        worst->shed = true;
        worst->close(worst->arg);
        closed++;
    }
    pthread_mutex_unlock(&registry_lock);
    return closed;
}

uint64_t membudget_trim_due_us(void)
{
    if (atomic_load_explicit(&freed_since_trim, memory_order_relaxed) < MEMBUDGET_TRIM_AFTER)
        return 0;
    return atomic_load(&last_trim_us) + 1000000u;
}

void membudget_malloc_setup(void) { mallopt(M_MMAP_THRESHOLD, 128 * 1024); }

bool membudget_trim(void)
{
    if (atomic_load_explicit(&freed_since_trim, memory_order_relaxed) < MEMBUDGET_TRIM_AFTER)
        return false;
    uint64_t now = clock_now_us(), last = atomic_load(&last_trim_us);
    if (now - last < 1000000u || !atomic_compare_exchange_strong(&last_trim_us, &last, now))
        return false;
    atomic_store(&freed_since_trim, 0);
    malloc_trim(0);
    return true;
}

/* A number from the first line of path; false when there is none ("max"). */
static bool read_number(const char *path, unsigned long long *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[64] = "";
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    char *end;
    *out = strtoull(line, &end, 10);
    return ok && end != line && (*end == '\n' || *end == '\0');
}

size_t membudget_default_limit(size_t fallback)
{
    unsigned long long bytes;
    /* cgroup v1 says "no limit" with a number near 2^63. */
    if ((read_number("/sys/fs/cgroup/memory.max", &bytes)
         || read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", &bytes))
        && bytes > 0 && bytes < (1ull << 50))
        return (size_t)(bytes / 3);
    return fallback;
}
