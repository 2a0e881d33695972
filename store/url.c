/* See url.h. The credentials end at the URL's last '@' (a host never holds
 * one, a password may), the user at the first ':' before it; a host in
 * brackets is an IPv6 literal. */
#include "url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credentials.h"

/* Reads "host[:port]" (a host in brackets for IPv6) at *p, up to one of
 * stop; advances *p. */
static bool parse_node(const char **p, const char *stop, cluster_node_t *node, char *err, size_t err_size)
{
    const char *s = *p;
    size_t host_length;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (!close) {
            snprintf(err, err_size, "Redis URL has an unclosed '[' in a host");
            return false;
        }
        host_length = (size_t)(close - s - 1);
        s++;
        *p = close + 1;
    } else {
        host_length = strcspn(s, ":,/");
        *p = s + host_length;
    }
    if (host_length == 0 || host_length >= sizeof node->host || (**p && **p != ':' && !strchr(stop, **p))) {
        snprintf(err, err_size, "Redis URL needs a host");
        return false;
    }
    memcpy(node->host, s, host_length);
    node->host[host_length] = '\0';
    node->port = 6379;
    if (**p == ':') {
        char *end;
        errno = 0;
        long port = strtol(*p + 1, &end, 10);
        if (end == *p + 1 || errno || port < 1 || port > 65535 || (*end && !strchr(stop, *end))) {
            snprintf(err, err_size, "Redis URL port must be 1 to 65535");
            return false;
        }
        node->port = (int)port;
        *p = end;
    }
    return true;
}

/* The scheme at the start of text: the rest of the URL after it, or NULL. */
static const char *parse_scheme(const char *text, url_t *out)
{
    static const struct {
        const char *prefix;
        bool tls, cluster;
    } schemes[] = {
        { "redis://", false, false },
        { "rediss://", true, false },
        { "redis+cluster://", false, true },
        { "rediss+cluster://", true, true },
    };
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        size_t n = strlen(schemes[i].prefix);
        if (!strncmp(text, schemes[i].prefix, n)) {
            out->tls = schemes[i].tls;
            out->cluster = schemes[i].cluster;
            return text + n;
        }
    }
    return NULL;
}

/* The user and password before the last '@' at *p, decoded; advances *p
 * past the '@'. */
static bool parse_credentials(const char **p, url_t *out, char *err, size_t err_size)
{
    const char *at = strrchr(*p, '@');
    if (!at)
        return true;
    const char *colon = memchr(*p, ':', (size_t)(at - *p));
    const char *user_end = colon ? colon : at;
    if (!credentials_decode(*p, (size_t)(user_end - *p), "Redis URL user", out->user, sizeof out->user, err, err_size)
        || (colon && !credentials_decode(colon + 1, (size_t)(at - colon - 1), "Redis URL password", out->password,
                                         sizeof out->password, err, err_size)))
        return false;
    out->user_only = !colon;
    *p = at + 1;
    return true;
}

/* The nodes, separated by ',' on a cluster; advances *p past them. */
static bool parse_nodes(const char **p, url_t *out, char *err, size_t err_size)
{
    for (;;) {
        if (out->seed_count == URL_SEEDS_MAX) {
            snprintf(err, err_size, "Redis URL names more than %d nodes", URL_SEEDS_MAX);
            return false;
        }
        if (!parse_node(p, out->cluster ? ",/" : "/", &out->seeds[out->seed_count++], err, err_size))
            return false;
        if (**p != ',')
            return true;
        (*p)++;
    }
}

/* What follows the nodes: nothing, "/", or "/<db>". */
static bool parse_database(const char *p, url_t *out, char *err, size_t err_size)
{
    if (*p == '/' && p[1]) {
        char *end;
        long db = strtol(p + 1, &end, 10);
        if (*end || end == p + 1 || db < 0 || db > 1000 || (out->cluster && db != 0)) {
            snprintf(err, err_size, "%s",
                     out->cluster ? "Redis Cluster has only database 0" : "Redis URL database must be a number");
            return false;
        }
        out->db = (int)db;
    } else if (*p && strcmp(p, "/")) {
        snprintf(err, err_size, "Redis URL has something after its host");
        return false;
    }
    return true;
}

bool url_parse(const char *text, url_t *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    const char *p = parse_scheme(text, out);
    if (!p) {
        snprintf(err, err_size, "Redis URL must start with redis://, rediss://, redis+cluster:// or rediss+cluster://");
        return false;
    }
    return parse_credentials(&p, out, err, err_size) && parse_nodes(&p, out, err, err_size)
           && parse_database(p, out, err, err_size);
}
