/* See fiber_pool.h. Each loop's part of the pool is made on its first job
 * and touched by that loop's thread alone: no lock. A fiber that waits is
 * taken up again by loop_watch's call; one that ends takes the next job
 * waiting, or goes back to the idle ones. */
#include "fiber_pool.h"

#include <stdlib.h>

#include "../store/fiber.h"
#include "http/loop.h"

enum {
    LOOPS_MAX = 1024, /* --threads' bound */
#if defined(__SANITIZE_ADDRESS__)
    STACK_BYTES = 4u << 20, /* AddressSanitizer's frames are several times larger */
#else
    STACK_BYTES = 1u << 20, /* reserved, not committed: a fiber touches a few pages of it */
#endif
};

typedef struct {
    void (*fn)(void *arg);
    void *arg;
} job_t;

struct part;

typedef struct {
    fiber_t *fiber;
    struct part *part;
} pool_fiber_t;

/* One loop's fibers and waiting jobs. */
typedef struct part {
    fiber_pool_t *pool;
    loop_t *loop;
    pool_fiber_t *fibers; /* made so far: made of them */
    unsigned made;
    pool_fiber_t **idle;
    unsigned idle_count;
    job_t *queue; /* a ring of pool->queue_max */
    unsigned head, count;
} part_t;

struct fiber_pool {
    unsigned fibers, queue_max;
    part_t *parts[LOOPS_MAX];
};

fiber_pool_t *fiber_pool_new(unsigned fibers, unsigned queue_max)
{
    fiber_pool_t *p = calloc(1, sizeof *p);
    if (p) {
        p->fibers = fibers ? fibers : 1;
        p->queue_max = queue_max;
    }
    return p;
}

static void on_ready(void *arg, bool ready);

/* Carries a fiber on from state: a wait is watched on its loop; an end
 * takes the next job waiting, if any. */
static void carry_on(pool_fiber_t *pf, fiber_state_t state)
{
    part_t *part = pf->part;
    for (;;) {
        if (state == FIBER_WAITING) {
            const fiber_wait_t *w = fiber_waits_for(pf->fiber);
            if (loop_watch(part->loop, w->fd, w->events, w->deadline_ms, on_ready, pf))
                return;
            state = fiber_continue(pf->fiber, false); /* out of memory: the wait ends unready */
            continue;
        }
        if (!part->count) {
            part->idle[part->idle_count++] = pf;
            return;
        }
        job_t job = part->queue[part->head];
        part->head = (part->head + 1) % part->pool->queue_max;
        part->count--;
        state = fiber_start(pf->fiber, job.fn, job.arg);
    }
}

static void on_ready(void *arg, bool ready)
{
    pool_fiber_t *pf = arg;
    carry_on(pf, fiber_continue(pf->fiber, ready));
}

/* This loop's part, made on its first job; NULL when out of memory. */
static part_t *part_of(fiber_pool_t *p, loop_t *loop)
{
    unsigned index = loop_index(loop);
    if (index >= LOOPS_MAX)
        return NULL;
    if (p->parts[index])
        return p->parts[index];
    part_t *part = calloc(1, sizeof *part);
    if (!part)
        return NULL;
    part->pool = p;
    part->loop = loop;
    part->fibers = calloc(p->fibers, sizeof *part->fibers);
    part->idle = calloc(p->fibers, sizeof *part->idle);
    part->queue = p->queue_max ? calloc(p->queue_max, sizeof *part->queue) : NULL;
    if (!part->fibers || !part->idle || (p->queue_max && !part->queue)) {
        free(part->fibers);
        free(part->idle);
        free(part->queue);
        free(part);
        return NULL;
    }
    return p->parts[index] = part;
}

bool fiber_pool_submit(void *pool, void (*fn)(void *arg), void *arg)
{
    fiber_pool_t *p = pool;
    loop_t *loop = p ? loop_current() : NULL;
    part_t *part = loop ? part_of(p, loop) : NULL;
    if (!part)
        return false;
    pool_fiber_t *pf = NULL;
    if (part->idle_count) {
        pf = part->idle[--part->idle_count];
    } else if (part->made < p->fibers) {
        fiber_t *f = fiber_new(STACK_BYTES);
        if (f) {
            pf = &part->fibers[part->made++];
            *pf = (pool_fiber_t){ f, part };
        }
    }
    if (!pf) {
        if (part->count >= p->queue_max)
            return false;
        part->queue[(part->head + part->count++) % p->queue_max] = (job_t){ fn, arg };
        return true;
    }
    carry_on(pf, fiber_start(pf->fiber, fn, arg));
    return true;
}

void fiber_pool_free(fiber_pool_t *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < LOOPS_MAX; i++) {
        part_t *part = p->parts[i];
        if (!part)
            continue;
        for (unsigned j = 0; j < part->made; j++)
            fiber_free(part->fibers[j].fiber);
        free(part->fibers);
        free(part->idle);
        free(part->queue);
        free(part);
    }
    free(p);
}
