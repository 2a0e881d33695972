/* A change's guards judged against a game (precondition.h): what the request
 * says of itself first, then the version or the ply against the game's. */
#include "precondition.h"

#include <inttypes.h>
#include <stdio.h>

#include "if_match.h"

/* The sentence for guards that ask for two different games, or none. */
static precondition_verdict_t conflicting(const precondition_t *p, char *detail, size_t size)
{
    if (p->ply_given)
        snprintf(detail, size,
                 "send expected_ply or a version (%s), not both: a ply lets a change that played no move pass, "
                 "a version does not",
                 p->given ? "expected_version" : "If-Match");
    else
        snprintf(detail, size,
                 "expected_version %" PRIu64 " is not a version If-Match %.32s names: send one of them, or both "
                 "naming the same version",
                 p->expected, p->if_match);
    return PRECONDITION_CONFLICTING;
}

precondition_verdict_t precondition_judge(const precondition_t *p, uint64_t version, uint64_t plies, char *detail,
                                          size_t size)
{
    bool versioned = p->given || p->if_match;
    if (size)
        detail[0] = '\0';
    if (!versioned && !p->ply_given)
        return PRECONDITION_REQUIRED;
    if (p->invalid) {
        snprintf(detail, size, "%s", p->invalid);
        return PRECONDITION_INVALID;
    }
    /* A weak or unquoted If-Match fits no version: its own refusal (412) says why. */
    if ((p->ply_given && versioned)
        || (p->given && p->if_match && if_match_judge(p->if_match, p->expected) == IF_MATCH_STALE))
        return conflicting(p, detail, size);
    if (p->ply_given && p->ply != plies) {
        snprintf(detail, size, "the game has %" PRIu64 " %s played, not %" PRIu64 " (it is at version %" PRIu64 ")",
                 plies, plies == 1 ? "ply" : "plies", p->ply, version);
        return PRECONDITION_STALE;
    }
    if (p->given && p->expected != version) {
        snprintf(detail, size, "the game is at version %" PRIu64 ", not %" PRIu64, version, p->expected);
        return PRECONDITION_STALE;
    }
    if_match_t judged = p->if_match ? if_match_judge(p->if_match, version) : IF_MATCH_FITS;
    if (judged != IF_MATCH_FITS) {
        if_match_refusal(p->if_match, judged, version, detail, size);
        return PRECONDITION_IF_MATCH;
    }
    return PRECONDITION_OK;
}
