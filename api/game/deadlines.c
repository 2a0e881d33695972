/* The deadline sweep (deadlines.h): one thread, one claim of the due
 * deadlines a round (every sweep_ms, at once again after a full batch),
 * each game read and its entry settled; and the feed's length now and then.
 * A sleeping game costs its one entry in Redis and nothing here. */
#include "deadlines.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "../../rules/base/clock.h"
#include "../../store/deadlines.h"
#include "../../store/finished_feed.h"
#include "finished.h"

enum {
    DEFAULT_SWEEP_MS = 250,
    SWEEP_BATCH = 32,
    NAP_MS = 50,
    LEASE_MS = 30000,     /* a claim a replica did not settle (it died, Redis was away) comes due again then */
    FEED_LENGTH_MS = 5000 /* between reads of the feed's length */
};

struct deadlines {
    game_svc_config_t games;
    unsigned sweep_ms;
    atomic_bool stopping;
    atomic_ullong claimed;
    atomic_llong feed_length; /* -1: not read yet */
    pthread_t thread;
};

static void nap(unsigned ms)
{
    struct timespec pause = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

/* A read that says the game will never need its entry. */
static bool gone(game_svc_status_t status)
{
    return status == GAME_SVC_ENOT_FOUND || status == GAME_SVC_EBAD_RECORD || status == GAME_SVC_EDAMAGED;
}

/* One claimed deadline: the game read (which records an end that came),
 * then its entry put at its deadline now, or cleared with the feed's step
 * once it is over. On any other failure the claim lapses and comes again;
 * so does a record of the first format past its deadline, which a read
 * cannot end (it is read without Redis's clock) until a change converts it. */
static void settle(deadlines_t *s, const store_deadline_t *due)
{
    store_t *store = s->games.store;
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_read(&s->games, due->id, STORE_LOAD_CHANGE, &g, &out);
    if (status == GAME_SVC_OK && game_is_over(&g.record.game))
        (void)game_finished_record(&s->games, &g.record, due->claim_ms);
    else if (status == GAME_SVC_OK && !(g.legacy && game_flag_deadline(&g.record.game) < due->claim_ms))
        (void)store_deadline_settle(store, due->id, due->claim_ms, game_flag_deadline(&g.record.game), NULL);
    else if (gone(status))
        (void)store_deadline_settle(store, due->id, due->claim_ms, 0, NULL);
    game_svc_result_free(&out);
    game_svc_game_free(&g);
}

/* One round; true when it claimed a full batch (more may be due). */
static bool sweep(deadlines_t *s)
{
    store_deadline_t due[SWEEP_BATCH];
    unsigned count = 0;
    store_set_deadline(0);
    if (store_deadline_claim(s->games.store, LEASE_MS, SWEEP_BATCH, due, &count, NULL) != STORE_OK)
        return false;
    atomic_fetch_add(&s->claimed, count);
    for (unsigned i = 0; i < count && !atomic_load(&s->stopping); i++)
        settle(s, &due[i]);
    return count == SWEEP_BATCH;
}

static void read_feed_length(deadlines_t *s)
{
    uint64_t length;
    if (store_feed_length(s->games.store, &length) == STORE_OK)
        atomic_store(&s->feed_length, length > INT64_MAX ? INT64_MAX : (long long)length);
}

static void *run(void *arg)
{
    deadlines_t *s = arg;
    int64_t next = clock_now_ms(), next_length = next;
    while (!atomic_load(&s->stopping)) {
        int64_t now = clock_now_ms();
        if (now >= next) {
            bool full = sweep(s);
            next = full ? clock_now_ms() : clock_now_ms() + s->sweep_ms;
        }
        if (now >= next_length) {
            read_feed_length(s);
            next_length = clock_now_ms() + FEED_LENGTH_MS;
        }
        if (clock_now_ms() < next)
            nap(NAP_MS < s->sweep_ms ? NAP_MS : s->sweep_ms);
    }
    return NULL;
}

deadlines_t *deadlines_start(const game_svc_config_t *games, unsigned sweep_ms)
{
    deadlines_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->games = *games;
    s->sweep_ms = sweep_ms ? sweep_ms : DEFAULT_SWEEP_MS;
    atomic_store(&s->feed_length, -1);
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void deadlines_stop(deadlines_t *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    pthread_join(s->thread, NULL);
    free(s);
}

void deadlines_stats(deadlines_t *s, deadlines_stats_t *out)
{
    *out = (deadlines_stats_t){ 0 };
    if (!s)
        return;
    out->claimed = atomic_load(&s->claimed);
    long long length = atomic_load(&s->feed_length);
    out->feed_known = length >= 0;
    out->feed_length = length >= 0 ? (uint64_t)length : 0;
}
