/* A new game's record from one PGN game: the start from its FEN and Variant
 * tags, its mainline played as moves are (the move list and history texts as
 * the store keeps them). The players' names come from its White and Black
 * tags, the ending from its result, the game's tags from the others that a
 * game keeps, its notes from its comments, NAGs and variations. Part of
 * the game service (service.c). */
#ifndef CHESSD_API_GAME_IMPORT_H
#define CHESSD_API_GAME_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../rules/game.h"
#include "../../rules/pgn_read.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"
#include "../http/buf.h"
#include "../render/pgn_tree.h"

/* What the PGN holds: the move list (with each move's [%clk], as a move's
 * clock is kept) and history texts, the game its movetext leaves, its
 * players' names, and its tags and notes that game_meta.h keeps. Real PGN
 * is messy: a tag that fails game_meta's checks, says only PGN's
 * "unknown" ("?", "????.??.??", a Round "-"), or is a custom one past the
 * bound is left out, never refused. Large (a game_t): keep it off the
 * stack. Zero it before use, free with game_import_free. */
typedef struct {
    buf_t moves, history;
    /* the last move read, written to moves at the next move or the end, so
     * that a [%clk] after it is its clock */
    game_played_t pending;
    bool has_pending;
    game_t game;
    char result[8];
    char names[COLOR_COUNT][GAME_NAME_MAX + 1];
    game_meta_t tags; /* with the notes (pgn_tree_notes), when the mainline has any */
    pgn_tree_t tree;  /* the movetext read, for its notes */
    bool tree_failed;
} game_import_t;

typedef enum {
    GAME_IMPORT_OK = 0,
    GAME_IMPORT_EPGN,   /* the PGN cannot be read or played: *error says why */
    GAME_IMPORT_ECLOCK, /* the imported game does not take r's clock */
    GAME_IMPORT_ENOTES, /* the mainline's notes are over GAME_NOTES_MAX bytes */
    GAME_IMPORT_ENOMEM,
} game_import_status_t;

/* Reads text (one game, at most max_plies in its mainline) into p and makes
 * r's game the imported one: the clock and takeback policy r's game has (a
 * clock starts full for both sides at the imported position, see
 * game_adopt_rules; the imported moves earned no increment), the names
 * from the tags where r has none. A result the final position does not
 * decide ends the game as the PGN says: 1-0 or 0-1 as a resignation by the
 * loser, 1/2-1/2 as a draw by agreement; "*" leaves it active. */
game_import_status_t game_import_pgn(const char *text, size_t length, int max_plies, game_record_t *r,
                                     game_import_t *p, pgn_read_error_t *error);

void game_import_free(game_import_t *p);

#endif
