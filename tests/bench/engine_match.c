/* The strength of the levels of play, measured: engine games between the
 * levels (api/engine/levels.c), ratings asked with {"elo": N}, a player of
 * random moves, and Stockfish 15.1 anchors, judged by chessd's rules
 * (tests/support/match.c). Ratings are on the anchors' scale, Stockfish's
 * own calibration of UCI_Elo (see rate). Its full run fills
 * api/engine/README.md's table of levels; main says how to run it. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../api/engine/levels.h"
#include "../support/match.h"

/* Openings of four to eight plies, each balanced and common. */
static const char *const openings[] = {
    "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6",   /* Ruy Lopez */
    "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4",   /* Sicilian, open */
    "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6",   /* Queen's Gambit Declined */
    "d2d4 g8f6 c2c4 g7g6 b1c3 f8g7",   /* King's Indian */
    "e2e4 e7e6 d2d4 d7d5",             /* French */
    "e2e4 c7c6 d2d4 d7d5",             /* Caro-Kann */
    "c2c4 e7e5 b1c3 g8f6",             /* English */
    "g1f3 d7d5 g2g3 g8f6 f1g2 c7c6",   /* Reti */
    "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5",   /* Italian */
    "d2d4 g8f6 c2c4 e7e6 g1f3 b7b6",   /* Queen's Indian */
    "d2d4 d7d5 c2c4 c7c6 g1f3 g8f6",   /* Slav */
    "e2e4 d7d6 d2d4 g8f6 b1c3 g7g6",   /* Pirc */
    "d2d4 g8f6 c2c4 e7e6 b1c3 f8b4",   /* Nimzo-Indian */
    "e2e4 e7e5 g1f3 g8f6 f3e5 d7d6",   /* Petrov */
    "d2d4 f7f5 g2g3 g8f6 f1g2 e7e6",   /* Dutch */
    "e2e4 c7c5 b1c3 b8c6 g2g3 g7g6",   /* Sicilian, closed */
};
enum { OPENINGS = sizeof openings / sizeof openings[0], QUICK_OPENINGS = 4 };

enum { PLAYER_RANDOM, PLAYER_LEVEL, PLAYER_ELO, PLAYER_ANCHOR };

typedef struct {
    int kind, value; /* value: the level, the rating asked, the anchor's UCI_Elo */
    char name[32];
    bool rated;
    double rating, error; /* error: the 95% half-width */
    int games;
} player_t;

/* The players, anchors first: their ratings are given. */
static player_t players[] = {
    {.kind = PLAYER_ANCHOR, .value = 1350}, {.kind = PLAYER_ANCHOR, .value = 1600},
    {.kind = PLAYER_ANCHOR, .value = 1850}, {.kind = PLAYER_ANCHOR, .value = 2100},
    {.kind = PLAYER_ANCHOR, .value = 2400}, {.kind = PLAYER_RANDOM, .value = 0},
    {.kind = PLAYER_LEVEL, .value = 1}, {.kind = PLAYER_LEVEL, .value = 2}, {.kind = PLAYER_LEVEL, .value = 3},
    {.kind = PLAYER_LEVEL, .value = 4}, {.kind = PLAYER_LEVEL, .value = 5}, {.kind = PLAYER_LEVEL, .value = 6},
    {.kind = PLAYER_LEVEL, .value = 7}, {.kind = PLAYER_LEVEL, .value = 8}, {.kind = PLAYER_ELO, .value = 1000},
    {.kind = PLAYER_ELO, .value = 1500}, {.kind = PLAYER_ELO, .value = 2000},
};
enum { PLAYERS = sizeof players / sizeof players[0] };

/* The schedule: who is rated from which games, in order (a player is rated
 * once its last pairing has been played and every opponent is rated). */
typedef struct {
    const char *a, *b; /* a is the player rated by this pairing */
    int rounds;        /* times through the openings in a full run */
} pairing_t;

/* Games are cheap where searches are shallow: the pairings below level 5
 * go through the openings several times (rounds), those far apart in
 * strength (below the lowest anchor) most of all. */
