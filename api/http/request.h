/* The request and response as handlers see them, independent of the HTTP
 * library: handlers read an api_request_t and fill an api_response_t. What
 * only the transport can answer (a header's value) it supplies through a
 * callback in the request, so nothing here links against the server. The
 * application's context and its event streams are opaque here: the
 * application reads and frees them through the callbacks it gives httpd.h. */
#ifndef CHESSD_API_HTTP_REQUEST_H
#define CHESSD_API_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target.h"

enum { API_PATH_PARAM_MAX = 64, API_CLIENT_SIZE = 48 };

/* The value of request header `name` (case-insensitive), or NULL; source is
 * api_request_t.header_source. Valid for the request's lifetime. */
typedef const char *(*api_header_fn)(const void *source, const char *name);
/* The client's address as text into out (api_request_client); source as above. */
typedef void (*api_client_fn)(const void *source, char *out, size_t size);

typedef struct {
    const char *method;
    const char *path;                  /* decoded, = target->path */
    const target_t *target;            /* the parsed request target: path and query */
    const char *body; /* NUL-terminated; body_length excludes the NUL */
    size_t body_length;
    /* A large body (httpd_config_t.large_path) past max_body is kept in an
     * unnamed file instead: body is then "", and body_length its size. */
    bool body_spooled;
    int body_fd;                       /* the file, when body_spooled; the handler may dup() it */
    const char *request_id;
    const void *app;                   /* the application's context, opaque here (api/app.h) */
    char path_param[API_PATH_PARAM_MAX + 1]; /* the {id} of a matched route */
    int route;                         /* set by the router: matched route or -1 */
    unsigned route_flags;              /* routes without all these ROUTE_* flags are not found (0: any) */
    bool draining;                     /* the server is shutting down (SIGTERM) */
    unsigned waited_seconds;           /* a long poll: the request was held this long at most (0: not held) */
    api_header_fn header;              /* set by the server; NULL: no headers */
    api_client_fn client;              /* set by the server; NULL: no address known */
    const void *header_source;         /* header's first argument (the connection) */
} api_request_t;

/* A body made while it is sent (api_response_t.body_stream), for answers
 * too large to hold whole. The transport gives the stream its connection
 * (attach, once, before any read), then reads it on the connection's thread:
 * read returns up to max bytes; 0 when none are ready, having first called
 * conn->suspend(conn->arg) (under the stream's own lock, so that the maker's
 * conn->resume(conn->arg) once more are ready cannot be missed); -1 at the
 * end; -2 when making it failed (the connection is then closed, the answer
 * cut). At the end the transport asks for trailers (NULL: none): up to max
 * name and value pairs, valid until free. free is called once, whether or
 * not the answer was sent. */
typedef struct {
    void (*suspend)(void *arg);
    void (*resume)(void *arg);
    void *arg;
    void (*abort)(void *arg); /* closes the connection now (the body is dropped); any thread, never blocks */
} api_body_conn_t;

typedef struct {
    void (*attach)(void *stream, const api_body_conn_t *conn);
    ssize_t (*read)(void *stream, char *out, size_t max);
    size_t (*trailers)(void *stream, const char **names, const char **values, size_t max);
    void (*free)(void *stream);
} api_body_ops_t;

typedef struct {
    unsigned status;
    const char *content_type; /* static string */
    char *body;               /* malloc'd, owned by the response */
    size_t body_length;
    const char *allow;        /* the Allow header for 405 (a string that outlives the answer), else NULL */
    char etag[32];            /* ETag header when not empty */
    char location[96];        /* Location header when not empty */
    unsigned retry_after;     /* Retry-After seconds when not 0 */
    const char *authenticate; /* WWW-Authenticate's value (a static string) when not NULL (401) */
    const char *problem_code; /* the problem's code when the answer is one, else NULL */
    /* An event stream to serve after the head (status and content_type set,
     * no body); owned by the response, read and freed through the
     * application's httpd_live_t callbacks (httpd.h). */
    void *stream;
    const char *security_policy; /* Content-Security-Policy header (static string) when not NULL */
    /* A long poll: the server may hold the request up to wait_seconds, until
     * the game passes wait_version, then run the handler again with
     * req->waited_seconds set; or send this answer at once. */
    unsigned wait_seconds;
    uint64_t wait_version;
    char preference_applied[24]; /* Preference-Applied header when not empty */
    void *body_stream;           /* a body made while sent (no body), through body_ops; owned by the response */
    const api_body_ops_t *body_ops;
    const char *trailer;         /* the Trailer header (the trailers' names, static) when not NULL */
    /* A HEAD's answer whose GET body was never made (an engine search): its
     * length is unknown, so it goes without Content-Length (body ignored). */
    bool head_unknown_length;
} api_response_t;

/* What a route's handler does: reads req, fills res. */
typedef void (*api_handler_fn)(const api_request_t *req, api_response_t *res);

/* The route flags the transport acts on (api_request_t.route_flags and a
 * route's flags, router.h); bits from ROUTE_APP_FIRST up are the
 * application's own. */
enum {
    ROUTE_PROBE = 1 << 0,   /* health, readiness, metrics: never rate-limited or refused while draining; the
                             * only routes on the probe port */
    ROUTE_CREATES = 1 << 1, /* creates stored data: under the per-address creation limit */
    ROUTE_STREAM = 1 << 2,  /* an event stream: admitted under the stream bounds before its handler runs */
    ROUTE_APP_FIRST = 1 << 8
};

/* The longest wait a client may ask for (Prefer: wait=N); longer asks get this. */
enum { API_WAIT_MAX_SECONDS = 60 };

/* A query parameter's value (exact, case-sensitive name), or NULL. Valid for
 * the request's lifetime. */
const char *api_request_query(const api_request_t *req, const char *name);
/* A request header's value, or NULL (through req->header). */
const char *api_request_header(const api_request_t *req, const char *name);
/* The client as the per-address limits count it, into out (API_CLIENT_SIZE
 * bytes): an IPv4 address, or an IPv6 /64 ("2001:db8:1:2::/64"); "" when
 * not known. Read when asked, not on every request. */
void api_request_client(const api_request_t *req, char out[API_CLIENT_SIZE]);
/* The wait a Prefer header value asks for (RFC 7240: "wait=N" among
 * comma-separated preferences, names case-insensitive, parameters after ';'
 * and other preferences ignored, the first wait counted): N seconds, at most
 * max; 0 when none is asked, or its value is not a non-negative integer. */
unsigned api_prefer_wait(const char *prefer, unsigned max);
/* Whether the client prefers text/plain over JSON (Accept header). */
bool api_request_wants_text(const api_request_t *req);

/* Sets a successful response; takes ownership of body (may be NULL on OOM,
 * which becomes a 500). */
void api_response_set(api_response_t *res, unsigned status, const char *content_type, char *body, size_t length);

#endif
