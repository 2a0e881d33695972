/* The engine pool (pool.h). Workers are slots of one engine each, guarded
 * by the pool's lock: a job takes a slot that is up and free, runs outside
 * the lock, and gives it back up or dead. One supervisor thread (re)starts
 * dead slots, each after its backoff, so that no job ever waits on an
 * engine's start; a slot that keeps failing waits longer each time, up to
 * backoff_max_ms, and a job that succeeds resets it. */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/text.h"
#include "../../rules/base/clock.h"

enum {
    DEFAULT_WORKERS = 1,
    DEFAULT_BACKOFF_MIN_MS = 100,
    DEFAULT_BACKOFF_MAX_MS = 10000,
    SUPERVISOR_IDLE_MS = 1000,
    DEFAULT_HANDSHAKE_MS = 5000, /* uci.h's default handshake_timeout_ms */
    ERR_SIZE = 256,
};

/* SLOT_HELD: up and idle, but kept for a caller (engine_pool_hold). */
typedef enum { SLOT_DOWN = 0, SLOT_UP, SLOT_BUSY, SLOT_STARTING, SLOT_HELD } slot_state_t;

typedef struct {
    engine_t *engine;           /* NULL until it first started */
    slot_state_t state;
    uint64_t restart_at_ms;     /* SLOT_DOWN: when the supervisor may start it */
    int backoff_ms;             /* the wait after its next failure */
    char session[ENGINE_SESSION_MAX]; /* the game it last served ("" none) */
} slot_t;

struct engine_pool {
    engine_pool_config_t cfg;
    char *path;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a slot changed state, or the pool closes */
    pthread_t supervisor;
    bool supervisor_started, closing;
    slot_t *slots;
    unsigned waiting;
    unsigned priority_waiting; /* of the waiting, those that go first (holds) */
    uint64_t jobs, jobs_failed, jobs_retried, restarts, start_failures, timeouts, crashes, garbage;
    char name[ENGINE_NAME_MAX];
    unsigned variants; /* engine_variants() of the engine that started last (0: none yet) */
};

static bool engine_dead_after(engine_status_t s)
{
    return s != ENGINE_OK && s != ENGINE_ENO_MOVES && s != ENGINE_EINVALID;
}

/* A slot failed (to start, or in a job): down until its backoff passes.
 * Called with the lock held. */
static void slot_failed(engine_pool_t *pool, slot_t *slot)
{
    slot->state = SLOT_DOWN;
    slot->session[0] = '\0';
    slot->restart_at_ms = clock_now_ms() + (uint64_t)slot->backoff_ms;
    slot->backoff_ms = slot->backoff_ms * 2 > pool->cfg.backoff_max_ms ? pool->cfg.backoff_max_ms : slot->backoff_ms * 2;
}

/* Starts (or restarts) the engine of slot, which is SLOT_STARTING and so
 * the supervisor's alone, outside the lock. */
static bool start_slot(engine_pool_t *pool, slot_t *slot)
{
    char err[ERR_SIZE];
    engine_status_t s = ENGINE_OK;
    if (slot->engine)
        s = engine_restart(slot->engine, err, sizeof err);
    else
        slot->engine = engine_start(&pool->cfg.engine, &s, err, sizeof err);
    return s == ENGINE_OK && slot->engine;
}

/* A slot's engine started: the pool's name and variants are its. Called
 * with the lock held (or before the supervisor runs). */
static void slot_started(engine_pool_t *pool, slot_t *slot)
{
    slot->state = SLOT_UP;
    if (!pool->name[0])
        text_copy(pool->name, sizeof pool->name, engine_name(slot->engine));
    pool->variants = engine_variants(slot->engine);
}

/* The supervisor: starts every down slot whose backoff has passed, then
 * sleeps until the next one is due (or a slot goes down). */
