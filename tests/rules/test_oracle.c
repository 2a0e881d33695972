/* Differential test of SAN, canonical FEN and game status against chess.js
 * 1.4.0, and of insufficient material against chessops 0.15.1, on seeded
 * random games and edge cases (the scripts in tests/oracle; a missing node or package
 * fails the suite). About 1,100 lines: the edge cases are data, one table
 * per rule, kept beside the driver that feeds them to the oracles. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/epd.h"
#include "../support/random_game.h"
#include "../support/tests.h"

int test_oracle_register(void);

enum {
    RANDOM_POSITION_TARGET = 2000, /* random-game positions judged by chess.js (>= 1000 required) */
    SPARSE_POSITION_TARGET = 3000, /* random few-piece positions judged by chessops */
    GAME_PLY_MAX = 200,
    EPD_POSITION_MAX = 64,
    ORACLE_TIMEOUT_MS = 300000,    /* a hung node fails the test instead of hanging it */
    ORACLE_OUTPUT_MAX = 1 << 20,   /* output kept for the report; the rest is read and dropped */
    ORACLE_TAIL_MAX = 4096,        /* the last bytes, kept apart: they hold the summary line */
    ORACLE_REPORT_LINES = 40,      /* oracle lines echoed when a run is not clean */
    FAILURE_REPORT_MAX = 20,       /* C-side failures printed in full; the rest are counted */
};

/* A node script that judges our output, and the package it needs. */
typedef struct {
    const char *name;           /* the library, for messages */
    const char *script;
    const char *package;        /* its package.json: present once installed */
    const char *summary_format; /* sscanf format of the script's last line: positions, mismatches */
} oracle_t;

static const oracle_t chessjs_oracle = {
    "chess.js", "tests/oracle/chessjs_check.mjs", "tests/oracle/node_modules/chess.js/package.json",
    "chessjs: %d positions checked, %d mismatches",
};
static const oracle_t chessops_oracle = {
    "chessops", "tests/oracle/chessops_check.mjs", "tests/oracle/node_modules/chessops/package.json",
    "chessops: %d positions checked, %d mismatches",
};
static const uint64_t random_games_seed = 0x2545f4914f6cdd1du;
static const uint64_t sparse_positions_seed = 0x9e3779b97f4a7c15u;

/* ---- position lists ---- */

typedef struct {
    int count, capacity;
    position_t *items;
} position_list_t;

static bool position_list_add(position_list_t *list, const position_t *pos)
{
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 256;
        position_t *items = realloc(list->items, (size_t)capacity * sizeof *items);
        if (!items)
            return false;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = *pos;
    return true;
}

static void position_list_free(position_list_t *list)
{
    free(list->items);
    *list = (position_list_t){ 0 };
}

/* Adds pos and every position one legal move after it. */
static bool position_list_add_with_children(position_list_t *list, const position_t *pos)
{
    move_list_t moves;
    movegen_legal(pos, &moves);
    bool ok = position_list_add(list, pos);
    for (int i = 0; i < moves.count && ok; i++) {
        position_t child = *pos;
        position_undo_t undo;
        position_make(&child, moves.moves[i], &undo);
        ok = position_list_add(list, &child);
    }
    return ok;
}

/* ---- seeded random games ---- */

/* Biased towards what SAN and FEN must get right: mate when offered,
 * promotions (any piece, so extra queens, rooks and knights make
 * disambiguation likely), en passant and the double steps that allow it,
 * moves that need a disambiguation, checks, castling now and then (early
 * castling would use the rights up), then captures (endings: insufficient
 * material, stalemate) and pawn moves (promotions). */
static const random_game_preference_t preferences[] = {
    { RANDOM_GAME_PICK_MATE, 90 }, { RANDOM_GAME_PICK_PROMOTION, 70 }, { RANDOM_GAME_PICK_EN_PASSANT, 60 },
    { RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN, 50 }, { RANDOM_GAME_PICK_DISAMBIGUATED, 40 },
    { RANDOM_GAME_PICK_CHECK, 20 }, { RANDOM_GAME_PICK_CASTLING, 15 }, { RANDOM_GAME_PICK_CAPTURE, 35 },
    { RANDOM_GAME_PICK_PAWN, 35 },
};
static const random_game_style_t random_game_style = {
    preferences, sizeof preferences / sizeof preferences[0], GAME_PLY_MAX,
};

/* What collect_position() fills across the games. */
typedef struct {
    position_list_t *positions;
    bool ok; /* false once a position could not be stored */
} collection_t;

/* random_game_visit_t: stores pos until RANDOM_POSITION_TARGET. A dead
 * position ends the game (FIDE 5.2.2); shuffling kings on would add nothing. */
static bool collect_position(const position_t *pos, const move_list_t *legal, void *context)
{
    (void)legal;
    collection_t *collection = context;
    collection->ok = position_list_add(collection->positions, pos);
    return collection->ok && collection->positions->count < RANDOM_POSITION_TARGET
        && !status_insufficient_material(pos);
}

/* Every position of seeded random games until RANDOM_POSITION_TARGET: the
 * games start in turn from the initial position and from each position of
 * standard.epd, and end at mate, stalemate, insufficient material or
 * GAME_PLY_MAX plies. CU-asserts that the starts could be read. */
static bool collect_random_positions(position_list_t *out)
{
    position_t starts[EPD_POSITION_MAX + 1];
    bool ok = tests_parse_fen(FEN_START, &starts[0]);
    int epd_count = epd_read_positions("standard.epd", FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960, starts + 1,
                                       EPD_POSITION_MAX, NULL);
    CU_ASSERT(epd_count > 0);
    if (!ok || epd_count <= 0)
        return false;
    int start_count = 1 + epd_count;
    uint64_t rng = random_games_seed;
    collection_t collection = { .positions = out, .ok = true };
    for (int game = 0; collection.ok && out->count < RANDOM_POSITION_TARGET; game++)
        random_game_play(starts[game % start_count], &random_game_style, &rng, collect_position, &collection);
    CU_ASSERT(collection.ok);
    return collection.ok;
}

/* ---- hand-picked positions ---- */

/* A position with SAN our list must hold and our exact status flags: these
 * are checked in C, then chess.js judges the whole position and its children. */
typedef struct {
    const char *fen;
    const char *required_sans; /* space-separated */
    const char *flags;         /* as written to the oracle: "-" or words joined by ',' */
} hand_position_t;

