/* Tests for api/engine/pool.c, the engine pool: where jobs run, when
 * "ucinewgame" is sent, a failed job's one retry, the backoff while starts
 * fail, EBUSY and EDOWN, the counters, engine_pool_free while a job runs.
 * The engines are fakes (shell scripts written here that answer the
 * handshake and log what they read) and the real Stockfish
 * (/usr/games/stockfish, or $CHESSD_STOCKFISH). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../api/engine/pool.h"
#include "../../../rules/base/clock.h"
#include "../../support/tests.h"

static const char *const default_stockfish_path = "/usr/games/stockfish";
static const char *stockfish_path;
static char fake_dir[64];

enum {
    HANDSHAKE_MS = 10000, /* generous: a busy machine starves the niced engine */
    WAIT_MS = 10000,      /* the longest a test waits for a state it expects */
    GATE_MAX_MS = 5000, /* a held job is let go after this even when the test forgot it */
};

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    stockfish_path = getenv("CHESSD_STOCKFISH");
    if (!stockfish_path || !*stockfish_path)
        stockfish_path = default_stockfish_path;
    if (access(stockfish_path, X_OK) != 0) {
        fprintf(stderr, "\npool suite: %s is not an executable (%s); install the 'stockfish' package "
                        "(make deps) or set CHESSD_STOCKFISH\n", stockfish_path, strerror(errno));
        return 1;
    }
    return tests_temp_dir(fake_dir, "pool") ? 0 : 1;
}

static int suite_cleanup(void)
{
    tests_remove_dir(fake_dir);
    return 0;
}

/* A fake engine at fake_dir/name: it appends every line it reads to
 * <path>.log, answers "uci", "isready" and "go" (bestmove e2e4), and
 * exits at once, before any handshake, while <path>.broken exists. */
static const char *fake_engine(const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", fake_dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#!/bin/sh\n"
               "[ -e \"$0.broken\" ] && exit 1\n"
               "while read -r line; do\n"
               "  echo \"$line\" >> \"$0.log\"\n"
               "  case \"$line\" in\n"
               "    uci) echo 'id name Fake'; echo uciok ;;\n"
               "    isready) echo readyok ;;\n"
               "    go*) echo 'bestmove e2e4' ;;\n"
               "    quit) exit 0 ;;\n"
               "  esac\n"
               "done\n");
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
    return path;
}

/* What the fake at path has logged since *seen bytes (advanced), into out. */
static void logged_since(const char *path, long *seen, char *out, size_t size)
{
    char log[160];
    snprintf(log, sizeof log, "%s.log", path);
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    if (fseek(f, *seen, SEEK_SET) == 0) {
        size_t n = fread(out, 1, size - 1, f);
        out[n] = '\0';
        *seen += (long)n;
    }
    fclose(f);
}

static int count_of(const char *text, const char *needle)
{
    int count = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        count++;
    return count;
}

static engine_pool_t *new_pool_handshake(const char *path, unsigned workers, int backoff_min_ms, int backoff_max_ms,
                                         int handshake_ms)
{
    engine_pool_config_t cfg = {
        .engine = { .path = path, .handshake_timeout_ms = handshake_ms },
        .workers = workers,
        .backoff_min_ms = backoff_min_ms,
        .backoff_max_ms = backoff_max_ms,
    };
    engine_pool_t *pool = engine_pool_new(&cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    return pool;
}

static engine_pool_t *new_pool(const char *path, unsigned workers, int backoff_min_ms, int backoff_max_ms)
{
    return new_pool_handshake(path, workers, backoff_min_ms, backoff_max_ms, HANDSHAKE_MS);
}

static engine_pool_stats_t stats_of(engine_pool_t *pool)
{
    engine_pool_stats_t st;
    engine_pool_stats(pool, &st);
    return st;
}

/* Waits (up to WAIT_MS) until every worker is up and free; false if not. */
static bool wait_all_up(engine_pool_t *pool)
{
    int64_t deadline = clock_now_ms() + WAIT_MS;
    for (;;) {
        engine_pool_stats_t st = stats_of(pool);
        if (st.up == st.workers && st.busy == 0)
            return true;
        if (clock_now_ms() > deadline)
            return false;
        usleep(2000);
    }
}

/* --- jobs --- */

/* Jobs are functions of this file that return the status a test wants. */

/* A gate a job may be held at until the test opens it (or GATE_MAX_MS). */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool open;
    int arrived;
} gate_t;

