/* A batch of PGN games read piece by piece: each piece holds whole games,
 * and every game is written out as it is read, as JSON (one object of the
 * "games" array), NDJSON (a line each) or PGN. A failed game is written with
 * its errors and reading goes on, unless strict. */
#ifndef CHESSD_API_PGN_BATCH_H
#define CHESSD_API_PGN_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../../rules/pgn_read.h"
#include "../http/buf.h"

typedef enum { PGN_OUT_JSON, PGN_OUT_NDJSON, PGN_OUT_PGN } pgn_out_t;

typedef struct pgn_batch pgn_batch_t;

typedef struct {
    pgn_out_t format;
    bool legal_moves; /* each final position's legal moves */
    bool moves;       /* each game's tree (false: tags, result and position only) */
    bool strict;      /* the first error stops the batch */
    int max_games;    /* in the whole batch (0: no bound) */
} pgn_batch_options_t;

/* NULL when out of memory. */
pgn_batch_t *pgn_batch_new(const pgn_batch_options_t *options);
void pgn_batch_free(pgn_batch_t *b);

/* The answer's start and end around the games (JSON's object). */
void pgn_batch_begin(pgn_batch_t *b, buf_t *out);
void pgn_batch_end(pgn_batch_t *b, buf_t *out);

typedef enum {
    PGN_BATCH_OK = 0,
    PGN_BATCH_EREAD,      /* reading stopped: *error says why (strict, too many games, none) */
    PGN_BATCH_ETOO_LARGE, /* a game's tree is over its bound */
    PGN_BATCH_ENO_MEMORY,
} pgn_batch_status_t;

/* Reads length bytes of whole games, whose first line is line first_line
 * of the batch, appending what they answer to out. A piece without a game
 * is not an error here; pgn_batch_games() tells whether any was read. */
pgn_batch_status_t pgn_batch_piece(pgn_batch_t *b, const char *text, size_t length, int first_line, buf_t *out,
                                   pgn_read_error_t *error);

/* Writes a game that could not be read for its size: more than
 * max_bytes, from line `line` of the batch. */
void pgn_batch_oversized(pgn_batch_t *b, buf_t *out, int line, size_t max_bytes);

/* Games seen so far, failed ones included. */
int pgn_batch_games(const pgn_batch_t *b);

#endif
