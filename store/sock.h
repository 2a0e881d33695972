/* The socket layer under store/conn.c (Redis) and api/play/http_client.c
 * (chessd play's HTTP client). It waits on one descriptor until a deadline
 * (on rules/base/clock.h's clock), connects over TCP with a timeout, and
 * reads and writes without blocking, on a socket or a TLS session. */
#ifndef CHESSD_STORE_SOCK_H
#define CHESSD_STORE_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../rules/base/clock.h"
#include "tls.h"

/* Results of sock_read and sock_write besides bytes moved, as tls.h's. */
enum { SOCK_CLOSED = 0, SOCK_ERROR = -1, SOCK_WAIT = -2 };

/* Waits until fd is ready for events or the deadline (clock_now_ms) passes:
 * false on a timeout; true when ready, or when poll() failed (the next I/O
 * call then reports the error). On a fiber (fiber.h) it yields meanwhile. */
bool sock_wait(int fd, short events, int64_t deadline);

/* A connected non-blocking TCP socket to host:service (a port number as
 * text), TCP_NODELAY and SO_KEEPALIVE set, each address tried within
 * timeout_ms counted once the name is resolved; -1 with the reason in err
 * ("cannot resolve the host: ...", "connect timed out", strerror). On a
 * fiber a name is resolved off its thread, within timeout_ms too. */
int sock_connect(const char *host, const char *service, unsigned timeout_ms, char *err, size_t err_size);

/* One read or write on fd, through tls when it is not NULL; never blocks.
 * > 0: bytes moved. SOCK_WAIT: nothing moved; poll fd for *wait_events
 * (POLLIN or POLLOUT; 0 after any other result). SOCK_CLOSED (a read): the
 * peer closed. A write may return 0 (nothing taken). SOCK_ERROR: errno says
 * why (a reset is ECONNRESET, a broken pipe EPIPE; EPROTO for TLS). */
ssize_t sock_read(int fd, tls_session_t *tls, void *buf, size_t n, short *wait_events);
ssize_t sock_write(int fd, tls_session_t *tls, const void *buf, size_t n, short *wait_events);

#endif
