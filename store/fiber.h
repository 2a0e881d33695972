/* Fibers: stacks of their own on which a request's store work runs, so that
 * a wait on Redis hands the thread back to its event loop instead of
 * blocking it. A fiber runs on one thread, switched to and from in user
 * space; fiber_wait is where it yields. Off a fiber, fiber_wait blocks in
 * poll(), so the store's code reads the same on any thread. */
#ifndef CHESSD_STORE_FIBER_H
#define CHESSD_STORE_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fiber fiber_t;

/* Per-fiber slots, each with its destructor (fiber_local_destructor). */
typedef enum {
    FIBER_LOCAL_STORE,    /* store_redis.c: this fiber's Redis connections */
    FIBER_LOCAL_DEADLINE, /* store_redis.c: store_set_deadline's value */
    FIBER_LOCAL_COUNT
} fiber_local_key_t;

/* What a fiber that yielded waits for: its descriptor ready for events
 * (poll()'s POLLIN, POLLOUT; fd -1: nothing), or deadline_ms passing
 * (monotonic ms, as clock_now_ms), whichever comes first. */
typedef struct {
    int fd;
    short events;
    int64_t deadline_ms;
} fiber_wait_t;

typedef enum { FIBER_DONE, FIBER_WAITING } fiber_state_t;

/* A fiber with a stack of stack_bytes (rounded up to pages, with a guard
 * page below it that faults on overflow); NULL when out of memory. */
fiber_t *fiber_new(size_t stack_bytes);
/* Frees a fiber that is not between fiber_wait and its fiber_continue,
 * after its locals' destructors. NULL is fine. */
void fiber_free(fiber_t *f);

/* Runs fn(arg) on f from this thread's own stack, until fn returns
 * (FIBER_DONE: f may start another) or waits (FIBER_WAITING: see
 * fiber_waits_for, then fiber_continue). */
fiber_state_t fiber_start(fiber_t *f, void (*fn)(void *arg), void *arg);
/* Goes on with a waiting fiber; ready says whether its descriptor became
 * ready (false: the deadline came first). Same thread as fiber_start. */
fiber_state_t fiber_continue(fiber_t *f, bool ready);
/* What a waiting fiber waits for. */
const fiber_wait_t *fiber_waits_for(const fiber_t *f);

/* The fiber running on this thread; NULL on the thread's own stack. */
fiber_t *fiber_self(void);

/* Waits until fd is ready for events or deadline_ms has passed: true when
 * ready. On a fiber it yields (fiber_start or fiber_continue returns
 * FIBER_WAITING); elsewhere it blocks in poll(). fd -1: the deadline only
 * (a pause; false). A spurious true is possible: callers try their I/O. */
bool fiber_wait(int fd, short events, int64_t deadline_ms);

/* The slot key of fiber f; NULL until set. */
void **fiber_local(fiber_t *f, fiber_local_key_t key);
/* fn frees a slot key's value when its fiber is freed (set once, at start-up). */
void fiber_local_destructor(fiber_local_key_t key, void (*fn)(void *value));

#endif
