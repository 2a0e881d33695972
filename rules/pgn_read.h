/* PGN reading: games of PGN text (the import format), their tags, their
 * mainline played through rules/game.h, their variations checked against the
 * rules of their own positions, their comments and NAGs, and the result.
 * Pure: no malloc, no I/O; the caller gets it all through callbacks, and
 * every count and length is bounded by pgn_read_limits_t. */
#ifndef CHESSD_RULES_PGN_READ_H
#define CHESSD_RULES_PGN_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "fen.h"
#include "game.h"

/* The largest bounds a caller may ask for (buffers are sized by them). */
enum {
    PGN_READ_TAG_NAME_MAX = 64,   /* bytes of a tag name */
    PGN_READ_TAG_VALUE_MAX = 1024, /* bytes of a tag value, unescaped */
    PGN_READ_DEPTH_MAX = 64,      /* nesting of variations */
};

typedef struct {
    int max_games;      /* games in the text */
    int max_plies;      /* mainline plies of one game (at most GAME_MAX_PLIES) */
    int max_tags;       /* tag pairs of one game */
    int max_tag_value;  /* bytes of a tag value (at most PGN_READ_TAG_VALUE_MAX) */
    int max_depth;      /* nesting of variations (at most PGN_READ_DEPTH_MAX) */
    int max_comment;    /* bytes of one {...} comment */
    int max_nodes;      /* moves of one game, its variations' included */
} pgn_read_limits_t;

typedef enum {
    PGN_READ_OK = 0,
    PGN_READ_ENO_GAME,                /* the text holds no game */
    PGN_READ_EUNEXPECTED,             /* a character or token that has no place there */
    PGN_READ_EBAD_UTF8,               /* bytes that are not UTF-8 */
    PGN_READ_EUNTERMINATED_COMMENT,   /* '{' without '}' */
    PGN_READ_EUNTERMINATED_VARIATION, /* '(' without ')' before the game's end */
    PGN_READ_EUNMATCHED_PARENTHESIS,  /* ')' without '(' */
    PGN_READ_EUNTERMINATED_TAG,       /* '[' without its closing ']' */
    PGN_READ_EUNTERMINATED_STRING,    /* a tag value without its closing '"' on the line */
    PGN_READ_EBAD_TAG,                /* a tag pair that is not [Name "value"] */
    PGN_READ_EBAD_ESCAPE,             /* a backslash in a tag value not before '"' or '\' */
    PGN_READ_EDUPLICATE_TAG,          /* a tag name given twice in one game */
    PGN_READ_EBAD_RESULT_TAG,         /* a Result tag other than 1-0, 0-1, 1/2-1/2, * */
    PGN_READ_EBAD_FEN,                /* the FEN tag is not a valid position (see fen_error) */
    PGN_READ_ESETUP_WITHOUT_FEN,      /* SetUp "1" and no FEN tag */
    PGN_READ_EUNSUPPORTED_VARIANT,    /* a Variant tag other than standard chess or Chess960 */
    PGN_READ_ENULL_MOVE,              /* "--", "Z0" in the mainline, or in a variation where the mover is in check */
    PGN_READ_EILLEGAL_MOVE,           /* a move that is not legal in its line (see reason and path) */
    PGN_READ_EVARIATION_WITHOUT_MOVE, /* '(' where its line has no move for it to replace */
    PGN_READ_ERESULT_MISMATCH,        /* the Result tag and the movetext's result token differ */
    PGN_READ_ERESULT_CONTRADICTS,     /* the result is impossible in the final position */
    PGN_READ_ETOO_MANY_GAMES,
    PGN_READ_ETOO_MANY_PLIES,
    PGN_READ_ETOO_MANY_TAGS,
    PGN_READ_ETAG_TOO_LONG,           /* a tag name or value over its bound */
    PGN_READ_ECOMMENT_TOO_LONG,
    PGN_READ_ETOO_DEEP,               /* variations nested past max_depth */
    PGN_READ_ESTOPPED,                /* a callback returned false */
    PGN_READ_ERROR_COUNT
} pgn_read_status_t;

