/* The perft subcommand: reads a variant (--variant, standard by default), a
 * FEN (Chess960 when its castling field needs it) and moves in UCI or SAN,
 * then prints a perftree-style divide. */
#include "perft_cli.h"

#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"

enum { CLI_MAX_PERFT_DEPTH = 16 };

int cli_perft(int argc, char **argv, FILE *out, FILE *err)
{
    variant_t variant = VARIANT_STANDARD;
    bool chess960 = false;
    if (argc >= 2 && !strcmp(argv[0], "--variant")) {
        if (!variant_from_name(argv[1], strlen(argv[1]), &variant, &chess960)) {
            fprintf(err, "chessd perft: unknown variant '%s'\n", argv[1]);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 1) {
        fprintf(err, "usage: chessd perft [--variant V] DEPTH [FEN [MOVES...]]\n");
        return 2;
    }
    char *end;
    long depth = strtol(argv[0], &end, 10);
    if (*argv[0] == '\0' || *end != '\0' || depth < 1 || depth > CLI_MAX_PERFT_DEPTH) {
        fprintf(err, "chessd perft: depth must be a number from 1 to %d\n", CLI_MAX_PERFT_DEPTH);
        return 2;
    }
    const char *fen = argc >= 2 ? argv[1] : variant_rules(variant)->start_fen;
    position_t pos;
    char message[256];
    /* A test tool: positions with impossible checks are accepted, as perft suites use them. */
    unsigned flags = FEN_ALLOW_IMPOSSIBLE_CHECK | (chess960 ? FEN_CHESS960 : FEN_DETECT_CHESS960);
    fen_error_t fe = fen_parse_variant(fen, strlen(fen), variant, flags, &pos, message, sizeof message);
    if (fe != FEN_OK) {
        fprintf(err, "chessd perft: invalid FEN (%s): %s\n", fen_error_code(fe), message);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        /* perftree passes all moves in one argument; others pass one per argument. */
        const char *cursor = argv[i], *text;
        size_t len;
        while (notation_next_in_list(&cursor, &text, &len)) {
            move_t move;
            if (notation_parse_move(&pos, text, len, &move, message, sizeof message) != LEGALITY_OK) {
                fprintf(err, "chessd perft: move '%.*s': %s\n", (int)len, text, message);
                return 2;
            }
            position_undo_t undo;
            position_make(&pos, move, &undo);
        }
    }
    move_t moves[MOVE_LIST_MAX];
    uint64_t counts[MOVE_LIST_MAX], total = 0;
    int n = perft_divide(&pos, (int)depth, moves, counts);
    for (int i = 0; i < n; i++) {
        char uci[UCI_BUFFER_SIZE];
        fprintf(out, "%s %llu\n", uci_format(&pos, moves[i], uci), (unsigned long long)counts[i]);
        total += counts[i];
    }
    fprintf(out, "\n%llu\n", (unsigned long long)total);
    return 0;
}
