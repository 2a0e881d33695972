/* Where a stream of PGN text may be cut between games: at a '[' that begins
 * a line after a blank line, once movetext has been seen, outside comments
 * and tag lines. Fed bytes as they come; remembers the first such place at
 * or past min_piece bytes (else the last before it), and the very first. */
#ifndef CHESSD_API_PGN_SPLIT_H
#define CHESSD_API_PGN_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t min_piece;   /* pieces are cut at the first place past this many bytes */
    size_t at;          /* bytes scanned */
    size_t cut;         /* the last place found (0: none yet) */
    size_t first;       /* the first place found since the scan began or all was taken (0: none) */
    size_t last;        /* the last place found (0: none) */
    bool in_comment, in_line_comment, in_tag, in_string;
    bool line_start, line_blank, prev_blank;
    bool movetext;      /* seen since the last cut */
} pgn_split_t;

void pgn_split_init(pgn_split_t *s, size_t min_piece);
/* Scans text[s->at .. length) (the same text each time, grown at its end). */
void pgn_split_scan(pgn_split_t *s, const char *text, size_t length);
/* The first `cut` bytes were taken: the scan goes on from the rest. */
void pgn_split_consumed(pgn_split_t *s, size_t cut);

#endif
