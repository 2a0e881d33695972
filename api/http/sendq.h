/* The send side of a connected TCP socket as the kernel holds it: its
 * buffer's cap, the bytes acknowledged and not, and a close that resets.
 * Linux only (SIOCOUTQ, TCP_INFO's tcpi_bytes_acked from Linux 4.1). Each
 * call is one system call that never blocks; any thread may make it on a
 * descriptor it knows to be open. */
#ifndef CHESSD_API_HTTP_SENDQ_H
#define CHESSD_API_HTTP_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps fd's send buffer at about bytes (the kernel doubles the value for its
 * bookkeeping and no longer grows the buffer by itself). False when refused. */
bool sendq_cap(int fd, int bytes);
/* Bytes written to fd that the peer has not acknowledged yet (SIOCOUTQ). */
bool sendq_unsent(int fd, size_t *unsent);
/* Bytes the peer has acknowledged since the connection opened. False when
 * the kernel does not tell (before Linux 4.1). */
bool sendq_acked(int fd, uint64_t *acked);
/* fd's close(2) will drop whatever it has queued and reset the connection
 * (SO_LINGER of 0 seconds), so no unsent bytes outlive it in the kernel. */
bool sendq_reset_on_close(int fd);

#endif
