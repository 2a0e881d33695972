/* A small fixed pool of threads with a bounded queue, for work that may take
 * longer than a connection thread should be held (perft). A full queue is
 * refused at once, never waited for, so the pool bounds both the CPU it uses
 * and the requests it holds. */
#ifndef CHESSD_API_HTTP_WORKPOOL_H
#define CHESSD_API_HTTP_WORKPOOL_H

#include <stdbool.h>

typedef struct workpool workpool_t;
typedef void (*workpool_fn)(void *arg);

/* threads workers, at most queue_max jobs waiting; the workers run niceness
 * steps below the caller (0: same priority), so the threads that serve
 * connections get the CPU first. NULL on failure. */
workpool_t *workpool_new(unsigned threads, unsigned queue_max, int niceness);
/* Queues fn(arg); false (nothing queued) when the queue is full or the pool stopping. */
bool workpool_submit(workpool_t *pool, workpool_fn fn, void *arg);
/* Takes no more jobs (workpool_submit then returns false), runs what is
 * queued and joins the threads; the pool stays valid for workpool_submit
 * until it is freed. NULL is fine; so is stopping twice. */
void workpool_stop(workpool_t *pool);
/* Stops the pool (as workpool_stop) and frees it. NULL is fine. */
void workpool_free(workpool_t *pool);

#endif
