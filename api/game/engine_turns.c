/* The computer's turns (engine_turns.h): worker threads, each with a Redis
 * consumer name ("<host>:<pid>:<n>") and a bell connection of its own, and
 * one chores thread that a turn being played never holds up. A turn that
 * failed is left claimed: its lease passes and a worker claims it again. */
#include "engine_turns.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../rules/rules.h"
#include "../../store/engine_jobs.h"
#include "../../store/store.h"
#include "../engine/levels.h"
#include "../../rules/base/clock.h"
#include "tokens.h"

enum {
    BELL_BLOCK_MS = 1000,   /* a wait for the bell; then quiet turns are looked for anyway */
    TROUBLE_WAIT_MS = 200,  /* after the store failed */
    DEFAULT_SWEEP_MS = 1000,
    SWEEP_BATCH = 32,
    PRUNE_EVERY_MS = 60000,          /* between removals of consumers gone */
    CONSUMER_IDLE_MS = 10 * 60000,   /* a consumer this quiet, owning nothing, is a worker gone */
    PRUNE_BATCH = 100,
    CORRUPT_MAX = 16,       /* unreadable entries dropped in a row before a pause */
};

typedef struct worker {
    struct engine_turns *turns;
    unsigned index;
    pthread_t thread;
    bool started;
    char consumer[STORE_ENGINE_CONSUMER_MAX];
    uint64_t rng;
    move_t *moves; /* GAME_MAX_PLIES: a game's moves for the engine */
    engine_hold_t hold;        /* the chess engine kept between turns */
    engine_hold_t variant_hold; /* the variant engine, once a turn in a variant took one */
    store_engine_bell_t *bell; /* the wait for turns, on its own connection */
} worker_t;

struct engine_turns {
    engine_turns_config_t cfg;
    atomic_bool stopping;
    worker_t *workers;
    pthread_t chores_thread;
    bool chores_started;
    atomic_ullong played, stale, failed, recovered, requeue_skipped, consumers_removed;
    /* The backlog as the chores last read it (backlog_ok: they could). */
    atomic_bool backlog_ok;
    atomic_ullong queued, in_flight, owners;
    atomic_llong oldest_age_ms;
};

