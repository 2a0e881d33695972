/* Tests for api/engine/uci.c, the UCI driver: the handshake, mates found,
 * MultiPV, Chess960 castling both ways, the deadline's "stop", killed and
 * stopped engines, the strength options. The oracles are the real Stockfish
 * (/usr/games/stockfish, or $CHESSD_STOCKFISH; the suite fails when it is
 * missing) and fake engines, shell scripts written here that lie, overrun a
 * line, exit, or record what they are sent. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../api/engine/uci.h"
#include "../../../rules/base/clock.h"
#include "../../support/tests.h"

static const char *const default_stockfish_path = "/usr/games/stockfish";
static const char *stockfish_path;
static engine_t *engine;
static char fake_dir[64];
/* The shared engine's wait for bestmove after "stop": generous, so a busy
 * machine's scheduling delay on the niced engine is not a failure. */
enum { STOP_GRACE_MS = 500 };

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    stockfish_path = getenv("CHESSD_STOCKFISH");
    if (!stockfish_path || !*stockfish_path)
        stockfish_path = default_stockfish_path;
    if (access(stockfish_path, X_OK) != 0) {
        fprintf(stderr, "\nengine suite: %s is not an executable (%s); install the 'stockfish' package "
                        "(make deps) or set CHESSD_STOCKFISH\n", stockfish_path, strerror(errno));
        return 1;
    }
    char err[256];
    engine_status_t status;
    engine_options_t options = {.path = stockfish_path, .stop_grace_ms = STOP_GRACE_MS};
    engine = engine_start(&options, &status, err, sizeof err);
    if (!engine) {
        fprintf(stderr, "\nengine suite: cannot start %s: %s: %s\n", stockfish_path, engine_status_name(status), err);
        return 1;
    }
    return tests_temp_dir(fake_dir, "engine") ? 0 : 1;
}

static int suite_cleanup(void)
{
    engine_free(engine);
    engine = NULL;
    tests_remove_dir(fake_dir);
    return 0;
}

/* The shared engine, restarted when an earlier test left it dead. */
static engine_t *live_engine(void)
{
    char err[256];
    if (!engine_alive(engine)) {
        engine_status_t s = engine_restart(engine, err, sizeof err);
        if (s != ENGINE_OK)
            fprintf(stderr, "\nrestart: %s: %s\n", engine_status_name(s), err);
        CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
    }
    return engine;
}

static engine_limits_t depth_limits(int depth, int multipv)
{
    return (engine_limits_t){.depth = depth, .multipv = multipv, .deadline_ms = clock_now_ms() + 10000};
}

/* Searches fen (standard or Chess960, as its castling says) after a new game. */
static engine_status_t search_fen(const char *fen, const engine_limits_t *limits, engine_result_t *out)
{
    position_t pos;
    if (!tests_parse_fen(fen, &pos))
        return ENGINE_EINVALID;
    engine_t *e = live_engine();
    char err[256];
    engine_status_t s = engine_new_game(e, pos.chess960, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(s, ENGINE_OK);
    s = engine_search(e, &pos, NULL, 0, limits, out, err, sizeof err);
    if (s != ENGINE_OK)
        fprintf(stderr, "\nsearch of %s: %s: %s\n", fen, engine_status_name(s), err);
    return s;
}

/* Moves in UCI text played from pos into moves[]; CU-asserts each is legal. */
static int moves_from_uci(const position_t *start, const char *text, move_t *moves, int max)
{
    position_t pos = *start;
    int count = 0;
    const char *p = text;
    while (*p && count < max) {
        size_t length = strcspn(p, " ");
        uci_text_t uci;
        CU_ASSERT_TRUE_FATAL(uci_read(p, length, &uci));
        move_t move = uci_to_move(&pos, &uci);
        CU_ASSERT_TRUE_FATAL(movegen_is_legal(&pos, move));
        moves[count++] = move;
        position_undo_t undo;
        position_make(&pos, move, &undo);
        p += length;
        while (*p == ' ')
            p++;
    }
    return count;
}

static void test_the_handshake_reads_the_engines_name(void)
{
    engine_t *e = live_engine();
    CU_ASSERT_EQUAL(strncmp(engine_name(e), "Stockfish", 9), 0);
    CU_ASSERT_TRUE(engine_pid(e) > 0);
}

/* Its own process group, nice +10 (capped at 19), and only 0, 1, 2 open:
 * the pipes, and /dev/null for stderr. */
static void test_the_engine_runs_in_its_own_group_niced_with_three_descriptors(void)
{
    engine_t *e = live_engine();
    pid_t pid = engine_pid(e);
    CU_ASSERT_EQUAL(getpgid(pid), pid);
    errno = 0;
    int own = getpriority(PRIO_PROCESS, 0);
    int child = getpriority(PRIO_PROCESS, (id_t)pid);
    CU_ASSERT_EQUAL(errno, 0);
    CU_ASSERT_EQUAL(child, own + 10 > 19 ? 19 : own + 10);
    char dir[64], link[64], target[128];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(d));) {
        if (entry->d_name[0] == '.')
            continue;
        count++;
        int fd = atoi(entry->d_name);
        if (fd > 2)
            fprintf(stderr, "\nthe engine holds descriptor %d\n", fd);
        CU_ASSERT_TRUE(fd <= 2);
    }
    closedir(d);
    CU_ASSERT_EQUAL(count, 3);
    snprintf(link, sizeof link, "/proc/%d/fd/2", (int)pid);
    ssize_t n = readlink(link, target, sizeof target - 1);
    CU_ASSERT_TRUE_FATAL(n > 0);
    target[n] = '\0';
    CU_ASSERT_STRING_EQUAL(target, "/dev/null");
}

