/* The rule sets beside standard chess: one row each in a table (names,
 * start, what the variant adds) and a few hooks (its moves, its end, its
 * insufficient material), as scalachess's Variant and chessops's position
 * classes are built. Standard chess never comes here: position_t.variant
 * is 0 for it and its move generator is the one in movegen.c. */
#ifndef CHESSD_RULES_VARIANT_H
#define CHESSD_RULES_VARIANT_H

#include <stddef.h>

#include "position.h"

/* What a variant's row says it has. */
enum {
    VARIANT_HAS_POCKETS = 1,   /* crazyhouse: captures go to the pocket, drops */
    VARIANT_HAS_CHECKS = 2,    /* three-check: checks given are counted */
    VARIANT_HAS_RESERVES = 4,  /* S-chess: Hawk and Elephant in reserve, gating */
    VARIANT_NO_CASTLING = 8,   /* antichess, racing kings */
    VARIANT_NO_FIFTY_MOVES = 16 /* crazyhouse: no 50- or 75-move rule, as on Lichess */
};

/* How a variant ends by its own rules, beside mate and the draws. */
typedef enum {
    VARIANT_END_NONE = 0,
    VARIANT_END_KING_EXPLODED,   /* atomic */
    VARIANT_END_NO_PIECES,       /* antichess: the side to move has lost everything, and wins */
    VARIANT_END_STALEMATE_WIN,   /* antichess: the side to move cannot move, and wins */
    VARIANT_END_KING_OF_THE_HILL,
    VARIANT_END_THREE_CHECKS,
    VARIANT_END_HORDE_CAPTURED,  /* horde: every white piece is gone */
    VARIANT_END_RACE_FINISHED,   /* racing kings: a king on rank 8 (or both: a draw) */
    VARIANT_END_COUNT
} variant_end_t;

typedef struct {
    const char *key;        /* the API's name, Lichess's: "kingOfTheHill" */
    const char *title;      /* PGN's [Variant], Lichess's: "King of the Hill" */
    const char *engine;     /* the engine's UCI_Variant: "kingofthehill" */
    const char *start_fen;  /* as fen_format writes it */
    unsigned flags;         /* VARIANT_HAS_* */
} variant_rules_t;

/* The row of v (VARIANT_STANDARD included); NULL when v is out of range. */
const variant_rules_t *variant_rules(variant_t v);

/* Reads a variant's name, any case: the API keys, PGN titles and the
 * aliases python-chess and the engines use ("3check", "giveaway", ...).
 * "chess960" (and "fischerandom") is standard chess with *chess960 set.
 * False when the name is none of them. */
bool variant_from_name(const char *name, size_t length, variant_t *variant, bool *chess960);

/* The moves of a variant's position, as movegen_legal and movegen_count
 * (out NULL: counts them). A position its variant has ended has none. */
int variant_generate(const position_t *pos, move_t *out);

/* position_make for a variant: undo keeps the whole position before. */
void variant_make(position_t *pos, move_t move, position_undo_t *undo);

/* The pieces that check the side to move's king, by the variant's rules. */
bitboard_t variant_checkers(const position_t *pos);

/* Every piece of colour `by` that attacks sq with the given occupancy,
 * the Hawk and the Elephant included, variant rules aside. */
bitboard_t variant_attackers(const position_t *pos, int sq, color_t by, bitboard_t occupied);

/* The variant's own end of pos (not mate, stalemate or a draw), and the
 * winner then (*winner: WHITE, BLACK, or COLOR_COUNT for a draw). */
variant_end_t variant_end(const position_t *pos, color_t *winner);

/* Whether `color` can never win in pos by the variant's own material rule,
 * as scalachess and chessops judge it: atomic, antichess, three-check and
 * horde have one, crazyhouse, king of the hill and racing kings none (always
 * false). Standard chess and S-chess are status.h's. */
bool variant_insufficient_material_for(const position_t *pos, color_t color);

/* Stable snake_case name of an end: "king_exploded", "three_checks" ... */
const char *variant_end_name(variant_end_t end);

#endif
