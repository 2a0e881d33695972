/* Cross-origin requests from browser pages (CORS, the Fetch standard): the
 * origins allowed, read once at start-up into a caller-owned cors_t, and the
 * transport's two decisions with them: which origin an answer names, and
 * whether a preflight is granted. Pure: no allocation, no I/O, no globals. */
#ifndef CHESSD_API_HTTP_CORS_H
#define CHESSD_API_HTTP_CORS_H

#include <stdbool.h>
#include <stddef.h>

enum {
    CORS_ORIGINS_MAX = 32,   /* origins in a list */
    CORS_ORIGIN_MAX = 300,   /* bytes of an origin, listed or sent in Origin: a longer one is never allowed */
    CORS_MAX_AGE = 600,      /* seconds a browser may keep a granted preflight */
    CORS_ALLOW_HEADERS_MAX = 160, /* room for every request header a preflight may be granted, once each */
};

/* The response headers a page may read (Access-Control-Expose-Headers). The
 * export's trailers are left out: fetch shows no trailer in any browser. */
#define CORS_EXPOSE_HEADERS "ETag, Location, Retry-After, X-Request-Id, Preference-Applied, WWW-Authenticate, Allow"
/* The request headers a preflight may ask for: those chessd reads. */
#define CORS_REQUEST_HEADERS \
    "Accept, Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, Last-Event-ID, Prefer, X-Request-Id"

typedef struct {
    bool any; /* "*": every origin, answered with Access-Control-Allow-Origin: * */
    int count;
    char origins[CORS_ORIGINS_MAX][CORS_ORIGIN_MAX + 1]; /* "scheme://host[:port]", lower case */
} cors_t;

/* Reads list, origins separated by commas (blanks around each ignored), or
 * "*" alone. An origin is http:// or https://, a host (a name, an IPv4
 * address or a bracketed IPv6 one) and an optional port; nothing after it.
 * Kept in lower case, a scheme's default port dropped, as a browser sends
 * it. False with a sentence in err on the first origin that is not one. */
bool cors_parse(const char *list, cors_t *out, char *err, size_t err_size);

/* The Access-Control-Allow-Origin of an answer to a request whose Origin
 * header is origin (NULL: none): "*" with any, the listed origin it is
 * (compared without case), else NULL, also for a NULL cors. The text lives
 * as long as cors. */
const char *cors_allow_origin(const cors_t *cors, const char *origin);

typedef enum {
    CORS_OK = 0,
    CORS_EORIGIN, /* the origin is not allowed */
    CORS_EMETHOD, /* the method asked for is not one of the path's */
    CORS_EHEADER, /* a header asked for is not one of CORS_REQUEST_HEADERS */
    CORS_STATUS_COUNT
} cors_status_t;

typedef struct {
    const char *allow_origin;                    /* cors_allow_origin's */
    char allow_headers[CORS_ALLOW_HEADERS_MAX]; /* the headers asked for, as CORS_REQUEST_HEADERS spells them; "" none */
} cors_grant_t;

/* Decides a preflight: from origin (the Origin header), for method
 * (Access-Control-Request-Method) with headers (Access-Control-Request-Headers,
 * comma-separated; NULL: none) at a path whose methods are allow (its Allow
 * header, ", "-separated). CORS_OK with *grant filled; else what is refused,
 * with a sentence in detail that echoes nothing but a well-formed token. */
cors_status_t cors_preflight(const cors_t *cors, const char *origin, const char *method, const char *headers,
                             const char *allow, cors_grant_t *grant, char *detail, size_t detail_size);

#endif
