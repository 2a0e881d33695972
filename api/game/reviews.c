/* The review workers (reviews.h). Each has a consumer name
 * ("<host>:<pid>:r<n>"), claims a job, resumes it at the first position
 * without a result, touches its lease before each search, and acks it once
 * done or failed for good; a search that failed leaves the job claimed, and
 * its lease brings it back. */
#include "reviews.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "../../store/reviews.h"
#include "../../store/store.h"
#include "../engine/review_math.h"

enum {
    IDLE_WAIT_MS = 250,       /* between looks at an empty queue, at first */
    IDLE_WAIT_MAX_MS = 2000,  /* the wait doubles while the queue stays empty, up to this */
    TROUBLE_WAIT_MS = 500,    /* after the store or the engine failed */
    DELIVERIES_MAX = 6,       /* a job handed out this often has failed for good */
    SEARCH_MARGIN_MS = 500,   /* a movetime search's deadline past its time */
};

typedef struct worker {
    struct reviews *reviews;
    pthread_t thread;
    bool started;
    char consumer[96];
    move_t *moves;   /* REVIEW_MAX_PLIES */
    uint64_t *keys;  /* REVIEW_MAX_PLIES + 1 */
} worker_t;

struct reviews {
    reviews_config_t cfg;
    atomic_bool stopping;
    worker_t *workers;
};

