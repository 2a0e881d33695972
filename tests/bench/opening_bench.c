/* opening_bench: what naming the opening adds to POST /v1/position/moves of
 * a 40-ply line: the play alone and the play with the probes (run), timed
 * over the same lines in interleaved rounds, the best round of each kept.
 * The lines are random games from a fixed seed and the data set's longest
 * lines, so hits and misses both count.
 *   make bench, or: make build/opening_bench && build/opening_bench */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../rules/fen.h"
#include "../../rules/movegen.h"
#include "../../rules/opening.h"
#include "../../rules/rules.h"
#include "../../rules/san.h"

enum { LINES = 64, PLIES = 40, ROUNDS = 15, REPEATS = 2000 };

static move_t lines[LINES][PLIES];
static position_t start;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A line of PLIES legal moves, the first `named` of them from the SAN text, the rest random. */
static int make_line(move_t *line, const char *san, uint64_t *seed)
{
    position_t pos = start;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", san);
    int ply = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && ply < PLIES; t = strtok_r(NULL, " ", &save)) {
        if (san_parse(&pos, t, strlen(t), &line[ply], NULL, 0) != LEGALITY_OK)
            return -1;
        position_undo_t undo;
        position_make(&pos, line[ply++], &undo);
    }
    for (; ply < PLIES; ply++) {
        move_list_t legal;
        movegen_legal(&pos, &legal);
        if (legal.count == 0)
            return -1;
        *seed = *seed * 6364136223846793005u + 1442695040888963407u;
        line[ply] = legal.moves[(*seed >> 33) % (uint64_t)legal.count];
        position_undo_t undo;
        position_make(&pos, line[ply], &undo);
    }
    return 0;
}

/* Plays every line REPEATS times, with the opening probes when `name`; the
 * seconds it took. sink keeps the work from being optimised away. As the
 * handler does: one position_make a move and, for the opening, a probe of
 * the start position and of each position reached (opening_follow: one hash
 * probe each, positions past the data set's plies skipped before it). */
static double run(int name, uint64_t *sink)
{
    double t0 = now_seconds();
    for (int r = 0; r < REPEATS; r++)
        for (int l = 0; l < LINES; l++) {
            position_t pos = start;
            const opening_t *opening = name ? opening_at(&pos) : NULL;
            for (int p = 0; p < PLIES; p++) {
                position_undo_t undo;
                position_make(&pos, lines[l][p], &undo);
                if (name)
                    opening_follow(&opening, &pos);
            }
            *sink += pos.key + (opening ? opening->key : 0);
        }
    return now_seconds() - t0;
}

/* The figure is the difference per line, the best round of each kept: noise
 * on a shared machine only adds time. */
int main(void)
{
    rules_init();
    if (fen_parse(FEN_START, strlen(FEN_START), 0, &start, NULL, 0) != FEN_OK)
        return 1;
    static const char *const named[] = {
        "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6 Be3 e5 Nb3 Be6 f3 Be7 Qd2 O-O O-O-O Nbd7 g4 b5",
        "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6 Nf3 O-O Be2 e5 O-O Nc6 d5 Ne7",
        "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Na5 Bc2 c5 d4 Qc7",
        "",
    };
    uint64_t seed = 20261202;
    int made = 0;
    for (int l = 0; l < LINES; l++) {
        while (make_line(lines[l], named[l % 4], &seed) != 0)
            ;
        made++;
    }
    uint64_t sink = 0;
    double best_plain = 1e9, best_named = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double plain = run(0, &sink), with = run(1, &sink);
        if (plain < best_plain)
            best_plain = plain;
        if (with < best_named)
            best_named = with;
    }
    double per_line = (best_named - best_plain) / ((double)REPEATS * LINES);
    printf("opening lookup: %d lines of %d plies; playing a line %.0f ns, with the opening %.0f ns: "
           "%.0f ns added per line (%.3f us; bound 5 us)%s\n",
           made, PLIES, best_plain / ((double)REPEATS * LINES) * 1e9, best_named / ((double)REPEATS * LINES) * 1e9,
           per_line * 1e9, per_line * 1e6, sink == 42 ? " " : "");
    return 0;
}