static void test_a_mate_in_one_is_found_with_score_mate_1(void)
{
    engine_result_t r;
    engine_limits_t limits = depth_limits(8, 1);
    CU_ASSERT_EQUAL_FATAL(search_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", &limits, &r), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(r.bestmove_uci, "d1d8");
    CU_ASSERT_EQUAL_FATAL(r.line_count, 1);
    CU_ASSERT_TRUE(r.lines[0].is_mate);
    CU_ASSERT_EQUAL(r.lines[0].value, 1);
    CU_ASSERT_EQUAL(r.lines[0].bound, ENGINE_BOUND_EXACT);
    CU_ASSERT_EQUAL(r.lines[0].pv[0], r.bestmove);
    CU_ASSERT_TRUE(r.lines[0].has_wdl);
    CU_ASSERT_EQUAL(r.lines[0].wdl[0], 1000);
    CU_ASSERT_FALSE(r.stopped);
}

static void test_a_mate_in_two_is_found_with_score_mate_2(void)
{
    engine_result_t r;
    engine_limits_t limits = depth_limits(12, 1);
    CU_ASSERT_EQUAL_FATAL(
        search_fen("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", &limits, &r), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(r.bestmove_uci, "d5f6");
    CU_ASSERT_TRUE(r.lines[0].is_mate);
    CU_ASSERT_EQUAL(r.lines[0].value, 2);
    CU_ASSERT_EQUAL(r.lines[0].pv_count, 3); /* d5f6 g7f6 c4f7 */
    CU_ASSERT_STRING_EQUAL(r.ponder_uci, "g7f6");
    CU_ASSERT_EQUAL(r.illegal_pv_moves, 0);
}

static void test_a_depth_search_with_one_thread_is_deterministic(void)
{
    const char *fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    engine_result_t first, second;
    engine_limits_t limits = depth_limits(10, 1);
    CU_ASSERT_EQUAL_FATAL(search_fen(fen, &limits, &first), ENGINE_OK);
    limits = depth_limits(10, 1);
    CU_ASSERT_EQUAL_FATAL(search_fen(fen, &limits, &second), ENGINE_OK);
    CU_ASSERT_EQUAL(first.bestmove, second.bestmove);
    CU_ASSERT_EQUAL(first.lines[0].nodes, second.lines[0].nodes);
    CU_ASSERT_EQUAL(first.lines[0].value, second.lines[0].value);
    CU_ASSERT_EQUAL(first.lines[0].depth, 10);
    CU_ASSERT_TRUE(first.lines[0].nodes > 0);
}

static void test_multipv_three_gives_three_lines_best_first(void)
{
    engine_result_t r;
    engine_limits_t limits = depth_limits(10, 3);
    CU_ASSERT_EQUAL_FATAL(search_fen(FEN_START, &limits, &r), ENGINE_OK);
    CU_ASSERT_EQUAL_FATAL(r.line_count, 3);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(r.lines[i].multipv, i + 1);
        CU_ASSERT_FALSE(r.lines[i].is_mate);
        CU_ASSERT_TRUE(r.lines[i].pv_count > 0);
        if (i > 0)
            CU_ASSERT_TRUE(r.lines[i].value <= r.lines[i - 1].value);
    }
    CU_ASSERT_NOT_EQUAL(r.lines[0].pv[0], r.lines[1].pv[0]);
    CU_ASSERT_NOT_EQUAL(r.lines[1].pv[0], r.lines[2].pv[0]);
    CU_ASSERT_EQUAL(r.lines[0].pv[0], r.bestmove);
    /* and back to one line */
    limits = depth_limits(6, 1);
    CU_ASSERT_EQUAL_FATAL(search_fen(FEN_START, &limits, &r), ENGINE_OK);
    CU_ASSERT_EQUAL(r.line_count, 1);
}

/* Castling queen side (b1 takes a1, king to c1, rook to d1) mates: the only mate. */
static void test_a_chess960_castling_bestmove_is_read_as_king_takes_rook(void)
{
    engine_result_t r;
    engine_limits_t limits = depth_limits(6, 1);
    CU_ASSERT_EQUAL_FATAL(search_fen("2rkr3/2p1p3/8/8/8/8/8/RK6 w Q - 0 1", &limits, &r), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(r.bestmove_uci, "b1a1");
    CU_ASSERT_EQUAL(move_kind(r.bestmove), MOVE_CASTLING);
    CU_ASSERT_EQUAL(r.lines[0].pv[0], r.bestmove);
    CU_ASSERT_TRUE(r.lines[0].is_mate);
    CU_ASSERT_EQUAL(r.lines[0].value, 1);
}

static void test_chess960_moves_with_castling_written_by_chessd_are_accepted(void)
{
    position_t start;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("rk1nnqbr/pppppppp/8/8/8/8/PPPPPPPP/RK1NNQBR w AHah - 0 1", &start));
    CU_ASSERT_TRUE_FATAL(start.chess960);
    move_t moves[8];
    int count = moves_from_uci(&start, "d1e3 d8e6 b1a1 b8a8", moves, 8);
    CU_ASSERT_EQUAL_FATAL(count, 4);
    buf_t command;
    buf_init(&command);
    char err[256];
    CU_ASSERT_EQUAL(engine_format_position(&start, moves, count, &command, NULL, err, sizeof err), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(command.data, "position fen rk1nnqbr/pppppppp/8/8/8/8/PPPPPPPP/RK1NNQBR w KQkq - 0 1 "
                                         "moves d1e3 d8e6 b1a1 b8a8\n");
    buf_free(&command);
    engine_t *e = live_engine();
    CU_ASSERT_EQUAL_FATAL(engine_new_game(e, true, err, sizeof err), ENGINE_OK);
    engine_result_t r;
    engine_limits_t limits = depth_limits(8, 1);
    engine_status_t s = engine_search(e, &start, moves, count, &limits, &r, err, sizeof err);
    if (s != ENGINE_OK)
        fprintf(stderr, "\nchess960 search: %s: %s\n", engine_status_name(s), err);
    CU_ASSERT_EQUAL(s, ENGINE_OK);
    CU_ASSERT_NOT_EQUAL(r.bestmove, MOVE_NONE);
    CU_ASSERT_EQUAL(r.illegal_pv_moves, 0);
    CU_ASSERT_TRUE(r.lines[0].pv_count > 1);
}

static void test_the_deadline_sends_stop_and_the_bestmove_is_kept(void)
{
    engine_t *e = live_engine();
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    char err[256];
    CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
    long begin = tests_monotonic_ms();
    engine_limits_t limits = {.depth = 40, .deadline_ms = clock_now_ms() + 300};
    engine_result_t r;
    engine_status_t s = engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err);
    long elapsed = tests_monotonic_ms() - begin;
    if (s != ENGINE_OK)
        fprintf(stderr, "\nstopped search: %s: %s\n", engine_status_name(s), err);
    CU_ASSERT_EQUAL(s, ENGINE_OK);
    CU_ASSERT_TRUE(r.stopped);
    CU_ASSERT_TRUE(movegen_is_legal(&pos, r.bestmove));
    CU_ASSERT_TRUE(elapsed >= 290);
    CU_ASSERT_TRUE(elapsed < 300 + STOP_GRACE_MS + 2500); /* depth 40 unstopped runs for minutes; slack for a busy machine */
    CU_ASSERT_TRUE(engine_alive(e));
}

typedef struct {
    pid_t pid;
    int signal;
    int after_ms;
} signal_later_t;

static void *signal_later(void *arg)
{
    signal_later_t *job = arg;
    struct timespec pause = {job->after_ms / 1000, (job->after_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    kill(job->pid, job->signal);
    return NULL;
}

/* Starts a long search and sends sig to the engine after_ms into it. */
static engine_status_t search_with_signal(int sig, int after_ms, uint64_t deadline_in_ms, long *elapsed,
                                          pid_t *pid)
{
    engine_t *e = live_engine();
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    char err[256];
    CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
    signal_later_t job = {.pid = engine_pid(e), .signal = sig, .after_ms = after_ms};
    *pid = job.pid;
    pthread_t thread;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, signal_later, &job), 0);
    long begin = tests_monotonic_ms();
    engine_limits_t limits = {.depth = 40, .deadline_ms = clock_now_ms() + deadline_in_ms};
    engine_result_t r;
    engine_status_t s = engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err);
    *elapsed = tests_monotonic_ms() - begin;
    pthread_join(thread, NULL);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
    return s;
}

