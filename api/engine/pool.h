/* The engine pool: a replica's engine workers, each one engine process
 * (uci.h) used by one job at a time. A job borrows a free engine for one
 * call of its function; an engine that crashed, hung or printed garbage is
 * killed and restarted (after a backoff that grows while restarts keep
 * failing), and the job is tried once more on another engine. A job never
 * waits past its own deadline for a first engine. Thread-safe. */
#ifndef CHESSD_API_ENGINE_POOL_H
#define CHESSD_API_ENGINE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uci.h"

typedef struct engine_pool engine_pool_t;

enum { ENGINE_SESSION_MAX = 64 }; /* bytes of a session name kept, the NUL included */

typedef struct {
    engine_options_t engine; /* engine.path NULL or "": a pool with no engine (every job ENGINE_EDOWN) */
    unsigned workers;        /* engines (1 by default) */
    int backoff_min_ms;      /* first wait before a restart: 100 by default */
    int backoff_max_ms;      /* the longest: 10000 by default */
} engine_pool_config_t;

/* Starts the workers' engines. An engine that cannot start is retried
 * later; the pool is made even when none starts (stats tell). NULL only
 * when memory or threads run out. */
engine_pool_t *engine_pool_new(const engine_pool_config_t *cfg);
/* Waits for running jobs, then stops every engine. NULL is fine. */
void engine_pool_free(engine_pool_t *pool);

/* A job: runs on a borrowed engine, returns its status (any status but OK,
 * ENO_MOVES and EINVALID means the engine is dead and is restarted). */
typedef engine_status_t (*engine_job_fn)(engine_t *e, void *ctx, char *err, size_t err_size);

/* Runs fn(engine, ctx) on a free engine, waiting for one until
 * wait_deadline_ms (absolute clock_now_ms time; 0: no wait). session names
 * the game the job belongs to (NULL: none): when it is not the one the
 * engine last served, "ucinewgame" is sent first (engine_new_game, with
 * chess960). When fn fails
 * with the engine dead, it is run once more on another engine (or the same,
 * restarted: for that the retry may wait past wait_deadline_ms, by the
 * shortest backoff and one handshake); when no engine comes for it, the
 * first failure is the answer. ENGINE_EBUSY: none came free in time;
 * ENGINE_EDOWN: none is running (the pool has no engine, or every one
 * failed to start). */
engine_status_t engine_pool_run(engine_pool_t *pool, const char *session, bool chess960, engine_job_fn fn, void *ctx,
                                uint64_t wait_deadline_ms, char *err, size_t err_size);

/* A hold: an engine kept for one caller between its jobs (the computer's
 * turns: a worker holds an engine, claims a turn, plays it, claims the
 * next, so that no analysis takes the engine between two turns). Holders
 * wait ahead of engine_pool_run's callers. */
typedef struct {
    void *slot; /* the pool's; NULL: nothing held */
} engine_hold_t;

/* Waits for a free engine until wait_deadline_ms, ahead of every
 * engine_pool_run waiting, and keeps it for hold: ENGINE_OK, else
 * ENGINE_EBUSY or ENGINE_EDOWN with nothing held. */
engine_status_t engine_pool_hold(engine_pool_t *pool, uint64_t wait_deadline_ms, engine_hold_t *hold);
/* engine_pool_run on the engine held (when the hold has one; else on one
 * taken ahead of engine_pool_run's waiters); the engine the job ends on,
 * alive, is held after it, and when none is, the hold is empty. */
engine_status_t engine_pool_run_held(engine_pool_t *pool, engine_hold_t *hold, const char *session, bool chess960,
                                     engine_job_fn fn, void *ctx, uint64_t wait_deadline_ms, char *err, size_t err_size);
/* Gives the held engine back (nothing held: nothing done). */
void engine_pool_release(engine_pool_t *pool, engine_hold_t *hold);

/* Whether an engine is running and free now (a hint: it may be taken next). */
bool engine_pool_has_idle(engine_pool_t *pool);

typedef struct {
    bool configured;          /* the pool has an engine path */
    unsigned workers;         /* engines the pool keeps */
    unsigned up;              /* running now */
    unsigned busy;            /* running a job now */
    unsigned held;            /* kept for the computer's turns between their jobs */
    unsigned waiting;         /* jobs waiting for an engine */
    unsigned priority_waiting; /* of them, holds (the computer's turns) */
    uint64_t jobs, jobs_failed, jobs_retried;
    uint64_t restarts, start_failures;
    uint64_t timeouts, crashes, garbage; /* failures, by kind */
    char name[ENGINE_NAME_MAX];        /* the engine's "id name", "" before any started */
    unsigned variants;                 /* what it plays (engine_variants), 0 before any started */
} engine_pool_stats_t;

void engine_pool_stats(engine_pool_t *pool, engine_pool_stats_t *out);

/* Which pool plays variant: chess (the --engine pool) for standard chess
 * and Chess960, variants (the --variant-engine pool) for the others it
 * lists (engine_variants of the engine that started last). ENGINE_OK with
 * *out set; for standard chess ENGINE_EDOWN when chess has no engine path;
 * for a variant ENGINE_EDOWN while no variant engine has started yet (what
 * it plays is not known), ENGINE_EINVALID when no engine here plays it.
 * Either pool may be NULL. */
engine_status_t engine_pool_for_variant(engine_pool_t *chess, engine_pool_t *variants, variant_t variant,
                                        engine_pool_t **out);

#endif