static void pause_ms(long ms)
{
    struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

/* --- the text forms --- */

void review_limit_format(const review_limit_t *limit, char out[REVIEW_LIMIT_TEXT_SIZE])
{
    if (limit->depth)
        snprintf(out, REVIEW_LIMIT_TEXT_SIZE, "depth %d", limit->depth);
    else if (limit->movetime_ms)
        snprintf(out, REVIEW_LIMIT_TEXT_SIZE, "movetime %d", limit->movetime_ms);
    else
        snprintf(out, REVIEW_LIMIT_TEXT_SIZE, "nodes %" PRIu64, limit->nodes ? limit->nodes : REVIEW_DEFAULT_NODES);
}

bool review_limit_parse(const char *text, review_limit_t *limit)
{
    char kind[16];
    unsigned long long value;
    *limit = (review_limit_t){ 0 };
    if (sscanf(text, "%15s %llu", kind, &value) != 2 || !value)
        return false;
    if (!strcmp(kind, "depth") && value <= 1000)
        limit->depth = (int)value;
    else if (!strcmp(kind, "movetime") && value <= 3600000)
        limit->movetime_ms = (int)value;
    else if (!strcmp(kind, "nodes"))
        limit->nodes = value;
    else
        return false;
    return true;
}

/* A result is "<cp|mate> <value> <worker>[ <uci>...]". */
static void position_format(const review_position_t *p, const position_t *pos, char *out, size_t size)
{
    int n = snprintf(out, size, "%s %d %s", p->is_mate ? "mate" : "cp", p->value, p->worker);
    position_t at = *pos;
    for (int i = 0; i < p->pv_count && n > 0 && (size_t)n + UCI_BUFFER_SIZE + 1 < size; i++) {
        char uci[UCI_BUFFER_SIZE];
        n += snprintf(out + n, size - (size_t)n, " %s", uci_format(&at, p->pv[i], uci));
        position_undo_t undo;
        position_make(&at, p->pv[i], &undo);
    }
}

bool review_position_parse(const char *text, const position_t *pos, review_position_t *out)
{
    char kind[8];
    int value, used = 0;
    *out = (review_position_t){ 0 };
    if (sscanf(text, "%7s %d %95s%n", kind, &value, out->worker, &used) != 3)
        return false;
    if (strcmp(kind, "cp") && strcmp(kind, "mate"))
        return false;
    out->is_mate = !strcmp(kind, "mate");
    out->value = value;
    position_t at = *pos;
    for (const char *p = text + used; *p && out->pv_count < REVIEW_PV_MAX;) {
        while (*p == ' ')
            p++;
        size_t length = strcspn(p, " ");
        if (!length)
            break;
        uci_text_t uci;
        if (!uci_read(p, length, &uci))
            return false;
        move_t move = uci_to_move(&at, &uci);
        if (!movegen_is_legal(&at, move))
            return false;
        out->pv[out->pv_count++] = move;
        position_undo_t undo;
        position_make(&at, move, &undo);
        p += length;
    }
    return true;
}

void review_event_format(uint64_t game_version, const char *status, int positions_done, int positions,
                         char out[REVIEW_EVENT_SIZE])
{
    /* The header of game_events.h: the game's version, not ended, no clock. */
    snprintf(out, REVIEW_EVENT_SIZE,
             "%" PRIu64 " 0 0 0 review\n{\"type\":\"review\",\"version\":%" PRIu64
             ",\"status\":\"%s\",\"positions_done\":%d,\"positions\":%d}",
             game_version, game_version, status, positions_done, positions);
}

/* --- one position --- */

typedef struct {
    const position_t *start;
    const move_t *moves;
    int move_count;
    engine_limits_t limits;
    int budget_ms;
    engine_result_t result;
} search_t;

static engine_status_t run_search(engine_t *e, void *ctx, char *err, size_t err_size)
{
    search_t *s = ctx;
    static const engine_strength_t full = { 0 };
    s->limits.deadline_ms = clock_now_ms() + (uint64_t)s->budget_ms;
    engine_status_t status = engine_set_strength(e, &full, err, err_size);
    if (status == ENGINE_OK)
        status = engine_search(e, s->start, s->moves, s->move_count, &s->limits, &s->result, err, err_size);
    return status;
}

/* Position k's result into out: by the rules when the game is over there,
 * else by the engine. */
static engine_status_t analyse_position(worker_t *w, engine_pool_t *pool, const char *id, const position_t *start,
                                        const position_t *pos, int k, const review_limit_t *limit,
                                        review_position_t *out)
{
    const reviews_config_t *c = &w->reviews->cfg;
    *out = (review_position_t){ 0 };
    snprintf(out->worker, sizeof out->worker, "%s", w->consumer);
    status_t st;
    status_evaluate(pos, w->keys, (size_t)k, &st);
    if (st.state == STATUS_CHECKMATE) {
        out->is_mate = true; /* mate 0: the side to move is mated */
        return ENGINE_OK;
    }
    if (st.state == STATUS_VARIANT_END && st.winner != COLOR_COUNT) {
        out->value = st.winner == WHITE ? REVIEW_CP_CEILING : -REVIEW_CP_CEILING; /* won by the variant's rules */
        return ENGINE_OK;
    }
    if (st.state != STATUS_ACTIVE)
        return ENGINE_OK; /* a draw: cp 0 */
    search_t s = { .start = start, .moves = w->moves, .move_count = k };
    s.limits = (engine_limits_t){ .depth = limit->depth, .nodes = limit->nodes, .multipv = 1 };
    s.limits.movetime_ms = limit->movetime_ms;
    s.budget_ms = limit->movetime_ms && limit->movetime_ms < c->max_think_ms ? limit->movetime_ms + SEARCH_MARGIN_MS
                                                                              : c->max_think_ms;
    char err[256];
    engine_status_t status = engine_pool_run(pool, id, start->chess960, run_search, &s,
                                             clock_now_ms() + (uint64_t)c->max_think_ms, err, sizeof err);
    if (status != ENGINE_OK || s.result.line_count < 1)
        return status != ENGINE_OK ? status : ENGINE_EGARBAGE;
    const engine_line_t *line = &s.result.lines[0];
    int sign = pos->side_to_move == WHITE ? 1 : -1; /* the engine speaks for the side to move */
    out->is_mate = line->is_mate;
    out->value = sign * line->value;
    if (out->is_mate && out->value == 0)
        out->value = -sign; /* never 0 from a search: a mate 0 is the rules' */
    out->pv[0] = s.result.bestmove;
    out->pv_count = 1;
    if (line->pv_count > 0 && line->pv[0] == s.result.bestmove)
        for (out->pv_count = 0; out->pv_count < line->pv_count && out->pv_count < REVIEW_PV_MAX; out->pv_count++)
            out->pv[out->pv_count] = line->pv[out->pv_count];
    return ENGINE_OK;
}

/* --- one job --- */

static void publish(worker_t *w, const char *id, uint64_t game_version, const char *status, int done, int positions)
{
    char message[REVIEW_EVENT_SIZE];
    review_event_format(game_version, status, done, positions, message);
    (void)store_review_publish(w->reviews->cfg.games.store, id, message);
}

/* Ends the job: the review's status (and why it failed), its event, the ack. */
static void finish(worker_t *w, const store_review_job_t *job, uint64_t game_version, const char *status,
                   const char *error, int done, int positions)
{
    store_t *store = w->reviews->cfg.games.store;
    if (store_review_status_set(store, job->id, job->version, status, error) != STORE_OK)
        return; /* the lease brings it back */
    publish(w, job->id, game_version, status, done, positions);
    (void)store_review_ack(store, job);
}

/* Reviews every position of rv without a result. */
static void run_review(worker_t *w, const store_review_job_t *job, const store_review_t *rv, const game_record_t *r)
{
    reviews_t *t = w->reviews;
    store_t *store = t->cfg.games.store;
    review_limit_t limit;
    int count = game_line_moves(&r->game.initial, rv->line, rv->line_length, w->moves, w->keys, REVIEW_MAX_PLIES);
    if (count < 0 || count != rv->count || !review_limit_parse(rv->limit, &limit)) {
        finish(w, job, r->version, "failed", "the stored review cannot be read", 0, rv->count + 1);
        return;
    }
    engine_pool_t *pool;
    engine_status_t es = engine_pool_for_variant(t->cfg.engines, t->cfg.variant_engines,
                                                 (variant_t)r->game.initial.variant, &pool);
    if (es == ENGINE_EINVALID) {
        finish(w, job, r->version, "failed", "no engine here plays this variant", 0, count + 1);
        return;
    }
    if (es != ENGINE_OK) {
        pause_ms(TROUBLE_WAIT_MS); /* an engine not started yet: the lease brings the job back */
        return;
    }
    int done = 0;
    for (int k = 0; k <= count; k++)
        done += rv->positions[k] != NULL;
    (void)store_review_status_set(store, job->id, job->version, "running", "");
    publish(w, job->id, r->version, "running", done, count + 1);
    position_t pos = r->game.initial;
    for (int k = 0; k <= count && !atomic_load(&t->stopping); k++) {
        if (k > 0) {
            position_undo_t undo;
            position_make(&pos, w->moves[k - 1], &undo);
        }
        if (rv->positions[k])
            continue;
        if (store_review_touch(store, w->consumer, t->cfg.lease_ms, job) != STORE_OK)
            return; /* another worker has it now, or the store failed: its lease decides */
        review_position_t result;
        if (analyse_position(w, pool, job->id, &r->game.initial, &pos, k, &limit, &result) != ENGINE_OK) {
            pause_ms(TROUBLE_WAIT_MS);
            return;
        }
        char text[STORE_REVIEW_TEXT_MAX];
        position_format(&result, &pos, text, sizeof text);
        bool current = false;
        if (store_review_position_set(store, job->id, job->version, k, text, &current) != STORE_OK)
            return;
        if (!current) {
            (void)store_review_ack(store, job); /* replaced by a review of a later version */
            return;
        }
        publish(w, job->id, r->version, "running", ++done, count + 1);
    }
    if (!atomic_load(&t->stopping))
        finish(w, job, r->version, "done", "", done, count + 1);
}

static void do_job(worker_t *w, const store_review_job_t *job)
{
    store_t *store = w->reviews->cfg.games.store;
    store_review_t rv;
    store_status_t s = store_review_read(store, job->id, &rv);
    if (s == STORE_ENOT_FOUND || s == STORE_ECORRUPT
        || (s == STORE_OK && (rv.version != job->version || !strcmp(rv.status, "done")
                              || !strcmp(rv.status, "failed")))) {
        (void)store_review_ack(store, job); /* stale: replaced, finished, or gone */
        store_review_free(&rv);
        return;
    }
    if (s != STORE_OK) {
        pause_ms(TROUBLE_WAIT_MS);
        return;
    }
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    game_svc_status_t gs = game_svc_read(&w->reviews->cfg.games, job->id, STORE_LOAD_CHANGE, &g, &out);
    if (job->deliveries > DELIVERIES_MAX)
        finish(w, job, gs == GAME_SVC_OK ? g.record.version : job->version, "failed",
               "the review failed on every worker that took it", 0, rv.count + 1);
    else if (gs == GAME_SVC_OK)
        run_review(w, job, &rv, &g.record);
    else if (gs == GAME_SVC_ENOT_FOUND)
        finish(w, job, job->version, "failed", "the game is gone", 0, rv.count + 1);
    else
        pause_ms(TROUBLE_WAIT_MS);
    game_svc_result_free(&out);
    game_svc_game_free(&g);
    store_review_free(&rv);
}

static void *work(void *arg)
{
    worker_t *w = arg;
    reviews_t *t = w->reviews;
    long idle_ms = IDLE_WAIT_MS;
    while (!atomic_load(&t->stopping)) {
        store_review_job_t job;
        store_set_deadline(0);
        store_status_t s = store_review_claim(t->cfg.games.store, w->consumer, t->cfg.lease_ms, &job);
        if (s == STORE_OK) {
            do_job(w, &job);
            idle_ms = IDLE_WAIT_MS;
        } else if (s == STORE_ENOT_FOUND || s == STORE_ECORRUPT) {
            /* An idle replica asks Redis less and less often, in slices that see a stop. */
            for (long waited = 0; waited < idle_ms && !atomic_load(&t->stopping); waited += IDLE_WAIT_MS)
                pause_ms(IDLE_WAIT_MS);
            idle_ms = idle_ms * 2 < IDLE_WAIT_MAX_MS ? idle_ms * 2 : IDLE_WAIT_MAX_MS;
        } else {
            pause_ms(TROUBLE_WAIT_MS);
        }
    }
    return NULL;
}

reviews_t *reviews_start(const reviews_config_t *cfg)
{
    reviews_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    if (!t->cfg.workers)
        t->cfg.workers = 1;
    t->workers = calloc(t->cfg.workers, sizeof *t->workers);
    if (!t->workers) {
        free(t);
        return NULL;
    }
    char host[64] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "chessd");
    for (unsigned i = 0; i < t->cfg.workers; i++) {
        worker_t *w = &t->workers[i];
        *w = (worker_t){ .reviews = t };
        snprintf(w->consumer, sizeof w->consumer, "%s:%ld:r%u", host, (long)getpid(), i);
        w->moves = malloc(sizeof *w->moves * REVIEW_MAX_PLIES);
        w->keys = malloc(sizeof *w->keys * (REVIEW_MAX_PLIES + 1));
        if (!w->moves || !w->keys || pthread_create(&w->thread, NULL, work, w) != 0) {
            reviews_stop(t);
            return NULL;
        }
        w->started = true;
    }
    return t;
}

void reviews_stop(reviews_t *t)
{
    if (!t)
        return;
    atomic_store(&t->stopping, true);
    for (unsigned i = 0; i < t->cfg.workers; i++) {
        worker_t *w = &t->workers[i];
        if (w->started)
            pthread_join(w->thread, NULL);
        free(w->moves);
        free(w->keys);
    }
    free(t->workers);
    free(t);
}
