/* Opening names: the ECO code and name of every position the opening data
 * set names (rules/openings/, lichess-org/chess-openings, CC0), in a table
 * made at build time by rules/openings/openings_gen.c. Positions compare by
 * key, so another move order to a named position gets its name. A game is in
 * the opening of the last named position along it (opening_follow), found
 * with one probe a position. Pure; the table is constant. */
#ifndef CHESSD_RULES_OPENING_H
#define CHESSD_RULES_OPENING_H

#include <stdint.h>

#include "position.h"

typedef struct {
    uint64_t key;     /* the named position's */
    const char *eco;  /* "B90" */
    const char *name; /* "Sicilian Defense: Najdorf Variation" */
    int plies;        /* of the shortest line that names it */
} opening_t;

/* The data set's longest line, in plies. */
extern const int OPENING_PLIES_MAX;

/* The named position with this key, or NULL. A key stands for what the
 * data set's EPD holds: placement, side to move, castling rights, and an en
 * passant square only when a capture there is legal. */
const opening_t *opening_find(uint64_t key);

/* The name of pos itself, or NULL: none when pos is Chess960, or its game
 * ply (2 * (fullmove - 1), + 1 with Black to move) is past OPENING_PLIES_MAX. */
const opening_t *opening_at(const position_t *pos);

/* The opening a line is in after a move to pos, when it was in *current
 * before (NULL: none yet): pos's own name when it has one, else *current. */
static inline void opening_follow(const opening_t **current, const position_t *pos)
{
    const opening_t *named = opening_at(pos);
    if (named)
        *current = named;
}

#endif
