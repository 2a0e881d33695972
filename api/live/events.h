/* Live game events for one replica: event streams (GET
 * /v1/games/{id}/events) and long polls (GET /v1/games/{id} with Prefer:
 * wait), held without a thread each. One hub thread (events_start) holds one
 * Redis Pub/Sub connection, subscribed to the channel of every game with a
 * stream or a waiter here. It knows no HTTP library: the server hands it
 * callbacks that suspend, resume and close a connection. */
#ifndef CHESSD_API_LIVE_EVENTS_H
#define CHESSD_API_LIVE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../http/buf.h"
#include "../http/httpd.h"
#include "../game/service.h"

struct store;

typedef struct events events_t;
typedef struct events_stream events_stream_t;

typedef enum { EVENTS_NDJSON = 0, EVENTS_SSE, EVENTS_FORMAT_COUNT } events_format_t;

typedef enum {
    EVENTS_OK = 0,
    EVENTS_ETOO_MANY, /* over --max-streams, or --max-streams-per-address for this address */
    EVENTS_EDRAINING, /* the replica is shutting down */
    EVENTS_EBUDGET,   /* the buffer budget is spent (http/membudget.h) */
    EVENTS_ENOMEM,
    EVENTS_STATUS_COUNT
} events_status_t;

/* Why a stream closed. */
typedef enum {
    EVENTS_CLOSE_CLIENT = 0, /* its client went (or nothing else is known) */
    EVENTS_CLOSE_STALLED,    /* its client took none of its bytes for stall_seconds */
    EVENTS_CLOSE_OVERFLOW,   /* the bytes waiting for its client passed the bound */
    EVENTS_CLOSE_IDLE,       /* the server's idle timeout: no byte sent for --timeout */
    EVENTS_CLOSE_BUDGET,     /* shed: the buffer budget was passed and it held the most the longest */
    EVENTS_CLOSE_SHUTDOWN,   /* the replica drained */
    EVENTS_CLOSE_ENDED,      /* its game ended or is gone */
    EVENTS_CLOSE_ERROR,      /* out of memory */
    EVENTS_CLOSE_COUNT
} events_close_t;

/* The reason's name for metrics: "client", "stalled", ... */
const char *events_close_name(events_close_t why);

/* What the hub counts, for the caller's metrics: a callback with this enum
 * rather than the server's metrics, which sit above this room. */
typedef enum {
    EVENTS_COUNTER_STREAMS_OPEN = 0, /* streams and waiters held: +1, then -1 */
    EVENTS_COUNTER_EVENT,            /* an event queued on a stream */
    EVENTS_COUNTER_RESYNC,           /* a stream sent a fresh snapshot for a gap */
    EVENTS_COUNTER_STALLED,          /* a stream closed: its client stopped reading (stalled, overflow, idle) */
    EVENTS_COUNTER_CLOSED,           /* a stream released, attached once; the label is its events_close_t */
    EVENTS_COUNTER_PUBSUB_RECONNECT, /* the Pub/Sub connection made again */
    EVENTS_COUNTER_FLAG_CHECK,       /* a running clock's flag looked at */
    EVENTS_COUNTER_PRESENCE_READ,    /* a game's players' streams marked, their opponents judged (one read) */
    EVENTS_COUNTER_COUNT
} events_counter_t;
/* Adds delta to a counter for one label (0 but for EVENTS_COUNTER_CLOSED).
 * Called on the hub's thread and the transport's: it must not block. */
typedef void (*events_count_fn)(events_counter_t counter, int label, long long delta);

typedef struct {
    struct store *store;
    game_svc_config_t games; /* the game service as the hub reads and settles games (a fallen flag recorded) */
    events_count_fn count; /* NULL: nothing counted */
    unsigned max_streams;       /* streams and waiters at once */
    unsigned max_per_address;   /* the same from one client address; 0: no limit */
    unsigned heartbeat_seconds; /* between heartbeats on every stream */
    unsigned stall_seconds;     /* a stream whose client takes none of its bytes this long is closed */
    unsigned resync_seconds;    /* a game without a message this long is read again (0: 30) */
    unsigned presence_mark_ms;  /* between marks of a player's stream (game_svc_presence); 0: none */
} events_config_t;

/* How the hub acts on the connection of a stream or a waiter: the
 * transport's callbacks (httpd.h). Each is called with a lock of this
 * module held: it must neither block nor call back in. */
typedef httpd_conn_t events_conn_t;

/* A client that stops reading is found in two ways: the bytes waiting for
 * it (chessd's queue and the kernel's unacknowledged ones together) would
 * pass 256 KiB, or bytes wait and its side acknowledges none of them for
 * stall_seconds (heartbeats are more bytes waiting, not progress). Either
 * way its stream fails and conn.abort is called. Every stream's bytes (a
 * mux's games' too) count against the process's buffer budget
 * (http/membudget.h): past it, the stream whose bytes have waited the
 * most the longest fails the same way, and none is admitted while it is
 * spent (EVENTS_EBUDGET). */

/* Starts the hub thread (it connects to Redis by itself, and again whenever
 * the connection is lost). NULL with the reason in err. The thread turns
 * each published message into bytes queued on the streams of its game (or a
 * fresh snapshot when a stream missed one) and wakes the waiters. It also
 * sends heartbeats, re-reads games that fell silent, and fires the flag
 * timers of running clocks. */
events_t *events_start(const events_config_t *cfg, char *err, size_t err_size);
/* Shutdown, first step: every stream gets the closing event and ends, every
 * waiter is released, and nothing new is admitted. */