static void gate_init(gate_t *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->open = false;
    g->arrived = 0;
}

static void gate_destroy(gate_t *g)
{
    pthread_cond_destroy(&g->changed);
    pthread_mutex_destroy(&g->lock);
}

static void gate_open(gate_t *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* Counts the arrival, then waits until the gate is open or `arrivals` have
 * come (whichever first), at most GATE_MAX_MS. */
static void gate_pass(gate_t *g, int arrivals)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += GATE_MAX_MS / 1000;
    pthread_mutex_lock(&g->lock);
    g->arrived++;
    pthread_cond_broadcast(&g->changed);
    while (!g->open && (arrivals == 0 || g->arrived < arrivals)) {
        if (pthread_cond_timedwait(&g->changed, &g->lock, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&g->lock);
}

static int gate_arrived(gate_t *g)
{
    pthread_mutex_lock(&g->lock);
    int n = g->arrived;
    pthread_mutex_unlock(&g->lock);
    return n;
}

/* A job that records the engine of each call and returns outcomes[call]
 * (the last one for later calls); held at gate (when set) first, and with
 * search set, searches the start position to depth 6 before (kill_first:
 * killing its engine with SIGKILL first, on the first call). */
typedef struct {
    engine_status_t outcomes[2];
    gate_t *gate;
    int gate_arrivals;
    bool search, kill_first;
    atomic_int calls;
    pid_t pids[2];
    engine_status_t search_status[2];
    engine_result_t result;
    position_t start;
} job_t;

static engine_status_t scripted_job(engine_t *e, void *ctx, char *err, size_t err_size)
{
    job_t *job = ctx;
    int call = atomic_fetch_add(&job->calls, 1);
    int at = call < 2 ? call : 1;
    job->pids[at] = engine_pid(e);
    if (job->gate)
        gate_pass(job->gate, job->gate_arrivals);
    if (!job->search)
        return job->outcomes[at];
    if (job->kill_first && call == 0) {
        kill(engine_pid(e), SIGKILL);
        usleep(20000); /* gone before the search writes to it */
    }
    engine_limits_t limits = { .depth = 6, .deadline_ms = clock_now_ms() + 10000 };
    engine_status_t s = engine_search(e, &job->start, NULL, 0, &limits, &job->result, err, err_size);
    job->search_status[at] = s;
    return s;
}

static job_t job_returning(engine_status_t first, engine_status_t second)
{
    job_t job = { .outcomes = { first, second } };
    atomic_init(&job.calls, 0);
    return job;
}

typedef struct {
    engine_pool_t *pool;
    job_t *job;
    const char *session;
    uint64_t wait_ms;
    engine_status_t status;
    uint64_t took_ms;
    atomic_bool done;
    pthread_t thread;
} runner_t;

static void *run_thread(void *arg)
{
    runner_t *r = arg;
    char err[256];
    uint64_t started = clock_now_ms();
    r->status = engine_pool_run(r->pool, r->session, false, scripted_job, r->job, started + r->wait_ms, err, sizeof err);
    r->took_ms = clock_now_ms() - started;
    atomic_store(&r->done, true);
    return NULL;
}

/* Runs job on pool in a thread of its own (engine_pool_run waiting up to wait_ms). */
static void run_in_thread(runner_t *r, engine_pool_t *pool, job_t *job, uint64_t wait_ms)
{
    *r = (runner_t){ .pool = pool, .job = job, .wait_ms = wait_ms };
    atomic_init(&r->done, false);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&r->thread, NULL, run_thread, r), 0);
}

static engine_status_t run_now(engine_pool_t *pool, const char *session, bool chess960, job_t *job, uint64_t wait_ms,
                               char *err, size_t err_size)
{
    return engine_pool_run(pool, session, chess960, scripted_job, job, clock_now_ms() + wait_ms, err, err_size);
}

/* Waits (up to WAIT_MS) until pred(stats) holds; false if it never did. */
static bool wait_stats(engine_pool_t *pool, bool (*pred)(const engine_pool_stats_t *))
{
    int64_t deadline = clock_now_ms() + WAIT_MS;
    for (;;) {
        engine_pool_stats_t st = stats_of(pool);
        if (pred(&st))
            return true;
        if (clock_now_ms() > deadline)
            return false;
        usleep(1000);
    }
}

static bool one_waiting(const engine_pool_stats_t *st) { return st->waiting == 1; }
static bool one_busy(const engine_pool_stats_t *st) { return st->busy == 1; }

