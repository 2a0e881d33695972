/* The pool game requests run on: each event loop's own fibers
 * (store/fiber.h), so that a request's Redis round trips yield to its loop
 * instead of holding its thread, and the request is read, run and answered
 * on that one thread. A httpd_pool_t's submit (httpd.h). */
#ifndef CHESSD_API_FIBER_POOL_H
#define CHESSD_API_FIBER_POOL_H

#include <stdbool.h>

typedef struct fiber_pool fiber_pool_t;

/* Up to fibers jobs at once on each loop, and up to queue_max more
 * waiting there for a fiber. NULL when out of memory. */
fiber_pool_t *fiber_pool_new(unsigned fibers, unsigned queue_max);

/* Runs fn(arg) on a fiber of this thread's loop (loop_current()): at once
 * when one is free, else when one is, in turn. False (nothing queued) when
 * the loop's queue is full, or off a loop's thread. */
bool fiber_pool_submit(void *pool, void (*fn)(void *arg), void *arg);

/* Frees the pool once its loops have stopped (none of its fibers is then
 * waiting). NULL is fine. */
void fiber_pool_free(fiber_pool_t *pool);

#endif
