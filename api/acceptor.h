/* The listening socket, owned by chessd: a thread of its own accepts each
 * connection and hands it to libmicrohttpd (MHD_add_connection), whose
 * server threads then serve it. Stopping is closing this socket after the
 * thread has ended, so shutdown needs no MHD_quiesce_daemon(), which races
 * with the server threads of an epoll daemon in libmicrohttpd 0.9.75 (both
 * take the socket out of a thread's epoll set; the loser aborts the process).
 * libmicrohttpd still applies its per-address limit to what is handed over;
 * the total is this thread's: while it is reached the thread stops
 * accepting, so new clients wait in the kernel's backlog as they would with
 * libmicrohttpd's own listening socket. */
#ifndef CHESSD_API_ACCEPTOR_H
#define CHESSD_API_ACCEPTOR_H

#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>

struct MHD_Daemon;
typedef struct acceptor acceptor_t;

/* Where the thread's own messages go (accept failures), printf-style. */
typedef void (*acceptor_log_fn)(void *cls, const char *format, va_list ap);

/* Opens a listening TCP socket on addr (IPv6 sockets take IPv6 only), with
 * SO_REUSEADDR (a restart binds at once, whatever is in TIME_WAIT) but not
 * SO_REUSEPORT (a second server on the port is an error, not a silent
 * sharer). Returns the descriptor and sets *port to the port bound (useful
 * for port 0), or -1 with errno set. */
int acceptor_listen(const struct sockaddr *addr, socklen_t addr_len, unsigned *port);

/* Starts the accepting thread on listen_fd (which it then owns) for daemon,
 * a daemon started with MHD_USE_NO_LISTEN_SOCKET and MHD_USE_ITC. *held
 * counts the connections handed to the daemon and not yet closed: the thread
 * adds one before it hands a connection over (and takes it back when the
 * daemon refuses it at once); the caller subtracts one when libmicrohttpd
 * reports a connection closed (MHD_CONNECTION_NOTIFY_CLOSED). While *held is
 * at least max_open, nothing is accepted. The count includes connections
 * libmicrohttpd has queued but not yet started, so it never exceeds
 * max_open: the daemon's own connection limit must leave each server thread
 * room for max_open (libmicrohttpd 0.9.75 leaves a server thread's mutex
 * locked, freezing the thread, when a connection handed over finds that
 * thread at its share of the limit). NULL when out of memory or threads
 * (listen_fd is then closed). */
acceptor_t *acceptor_start(int listen_fd, struct MHD_Daemon *daemon, atomic_int *held, unsigned max_open,
                           acceptor_log_fn log);

/* Stops accepting: the thread ends and the listening socket is closed, so
 * new connections are refused by the kernel. Connections already handed over
 * stay with the daemon. Returns once the socket is closed. */
void acceptor_stop(acceptor_t *a);

#endif
