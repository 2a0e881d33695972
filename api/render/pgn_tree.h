/* A PGN game as a tree, built from rules/pgn_read.h's callbacks: every move
 * of the mainline and its variations with its comments, NAGs and commands.
 * Written as JSON (POST /v1/pgn's games) and as PGN, laid out as
 * python-chess writes it. A tree holds one game; reset it for the next. */
#ifndef CHESSD_API_RENDER_PGN_TREE_H
#define CHESSD_API_RENDER_PGN_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../rules/pgn_comment.h"
#include "../../rules/pgn_read.h"
#include "../http/buf.h"
#include "../http/jsonw.h"

typedef struct pgn_text {
    struct pgn_text *next;
    size_t length;
    char text[];
} pgn_text_t;

typedef struct pgn_node {
    struct pgn_node *next;       /* the next move of its line */
    struct pgn_node *variations; /* the first move of the first line that replaces this move */
    struct pgn_node *sibling;    /* of a line's first move: the first move of the next such line */
    pgn_text_t *before, *after;  /* comments before a line's first move; after the move */
    int *nags;
    int nag_count;
    pgn_shape_t *shapes;
    int shape_count;
    bool has_clock, has_emt, has_eval, eval_mate;
    long long clock_ms, emt_ms;
    int eval, eval_depth;
    int fullmove;                /* of the position the move is made in */
    bool white;                  /* White makes it */
    char uci[8], san[16];
    char fen[];
} pgn_node_t;

typedef struct pgn_tag {
    struct pgn_tag *next;
    char *value;
    size_t value_length;
    char name[];
} pgn_tag_t;

typedef struct {
    pgn_tag_t *tags, **tags_tail;
    pgn_text_t *comments, **comments_tail; /* before the first move */
    pgn_node_t *moves;
    /* the lines open while reading: [0] the mainline */
    struct {
        pgn_node_t *first, *last;
        pgn_node_t *owner; /* a variation: the move whose variations it joins */
        pgn_text_t *before, **before_tail;
    } line[PGN_READ_DEPTH_MAX + 1];
    size_t bytes;   /* held by the tree */
    size_t max_bytes;
    bool no_fens;   /* the moves keep no FEN (PGN is written without them) */
    bool too_large; /* over max_bytes: reading must stop */
    bool no_memory;
} pgn_tree_t;

/* An empty tree that may hold up to max_bytes. */
void pgn_tree_init(pgn_tree_t *t, size_t max_bytes);
/* Frees the game held, leaving an empty tree. */
void pgn_tree_reset(pgn_tree_t *t);

/* The reader's events (false: out of memory or over max_bytes). */
bool pgn_tree_tag(pgn_tree_t *t, const char *name, const char *value, size_t value_length);
bool pgn_tree_node(pgn_tree_t *t, const pgn_read_node_t *node);
bool pgn_tree_comment(pgn_tree_t *t, int depth, const char *text, size_t length);
bool pgn_tree_nag(pgn_tree_t *t, int depth, int nag);
bool pgn_tree_variation(pgn_tree_t *t, int depth, bool open);

/* Writes the tags as a JSON object's members, "comments" when there are
 * any, and "moves" (the mainline, each move with its variations). */
void pgn_tree_json(const pgn_tree_t *t, jsonw_t *w);
void pgn_tree_tags_json(const pgn_tree_t *t, jsonw_t *w);

/* Appends the game as PGN: the seven tag roster (its result `result`),
 * the other tags, a blank line, the movetext in lines of at most 80
 * characters, and a newline. */
void pgn_tree_write(const pgn_tree_t *t, const char *result, buf_t *out);

/* Writes what a game stored from this PGN keeps of its mainline beside
 * the moves and their clocks, as one JSON object (the stored game's
 * "notes", see pgn.h): "line", the mainline's moves in UCI; "comments",
 * the game's before its first move; "moves", for each move that has any,
 * its "ply" (1 for the first), "before" (comments), "nags", "text" (its
 * first comment's text) and "more" (the other comments), its commands as
 * PGN text ("shapes", "eval", "emt"), and "variations", the tokens of
 * its variations as this layout writes them. */
void pgn_tree_notes(const pgn_tree_t *t, jsonw_t *w);
/* Whether the tree has notes: comments, NAGs, commands other than [%clk]
 * or variations. */
bool pgn_tree_has_notes(const pgn_tree_t *t);

#endif
