/* The router over a caller's table (router.h). Each path's Allow header is
 * built once, from the methods of every route at the same path pattern; a
 * path belongs to the most specific pattern that fits it (literal segments
 * before '*'), whatever the method. The routes are looked at in an order
 * made once, the more specific patterns first, so the first fit wins. */
#include "router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLOW_MAX = 64 };

struct router {
    const router_route_t *routes;
    int count;
    char (*allow)[ALLOW_MAX]; /* allow[i]: the Allow header of routes[i]'s path */
    int *order;               /* the routes' indices, more specific patterns first */
    int *pattern;             /* pattern[i]: the first route with routes[i]'s path */
    router_hint_fn hint;
};

/* Whether pattern a goes before b: at the first place they differ, a
 * literal character before '*' (so of two patterns that fit one path, the
 * more specific), else in byte order; a prefix first. */
static bool goes_before(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    if (*a == '*' || *b == '*')
        return *b == '*' && *a != '*';
    return (unsigned char)*a < (unsigned char)*b;
}

/* Adds method to an Allow list once ("GET" brings "HEAD" after it). */
static void allow_add(char *allow, const char *method)
{
    const char *names[2] = { method, strcmp(method, "GET") ? NULL : "HEAD" };
    for (int k = 0; k < 2 && names[k]; k++) {
        size_t n = strlen(names[k]);
        bool present = false;
        for (const char *p = allow; *p && !present; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
            present = strncmp(p, names[k], n) == 0 && (p[n] == ',' || p[n] == '\0');
        if (!present && strlen(allow) + n + 3 < ALLOW_MAX)
            snprintf(allow + strlen(allow), ALLOW_MAX - strlen(allow), "%s%s", *allow ? ", " : "", names[k]);
    }
}

router_t *router_new(const router_route_t *routes, int count, router_hint_fn hint)
{
    router_t *r = calloc(1, sizeof *r);
    size_t n = (size_t)(count > 0 ? count : 1);
    if (!r || !(r->allow = calloc(n, sizeof *r->allow)) || !(r->order = calloc(n, sizeof *r->order))
        || !(r->pattern = calloc(n, sizeof *r->pattern))) {
        router_free(r);
        return NULL;
    }
    r->routes = routes;
    r->count = count;
    r->hint = hint;
    for (int i = 0; i < count; i++) {
        r->pattern[i] = -1;
        for (int j = 0; j < count; j++) {
            if (strcmp(routes[i].path, routes[j].path))
                continue;
            allow_add(r->allow[i], routes[j].method);
            if (r->pattern[i] < 0)
                r->pattern[i] = j;
        }
    }
    /* Insertion sort, stable: the table's order within a pattern. */
    for (int i = 0; i < count; i++) {
        int k = i;
        while (k > 0 && goes_before(routes[i].path, routes[r->order[k - 1]].path)) {
            r->order[k] = r->order[k - 1];
            k--;
        }
        r->order[k] = i;
    }
    return r;
}

void router_free(router_t *r)
{
    if (r) {
        free(r->allow);
        free(r->order);
        free(r->pattern);
    }
    free(r);
}

const router_route_t *router_route(const router_t *r, int i) { return i >= 0 && i < r->count ? &r->routes[i] : NULL; }

int router_count(const router_t *r) { return r->count; }

/* Whether path fits pattern; the segment under '*' goes to param. */
static bool path_matches(const char *pattern, const char *path, char *param, size_t param_size)
{
    while (*pattern && *path) {
        if (*pattern == '*') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= param_size)
                return false;
            memcpy(param, path, n);
            param[n] = '\0';
            path += n;
            pattern++;
            continue;
        }
        if (*pattern++ != *path++)
            return false;
    }
    return *pattern == '\0' && *path == '\0';
}