/* --- the tests --- */

static void test_jobs_run_on_every_real_engine_at_once(void)
{
    engine_pool_t *pool = new_pool(stockfish_path, 2, 0, 0);
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_TRUE(st.configured);
    CU_ASSERT_EQUAL(st.workers, 2);
    CU_ASSERT_EQUAL(st.up, 2);
    CU_ASSERT_EQUAL(strncmp(st.name, "Stockfish", 9), 0);
    CU_ASSERT_TRUE(engine_pool_has_idle(pool));
    gate_t both;
    gate_init(&both);
    job_t jobs[2];
    runner_t runners[2];
    for (int i = 0; i < 2; i++) {
        jobs[i] = job_returning(ENGINE_OK, ENGINE_OK);
        jobs[i].search = true;
        jobs[i].gate = &both;
        jobs[i].gate_arrivals = 2; /* each holds its engine until the other has one too */
        CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &jobs[i].start));
        run_in_thread(&runners[i], pool, &jobs[i], WAIT_MS);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(runners[i].thread, NULL);
    CU_ASSERT_EQUAL(gate_arrived(&both), 2);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(runners[i].status, ENGINE_OK);
        CU_ASSERT_EQUAL(atomic_load(&jobs[i].calls), 1);
        CU_ASSERT_TRUE(movegen_is_legal(&jobs[i].start, jobs[i].result.bestmove));
        CU_ASSERT_TRUE(jobs[i].pids[0] > 0);
    }
    CU_ASSERT_NOT_EQUAL(jobs[0].pids[0], jobs[1].pids[0]);
    st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs, 2);
    CU_ASSERT_EQUAL(st.jobs_failed, 0);
    CU_ASSERT_EQUAL(st.busy, 0);
    CU_ASSERT_EQUAL(st.waiting, 0);
    gate_destroy(&both);
    engine_pool_free(pool);
}

/* A real engine killed in the middle of a job: the job is run again on the other one. */
static void test_a_job_whose_real_engine_is_killed_is_retried_on_the_other(void)
{
    engine_pool_t *pool = new_pool(stockfish_path, 2, 20, 0);
    job_t job = job_returning(ENGINE_OK, ENGINE_OK);
    job.search = job.kill_first = true;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &job.start));
    char err[256];
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, WAIT_MS, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 2);
    CU_ASSERT_EQUAL(job.search_status[0], ENGINE_ECRASHED);
    CU_ASSERT_EQUAL(job.search_status[1], ENGINE_OK);
    CU_ASSERT_NOT_EQUAL(job.pids[0], job.pids[1]);
    CU_ASSERT_TRUE(movegen_is_legal(&job.start, job.result.bestmove));
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs, 1);
    CU_ASSERT_EQUAL(st.jobs_retried, 1);
    CU_ASSERT_EQUAL(st.crashes, 1);
    CU_ASSERT_EQUAL(st.jobs_failed, 0);
    CU_ASSERT_TRUE(wait_all_up(pool));
    CU_ASSERT_EQUAL(stats_of(pool).restarts, 1);
    engine_pool_free(pool);
}

static void test_ucinewgame_is_sent_only_when_the_session_changes(void)
{
    char path[128], text[4096];
    long seen = 0;
    fake_engine("sessions", path, sizeof path);
    engine_pool_t *pool = new_pool(path, 1, 20, 0);
    logged_since(path, &seen, text, sizeof text);
    CU_ASSERT_EQUAL(count_of(text, "uci\n"), 1);
    CU_ASSERT_EQUAL(count_of(text, "ucinewgame"), 0);
    char err[256];
    struct {
        const char *session;
        bool chess960;
        int new_games;
        const char *also; /* a line the engine must have read, or NULL */
    } steps[] = {
        { "game-1", false, 1, "setoption name UCI_Chess960 value false\n" },
        { "game-1", false, 0, NULL },
        { "game-2", false, 1, NULL },
        { NULL, false, 0, NULL },   /* no session: nothing to start */
        { "game-2", false, 0, NULL }, /* a job without one does not forget it */
        { "game-3", true, 1, "setoption name UCI_Chess960 value true\n" },
        { "game-3", true, 0, NULL },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        job_t job = job_returning(ENGINE_OK, ENGINE_OK);
        CU_ASSERT_EQUAL(run_now(pool, steps[i].session, steps[i].chess960, &job, WAIT_MS, err, sizeof err), ENGINE_OK);
        logged_since(path, &seen, text, sizeof text);
        if (count_of(text, "ucinewgame\n") != steps[i].new_games)
            fprintf(stderr, "\nstep %zu (%s): the engine read:\n%s", i, steps[i].session, text);
        CU_ASSERT_EQUAL(count_of(text, "ucinewgame\n"), steps[i].new_games);
        if (steps[i].also)
            CU_ASSERT_PTR_NOT_NULL(strstr(text, steps[i].also));
    }
    /* A failed job forgets the session: after the restart, the same one starts a new game. */
    job_t failing = job_returning(ENGINE_ECRASHED, ENGINE_OK);
    CU_ASSERT_EQUAL(run_now(pool, "game-3", true, &failing, WAIT_MS, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&failing.calls), 2);
    logged_since(path, &seen, text, sizeof text);
    CU_ASSERT_EQUAL(count_of(text, "uci\n"), 1); /* the restart's handshake */
    CU_ASSERT_EQUAL(count_of(text, "ucinewgame\n"), 1);
    engine_pool_free(pool);
}

