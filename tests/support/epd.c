/* Reader for the perft EPD files shared by the test suites: `FEN ;D1 n ;D2 n
 * ...` per line, '#' lines are comments; a loader that parses a file's lines
 * into positions. Also the list of data lines that describe unreachable
 * positions, each with the reason no game reaches it. */
#include "epd.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool epd_open(epd_reader_t *reader, const char *name)
{
    snprintf(reader->path, sizeof reader->path, "%s/%s", tests_perft_dir(), name);
    reader->line_number = 0;
    reader->file = fopen(reader->path, "r");
    if (!reader->file)
        fprintf(stderr, "\ncannot open %s: %s\n", reader->path, strerror(errno));
    CU_ASSERT_PTR_NOT_NULL(reader->file);
    return reader->file != NULL;
}

void epd_close(epd_reader_t *reader)
{
    if (reader->file)
        fclose(reader->file);
    reader->file = NULL;
}

/* Parses the " ;Dd n" pairs after the FEN; false on anything else. */
static bool parse_counts(const char *p, epd_entry_t *entry)
{
    memset(entry->nodes, 0, sizeof entry->nodes);
    entry->max_depth = 0;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (p[0] != ';' || p[1] != 'D')
            return false;
        char *end;
        long depth = strtol(p + 2, &end, 10);
        if (end == p + 2 || depth < 1 || depth > EPD_MAX_DEPTH || !isspace((unsigned char)*end))
            return false;
        p = end;
        unsigned long long nodes = strtoull(p, &end, 10);
        if (end == p || nodes == 0)
            return false;
        entry->nodes[depth] = nodes;
        if (depth > entry->max_depth)
            entry->max_depth = (int)depth;
        p = end;
    }
    return entry->max_depth > 0;
}

bool epd_next(epd_reader_t *reader, epd_entry_t *entry)
{
    char line[1024];
    while (reader->file && fgets(line, sizeof line, reader->file)) {
        reader->line_number++;
        line[strcspn(line, "\r\n")] = '\0';
        const char *start = line;
        while (isspace((unsigned char)*start))
            start++;
        if (*start == '\0' || *start == '#')
            continue;
        const char *semicolon = strchr(start, ';');
        size_t length = semicolon ? (size_t)(semicolon - start) : strlen(start);
        while (length && isspace((unsigned char)start[length - 1]))
            length--;
        bool ok = semicolon && length > 0 && length <= FEN_INPUT_MAX && parse_counts(semicolon, entry);
        if (!ok) {
            fprintf(stderr, "\n%s:%d: malformed EPD line\n", reader->path, reader->line_number);
            CU_FAIL("malformed EPD line");
            continue;
        }
        memcpy(entry->fen, start, length);
        entry->fen[length] = '\0';
        entry->line_number = reader->line_number;
        return true;
    }
    return false;
}

int epd_read_positions(const char *name, unsigned flags, position_t *out, int max, int *refused)
{
    epd_reader_t reader;
    epd_entry_t entry;
    if (refused)
        *refused = 0;
    if (!epd_open(&reader, name))
        return -1;
    int count = 0;
    while (count < max && epd_next(&reader, &entry)) {
        char message[256];
        bool parsed = fen_parse(entry.fen, strlen(entry.fen), flags, &out[count], message, sizeof message) == FEN_OK;
        if (!parsed)
            fprintf(stderr, "\n%s:%d: left out %s (fen_parse: %s)\n", reader.path, entry.line_number, entry.fen,
                    message);
        if (refused)
            *refused += !parsed;
        else
            CU_ASSERT(parsed);
        count += parsed;
    }
    epd_close(&reader);
    return count;
}

/* Each entry is the first four FEN fields of a tricky.epd line. The perft
 * data exists to test move generators on them, but the last move cannot have
 * produced the check, so no legal game contains them. */
static const struct {
    const char *fen;
    const char *why;
} unreachable[] = {
    { "3R4/8/q4k2/2B5/1NK5/3b4/8/8 w - -",
      "Qa6 and Bd3 check Kc4 from both ends of one diagonal: the piece that moved last would have crossed c4" },
    { "2Nq4/2K5/1b6/8/7R/3k4/7P/8 w - -",
      "Qd8 and Bb6 check Kc7 from both ends of one diagonal" },
    { "5R2/2P5/8/4k3/8/3rK2r/8/8 w - -",
      "Rd3 and Rh3 check Ke3 from both ends of the third rank" },
    { "8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3",
      "Qf1 checks Kb5 along f1-b5, a diagonal the push d2-d4 did not open" },
    { "1b1k4/8/8/1rPpK3/8/8/8/8 w - d6",
      "Bb8 checks Ke5 along b8-e5, a diagonal the push d7-d5 did not open" },
    { "rnbqk1nr/bb3p1p/1q2r3/2pPp3/3P4/7P/1PP1NpPP/R1BQKBNR w KQkq c6",
      "the f2 pawn checks Ke1, and the last move was c7-c5" },
};

bool epd_known_unreachable(const char *fen, const char **why)
{
    for (size_t i = 0; i < sizeof unreachable / sizeof unreachable[0]; i++) {
        size_t n = strlen(unreachable[i].fen);
        if (!strncmp(fen, unreachable[i].fen, n) && (fen[n] == '\0' || fen[n] == ' ')) {
            if (why)
                *why = unreachable[i].why;
            return true;
        }
    }
    return false;
}
