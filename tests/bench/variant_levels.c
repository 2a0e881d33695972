/* The levels of play in the variants (api/engine/levels.c's
 * level_of_variant), checked against each other on Fairy-Stockfish: in every
 * variant the engine lists, level N plays level N - 1 from a few short
 * openings, judged by chessd's rules (tests/support/match.c). Each level must
 * score more than half against the one below, in each variant; no rating is
 * claimed. main says how to run it; make bench-levels does. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../api/engine/levels.h"
#include "../support/match.h"

enum { OPENING_PLIES = 2, PAIRINGS = LEVEL_MAX - LEVEL_MIN, JOBS_MAX = 64 };

typedef struct {
    int openings, jobs, plies;
    const char *engine;
    unsigned variants; /* a bit per variant_t to play */
} options_t;

/* The games of one variant: pairing p (0..PAIRINGS-1) is level p + 2
 * against level p + 1, game g plays opening g / 2 with the higher level
 * white when g is even. A game's index across the run orders the jobs. */
static int games_per_variant(const options_t *o)
{
    return PAIRINGS * 2 * o->openings;
}

/* The opening numbered n: OPENING_PLIES random legal plies from start,
 * seeded by n, so a run is repeatable. Each is played once from each side. */
static int random_opening(const position_t *start, int n, move_t out[MATCH_OPENING_MAX])
{
    uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(n + 1);
    position_t pos = *start;
    int count = 0;
    for (int i = 0; i < OPENING_PLIES; i++) {
        move_list_t legal;
        movegen_legal(&pos, &legal);
        if (legal.count == 0)
            break;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out[count] = legal.moves[state % (uint64_t)legal.count];
        position_undo_t undo;
        position_make(&pos, out[count++], &undo);
    }
    return count;
}

/* Child `job` of `jobs`: plays its share, one line per game on fd:
 * "variant pairing higher_score end plies". */
static int play_share(const options_t *o, int job, int fd)
{
    engine_t *engines[COLOR_COUNT];
    for (int c = WHITE; c <= BLACK; c++) {
        char err[256];
        engine_status_t status;
        engines[c] = engine_start(&(engine_options_t){.path = o->engine}, &status, err, sizeof err);
        if (!engines[c]) {
            fprintf(stderr, "variant_levels: cannot start %s: %s\n", o->engine, err);
            return 2;
        }
    }
    const match_rules_t rules = {.max_plies = o->plies};
    int index = 0;
    for (int v = VARIANT_STANDARD + 1; v < VARIANT_COUNT; v++) {
        if (!(o->variants & 1u << v))
            continue;
        position_t start;
        fen_start((variant_t)v, &start);
        for (int g = 0; g < games_per_variant(o); g++, index++) {
            if (index % o->jobs != job)
                continue;
            int pairing = g / (2 * o->openings), opening_number = g / 2 % o->openings;
            level_t higher, lower;
            if (!level_of_variant(pairing + 2, (variant_t)v, &higher) || !level_of_variant(pairing + 1, (variant_t)v, &lower))
                return 2;
            bool higher_white = g % 2 == 0;
            const level_t *sides[COLOR_COUNT] = {higher_white ? &higher : &lower, higher_white ? &lower : &higher};
            move_t opening[MATCH_OPENING_MAX];
            int count = random_opening(&start, opening_number, opening);
            match_result_t result;
            char err[256];
            uint64_t seed = (uint64_t)time(NULL) * 1000003u + (uint64_t)index * 7919u + 1;
            engine_status_t s = match_play(engines, sides, &start, opening, count, seed, &rules, &result, err,
                                           sizeof err);
            if (s != ENGINE_OK) {
                fprintf(stderr, "variant_levels: %s, level %d against %d: %s: %s\n", variant_rules((variant_t)v)->key,
                        pairing + 2, pairing + 1, engine_status_name(s), err);
                return 2;
            }
            double score = higher_white ? result.white_score : 1.0 - result.white_score;
            dprintf(fd, "%d %d %.1f %d %d\n", v, pairing, score, (int)result.end, result.plies);
        }
    }
    for (int c = WHITE; c <= BLACK; c++)
        engine_free(engines[c]);
    return 0;
}

typedef struct {
    double score[VARIANT_COUNT][PAIRINGS];
    int games[VARIANT_COUNT][PAIRINGS], plies[VARIANT_COUNT][PAIRINGS];
    int ends[VARIANT_COUNT][PAIRINGS][MATCH_END_COUNT];
} tally_t;

