/* Differential test of legal move generation against Stockfish 15.1. One
 * engine process (/usr/games/stockfish, or $CHESSD_STOCKFISH) serves the whole
 * suite; for every sampled position our movegen_legal() list, written with
 * uci_format(), must equal the set of moves Stockfish's `go perft 1` prints.
 * Positions come from seeded random games (standard and Chess960) and from the
 * perft EPD files. A missing or hung engine fails the suite: CI installs it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/epd.h"
#include "../support/random_game.h"
#include "../support/tests.h"

enum {
    ENGINE_REPLY_TIMEOUT_MS = 10000, /* per awaited reply line; a hung engine fails the test */
    ENGINE_QUIT_WAIT_MS = 1000,      /* grace period after `quit` before SIGKILL */
    ENGINE_LINE_MAX = 512,
    GAME_PLY_MAX = 150,
    RANDOM_POSITION_TARGET = 10000,  /* keep playing games until this many positions */
    CHESS960_START_MAX = 1024,
    MISMATCH_REPORT_MAX = 20,        /* mismatches printed in full; the rest are counted */
};

static const char *const default_stockfish_path = "/usr/games/stockfish";
static const uint64_t random_games_seed = 0x9e3779b97f4a7c15u;

/* The engine child process and a line buffer over its stdout. */
typedef struct {
    pid_t pid;            /* -1 when not running */
    int to_engine;        /* write end of the engine's stdin */
    int from_engine;      /* read end of the engine's stdout */
    int chess960;         /* last UCI_Chess960 value sent, -1 before the first */
    size_t buffered;
    char buffer[8192];
    char error[512];      /* why the engine is not usable; empty while it is */
} engine_t;

static engine_t engine = { .pid = -1, .to_engine = -1, .from_engine = -1, .chess960 = -1 };
static struct sigaction saved_sigpipe_action;

/* Moves in UCI text, sortable and comparable with Stockfish's. */
typedef struct {
    int count;
    char moves[MOVE_LIST_MAX][UCI_BUFFER_SIZE];
} uci_list_t;

/* What the compared positions covered, and how many disagreed. */
typedef struct {
    int positions;
    int with_en_passant;  /* pos->en_passant != SQ_NONE */
    int with_castling;    /* a castling move is legal */
    int with_promotion;   /* a promotion is legal */
    int chess960;
    int mismatches;
} coverage_t;

/* ---- engine process ---- */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Ends the engine: `quit`, then SIGKILL if it has not exited in time; reaps it. */
static void engine_stop(void)
{
    if (engine.to_engine >= 0) {
        static const char quit[] = "quit\n";
        ssize_t ignored = write(engine.to_engine, quit, sizeof quit - 1);
        (void)ignored;
    }
    close_fd(&engine.to_engine);
    close_fd(&engine.from_engine);
    if (engine.pid > 0) {
        long deadline = tests_monotonic_ms() + ENGINE_QUIT_WAIT_MS;
        pid_t reaped = 0;
        while ((reaped = waitpid(engine.pid, NULL, WNOHANG)) == 0 && tests_monotonic_ms() < deadline)
            nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
        if (reaped == 0) {
            kill(engine.pid, SIGKILL);
            waitpid(engine.pid, NULL, 0);
        }
    }
    engine.pid = -1;
    engine.buffered = 0;
    engine.chess960 = -1;
}

/* Records why the engine is unusable, prints it and stops the engine. */
static void engine_fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(engine.error, sizeof engine.error, format, args);
    va_end(args);
    fprintf(stderr, "\nstockfish: %s\n", engine.error);
    engine_stop();
}

static bool engine_send(const char *format, ...)
{
    char line[ENGINE_LINE_MAX];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (length < 0 || (size_t)length >= sizeof line) {
        engine_fail("command too long: %s", line);
        return false;
    }
    for (int sent = 0; sent < length;) {
        ssize_t n = write(engine.to_engine, line + sent, (size_t)(length - sent));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            engine_fail("write failed: %s", strerror(errno));
            return false;
        }
        sent += (int)n;
    }
    return true;
}

/* Reads one line (without its newline, truncated to size) within the reply
 * timeout. False, with the engine stopped, on timeout, EOF or error. */