static void test_a_killed_engine_is_crashed_and_restarts(void)
{
    long elapsed;
    pid_t pid;
    engine_status_t s = search_with_signal(SIGKILL, 100, 5000, &elapsed, &pid);
    CU_ASSERT_EQUAL(s, ENGINE_ECRASHED);
    CU_ASSERT_TRUE(elapsed < 4000); /* found at once, well before the 5 s deadline (slack for a busy machine) */
    CU_ASSERT_FALSE(engine_alive(engine));
    CU_ASSERT_EQUAL(kill(pid, 0), -1);
    /* a dead engine refuses to search, then restarts and searches */
    engine_result_t r;
    engine_limits_t limits = depth_limits(6, 1);
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    char err[256];
    CU_ASSERT_EQUAL(engine_search(engine, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_ECRASHED);
    CU_ASSERT_EQUAL(search_fen(FEN_START, &limits, &r), ENGINE_OK);
    CU_ASSERT_NOT_EQUAL(engine_pid(engine), pid);
}

static void test_a_stopped_engine_times_out_and_its_group_is_killed(void)
{
    long elapsed;
    pid_t pid;
    engine_status_t s = search_with_signal(SIGSTOP, 100, 300, &elapsed, &pid);
    CU_ASSERT_EQUAL(s, ENGINE_ETIMEOUT);
    CU_ASSERT_TRUE(elapsed >= 300 + STOP_GRACE_MS - 10);
    CU_ASSERT_TRUE(elapsed < 300 + STOP_GRACE_MS + 3000); /* a stopped engine never answers: the deadline and the grace, then the kill (slack for a busy machine) */
    CU_ASSERT_FALSE(engine_alive(engine));
    errno = 0;
    CU_ASSERT_EQUAL(kill(pid, 0), -1);
    CU_ASSERT_EQUAL(errno, ESRCH);
    CU_ASSERT_EQUAL(kill(-pid, 0), -1);
    engine_result_t r;
    engine_limits_t limits = depth_limits(6, 1);
    CU_ASSERT_EQUAL(search_fen(FEN_START, &limits, &r), ENGINE_OK);
}

/* Writes an engine that answers the handshake and, to "go", runs go_action
 * (shell); "uci" runs uci_action first. Returns its path in a static buffer. */
static const char *fake_engine(const char *name, const char *uci_action, const char *go_action)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fake_dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#!/bin/sh\n"
               "while read -r line; do\n"
               "  case \"$line\" in\n"
               "    uci) %s; echo 'id name Fake'; echo uciok ;;\n"
               "    isready) echo readyok ;;\n"
               "    go*) %s ;;\n"
               "    quit) exit 0 ;;\n"
               "  esac\n"
               "done\n",
            uci_action, go_action);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
    return path;
}