static const hand_position_t hand_positions[] = {
    /* Disambiguation by file, by rank, and by both (three queens reach e1). */
    { "4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nbd2 Nfd2", "-" },
    { "4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "R1a3 R5a3 R1a2 R5a4 Rb5 Rb1", "-" },
    { "2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1", "Qh4e1 Qee1 Q1e1 Q4h2 Q1h2 Qeg2 Qhg2", "-" },
    { "k7/8/8/3N1N2/2N3N1/8/2N3N1/3N1N1K w - - 0 1", "Nc2e3 Nf5e3", "-" },
    /* A pinned knight cannot move, so the other needs no disambiguation. */
    { "4r1k1/8/8/8/4N3/8/8/1N2K3 w - - 0 1", "Nd2", "-" },
    /* Promotion with check, with mate, by capture, under-promotion, for black. */
    { "k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8=Q+ e8=R+ e8=N e8=B", "-" },
    { "k2r4/4P3/1K6/8/8/8/8/8 w - - 0 1", "exd8=Q# exd8=R# e8=Q e8=N", "-" },
    { "8/8/8/8/8/1k6/4p3/K7 b - - 0 1", "e1=Q# e1=R# e1=B e1=N", "-" },
    { "k2r4/2P1P3/8/8/8/8/8/4K3 w - - 0 1", "cxd8=Q+ exd8=Q+ c8=Q+", "-" },
    /* Castling that gives check; castling both ways for black. */
    { "5k2/8/8/8/8/8/8/4K2R w K - 0 1", "O-O+", "-" },
    { "r3k2r/8/8/8/8/8/8/3K4 b kq - 0 1", "O-O O-O-O+", "-" },
    /* En passant: legal (square written), and pinned (square not written after c5). */
    { "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 2", "dxc6 d6", "-" },
    { "8/2p5/8/KP5r/8/8/8/7k b - - 0 1", "c5 c6", "-" },
    { "4k3/8/8/8/3pP3/8/8/4K2R b K e3 0 1", "dxe3 d3", "-" },
    /* Checkmate, stalemate, check. */
    { "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", "", "check,checkmate" },
    { "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "", "stalemate" },
    { "k7/P7/K7/8/8/8/8/8 b - - 0 1", "", "stalemate" },
    { "4k3/8/8/8/8/8/8/4K2r w - - 0 1", "Kd2 Ke2 Kf2", "check" },
    /* Insufficient material, and the nearest cases that are not. */
    { "8/8/4k3/8/8/8/4K3/8 w - - 0 1", "Kd1", "insufficient" },
    { "8/8/4k3/8/8/8/4K3/6N1 w - - 0 1", "Nf3", "insufficient" },
    { "8/8/4k3/8/2b5/8/3K4/5B2 w - - 0 1", "Bxc4+", "insufficient" },
    { "8/8/4k3/8/2b5/8/6K1/4B3 w - - 0 1", "Bb4", "-" },
    { "8/8/3bk3/8/8/8/1B2KB2/8 w - - 0 1", "Bbd4 Bfd4", "insufficient" },
    { "8/8/4k3/8/8/8/4K3/5NN1 w - - 0 1", "Nh2 Nh3", "-" },
    { "8/8/4k3/8/8/8/4K3/4nB2 w - - 0 1", "Kxe1", "-" },
    { "8/8/4k3/8/8/8/3PK3/8 w - - 0 1", "d4", "-" },
};

/* ---- what goes to the oracle ---- */

/* One oracle input line: our FEN, SAN list, status and FEN after each move. */
typedef struct {
    char fen[FEN_BUFFER_SIZE];
    char flags[64];
    int count;
    char san[MOVE_LIST_MAX][SAN_BUFFER_SIZE];
    char after[MOVE_LIST_MAX][FEN_BUFFER_SIZE];
} oracle_line_t;

/* What the judged positions covered. Positions unless said otherwise. */
typedef struct {
    int positions;
    int checks, checkmates, stalemates, insufficient;
    int with_castling, with_promotion, with_en_passant;
    int check_sans, mate_sans;                                          /* moves */
    int file_disambiguated, rank_disambiguated, square_disambiguated;   /* moves */
    int status_disagreements; /* status_evaluate() vs status_insufficient_material() */
} coverage_t;

/* Kind of disambiguation in a piece move's SAN: 0 none, 1 file, 2 rank, 3 square. */
static int san_disambiguation(const char *san)
{
    if (!strchr("NBRQK", san[0]) || san[0] == '\0')
        return 0;
    char core[SAN_BUFFER_SIZE];
    size_t n = 0;
    for (const char *c = san + 1; *c && *c != '+' && *c != '#'; c++)
        if (*c != 'x')
            core[n++] = *c;
    if (n <= 2)
        return 0;
    if (n == 4)
        return 3;
    return core[0] >= 'a' && core[0] <= 'h' ? 1 : 2;
}

static void append_flag(char *flags, size_t size, bool on, const char *word)
{
    if (!on)
        return;
    size_t n = strlen(flags);
    snprintf(flags + n, size - n, "%s%s", n ? "," : "", word);
}

/* Fills line from pos with our own functions and records coverage. */
static void describe_position(const position_t *pos, oracle_line_t *line, coverage_t *coverage)
{
    move_list_t list;
    movegen_legal(pos, &list);
    fen_format(pos, line->fen, sizeof line->fen);
    line->count = list.count;
    bool castling = false, promotion = false, en_passant = false;
    for (int i = 0; i < list.count; i++) {
        move_t move = list.moves[i];
        san_format(pos, move, line->san[i]);
        position_t after = *pos;
        position_undo_t undo;
        position_make(&after, move, &undo);
        fen_format(&after, line->after[i], sizeof line->after[i]);
        castling |= move_kind(move) == MOVE_CASTLING;
        promotion |= move_kind(move) == MOVE_PROMOTION;
        en_passant |= move_kind(move) == MOVE_EN_PASSANT;
        size_t length = strlen(line->san[i]);
        coverage->check_sans += line->san[i][length - 1] == '+';
        coverage->mate_sans += line->san[i][length - 1] == '#';
        int disambiguation = san_disambiguation(line->san[i]);
        coverage->file_disambiguated += disambiguation == 1;
        coverage->rank_disambiguated += disambiguation == 2;
        coverage->square_disambiguated += disambiguation == 3;
    }

    status_t status;
    status_evaluate(pos, NULL, 0, &status);
    bool insufficient = status_insufficient_material(pos);
    bool checkmate = status.state == STATUS_CHECKMATE, stalemate = status.state == STATUS_STALEMATE;
    line->flags[0] = '\0';
    append_flag(line->flags, sizeof line->flags, status.check, "check");
    append_flag(line->flags, sizeof line->flags, checkmate, "checkmate");
    append_flag(line->flags, sizeof line->flags, stalemate, "stalemate");
    append_flag(line->flags, sizeof line->flags, insufficient, "insufficient");
    if (!line->flags[0])
        snprintf(line->flags, sizeof line->flags, "-");

    /* With no history and a clock under 150, the only automatic draw is
     * insufficient material, and it is declared exactly when the game goes on. */
    bool declared = status.state == STATUS_DRAW && status.draw_reason == STATUS_DRAW_INSUFFICIENT_MATERIAL;
    bool expected = insufficient && list.count > 0;
    if (pos->halfmove_clock < 150 && (declared != expected || status.legal_move_count != list.count)) {
        if (coverage->status_disagreements++ < FAILURE_REPORT_MAX)
            fprintf(stderr, "\nstatus: %s is %s/%s with %d moves, insufficient material %d\n", line->fen,
                    status_state_name(status.state), status_draw_reason_name(status.draw_reason),
                    status.legal_move_count, insufficient);
    }

    coverage->positions++;
    coverage->checks += status.check;
    coverage->checkmates += checkmate;
    coverage->stalemates += stalemate;
    coverage->insufficient += insufficient;
    coverage->with_castling += castling;
    coverage->with_promotion += promotion;
    coverage->with_en_passant += en_passant;
}

static void write_oracle_line(FILE *out, const oracle_line_t *line)
{
    fprintf(out, "%s\t", line->fen);
    for (int i = 0; i < line->count; i++)
        fprintf(out, "%s%s", i ? " " : "", line->san[i]);
    fprintf(out, "\t%s\t", line->flags);
    for (int i = 0; i < line->count; i++)
        fprintf(out, "%s%s", i ? "|" : "", line->after[i]);
    fputc('\n', out);
}

/* ---- running the oracle ---- */

typedef struct {
    int exit_status;      /* the script's exit code; -1 when it did not exit normally */
    int positions;        /* from the summary line; -1 when there is none */
    int mismatches;
    size_t length;
    char *output;         /* stdout and stderr interleaved, truncated at ORACLE_OUTPUT_MAX */
    size_t tail_length;
    char tail[ORACLE_TAIL_MAX + 1]; /* the last bytes of the output, however long it was */
} oracle_run_t;

/* Node as named by $CHESSD_NODE, else `node` found on PATH. */
static const char *node_program(void)
{
    const char *node = getenv("CHESSD_NODE");
    return node && *node ? node : "node";
}

/* Whether the script and its library are where the run needs them; prints why not. */
static bool oracle_installed(const oracle_t *oracle)
{
    if (access(oracle->script, R_OK) != 0) {
        fprintf(stderr, "\noracle: %s is missing (%s); tests must run from the repository root\n",
                oracle->script, strerror(errno));
        return false;
    }
    if (access(oracle->package, R_OK) != 0) {
        fprintf(stderr, "\noracle: %s is not installed (%s: %s); run `npm ci --prefix tests/oracle`\n",
                oracle->name, oracle->package, strerror(errno));
        return false;
    }
    return true;
}

/* Appends what the child wrote: the first ORACLE_OUTPUT_MAX bytes to
 * run->output, the last ORACLE_TAIL_MAX to run->tail. */
static bool read_child_output(int fd, oracle_run_t *run, long deadline)
{
    char chunk[65536];
    for (;;) {
        long remaining = deadline - tests_monotonic_ms();
        if (remaining <= 0)
            return false;
        struct pollfd ready = { .fd = fd, .events = POLLIN };
        int polled = poll(&ready, 1, (int)remaining);
        if (polled < 0 && errno != EINTR)
            return false;
        if (polled <= 0)
            continue;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0;
        size_t kept = (size_t)n;
        if (run->length + kept > ORACLE_OUTPUT_MAX)
            kept = ORACLE_OUTPUT_MAX - run->length;
        memcpy(run->output + run->length, chunk, kept);
        run->length += kept;
        run->output[run->length] = '\0';

        size_t fresh = (size_t)n < ORACLE_TAIL_MAX ? (size_t)n : ORACLE_TAIL_MAX;
        size_t old = run->tail_length + fresh > ORACLE_TAIL_MAX ? ORACLE_TAIL_MAX - fresh : run->tail_length;
        memmove(run->tail, run->tail + run->tail_length - old, old);
        memcpy(run->tail + old, chunk + (size_t)n - fresh, fresh);
        run->tail_length = old + fresh;
        run->tail[run->tail_length] = '\0';
    }
}

/* Finds the last summary line ("chessjs: N positions checked, M mismatches"). */
static void parse_summary(const oracle_t *oracle, oracle_run_t *run)
{
    run->positions = run->mismatches = -1;
    for (const char *line = run->tail; line && *line;) {
        int positions, mismatches;
        if (sscanf(line, oracle->summary_format, &positions, &mismatches) == 2) {
            run->positions = positions;
            run->mismatches = mismatches;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
}

/* Runs node on the oracle's script with input_path as its argument (no
 * shell), with stdout and stderr on one pipe. False, with the reason printed,
 * when node could not be started or did not finish within ORACLE_TIMEOUT_MS. */
static bool oracle_run(const oracle_t *oracle, const char *input_path, oracle_run_t *run)
{
    *run = (oracle_run_t){ .exit_status = -1, .positions = -1, .mismatches = -1 };
    run->output = malloc(ORACLE_OUTPUT_MAX + 1);
    if (!run->output)
        return false;
    run->output[0] = run->tail[0] = '\0';
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        fprintf(stderr, "\noracle: pipe failed: %s\n", strerror(errno));
        return false;
    }
    const char *node = node_program();
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        if (dup2(pipe_fds[1], STDOUT_FILENO) < 0 || dup2(pipe_fds[1], STDERR_FILENO) < 0)
            _exit(127);
        close(pipe_fds[1]);
        execlp(node, node, oracle->script, input_path, (char *)NULL);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", node, strerror(errno));
        _exit(127);
    }
    close(pipe_fds[1]);
    if (pid < 0) {
        close(pipe_fds[0]);
        fprintf(stderr, "\noracle: fork failed: %s\n", strerror(errno));
        return false;
    }
    bool finished = read_child_output(pipe_fds[0], run, tests_monotonic_ms() + ORACLE_TIMEOUT_MS);
    close(pipe_fds[0]);
    if (!finished)
        kill(pid, SIGKILL);
    int wait_status = 0;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
        continue;
    if (WIFEXITED(wait_status))
        run->exit_status = WEXITSTATUS(wait_status);
    parse_summary(oracle, run);
    if (!finished) {
        fprintf(stderr, "\noracle: %s %s did not finish within %d ms\n", node, oracle->script, ORACLE_TIMEOUT_MS);
        return false;
    }
    if (run->exit_status == 127)
        fprintf(stderr, "\noracle: %s could not be run (install Node.js 20 or set CHESSD_NODE): %s\n", node,
                run->output);
    return true;
}

/* Prints the first lines of the oracle's output. */
static void print_oracle_output(const oracle_run_t *run)
{
    const char *line = run->output;
    for (int i = 0; i < ORACLE_REPORT_LINES && line && *line; i++) {
        const char *end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        fprintf(stderr, "  %.*s\n", length, line);
        line = end ? end + 1 : NULL;
    }
    if (line && *line) {
        const char *last = strrchr(run->tail, '\n');
        while (last && last > run->tail && last[-1] != '\n')
            last--;
        fprintf(stderr, "  ...\n  %s", last ? last : "");
    }
}

/* Closes file (the oracle's input, at path), runs the oracle on it and
 * asserts it read `positions` positions and found no mismatch. Returns
 * whether all of that held; *run (its output to free with oracle_finish())
 * and *elapsed_ms are filled either way. */
static bool oracle_check(const oracle_t *oracle, FILE *file, const char *path, int positions, oracle_run_t *run,
                         long *elapsed_ms)
{
    bool written = !ferror(file);
    written &= fclose(file) == 0;
    CU_ASSERT(written);
    long started = tests_monotonic_ms();
    bool ran = oracle_run(oracle, path, run);
    *elapsed_ms = tests_monotonic_ms() - started;
    CU_ASSERT(ran);
    CU_ASSERT_EQUAL(run->exit_status, 0);
    CU_ASSERT_EQUAL(run->positions, positions);
    CU_ASSERT_EQUAL(run->mismatches, 0);
    return ran && run->exit_status == 0 && run->positions == positions && run->mismatches == 0;
}

/* After oracle_check(): removes a clean run's input, or keeps it and shows
 * the oracle's output; frees the output. */
static void oracle_finish(bool clean, const char *path, int positions, oracle_run_t *run)
{
    if (clean) {
        unlink(path);
    } else {
        fprintf(stderr, "  oracle exit %d, expected %d positions; input kept in %s\n", run->exit_status, positions,
                path);
        print_oracle_output(run);
    }
    free(run->output);
}


/* A temp file for the oracle's input, opened for writing; path receives its name. */
static FILE *create_input_file(char *path, size_t path_size)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, path_size, "%s/chessd-oracle-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "\noracle: mkstemp %s: %s\n", path, strerror(errno));
        return NULL;
    }
    FILE *file = fdopen(fd, "w");
    if (!file)
        close(fd);
    return file;
}

