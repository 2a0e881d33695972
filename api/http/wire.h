/* The bytes of each HTTP connection as they arrive, checked before
 * libmicrohttpd 0.9.75 parses them: its parser is lenient (request
 * smuggling) and its only timeout is an idle one, which each byte resets
 * (README.md). This module reads every byte first, inside the recv()
 * libmicrohttpd calls (interpose.c). It knows bytes and time only: the
 * answer's bytes come from the server's callback. */
#ifndef CHESSD_API_HTTP_WIRE_H
#define CHESSD_API_HTTP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is refused. A request head that is not strict HTTP/1.1 (RFC 9112) is
 * answered with 400 and the connection closed before any of it is run. A
 * chunked body is cut off with 413 as soon as it passes the cap. A head or
 * body that takes longer than its deadline gets its connection shut down. */
typedef enum { WIRE_REFUSE_MALFORMED, WIRE_REFUSE_TOO_LARGE, WIRE_REFUSE_COUNT } wire_refusal_t;

/* Writes the whole HTTP answer for a refused connection into out (at most
 * size bytes) and returns its length; detail says what was wrong. Called on
 * the connection's thread. */
typedef size_t (*wire_answer_fn)(wire_refusal_t why, const char *detail, char *out, size_t size);

typedef struct {
    uint64_t header_timeout_us; /* a head, from the connection's start or its first byte */
    uint64_t body_timeout_us;   /* a body, from the end of its head */
    uint64_t max_body;          /* chunked bodies are cut off past this */
    /* Requests whose line begins with large_line (then a space or '?'),
     * "POST /v1/pgn", may send up to max_large_body bytes, within
     * large_body_timeout_us; NULL: none. */
    const char *large_line;
    uint64_t max_large_body, large_body_timeout_us;
    wire_answer_fn answer;
} wire_config_t;

typedef struct {
    uint64_t refused;         /* connections answered 400/413 by this module */
    uint64_t header_timeouts; /* connections shut down for a late head */
    uint64_t body_timeouts;   /* connections shut down for a late body */
} wire_stats_t;

/* Starts checking (and the deadline thread). False when out of memory or
 * threads. Call once, before connections are accepted. */
bool wire_start(const wire_config_t *cfg);
/* Stops the deadline thread; connections are no longer checked. */
void wire_stop(void);

/* A connection's life, from the server's libmicrohttpd callbacks. */
void wire_connection_opened(int fd);
void wire_connection_closed(int fd);
/* A request on fd has been answered (its response fully sent). */
void wire_request_completed(int fd);
/* Whether the client on fd has closed its side with nothing left unread, or
 * reset the connection: whatever it asked for can no longer be worth doing. */
bool wire_client_gone(int fd);

/* Whom to tell when a descriptor is really closed: fn(ctx, tag). */
typedef void (*wire_closed_fn)(void *ctx, uint64_t tag);
/* Watches fd, a connection just accepted and not yet known to anyone else:
 * fn(ctx, tag) runs once, on the closing thread, when its descriptor is
 * really released, whoever calls close() (a lingering close: when the
 * lingering ends), just before the release, so the number is not yet
 * another's. False when fd is beyond the table (fn then never runs). */
bool wire_watch_close(int fd, wire_closed_fn fn, void *ctx, uint64_t tag);

void wire_stats(wire_stats_t *out);

#endif
