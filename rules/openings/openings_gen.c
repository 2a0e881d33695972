/* Build tool, not part of the rules library: plays every line of the opening
 * data set (the TSV files named on the command line, see README.md) with the
 * rules core and writes the C table rules/opening.c includes. Fails, writing
 * nothing, on a line the rules reject, a line with no move, or two different
 * positions (as EPD) with one key. Usage: openings_gen OUT.h a.tsv b.tsv ... */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fen.h"
#include "../rules.h"
#include "../san.h"

enum { LINES_MAX = 8192, SLOTS = 8192, TEXT_MAX = 1024 };

typedef struct {
    uint64_t key;
    char eco[8];
    char *name;
    char epd[FEN_BUFFER_SIZE];
    int plies;
} entry_t;

static entry_t entries[LINES_MAX];
static int entry_count, line_count, plies_max;

static void die(const char *file, int line, const char *what)
{
    fprintf(stderr, "openings_gen: %s:%d: %s\n", file, line, what);
    exit(1);
}

/* The EPD of pos: its canonical FEN without the two counters. */
static void epd_of(const position_t *pos, char *out)
{
    fen_format(pos, out, FEN_BUFFER_SIZE);
    for (int spaces = 0; *out; out++)
        if (*out == ' ' && ++spaces == 4) {
            *out = '\0';
            return;
        }
}

/* Plays one line from the start and records the position it ends in. A
 * position named by several lines keeps the shortest line's name (the first
 * in file order among equals). */
static void add(const char *file, int number, const char *eco, const char *name, const char *pgn)
{
    position_t pos;
    if (fen_parse(FEN_START, strlen(FEN_START), 0, &pos, NULL, 0) != FEN_OK)
        die(file, number, "the start position");
    char text[TEXT_MAX];
    size_t pgn_length = strlen(pgn);
    if (pgn_length >= sizeof text)
        die(file, number, "a line too long");
    memcpy(text, pgn, pgn_length + 1);
    int plies = 0;
    for (char *save = NULL, *token = strtok_r(text, " ", &save); token; token = strtok_r(NULL, " ", &save)) {
        size_t length = strlen(token);
        if (token[length - 1] == '.')
            continue; /* a move number */
        move_t move = 0;
        char message[200];
        if (san_parse(&pos, token, length, &move, message, sizeof message) != LEGALITY_OK)
            die(file, number, message);
        position_undo_t undo;
        position_make(&pos, move, &undo);
        plies++;
    }
    if (plies == 0)
        die(file, number, "a line with no move");
    if (pos.key == 0)
        die(file, number, "a position whose key is 0 (the empty slot)");
    line_count++;
    if (plies > plies_max)
        plies_max = plies;
    char epd[FEN_BUFFER_SIZE];
    epd_of(&pos, epd);
    for (int i = 0; i < entry_count; i++) {
        if (entries[i].key != pos.key)
            continue;
        if (strcmp(entries[i].epd, epd))
            die(file, number, "two positions with one key");
        if (plies < entries[i].plies) {
            memcpy(entries[i].eco, eco, 4); /* three characters and the NUL (read_file checked) */
            free(entries[i].name);
            entries[i].name = strdup(name);
            entries[i].plies = plies;
        }
        return;
    }
    if (entry_count == LINES_MAX)
        die(file, number, "too many lines");
    entry_t *e = &entries[entry_count++];
    e->key = pos.key;
    memcpy(e->eco, eco, 4);
    e->name = strdup(name);
    memcpy(e->epd, epd, sizeof epd);
    e->plies = plies;
    if (!e->name)
        die(file, number, "out of memory");
}

static void read_file(const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f)
        die(file, 0, "cannot open");
    char line[TEXT_MAX];
    for (int number = 1; fgets(line, sizeof line, f); number++) {
        size_t length = strlen(line);
        if (length == 0 || line[length - 1] != '\n')
            die(file, number, "a line too long or not terminated");
        line[--length] = '\0';
        char *eco = line, *name = strchr(eco, '\t'), *pgn = name ? strchr(name + 1, '\t') : NULL;
        if (!pgn || strchr(pgn + 1, '\t'))
            die(file, number, "not three tab-separated columns");
        *name++ = '\0';
        *pgn++ = '\0';
        if (number == 1) {
            if (strcmp(eco, "eco") || strcmp(name, "name") || strcmp(pgn, "pgn"))
                die(file, number, "the header row is not eco, name, pgn");
            continue;
        }
        if (strlen(eco) != 3 || eco[0] < 'A' || eco[0] > 'E' || eco[1] < '0' || eco[1] > '9' || eco[2] < '0'
            || eco[2] > '9' || !name[0])
            die(file, number, "an ECO code or a name");
        add(file, number, eco, name, pgn);
    }
    fclose(f);
}

/* A C string literal; bytes outside printable ASCII as octal escapes. */
static void write_literal(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(out, "\\%03o", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* Writes the table: one entry per named position (its key, ECO code, name
 * and the plies of its shortest line) and an open-addressing slot array over
 * the keys, into OUT.h.tmp, renamed to OUT.h once whole. */
int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: openings_gen OUT.h FILE.tsv...\n");
        return 2;
    }
    rules_init();
    for (int i = 2; i < argc; i++)
        read_file(argv[i]);
    static uint16_t slots[SLOTS];
    int probes_max = 0;
    for (int i = 0; i < entry_count; i++) {
        int probes = 1;
        size_t s = (size_t)(entries[i].key & (SLOTS - 1));
        while (slots[s]) {
            s = (s + 1) & (SLOTS - 1);
            probes++;
        }
        slots[s] = (uint16_t)(i + 1);
        if (probes > probes_max)
            probes_max = probes;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *out = fopen(tmp, "w");
    if (!out)
        die(tmp, 0, "cannot write");
    fprintf(out, "/* Generated by rules/openings/openings_gen.c from the TSV files of rules/openings/: do not edit.\n"
                 " * %d lines, %d named positions, the longest line %d plies, at most %d probes a lookup. */\n",
            line_count, entry_count, plies_max, probes_max);
    fprintf(out, "#define OPENING_TABLE_LINES %d\n#define OPENING_TABLE_POSITIONS %d\n", line_count, entry_count);
    fprintf(out, "#define OPENING_TABLE_PLIES_MAX %d\n#define OPENING_TABLE_SLOTS %d\n", plies_max, SLOTS);
    fprintf(out, "static const opening_t opening_table[OPENING_TABLE_POSITIONS] = {\n");
    for (int i = 0; i < entry_count; i++) {
        fprintf(out, "    { UINT64_C(0x%016" PRIx64 "), \"%s\", ", entries[i].key, entries[i].eco);
        write_literal(out, entries[i].name);
        fprintf(out, ", %d },\n", entries[i].plies);
    }
    fprintf(out, "};\nstatic const uint16_t opening_slots[OPENING_TABLE_SLOTS] = {");
    for (int s = 0; s < SLOTS; s++)
        fprintf(out, "%s%u,", s % 16 ? " " : "\n    ", slots[s]);
    fprintf(out, "\n};\n");
    if (fclose(out) != 0 || rename(tmp, argv[1]) != 0)
        die(argv[1], 0, "cannot write");
    return 0;
}