/* Where and why reading stopped. */
typedef struct {
    pgn_read_status_t status;
    int game;                 /* 0-based index of the game it stopped in */
    /* A column counts UTF-8 characters, a tab as one; a line ends at '\n',
     * "\r\n" or a lone '\r'. */
    int line, column;         /* 1-based, of the token at fault */
    /* PGN_READ_EILLEGAL_MOVE: the rules' reason, the move's index in the
     * game's mainline (0-based), its text, and the position it was tried in. */
    legality_reason_t reason;
    int ply;
    char move[48];
    /* A move's place in the tree: its index in the mainline; or, in a
     * variation, the index of the mainline move it branches from, the
     * variation's index among that move's, the index in that line, and so on. */
    int path[2 * PGN_READ_DEPTH_MAX + 1];
    int path_length;          /* 0 when the error is not at a move */
    position_t position;
    fen_error_t fen_error;    /* PGN_READ_EBAD_FEN */
    char message[256];        /* a sentence saying what is wrong */
} pgn_read_error_t;

/* What a game ended as, for the game callback. */
typedef struct {
    int index;
    const game_t *game;       /* initial and final positions, status, ply_count */
    const char *result;       /* "1-0", "0-1", "1/2-1/2" or "*": the token, else the Result tag, else "*" */
} pgn_read_game_t;

/* A move of the tree: depth 0 is the mainline. A null move ("--", only in
 * a variation) has move MOVE_NONE, uci "0000" and san "--". */
typedef struct {
    int depth;
    const position_t *before, *after;
    const game_played_t *played;
} pgn_read_node_t;

/* The callbacks; any may be NULL. Each returns false to stop reading
 * (PGN_READ_ESTOPPED). Strings are valid during the call only.
 *   move: a mainline move; node: every move, the mainline's too.
 *   comment: the bytes between '{' and '}', at the depth it stands in.
 *   nag: a $n, or a suffix (! ? !! ?? !? ?!) as its number (1 to 6).
 *   variation: '(' opening depth (open) or ')' closing it.
 *   error: a game's error, when reading should go on with the next game;
 *   without it the first error stops reading. */
typedef struct {
    bool (*tag)(void *ctx, int game, const char *name, const char *value, size_t value_length);
    bool (*move)(void *ctx, int game, const position_t *before, const game_played_t *played);
    bool (*game)(void *ctx, const pgn_read_game_t *game);
    bool (*node)(void *ctx, int game, const pgn_read_node_t *node);
    bool (*comment)(void *ctx, int game, int depth, const char *text, size_t length);
    bool (*nag)(void *ctx, int game, int depth, int nag);
    bool (*variation)(void *ctx, int game, int depth, bool open);
    bool (*error)(void *ctx, const pgn_read_error_t *error);
} pgn_read_callbacks_t;

/* The bounds chessd's API uses. */
void pgn_read_default_limits(pgn_read_limits_t *limits);

/* Reads `length` bytes of PGN (no terminator needed), calling back in the
 * text's order. Without an error callback it stops at the first error,
 * described in *error (also set, with status PGN_READ_OK, on success), and
 * returns -1. With one, a game's error is passed to it and reading resumes
 * at the next game (after the bad game's result token, or at a '[' that
 * begins a line after a blank line or movetext); only errors of no game
 * (too many games, none at all, a callback's stop) then return -1.
 * Returns the count of games, failed ones included.
 *
 * The text must be UTF-8 (a byte order mark at its start is skipped).
 * ';' comments and '%' escape lines are dropped. */
int pgn_read(const char *text, size_t length, const pgn_read_limits_t *limits, const pgn_read_callbacks_t *callbacks,
             void *ctx, pgn_read_error_t *error);

/* Stable snake_case name of a status, e.g. "unterminated_comment". */
const char *pgn_read_status_code(pgn_read_status_t status);

#endif