/* Forks the jobs and reads their games into *t; false when one failed. */
static bool run_jobs(const options_t *o, int total, tally_t *t)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    pid_t pids[JOBS_MAX];
    for (int j = 0; j < o->jobs; j++) {
        pids[j] = fork();
        if (pids[j] < 0) {
            fprintf(stderr, "variant_levels: fork: %s\n", strerror(errno));
            return false;
        }
        if (pids[j] == 0) {
            close(fds[0]);
            _exit(play_share(o, j, fds[1]));
        }
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    int v, p, end, plies, read = 0;
    double score;
    time_t started = time(NULL);
    while (in && fscanf(in, "%d %d %lf %d %d", &v, &p, &score, &end, &plies) == 5) {
        if (v <= 0 || v >= VARIANT_COUNT || p < 0 || p >= PAIRINGS || end < 0 || end >= MATCH_END_COUNT)
            return false;
        t->score[v][p] += score;
        t->games[v][p]++;
        t->plies[v][p] += plies;
        t->ends[v][p][end]++;
        if (++read % 20 == 0)
            fprintf(stderr, "variant_levels: %d of %d games, %ld s\n", read, total, (long)(time(NULL) - started));
    }
    bool ok = read == total;
    for (int j = 0; j < o->jobs; j++) {
        int status;
        if (waitpid(pids[j], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            ok = false;
    }
    if (in)
        fclose(in);
    return ok;
}

/* Prints every pairing and its check; the number of checks failed. */
static int report(const options_t *o, const tally_t *t)
{
    int failed = 0;
    printf("%-14s %-9s %5s %7s %6s  ends\n", "variant", "levels", "games", "score", "plies");
    for (int v = VARIANT_STANDARD + 1; v < VARIANT_COUNT; v++) {
        for (int p = 0; p < PAIRINGS && (o->variants & 1u << v); p++) {
            int games = t->games[v][p];
            bool ok = games > 0 && t->score[v][p] > games / 2.0;
            failed += !ok;
            printf("%-14s %d over %d %5d %6.1f%% %6.0f ", variant_rules((variant_t)v)->key, p + 2, p + 1, games,
                   games ? 100.0 * t->score[v][p] / games : 0.0, games ? (double)t->plies[v][p] / games : 0.0);
            for (int e = 0; e < MATCH_END_COUNT; e++)
                if (t->ends[v][p][e])
                    printf(" %s %d", match_end_name((match_end_t)e), t->ends[v][p][e]);
            printf("%s\n", ok ? "" : "   <- NOT above the level below");
        }
    }
    printf("\ncheck: each level above the one below in every variant: %s (%d of %d pairings failed)\n",
           failed ? "NO" : "yes", failed, PAIRINGS * __builtin_popcount(o->variants));
    return failed;
}

static void usage(void)
{
    fprintf(stderr, "usage: variant_levels [--openings N] [--jobs N] [--plies N] [--engine PATH] [--variant KEY]...\n");
    exit(2);
}

/* The variants to play: those named, or every one the engine lists. */
static bool engine_variants_of(const char *path, unsigned *out)
{
    char err[256];
    engine_status_t status;
    engine_t *e = engine_start(&(engine_options_t){.path = path}, &status, err, sizeof err);
    if (!e) {
        fprintf(stderr, "variant_levels: cannot start %s: %s\n", path, err);
        return false;
    }
    *out = engine_variants(e) & ~(1u << VARIANT_STANDARD);
    engine_free(e);
    return true;
}

/*   build/variant_levels [--openings N] [--jobs N] [--plies N] [--engine PATH] [--variant KEY]...
 *
 * The engine: --engine PATH, else $CHESSD_VARIANT_ENGINE, else
 * /usr/games/fairy-stockfish.
 * Games end as tests/support/match.c judges them (a variant's own end, mate,
 * the draws), or drawn after --plies plies. --openings is 4 by default: 8
 * games a pairing (with 6, a level that is better scored 50% at times).
 * They run in --jobs child
 * processes, each with its own two engines. make bench-levels runs it after
 * the chess levels. Exit status 1 when a check fails, 2 on an error. */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    rules_init();
    options_t o = {.openings = 4, .jobs = 2, .plies = 300, .engine = getenv("CHESSD_VARIANT_ENGINE")};
    if (!o.engine || !*o.engine)
        o.engine = "/usr/games/fairy-stockfish";
    unsigned named = 0;
    for (int i = 1; i < argc; i++) {
        variant_t v;
        bool chess960;
        if (!strcmp(argv[i], "--openings") && i + 1 < argc)
            o.openings = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            o.jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--plies") && i + 1 < argc)
            o.plies = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--engine") && i + 1 < argc)
            o.engine = argv[++i];
        else if (!strcmp(argv[i], "--variant") && i + 1 < argc
                 && variant_from_name(argv[i + 1], strlen(argv[i + 1]), &v, &chess960) && v != VARIANT_STANDARD) {
            named |= 1u << v;
            i++;
        } else
            usage();
    }
    if (o.openings < 1 || o.openings > 100 || o.jobs < 1 || o.jobs > JOBS_MAX || o.plies < 1 || o.plies > MATCH_PLIES_MAX)
        usage();
    unsigned listed;
    if (!engine_variants_of(o.engine, &listed))
        return 2;
    o.variants = named ? named & listed : listed;
    for (int v = VARIANT_STANDARD + 1; v < VARIANT_COUNT; v++)
        if (!(listed & 1u << v))
            printf("variant_levels: %s does not list %s: not played\n", o.engine, variant_rules((variant_t)v)->key);
    int total = games_per_variant(&o) * __builtin_popcount(o.variants);
    printf("variant_levels: %d variants, %d games (%d openings from both sides per pairing), %d jobs, %s\n",
           __builtin_popcount(o.variants), total, o.openings, o.jobs, o.engine);
    fflush(stdout);
    tally_t t;
    memset(&t, 0, sizeof t);
    if (!o.variants || !run_jobs(&o, total, &t)) {
        fprintf(stderr, "variant_levels: %s\n", o.variants ? "a job failed" : "no variant to play");
        return 2;
    }
    return report(&o, &t) ? 1 : 0;
}