static void *supervise(void *arg)
{
    engine_pool_t *pool = arg;
    pthread_mutex_lock(&pool->lock);
    while (!pool->closing) {
        uint64_t now = clock_now_ms(), next = now + SUPERVISOR_IDLE_MS;
        slot_t *due = NULL;
        for (unsigned i = 0; i < pool->cfg.workers; i++) {
            slot_t *slot = &pool->slots[i];
            if (slot->state != SLOT_DOWN)
                continue;
            if (slot->restart_at_ms <= now) {
                due = slot;
                break;
            }
            if (slot->restart_at_ms < next)
                next = slot->restart_at_ms;
        }
        if (due) {
            bool first = due->engine == NULL;
            due->state = SLOT_STARTING;
            pthread_mutex_unlock(&pool->lock);
            bool ok = start_slot(pool, due);
            pthread_mutex_lock(&pool->lock);
            if (!first)
                pool->restarts++;
            if (ok) {
                slot_started(pool, due);
            } else {
                pool->start_failures++;
                slot_failed(pool, due);
            }
            pthread_cond_broadcast(&pool->changed);
            continue;
        }
        struct timespec until = clock_deadline_after_ms((long)(next - now));
        pthread_cond_timedwait(&pool->changed, &pool->lock, &until);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

engine_pool_t *engine_pool_new(const engine_pool_config_t *cfg)
{
    engine_pool_t *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->cfg = *cfg;
    if (!pool->cfg.workers)
        pool->cfg.workers = DEFAULT_WORKERS;
    if (pool->cfg.backoff_min_ms <= 0)
        pool->cfg.backoff_min_ms = DEFAULT_BACKOFF_MIN_MS;
    if (pool->cfg.backoff_max_ms < pool->cfg.backoff_min_ms)
        pool->cfg.backoff_max_ms = pool->cfg.backoff_min_ms > DEFAULT_BACKOFF_MAX_MS ? pool->cfg.backoff_min_ms
                                                                                      : DEFAULT_BACKOFF_MAX_MS;
    bool configured = cfg->engine.path && cfg->engine.path[0];
    pool->path = configured ? strdup(cfg->engine.path) : NULL;
    pool->cfg.engine.path = pool->path;
    pool->slots = calloc(pool->cfg.workers, sizeof *pool->slots);
    pthread_condattr_t attr;
    bool ok = pool->slots && (!configured || pool->path) && pthread_condattr_init(&attr) == 0;
    if (ok) {
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        ok = pthread_cond_init(&pool->changed, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (!ok || pthread_mutex_init(&pool->lock, NULL) != 0) {
        free(pool->slots);
        free(pool->path);
        free(pool);
        return NULL;
    }
    for (unsigned i = 0; i < pool->cfg.workers; i++)
        pool->slots[i] = (slot_t){ .state = SLOT_DOWN, .backoff_ms = pool->cfg.backoff_min_ms };
    if (!configured)
        return pool;
    /* The first starts run here, so that a server is ready with its engines. */
    for (unsigned i = 0; i < pool->cfg.workers; i++) {
        slot_t *slot = &pool->slots[i];
        if (start_slot(pool, slot)) {
            slot_started(pool, slot);
        } else {
            pool->start_failures++;
            slot_failed(pool, slot);
        }
    }
    if (pthread_create(&pool->supervisor, NULL, supervise, pool) != 0) {
        engine_pool_free(pool);
        return NULL;
    }
    pool->supervisor_started = true;
    return pool;
}

void engine_pool_free(engine_pool_t *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->closing = true;
    pthread_cond_broadcast(&pool->changed);
    for (;;) {
        bool busy = pool->waiting > 0;
        for (unsigned i = 0; i < pool->cfg.workers && !busy; i++)
            busy = pool->slots[i].state == SLOT_BUSY || pool->slots[i].state == SLOT_HELD;
        if (!busy)
            break;
        pthread_cond_wait(&pool->changed, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    if (pool->supervisor_started)
        pthread_join(pool->supervisor, NULL);
    for (unsigned i = 0; i < pool->cfg.workers; i++)
        engine_free(pool->slots[i].engine);
    pthread_cond_destroy(&pool->changed);
    pthread_mutex_destroy(&pool->lock);
    free(pool->slots);
    free(pool->path);
    free(pool);
}

/* Whether a slot could come up by deadline: one starting, or one down
 * whose restart is due by then. Called with the lock held. */
static bool may_come_up(const engine_pool_t *pool, uint64_t deadline)
{
    for (unsigned i = 0; i < pool->cfg.workers; i++) {
        const slot_t *slot = &pool->slots[i];
        if (slot->state == SLOT_STARTING || (slot->state == SLOT_DOWN && slot->restart_at_ms <= deadline))
            return true;
    }
    return false;
}

/* Takes a free slot, preferring one other than avoid and one that last
 * served session; waits until deadline. A waiter without priority leaves
 * free slots to those with it (holds: the computer's turns go before
 * analyses). NULL with *status EBUSY or EDOWN. Called with the lock held. */
static slot_t *take_slot(engine_pool_t *pool, const slot_t *avoid, const char *session, bool priority,
                         uint64_t deadline, engine_status_t *status)
{
    pool->waiting++;
    pool->priority_waiting += priority;
    slot_t *taken = NULL;
    for (;;) {
        slot_t *any = NULL;
        for (unsigned i = 0; i < pool->cfg.workers && (priority || !pool->priority_waiting); i++) {
            slot_t *slot = &pool->slots[i];
            if (slot->state != SLOT_UP)
                continue;
            bool same = session && !strcmp(slot->session, session);
            if (slot != avoid && same) {
                any = slot;
                break;
            }
            if (!any || (any == avoid && slot != avoid))
                any = slot;
        }
        if (any) {
            taken = any;
            break;
        }
        bool up = false; /* running: busy, held, or free but left to a hold */
        for (unsigned i = 0; i < pool->cfg.workers && !up; i++)
            up = pool->slots[i].state == SLOT_BUSY || pool->slots[i].state == SLOT_HELD || pool->slots[i].state == SLOT_UP;
        uint64_t now = clock_now_ms();
        if (pool->closing || (!up && !may_come_up(pool, deadline))) {
            *status = ENGINE_EDOWN;
            break;
        }
        if (now >= deadline) {
            *status = ENGINE_EBUSY;
            break;
        }
        struct timespec until = clock_deadline_after_ms((long)(deadline - now));
        pthread_cond_timedwait(&pool->changed, &pool->lock, &until);
    }
    pool->waiting--;
    pool->priority_waiting -= priority;
    if (pool->closing || (priority && !pool->priority_waiting))
        pthread_cond_broadcast(&pool->changed); /* engine_pool_free waits for the waiters; the others may take now */
    if (taken)
        taken->state = SLOT_BUSY;
    return taken;
}

/* One try of a job on slot (SLOT_BUSY, so the caller's alone). */
static engine_status_t run_on(slot_t *slot, const char *session, bool chess960, engine_job_fn fn, void *ctx,
                              char *err, size_t err_size)
{
    engine_status_t s = ENGINE_OK;
    if (session && strcmp(slot->session, session)) {
        s = engine_new_game(slot->engine, chess960, err, err_size);
        if (s == ENGINE_OK)
            text_copy(slot->session, sizeof slot->session, session);
        else
            return s;
    }
    return fn(slot->engine, ctx, err, err_size);
}

static void count_failure(engine_pool_t *pool, engine_status_t s)
{
    if (s == ENGINE_ETIMEOUT)
        pool->timeouts++;
    else if (s == ENGINE_EGARBAGE)
        pool->garbage++;
    else
        pool->crashes++;
}

/* Until when the retry of a job whose engine just failed may wait for an
 * engine: the caller's deadline, or, when later, the shortest backoff and
 * one handshake from now, so that a job that spent its time on a hung
 * engine is still retried on the restarted one (the only one, in a pool of
 * one). An engine whose backoff has grown longer is not waited for. */
static uint64_t retry_deadline(const engine_pool_t *pool, uint64_t wait_deadline_ms)
{
    int handshake = pool->cfg.engine.handshake_timeout_ms > 0 ? pool->cfg.engine.handshake_timeout_ms
                                                               : DEFAULT_HANDSHAKE_MS;
    uint64_t by = clock_now_ms() + (uint64_t)pool->cfg.backoff_min_ms + (uint64_t)handshake;
    return by > wait_deadline_ms ? by : wait_deadline_ms;
}

/* engine_pool_run and engine_pool_run_held: on the held slot first when
 * hold names one, else on a slot taken (with priority for a hold's job); a
 * hold keeps the slot its job ends on, when that is alive. */
static engine_status_t run_job(engine_pool_t *pool, engine_hold_t *hold, const char *session, bool chess960,
                               engine_job_fn fn, void *ctx, uint64_t wait_deadline_ms, char *err, size_t err_size)
{
    if (err_size)
        err[0] = '\0';
    if (!pool || !pool->path) {
        text_copy(err, err_size, "this server runs no engine");
        return ENGINE_EDOWN;
    }
    engine_status_t s = ENGINE_EDOWN;
    const slot_t *failed = NULL;
    uint64_t deadline = wait_deadline_ms;
    pthread_mutex_lock(&pool->lock);
    for (int attempt = 0; attempt < 2; attempt++) {
        engine_status_t taken = ENGINE_EDOWN;
        slot_t *slot = NULL;
        if (hold && hold->slot) {
            slot = hold->slot;
            hold->slot = NULL;
            slot->state = SLOT_BUSY;
        } else {
            slot = take_slot(pool, failed, session, hold != NULL, deadline, &taken);
        }
        if (!slot && failed)
            break; /* no engine for the retry: the answer is the failure, its err kept */
        if (!slot) {
            s = taken;
            text_copy(err, err_size, s == ENGINE_EBUSY ? "every engine is busy" : "no engine is running");
            break;
        }
        pool->jobs += attempt == 0;
        pool->jobs_retried += attempt == 1;
        pthread_mutex_unlock(&pool->lock);
        s = run_on(slot, session, chess960, fn, ctx, err, err_size);
        pthread_mutex_lock(&pool->lock);
        if (!engine_dead_after(s) && engine_alive(slot->engine)) {
            slot->state = hold ? SLOT_HELD : SLOT_UP;
            if (hold)
                hold->slot = slot;
            slot->backoff_ms = pool->cfg.backoff_min_ms;
            pthread_cond_broadcast(&pool->changed);
            break;
        }
        count_failure(pool, s);
        slot_failed(pool, slot);
        if (!engine_dead_after(s))
            s = ENGINE_ECRASHED; /* answered, but the engine died with it */
        failed = slot;
        deadline = retry_deadline(pool, wait_deadline_ms);
        pthread_cond_broadcast(&pool->changed);
    }
    if (s != ENGINE_OK && s != ENGINE_ENO_MOVES && s != ENGINE_EINVALID)
        pool->jobs_failed++;
    pthread_mutex_unlock(&pool->lock);
    return s;
}

engine_status_t engine_pool_run(engine_pool_t *pool, const char *session, bool chess960, engine_job_fn fn, void *ctx,
                                uint64_t wait_deadline_ms, char *err, size_t err_size)
{
    return run_job(pool, NULL, session, chess960, fn, ctx, wait_deadline_ms, err, err_size);
}

engine_status_t engine_pool_run_held(engine_pool_t *pool, engine_hold_t *hold, const char *session, bool chess960,
                                     engine_job_fn fn, void *ctx, uint64_t wait_deadline_ms, char *err, size_t err_size)
{
    return run_job(pool, hold, session, chess960, fn, ctx, wait_deadline_ms, err, err_size);
}

engine_status_t engine_pool_hold(engine_pool_t *pool, uint64_t wait_deadline_ms, engine_hold_t *hold)
{
    hold->slot = NULL;
    if (!pool || !pool->path)
        return ENGINE_EDOWN;
    engine_status_t status = ENGINE_EDOWN;
    pthread_mutex_lock(&pool->lock);
    slot_t *slot = take_slot(pool, NULL, NULL, true, wait_deadline_ms, &status);
    if (slot) {
        slot->state = SLOT_HELD;
        hold->slot = slot;
        status = ENGINE_OK;
    }
    pthread_mutex_unlock(&pool->lock);
    return status;
}

void engine_pool_release(engine_pool_t *pool, engine_hold_t *hold)
{
    if (!pool || !hold->slot)
        return;
    pthread_mutex_lock(&pool->lock);
    slot_t *slot = hold->slot;
    hold->slot = NULL;
    if (slot->state == SLOT_HELD)
        slot->state = SLOT_UP;
    pthread_cond_broadcast(&pool->changed);
    pthread_mutex_unlock(&pool->lock);
}

bool engine_pool_has_idle(engine_pool_t *pool)
{
    if (!pool || !pool->path)
        return false;
    pthread_mutex_lock(&pool->lock);
    bool idle = false;
    for (unsigned i = 0; i < pool->cfg.workers && !idle; i++)
        idle = pool->slots[i].state == SLOT_UP;
    pthread_mutex_unlock(&pool->lock);
    return idle;
}

void engine_pool_stats(engine_pool_t *pool, engine_pool_stats_t *out)
{
    *out = (engine_pool_stats_t){ 0 };
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    out->configured = pool->path != NULL;
    out->workers = out->configured ? pool->cfg.workers : 0;
    for (unsigned i = 0; i < pool->cfg.workers && out->configured; i++) {
        slot_state_t state = pool->slots[i].state;
        out->up += state == SLOT_UP || state == SLOT_BUSY || state == SLOT_HELD;
        out->busy += state == SLOT_BUSY;
        out->held += state == SLOT_HELD;
    }
    out->waiting = pool->waiting;
    out->priority_waiting = pool->priority_waiting;
    out->jobs = pool->jobs;
    out->jobs_failed = pool->jobs_failed;
    out->jobs_retried = pool->jobs_retried;
    out->restarts = pool->restarts;
    out->start_failures = pool->start_failures;
    out->timeouts = pool->timeouts;
    out->crashes = pool->crashes;
    out->garbage = pool->garbage;
    text_copy(out->name, sizeof out->name, pool->name);
    out->variants = pool->variants;
    pthread_mutex_unlock(&pool->lock);
}

engine_status_t engine_pool_for_variant(engine_pool_t *chess, engine_pool_t *variants, variant_t variant,
                                        engine_pool_t **out)
{
    *out = NULL;
    if (variant == VARIANT_STANDARD) {
        *out = chess;
        return chess && chess->path ? ENGINE_OK : ENGINE_EDOWN;
    }
    if (!variants || !variants->path)
        return ENGINE_EINVALID;
    pthread_mutex_lock(&variants->lock);
    unsigned plays = variants->variants;
    pthread_mutex_unlock(&variants->lock);
    if (!plays)
        return ENGINE_EDOWN; /* none has started yet: what it plays is not known */
    if (!(plays & 1u << variant))
        return ENGINE_EINVALID;
    *out = variants;
    return ENGINE_OK;
}