static void test_a_failing_job_is_retried_once_on_the_other_engine(void)
{
    char path[128], err[256];
    engine_pool_t *pool = new_pool(fake_engine("retry", path, sizeof path), 2, 20, 0);
    job_t job = job_returning(ENGINE_ECRASHED, ENGINE_OK);
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, WAIT_MS, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 2);
    CU_ASSERT_NOT_EQUAL(job.pids[0], job.pids[1]);
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs, 1);
    CU_ASSERT_EQUAL(st.jobs_retried, 1);
    CU_ASSERT_EQUAL(st.jobs_failed, 0);
    CU_ASSERT_EQUAL(st.crashes, 1);
    CU_ASSERT_TRUE(wait_all_up(pool));
    CU_ASSERT_EQUAL(stats_of(pool).restarts, 1);

    /* Failing on both: the second failure is the answer, and no third try. */
    job = job_returning(ENGINE_ETIMEOUT, ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, WAIT_MS, err, sizeof err), ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 2);
    CU_ASSERT_NOT_EQUAL(job.pids[0], job.pids[1]);
    st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs, 2);
    CU_ASSERT_EQUAL(st.jobs_retried, 2);
    CU_ASSERT_EQUAL(st.jobs_failed, 1);
    CU_ASSERT_EQUAL(st.timeouts, 1);
    CU_ASSERT_EQUAL(st.garbage, 1);
    CU_ASSERT_EQUAL(st.crashes, 1);
    CU_ASSERT_TRUE(wait_all_up(pool));
    CU_ASSERT_EQUAL(stats_of(pool).restarts, 3);
    engine_pool_free(pool);
}

/* With one engine, the retry runs on it restarted, even for a job that
 * asked not to wait at all (it may have spent its time on a hung engine). */
static void test_with_one_engine_the_retry_waits_for_its_restart(void)
{
    char path[128], err[256];
    engine_pool_t *pool = new_pool(fake_engine("one", path, sizeof path), 1, 20, 0);
    job_t job = job_returning(ENGINE_ETIMEOUT, ENGINE_OK);
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, 0, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 2);
    CU_ASSERT_TRUE(job.pids[0] > 0 && job.pids[1] > 0);
    CU_ASSERT_NOT_EQUAL(job.pids[0], job.pids[1]); /* a new process */
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.restarts, 1);
    CU_ASSERT_EQUAL(st.jobs_retried, 1);
    CU_ASSERT_EQUAL(st.timeouts, 1);
    CU_ASSERT_EQUAL(st.jobs_failed, 0);
    engine_pool_free(pool);
}

/* The engine does not come back: the retry is not run, and the answer is the failure, not EDOWN. */
static void test_with_no_engine_back_for_the_retry_the_failure_is_the_answer(void)
{
    enum { SHORT_HANDSHAKE_MS = 500 };
    char path[128], broken[160], err[256];
    engine_pool_t *pool = new_pool_handshake(fake_engine("gone", path, sizeof path), 1, 20, 0, SHORT_HANDSHAKE_MS);
    snprintf(broken, sizeof broken, "%s.broken", path);
    FILE *f = fopen(broken, "w"); /* every start from now on fails */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    job_t job = job_returning(ENGINE_ECRASHED, ENGINE_OK);
    uint64_t started = clock_now_ms();
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, 0, err, sizeof err), ENGINE_ECRASHED);
    uint64_t took = clock_now_ms() - started;
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 1);
    CU_ASSERT_TRUE(took < 20 + SHORT_HANDSHAKE_MS + 2000); /* the shortest backoff and a handshake, and room */
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs_retried, 0);
    CU_ASSERT_EQUAL(st.jobs_failed, 1);
    CU_ASSERT_TRUE(st.start_failures >= 1);
    CU_ASSERT_EQUAL(st.up, 0);
    unlink(broken);
    engine_pool_free(pool);
}