/* Starts the fake engine and searches the start position with it. */
static engine_status_t fake_search(const char *path, engine_result_t *r)
{
    char err[256];
    engine_status_t s;
    engine_t *fake = engine_start(&(engine_options_t){.path = path, .handshake_timeout_ms = 2000}, &s, err, sizeof err);
    if (!fake) {
        fprintf(stderr, "\nfake engine %s: %s: %s\n", path, engine_status_name(s), err);
        CU_FAIL_FATAL("the fake engine did not start");
    }
    CU_ASSERT_STRING_EQUAL(engine_name(fake), "Fake");
    position_t pos;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    engine_limits_t limits = depth_limits(5, 1);
    limits.deadline_ms = clock_now_ms() + 2000;
    s = engine_search(fake, &pos, NULL, 0, &limits, r, err, sizeof err);
    if (s != ENGINE_OK)
        CU_ASSERT_FALSE(engine_alive(fake));
    engine_free(fake);
    return s;
}

static void test_an_illegal_bestmove_is_garbage_never_a_move(void)
{
    engine_result_t r;
    CU_ASSERT_EQUAL(fake_search(fake_engine("illegal", ":", "echo 'bestmove e2e5'"), &r), ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
    CU_ASSERT_EQUAL(fake_search(fake_engine("nonsense", ":", "echo 'bestmove zz'"), &r), ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
    CU_ASSERT_EQUAL(fake_search(fake_engine("empty", ":", "echo 'bestmove'"), &r), ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
}

static void test_bestmove_none_with_legal_moves_is_garbage(void)
{
    engine_result_t r;
    CU_ASSERT_EQUAL(fake_search(fake_engine("none", ":", "echo 'bestmove (none)'"), &r), ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
}

static void test_an_overlong_line_is_garbage(void)
{
    engine_result_t r;
    CU_ASSERT_EQUAL(fake_search(fake_engine("long", ":",
                                            "printf 'info string '; head -c 10240 /dev/zero | tr '\\0' x; "
                                            "echo; echo 'bestmove e2e4'"),
                                &r),
                    ENGINE_EGARBAGE);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
}

static void test_an_illegal_pv_move_cuts_the_line_and_is_counted(void)
{
    engine_result_t r;
    CU_ASSERT_EQUAL(fake_search(fake_engine("pv", ":",
                                            "echo 'info depth 3 multipv 1 score cp 20 pv e2e4 e7e5 e4e5 g1f3'; "
                                            "echo 'bestmove e2e4 ponder e2e4'"),
                                &r),
                    ENGINE_OK);
    CU_ASSERT_EQUAL(r.line_count, 1);
    CU_ASSERT_EQUAL(r.lines[0].pv_count, 2);
    CU_ASSERT_EQUAL(r.illegal_pv_moves, 1);
    CU_ASSERT_STRING_EQUAL(r.bestmove_uci, "e2e4");
    CU_ASSERT_EQUAL(r.ponder, MOVE_NONE); /* e2e4 again is not legal for black */
}

static void test_an_engine_that_exits_in_the_handshake_does_not_start(void)
{
    char err[256];
    engine_status_t s;
    const char *path = fake_engine("exits", "exit 0", ":");
    engine_t *fake = engine_start(&(engine_options_t){.path = path}, &s, err, sizeof err);
    CU_ASSERT_PTR_NULL(fake);
    CU_ASSERT_EQUAL(s, ENGINE_ESTART);
    engine_free(fake);
    /* one that never answers: the handshake deadline */
    path = fake_engine("silent", "sleep 5", ":");
    long begin = tests_monotonic_ms();
    fake = engine_start(&(engine_options_t){.path = path, .handshake_timeout_ms = 200}, &s, err, sizeof err);
    CU_ASSERT_PTR_NULL(fake);
    CU_ASSERT_EQUAL(s, ENGINE_ESTART);
    CU_ASSERT_TRUE(tests_monotonic_ms() - begin < 4000); /* the 200 ms deadline, not the 5 s the script sleeps */
    engine_free(fake);
    /* and no executable at all */
    fake = engine_start(&(engine_options_t){.path = "/nonexistent/stockfish"}, &s, err, sizeof err);
    CU_ASSERT_PTR_NULL(fake);
    CU_ASSERT_EQUAL(s, ENGINE_ESTART);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
}

static void test_the_position_command_is_built_from_canonical_values(void)
{
    position_t start;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &start));
    move_t moves[2];
    CU_ASSERT_EQUAL_FATAL(moves_from_uci(&start, "e2e4 e7e5", moves, 2), 2);
    buf_t command;
    buf_init(&command);
    char err[256];
    position_t reached;
    CU_ASSERT_EQUAL(engine_format_position(&start, moves, 2, &command, &reached, err, sizeof err), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(command.data,
                           "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 moves e2e4 e7e5\n");
    CU_ASSERT_TRUE(engine_command_ok(command.data, command.length));
    CU_ASSERT_EQUAL(reached.side_to_move, WHITE);
    buf_free(&command);
    /* without moves, no "moves" */
    buf_init(&command);
    CU_ASSERT_EQUAL(engine_format_position(&start, NULL, 0, &command, NULL, err, sizeof err), ENGINE_OK);
    CU_ASSERT_STRING_EQUAL(command.data, "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n");
    buf_free(&command);
    /* a move that is not legal in turn is refused, and nothing is searched */
    move_t twice[2] = {moves[0], moves[0]};
    buf_init(&command);
    CU_ASSERT_EQUAL(engine_format_position(&start, twice, 2, &command, NULL, err, sizeof err), ENGINE_EINVALID);
    buf_free(&command);
    engine_result_t r;
    engine_limits_t limits = depth_limits(4, 1);
    CU_ASSERT_EQUAL(engine_search(live_engine(), &start, twice, 2, &limits, &r, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_TRUE(engine_alive(engine));
}

static void test_option_values_and_commands_must_be_one_printable_line(void)
{
    CU_ASSERT_TRUE(engine_option_ok("16", 2));
    CU_ASSERT_TRUE(engine_option_ok("true", 4));
    CU_ASSERT_FALSE(engine_option_ok("1\nquit", 6));
    CU_ASSERT_FALSE(engine_option_ok("go infinite\n", 12));
    CU_ASSERT_FALSE(engine_option_ok("1\0go", 4));
    CU_ASSERT_FALSE(engine_option_ok("1\rgo", 4));
    CU_ASSERT_FALSE(engine_option_ok("caf\xc3\xa9", 5));
    CU_ASSERT_FALSE(engine_option_ok("", 0));
    CU_ASSERT_FALSE(engine_option_ok(NULL, 0));
    CU_ASSERT_TRUE(engine_command_ok("isready\n", 8));
    CU_ASSERT_FALSE(engine_command_ok("isready", 7));
    CU_ASSERT_FALSE(engine_command_ok("stop\nquit\n", 10));
    CU_ASSERT_FALSE(engine_command_ok("\n", 1));
    CU_ASSERT_FALSE(engine_command_ok("go\0quit\n", 8));
}

static void test_bad_limits_and_finished_positions_are_not_searched(void)
{
    engine_t *e = live_engine();
    pid_t pid = engine_pid(e);
    position_t pos;
    char err[256];
    engine_result_t r;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    engine_limits_t none = {.deadline_ms = clock_now_ms() + 1000};
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &none, &r, err, sizeof err), ENGINE_EINVALID);
    engine_limits_t no_deadline = {.depth = 5};
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &no_deadline, &r, err, sizeof err), ENGINE_EINVALID);
    engine_limits_t too_many = depth_limits(5, ENGINE_MULTIPV_MAX + 1);
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &too_many, &r, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, NULL, &r, err, sizeof err), ENGINE_EINVALID);
    /* checkmate and stalemate */
    engine_limits_t limits = depth_limits(5, 1);
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1", &pos));
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_ENO_MOVES);
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &pos));
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &limits, &r, err, sizeof err), ENGINE_ENO_MOVES);
    CU_ASSERT_EQUAL(r.bestmove, MOVE_NONE);
    CU_ASSERT_EQUAL(engine_pid(e), pid);
    /* a movetime search needs no deadline of its own */
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &pos));
    engine_limits_t movetime = {.movetime_ms = 50};
    CU_ASSERT_EQUAL(engine_search(e, &pos, NULL, 0, &movetime, &r, err, sizeof err), ENGINE_OK);
    CU_ASSERT_FALSE(r.stopped);
    CU_ASSERT_TRUE(movegen_is_legal(&pos, r.bestmove));
}

