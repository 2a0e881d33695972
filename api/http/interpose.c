/* !!! THIS FILE REPLACES LIBC'S recv(2) AND close(2) FOR THE WHOLE PROCESS !!!
 * Every call to either, from any library, lands here: wire.c's strict reader
 * sees each byte of an HTTP connection before libmicrohttpd's lenient parser,
 * and close() lingers on HTTP sockets; other descriptors go straight to the
 * system call. Before changing this file, or how chessd is built and linked,
 * read "THE INTERPOSITION" below: what would switch it off, silently. */
#define _GNU_SOURCE /* syscall */
#include "interpose.h"

#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ===== THE INTERPOSITION: what, why, and what would switch it off =====
 *
 * What: chessd defines recv() and close() itself. The dynamic linker finds an
 * executable's symbols before libc's, so every call to recv or close in the
 * process (libmicrohttpd's, hiredis's, OpenSSL's and chessd's own) lands here:
 * `nm -D chessd` shows `T recv` and `T close`. Until wire.c installs its
 * hooks (wire_start) both are the bare system calls. The hooks pass every
 * descriptor that is not one of libmicrohttpd's HTTP connections straight to
 * the system call.
 *
 * Why: libmicrohttpd 0.9.75 parses HTTP leniently (obs-fold lines,
 * whitespace before a colon, bare LF, NULs in header values). A lenient
 * proxy in front can read such a request another way, which is request
 * smuggling. It has only an idle timeout (each byte resets it), and it offers
 * no hook before its parser. So chessd's strict reader (wire.c) must see
 * every byte of an HTTP connection first, inside the recv() libmicrohttpd
 * calls. And close() must linger on HTTP sockets (read and drop what the
 * client still sends), or a client whose request was refused reads a reset
 * instead of its answer.
 *
 * The real calls: interpose_system_recv and interpose_system_close are
 * syscall(SYS_recvfrom) and syscall(SYS_close), not libc's functions found
 * through dlsym(RTLD_NEXT). So there is nothing to look up, no libdl, nothing
 * to get wrong before the first call, and the same calls under every
 * sanitizer.
 *
 * What would switch it off, silently (the strict reader then sees nothing
 * and libmicrohttpd's lenient parser answers alone), and what catches each:
 *   1. libmicrohttpd calling recv with flags (wire.c passes those through
 *      unchecked: 0.9.75 passes none), or receiving through recvmsg,
 *      recvfrom, readv, read or its own syscall. Only a libmicrohttpd other
 *      than 0.9.75 would: the start-up version check (mhd_version.c) refuses
 *      one, and tests/api/http/interpose_guards.sh pins the receive functions
 *      libmicrohttpd's shared object imports.
 *   2. A _FORTIFY_SOURCE build turning recv calls into __recv_chk (which is
 *      libc's own, not this recv). interpose_guards.sh fails when
 *      libmicrohttpd, the chessd binary or an object under BUILD/api imports
 *      __recv_chk.
 *   3. Static linking, or a link that keeps recv and close out of the
 *      dynamic symbol table (a version script, hidden visibility).
 *      interpose_guards.sh checks `nm -D chessd` for `T recv` and `T close`,
 *      and that libmicrohttpd is a shared object.
 *   4. A libmicrohttpd other than the tested one: chessd refuses to start on
 *      it (mhd_version.c; --allow-untested-libmicrohttpd overrides, warning).
 *   5. Anything else: the end-to-end strictness tests
 *      (tests/e2e/attacks_http.test.mjs) fail, and at run time httpd.c's
 *      framing backstop counts every request the reader should have refused
 *      (chessd_http_framing_backstop_total in /metrics: 0 while it works). */

static _Atomic(interpose_recv_fn) recv_hook;
static _Atomic(interpose_close_fn) close_hook;

ssize_t interpose_system_recv(int fd, void *buf, size_t len, int flags)
{
    return (ssize_t)syscall(SYS_recvfrom, fd, buf, len, flags, NULL, 0);
}

int interpose_system_close(int fd) { return (int)syscall(SYS_close, fd); }

void interpose_install(interpose_recv_fn on_recv, interpose_close_fn on_close)
{
    atomic_store(&recv_hook, on_recv);
    atomic_store(&close_hook, on_close);
}

/* libc's recv(2), replaced. */
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    interpose_recv_fn hook = atomic_load(&recv_hook);
    return hook ? hook(fd, buf, len, flags) : interpose_system_recv(fd, buf, len, flags);
}

/* libc's close(2), replaced. */
int close(int fd)
{
    interpose_close_fn hook = atomic_load(&close_hook);
    return hook ? hook(fd) : interpose_system_close(fd);
}