static bool engine_read_line(char *line, size_t size)
{
    long deadline = tests_monotonic_ms() + ENGINE_REPLY_TIMEOUT_MS;
    for (;;) {
        char *newline = memchr(engine.buffer, '\n', engine.buffered);
        if (newline) {
            size_t length = (size_t)(newline - engine.buffer);
            size_t kept = length < size - 1 ? length : size - 1;
            memcpy(line, engine.buffer, kept);
            line[kept] = '\0';
            if (kept > 0 && line[kept - 1] == '\r')
                line[kept - 1] = '\0';
            engine.buffered -= length + 1;
            memmove(engine.buffer, newline + 1, engine.buffered);
            return true;
        }
        if (engine.buffered == sizeof engine.buffer) {
            engine_fail("reply line longer than %zu bytes", sizeof engine.buffer);
            return false;
        }
        long remaining = deadline - tests_monotonic_ms();
        if (remaining <= 0) {
            engine_fail("no reply within %d ms (engine hung?)", ENGINE_REPLY_TIMEOUT_MS);
            return false;
        }
        struct pollfd ready = { .fd = engine.from_engine, .events = POLLIN };
        int polled = poll(&ready, 1, (int)remaining);
        if (polled < 0 && errno != EINTR) {
            engine_fail("poll failed: %s", strerror(errno));
            return false;
        }
        if (polled <= 0)
            continue;
        ssize_t n = read(engine.from_engine, engine.buffer + engine.buffered,
                         sizeof engine.buffer - engine.buffered);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            engine_fail(n == 0 ? "engine exited (EOF on its output)" : "read failed: %s",
                        strerror(errno));
            return false;
        }
        engine.buffered += (size_t)n;
    }
}

static bool set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    return flags >= 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

/* Spawns the engine with its stdin and stdout on pipes (no shell), sends `uci`
 * and waits for `uciok`. On failure engine.error says why. */
static bool engine_start(const char *path)
{
    if (access(path, X_OK) != 0) {
        engine_fail("%s is not an executable (%s); install the 'stockfish' package "
                    "(make deps) or set CHESSD_STOCKFISH", path, strerror(errno));
        return false;
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0) {
        engine_fail("pipe failed: %s", strerror(errno));
        return false;
    }
    if (pipe(from_child) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        engine_fail("pipe failed: %s", strerror(errno));
        return false;
    }
    /* Close-on-exec everywhere: the child keeps only the ends dup2'd onto 0 and 1. */
    for (int i = 0; i < 2; i++) {
        set_cloexec(to_child[i]);
        set_cloexec(from_child[i]);
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(to_child[0], STDIN_FILENO) < 0 || dup2(from_child[1], STDOUT_FILENO) < 0)
            _exit(127);
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    engine.to_engine = to_child[1];
    engine.from_engine = from_child[0];
    if (pid < 0) {
        engine_fail("fork failed: %s", strerror(errno));
        return false;
    }
    engine.pid = pid;
    engine.error[0] = '\0';
    if (!engine_send("uci\n"))
        return false;
    char line[ENGINE_LINE_MAX];
    while (engine_read_line(line, sizeof line)) {
        if (!strcmp(line, "uciok"))
            return true;
    }
    return false;
}

static bool engine_running(void)
{
    return engine.pid > 0;
}

/* Stockfish's legal moves in pos, read from `go perft 1`. False (engine
 * stopped, engine.error set) when the engine does not answer properly. */
static bool engine_legal_moves(const position_t *pos, uci_list_t *out)
{
    char fen[FEN_BUFFER_SIZE];
    fen_format(pos, fen, sizeof fen);
    if (engine.chess960 != pos->chess960) {
        if (!engine_send("setoption name UCI_Chess960 value %s\n", pos->chess960 ? "true" : "false"))
            return false;
        engine.chess960 = pos->chess960;
    }
    if (!engine_send("position fen %s\ngo perft 1\n", fen))
        return false;
    out->count = 0;
    char line[ENGINE_LINE_MAX];
    while (engine_read_line(line, sizeof line)) {
        unsigned long long nodes;
        if (sscanf(line, "Nodes searched: %llu", &nodes) == 1) {
            if (nodes != (unsigned long long)out->count) {
                engine_fail("listed %d moves but counted %llu for %s", out->count, nodes, fen);
                return false;
            }
            return true;
        }
        const char *colon = strchr(line, ':');
        size_t length = colon ? (size_t)(colon - line) : 0;
        if (!colon || length < 4 || length > 5 || strcmp(colon, ": 1") != 0)
            continue; /* blank lines and anything that is not a perft move line */
        if (out->count == MOVE_LIST_MAX) {
            engine_fail("more than %d moves for %s", MOVE_LIST_MAX, fen);
            return false;
        }
        memcpy(out->moves[out->count], line, length);
        out->moves[out->count][length] = '\0';
        out->count++;
    }
    return false;
}

/* ---- comparison ---- */

