/* Tests for api/http/workpool.c: every job queued runs once, on the pool's
 * threads, all of them at once when there are enough; a full queue refuses
 * at once and runs nothing of what it refused; stopping runs what is queued,
 * then refuses; the workers run the niceness steps below the caller asked
 * for; NULL and a second stop are nothing. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../../api/http/workpool.h"
#include "../../support/tests.h"

static atomic_int runs;

static void count_run(void *arg)
{
    (void)arg;
    atomic_fetch_add(&runs, 1);
}

static void test_every_job_queued_runs_once_before_stop_returns(void)
{
    atomic_store(&runs, 0);
    workpool_t *pool = workpool_new(3, 200, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    for (int i = 0; i < 200; i++)
        CU_ASSERT_TRUE(workpool_submit(pool, count_run, NULL));
    workpool_stop(pool);
    CU_ASSERT_EQUAL(atomic_load(&runs), 200);
    /* Stopped: refused, and nothing runs. */
    CU_ASSERT_FALSE(workpool_submit(pool, count_run, NULL));
    workpool_stop(pool); /* twice is nothing */
    workpool_free(pool);
    CU_ASSERT_EQUAL(atomic_load(&runs), 200);
    workpool_stop(NULL);
    workpool_free(NULL);
}

/* A job that holds its worker until the gate opens. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int started, running_max, running;
    bool open;
    pthread_t caller;
    bool on_caller;
} gate_t;

static gate_t gate;

static void gate_reset(void)
{
    pthread_mutex_lock(&gate.lock);
    gate.started = gate.running = gate.running_max = 0;
    gate.open = gate.on_caller = false;
    gate.caller = pthread_self();
    pthread_mutex_unlock(&gate.lock);
}

static void held_job(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate.lock);
    gate.started++;
    gate.running++;
    if (gate.running > gate.running_max)
        gate.running_max = gate.running;
    if (pthread_equal(pthread_self(), gate.caller))
        gate.on_caller = true;
    pthread_cond_broadcast(&gate.changed);
    while (!gate.open)
        pthread_cond_wait(&gate.changed, &gate.lock);
    gate.running--;
    pthread_mutex_unlock(&gate.lock);
}

/* Waits (5 s at most) until `count` jobs have started; true when they have. */
static bool wait_started(int count)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&gate.lock);
    while (gate.started < count)
        if (pthread_cond_timedwait(&gate.changed, &gate.lock, &until) == ETIMEDOUT)
            break;
    bool ok = gate.started >= count;
    pthread_mutex_unlock(&gate.lock);
    return ok;
}

static void open_gate(void)
{
    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.changed);
    pthread_mutex_unlock(&gate.lock);
}

static void test_jobs_run_side_by_side_on_the_pools_threads(void)
{
    gate_reset();
    workpool_t *pool = workpool_new(4, 4, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_TRUE(workpool_submit(pool, held_job, NULL));
    /* Four workers: all four jobs are held at the same time. */
    CU_ASSERT_TRUE(wait_started(4));
    open_gate();
    workpool_free(pool);
    CU_ASSERT_EQUAL(gate.running_max, 4);
    CU_ASSERT_FALSE(gate.on_caller);
}

static void test_a_full_queue_refuses_at_once_and_runs_nothing_refused(void)
{
    gate_reset();
    atomic_store(&runs, 0);
    workpool_t *pool = workpool_new(1, 2, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    CU_ASSERT_TRUE(workpool_submit(pool, held_job, NULL));
    CU_ASSERT_TRUE_FATAL(wait_started(1)); /* the one worker is busy, the queue empty */
    CU_ASSERT_TRUE(workpool_submit(pool, count_run, NULL));
    CU_ASSERT_TRUE(workpool_submit(pool, count_run, NULL));
    long before = tests_monotonic_ms();
    CU_ASSERT_FALSE(workpool_submit(pool, count_run, NULL)); /* two waiting: full */
    CU_ASSERT_FALSE(workpool_submit(pool, count_run, NULL));
    CU_ASSERT(tests_monotonic_ms() - before < 1000); /* refused, not waited for */
    CU_ASSERT_EQUAL(atomic_load(&runs), 0);
    open_gate();
    workpool_free(pool);
    CU_ASSERT_EQUAL(atomic_load(&runs), 2);
    CU_ASSERT_EQUAL(gate.started, 1);
}

static int worker_nice;

static void read_nice(void *arg)
{
    (void)arg;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    worker_nice = errno ? -100 : nice;
}

static void test_workers_run_the_niceness_asked_below_the_caller(void)
{
    errno = 0;
    int caller = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    CU_ASSERT_EQUAL_FATAL(errno, 0);
    int expected = caller + 3 > 19 ? 19 : caller + 3;
    workpool_t *pool = workpool_new(1, 1, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    worker_nice = -100;
    CU_ASSERT_TRUE(workpool_submit(pool, read_nice, NULL));
    workpool_free(pool);
    CU_ASSERT_EQUAL(worker_nice, expected);
    /* Niceness 0: the caller's own. */
    pool = workpool_new(1, 1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    worker_nice = -100;
    CU_ASSERT_TRUE(workpool_submit(pool, read_nice, NULL));
    workpool_free(pool);
    CU_ASSERT_EQUAL(worker_nice, caller);
}

static int suite_init(void)
{
    return pthread_mutex_init(&gate.lock, NULL) || pthread_cond_init(&gate.changed, NULL);
}

static int suite_clean(void)
{
    pthread_mutex_destroy(&gate.lock);
    pthread_cond_destroy(&gate.changed);
    return 0;
}

int test_workpool_register(void)
{
    CU_pSuite suite = CU_add_suite("workpool", suite_init, suite_clean);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_every_job_queued_runs_once_before_stop_returns);
    CU_ADD_TEST(suite, test_jobs_run_side_by_side_on_the_pools_threads);
    CU_ADD_TEST(suite, test_a_full_queue_refuses_at_once_and_runs_nothing_refused);
    CU_ADD_TEST(suite, test_workers_run_the_niceness_asked_below_the_caller);
    return CU_get_error();
}
