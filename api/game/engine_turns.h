/* The computer's turns in stored games: worker threads take engine jobs
 * from Redis (store/engine_jobs.h's protocol: each client's turns in a queue
 * of its own, served in turn). Each turn is played on an engine held ahead
 * of analyses, through the game service's compare-and-set; a sweep queues
 * again the turns whose job was lost. Any replica with an engine (or a
 * variant engine) and a store runs them; the turns themselves live in Redis. */
#ifndef CHESSD_API_GAME_ENGINE_TURNS_H
#define CHESSD_API_GAME_ENGINE_TURNS_H

#include <stdint.h>

#include "../engine/pool.h"
#include "service.h"

typedef struct engine_turns engine_turns_t;

typedef struct {
    game_svc_config_t games;  /* the service's settings (its engine_lease_ms is the jobs' lease) */
    engine_pool_t *engines;   /* standard chess and Chess960 */
    engine_pool_t *variant_engines; /* the other variants (engine_pool_for_variant); NULL: none */
    unsigned workers;         /* threads taking jobs: one per engine worker */
    int max_think_ms;         /* the longest a turn's search may take */
    int sweep_ms;             /* between sweeps for lost turns (1000 by default) */
    unsigned consumer_idle_ms; /* a consumer idle this long with nothing pending is removed (0: 10 minutes) */
} engine_turns_config_t;

/* Starts the workers and the sweep. NULL when threads or memory run out. */
engine_turns_t *engine_turns_start(const engine_turns_config_t *cfg);
/* Stops taking jobs (a turn being played finishes), joins the threads, frees. NULL is fine. */
void engine_turns_stop(engine_turns_t *turns);

typedef struct {
    uint64_t played;    /* turns played: a move, or a takeback accepted */
    uint64_t stale;     /* jobs for a turn already gone (a later version, the game over, a duplicate) */
    uint64_t failed;    /* turns left for another try: the engine gave no move, or the store failed */
    uint64_t recovered; /* turns queued again by the sweep: their job was really missing */
    uint64_t requeue_skipped;   /* turns the sweep found overdue but waiting or being played: not queued again */
    uint64_t consumers_removed; /* consumers of workers gone, removed */
    bool backlog_known;         /* the backlog below was read at the last sweep */
    uint64_t queued, in_flight, owners; /* turns waiting, being played, and the clients they are for */
    uint64_t oldest_age_ms;     /* how long the oldest waiting turn has waited */
} engine_turns_stats_t;

void engine_turns_stats(engine_turns_t *turns, engine_turns_stats_t *out);

#endif