/* Writes every position of list to a temp file, has chess.js judge it, and
 * asserts a clean run: exit 0, every position checked, no mismatch. The input
 * file is kept (and named) when the run is not clean. */
static void assert_chessjs_agrees(const char *what, const position_list_t *list, coverage_t *coverage)
{
    if (!oracle_installed(&chessjs_oracle))
        CU_FAIL_FATAL("chess.js oracle not installed (see the message above; CI runs npm ci --prefix tests/oracle)");
    oracle_line_t *line = malloc(sizeof *line);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    char path[1024];
    FILE *file = create_input_file(path, sizeof path);
    CU_ASSERT_PTR_NOT_NULL(file);
    if (!file) {
        free(line);
        return;
    }
    fprintf(file, "# chessd %s positions for tests/oracle/chessjs_check.mjs\n", what);
    for (int i = 0; i < list->count; i++) {
        describe_position(&list->items[i], line, coverage);
        write_oracle_line(file, line);
    }
    free(line);
    oracle_run_t run;
    long elapsed;
    bool clean = oracle_check(&chessjs_oracle, file, path, list->count, &run, &elapsed);
    fprintf(stderr,
            "\n  chess.js %s: %d positions (%d check, %d mate, %d stalemate, %d insufficient; %d with castling, "
            "%d with promotion, %d with en passant), SAN with +: %d, #: %d, disambiguated by file %d, rank %d, "
            "square %d; %d mismatches, %ld ms\n",
            what, coverage->positions, coverage->checks, coverage->checkmates, coverage->stalemates,
            coverage->insufficient, coverage->with_castling, coverage->with_promotion, coverage->with_en_passant,
            coverage->check_sans, coverage->mate_sans, coverage->file_disambiguated, coverage->rank_disambiguated,
            coverage->square_disambiguated, run.mismatches, elapsed);
    oracle_finish(clean, path, list->count, &run);
}