/* Writes an engine that appends every line it reads to <name>.log and
 * announces the option lines of options (shell: echo ...; may be ":"). */
static const char *recording_engine(const char *name, const char *options, char *log, size_t log_size)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", fake_dir, name);
    snprintf(log, log_size, "%s/%s.log", fake_dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#!/bin/sh\n"
               ": > '%s'\n"
               "while read -r line; do\n"
               "  echo \"$line\" >> '%s'\n"
               "  case \"$line\" in\n"
               "    uci) echo 'id name Fake'; %s; echo uciok ;;\n"
               "    isready) echo readyok ;;\n"
               "    go*) echo 'bestmove e2e4' ;;\n"
               "    quit) exit 0 ;;\n"
               "  esac\n"
               "done\n",
            log, log, options);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
    return path;
}

/* What the engine has read since the last call (*seen bytes of its log
 * before), after an isready round trip so that it has read everything. */
static void recorded_since(engine_t *e, const char *log, long *seen, char *out, size_t size)
{
    char err[256];
    CU_ASSERT_EQUAL_FATAL(engine_new_game(e, false, err, sizeof err), ENGINE_OK);
    FILE *f = fopen(log, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(fseek(f, *seen, SEEK_SET), 0);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    *seen += (long)n;
    fclose(f);
}

static int count_of(const char *text, const char *needle)
{
    int count = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        count++;
    return count;
}

static const char stockfish_strength_options[] =
    "echo 'option name Skill Level type spin default 20 min 0 max 20'; "
    "echo 'option name UCI_LimitStrength type check default false'; "
    "echo 'option name UCI_Elo type spin default 1350 min 1350 max 2850'";

static engine_t *start_fake(const char *path)
{
    char err[256];
    engine_status_t s;
    engine_t *fake = engine_start(&(engine_options_t){.path = path, .handshake_timeout_ms = 2000}, &s, err, sizeof err);
    if (!fake)
        fprintf(stderr, "\nfake engine %s: %s: %s\n", path, engine_status_name(s), err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fake);
    return fake;
}

static void test_only_the_strength_options_that_change_are_sent(void)
{
    char log[160], seen_text[2048], err[256];
    long seen = 0;
    engine_t *fake = start_fake(recording_engine("strength", stockfish_strength_options, log, sizeof log));
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name Hash value 16\n"));
    CU_ASSERT_EQUAL(count_of(seen_text, "Skill Level"), 0); /* the defaults are full strength already */
    CU_ASSERT_EQUAL(count_of(seen_text, "UCI_LimitStrength"), 0);

    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.skill_level = 5}, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name Skill Level value 5\n"));

    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.skill_level = 5}, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 0);

    engine_strength_t limited = {.skill_level = 5, .limit_strength = true, .uci_elo = 1500};
    CU_ASSERT_EQUAL(engine_set_strength(fake, &limited, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name UCI_Elo value 1500\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name UCI_LimitStrength value true\n"));

    /* a rating below what the engine announced is its floor */
    limited.uci_elo = 1000;
    CU_ASSERT_EQUAL(engine_set_strength(fake, &limited, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name UCI_Elo value 1350\n"));

    /* the zero value is full strength; the rating is left as it is */
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){0}, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name Skill Level value 20\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name UCI_LimitStrength value false\n"));

    /* a restart is full strength again: skill 5 is sent anew */
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.skill_level = 5}, err, sizeof err), ENGINE_OK);
    CU_ASSERT_EQUAL_FATAL(engine_restart(fake, err, sizeof err), ENGINE_OK);
    seen = 0; /* the new process empties its log */
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.skill_level = 5}, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption name Skill Level value 5\n"), 1);
    engine_free(fake);
}

