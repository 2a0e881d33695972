/* The first-move sweep (first_moves.h): one thread, a scan of the due
 * deadlines every sweep_ms, at most SWEEP_BATCH games read a round. */
#include "first_moves.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "../../store/engine_jobs.h"
#include "../../store/store.h"
#include "../../rules/base/clock.h"

enum { DEFAULT_SWEEP_MS = 250, SWEEP_BATCH = 32, NAP_MS = 50 };

struct first_moves {
    game_svc_config_t games;
    unsigned sweep_ms;
    atomic_bool stopping;
    pthread_t thread;
};

static void nap(unsigned ms)
{
    struct timespec pause = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

/* One due deadline: the game read (which aborts it once its grace passed),
 * then its deadline dropped, or recorded again where it moved to (a
 * takeback restarted the turn). */
static void settle(first_moves_t *s, const store_engine_due_t *due)
{
    store_t *store = s->games.store;
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_read(&s->games, due->id, STORE_LOAD_CHANGE, &g, &out);
    if (status == GAME_SVC_OK) {
        const game_t *game = &g.record.game;
        int64_t pending = game_first_move_deadline(game);
        if (pending && (pending != due->due_ms || g.record.version != due->version)) {
            if (store_first_move_due_set(store, due->id, g.record.version, pending) == STORE_OK
                && g.record.version != due->version)
                (void)store_first_move_due_clear(store, due->id, due->version);
        } else if (!pending) {
            (void)store_first_move_due_clear(store, due->id, due->version);
        }
        /* pending and unmoved: its read could not record the abort yet (the
         * clocks disagree by a little); the next round tries again. */
    } else if (status == GAME_SVC_ENOT_FOUND || status == GAME_SVC_EBAD_RECORD || status == GAME_SVC_EDAMAGED) {
        (void)store_first_move_due_clear(store, due->id, due->version);
    }
    game_svc_result_free(&out);
    game_svc_game_free(&g);
}

static void sweep(first_moves_t *s)
{
    int64_t now;
    store_engine_due_t due[SWEEP_BATCH];
    unsigned count = 0;
    store_set_deadline(0);
    if (store_engine_now(s->games.store, &now) != STORE_OK
        || store_first_move_due_scan(s->games.store, now, SWEEP_BATCH, due, &count) != STORE_OK)
        return;
    for (unsigned i = 0; i < count && !atomic_load(&s->stopping); i++)
        settle(s, &due[i]);
}

static void *run(void *arg)
{
    first_moves_t *s = arg;
    int64_t next = clock_now_ms();
    while (!atomic_load(&s->stopping)) {
        if (clock_now_ms() >= next) {
            sweep(s);
            next = clock_now_ms() + s->sweep_ms;
        }
        nap(NAP_MS < s->sweep_ms ? NAP_MS : s->sweep_ms);
    }
    return NULL;
}

first_moves_t *first_moves_start(const game_svc_config_t *games, unsigned sweep_ms)
{
    first_moves_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->games = *games;
    s->sweep_ms = sweep_ms ? sweep_ms : DEFAULT_SWEEP_MS;
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void first_moves_stop(first_moves_t *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    pthread_join(s->thread, NULL);
    free(s);
}