/* ---- hand-picked positions, checked in C first ---- */

/* Whether san (a space-separated list entry) is among line's SAN. */
static bool line_has_san(const oracle_line_t *line, const char *san, size_t length)
{
    for (int i = 0; i < line->count; i++)
        if (strlen(line->san[i]) == length && !memcmp(line->san[i], san, length))
            return true;
    return false;
}

/* Parses the hand-picked positions and checks their required SAN and flags
 * (prints what is missing); adds each with its children to out. */
static bool collect_hand_positions(position_list_t *out)
{
    oracle_line_t *line = malloc(sizeof *line);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    bool ok = true;
    for (size_t i = 0; i < sizeof hand_positions / sizeof hand_positions[0]; i++) {
        const hand_position_t *hand = &hand_positions[i];
        position_t pos;
        if (!tests_parse_fen(hand->fen, &pos)) {
            ok = false;
            continue;
        }
        coverage_t ignored = { 0 };
        describe_position(&pos, line, &ignored);
        for (const char *san = hand->required_sans; *san;) {
            size_t length = strcspn(san, " ");
            bool present = line_has_san(line, san, length);
            CU_ASSERT(present);
            if (!present)
                fprintf(stderr, "\nSAN '%.*s' missing from the moves of %s\n", (int)length, san, hand->fen);
            san += length + (san[length] == ' ');
        }
        bool flags_right = !strcmp(line->flags, hand->flags);
        CU_ASSERT(flags_right);
        if (!flags_right)
            fprintf(stderr, "\nstatus flags of %s: '%s', expected '%s'\n", hand->fen, line->flags, hand->flags);
        ok &= position_list_add_with_children(out, &pos);
    }
    free(line);
    return ok;
}

