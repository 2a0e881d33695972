/* Tests for store/fiber.c: a fiber runs to its end or to a wait and is
 * taken up again where it waited. It keeps its own stack and registers
 * however many fibers take turns, reuses its stack for the next job and
 * frees its locals; off a fiber, fiber_wait blocks in poll(). */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "../../store/fiber.h"
#include "../support/tests.h"

enum { STACK = 256 * 1024 };

static void set_flag(void *arg) { *(int *)arg = 1; }

static void test_a_fiber_that_never_waits_is_done_at_once_and_runs_again(void)
{
    fiber_t *f = fiber_new(STACK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int a = 0, b = 0;
    CU_ASSERT_EQUAL(fiber_start(f, set_flag, &a), FIBER_DONE);
    CU_ASSERT_EQUAL(a, 1);
    CU_ASSERT_EQUAL(fiber_start(f, set_flag, &b), FIBER_DONE);
    CU_ASSERT_EQUAL(b, 1);
    CU_ASSERT_PTR_NULL(fiber_self());
    fiber_free(f);
}

typedef struct {
    int fd;
    int64_t deadline_ms;
    bool ready;
    char byte;
    fiber_t *self;
} pipe_job_t;

static void read_pipe(void *arg)
{
    pipe_job_t *job = arg;
    job->self = fiber_self();
    job->ready = fiber_wait(job->fd, POLLIN, job->deadline_ms);
    if (job->ready && read(job->fd, &job->byte, 1) != 1)
        job->byte = 0;
}

static void test_a_wait_yields_with_what_it_waits_for_and_resumes_there(void)
{
    int p[2];
    CU_ASSERT_FATAL(pipe(p) == 0);
    fiber_t *f = fiber_new(STACK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    pipe_job_t job = { .fd = p[0], .deadline_ms = clock_now_ms() + 60000 };
    CU_ASSERT_EQUAL(fiber_start(f, read_pipe, &job), FIBER_WAITING);
    CU_ASSERT_PTR_EQUAL(job.self, f);
    CU_ASSERT_PTR_NULL(fiber_self());
    const fiber_wait_t *w = fiber_waits_for(f);
    CU_ASSERT_EQUAL(w->fd, p[0]);
    CU_ASSERT_EQUAL(w->events, POLLIN);
    CU_ASSERT_EQUAL(w->deadline_ms, job.deadline_ms);
    CU_ASSERT_EQUAL(write(p[1], "x", 1), 1);
    CU_ASSERT_EQUAL(fiber_continue(f, true), FIBER_DONE);
    CU_ASSERT_TRUE(job.ready);
    CU_ASSERT_EQUAL(job.byte, 'x');
    /* Late: the wait says so, and nothing is read. */
    job = (pipe_job_t){ .fd = p[0], .deadline_ms = clock_now_ms() + 5 };
    CU_ASSERT_EQUAL(fiber_start(f, read_pipe, &job), FIBER_WAITING);
    CU_ASSERT_EQUAL(fiber_continue(f, false), FIBER_DONE);
    CU_ASSERT_FALSE(job.ready);
    CU_ASSERT_EQUAL(job.byte, 0);
    fiber_free(f);
    close(p[0]);
    close(p[1]);
}

enum { TURNS = 200, FIBERS = 40 };

typedef struct {
    unsigned id;
    uint64_t sum; /* what the fiber computed, from values kept on its stack and in registers across waits */
    double product;
} turn_job_t;

/* Touches depth frames of 4 KiB on the fiber's stack, each checked after a
 * wait: another fiber's writes would show. */
static uint64_t deep(unsigned id, unsigned depth)
{
    volatile unsigned char frame[4096];
    memset((void *)frame, (int)(id + depth) & 0xff, sizeof frame);
    uint64_t below = depth ? deep(id, depth - 1) : 0;
    fiber_wait(-1, 0, 0);
    uint64_t sum = below;
    for (size_t i = 0; i < sizeof frame; i += 512)
        sum += frame[i] == ((id + depth) & 0xff);
    return sum;
}

static void take_turns(void *arg)
{
    turn_job_t *job = arg;
    uint64_t sum = 0;
    double product = 1.0;
    for (unsigned i = 0; i < TURNS; i++) {
        uint64_t mine = (uint64_t)job->id * 1000003u + i;
        double factor = 1.0 + 1.0 / (job->id + i + 2);
        fiber_wait(-1, 0, 0);
        sum += mine;
        product *= factor;
    }
    sum += deep(job->id, 24); /* 96 KiB deep, each of 25 frames checked at 8 places */
    job->sum = sum;
    job->product = product;
}

static void test_fibers_taking_turns_keep_their_own_stacks_and_registers(void)
{
    fiber_t *fibers[FIBERS];
    turn_job_t jobs[FIBERS];
    bool done[FIBERS] = { false };
    for (unsigned i = 0; i < FIBERS; i++) {
        fibers[i] = fiber_new(STACK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fibers[i]);
        jobs[i] = (turn_job_t){ .id = i };
        CU_ASSERT_EQUAL(fiber_start(fibers[i], take_turns, &jobs[i]), FIBER_WAITING);
    }
    for (unsigned left = FIBERS; left;)
        for (unsigned i = 0; i < FIBERS; i++)
            if (!done[i] && fiber_continue(fibers[i], false) == FIBER_DONE) {
                done[i] = true;
                left--;
            }
    for (unsigned i = 0; i < FIBERS; i++) {
        uint64_t want = 0;
        double product = 1.0;
        for (unsigned t = 0; t < TURNS; t++) {
            want += (uint64_t)i * 1000003u + t;
            product *= 1.0 + 1.0 / (i + t + 2);
        }
        CU_ASSERT_EQUAL(jobs[i].sum, want + 25 * 8);
        CU_ASSERT_DOUBLE_EQUAL(jobs[i].product, product, 1e-12);
        fiber_free(fibers[i]);
    }
}

static int freed;
static void count_free(void *value)
{
    freed += *(int *)value;
    free(value);
}

static void set_local(void *arg)
{
    (void)arg;
    int *value = malloc(sizeof *value);
    if (value)
        *value = 7;
    *fiber_local(fiber_self(), FIBER_LOCAL_DEADLINE) = value;
}

static void test_a_fibers_locals_are_its_own_and_freed_with_it(void)
{
    fiber_local_destructor(FIBER_LOCAL_DEADLINE, count_free);
    fiber_t *a = fiber_new(STACK), *b = fiber_new(STACK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(fiber_start(a, set_local, NULL), FIBER_DONE);
    CU_ASSERT_PTR_NOT_NULL(*fiber_local(a, FIBER_LOCAL_DEADLINE));
    CU_ASSERT_PTR_NULL(*fiber_local(b, FIBER_LOCAL_DEADLINE));
    freed = 0;
    fiber_free(a);
    fiber_free(b);
    CU_ASSERT_EQUAL(freed, 7);
    fiber_local_destructor(FIBER_LOCAL_DEADLINE, NULL);
}

static void test_a_wait_off_a_fiber_blocks_until_ready_or_late(void)
{
    int p[2];
    CU_ASSERT_FATAL(pipe(p) == 0);
    int64_t start = clock_now_ms();
    CU_ASSERT_FALSE(fiber_wait(p[0], POLLIN, start + 30));
    CU_ASSERT_TRUE(clock_now_ms() - start >= 30);
    CU_ASSERT_EQUAL(write(p[1], "x", 1), 1);
    CU_ASSERT_TRUE(fiber_wait(p[0], POLLIN, clock_now_ms() + 60000));
    start = clock_now_ms();
    CU_ASSERT_FALSE(fiber_wait(-1, 0, start + 20));
    CU_ASSERT_TRUE(clock_now_ms() - start >= 20);
    close(p[0]);
    close(p[1]);
}

int test_fiber_register(void)
{
    CU_pSuite s = CU_add_suite("fiber", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, test_a_fiber_that_never_waits_is_done_at_once_and_runs_again);
    CU_ADD_TEST(s, test_a_wait_yields_with_what_it_waits_for_and_resumes_there);
    CU_ADD_TEST(s, test_fibers_taking_turns_keep_their_own_stacks_and_registers);
    CU_ADD_TEST(s, test_a_fibers_locals_are_its_own_and_freed_with_it);
    CU_ADD_TEST(s, test_a_wait_off_a_fiber_blocks_until_ready_or_late);
    return 0;
}
