/* The origins of a CORS setting and the decisions made with them (cors.h).
 * An origin is matched whole, never by prefix or pattern, so a listed
 * https://app.example lets neither https://app.example.evil nor
 * http://app.example in. */
#include "cors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { ECHO_MAX = 40 };

_Static_assert(CORS_ORIGIN_MAX == 300 && CORS_ORIGINS_MAX == 32, "origin_read and cors_parse name these bounds");

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* [s, s + n) without the blanks at either end. */
static void trim(const char **s, size_t *n)
{
    while (*n && is_blank(**s))
        (*s)++, (*n)--;
    while (*n && is_blank((*s)[*n - 1]))
        (*n)--;
}

/* The next element of the comma-separated list at *p, blanks trimmed (an
 * empty one has length 0); false once the list is used up. */
static bool list_next(const char **p, const char **start, size_t *length)
{
    if (!*p)
        return false;
    const char *comma = strchr(*p, ',');
    *start = *p;
    *length = comma ? (size_t)(comma - *p) : strlen(*p);
    *p = comma ? comma + 1 : NULL;
    trim(start, length);
    return true;
}

/* Whether the comma-separated list holds token (length bytes). */
static bool list_has(const char *list, const char *token, size_t length, bool case_sensitive)
{
    const char *start;
    size_t n;
    for (const char *p = list; list_next(&p, &start, &n);)
        if (n == length && n && !(case_sensitive ? strncmp(start, token, n) : strncasecmp(start, token, n)))
            return true;
    return false;
}

/* Whether s (n bytes) is an HTTP token short enough to be echoed in a detail. */
static bool echoable(const char *s, size_t n)
{
    if (!n || n > ECHO_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && !strchr("!#$%&'*+-.^_`|~", s[i]))
            return false;
    return true;
}

/* The host at s: a bracketed IPv6 address, or names of letters, digits, '-'
 * and '_' joined by single dots. Its length, or 0 (why set) when none. */
static size_t host_length(const char *s, size_t n, const char **why)
{
    size_t i = 0;
    if (n && s[0] == '[') {
        while (++i < n && (s[i] == ':' || s[i] == '.' || (is_alnum(s[i]) && strchr("0123456789abcdefABCDEF", s[i]))))
            ;
        if (i < n && s[i] == ']' && i > 1 && memchr(s, ':', i))
            return i + 1;
        *why = "an IPv6 host is its address in brackets, [2001:db8::1]";
        return 0;
    }
    bool name_start = true; /* at the start of a name: nothing yet, or a dot just before */
    for (; i < n; i++) {
        if (s[i] == '.' && name_start)
            break;
        if (s[i] != '.' && !is_alnum(s[i]) && s[i] != '-' && s[i] != '_')
            break;
        name_start = s[i] == '.';
    }
    if (i < n && s[i] == '*')
        *why = "a pattern is not an origin: list each origin, or give '*' alone for any";
    else if (name_start)
        *why = "the host is missing, or has a dot at an end or two dots in a row";
    else
        return i;
    return 0;
}

/* Reads the origin s (n bytes) into out, lower case, without its scheme's
 * default port; false with why set otherwise. */
static bool origin_read(const char *s, size_t n, char out[CORS_ORIGIN_MAX + 1], const char **why)
{
    if (n == 0) {
        *why = "an origin is empty: two commas in a row, or one at an end";
        return false;
    }
    if (n > CORS_ORIGIN_MAX) {
        *why = "longer than an origin may be (300 bytes)";
        return false;
    }
    bool https = n >= 8 && !strncasecmp(s, "https://", 8);
    size_t scheme = https ? 8 : n >= 7 && !strncasecmp(s, "http://", 7) ? 7 : 0;
    if (!scheme) {
        *why = "an origin is http:// or https://, a host and an optional port";
        return false;
    }
    size_t host = host_length(s + scheme, n - scheme, why);
    if (!host)
        return false;
    size_t at = scheme + host, port_start = at + 1, port_digits = 0;
    unsigned long port = 0;
    if (at < n && s[at] == ':') {
        while (port_start + port_digits < n && s[port_start + port_digits] >= '0' && s[port_start + port_digits] <= '9'
               && port_digits < 6)
            port = port * 10 + (unsigned long)(s[port_start + port_digits++] - '0');
        if (!port_digits || port_digits > 5 || s[port_start] == '0' || port > 65535) {
            *why = "the port must be a number from 1 to 65535, with no leading zero";
            return false;
        }
        at = port_start + port_digits;
    }
    if (at < n) {
        *why = s[at] == '/'                    ? "an origin has no path, not even a trailing '/'"
               : s[at] == '?' || s[at] == '#' ? "an origin has no query or fragment"
               : s[at] == '@'                 ? "an origin has no user or password"
                                              : "the host or port holds a character that cannot be there";
        return false;
    }
    bool default_port = port == (https ? 443u : 80u);
    size_t keep = port_digits && !default_port ? n : scheme + host;
    for (size_t i = 0; i < keep; i++)
        out[i] = lower(s[i]);
    out[keep] = '\0';
    return true;
}