/* ---- SAN round trips (C only) ---- */

typedef enum {
    FORM_CANONICAL,          /* Nf3+ */
    FORM_NO_CHECK_MARK,      /* Nf3 for Nf3+ or Nf3# */
    FORM_EXTRA_CHECK_MARK,   /* Nf3+ for Nf3, Nf3++ for Nf3+ */
    FORM_ANNOTATED,          /* Nf3!? */
    FORM_ZERO_CASTLING,      /* 0-0 for O-O */
    FORM_NO_CAPTURE_MARK,    /* Ne5 for Nxe5, ed5 for exd5 */
    FORM_FULL_FROM_SQUARE,   /* Ng1f3 for Nf3, Nb1xd2 for Nbxd2 */
    FORM_PROMOTION_NO_EQUALS,/* e8Q for e8=Q */
    FORM_PROMOTION_LOWERCASE,/* e8q for e8=Q */
    FORM_COUNT
} san_form_t;

static const char *const form_names[FORM_COUNT] = {
    "canonical", "without check mark", "with an extra check mark", "with !?", "with zeros",
    "without x", "with the full from-square", "promotion without =", "promotion in lower case",
};

/* Writes the SAN of move in the given form into text; false when the form
 * does not change the canonical SAN (so nothing new would be tested). */
static bool san_in_form(const position_t *pos, move_t move, const char *san, san_form_t form, char *text,
                        size_t size)
{
    size_t length = strlen(san);
    size_t core = strcspn(san, "+#");
    const char *check_mark = san + core;
    const char *equals = strchr(san, '=');
    switch (form) {
    case FORM_CANONICAL:
        snprintf(text, size, "%s", san);
        return true;
    case FORM_NO_CHECK_MARK:
        snprintf(text, size, "%.*s", (int)core, san);
        return core != length;
    case FORM_EXTRA_CHECK_MARK:
        snprintf(text, size, "%s+", san);
        return true;
    case FORM_ANNOTATED:
        snprintf(text, size, "%s!?", san);
        return true;
    case FORM_ZERO_CASTLING:
        if (san[0] != 'O')
            return false;
        snprintf(text, size, "%s", san);
        for (char *c = text; *c; c++)
            *c = *c == 'O' ? '0' : *c;
        return true;
    case FORM_NO_CAPTURE_MARK: {
        const char *x = strchr(san, 'x');
        if (!x)
            return false;
        snprintf(text, size, "%.*s%s", (int)(x - san), san, x + 1);
        return true;
    }
    case FORM_FULL_FROM_SQUARE: {
        piece_type_t type = piece_type(pos->board[move_from(move)]);
        if (move_kind(move) == MOVE_CASTLING || type == PAWN)
            return false;
        int from = move_from(move), to = move_to(move);
        bool capture = random_game_move_is(pos, NULL, move, RANDOM_GAME_PICK_CAPTURE);
        snprintf(text, size, "%c%c%c%s%c%c%s", san[0], 'a' + square_file(from), '1' + square_rank(from),
                 capture ? "x" : "", 'a' + square_file(to), '1' + square_rank(to), check_mark);
        return true;
    }
    case FORM_PROMOTION_NO_EQUALS:
    case FORM_PROMOTION_LOWERCASE:
        if (!equals)
            return false;
        snprintf(text, size, "%.*s%c%s", (int)(equals - san), san,
                 form == FORM_PROMOTION_LOWERCASE ? equals[1] + ('a' - 'A') : equals[1], equals + 2);
        return true;
    default:
        return false;
    }
}

static void test_every_san_and_its_lenient_forms_parse_back_to_the_move(void)
{
    position_list_t positions = { 0 };
    bool collected = collect_random_positions(&positions) && collect_hand_positions(&positions);
    CU_ASSERT_FATAL(collected);
    int tried[FORM_COUNT] = { 0 }, failed[FORM_COUNT] = { 0 }, reported = 0;
    for (int p = 0; p < positions.count; p++) {
        const position_t *pos = &positions.items[p];
        move_list_t list;
        movegen_legal(pos, &list);
        for (int i = 0; i < list.count; i++) {
            char san[SAN_BUFFER_SIZE];
            san_format(pos, list.moves[i], san);
            for (int form = 0; form < FORM_COUNT; form++) {
                char text[SAN_INPUT_MAX + 1], message[256] = "";
                if (!san_in_form(pos, list.moves[i], san, (san_form_t)form, text, sizeof text))
                    continue;
                move_t parsed = MOVE_NONE;
                legality_reason_t reason = san_parse(pos, text, strlen(text), &parsed, message, sizeof message);
                tried[form]++;
                if (reason == LEGALITY_OK && parsed == list.moves[i])
                    continue;
                failed[form]++;
                if (reported++ < FAILURE_REPORT_MAX) {
                    char fen[FEN_BUFFER_SIZE], expected[UCI_BUFFER_SIZE], got[UCI_BUFFER_SIZE] = "-";
                    if (reason == LEGALITY_OK)
                        uci_format(pos, parsed, got);
                    fprintf(stderr, "\nSAN '%s' (%s of %s) in %s: %s, %s instead of %s\n", text, form_names[form],
                            san, fen_format(pos, fen, sizeof fen), legality_reason_code(reason),
                            reason == LEGALITY_OK ? got : message, uci_format(pos, list.moves[i], expected));
                }
            }
        }
    }
    fprintf(stderr, "\n  SAN round trips over %d positions:", positions.count);
    for (int form = 0; form < FORM_COUNT; form++)
        fprintf(stderr, " %s %d/%d;", form_names[form], tried[form] - failed[form], tried[form]);
    fprintf(stderr, "\n");
    for (int form = 0; form < FORM_COUNT; form++) {
        CU_ASSERT(tried[form] > 0);
        CU_ASSERT_EQUAL(failed[form], 0);
    }
    position_list_free(&positions);
}

/* ---- ambiguity and missing promotion (C only) ---- */

/* san_parse(text) in fen must fail with `expected`, naming each of the
 * space-separated SAN in `named` in its message. */
