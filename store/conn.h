/* One connection to one Redis node, over TCP or TLS (tls.h). Commands are
 * written here (conn_format_command); hiredis's reader parses the replies,
 * whatever carries the bytes. The socket is non-blocking; conn_command
 * waits with poll() within the command timeout, and the queue calls
 * (conn_append, conn_flush, conn_read) never wait, for a caller that polls
 * several connections. A connection belongs to one thread at a time. */
#ifndef CHESSD_STORE_CONN_H
#define CHESSD_STORE_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#include "store.h"
#include "tls.h"

typedef struct conn conn_t;

typedef struct {
    const char *host; /* a name or an IP literal */
    int port;
    unsigned connect_timeout_ms; /* TCP connect and TLS handshake, each */
    unsigned command_timeout_ms; /* a conn_command, from its first byte out to its reply */
    tls_context_t *tls;          /* NULL: plain TCP */
    const char *user, *password; /* AUTH when password is not empty (user: "" for the default user) */
    int db;                      /* SELECT when not 0 */
} conn_settings_t;

/* Connects, handshakes, authenticates and selects. NULL with a sentence in
 * err ("127.0.0.1:6380: connection refused", "...: certificate has expired",
 * "...: AUTH was refused") and what kind of failure it was in *fault (when
 * not NULL) when it cannot. Free with conn_free (NULL is fine). */
conn_t *conn_open(const conn_settings_t *settings, char *err, size_t err_size, store_fault_t *fault);
void conn_free(conn_t *c);

/* How a conn_command failed. */
typedef struct {
    bool sent;   /* the whole command left: Redis may have run it */
    bool closed; /* the peer closed or reset the connection (not a timeout) */
} conn_failure_t;

/* Sends one command and waits for its reply (malloc'd: freeReplyObject).
 * NULL when no reply came in time or the connection broke; *failure says
 * how, and the connection must then be freed, not reused. lengths may be
 * NULL (texts NUL-terminated). */
redisReply *conn_command(conn_t *c, int argc, const char **argv, const size_t *lengths, conn_failure_t *failure);

/* Sets the timeout of the next conn_command calls (at least 1 ms). */
void conn_set_timeout(conn_t *c, unsigned timeout_ms);

/* Whether the connection, owing no reply, was closed while it sat idle (so
 * a command is never sent into a connection already known dead). */
bool conn_closed_while_idle(conn_t *c);

/* A command in Redis's protocol (RESP: an array of bulk strings, the bytes
 * hiredis's redisFormatCommandArgv writes), malloc'd into *target with a
 * NUL after it (free()); its length, or -1 when out of memory or longer
 * than an int counts. lengths may be NULL (texts NUL-terminated). */
int conn_format_command(char **target, int argc, const char **argv, const size_t *lengths);

/* --- queued use, never waiting (a subscriber) --- */

int conn_fd(const conn_t *c);
/* Queues a command; false when out of memory. */
bool conn_append(conn_t *c, int argc, const char **argv, const size_t *lengths);
/* Writes what the socket takes; false when the connection broke. */
bool conn_flush(conn_t *c);
/* What poll() should wait for: POLLIN always, POLLOUT while queued bytes
 * wait (or TLS needs the socket writable to go on). */
short conn_poll_events(const conn_t *c);
/* Reads what has arrived and calls fn for each complete reply, which fn
 * owns (freeReplyObject). False when the connection closed or broke or a
 * reply could not be parsed. */
bool conn_read(conn_t *c, void (*fn)(void *ctx, redisReply *reply), void *ctx);

#endif