static void test_the_backoff_grows_while_starts_fail_up_to_its_maximum(void)
{
    enum { MIN_MS = 25, MAX_MS = 200, GAPS = 8 };
    engine_pool_t *pool = new_pool("/nonexistent/engine", 1, MIN_MS, MAX_MS);
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_TRUE(st.configured);
    CU_ASSERT_EQUAL(st.up, 0);
    CU_ASSERT_EQUAL(st.start_failures, 1); /* the first start, in engine_pool_new */
    CU_ASSERT_FALSE(engine_pool_has_idle(pool));
    /* The time of each failed start after the first. */
    uint64_t at[GAPS + 1];
    uint64_t seen = 1;
    int64_t deadline = clock_now_ms() + 4000;
    int count = 0;
    at[count++] = clock_now_ms();
    while (count <= GAPS && clock_now_ms() < deadline) {
        st = stats_of(pool);
        if (st.start_failures > seen) {
            seen = st.start_failures;
            at[count++] = clock_now_ms();
        }
        usleep(1000);
    }
    CU_ASSERT_EQUAL_FATAL(count, GAPS + 1);
    uint64_t gaps[GAPS];
    for (int i = 0; i < GAPS; i++)
        gaps[i] = at[i + 1] - at[i];
    /* 25, 50, 100 ms: doubling, each at least its backoff (a little less for the first, measured from later) */
    CU_ASSERT_TRUE(gaps[1] >= 2 * MIN_MS - 5);
    CU_ASSERT_TRUE(gaps[2] >= 4 * MIN_MS - 5);
    /* then MAX_MS each time, not 400, 800 ...: the median of the last four */
    uint64_t last[4];
    memcpy(last, gaps + GAPS - 4, sizeof last);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (last[j] < last[i]) {
                uint64_t t = last[i];
                last[i] = last[j];
                last[j] = t;
            }
    uint64_t median = (last[1] + last[2]) / 2;
    if (median < MAX_MS - 5 || median > MAX_MS + MAX_MS / 2) {
        fprintf(stderr, "\nthe gaps between failed starts (ms):");
        for (int i = 0; i < GAPS; i++)
            fprintf(stderr, " %llu", (unsigned long long)gaps[i]);
        fprintf(stderr, "\n");
    }
    CU_ASSERT_TRUE(median >= MAX_MS - 5);
    CU_ASSERT_TRUE(median <= MAX_MS + MAX_MS / 2);
    st = stats_of(pool);
    CU_ASSERT_EQUAL(st.restarts, 0); /* never started, so never restarted */
    CU_ASSERT_EQUAL(st.up, 0);
    CU_ASSERT_STRING_EQUAL(st.name, "");
    engine_pool_free(pool);
}

