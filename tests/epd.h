/* Reading the perft EPD files of ../shared/perft for the test suites: one
 * entry per non-comment line, its FEN and its published node counts. Also
 * names the few data lines that describe unreachable positions, which
 * fen_parse() refuses unless given FEN_ALLOW_IMPOSSIBLE_CHECK. Test-only; the
 * reader owns its FILE. */
#ifndef CHESSD_TESTS_EPD_H
#define CHESSD_TESTS_EPD_H

#include <stdio.h>

#include "tests.h"

enum { EPD_MAX_DEPTH = 9 };

typedef struct {
    char fen[FEN_INPUT_MAX + 1];        /* the text before the first ';', trimmed */
    uint64_t nodes[EPD_MAX_DEPTH + 1];  /* nodes[d] for ";Dd", 0 when not listed */
    int max_depth;                      /* deepest depth listed */
    int line_number;
} epd_entry_t;

typedef struct {
    FILE *file;
    int line_number;
    char path[512];
} epd_reader_t;

/* Opens tests_perft_dir()/name; CU-fails and returns false when it cannot. */
bool epd_open(epd_reader_t *reader, const char *name);
/* Reads the next data line (skipping '#' comments and blank lines) into
 * *entry. A malformed line CU-fails and is skipped. False at end of file. */
bool epd_next(epd_reader_t *reader, epd_entry_t *entry);
void epd_close(epd_reader_t *reader);

/* Whether fen is one of the data lines that no game can reach (a check that
 * could not have been given by the last move); a strict fen_parse() must
 * refuse them with FEN_EIMPOSSIBLE_CHECK. `why` receives a sentence when not
 * NULL. */
bool epd_known_unreachable(const char *fen, const char **why);

#endif