static int compare_uci_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void uci_list_from_moves(const position_t *pos, const move_list_t *list, uci_list_t *out)
{
    out->count = list->count;
    for (int i = 0; i < list->count; i++)
        uci_format(pos, list->moves[i], out->moves[i]);
}

static void print_only_in(const char *label, const uci_list_t *list, const uci_list_t *other)
{
    fprintf(stderr, "  only %s:", label);
    for (int i = 0; i < list->count; i++) {
        if (!bsearch(list->moves[i], other->moves, (size_t)other->count, UCI_BUFFER_SIZE,
                     compare_uci_text))
            fprintf(stderr, " %s", list->moves[i]);
    }
    fprintf(stderr, "\n");
}

/* Whether the two sorted lists hold the same moves (duplicates count). */
static bool uci_lists_equal(const uci_list_t *a, const uci_list_t *b)
{
    if (a->count != b->count)
        return false;
    for (int i = 0; i < a->count; i++) {
        if (strcmp(a->moves[i], b->moves[i]) != 0)
            return false;
    }
    return true;
}

/* Compares our legal moves in pos (already generated into list) with
 * Stockfish's, records coverage, and reports a mismatch on stderr. Returns
 * false only when the engine stopped answering. */
static bool check_position(const position_t *pos, const move_list_t *list, coverage_t *coverage)
{
    uci_list_t ours, theirs;
    if (!engine_legal_moves(pos, &theirs))
        return false;
    uci_list_from_moves(pos, list, &ours);
    qsort(ours.moves, (size_t)ours.count, UCI_BUFFER_SIZE, compare_uci_text);
    qsort(theirs.moves, (size_t)theirs.count, UCI_BUFFER_SIZE, compare_uci_text);

    coverage->positions++;
    coverage->chess960 += pos->chess960 != 0;
    coverage->with_en_passant += pos->en_passant != SQ_NONE;
    bool castling = false, promotion = false;
    for (int i = 0; i < list->count; i++) {
        castling |= move_kind(list->moves[i]) == MOVE_CASTLING;
        promotion |= move_kind(list->moves[i]) == MOVE_PROMOTION;
    }
    coverage->with_castling += castling;
    coverage->with_promotion += promotion;

    bool equal = uci_lists_equal(&ours, &theirs);
    CU_ASSERT(equal);
    if (!equal && coverage->mismatches++ < MISMATCH_REPORT_MAX) {
        char fen[FEN_BUFFER_SIZE];
        fprintf(stderr, "\nmove lists differ (%s, %d vs %d moves): %s\n",
                pos->chess960 ? "Chess960" : "standard", ours.count, theirs.count,
                fen_format(pos, fen, sizeof fen));
        print_only_in("chessd", &ours, &theirs);
        print_only_in("stockfish", &theirs, &ours);
    }
    return true;
}

static void report_coverage(const char *what, const coverage_t *coverage, long elapsed_ms)
{
    fprintf(stderr,
            "\n  stockfish %s: %d positions (%d Chess960), %d with en passant, %d with castling, "
            "%d with promotion, %d mismatches, %ld ms\n",
            what, coverage->positions, coverage->chess960, coverage->with_en_passant,
            coverage->with_castling, coverage->with_promotion, coverage->mismatches, elapsed_ms);
}

static bool require_engine(void)
{
    if (engine_running())
        return true;
    fprintf(stderr, "\nstockfish unavailable: %s\n", engine.error);
    return false;
}

/* ---- random games ---- */

/* Take a promotion or en passant capture when offered most of the time, make
 * a double step that allows en passant often, castle now and then (castling
 * early would use the rights up), and otherwise lean towards captures
 * (endings) and pawn moves (promotions). */
static const random_game_preference_t preferences[] = {
    { RANDOM_GAME_PICK_PROMOTION, 70 }, { RANDOM_GAME_PICK_EN_PASSANT, 60 },
    { RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN, 60 }, { RANDOM_GAME_PICK_CASTLING, 10 },
    { RANDOM_GAME_PICK_CAPTURE, 30 }, { RANDOM_GAME_PICK_PAWN, 40 },
};
static const random_game_style_t random_game_style = {
    preferences, sizeof preferences / sizeof preferences[0], GAME_PLY_MAX,
};

/* What compare_position() needs across a game. */
typedef struct {
    coverage_t *coverage;
    bool engine_ok; /* false once the engine stopped answering */
} game_check_t;

/* random_game_visit_t: compares one position; the game ends with the engine. */
static bool compare_position(const position_t *pos, const move_list_t *legal, void *context)
{
    game_check_t *check = context;
    check->engine_ok = check_position(pos, legal, check->coverage);
    return check->engine_ok;
}