static void pause_ms(long ms)
{
    struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

/* --- choosing a move: the level's search on the engine pool --- */

typedef struct {
    const position_t *start;
    const move_t *moves;
    int move_count;
    level_t level;
    engine_limits_t clock;
    uint64_t *rng;
    move_t chosen;
} search_t;

static engine_status_t run_level(engine_t *e, void *ctx, char *err, size_t err_size)
{
    search_t *s = ctx;
    return level_move(e, s->start, s->moves, s->move_count, &s->level, s->clock.has_clock ? &s->clock : NULL, 0,
                      s->rng, &s->chosen, err, err_size);
}

/* game_svc_choose_fn: the move of r's level in r's position, the engine's
 * clock as it stands at now_ms. A game in a variant is played on the
 * variant engine, held as the chess engine is. */
static bool choose(void *ctx, const game_record_t *r, const char *line, size_t length, int64_t now_ms,
                   char uci[UCI_BUFFER_SIZE])
{
    worker_t *w = ctx;
    variant_t variant = (variant_t)r->game.initial.variant;
    search_t s = { .start = &r->game.initial, .moves = w->moves, .rng = &w->rng };
    s.move_count = game_line_moves(&r->game.initial, line, length, w->moves, NULL, GAME_MAX_PLIES);
    if (s.move_count < 0
        || !(r->engine.level ? level_of_variant(r->engine.level, variant, &s.level) : level_of_elo(r->engine.elo, &s.level)))
        return false;
    engine_pool_t *pool;
    if (engine_pool_for_variant(w->turns->cfg.engines, w->turns->cfg.variant_engines, variant, &pool) != ENGINE_OK)
        return false; /* an engine not started yet, or a game made where the engine plays it: its lease brings it back */
    engine_hold_t *hold = pool == w->turns->cfg.engines ? &w->hold : &w->variant_hold;
    if (s.level.movetime_ms <= 0 || s.level.movetime_ms > w->turns->cfg.max_think_ms)
        s.level.movetime_ms = w->turns->cfg.max_think_ms;
    if (game_is_timed(&r->game)) {
        s.clock.has_clock = true;
        s.clock.wtime_ms = (long)game_clock_remaining(&r->game, WHITE, now_ms);
        s.clock.btime_ms = (long)game_clock_remaining(&r->game, BLACK, now_ms);
        /* UCI has no delay: a delay is told as an increment, the most a move may get back. */
        s.clock.winc_ms = (long)(r->game.clock.control[WHITE].increment_ms + r->game.clock.control[WHITE].delay_ms);
        s.clock.binc_ms = (long)(r->game.clock.control[BLACK].increment_ms + r->game.clock.control[BLACK].delay_ms);
        s.clock.movestogo = game_clock_moves_to_go(&r->game, (color_t)r->game.pos.side_to_move);
    }
    char err[256];
    uint64_t wait_until = clock_now_ms() + (uint64_t)w->turns->cfg.max_think_ms;
    engine_status_t status = engine_pool_run_held(pool, hold, r->id, r->game.initial.chess960, run_level, &s,
                                                  wait_until, err, sizeof err);
    if (status != ENGINE_OK)
        return false;
    position_t pos = r->game.initial;
    for (int i = 0; i < s.move_count; i++) {
        position_undo_t undo;
        position_make(&pos, w->moves[i], &undo);
    }
    uci_format(&pos, s.chosen, uci);
    return true;
}

/* --- jobs --- */

/* Plays one claimed job; acks it (and clears its intent) unless the turn
 * is still to be played. */
static void play_job(worker_t *w, const store_engine_job_t *job)
{
    engine_turns_t *t = w->turns;
    store_t *store = t->cfg.games.store;
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_engine_turn(&t->cfg.games, job->id, job->version, choose, w, &out);
    game_svc_result_free(&out);
    switch (status) {
    case GAME_SVC_OK:
        atomic_fetch_add(&t->played, 1);
        break;
    case GAME_SVC_ECONFLICT:
    case GAME_SVC_ENOT_FOUND:
    case GAME_SVC_ETIMED_OUT:
    case GAME_SVC_EREFUSED:
    case GAME_SVC_EBAD_RECORD:
    case GAME_SVC_EDAMAGED:
        atomic_fetch_add(&t->stale, 1);
        break;
    default: /* the engine or the store failed: the lease brings the job back */
        atomic_fetch_add(&t->failed, 1);
        return;
    }
    (void)store_engine_job_ack(store, job);
    (void)store_engine_due_clear(store, job->id, job->version);
}

/* Queues again the turns whose intent is overdue, and drops the intents
 * of turns that are gone. */
static void sweep(engine_turns_t *t)
{
    store_t *store = t->cfg.games.store;
    int64_t now;
    store_engine_due_t due[SWEEP_BATCH];
    unsigned count = 0;
    if (store_engine_now(store, &now) != STORE_OK || store_engine_due_scan(store, now, SWEEP_BATCH, due, &count) != STORE_OK)
        return;
    for (unsigned i = 0; i < count; i++) {
        game_svc_game_t g;
        game_svc_result_t out = { 0 };
        game_svc_status_t status = game_svc_read(&t->cfg.games, due[i].id, STORE_LOAD_CHANGE, &g, &out);
        bool turn = status == GAME_SVC_OK && g.record.version == due[i].version && game_svc_engine_has_turn(&g.record);
        if (turn) {
            /* Added again only when it is neither waiting nor being played. */
            bool added = false;
            if (store_engine_due_set(store, due[i].id, due[i].version, now + (int64_t)t->cfg.games.engine_lease_ms)
                    == STORE_OK
                && store_engine_turn_add(store, due[i].id, due[i].version, NULL, &added) == STORE_OK)
                atomic_fetch_add(added ? &t->recovered : &t->requeue_skipped, 1);
        } else if (status == GAME_SVC_OK || status == GAME_SVC_ENOT_FOUND || status == GAME_SVC_EBAD_RECORD
                   || status == GAME_SVC_EDAMAGED) {
            (void)store_engine_due_clear(store, due[i].id, due[i].version);
        }
        game_svc_result_free(&out);
        game_svc_game_free(&g);
    }
}

/* Reads the backlog for the metrics and readiness. */
static void read_backlog(engine_turns_t *t)
{
    store_engine_backlog_t b;
    bool ok = store_engine_backlog(t->cfg.games.store, NULL, &b) == STORE_OK;
    if (ok) {
        atomic_store(&t->queued, b.queued);
        atomic_store(&t->in_flight, b.in_flight);
        atomic_store(&t->owners, b.owners);
        atomic_store(&t->oldest_age_ms, b.oldest_queued_ms && b.now_ms > b.oldest_queued_ms
                                            ? b.now_ms - b.oldest_queued_ms : 0);
    }
    atomic_store(&t->backlog_ok, ok);
}

/* The chores: the sweep and the backlog every sweep_ms, the consumers of
 * workers gone every PRUNE_EVERY_MS. */
static void chores(engine_turns_t *t, uint64_t *next_sweep, uint64_t *next_prune)
{
    uint64_t now = clock_now_ms();
    if (now >= *next_sweep) {
        store_set_deadline(0);
        sweep(t);
        read_backlog(t);
        *next_sweep = clock_now_ms() + (uint64_t)t->cfg.sweep_ms;
    }
    if (now >= *next_prune) {
        unsigned removed = 0;
        unsigned idle = t->cfg.consumer_idle_ms ? t->cfg.consumer_idle_ms : CONSUMER_IDLE_MS;
        if (store_engine_consumers_prune(t->cfg.games.store, idle, PRUNE_BATCH, &removed) == STORE_OK)
            atomic_fetch_add(&t->consumers_removed, removed);
        *next_prune = clock_now_ms() + (t->cfg.consumer_idle_ms ? t->cfg.consumer_idle_ms / 2 + 1 : PRUNE_EVERY_MS);
    }
}

/* Holds the chess engine, or when this replica runs none (or none is up),
 * the variant engine: whether one came by wait_until. The turns claimed
 * after it take the other one when their variant needs it (choose). */
static bool hold_an_engine(worker_t *w, uint64_t wait_until)
{
    engine_turns_t *t = w->turns;
    engine_status_t s = engine_pool_hold(t->cfg.engines, wait_until, &w->hold);
    if (s == ENGINE_EDOWN && t->cfg.variant_engines)
        s = engine_pool_hold(t->cfg.variant_engines, wait_until, &w->variant_hold);
    return s == ENGINE_OK;
}

/* Plays every turn there is to claim on one engine held, ahead of the
 * analyses; gives it back once none is left. False when the store failed. */
static bool play_turns(worker_t *w)
{
    engine_turns_t *t = w->turns;
    store_t *store = t->cfg.games.store;
    /* Long enough for the search running now to end (an analysis, a think). */
    uint64_t wait_until = clock_now_ms() + 2 * (uint64_t)t->cfg.max_think_ms + 1000;
    if (!hold_an_engine(w, wait_until))
        return true; /* no engine came: the turns wait for the next look */
    bool ok = true;
    unsigned corrupt = 0; /* claims in a row that met what this code did not write */
    while (!atomic_load(&t->stopping)) {
        store_engine_job_t job;
        store_set_deadline(0);
        store_status_t s = store_engine_job_claim(store, w->consumer, t->cfg.games.engine_lease_ms, 0, &job);
        if (s == STORE_OK) {
            corrupt = 0;
            play_job(w, &job);
        } else if (s != STORE_ECORRUPT || ++corrupt > CORRUPT_MAX) {
            /* a key of the wrong type fails every claim: not a spin with the engine held */
            ok = s == STORE_ENOT_FOUND;
            break;
        }
    }
    engine_pool_release(t->cfg.engines, &w->hold);
    engine_pool_release(t->cfg.variant_engines, &w->variant_hold);
    return ok;
}

/* A worker's loop: play every turn there is to claim (play_turns), then
 * wait for the bell (a turn queued) and look again. */
static void *work(void *arg)
{
    worker_t *w = arg;
    engine_turns_t *t = w->turns;
    while (!atomic_load(&t->stopping)) {
        if (!play_turns(w)) {
            pause_ms(TROUBLE_WAIT_MS);
            continue;
        }
        store_status_t s = store_engine_bell_wait(w->bell, BELL_BLOCK_MS);
        if (s != STORE_OK && s != STORE_ENOT_FOUND)
            pause_ms(TROUBLE_WAIT_MS);
    }
    return NULL;
}

/* The chores' thread: the sweep of intents, the backlog for the metrics,
 * and the removal of the consumers of workers gone (chores). */
static void *do_chores(void *arg)
{
    engine_turns_t *t = arg;
    uint64_t next_sweep = clock_now_ms(), next_prune = clock_now_ms();
    while (!atomic_load(&t->stopping)) {
        chores(t, &next_sweep, &next_prune);
        uint64_t now = clock_now_ms(), next = next_sweep < next_prune ? next_sweep : next_prune;
        long wait = next > now ? (long)(next - now) : 0;
        pause_ms(wait < 50 ? wait : 50); /* 50 ms at a time, so that a stop is not kept waiting */
    }
    return NULL;
}

engine_turns_t *engine_turns_start(const engine_turns_config_t *cfg)
{
    engine_turns_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    if (!t->cfg.workers)
        t->cfg.workers = 1;
    if (t->cfg.sweep_ms <= 0)
        t->cfg.sweep_ms = DEFAULT_SWEEP_MS;
    t->workers = calloc(t->cfg.workers, sizeof *t->workers);
    if (!t->workers) {
        free(t);
        return NULL;
    }
    char host[64] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "chessd");
    uint32_t seed = 0;
    (void)tokens_random_below(UINT32_MAX, &seed);
    for (unsigned i = 0; i < t->cfg.workers; i++) {
        worker_t *w = &t->workers[i];
        *w = (worker_t){ .turns = t, .index = i };
        snprintf(w->consumer, sizeof w->consumer, "%s:%ld:%u", host, (long)getpid(), i);
        w->rng = ((uint64_t)seed << 32 | (clock_now_us() & 0xffffffffu)) ^ (0x9e3779b97f4a7c15ull * (i + 1));
        if (!w->rng)
            w->rng = 1;
        w->moves = malloc(sizeof *w->moves * GAME_MAX_PLIES);
        w->bell = store_engine_bell_new(t->cfg.games.store);
        if (!w->moves || !w->bell || pthread_create(&w->thread, NULL, work, w) != 0) {
            engine_turns_stop(t);
            return NULL;
        }
        w->started = true;
    }
    if (pthread_create(&t->chores_thread, NULL, do_chores, t) != 0) {
        engine_turns_stop(t);
        return NULL;
    }
    t->chores_started = true;
    return t;
}