static void test_every_engine_busy_past_the_wait_deadline_is_ebusy(void)
{
    char path[128];
    engine_pool_t *pool = new_pool(fake_engine("busy", path, sizeof path), 1, 20, 0);
    gate_t gate;
    gate_init(&gate);
    job_t holder = job_returning(ENGINE_OK, ENGINE_OK);
    holder.gate = &gate;
    runner_t held;
    run_in_thread(&held, pool, &holder, WAIT_MS);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, one_busy));
    CU_ASSERT_FALSE(engine_pool_has_idle(pool));

    job_t late = job_returning(ENGINE_OK, ENGINE_OK);
    runner_t waiter;
    run_in_thread(&waiter, pool, &late, 150);
    CU_ASSERT_TRUE(wait_stats(pool, one_waiting));
    pthread_join(waiter.thread, NULL);
    CU_ASSERT_EQUAL(waiter.status, ENGINE_EBUSY);
    CU_ASSERT_EQUAL(atomic_load(&late.calls), 0);
    CU_ASSERT_TRUE(waiter.took_ms >= 140);
    CU_ASSERT_TRUE(waiter.took_ms < 150 + 2000);
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.waiting, 0);
    CU_ASSERT_EQUAL(st.jobs_failed, 1);
    CU_ASSERT_EQUAL(st.jobs, 1); /* the holder; the busy one never ran */
    char err[256];
    CU_ASSERT_EQUAL(engine_pool_run(pool, NULL, false, scripted_job, &late, 0, err, sizeof err),
                    ENGINE_EBUSY); /* no wait at all */
    CU_ASSERT_STRING_EQUAL(err, "every engine is busy");

    /* A job that may wait long enough gets the engine when it comes free. */
    job_t patient = job_returning(ENGINE_OK, ENGINE_OK);
    runner_t next;
    run_in_thread(&next, pool, &patient, WAIT_MS);
    CU_ASSERT_TRUE(wait_stats(pool, one_waiting));
    CU_ASSERT_FALSE(atomic_load(&next.done));
    gate_open(&gate);
    pthread_join(held.thread, NULL);
    pthread_join(next.thread, NULL);
    CU_ASSERT_EQUAL(held.status, ENGINE_OK);
    CU_ASSERT_EQUAL(next.status, ENGINE_OK);
    CU_ASSERT_EQUAL(patient.pids[0], holder.pids[0]); /* the same engine, handed on */
    CU_ASSERT_TRUE(engine_pool_has_idle(pool));
    gate_destroy(&gate);
    engine_pool_free(pool);
}

typedef struct {
    engine_pool_t *pool;
    engine_hold_t hold;
    engine_status_t status;
    atomic_bool done;
    pthread_t thread;
} holder_t;

static void *hold_thread(void *arg)
{
    holder_t *h = arg;
    h->status = engine_pool_hold(h->pool, clock_now_ms() + WAIT_MS, &h->hold);
    atomic_store(&h->done, true);
    return NULL;
}

static bool two_waiting(const engine_pool_stats_t *st) { return st->waiting == 2 && st->priority_waiting == 1; }