void events_drain(events_t *hub);
/* Stops the thread and frees the hub; call once no connection can reach it
 * any more (after the HTTP daemon has stopped). NULL is fine. */
void events_stop(events_t *hub);

/* Bounds. A stream or waiter takes one place, in all and for its client
 * address (at most EVENTS_ADDRESS_MAX bytes; longer ones are cut): admit
 * before the work of starting one, then hand the place to
 * events_stream_attach or events_wait, or give it back with events_release. */
enum { EVENTS_ADDRESS_MAX = 16 };
events_status_t events_admit(events_t *hub, const void *address, size_t length);
void events_release(events_t *hub, const void *address, size_t length);

/* A stream of game id for a client that has the game as of version: json
 * (NULL: none) is the first event, a snapshot (type "game"), queued before
 * any live event; ended: the stream ends after it. NULL when out of memory.
 * Owned by the caller until events_stream_release. */
events_stream_t *events_stream_new(events_format_t format, const char *id, uint64_t version, const char *json,
                                   size_t length, bool ended);
/* Puts s under the hub with its connection, taking over a place admitted
 * for address. EVENTS_EDRAINING, or EVENTS_EBUDGET (the buffer budget is
 * passed, s's own first bytes counted): refused (the place is given back;
 * s is still the caller's to release). */
events_status_t events_stream_attach(events_t *hub, events_stream_t *s, const void *address, size_t length,
                                     const events_conn_t *conn);
/* A multi-game stream (POST /v1/games/events), stream_id its id: first
 * an event {"type":"stream","stream":<id>}, then, for each of the count
 * games ids (distinct), its state as a snapshot unless the client has it
 * (since[i], 0 or NULL: nothing; a version that is not the game's gets the
 * snapshot too), then every change of it; a game not found is reported
 * once ({"type":"not_found","id":...}) and the stream goes on. Games are
 * added while it is open through the stream's id set in Redis
 * (store_stream_ids_*, which the caller makes, with the count ids, before
 * answering; EVENTS_MUX_IDS_TTL): the hub reads it when told on the
 * stream's channel, follows each id it lacks, touches it now and then and
 * deletes it once the stream is released. SSE events carry no id line
 * (the data says game and version). One place, like a stream; released
 * with events_stream_release. NULL when out of memory. */
enum { EVENTS_MUX_MAX = 500, EVENTS_MUX_IDS_TTL = 600 };
events_stream_t *events_mux_new(events_format_t format, const char *stream_id, const char *const *ids,
                                const uint64_t *since, unsigned count);

/* Makes s a spectator's stream of a game with a spectator delay (before it
 * is attached), its first event a view showing sig (game_svc_view_t; 0:
 * none yet). Changes are not passed on: the game is read again at each,
 * and the view sent when it shows something else, until the game is over
 * and the stream follows it as any other does. A mux: each of its games so. */
void events_stream_set_delayed(events_stream_t *s, uint64_t sig);

/* Makes s, a finished game's stream (before it is attached), follow the
 * game's review: it stays open for the review events ({"type":"review",
 * ...}: api/game/reviews.h) and ends after the one that says done or
 * failed, or after a minute without one. */
void events_stream_follow_review(events_stream_t *s);

/* Makes s a player's stream (before it is attached), opened with the
 * token of `player`. While it is open, the hub marks the player here every
 * presence_mark_ms, with the game's other streams of players on this
 * replica in the same read, and tells the stream of their opponent:
 * {"type":"opponent_gone","gone":true,"claim_in_ms":N} once the opponent
 * is gone on their turn, again when the time to wait changes, and
 * {"type":"opponent_gone","gone":false} once they are back (SSE: no id
 * line; these are no versions of the game). */
void events_stream_set_player(events_stream_t *s, color_t player);

/* For the connection's thread: copies up to max queued bytes into out and
 * returns their count; 0 when there is nothing to send now (conn.suspend has
 * then been called, and conn.resume follows once there is); -1 at the end of
 * the stream; -2 when it failed (its client stopped reading). */
ssize_t events_stream_read(events_stream_t *s, char *out, size_t max);
/* The connection is gone: detaches s, gives its place back and frees it.
 * NULL is fine. */
void events_stream_release(events_stream_t *s);
/* Before its release: the server closed s's connection by its idle timeout
 * (its client was there but took nothing), unless s had ended or failed. */
void events_stream_idle(events_stream_t *s);

/* A long poll on game id, whose client has version: conn.resume is called
 * once, when a later version is published or seen, after `seconds`, or on
 * shutdown; the caller's connection must be suspended before this call.
 * Takes over a place admitted for address. EVENTS_EDRAINING or
 * EVENTS_ENOMEM: not held (the place is given back, conn.resume never called). */
events_status_t events_wait(events_t *hub, const char *id, uint64_t version, unsigned seconds, const void *address,
                            size_t length, const events_conn_t *conn);

/* One event as format frames it, appended to out. SSE: "id: <version>\n"
 * (left out when version is 0), "event: <type>\n", "data: <json>\n\n";
 * NDJSON: the JSON and a newline. json must hold no newline. */
void events_frame(buf_t *out, events_format_t format, const char *type, uint64_t version, const char *json,
                  size_t length);
/* A heartbeat: SSE ": heartbeat\n\n", NDJSON an empty line. */
void events_frame_heartbeat(buf_t *out, events_format_t format);

/* Reads a Last-Event-ID header: a version (decimal digits only, no sign or
 * space, at most 2^53 - 1). False for anything else (NULL included). */
bool events_last_event_id(const char *text, uint64_t *version);

#endif