void engine_turns_stop(engine_turns_t *t)
{
    if (!t)
        return;
    atomic_store(&t->stopping, true);
    if (t->chores_started)
        pthread_join(t->chores_thread, NULL);
    for (unsigned i = 0; i < t->cfg.workers; i++) {
        worker_t *w = &t->workers[i];
        if (w->started) {
            pthread_join(w->thread, NULL);
            /* A clean stop leaves no consumer behind (one that owns a turn
             * still is kept: its pending entry would go with it). */
            store_set_deadline(0);
            (void)store_engine_consumer_remove(t->cfg.games.store, w->consumer);
        }
        free(w->moves);
        store_engine_bell_free(w->bell);
    }
    free(t->workers);
    free(t);
}

void engine_turns_stats(engine_turns_t *t, engine_turns_stats_t *out)
{
    *out = (engine_turns_stats_t){ 0 };
    if (!t)
        return;
    out->played = atomic_load(&t->played);
    out->stale = atomic_load(&t->stale);
    out->failed = atomic_load(&t->failed);
    out->recovered = atomic_load(&t->recovered);
    out->requeue_skipped = atomic_load(&t->requeue_skipped);
    out->consumers_removed = atomic_load(&t->consumers_removed);
    out->backlog_known = atomic_load(&t->backlog_ok);
    out->queued = atomic_load(&t->queued);
    out->in_flight = atomic_load(&t->in_flight);
    out->owners = atomic_load(&t->owners);
    out->oldest_age_ms = (uint64_t)atomic_load(&t->oldest_age_ms);
}