static const pairing_t schedule[] = {
    {"level 2", "anchor 1350", 16}, {"level 1", "level 2", 16},      {"level 1", "anchor 1350", 16},
    {"level 3", "anchor 1350", 8},  {"level 3", "anchor 1600", 8},   {"level 4", "anchor 1600", 8},
    {"level 4", "anchor 1850", 8},  {"level 5", "anchor 1850", 2},   {"level 5", "anchor 2100", 2},
    {"level 6", "anchor 2100", 1},  {"level 6", "anchor 2400", 1},   {"level 7", "anchor 2400", 1},
    {"level 7", "level 6", 1},      {"level 8", "anchor 2400", 1},   {"level 8", "level 7", 1},
    {"elo 1000", "level 2", 16},    {"elo 1000", "anchor 1350", 16}, {"elo 1500", "anchor 1350", 8},
    {"elo 1500", "anchor 1600", 8}, {"elo 2000", "anchor 1850", 2},  {"elo 2000", "anchor 2100", 2},
    {"level 1", "random", 1},
};

enum { PAIRINGS = sizeof schedule / sizeof schedule[0] };

static bool quick, ratings_only;

/* Whether pairing p is played: every one, or with --ratings only those of
 * the ratings asked with "elo" and the one that rates their opponent level 2. */
static bool pairing_played(int p)
{
    return !ratings_only || !strncmp(schedule[p].a, "elo ", 4) ||
           (!strcmp(schedule[p].a, "level 2") && !strcmp(schedule[p].b, "anchor 1350"));
}

/* Games of pairing p: every opening from both sides, rounds times in a full run. */
static int pairing_games(int p, int opening_count)
{
    if (!pairing_played(p))
        return 0;
    int rounds = quick || schedule[p].rounds < 1 ? 1 : schedule[p].rounds;
    return 2 * opening_count * rounds;
}

static int total_games(int opening_count)
{
    int total = 0;
    for (int p = 0; p < PAIRINGS; p++)
        total += pairing_games(p, opening_count);
    return total;
}

static const match_rules_t rules = {.max_plies = 240, .resign_material = 6, .resign_plies = 8};

static player_t *player_named(const char *name)
{
    for (int i = 0; i < PLAYERS; i++) {
        if (!strcmp(players[i].name, name))
            return &players[i];
    }
    return NULL;
}

/* What a player asks of the engine. An anchor is the rating's own setting
 * (UCI_LimitStrength with UCI_Elo N, searched to the depth of Stockfish's
 * pick) with caps far enough to reach it. */
static bool player_level(const player_t *p, level_t *out)
{
    switch (p->kind) {
    case PLAYER_RANDOM:
        *out = (level_t){.movetime_ms = 1, .random_permille = 1000};
        return true;
    case PLAYER_LEVEL:
        return level_of(p->value, out);
    case PLAYER_ELO:
        return level_of_elo(p->value, out);
    default:
        /* an anchor is Stockfish's own UCI_Elo: levels.c sends it as itself */
        if (!level_of_elo(p->value, out) || out->random_permille || out->weaker_permille ||
            out->strength.uci_elo != p->value)
            return false;
        out->nodes = 5000000;
        out->movetime_ms = 20000;
        return true;
    }
}

typedef struct {
    double score[PAIRINGS]; /* a's points */
    int games[PAIRINGS], wins[PAIRINGS], draws[PAIRINGS], plies[PAIRINGS];
    int ends[PAIRINGS][MATCH_END_COUNT];
} tally_t;

/* Child `job` of `jobs`: plays its share of the games, one line per game
 * on fd: "pairing score end plies". */
