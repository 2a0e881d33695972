/* chessd's own recv(2) and close(2), which replace libc's for the whole
 * process (interpose.c says why, and what would switch them off). Until
 * hooks are installed they are the bare system calls; once installed, every
 * recv() and close() in the process, libmicrohttpd's included, goes through
 * them. The hooks read and close with interpose_system_recv/close. */
#ifndef CHESSD_API_HTTP_INTERPOSE_H
#define CHESSD_API_HTTP_INTERPOSE_H

#include <stddef.h>
#include <sys/types.h>

typedef ssize_t (*interpose_recv_fn)(int fd, void *buf, size_t len, int flags);
typedef int (*interpose_close_fn)(int fd);

/* Sends every recv() and close() of the process to on_recv and on_close
 * from now on; NULL, NULL: straight to the system calls again. Safe while
 * other threads call them (a call already under way finishes with the hook
 * it found). */
void interpose_install(interpose_recv_fn on_recv, interpose_close_fn on_close);

/* The system calls themselves, past the replacements. */
ssize_t interpose_system_recv(int fd, void *buf, size_t len, int flags);
int interpose_system_close(int fd);

#endif
