/* One byte budget for everything the process buffers for clients that read
 * slowly: event streams' queues, exports' text, long polls' held answers.
 * Holders report what they hold (one atomic add); a new reader is refused
 * while the total is at the limit; past it, the registered reader that has
 * kept the most bytes the longest is closed first (membudget_shed). One
 * budget a process: every function may be called from any thread. */
#ifndef CHESSD_API_HTTP_MEMBUDGET_H
#define CHESSD_API_HTTP_MEMBUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A reader that holds bytes: embedded in its holder, zeroed to start. Its
 * close is called (under the registry's lock: it must take no lock that is
 * held around membudget_register or membudget_unregister) to drop what it
 * holds and end its connection. */
typedef struct membudget_reader {
    struct membudget_reader *prev, *next; /* the registry, under its lock */
    atomic_size_t bytes;                  /* held now */
    _Atomic uint64_t since_us;            /* since when bytes wait for its client; 0: none wait */
    bool registered, shed;                /* under the registry's lock */
    void (*close)(void *arg);
    void *arg;
} membudget_reader_t;

/* The limit in bytes (0: no limit), set once at start. */
void membudget_set_limit(size_t limit);
size_t membudget_limit(void);
/* Bytes held now, in all. */
size_t membudget_used(void);
/* Whether a new reader is to be refused: the limit is reached. */
bool membudget_full(void);
/* Whether the limit is passed: membudget_shed has work. */
bool membudget_over(void);

/* Adds delta to what r (NULL: no reader, a fixed hold) and the process hold.
 * Crossing the limit upwards calls the hook (membudget_on_over). */
void membudget_add(membudget_reader_t *r, ptrdiff_t delta);
/* Makes *charged, r's share of one buffer, now bytes (membudget_add of the difference). */
void membudget_track(membudget_reader_t *r, size_t *charged, size_t now);
/* Bytes wait for r's client now (from now, unless they did already) /
 * nothing waits: r cannot be shed, whatever it holds. */
void membudget_waiting(membudget_reader_t *r);
void membudget_drained(membudget_reader_t *r);

/* hook(arg), from the thread that took the total past the limit, or that
 * freed enough for a trim (membudget_trim), with whatever locks it holds:
 * it may only wake the thread that sheds and trims. */
void membudget_on_over(void (*hook)(void *arg), void *arg);

/* Puts r in the registry (close(arg) ends it) / takes it out; after
 * unregister returns, close is not running and will not be called. */
void membudget_register(membudget_reader_t *r, void (*close)(void *arg), void *arg);
void membudget_unregister(membudget_reader_t *r);

/* While the bytes held (those of readers closed but not yet released
 * included) pass the limit: closes the reader with the most bytes times
 * the time bytes have waited for its client (those with none waiting
 * never). Returns how many were closed. */
unsigned membudget_shed(void);

/* Gives freed memory back to the system (glibc's malloc_trim) when at
 * least MEMBUDGET_TRIM_AFTER bytes of budget have been freed since the
 * last time and a second has passed: call it off any hot path. */
enum { MEMBUDGET_TRIM_AFTER = 1 << 20 };
bool membudget_trim(void);
/* When membudget_trim would trim (0: not due). */
uint64_t membudget_trim_due_us(void);

/* Sets glibc's mmap threshold to its initial 128 KiB for good: an event
 * queue or an export's text that large is mapped and unmapped on its own,
 * not left behind in the heap (glibc raises the threshold past any large
 * block freed, so later ones come from the heap). Call once at start. */
void membudget_malloc_setup(void);

/* The default limit: a third of the cgroup's memory limit (v2
 * memory.max, v1 memory.limit_in_bytes), or fallback without one. */
size_t membudget_default_limit(size_t fallback);

#endif