router_status_t router_parse_target(const char *raw, size_t length, target_t *target, char *detail,
                                    size_t detail_size)
{
    target_status_t status = target_parse(raw, length, target, detail, detail_size);
    if (status == TARGET_OK)
        return ROUTER_OK;
    if (status == TARGET_EPATH_TOO_LONG) { /* longer than any route */
        snprintf(detail, detail_size, "no resource at this path");
        return ROUTER_ENOT_FOUND;
    }
    if (status == TARGET_EQUERY_ESCAPE || status == TARGET_EQUERY_TOO_BIG)
        return ROUTER_EINVALID_PARAMETER;
    return ROUTER_EBAD_TARGET;
}

static bool param_known(const char *const *params, const char *name)
{
    for (; params && *params; params++)
        if (!strcmp(*params, name))
            return true;
    return false;
}

/* Every query parameter must be one the route reads, given once, without NUL. */
static router_status_t query_fits(const router_t *r, const router_route_t *route, const target_t *target,
                                  char *detail, size_t detail_size)
{
    for (int i = 0; i < target->param_count; i++) {
        const target_param_t *p = &target->params[i];
        if (memchr(p->name, '\0', p->name_length) || !param_known(route->params, p->name)) {
            const char *hint = r->hint ? r->hint(p->name) : NULL;
            snprintf(detail, detail_size, "unknown query parameter '%.40s'%s", p->name,
                     hint            ? hint
                     : route->params ? " (names are case-sensitive)"
                                     : "; this resource takes none");
            return ROUTER_EUNKNOWN_PARAMETER;
        }
        /* C strings would cut a value with a NUL short: refuse it rather than half-read it. */
        if (memchr(p->value, '\0', p->value_length)) {
            snprintf(detail, detail_size, "a query parameter contains a NUL byte (%%00)");
            return ROUTER_EINVALID_PARAMETER;
        }
        for (int j = 0; j < i; j++) {
            if (!strcmp(target->params[j].name, p->name)) {
                snprintf(detail, detail_size, "query parameter '%.40s' is given more than once", p->name);
                return ROUTER_EINVALID_PARAMETER;
            }
        }
    }
    return ROUTER_OK;
}

/* The route at routes[at]'s pattern for method (HEAD falls back to GET), or -1. */
static int route_at(const router_t *r, int at, const char *method, unsigned flags)
{
    int get = -1;
    for (int i = r->pattern[at]; i < r->count; i++) {
        const router_route_t *route = &r->routes[i];
        if (r->pattern[i] != r->pattern[at] || (route->flags & flags) != flags)
            continue;
        if (!strcmp(route->method, method))
            return i;
        if (!strcmp(route->method, "GET"))
            get = i;
    }
    return strcmp(method, "HEAD") ? -1 : get;
}

router_status_t router_find(const router_t *r, api_request_t *req, const char **allow, char *detail,
                            size_t detail_size)
{
    int best = -1;
    *allow = NULL;
    req->route = -1;
    req->path_param[0] = '\0';
    /* The most specific pattern that fits the path owns it, for every
     * method: /v1/games/export is never taken for /v1/games/{id}. */
    char param[sizeof req->path_param] = "";
    for (int k = 0; k < r->count && best < 0; k++) {
        const router_route_t *route = &r->routes[r->order[k]];
        if ((route->flags & req->route_flags) == req->route_flags
            && path_matches(route->path, req->target->path, param, sizeof param)) {
            best = r->order[k];
            if (strchr(route->path, '*'))
                memcpy(req->path_param, param, sizeof param);
        }
    }
    if (best < 0) {
        snprintf(detail, detail_size, "no resource at this path");
        return ROUTER_ENOT_FOUND;
    }
    req->route = route_at(r, best, req->method, req->route_flags);
    if (req->route < 0) {
        *allow = r->allow[best];
        snprintf(detail, detail_size, "this resource allows only the methods in the Allow header");
        return ROUTER_EMETHOD;
    }
    return query_fits(r, &r->routes[req->route], req->target, detail, detail_size);
}
