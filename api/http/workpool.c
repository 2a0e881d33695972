/* See workpool.h. A ring of jobs under one mutex; workers sleep on a
 * condition variable, signalled after the mutex is let go and only when a
 * worker sleeps (a worker woken under the mutex would at once wait for it
 * again: two more futex calls per job). Jobs queued before workpool_free()
 * are all run. */
#include "workpool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    workpool_fn fn;
    void *arg;
} job_t;

struct workpool {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    job_t *jobs;
    unsigned capacity, head, count;
    unsigned sleeping; /* workers waiting on ready */
    bool stopping;
    unsigned thread_count;
    int niceness;
    pthread_t *threads;
};

static void *worker(void *arg)
{
    workpool_t *pool = arg;
    if (pool->niceness) {
        /* On Linux a thread id names one thread for setpriority(). */
        id_t self = (id_t)syscall(SYS_gettid);
        errno = 0;
        int current = getpriority(PRIO_PROCESS, self);
        if (errno == 0)
            (void)setpriority(PRIO_PROCESS, self, current + pool->niceness);
    }
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (!pool->count && !pool->stopping) {
            pool->sleeping++;
            pthread_cond_wait(&pool->ready, &pool->lock);
            pool->sleeping--;
        }
        if (!pool->count) {
            pthread_mutex_unlock(&pool->lock);
            return NULL;
        }
        job_t job = pool->jobs[pool->head];
        pool->head = (pool->head + 1) % pool->capacity;
        pool->count--;
        pthread_mutex_unlock(&pool->lock);
        job.fn(job.arg);
    }
}

workpool_t *workpool_new(unsigned threads, unsigned queue_max, int niceness)
{
    workpool_t *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->niceness = niceness;
    pool->capacity = queue_max ? queue_max : 1;
    pool->jobs = calloc(pool->capacity, sizeof *pool->jobs);
    pool->threads = calloc(threads ? threads : 1, sizeof *pool->threads);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->ready, NULL);
    if (!pool->jobs || !pool->threads) {
        workpool_free(pool);
        return NULL;
    }
    for (unsigned i = 0; i < (threads ? threads : 1); i++) {
        if (pthread_create(&pool->threads[i], NULL, worker, pool)) {
            workpool_free(pool);
            return NULL;
        }
        pool->thread_count++;
    }
    return pool;
}

bool workpool_submit(workpool_t *pool, workpool_fn fn, void *arg)
{
    pthread_mutex_lock(&pool->lock);
    bool room = !pool->stopping && pool->count < pool->capacity;
    /* Without a sleeper, a busy worker takes the job when it comes back
     * for its next one. */
    bool wake = false;
    if (room) {
        pool->jobs[(pool->head + pool->count) % pool->capacity] = (job_t){ fn, arg };
        pool->count++;
        wake = pool->sleeping > 0;
    }
    pthread_mutex_unlock(&pool->lock);
    if (wake)
        pthread_cond_signal(&pool->ready);
    return room;
}

void workpool_stop(workpool_t *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->ready);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->thread_count; i++)
        pthread_join(pool->threads[i], NULL);
    pool->thread_count = 0;
}

void workpool_free(workpool_t *pool)
{
    if (!pool)
        return;
    workpool_stop(pool);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->ready);
    free(pool->jobs);
    free(pool->threads);
    free(pool);
}