static void assert_san_rejected(const char *fen, const char *text, legality_reason_t expected, const char *named)
{
    position_t pos;
    if (!tests_parse_fen(fen, &pos))
        return;
    char message[256] = "";
    move_t move = MOVE_NONE;
    legality_reason_t reason = san_parse(&pos, text, strlen(text), &move, message, sizeof message);
    CU_ASSERT_EQUAL(reason, expected);
    if (reason != expected)
        fprintf(stderr, "\n'%s' in %s: %s (%s), expected %s\n", text, fen, legality_reason_code(reason), message,
                legality_reason_code(expected));
    for (const char *name = named; *name;) {
        size_t length = strcspn(name, " ");
        char candidate[SAN_BUFFER_SIZE];
        snprintf(candidate, sizeof candidate, "%.*s", (int)length, name);
        bool present = strstr(message, candidate) != NULL;
        CU_ASSERT(present);
        if (!present)
            fprintf(stderr, "\n'%s' in %s: message \"%s\" does not name %s\n", text, fen, message, candidate);
        name += length + (name[length] == ' ');
    }
}

static void test_san_ambiguous_move_is_rejected_naming_every_candidate(void)
{
    assert_san_rejected("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nd2", LEGALITY_AMBIGUOUS, "Nbd2 Nfd2");
    assert_san_rejected("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nxd2", LEGALITY_AMBIGUOUS, "Nbd2 Nfd2");
    assert_san_rejected("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "Ra3", LEGALITY_AMBIGUOUS, "R1a3 R5a3");
    assert_san_rejected("2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1", "Qe1", LEGALITY_AMBIGUOUS, "Qee1 Q1e1 Qh4e1");
    assert_san_rejected("2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1", "Qhe1", LEGALITY_AMBIGUOUS, "Q1e1 Qh4e1");
    assert_san_rejected("2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1", "Q4e1", LEGALITY_AMBIGUOUS, "Qee1 Qh4e1");
}

static void test_san_promotion_without_piece_is_rejected(void)
{
    assert_san_rejected("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8", LEGALITY_PROMOTION_MISSING, "");
    assert_san_rejected("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8+", LEGALITY_PROMOTION_MISSING, "");
    assert_san_rejected("k2r4/4P3/1K6/8/8/8/8/8 w - - 0 1", "exd8", LEGALITY_PROMOTION_MISSING, "");
    assert_san_rejected("8/8/8/8/8/1k6/4p3/K7 b - - 0 1", "e1", LEGALITY_PROMOTION_MISSING, "");
    assert_san_rejected("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8=K", LEGALITY_PROMOTION_INVALID, "");
}

/* ---- chess.js ---- */

static void test_san_fen_and_status_match_chessjs_on_random_games(void)
{
    position_list_t positions = { 0 };
    CU_ASSERT_FATAL(collect_random_positions(&positions));
    CU_ASSERT(positions.count >= 1000);
    coverage_t coverage = { 0 };
    assert_chessjs_agrees("random games", &positions, &coverage);
    CU_ASSERT(coverage.checks > 0);
    CU_ASSERT(coverage.checkmates > 0);
    CU_ASSERT(coverage.with_castling > 0);
    CU_ASSERT(coverage.with_promotion > 0);
    CU_ASSERT(coverage.with_en_passant > 0);
    CU_ASSERT(coverage.check_sans > 0);
    CU_ASSERT(coverage.mate_sans > 0);
    CU_ASSERT(coverage.file_disambiguated > 0);
    CU_ASSERT(coverage.rank_disambiguated > 0);
    CU_ASSERT_EQUAL(coverage.status_disagreements, 0);
    position_list_free(&positions);
}

static void test_san_fen_and_status_match_chessjs_on_hand_picked_positions(void)
{
    position_list_t positions = { 0 };
    CU_ASSERT_FATAL(collect_hand_positions(&positions));
    coverage_t coverage = { 0 };
    assert_chessjs_agrees("hand-picked positions and their children", &positions, &coverage);
    CU_ASSERT(coverage.checkmates > 0);
    CU_ASSERT(coverage.stalemates > 0);
    CU_ASSERT(coverage.insufficient > 0);
    CU_ASSERT(coverage.square_disambiguated > 0);
    CU_ASSERT_EQUAL(coverage.status_disagreements, 0);
    position_list_free(&positions);
}

/* The oracle itself must catch errors: three lines, each with one planted
 * fault (a SAN left out, a wrong flag, a wrong FEN after a move), must give
 * exit status 1 and exactly three mismatches. */
static void test_chessjs_oracle_reports_planted_faults(void)
{
    if (!oracle_installed(&chessjs_oracle))
        CU_FAIL_FATAL("chess.js oracle not installed (see the message above; CI runs npm ci --prefix tests/oracle)");
    position_t start;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_START, &start));
    oracle_line_t *line = malloc(sizeof *line);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    coverage_t ignored = { 0 };
    char path[1024];
    FILE *file = create_input_file(path, sizeof path);
    CU_ASSERT_PTR_NOT_NULL(file);
    if (file) {
        describe_position(&start, line, &ignored);
        line->count--; /* fault 1: the last move missing */
        write_oracle_line(file, line);
        describe_position(&start, line, &ignored);
        snprintf(line->flags, sizeof line->flags, "check"); /* fault 2 */
        write_oracle_line(file, line);
        describe_position(&start, line, &ignored);
        line->after[0][strlen(line->after[0]) - 1] = '9'; /* fault 3: fullmove number 9 */
        write_oracle_line(file, line);
        CU_ASSERT(fclose(file) == 0);
        oracle_run_t run;
        CU_ASSERT(oracle_run(&chessjs_oracle, path, &run));
        CU_ASSERT_EQUAL(run.exit_status, 1);
        CU_ASSERT_EQUAL(run.positions, 3);
        CU_ASSERT_EQUAL(run.mismatches, 3);
        if (run.exit_status != 1 || run.positions != 3 || run.mismatches != 3)
            print_oracle_output(&run);
        free(run.output);
        unlink(path);
    }
    free(line);
}

/* ---- chessops: each side's insufficient material ---- */

/* What each side may get besides its king in a random few-piece position,
 * weighted towards what the rule tells apart (minor pieces, and whether
 * the other side has something to block its own king with). */
static const struct {
    char letter; /* white's FEN letter */
    int weight;
} sparse_menu[] = { { 'N', 6 }, { 'B', 8 }, { 'P', 3 }, { 'R', 1 }, { 'Q', 2 } };

