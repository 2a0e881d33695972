/* Reading the perft EPD files of tests/data/perft for the test suites: one
 * entry per non-comment line, its FEN and its published node counts, or the
 * parsed positions of a whole file. Also names the few data lines that
 * describe unreachable positions, which fen_parse() refuses unless given
 * FEN_ALLOW_IMPOSSIBLE_CHECK. Test-only; the reader owns its FILE. */
#ifndef CHESSD_TESTS_SUPPORT_EPD_H
#define CHESSD_TESTS_SUPPORT_EPD_H

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

/* Reads the first max positions of tests_perft_dir()/name into out, in file
 * order, each parsed by fen_parse() under the FEN_* flags. A line fen_parse()
 * refuses is printed with the reason and left out. When refused is not NULL
 * the refusals are counted there and are no CU failure (the caller asserts on
 * the count); when it is NULL every line read is one CU assertion that it
 * parsed. Returns how many positions were stored, -1 (CU-failed) when the
 * file cannot be opened. */
int epd_read_positions(const char *name, unsigned flags, position_t *out, int max, int *refused);

/* Whether fen is one of the data lines that no game can reach (a check that
 * could not have been given by the last move); a strict fen_parse() must
 * refuse them with FEN_EIMPOSSIBLE_CHECK. `why` receives a sentence when not
 * NULL. */
bool epd_known_unreachable(const char *fen, const char **why);

#endif