static void test_strength_values_out_of_range_are_refused_and_nothing_is_sent(void)
{
    char log[160], seen_text[2048], err[256];
    long seen = 0;
    engine_t *fake = start_fake(recording_engine("strength_range", stockfish_strength_options, log, sizeof log));
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    engine_strength_t bad[] = {
        {.skill_level = -1},
        {.skill_level = ENGINE_SKILL_MAX + 1},
        {.limit_strength = true, .uci_elo = 0},
        {.limit_strength = true, .uci_elo = -1500},
        {.limit_strength = true, .uci_elo = ENGINE_ELO_MAX + 1},
        {.skill_level = 3, .limit_strength = true, .uci_elo = 5000},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(engine_set_strength(fake, &bad[i], err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(engine_set_strength(fake, NULL, err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_EQUAL(engine_set_strength(NULL, &bad[0], err, sizeof err), ENGINE_EINVALID);
    CU_ASSERT_TRUE(engine_alive(fake));
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption"), 0);
    /* without limit_strength, the rating is not looked at */
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.uci_elo = -5}, err, sizeof err), ENGINE_OK);
    engine_free(fake);
}

static void test_options_the_engine_did_not_announce_are_skipped(void)
{
    char log[160], seen_text[2048], err[256];
    long seen = 0;
    engine_t *fake = start_fake(recording_engine("plain", ":", log, sizeof log));
    engine_strength_t limited = {.skill_level = 5, .limit_strength = true, .uci_elo = 1500};
    CU_ASSERT_EQUAL(engine_set_strength(fake, &limited, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "Skill Level"), 0);
    CU_ASSERT_EQUAL(count_of(seen_text, "UCI_LimitStrength"), 0);
    CU_ASSERT_EQUAL(count_of(seen_text, "UCI_Elo"), 0);
    engine_free(fake);
    /* only a Skill Level, of another range: 12 is sent, full strength is its top */
    seen = 0;
    fake = start_fake(recording_engine("skill_only", "echo 'option name Skill Level type spin default 30 min 0 max 30'",
                                       log, sizeof log));
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){.skill_level = 12, .limit_strength = true,
                                                                    .uci_elo = 2000},
                                        err, sizeof err),
                    ENGINE_OK);
    CU_ASSERT_EQUAL(engine_set_strength(fake, &(engine_strength_t){0}, err, sizeof err), ENGINE_OK);
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption name Skill Level value 12\n"), 1);
    CU_ASSERT_EQUAL(count_of(seen_text, "setoption name Skill Level value 30\n"), 1);
    CU_ASSERT_EQUAL(count_of(seen_text, "UCI_LimitStrength"), 0);
    CU_ASSERT_EQUAL(count_of(seen_text, "UCI_Elo"), 0);
    engine_free(fake);
}