static int play_share(int job, int jobs, int opening_count, const char *stockfish, int fd)
{
    engine_t *engines[COLOR_COUNT];
    for (int c = WHITE; c <= BLACK; c++) {
        char err[256];
        engine_status_t status;
        engines[c] = engine_start(&(engine_options_t){.path = stockfish}, &status, err, sizeof err);
        if (!engines[c]) {
            fprintf(stderr, "engine_match: cannot start %s: %s\n", stockfish, err);
            return 2;
        }
    }
    position_t start;
    char ferr[128];
    if (fen_parse(FEN_START, strlen(FEN_START), 0, &start, ferr, sizeof ferr) != FEN_OK) {
        fprintf(stderr, "engine_match: the start position: %s\n", ferr);
        return 2;
    }
    int index = 0;
    for (int p = 0; p < PAIRINGS; p++) {
        for (int g = 0; g < pairing_games(p, opening_count); g++, index++) {
            if (index % jobs != job)
                continue;
            level_t la, lb;
            if (!player_level(player_named(schedule[p].a), &la) || !player_level(player_named(schedule[p].b), &lb)) {
                fprintf(stderr, "engine_match: no setting for %s or %s\n", schedule[p].a, schedule[p].b);
                return 2;
            }
            move_t opening[MATCH_OPENING_MAX];
            int count = match_opening(&start, openings[g / 2 % opening_count], opening);
            if (count < 0) {
                fprintf(stderr, "engine_match: opening %d is not legal\n", g / 2 % opening_count);
                return 2;
            }
            bool a_white = g % 2 == 0;
            const level_t *sides[COLOR_COUNT] = {a_white ? &la : &lb, a_white ? &lb : &la};
            engine_t *side_engines[COLOR_COUNT] = {sides[WHITE]->random_permille == 1000 ? NULL : engines[WHITE],
                                                   sides[BLACK]->random_permille == 1000 ? NULL : engines[BLACK]};
            match_result_t result;
            char err[256];
            uint64_t seed = (uint64_t)time(NULL) * 1000003u + (uint64_t)index * 7919u + 1;
            engine_status_t s = match_play(side_engines, sides, &start, opening, count, seed, &rules, &result,
                                           err, sizeof err);
            if (s != ENGINE_OK) {
                fprintf(stderr, "engine_match: %s against %s: %s: %s\n", schedule[p].a, schedule[p].b,
                        engine_status_name(s), err);
                return 2;
            }
            double a_score = a_white ? result.white_score : 1.0 - result.white_score;
            dprintf(fd, "%d %.1f %d %d\n", p, a_score, (int)result.end, result.plies);
        }
    }
    for (int c = WHITE; c <= BLACK; c++)
        engine_free(engines[c]);
    return 0;
}

static double expected(double r, double opponent)
{
    return 1.0 / (1.0 + pow(10.0, (opponent - r) / 400.0));
}

/* The opponent in pairing i when that pairing rates p (it names p first,
 * was played, and is not against random moves, which have no rating). */
static const player_t *opponent_rating(int i, const player_t *p, const tally_t *t)
{
    const player_t *o = player_named(schedule[i].b);
    return strcmp(schedule[i].a, p->name) || !t->games[i] || o->kind == PLAYER_RANDOM ? NULL : o;
}

/* Rates player p from every pairing that names it first, its opponents
 * rated: maximum likelihood by Newton's method on the logistic model.
 *
 * The scale is the anchors', Stockfish's own calibration of UCI_Elo (the
 * rating lists' scale at a short time control). Draws count as half points,
 * and one virtual draw per pairing keeps a clean sweep finite. Players are
 * rated in the order of the schedule; those below the lowest anchor are
 * chained through the levels above them. The error bar is 95%: 1.96
 * standard errors from the Fisher information, draws counted as decisive
 * (so it is wide rather than narrow). The opponents' own error is added in
 * proportion to what each contributed. */
static bool rate(player_t *p, const tally_t *t)
{
    const double k = log(10.0) / 400.0;
    double r = 1500;
    for (int iter = 0; iter < 100; iter++) {
        double grad = 0, info = 0;
        for (int i = 0; i < PAIRINGS; i++) {
            const player_t *o = opponent_rating(i, p, t);
            if (!o)
                continue;
            if (!o->rated)
                return false;
            double n = t->games[i] + 1, s = t->score[i] + 0.5, e = expected(r, o->rating);
            grad += k * (s - n * e);
            info += k * k * n * e * (1 - e);
        }
        if (info == 0)
            return false;
        double step = grad / info;
        if (step > 400)
            step = 400;
        if (step < -400)
            step = -400;
        r += step;
        if (fabs(step) < 0.01)
            break;
    }
    double info = 0, inherited = 0;
    int games = 0;
    for (int i = 0; i < PAIRINGS; i++) {
        const player_t *o = opponent_rating(i, p, t);
        if (!o)
            continue;
        double e = expected(r, o->rating), part = k * k * (t->games[i] + 1) * e * (1 - e);
        info += part;
        inherited += part * (o->error / 1.96) * (o->error / 1.96);
        games += t->games[i];
    }
    p->rating = r;
    p->error = 1.96 * sqrt(1.0 / info + inherited / info);
    p->games = games;
    p->rated = true;
    return true;
}