/* ---- tests ---- */

static void test_legal_moves_match_stockfish_on_random_games(void)
{
    if (!require_engine())
        CU_FAIL_FATAL("stockfish must run for this suite (see the message above)");
    position_t *chess960_starts = malloc(CHESS960_START_MAX * sizeof *chess960_starts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(chess960_starts);
    int rejected;
    int chess960_count = epd_read_positions("chess960.epd", FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_CHESS960,
                                            chess960_starts, CHESS960_START_MAX, &rejected);
    CU_ASSERT(chess960_count > 0);
    CU_ASSERT_EQUAL(rejected, 0);
    position_t standard_start;
    bool standard_ok = tests_parse_fen(FEN_START, &standard_start);

    long started = tests_monotonic_ms();
    uint64_t rng = random_games_seed;
    coverage_t coverage = { 0 };
    game_check_t check = { .coverage = &coverage, .engine_ok = standard_ok && chess960_count > 0 };
    /* Alternate the standard start with a random Chess960 position. */
    for (int game = 0; check.engine_ok && coverage.positions < RANDOM_POSITION_TARGET; game++) {
        position_t start = game % 2 == 0 ? standard_start
                                         : chess960_starts[random_game_below(&rng, chess960_count)];
        random_game_play(start, &random_game_style, &rng, compare_position, &check);
    }
    report_coverage("random games", &coverage, tests_monotonic_ms() - started);
    free(chess960_starts);

    CU_ASSERT(check.engine_ok);
    CU_ASSERT(coverage.positions >= RANDOM_POSITION_TARGET);
    CU_ASSERT(coverage.chess960 > 0);
    CU_ASSERT(coverage.with_en_passant > 0);
    CU_ASSERT(coverage.with_castling > 0);
    CU_ASSERT(coverage.with_promotion > 0);
    CU_ASSERT_EQUAL(coverage.mismatches, 0);
}

/* Each position of tricky.epd and standard.epd, and every position one move
 * after it, so the hand-picked edge cases are also checked from the other side. */
static void test_legal_moves_match_stockfish_on_perft_positions(void)
{
    if (!require_engine())
        CU_FAIL_FATAL("stockfish must run for this suite (see the message above)");
    static const char *const files[] = { "tricky.epd", "standard.epd" };
    long started = tests_monotonic_ms();
    coverage_t coverage = { 0 };
    bool engine_ok = true;
    for (size_t f = 0; f < sizeof files / sizeof files[0] && engine_ok; f++) {
        position_t positions[64];
        int rejected;
        int count = epd_read_positions(files[f], FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960, positions, 64,
                                       &rejected);
        CU_ASSERT_EQUAL(rejected, 0);
        CU_ASSERT(count > 0);
        for (int i = 0; i < count && engine_ok; i++) {
            move_list_t list;
            movegen_legal(&positions[i], &list);
            engine_ok = check_position(&positions[i], &list, &coverage);
            for (int m = 0; m < list.count && engine_ok; m++) {
                position_t child = positions[i];
                position_undo_t undo;
                move_list_t child_list;
                position_make(&child, list.moves[m], &undo);
                movegen_legal(&child, &child_list);
                engine_ok = check_position(&child, &child_list, &coverage);
            }
        }
    }
    report_coverage("perft positions", &coverage, tests_monotonic_ms() - started);
    CU_ASSERT(engine_ok);
    CU_ASSERT(coverage.chess960 > 0);
    CU_ASSERT(coverage.with_en_passant > 0);
    CU_ASSERT_EQUAL(coverage.mismatches, 0);
}

/* ---- suite ---- */

/* Starts the engine; never fails the suite setup itself, so that each test
 * fails with the reason instead (a missing engine must not read as a skip). */
static int suite_init(void)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved_sigpipe_action); /* a dead engine is an error value */
    const char *path = getenv("CHESSD_STOCKFISH");
    engine_start(path && *path ? path : default_stockfish_path);
    return 0;
}

static int suite_cleanup(void)
{
    engine_stop();
    sigaction(SIGPIPE, &saved_sigpipe_action, NULL);
    return 0;
}

int test_movegen_register(void)
{
    CU_pSuite suite = CU_add_suite("movegen", suite_init, suite_cleanup);
    if (!suite
        || !CU_add_test(suite, "test_legal_moves_match_stockfish_on_random_games",
                        test_legal_moves_match_stockfish_on_random_games)
        || !CU_add_test(suite, "test_legal_moves_match_stockfish_on_perft_positions",
                        test_legal_moves_match_stockfish_on_perft_positions))
        return CU_get_error();
    return CUE_SUCCESS;
}
