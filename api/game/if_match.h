/* If-Match against a game's version (RFC 9110 13.1.1): "*" or a
 * comma-separated list of entity-tags, compared strongly, the game's ETag
 * being its version in quotes. Part of the game service's compare-and-set
 * precondition; pure text work. */
#ifndef CHESSD_API_GAME_IF_MATCH_H
#define CHESSD_API_GAME_IF_MATCH_H

#include <stddef.h>
#include <stdint.h>

/* How an If-Match value stands against the current version, best first. */
typedef enum {
    IF_MATCH_FITS,     /* "*", or a strong tag of the current version, alone or in a list */
    IF_MATCH_STALE,    /* well-formed strong tags, none of them the current version */
    IF_MATCH_WEAK,     /* a weak tag (W/"n") among them: If-Match compares strongly, so it never fits */
    IF_MATCH_UNQUOTED, /* an entry that is no entity-tag (If-Match: 3): never fits either */
} if_match_t;

if_match_t if_match_judge(const char *value, uint64_t current);

/* The sentence refusing value (judged, not IF_MATCH_FITS) against current, into out. */
void if_match_refusal(const char *value, if_match_t judged, uint64_t current, char *out, size_t size);

#endif