bool cors_parse(const char *list, cors_t *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    const char *start = list, *why = "";
    size_t n = strlen(list);
    trim(&start, &n);
    if (n == 1 && *start == '*') {
        out->any = true;
        return true;
    }
    for (const char *p = list; list_next(&p, &start, &n);) {
        if (n == 1 && *start == '*')
            why = "'*' (any origin) stands alone, not in a list";
        else if (out->count == CORS_ORIGINS_MAX)
            why = "more origins than the 32 a list may hold";
        else if (origin_read(start, n, out->origins[out->count], &why)) {
            out->count++;
            continue;
        }
        snprintf(err, err_size, "'%.*s%s': %s", (int)(n > 64 ? 64 : n), start, n > 64 ? "..." : "", why);
        return false;
    }
    return true;
}

const char *cors_allow_origin(const cors_t *cors, const char *origin)
{
    if (!cors || !origin || strnlen(origin, CORS_ORIGIN_MAX + 1) > CORS_ORIGIN_MAX)
        return NULL;
    if (cors->any)
        return "*";
    for (int i = 0; i < cors->count; i++)
        if (!strcasecmp(cors->origins[i], origin))
            return cors->origins[i];
    return NULL;
}

/* The first header of the list asked for that may not be: its text and length; false when there is none. */
static bool header_refused(const char *headers, const char **name, size_t *length)
{
    for (const char *p = headers; list_next(&p, name, length);)
        if (*length && !list_has(CORS_REQUEST_HEADERS, *name, *length, false))
            return true;
    return false;
}

cors_status_t cors_preflight(const cors_t *cors, const char *origin, const char *method, const char *headers,
                             const char *allow, cors_grant_t *grant, char *detail, size_t detail_size)
{
    *grant = (cors_grant_t){ .allow_origin = cors_allow_origin(cors, origin) };
    if (!grant->allow_origin) {
        snprintf(detail, detail_size, "this page's origin (the Origin header) is not one of the origins this "
                                      "server allows (--cors-origins)");
        return CORS_EORIGIN;
    }
    size_t method_length = method ? strlen(method) : 0;
    if (!allow || !method_length || !list_has(allow, method, method_length, true)) {
        bool echo = echoable(method, method_length);
        snprintf(detail, detail_size, "the method asked for (Access-Control-Request-Method%s%.*s) is not one of "
                 "this path's: %s", echo ? ": " : "", echo ? (int)method_length : 0, echo ? method : "",
                 allow ? allow : "none");
        return CORS_EMETHOD;
    }
    const char *name;
    size_t length;
    if (headers && header_refused(headers, &name, &length)) {
        bool echo = echoable(name, length);
        snprintf(detail, detail_size, "%s%.*s%s may not be sent from another origin; these may: %s",
                 echo ? "the header " : "a header asked for in Access-Control-Request-Headers",
                 echo ? (int)length : 0, echo ? name : "", echo ? " (Access-Control-Request-Headers)" : "",
                 CORS_REQUEST_HEADERS);
        return CORS_EHEADER;
    }
    /* Each header granted once, in the list's order and spelling. */
    const char *p = CORS_REQUEST_HEADERS;
    size_t used = 0;
    while (headers && list_next(&p, &name, &length)) {
        if (!list_has(headers, name, length, false) || used + length + 3 > sizeof grant->allow_headers)
            continue;
        used += (size_t)snprintf(grant->allow_headers + used, sizeof grant->allow_headers - used, "%s%.*s",
                                 used ? ", " : "", (int)length, name);
    }
    return CORS_OK;
}
