/* Routing over a caller's table: (path, method) to a route, with the query
 * parameters each route reads. A '*' segment in a path matches one path
 * segment (an id), handed over in path_param; a literal segment wins over
 * '*' for every method. HEAD is served wherever GET is, by the path's own
 * HEAD route when it has one. Each path's Allow header comes from the table.
 * Outcomes are statuses with a detail text, which the caller answers. */
#ifndef CHESSD_API_HTTP_ROUTER_H
#define CHESSD_API_HTTP_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#include "request.h"
#include "target.h"

typedef struct {
    const char *name;          /* a stable label ("GET /v1/games/{id}"), for metrics */
    const char *path;          /* '*' matches one segment */
    const char *method;        /* GET also serves HEAD, unless the path has a HEAD route */
    api_handler_fn handler;
    const char *const *params; /* the query parameters the handler reads (NULL: none) */
    unsigned flags;            /* ROUTE_* (request.h), and the caller's own bits */
    int pool;                  /* the work pool it runs on (httpd.h), or -1: the connection's thread */
} router_route_t;

typedef enum {
    ROUTER_OK = 0,
    ROUTER_ENOT_FOUND,         /* no route at this path (404) */
    ROUTER_EMETHOD,            /* the path has routes, none for this method (405, with Allow) */
    ROUTER_EUNKNOWN_PARAMETER, /* a query parameter the route does not read */
    ROUTER_EINVALID_PARAMETER, /* a query parameter given twice, with a NUL, or badly escaped */
    ROUTER_EBAD_TARGET,        /* a request target that cannot be routed (400) */
    ROUTER_STATUS_COUNT
} router_status_t;

typedef struct router router_t;

/* The caller's words on an unknown query parameter named name (what to do
 * instead, say), appended to its refusal's detail; NULL: none. */
typedef const char *(*router_hint_fn)(const char *name);

/* A router over routes[0..count), which must outlive it (the table is not
 * copied), with hint for unknown query parameters (NULL: none); NULL when
 * out of memory. router_free(NULL) is fine. */
router_t *router_new(const router_route_t *routes, int count, router_hint_fn hint);
void router_free(router_t *r);

/* Parses the raw request target into *target; ROUTER_ENOT_FOUND for a path
 * longer than any route may be, ROUTER_EINVALID_PARAMETER for a query that
 * cannot be read, ROUTER_EBAD_TARGET otherwise, each with detail. */
router_status_t router_parse_target(const char *raw, size_t length, target_t *target, char *detail,
                                    size_t detail_size);

/* Finds req's route (req->target set) among those with all of
 * req->route_flags: the path's most specific pattern, then its method. Sets
 * req->route and req->path_param. Otherwise req->route is the matched
 * route (a query it refuses) or -1, detail says what is wrong, and for
 * ROUTER_EMETHOD *allow is the pattern's Allow header (owned by r). */
router_status_t router_find(const router_t *r, api_request_t *req, const char **allow, char *detail,
                            size_t detail_size);

/* The table's route i (NULL for an index outside it), and its size. */
const router_route_t *router_route(const router_t *r, int i);
int router_count(const router_t *r);

#endif
