/* The levels of play in the variants (make bench-levels): in each variant the
 * variants' engine plays, a short match between every level and the one
 * below it on two Fairy-Stockfish processes, judged by chessd's rules
 * (tests/support/match.c, no material adjudication: in antichess less is
 * more), and a check that each level scores at least half against the one
 * below. No rating is claimed.
 *
 *   build/variant_levels [--games N] [--engine PATH] [--variant V]
 *
 * N games a pairing (default 4: two openings of two random plies, each from
 * both sides); exit status 1 when a level scores less than half. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/match.h"

static int play_pairing(engine_t *engines[COLOR_COUNT], variant_t variant, int level, int games, double *score)
{
    level_t upper, lower;
    (void)level_of(level, &upper);
    (void)level_of(level - 1, &lower);
    const match_rules_t rules = { .max_plies = 300, .resign_material = 0, .resign_plies = 0 };
    position_t start;
    fen_start(variant, &start);
    *score = 0;
    for (int g = 0; g < games; g++) {
        /* Two random plies from the start, the same for both colours of a pair. */
        uint64_t seed = 0x5eed0000u + (uint64_t)(g / 2) * 7919u + (uint64_t)level * 104729u;
        move_t opening[2];
        position_t pos = start;
        int count = 0;
        uint64_t r = seed;
        for (; count < 2; count++) {
            move_list_t legal;
            if (movegen_legal(&pos, &legal) == 0)
                break;
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            opening[count] = legal.moves[r % (uint64_t)legal.count];
            position_undo_t undo;
            position_make(&pos, opening[count], &undo);
        }
        bool upper_white = g % 2 == 0;
        const level_t *levels[COLOR_COUNT] = { upper_white ? &upper : &lower, upper_white ? &lower : &upper };
        match_result_t result;
        char err[256];
        engine_status_t s = match_play(engines, levels, &start, opening, count, seed, &rules, &result, err, sizeof err);
        if (s != ENGINE_OK) {
            fprintf(stderr, "variant_levels: %s level %d: %s (%s)\n", variant_rules(variant)->key, level,
                    engine_status_name(s), err);
            return 2;
        }
        *score += upper_white ? result.white_score : 1.0 - result.white_score;
        printf("  %s level %d (%s) v %d: %s after %d plies\n", variant_rules(variant)->key, level,
               upper_white ? "white" : "black", level - 1, match_end_name(result.end), result.plies);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = "/usr/games/fairy-stockfish", *only = NULL;
    int games = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--games") && i + 1 < argc)
            games = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--engine") && i + 1 < argc)
            path = argv[++i];
        else if (!strcmp(argv[i], "--variant") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: variant_levels [--games N] [--engine PATH] [--variant V]\n");
            return 2;
        }
    }
    rules_init();
    engine_t *engines[COLOR_COUNT];
    char err[256];
    engine_status_t s;
    for (int c = 0; c < COLOR_COUNT; c++)
        if (!(engines[c] = engine_start(&(engine_options_t){ .path = path }, &s, err, sizeof err))) {
            fprintf(stderr, "variant_levels: %s: %s\n", path, err);
            return 2;
        }
    int status = 0;
    for (int v = 1; v < VARIANT_COUNT && status != 2; v++) {
        if ((only && strcmp(only, variant_rules((variant_t)v)->key)) || !(engine_variants(engines[0]) & (1u << v)))
            continue;
        for (int level = 2; level <= LEVEL_MAX && status != 2; level++) {
            double score;
            int played = play_pairing(engines, (variant_t)v, level, games, &score);
            if (played) {
                status = played;
                break;
            }
            bool holds = score * 2 >= games;
            printf("%s: level %d scores %.1f of %d against level %d%s\n", variant_rules((variant_t)v)->key, level,
                   score, games, level - 1, holds ? "" : "  <- below half");
            if (!holds)
                status = 1;
        }
    }
    for (int c = 0; c < COLOR_COUNT; c++)
        engine_free(engines[c]);
    return status;
}