static char sparse_pick_piece(uint64_t *rng)
{
    int total = 0;
    for (size_t i = 0; i < sizeof sparse_menu / sizeof sparse_menu[0]; i++)
        total += sparse_menu[i].weight;
    int pick = random_game_below(rng, total);
    for (size_t i = 0; i < sizeof sparse_menu / sizeof sparse_menu[0]; i++) {
        if (pick < sparse_menu[i].weight)
            return sparse_menu[i].letter;
        pick -= sparse_menu[i].weight;
    }
    return 'N';
}

/* An empty square of board (a1 = 0), for a pawn off the first and last ranks. */
static int sparse_pick_square(char board[64], uint64_t *rng, bool pawn)
{
    for (;;) {
        int square = pawn ? 8 + random_game_below(rng, 48) : random_game_below(rng, 64);
        if (!board[square])
            return square;
    }
}

/* Writes a random position into text: two kings apart, 0 to 3 more pieces a
 * side from sparse_menu, either side to move. fen_parse judges it later. */
static void sparse_random_fen(uint64_t *rng, char *text, size_t size)
{
    char board[64] = { 0 };
    int white_king = random_game_below(rng, 64), black_king;
    do
        black_king = random_game_below(rng, 64);
    while (abs(square_file(black_king) - square_file(white_king)) <= 1
           && abs(square_rank(black_king) - square_rank(white_king)) <= 1);
    board[white_king] = 'K';
    board[black_king] = 'k';
    for (int side = 0; side < 2; side++) {
        int extra = random_game_below(rng, 4);
        for (int i = 0; i < extra; i++) {
            char letter = sparse_pick_piece(rng);
            board[sparse_pick_square(board, rng, letter == 'P')] = side ? (char)(letter + ('a' - 'A')) : letter;
        }
    }
    size_t n = 0;
    for (int rank = 7; rank >= 0; rank--) {
        int empty = 0;
        for (int file = 0; file < 8; file++) {
            char piece = board[rank * 8 + file];
            if (!piece) {
                empty++;
                continue;
            }
            if (empty)
                text[n++] = (char)('0' + empty);
            text[n++] = piece;
            empty = 0;
        }
        if (empty)
            text[n++] = (char)('0' + empty);
        if (rank)
            text[n++] = '/';
    }
    snprintf(text + n, size - n, " %c - - 0 1", random_game_below(rng, 2) ? 'b' : 'w');
}

/* Adds count legal random few-piece positions (drawn from a fixed seed;
 * those fen_parse refuses, such as a side to move giving check, are drawn
 * again). */
static bool collect_sparse_positions(position_list_t *out, int count)
{
    uint64_t rng = sparse_positions_seed;
    bool ok = true;
    for (int added = 0; added < count && ok;) {
        char text[FEN_BUFFER_SIZE], message[256];
        position_t pos;
        sparse_random_fen(&rng, text, sizeof text);
        if (fen_parse(text, strlen(text), 0, &pos, message, sizeof message) != FEN_OK)
            continue;
        ok = position_list_add(out, &pos);
        added++;
    }
    return ok;
}

/* The material cases of chessops's rule, each with and without something of
 * the other side's that could hem its king in; every one with its children. */
static const char *const material_positions[] = {
    "8/8/4k3/8/8/3K4/8/8 w - - 0 1",       /* K v K */
    "8/8/4k3/8/8/3K4/8/q7 b - - 0 1",      /* K v K+Q */
    "8/8/4k3/8/8/3KN3/8/8 w - - 0 1",      /* K+N v K */
    "8/8/4k3/8/8/3KN3/8/q7 w - - 0 1",     /* K+N v K+Q */
    "8/8/4k3/8/8/3KN3/q7/q7 w - - 0 1",    /* K+N v K+Q+Q */
    "8/8/4k3/8/8/3KN3/8/r7 w - - 0 1",     /* K+N v K+R */
    "8/8/4k3/8/8/3KN3/8/b7 w - - 0 1",     /* K+N v K+B */
    "8/8/2n1k3/8/8/3KN3/8/8 w - - 0 1",    /* K+N v K+N */
    "8/8/4k3/4p3/8/3KN3/8/8 w - - 0 1",    /* K+N v K+P */
    "8/8/4k3/8/8/3KNN2/8/8 w - - 0 1",     /* K+N+N v K */
    "8/8/4k3/8/8/3KNN2/8/q7 w - - 0 1",    /* K+N+N v K+Q */
    "8/8/4k3/8/8/3KNB2/8/8 w - - 0 1",     /* K+N+B v K */
    "8/8/4k3/8/8/3KB3/8/8 w - - 0 1",      /* K+B v K */
    "8/8/4k3/8/8/3KB3/8/q7 w - - 0 1",     /* K+B v K+Q */
    "8/8/4k3/8/8/3KB3/8/r7 w - - 0 1",     /* K+B v K+R */
    "8/8/4k3/8/8/3KB3/8/n7 w - - 0 1",     /* K+B v K+N */
    "8/8/4k3/4p3/8/3KB3/8/8 w - - 0 1",    /* K+B v K+P */
    "8/8/3bk3/8/8/3KB3/8/8 w - - 0 1",     /* K+B v K+B, one colour */
    "8/8/2b1k3/8/8/3KB3/8/8 w - - 0 1",    /* K+B v K+B, both colours */
    "8/8/4k3/8/8/3KB3/6B1/8 w - - 0 1",    /* K+B+B on both colours v K */
    "8/8/1b2k3/8/8/2BK4/8/B7 w - - 0 1",   /* three bishops on dark squares */
    "8/8/1b2k3/8/8/2BK4/8/B6r w - - 0 1",  /* the same and a rook */
    "8/8/1b2k3/8/8/2BK4/7P/B7 w - - 0 1",  /* the same and a pawn */
    "8/8/4k3/8/8/3K4/8/R7 b - - 0 1",      /* K+R v K */
    "8/8/4k3/8/8/3KP3/8/8 b - - 0 1",      /* K+P v K */
};

static bool collect_material_positions(position_list_t *out)
{
    bool ok = true;
    for (size_t i = 0; i < sizeof material_positions / sizeof material_positions[0] && ok; i++) {
        position_t pos;
        ok = tests_parse_fen(material_positions[i], &pos) && position_list_add_with_children(out, &pos);
    }
    return ok;
}

/* Counts over the positions sent to chessops. */
typedef struct {
    int positions;
    int insufficient[COLOR_COUNT];
    int both; /* insufficient for both sides */
} material_coverage_t;

