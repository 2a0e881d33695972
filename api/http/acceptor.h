/* A listening socket owned by chessd: a thread of its own accepts each
 * connection, admits it under chessd's limits, and hands it on (to an event
 * loop, or to libmicrohttpd's MHD_add_connection). The limits are this
 * thread's alone: libmicrohttpd is given none it can reach, since it counts
 * a connection for less long (acceptor_start says why). */
#ifndef CHESSD_API_HTTP_ACCEPTOR_H
#define CHESSD_API_HTTP_ACCEPTOR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct acceptor acceptor_t;

/* Takes an admitted connection: false when it cannot (the acceptor then
 * closes fd). */
typedef bool (*acceptor_hand_fn)(void *cls, int fd, const struct sockaddr *peer, socklen_t peer_len);

/* The limits. A connection counts, in all and for its client address, from
 * its accept until its descriptor is really closed (wire.h's close watch),
 * whoever closes it. While the total is reached, nothing is accepted, so new
 * clients wait in the kernel's backlog. A connection from an address that
 * holds its share already waits a moment for one of them to close: right
 * after a burst from that address closed at once, the server threads may not
 * have seen every close yet. One still over then, or while too many wait, is
 * closed unserved. */
enum {
    ACCEPTOR_ADDRESS_WAIT_MS = 500, /* how long a connection over its address's share waits for a place */
    ACCEPTOR_WAITING_MAX = 64,      /* connections waiting so at once; more are closed at once */
};

/* Where the thread's own messages go (accept failures), printf-style. */
typedef void (*acceptor_log_fn)(void *cls, const char *format, va_list ap);

typedef struct {
    unsigned max_open;    /* connections at once, in all (at least 1) */
    unsigned per_address; /* from one client address: an IPv4 address, or an IPv6 /64 (0: no limit) */
    acceptor_log_fn log;
} acceptor_config_t;

typedef struct {
    unsigned open;       /* accepted and not yet closed (lingering and waiting ones included) */
    unsigned waiting;    /* over their address's share, waiting for a place */
    uint64_t refused;    /* closed unserved because their address kept its share full */
} acceptor_stats_t;

/* Opens a listening TCP socket on addr (IPv6 sockets take IPv6 only), with
 * SO_REUSEADDR (a restart binds at once, whatever is in TIME_WAIT) but not
 * SO_REUSEPORT (a second server on the port is an error, not a silent
 * sharer). Returns the descriptor and sets *port to the port bound (useful
 * for port 0), or -1 with errno set. */
int acceptor_listen(const struct sockaddr *addr, socklen_t addr_len, unsigned *port);

/* The counts for cfg, before any thread: NULL when out of memory. The
 * descriptor watch needs wire_start() to have run. */
acceptor_t *acceptor_new(const acceptor_config_t *cfg);

/* Starts the accepting thread on listen_fd (which it then owns), handing
 * each connection to hand(cls, ...): to daemons started with
 * MHD_USE_NO_LISTEN_SOCKET and MHD_USE_ITC, no per-address limit, and a
 * connection limit that leaves each of their server threads room for
 * max_open + 2. False when out of threads (listen_fd is
 * then closed).
 *
 * Why libmicrohttpd gets no limit it can reach: it counts a connection for
 * less long than the counts here do (and 0.9.75 even closes a connection it
 * queued, without reporting it, when its memory cannot be had:
 * new_connection_process_ in daemon.c), so nothing it counts may refuse a
 * connection admitted here. The + 2: it counts a connection closed only
 * after closing its descriptor, so each thread may briefly hold one more
 * than is counted here; and 0.9.75 leaves a server thread's mutex locked,
 * freezing the thread, when a connection handed over finds that thread at
 * its share of the limit. */
bool acceptor_start(acceptor_t *a, int listen_fd, acceptor_hand_fn hand, void *cls);

/* Stops accepting: the thread ends, the connections still waiting are
 * closed, and the listening socket is closed, so new connections are
 * refused by the kernel. Connections already handed over stay with the
 * daemon (and in the counts). Returns once the socket is closed. NULL or
 * never started: nothing. So shutdown needs no MHD_quiesce_daemon(), which
 * races with the server threads of an epoll daemon in libmicrohttpd 0.9.75
 * (both take the socket out of a thread's epoll set; the loser aborts the
 * process). */
void acceptor_stop(acceptor_t *a);

/* Frees the counts: only once no descriptor it counted can still be closed
 * (the daemon stopped, then wire_stop()). NULL: nothing. */
void acceptor_free(acceptor_t *a);

/* The counts now; any thread. */
void acceptor_stats(const acceptor_t *a, acceptor_stats_t *out);

#endif
