/* The PGN export of a stored game, in the PGN standard's export format: the
 * seven tag roster, the game's own tags, the set-up tags for a game not
 * started from the standard position, and the movetext from the stored SAN.
 * The notes of its import go with its moves, and lines break as
 * python-chess breaks them. No replay: the move numbers come from the
 * initial position's counters. */
#ifndef CHESSD_API_RENDER_PGN_H
#define CHESSD_API_RENDER_PGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../rules/opening.h"
#include "../../rules/position.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"

/* The Event and Site a game without its own says (NULL: "?"): the
 * server's --pgn-event and --pgn-site. */
typedef struct pgn_defaults {
    const char *event, *site;
} pgn_defaults_t;

typedef struct {
    const char *white, *black; /* "" when not known */
    int64_t created_at_ms;     /* the Date tag, unless tags has one */
    const game_meta_t *tags;   /* the game's tags (NULL: none): the roster's four it has replace the defaults,
                                * the other known ones follow the roster, the custom ones come last */
    pgn_defaults_t defaults;
    const position_t *initial;
    const char *result;        /* "1-0", "0-1", "1/2-1/2" or "*" */
    bool over;                 /* the Termination tag: normal or unterminated, unless termination says */
    const char *termination;   /* the Termination tag's value when not NULL ("time forfeit", "abandoned") */
    const char *time_control;  /* the TimeControl tag ("300+2", "-" for none) when not NULL */
    const char *black_time_control; /* a BlackTimeControl tag when not NULL: Black's clock, when it differs */
    const opening_t *opening;  /* the ECO and Opening tags when not NULL */
    const char *moves;         /* the move list: "uci:san[:clock]" entries separated by single spaces */
    size_t moves_length;
    const char *const *evals;  /* evals[k]: the [%eval] text after ply k + 1 ("0.35", "#-3"; NULL: none) */
    int eval_count;            /* entries of evals (0: none) */
    /* An imported PGN's notes (api/render/pgn_tree.h; NULL: none): its
     * comments, NAGs, commands and variations, written with the moves
     * while they are still the imported mainline's. Notes that are not
     * as pgn_tree_notes writes them are left out whole. */
    const char *notes;
    size_t notes_length;
} pgn_game_t;

/* The TimeControl tag's text of a control, in the PGN standard's form
 * with a delay after a 'd' ("40/5400+30:1800+30", "300d5"); of a game,
 * White's, or "-" without a clock (correspondence too, as Lichess writes
 * it). out holds PGN_TIME_CONTROL_SIZE bytes. */
enum { PGN_TIME_CONTROL_SIZE = 160 };
void pgn_control_text(const game_control_t *c, char *out, size_t size);
void pgn_time_control(const game_t *g, char *out, size_t size);

/* The PGN text (malloc'd, caller frees; length in *length), or NULL when out
 * of memory: never a cut text. A move-list entry's clock is written after
 * its move as a [%clk] comment. */
char *pgn_write(const pgn_game_t *game, size_t *length);

/* The PGN of a stored game r with its tags (NULL: none) and move list
 * (moves_length bytes of "uci:san" entries; NULL: none), as GET
 * /v1/games/{id}/pgn answers it: the players' names, the Date of its
 * creation, its result and termination, its TimeControl and opening; Event
 * and Site from defaults (NULL: "?") where the game has none. Owned as
 * pgn_write's. */
char *pgn_write_record(const game_record_t *r, const game_meta_t *tags, const char *moves, size_t moves_length,
                       const pgn_defaults_t *defaults, size_t *length);
/* The same with a review's evaluations: evals[k] (NULL: none), for k below
 * eval_count, written as a [%eval] comment after ply k + 1. */
char *pgn_write_record_evals(const game_record_t *r, const game_meta_t *tags, const char *moves, size_t moves_length,
                             const pgn_defaults_t *defaults, const char *const *evals, int eval_count, size_t *length);

#endif
