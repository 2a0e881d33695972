/* Tests for api/fiber_pool.c on a real event loop (api/http/loop.c) with
 * its libmicrohttpd daemon: jobs run on the loop's thread, as many at once
 * as the pool has fibers, the rest queued in turn and the overflow refused;
 * a job's wait ends when its descriptor is ready or at its deadline, and
 * the loop serves the other jobs meanwhile. */
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "../../api/fiber_pool.h"
#include "../../api/http/loop.h"
#include "../../rules/base/clock.h"
#include "../../store/fiber.h"
#include "../support/tests.h"

enum { JOBS = 5, FIBERS = 2, QUEUE = 2, DEADLINE_MS = 10000 };

typedef struct {
    int pipe[2];
    int64_t deadline_ms;
    pthread_t ran_on;
    bool on_fiber;
    bool ready;
    char byte;
    atomic_int order; /* 1 + the place it ended in */
} job_t;

typedef struct {
    fiber_pool_t *pool;
    job_t jobs[JOBS];
    bool submitted[JOBS];
    pthread_t loop_thread;
    atomic_int ended;
    atomic_bool submit_done;
} world_t;

static world_t world;

static void wait_on_pipe(void *arg)
{
    job_t *job = arg;
    job->ran_on = pthread_self();
    job->on_fiber = fiber_self() != NULL;
    job->ready = fiber_wait(job->pipe[0], POLLIN, job->deadline_ms);
    if (job->ready && read(job->pipe[0], &job->byte, 1) != 1)
        job->byte = 0;
    atomic_store(&job->order, atomic_fetch_add(&world.ended, 1) + 1);
}

static void submit_all(void *arg, bool ready)
{
    (void)arg, (void)ready;
    world.loop_thread = pthread_self();
    for (int i = 0; i < JOBS; i++)
        world.submitted[i] = fiber_pool_submit(world.pool, wait_on_pipe, &world.jobs[i]);
    atomic_store(&world.submit_done, true);
}

static enum MHD_Result refuse_all(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)cls, (void)connection, (void)url, (void)method, (void)version, (void)upload_data;
    (void)upload_data_size, (void)con_cls;
    return MHD_NO;
}

/* Waits up to 10 s for *flag to reach want. */
static bool wait_for(atomic_int *flag, int want)
{
    for (int i = 0; i < 2000 && atomic_load(flag) < want; i++)
        usleep(5000);
    return atomic_load(flag) >= want;
}

static void test_jobs_run_on_the_loop_thread_in_turn_and_end_when_ready_or_late(void)
{
    memset(&world, 0, sizeof world);
    struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME,
                                                 0, NULL, NULL, refuse_all, NULL, MHD_OPTION_END);
    CU_ASSERT_PTR_NOT_NULL_FATAL(daemon);
    loop_t *loop = loop_start(daemon, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
    world.pool = fiber_pool_new(FIBERS, QUEUE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(world.pool);
    int64_t start = clock_now_ms();
    for (int i = 0; i < JOBS; i++) {
        CU_ASSERT_FATAL(pipe(world.jobs[i].pipe) == 0);
        world.jobs[i].deadline_ms = start + DEADLINE_MS;
    }
    world.jobs[1].deadline_ms = start + 50; /* never written: it ends late */
    /* Off a loop's thread nothing runs. */
    CU_ASSERT_FALSE(fiber_pool_submit(world.pool, wait_on_pipe, &world.jobs[0]));
    CU_ASSERT_TRUE(loop_call(loop, submit_all, NULL));
    for (int i = 0; i < 2000 && !atomic_load(&world.submit_done); i++)
        usleep(5000);
    CU_ASSERT_FATAL(atomic_load(&world.submit_done));
    /* Two run, two wait for a fiber, the fifth is refused. */
    CU_ASSERT_TRUE(world.submitted[0] && world.submitted[1] && world.submitted[2] && world.submitted[3]);
    CU_ASSERT_FALSE(world.submitted[4]);
    /* Job 1 ends late, so job 2 gets its fiber; job 0 ends when written. */
    CU_ASSERT_FATAL(wait_for(&world.jobs[1].order, 1));
    CU_ASSERT_FALSE(world.jobs[1].ready);
    CU_ASSERT(clock_now_ms() - start >= 50);
    CU_ASSERT_EQUAL(write(world.jobs[3].pipe[1], "d", 1), 1); /* queued behind job 2: not read yet */
    usleep(20000);
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[3].order), 0);
    /* Job 0 ends when written; job 3 takes its fiber and finds its byte. */
    CU_ASSERT_EQUAL(write(world.jobs[0].pipe[1], "a", 1), 1);
    CU_ASSERT_FATAL(wait_for(&world.jobs[3].order, 1));
    CU_ASSERT_EQUAL(write(world.jobs[2].pipe[1], "c", 1), 1);
    CU_ASSERT_FATAL(wait_for(&world.jobs[2].order, 1));
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[1].order), 1);
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[0].order), 2);
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[3].order), 3);
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[2].order), 4);
    const char expected[] = { 'a', 0, 'c', 'd' };
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(world.jobs[i].byte, expected[i]);
        CU_ASSERT_TRUE(world.jobs[i].on_fiber);
        CU_ASSERT_TRUE(pthread_equal(world.jobs[i].ran_on, world.loop_thread));
    }
    CU_ASSERT_EQUAL(atomic_load(&world.jobs[4].order), 0);
    loop_stop(loop);
    MHD_stop_daemon(daemon);
    loop_free(loop);
    fiber_pool_free(world.pool);
    for (int i = 0; i < JOBS; i++) {
        close(world.jobs[i].pipe[0]);
        close(world.jobs[i].pipe[1]);
    }
}

int test_fiber_pool_register(void)
{
    CU_pSuite s = CU_add_suite("fiber_pool", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, test_jobs_run_on_the_loop_thread_in_turn_and_end_when_ready_or_late);
    return 0;
}