static void write_material_line(FILE *out, const position_t *pos, material_coverage_t *coverage)
{
    char fen[FEN_BUFFER_SIZE];
    bool white = status_insufficient_material_for(pos, WHITE), black = status_insufficient_material_for(pos, BLACK);
    fprintf(out, "%s\t%s\t%s\n", fen_format(pos, fen, sizeof fen), white ? "insufficient" : "sufficient",
            black ? "insufficient" : "sufficient");
    coverage->positions++;
    coverage->insufficient[WHITE] += white;
    coverage->insufficient[BLACK] += black;
    coverage->both += white && black;
}

/* Writes every position of list to a temp file, has chessops judge both
 * sides of each, and asserts a clean run (kept and named when not clean). */
static void assert_chessops_agrees(const char *what, const position_list_t *list, material_coverage_t *coverage)
{
    if (!oracle_installed(&chessops_oracle))
        CU_FAIL_FATAL("chessops oracle not installed (see the message above; CI runs npm ci --prefix tests/oracle)");
    char path[1024];
    FILE *file = create_input_file(path, sizeof path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    fprintf(file, "# chessd %s positions for tests/oracle/chessops_check.mjs\n", what);
    for (int i = 0; i < list->count; i++)
        write_material_line(file, &list->items[i], coverage);
    oracle_run_t run;
    long elapsed;
    bool clean = oracle_check(&chessops_oracle, file, path, list->count, &run, &elapsed);
    fprintf(stderr,
            "\n  chessops %s: %d positions, %d side verdicts (insufficient for white %d, for black %d, "
            "for both %d); %d mismatches, %ld ms\n",
            what, coverage->positions, 2 * coverage->positions, coverage->insufficient[WHITE],
            coverage->insufficient[BLACK], coverage->both, run.mismatches, elapsed);
    oracle_finish(clean, path, list->count, &run);
}

static void test_insufficient_material_per_side_matches_chessops_on_random_positions(void)
{
    position_list_t positions = { 0 };
    CU_ASSERT_FATAL(collect_random_positions(&positions));
    CU_ASSERT_FATAL(collect_sparse_positions(&positions, SPARSE_POSITION_TARGET));
    CU_ASSERT(positions.count >= 2000);
    material_coverage_t coverage = { 0 };
    assert_chessops_agrees("random games and random few-piece positions", &positions, &coverage);
    /* Both verdicts must be well represented, for each side. */
    for (int color = 0; color < COLOR_COUNT; color++) {
        CU_ASSERT(coverage.insufficient[color] >= 200);
        CU_ASSERT(coverage.positions - coverage.insufficient[color] >= 200);
    }
    position_list_free(&positions);
}

static void test_insufficient_material_per_side_matches_chessops_on_hand_picked_positions(void)
{
    position_list_t positions = { 0 };
    CU_ASSERT_FATAL(collect_material_positions(&positions));
    material_coverage_t coverage = { 0 };
    assert_chessops_agrees("hand-picked material and their children", &positions, &coverage);
    CU_ASSERT(coverage.insufficient[WHITE] > 0);
    CU_ASSERT(coverage.insufficient[BLACK] > 0);
    CU_ASSERT(coverage.both > 0);
    position_list_free(&positions);
}

/* The chessops oracle must catch errors: a verdict flipped on each side of
 * one position and on one side of another give exit status 1, 3 mismatches. */
static void test_chessops_oracle_reports_planted_faults(void)
{
    if (!oracle_installed(&chessops_oracle))
        CU_FAIL_FATAL("chessops oracle not installed (see the message above; CI runs npm ci --prefix tests/oracle)");
    char path[1024];
    FILE *file = create_input_file(path, sizeof path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    fprintf(file, "8/8/4k3/8/8/3KN3/8/8 w - - 0 1\tsufficient\tsufficient\n");       /* both wrong */
    fprintf(file, "8/8/4k3/8/8/3KN3/8/r7 w - - 0 1\tinsufficient\tsufficient\n");    /* white wrong */
    fprintf(file, "8/8/4k3/8/8/3KB3/8/q7 w - - 0 1\tinsufficient\tsufficient\n");    /* right */
    CU_ASSERT(fclose(file) == 0);
    oracle_run_t run;
    CU_ASSERT(oracle_run(&chessops_oracle, path, &run));
    CU_ASSERT_EQUAL(run.exit_status, 1);
    CU_ASSERT_EQUAL(run.positions, 3);
    CU_ASSERT_EQUAL(run.mismatches, 3);
    if (run.exit_status != 1 || run.positions != 3 || run.mismatches != 3)
        print_oracle_output(&run);
    free(run.output);
    unlink(path);
}

/* ---- suite ---- */

int test_oracle_register(void)
{
    CU_pSuite suite = CU_add_suite("oracle", NULL, NULL);
    if (!suite)
        return CU_get_error();
    if (!CU_add_test(suite, "test_every_san_and_its_lenient_forms_parse_back_to_the_move",
                     test_every_san_and_its_lenient_forms_parse_back_to_the_move)
        || !CU_add_test(suite, "test_san_ambiguous_move_is_rejected_naming_every_candidate",
                        test_san_ambiguous_move_is_rejected_naming_every_candidate)
        || !CU_add_test(suite, "test_san_promotion_without_piece_is_rejected",
                        test_san_promotion_without_piece_is_rejected)
        || !CU_add_test(suite, "test_chessjs_oracle_reports_planted_faults", test_chessjs_oracle_reports_planted_faults)
        || !CU_add_test(suite, "test_san_fen_and_status_match_chessjs_on_random_games",
                        test_san_fen_and_status_match_chessjs_on_random_games)
        || !CU_add_test(suite, "test_san_fen_and_status_match_chessjs_on_hand_picked_positions",
                        test_san_fen_and_status_match_chessjs_on_hand_picked_positions)
        || !CU_add_test(suite, "test_chessops_oracle_reports_planted_faults",
                        test_chessops_oracle_reports_planted_faults)
        || !CU_add_test(suite, "test_insufficient_material_per_side_matches_chessops_on_random_positions",
                        test_insufficient_material_per_side_matches_chessops_on_random_positions)
        || !CU_add_test(suite, "test_insufficient_material_per_side_matches_chessops_on_hand_picked_positions",
                        test_insufficient_material_per_side_matches_chessops_on_hand_picked_positions))
        return CU_get_error();
    return CUE_SUCCESS;
}