static void test_a_hold_goes_ahead_of_the_jobs_waiting_and_keeps_its_engine_between_its_jobs(void)
{
    char path[128];
    engine_pool_t *pool = new_pool(fake_engine("hold", path, sizeof path), 1, 20, 0);
    gate_t gate;
    gate_init(&gate);
    job_t first = job_returning(ENGINE_OK, ENGINE_OK);
    first.gate = &gate;
    runner_t running;
    run_in_thread(&running, pool, &first, WAIT_MS);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, one_busy));
    /* An analysis waits first, then the computer's turn asks for a hold. */
    job_t analysis = job_returning(ENGINE_OK, ENGINE_OK);
    runner_t waiting;
    run_in_thread(&waiting, pool, &analysis, WAIT_MS);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, one_waiting));
    holder_t holder = { .pool = pool };
    atomic_init(&holder.done, false);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&holder.thread, NULL, hold_thread, &holder), 0);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, two_waiting));
    gate_open(&gate);
    pthread_join(running.thread, NULL);
    pthread_join(holder.thread, NULL);
    CU_ASSERT_EQUAL(holder.status, ENGINE_OK);
    CU_ASSERT_PTR_NOT_NULL(holder.hold.slot);
    /* Held: the analysis still waits, across two jobs on the held engine. */
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.busy, 0);
    CU_ASSERT_FALSE(engine_pool_has_idle(pool));
    char err[256];
    for (int i = 0; i < 2; i++) {
        job_t turn = job_returning(ENGINE_OK, ENGINE_OK);
        CU_ASSERT_EQUAL(engine_pool_run_held(pool, &holder.hold, "game", false, scripted_job, &turn,
                                             clock_now_ms() + WAIT_MS, err, sizeof err), ENGINE_OK);
        CU_ASSERT_EQUAL(turn.pids[0], first.pids[0]);
        CU_ASSERT_PTR_NOT_NULL(holder.hold.slot);
        usleep(20000);
        CU_ASSERT_FALSE(atomic_load(&waiting.done));
    }
    /* Given back: the analysis runs. */
    engine_pool_release(pool, &holder.hold);
    CU_ASSERT_PTR_NULL(holder.hold.slot);
    engine_pool_release(pool, &holder.hold); /* nothing held: nothing done */
    pthread_join(waiting.thread, NULL);
    CU_ASSERT_EQUAL(waiting.status, ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&analysis.calls), 1);
    CU_ASSERT_TRUE(engine_pool_has_idle(pool));
    /* A held engine that dies in a job: the hold is empty, or holds the restarted one. */
    CU_ASSERT_EQUAL(engine_pool_hold(pool, clock_now_ms() + WAIT_MS, &holder.hold), ENGINE_OK);
    job_t crash = job_returning(ENGINE_ECRASHED, ENGINE_OK);
    CU_ASSERT_EQUAL(engine_pool_run_held(pool, &holder.hold, NULL, false, scripted_job, &crash,
                                         clock_now_ms() + WAIT_MS, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL(atomic_load(&crash.calls), 2);
    CU_ASSERT_PTR_NOT_NULL(holder.hold.slot); /* the retry's engine, held */
    engine_pool_release(pool, &holder.hold);
    CU_ASSERT_EQUAL(engine_pool_hold(NULL, 0, &holder.hold), ENGINE_EDOWN);
    gate_destroy(&gate);
    engine_pool_free(pool);
}

static void test_a_pool_without_an_engine_answers_edown(void)
{
    const char *paths[] = { NULL, "" };
    for (int i = 0; i < 2; i++) {
        engine_pool_t *pool = new_pool(paths[i], 2, 0, 0);
        engine_pool_stats_t st = stats_of(pool);
        CU_ASSERT_FALSE(st.configured);
        CU_ASSERT_EQUAL(st.workers, 0);
        CU_ASSERT_EQUAL(st.up, 0);
        CU_ASSERT_FALSE(engine_pool_has_idle(pool));
        job_t job = job_returning(ENGINE_OK, ENGINE_OK);
        char err[256];
        CU_ASSERT_EQUAL(run_now(pool, "s", false, &job, 1000, err, sizeof err), ENGINE_EDOWN);
        CU_ASSERT_STRING_EQUAL(err, "this server runs no engine");
        CU_ASSERT_EQUAL(atomic_load(&job.calls), 0);
        engine_pool_free(pool);
    }
    char err[256];
    CU_ASSERT_EQUAL(engine_pool_run(NULL, NULL, false, scripted_job, NULL, 0, err, sizeof err), ENGINE_EDOWN);
    engine_pool_free(NULL);
}

/* An engine that cannot start, whose next start is later than the job may
 * wait: EDOWN at once, not after the wait. */
static void test_no_engine_running_is_edown_without_waiting(void)
{
    engine_pool_t *pool = new_pool("/nonexistent/engine", 1, 5000, 5000);
    job_t job = job_returning(ENGINE_OK, ENGINE_OK);
    char err[256];
    uint64_t started = clock_now_ms();
    CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, 3000, err, sizeof err), ENGINE_EDOWN);
    CU_ASSERT_TRUE(clock_now_ms() - started < 1000);
    CU_ASSERT_STRING_EQUAL(err, "no engine is running");
    CU_ASSERT_EQUAL(atomic_load(&job.calls), 0);
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_TRUE(st.configured);
    CU_ASSERT_EQUAL(st.workers, 1);
    CU_ASSERT_EQUAL(st.up, 0);
    CU_ASSERT_EQUAL(st.start_failures, 1);
    CU_ASSERT_EQUAL(st.jobs, 0);
    CU_ASSERT_EQUAL(st.jobs_failed, 1);
    engine_pool_free(pool);
}

/* ENO_MOVES and EINVALID say nothing against the engine: it is kept, not
 * retried, and no failure is counted. */
static void test_a_job_refused_for_its_input_keeps_its_engine(void)
{
    char path[128], err[256];
    engine_pool_t *pool = new_pool(fake_engine("keeps", path, sizeof path), 1, 20, 0);
    engine_status_t kept[] = { ENGINE_EINVALID, ENGINE_ENO_MOVES, ENGINE_OK };
    pid_t pid = -1;
    for (int i = 0; i < 3; i++) {
        job_t job = job_returning(kept[i], ENGINE_OK);
        CU_ASSERT_EQUAL(run_now(pool, NULL, false, &job, WAIT_MS, err, sizeof err), kept[i]);
        CU_ASSERT_EQUAL(atomic_load(&job.calls), 1);
        if (i == 0)
            pid = job.pids[0];
        CU_ASSERT_EQUAL(job.pids[0], pid);
    }
    engine_pool_stats_t st = stats_of(pool);
    CU_ASSERT_EQUAL(st.jobs, 3);
    CU_ASSERT_EQUAL(st.jobs_failed, 0);
    CU_ASSERT_EQUAL(st.jobs_retried, 0);
    CU_ASSERT_EQUAL(st.restarts, 0);
    CU_ASSERT_EQUAL(st.timeouts + st.crashes + st.garbage, 0);
    CU_ASSERT_EQUAL(st.up, 1);
    engine_pool_free(pool);
}