static void usage(void)
{
    fprintf(stderr, "usage: engine_match [--quick] [--ratings] [--jobs N] [--stockfish PATH] [--markdown]\n");
    exit(2);
}

/*   build/engine_match [--quick] [--ratings] [--jobs N] [--stockfish PATH] [--markdown]
 *
 * Each pairing plays every opening above from both sides; games run in
 * --jobs child processes, each with its own two engines. A full run (make
 * bench-levels, about 40 minutes on two cores) plays the 16 openings, the
 * cheap pairings more than once (the schedule's rounds). --quick (make
 * bench) plays 4 openings once per pairing; --ratings only the pairings that
 * rate the "elo" settings.
 *
 * It prints every pairing's score and the ratings. It checks that strength
 * rises with the level, that level 1 beats random moves, and that every
 * rating asked is honoured within its error bar. Exit status 1 when a check
 * fails, 2 on an error. */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    rules_init();
    int jobs = 2, opening_count = OPENINGS;
    bool markdown = false;
    const char *stockfish = getenv("CHESSD_STOCKFISH");
    if (!stockfish || !*stockfish)
        stockfish = "/usr/games/stockfish";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = true;
            opening_count = QUICK_OPENINGS;
        }
        else if (!strcmp(argv[i], "--ratings"))
            ratings_only = true;
        else if (!strcmp(argv[i], "--markdown"))
            markdown = true;
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stockfish") && i + 1 < argc)
            stockfish = argv[++i];
        else
            usage();
    }
    if (jobs < 1 || jobs > 64)
        usage();
    for (int i = 0; i < PLAYERS; i++) {
        player_t *p = &players[i];
        static const char *const kinds[] = {"random", "level", "elo", "anchor"};
        if (p->kind == PLAYER_RANDOM)
            snprintf(p->name, sizeof p->name, "random");
        else
            snprintf(p->name, sizeof p->name, "%s %d", kinds[p->kind], p->value);
        if (p->kind == PLAYER_ANCHOR) {
            p->rated = true;
            p->rating = p->value;
        }
    }
    for (int i = 0; i < PAIRINGS; i++) {
        level_t l;
        if (!player_named(schedule[i].a) || !player_named(schedule[i].b) ||
            !player_level(player_named(schedule[i].a), &l) || !player_level(player_named(schedule[i].b), &l)) {
            fprintf(stderr, "engine_match: pairing %d names an unknown player\n", i);
            return 2;
        }
    }
    printf("engine_match: %d pairings, %d games (%d openings from both sides, %s), %d jobs, %s\n", PAIRINGS,
           total_games(opening_count), opening_count, quick ? "once each" : "in rounds", jobs, stockfish);
    fflush(stdout);
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    pid_t pids[64];
    for (int j = 0; j < jobs; j++) {
        pids[j] = fork();
        if (pids[j] < 0) {
            fprintf(stderr, "engine_match: fork: %s\n", strerror(errno));
            return 2;
        }
        if (pids[j] == 0) {
            close(fds[0]);
            _exit(play_share(j, jobs, opening_count, stockfish, fds[1]));
        }
    }
    close(fds[1]);
    tally_t t;
    memset(&t, 0, sizeof t);
    FILE *in = fdopen(fds[0], "r");
    int p, end, plies, total = 0;
    double score;
    time_t started = time(NULL);
    while (in && fscanf(in, "%d %lf %d %d", &p, &score, &end, &plies) == 4) {
        if (p < 0 || p >= PAIRINGS || end < 0 || end >= MATCH_END_COUNT)
            return 2;
        t.score[p] += score;
        t.games[p]++;
        t.wins[p] += score == 1.0;
        t.draws[p] += score == 0.5;
        t.plies[p] += plies;
        t.ends[p][end]++;
        if (++total % 50 == 0) {
            fprintf(stderr, "engine_match: %d of %d games, %ld s\n", total, total_games(opening_count),
                    (long)(time(NULL) - started));
        }
    }
    int failed = 0;
    for (int j = 0; j < jobs; j++) {
        int status;
        if (waitpid(pids[j], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    if (failed || total != total_games(opening_count)) {
        fprintf(stderr, "engine_match: a job failed (%d games of %d)\n", total, total_games(opening_count));
        return 2;
    }
    printf("%-12s %-12s %6s %5s %5s %5s %7s %6s  ends\n", "player", "against", "games", "wins", "draws", "losses",
           "score", "plies");
    for (int i = 0; i < PAIRINGS; i++) {
        if (!t.games[i])
            continue;
        printf("%-12s %-12s %6d %5d %5d %5d %6.1f%% %6.0f ", schedule[i].a, schedule[i].b, t.games[i], t.wins[i],
               t.draws[i], t.games[i] - t.wins[i] - t.draws[i], 100.0 * t.score[i] / t.games[i],
               (double)t.plies[i] / t.games[i]);
        for (int e = 0; e < MATCH_END_COUNT; e++) {
            if (t.ends[i][e])
                printf(" %s %d", match_end_name((match_end_t)e), t.ends[i][e]);
        }
        printf("\n");
    }
    for (int round = 0; round < PLAYERS; round++) {
        for (int i = 0; i < PLAYERS; i++) {
            if (!players[i].rated && players[i].kind != PLAYER_RANDOM)
                rate(&players[i], &t);
        }
    }
    printf("\n%-12s %8s %7s %6s\n", "player", "rating", "95%", "games");
    int checks_failed = 0;
    for (int i = 0; i < PLAYERS; i++) {
        player_t *pl = &players[i];
        if (pl->kind == PLAYER_ANCHOR || pl->kind == PLAYER_RANDOM)
            continue;
        if (!pl->rated && ratings_only)
            continue;
        if (!pl->rated) {
            printf("%-12s not rated\n", pl->name);
            checks_failed = 1;
            continue;
        }
        printf("%-12s %8.0f %7.0f %6d\n", pl->name, pl->rating, pl->error, pl->games);
    }
    if (markdown) {
        printf("\n| level | measured Elo | 95%% | games |\n| --- | --- | --- | --- |\n");
        for (int i = 0; i < PLAYERS; i++) {
            if (players[i].kind == PLAYER_LEVEL && players[i].rated)
                printf("| %d | %.0f | ± %.0f | %d |\n", players[i].value, players[i].rating, players[i].error,
                       players[i].games);
        }
    }
    /* The checks: strength rises with the level (each level's rating above
     * the one below it), level 1 beats random moves, ratings are honoured. */
    printf("\n");
    for (int l = 2; l <= LEVEL_MAX && !ratings_only; l++) {
        char below[16], here[16];
        snprintf(below, sizeof below, "level %d", l - 1);
        snprintf(here, sizeof here, "level %d", l);
        player_t *a = player_named(below), *b = player_named(here);
        bool ok = a->rated && b->rated && b->rating > a->rating;
        printf("check: level %d above level %d: %s\n", l, l - 1, ok ? "yes" : "NO");
        checks_failed |= !ok;
    }
    for (int i = 0; i < PAIRINGS; i++) {
        if (!strcmp(schedule[i].b, "random") && t.games[i]) {
            bool ok = t.score[i] > t.games[i] / 2.0;
            printf("check: %s beats random moves: %s (%.1f of %d)\n", schedule[i].a, ok ? "yes" : "NO",
                   t.score[i], t.games[i]);
            checks_failed |= !ok;
        }
    }
    for (int i = 0; i < PLAYERS; i++) {
        player_t *pl = &players[i];
        if (pl->kind != PLAYER_ELO || !pl->rated)
            continue;
        bool ok = fabs(pl->rating - pl->value) <= pl->error;
        printf("check: elo %d measured %.0f ± %.0f: %s\n", pl->value, pl->rating, pl->error,
               ok ? "within its error bar" : "OUTSIDE its error bar");
        checks_failed |= !ok;
    }
    return checks_failed;
}