static void test_an_engine_with_weaker_defaults_starts_at_full_strength(void)
{
    char log[160], seen_text[2048];
    long seen = 0;
    engine_t *fake = start_fake(recording_engine("weak_defaults",
                                                 "echo 'option name Skill Level type spin default 3 min 0 max 20'; "
                                                 "echo 'option name UCI_LimitStrength type check default true'",
                                                 log, sizeof log));
    recorded_since(fake, log, &seen, seen_text, sizeof seen_text);
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name Skill Level value 20\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(seen_text, "setoption name UCI_LimitStrength value false\n"));
    engine_free(fake);
}

/* Middle-game positions with several sensible moves. */
static const char *const strength_fens[] = {
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r1bqk2r/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RNBQK2R w KQkq - 0 6",
    "rnbqk2r/ppp1bppp/4pn2/3p4/2PP4/2N2N2/PP2PPPP/R1BQKB1R w KQkq - 4 5",
    "r2qkbnr/ppp2ppp/2np4/4p3/2B1P1b1/5N2/PPPP1PPP/RNBQ1RK1 w kq - 2 5",
    "rnbqkbnr/pp3ppp/4p3/2ppP3/3P4/8/PPP2PPP/RNBQKBNR w KQkq - 0 4",
    "r1bq1rk1/ppp1bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R1BQKB1R w KQ - 3 7",
    "rnbq1rk1/ppp1ppbp/3p1np1/8/2PPP3/2N2N2/PP3PPP/R1BQKB1R w KQ - 1 6",
    "r1bqkbnr/1ppp1ppp/p1n5/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 1 4",
    "rnbqkb1r/ppp2ppp/4pn2/3p4/3P1B2/4PN2/PPP2PPP/RN1QKB1R b KQkq - 0 4",
    "r1bqkb1r/pp1ppppp/2n2n2/2p5/4P3/2N2N2/PPPP1PPP/R1BQKB1R w KQkq - 4 4",
    "rn1qkbnr/pp2pppp/2p5/5b2/3PN3/8/PPP2PPP/R1BQKBNR w KQkq - 1 5",
};
enum { STRENGTH_FEN_COUNT = sizeof strength_fens / sizeof strength_fens[0] };

/* The depth-8 bestmove of each strength position at the given strength. */
static void strength_moves(const engine_strength_t *strength, move_t moves[STRENGTH_FEN_COUNT])
{
    char err[256];
    for (int i = 0; i < STRENGTH_FEN_COUNT; i++) {
        CU_ASSERT_EQUAL_FATAL(engine_set_strength(live_engine(), strength, err, sizeof err), ENGINE_OK);
        engine_result_t r;
        engine_limits_t limits = depth_limits(8, 1);
        CU_ASSERT_EQUAL_FATAL(search_fen(strength_fens[i], &limits, &r), ENGINE_OK);
        moves[i] = r.bestmove;
    }
}

static int moves_differing(const move_t a[STRENGTH_FEN_COUNT], const move_t b[STRENGTH_FEN_COUNT])
{
    int count = 0;
    for (int i = 0; i < STRENGTH_FEN_COUNT; i++)
        count += a[i] != b[i];
    return count;
}

/* Full strength at a fixed depth is deterministic; skill 1 and UCI_Elo 1350
 * (Skill Level 0) pick other moves than the best in some of twelve
 * positions (each agrees with full strength about one time in three or
 * less, so all twelve agreeing has odds below one in a hundred thousand). */
