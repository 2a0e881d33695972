/* If-Match judged against a game's version (if_match.h). */
#include "if_match.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

if_match_t if_match_judge(const char *value, uint64_t current)
{
    if (!strcmp(value, "*"))
        return IF_MATCH_FITS;
    char tag[32];
    snprintf(tag, sizeof tag, "\"%" PRIu64 "\"", current);
    if_match_t worst = IF_MATCH_STALE;
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == strlen(tag) && !strncmp(p, tag, n))
            return IF_MATCH_FITS;
        bool weak = n >= 2 && p[0] == 'W' && p[1] == '/';
        const char *opaque = weak ? p + 2 : p;
        size_t opaque_length = weak ? n - 2 : n;
        bool quoted = opaque_length >= 2 && opaque[0] == '"' && opaque[opaque_length - 1] == '"'
                      && !memchr(opaque + 1, '"', opaque_length - 2);
        if (n > 0 && !quoted)
            worst = IF_MATCH_UNQUOTED;
        else if (n > 0 && weak && worst == IF_MATCH_STALE)
            worst = IF_MATCH_WEAK;
        p += strcspn(p, ",");
    }
    return worst;
}

void if_match_refusal(const char *value, if_match_t judged, uint64_t current, char *out, size_t size)
{
    if (judged == IF_MATCH_UNQUOTED)
        snprintf(out, size, "If-Match must be a quoted ETag such as \"%" PRIu64 "\" (the game's version), not %.32s",
                 current, value);
    else if (judged == IF_MATCH_WEAK)
        snprintf(out, size,
                 "If-Match %.32s: a weak ETag (W/) never matches, as If-Match compares strongly; the game's ETag is "
                 "\"%" PRIu64 "\"", value, current);
    else
        snprintf(out, size, "If-Match %.32s does not match the game's version \"%" PRIu64 "\"", value, current);
}
