/* The upgrade pass (upgrade.h): one thread a replica. It claims a pass in
 * Redis and walks the game keys a SCAN page at a time, its lease renewed
 * after each. Each game is read through the game service, which also ends
 * one whose deadline passed. Says on stderr what each pass did. */
#include "upgrade.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/base/clock.h"
#include "../../store/deadlines.h"
#include "../../store/game_upgrade.h"
#include "tokens.h"

enum {
    LEASE_MS = 600000,   /* a pass's lease, renewed after each page: a replica gone mid-pass leaves it this long */
    PAGE_KEYS = 200,     /* SCAN's COUNT */
    RETRY_MS = 60000,    /* after a failure, or at most between two looks at a pass not yet due */
    KEEP_ATTEMPTS = 3,   /* reads of a game that keeps changing under the keep */
    OWNER_SIZE = TOKENS_ID_SIZE + 8,
};

struct upgrade {
    game_svc_config_t games;
    char owner[OWNER_SIZE];
    char generation[STORE_UPGRADE_GENERATION_MAX];
    atomic_bool stopping;
    pthread_t thread;
};

/* What one pass did. */
typedef struct {
    upgrade_t *u;
    unsigned long long games, kept, indexed;
} pass_t;

/* Sleeps ms, waking early when the thread is stopped. */
static void pause_for(upgrade_t *u, int64_t ms)
{
    int64_t until = clock_now_ms() + ms;
    while (!atomic_load(&u->stopping) && clock_now_ms() < until) {
        struct timespec step = { 0, 100 * 1000000L };
        nanosleep(&step, NULL);
    }
}

/* One game met by the walk: an active one loses its expiry (while still at
 * the version read) and has its deadline indexed; the read itself ends one
 * whose deadline passed. A finished one keeps the expiry it has. */
static void adopt(void *ctx, const char *id)
{
    pass_t *p = ctx;
    p->games++;
    for (int attempt = 1; attempt <= KEEP_ATTEMPTS; attempt++) {
        game_svc_game_t g;
        game_svc_result_t out = { 0 };
        game_svc_status_t status = game_svc_read(&p->u->games, id, STORE_LOAD_CHANGE, &g, &out);
        bool active = status == GAME_SVC_OK && !game_is_over(&g.record.game);
        int64_t deadline = active ? game_flag_deadline(&g.record.game) : 0;
        store_status_t kept = active ? store_game_keep(p->u->games.store, id, g.record.version) : STORE_OK;
        game_svc_result_free(&out);
        game_svc_game_free(&g);
        if (active && kept == STORE_OK) {
            p->kept++;
            if (deadline && store_deadline_lower(p->u->games.store, id, deadline, NULL) == STORE_OK)
                p->indexed++;
        }
        if (kept != STORE_ECONFLICT)
            return;
    }
}

/* Walks every game key; false when the walk or the lease failed (the pass
 * is then left for its lease to lapse). */
static bool walk(pass_t *p)
{
    store_t *store = p->u->games.store;
    store_game_scan_t scan;
    memset(&scan, 0, sizeof scan);
    while (!scan.done) {
        if (atomic_load(&p->u->stopping) || store_game_scan(store, &scan, PAGE_KEYS, adopt, p) != STORE_OK
            || store_upgrade_renew(store, p->u->generation, p->u->owner, LEASE_MS) != STORE_OK)
            return false;
    }
    return true;
}

/* Runs pass number `pass` and records it; after the last, the first-move
 * index of the versions before goes (every game in it is indexed now). */
static void run_pass(upgrade_t *u, unsigned pass)
{
    pass_t p = { .u = u };
    int64_t began = clock_now_ms();
    if (!walk(&p) || store_upgrade_done(u->games.store, u->generation, u->owner, pass, UPGRADE_GAP_MS) != STORE_OK) {
        fprintf(stderr, "chessd: upgrade pass %u of %d was cut short; it is taken up again\n", pass, UPGRADE_PASSES);
        return;
    }
    if (pass == UPGRADE_PASSES)
        (void)store_deadline_drop_legacy(u->games.store);
    fprintf(stderr, "chessd: upgrade pass %u of %d: %llu games read, %llu active ones kept without expiry, %llu "
                    "deadlines indexed, in %lld ms\n",
            pass, UPGRADE_PASSES, p.games, p.kept, p.indexed, (long long)(clock_now_ms() - began));
}

static void *run(void *arg)
{
    upgrade_t *u = arg;
    while (!atomic_load(&u->stopping)) {
        store_upgrade_t step;
        store_set_deadline(0);
        if (store_upgrade_claim(u->games.store, u->generation, u->owner, LEASE_MS, UPGRADE_PASSES, &step)
            != STORE_OK)
            pause_for(u, RETRY_MS);
        else if (step.step == STORE_UPGRADE_DONE)
            break;
        else if (step.step == STORE_UPGRADE_WAIT)
            pause_for(u, step.wait_ms < RETRY_MS ? step.wait_ms : RETRY_MS);
        else
            run_pass(u, step.pass);
    }
    return NULL;
}

upgrade_t *upgrade_start(const game_svc_config_t *games)
{
    upgrade_t *u = calloc(1, sizeof *u);
    char id[TOKENS_ID_SIZE];
    if (!u || !tokens_new_id(id)) {
        free(u);
        return NULL;
    }
    snprintf(u->owner, sizeof u->owner, "replica-%s", id);
    snprintf(u->generation, sizeof u->generation, UPGRADE_GENERATION ":idle-%lld",
             (long long)(games->idle_end_ms / 1000));
    u->games = *games;
    if (pthread_create(&u->thread, NULL, run, u) != 0) {
        free(u);
        return NULL;
    }
    return u;
}

void upgrade_stop(upgrade_t *u)
{
    if (!u)
        return;
    atomic_store(&u->stopping, true);
    pthread_join(u->thread, NULL);
    free(u);
}
