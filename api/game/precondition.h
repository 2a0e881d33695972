/* What a change was made against, judged against the game it would change:
 * the version (expected_version and/or If-Match) or, for a move, the ply
 * (expected_ply: the plies played before it). A ply lets a change that
 * played no move, such as a draw offer, pass; a version does not. A change
 * carries one guard: a ply beside a version, or two versions that differ,
 * is a request at odds with itself. Pure text and number work. */
#ifndef CHESSD_API_GAME_PRECONDITION_H
#define CHESSD_API_GAME_PRECONDITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The guards a request sent. invalid, when set, is the sentence refusing
 * the value of expected_version or expected_ply. */
typedef struct {
    bool given; /* expected_version */
    uint64_t expected;
    const char *invalid;
    const char *if_match; /* RFC 9110: "*" or a list of entity tags, compared strongly; NULL: none */
    bool ply_given;       /* expected_ply */
    uint64_t ply;
} precondition_t;

typedef enum {
    PRECONDITION_OK = 0,
    PRECONDITION_REQUIRED,    /* no guard at all */
    PRECONDITION_INVALID,     /* a guard's value is none (p->invalid) */
    PRECONDITION_CONFLICTING, /* guards no game can pass at once (detail) */
    PRECONDITION_STALE,       /* expected_version or expected_ply is not the game's (detail) */
    PRECONDITION_IF_MATCH,    /* If-Match does not name the game's version (detail) */
    PRECONDITION_VERDICT_COUNT
} precondition_verdict_t;

/* Judges p against a game at version with plies played; the sentence for
 * a refusal goes into detail. What the request says of itself comes first
 * (required, invalid, conflicting), then the game. */
precondition_verdict_t precondition_judge(const precondition_t *p, uint64_t version, uint64_t plies, char *detail,
                                          size_t size);

#endif