static void test_stockfish_plays_other_moves_at_low_skill_and_full_strength_again_after(void)
{
    move_t full[STRENGTH_FEN_COUNT], again[STRENGTH_FEN_COUNT], skill[STRENGTH_FEN_COUNT], elo[STRENGTH_FEN_COUNT];
    strength_moves(&(engine_strength_t){0}, full);
    strength_moves(&(engine_strength_t){.skill_level = 1}, skill);
    strength_moves(&(engine_strength_t){.limit_strength = true, .uci_elo = 1350}, elo);
    strength_moves(&(engine_strength_t){.skill_level = ENGINE_SKILL_MAX}, again);
    CU_ASSERT_EQUAL(moves_differing(full, again), 0);
    CU_ASSERT_TRUE(moves_differing(full, skill) >= 2);
    CU_ASSERT_TRUE(moves_differing(full, elo) >= 2);
    /* a restart is full strength again */
    char err[256];
    CU_ASSERT_EQUAL(engine_set_strength(live_engine(), &(engine_strength_t){.skill_level = 1}, err, sizeof err),
                    ENGINE_OK);
    CU_ASSERT_EQUAL_FATAL(engine_restart(engine, err, sizeof err), ENGINE_OK);
    for (int i = 0; i < STRENGTH_FEN_COUNT; i++) {
        engine_result_t r;
        engine_limits_t limits = depth_limits(8, 1);
        CU_ASSERT_EQUAL_FATAL(search_fen(strength_fens[i], &limits, &r), ENGINE_OK);
        CU_ASSERT_EQUAL(r.bestmove, full[i]);
    }
}

static void test_status_names_are_stable(void)
{
    CU_ASSERT_STRING_EQUAL(engine_status_name(ENGINE_OK), "ok");
    CU_ASSERT_STRING_EQUAL(engine_status_name(ENGINE_ETIMEOUT), "timeout");
    CU_ASSERT_STRING_EQUAL(engine_status_name(ENGINE_EGARBAGE), "garbage");
    CU_ASSERT_STRING_EQUAL(engine_status_name(ENGINE_STATUS_COUNT), "unknown");
    for (int s = 0; s < ENGINE_STATUS_COUNT; s++)
        CU_ASSERT_PTR_NOT_NULL(engine_status_name((engine_status_t)s));
}

int test_engine_register(void)
{
    CU_pSuite suite = CU_add_suite("engine", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"the handshake reads the engine's name", test_the_handshake_reads_the_engines_name},
        {"the engine runs in its own group, niced, with three descriptors",
         test_the_engine_runs_in_its_own_group_niced_with_three_descriptors},
        {"a mate in one is found with score mate 1", test_a_mate_in_one_is_found_with_score_mate_1},
        {"a mate in two is found with score mate 2", test_a_mate_in_two_is_found_with_score_mate_2},
        {"a depth search with one thread is deterministic", test_a_depth_search_with_one_thread_is_deterministic},
        {"multipv 3 gives three lines, best first", test_multipv_three_gives_three_lines_best_first},
        {"a Chess960 castling bestmove is read as king takes rook",
         test_a_chess960_castling_bestmove_is_read_as_king_takes_rook},
        {"Chess960 moves with castling written by chessd are accepted",
         test_chess960_moves_with_castling_written_by_chessd_are_accepted},
        {"the deadline sends stop and the bestmove is kept", test_the_deadline_sends_stop_and_the_bestmove_is_kept},
        {"a killed engine is crashed and restarts", test_a_killed_engine_is_crashed_and_restarts},
        {"a stopped engine times out and its group is killed",
         test_a_stopped_engine_times_out_and_its_group_is_killed},
        {"an illegal bestmove is garbage, never a move", test_an_illegal_bestmove_is_garbage_never_a_move},
        {"bestmove (none) with legal moves is garbage", test_bestmove_none_with_legal_moves_is_garbage},
        {"an overlong line is garbage", test_an_overlong_line_is_garbage},
        {"an illegal pv move cuts the line and is counted", test_an_illegal_pv_move_cuts_the_line_and_is_counted},
        {"an engine that exits in the handshake does not start",
         test_an_engine_that_exits_in_the_handshake_does_not_start},
        {"the position command is built from canonical values",
         test_the_position_command_is_built_from_canonical_values},
        {"option values and commands must be one printable line",
         test_option_values_and_commands_must_be_one_printable_line},
        {"bad limits and finished positions are not searched", test_bad_limits_and_finished_positions_are_not_searched},
        {"only the strength options that change are sent", test_only_the_strength_options_that_change_are_sent},
        {"strength values out of range are refused and nothing is sent",
         test_strength_values_out_of_range_are_refused_and_nothing_is_sent},
        {"options the engine did not announce are skipped", test_options_the_engine_did_not_announce_are_skipped},
        {"an engine with weaker defaults starts at full strength",
         test_an_engine_with_weaker_defaults_starts_at_full_strength},
        {"stockfish plays other moves at low skill, and full strength again after",
         test_stockfish_plays_other_moves_at_low_skill_and_full_strength_again_after},
        {"status names are stable", test_status_names_are_stable},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (!CU_add_test(suite, tests[i].name, tests[i].fn))
            return CU_get_error();
    }
    return CUE_SUCCESS;
}
