/* An event loop: one thread waiting in epoll on its own libmicrohttpd
 * daemon (run in external-loop mode), on the connections the accept thread
 * hands it, and on the descriptors and deadlines its jobs wait for
 * (loop_watch). A request is read, run and answered on one thread. */
#ifndef CHESSD_API_HTTP_LOOP_H
#define CHESSD_API_HTTP_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct MHD_Daemon;
typedef struct loop loop_t;

/* Called once, on the loop's thread: ready says fd became ready (false:
 * the deadline came first, or the loop is ending). */
typedef void (*loop_fn)(void *arg, bool ready);

/* Starts a thread running daemon, a daemon started without threads of its
 * own (MHD_USE_EPOLL, MHD_USE_ITC, MHD_ALLOW_SUSPEND_RESUME,
 * MHD_USE_NO_LISTEN_SOCKET). index names it (loop_index). NULL when out
 * of memory or threads. */
loop_t *loop_start(struct MHD_Daemon *daemon, unsigned index);

/* Queues a connection for the loop's daemon (MHD_add_connection on its
 * thread); any thread. False (fd not taken) when out of memory. */
bool loop_add_connection(loop_t *l, int fd, const struct sockaddr *peer, socklen_t peer_len);

/* Runs fn(arg, true) on the loop's thread soon; any thread. False when
 * out of memory (fn is not called). */
bool loop_call(loop_t *l, loop_fn fn, void *arg);

/* The loop whose thread this is; NULL on any other thread. */
loop_t *loop_current(void);
unsigned loop_index(const loop_t *l);

/* Has the loop run its daemon again soon: after MHD_resume_connection,
 * which an external-loop daemon does not see by itself. Any thread. */
void loop_wake(loop_t *l);

/* Calls fn(arg, ready) once fd is ready for events (poll()'s POLLIN,
 * POLLOUT), or at deadline_ms (monotonic ms; fd -1: the deadline only).
 * On l's thread only. False when out of memory (fn is not called). */
bool loop_watch(loop_t *l, int fd, short events, int64_t deadline_ms, loop_fn fn, void *arg);

/* Ends the thread once no watch is left (each ends by its deadline) and
 * joins it; the daemon is then the caller's to stop. NULL is fine. */
void loop_stop(loop_t *l);
/* Frees a stopped loop, closing the connections still queued. NULL is fine. */
void loop_free(loop_t *l);

#endif