static void *free_thread(void *pool)
{
    engine_pool_free(pool);
    return NULL;
}

/* engine_pool_free waits for the job running, sends the waiting ones away
 * (EDOWN), then stops the engines. */
static void test_engine_pool_free_waits_for_the_running_job(void)
{
    char path[128], text[4096];
    long seen = 0;
    engine_pool_t *pool = new_pool(fake_engine("freed", path, sizeof path), 1, 20, 0);
    gate_t gate;
    gate_init(&gate);
    job_t holder = job_returning(ENGINE_OK, ENGINE_OK);
    holder.gate = &gate;
    runner_t held;
    run_in_thread(&held, pool, &holder, WAIT_MS);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, one_busy));
    job_t waiting = job_returning(ENGINE_OK, ENGINE_OK);
    runner_t waiter;
    run_in_thread(&waiter, pool, &waiting, 10000);
    CU_ASSERT_TRUE_FATAL(wait_stats(pool, one_waiting));
    pid_t pid = holder.pids[0];
    CU_ASSERT_TRUE_FATAL(pid > 0);

    /* The waiter leaves while the holder still runs; then the holder is let go. */
    pthread_t freer;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&freer, NULL, free_thread, pool), 0);
    int64_t deadline = clock_now_ms() + WAIT_MS;
    while (!atomic_load(&waiter.done) && clock_now_ms() < deadline)
        usleep(1000);
    CU_ASSERT_TRUE(atomic_load(&waiter.done));
    CU_ASSERT_FALSE(atomic_load(&held.done));
    CU_ASSERT_EQUAL(kill(pid, 0), 0); /* the running job's engine is not stopped under it */
    gate_open(&gate);
    pthread_join(freer, NULL);
    pthread_join(held.thread, NULL);
    pthread_join(waiter.thread, NULL);
    CU_ASSERT_EQUAL(held.status, ENGINE_OK);
    CU_ASSERT_EQUAL(waiter.status, ENGINE_EDOWN);
    CU_ASSERT_EQUAL(atomic_load(&waiting.calls), 0);
    CU_ASSERT_EQUAL(kill(pid, 0), -1); /* stopped and reaped */
    CU_ASSERT_EQUAL(errno, ESRCH);
    logged_since(path, &seen, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "quit\n"));
    gate_destroy(&gate);
}

int test_pool_register(void)
{
    CU_pSuite suite = CU_add_suite("pool", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"jobs run on every real engine at once", test_jobs_run_on_every_real_engine_at_once},
        {"a job whose real engine is killed is retried on the other",
         test_a_job_whose_real_engine_is_killed_is_retried_on_the_other},
        {"ucinewgame is sent only when the session changes", test_ucinewgame_is_sent_only_when_the_session_changes},
        {"a failing job is retried once on the other engine", test_a_failing_job_is_retried_once_on_the_other_engine},
        {"with one engine the retry waits for its restart", test_with_one_engine_the_retry_waits_for_its_restart},
        {"with no engine back for the retry the failure is the answer",
         test_with_no_engine_back_for_the_retry_the_failure_is_the_answer},
        {"the backoff grows while starts fail, up to its maximum",
         test_the_backoff_grows_while_starts_fail_up_to_its_maximum},
        {"every engine busy past the wait deadline is EBUSY", test_every_engine_busy_past_the_wait_deadline_is_ebusy},
        {"a hold goes ahead of the jobs waiting and keeps its engine between its jobs",
         test_a_hold_goes_ahead_of_the_jobs_waiting_and_keeps_its_engine_between_its_jobs},
        {"a pool without an engine answers EDOWN", test_a_pool_without_an_engine_answers_edown},
        {"no engine running is EDOWN without waiting", test_no_engine_running_is_edown_without_waiting},
        {"a job refused for its input keeps its engine", test_a_job_refused_for_its_input_keeps_its_engine},
        {"engine_pool_free waits for the running job", test_engine_pool_free_waits_for_the_running_job},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (!CU_add_test(suite, tests[i].name, tests[i].fn))
            return CU_get_error();
    }
    return CUE_SUCCESS;
}
