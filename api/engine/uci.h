/* The UCI driver: one engine child process (Stockfish, or Fairy-Stockfish
 * for the variants) over pipes, every read under a deadline. What is written
 * to the engine is built only from chessd's own values (fen_format,
 * uci_format, integers); every move read back is checked by rules/. An
 * engine_t is used by one thread at a time; engines share nothing. The caller
 * ignores SIGPIPE (the server does), so writing to a dead engine is EPIPE. */
#ifndef CHESSD_API_ENGINE_UCI_H
#define CHESSD_API_ENGINE_UCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../rules/rules.h"
#include "../http/buf.h"

/* Where Debian's packages put the engines: Stockfish (`serve --engine auto`,
 * `chessd play`) and Fairy-Stockfish, the variants'. */
#define ENGINE_DEFAULT_PATH "/usr/games/stockfish"
#define ENGINE_VARIANT_DEFAULT_PATH "/usr/games/fairy-stockfish"

enum {
    ENGINE_LINE_MAX = 4096,  /* bytes of one line from the engine, its newline included */
    ENGINE_MULTIPV_MAX = 5,
    ENGINE_PV_MAX = 32,      /* moves kept of each principal variation */
    ENGINE_NAME_MAX = 128,
    ENGINE_HASH_MAX_MB = 1024,
    ENGINE_THREADS_MAX = 64,
};

typedef enum {
    ENGINE_OK = 0,
    ENGINE_ESTART,    /* cannot exec the engine, or its handshake failed */
    ENGINE_ETIMEOUT,  /* no answer by the deadline (and the grace after "stop") */
    ENGINE_ECRASHED,  /* the engine exited or closed its output, or is not running */
    ENGINE_EGARBAGE,  /* a protocol error: an overlong line, an illegal move */
    ENGINE_ENO_MOVES, /* the position has no legal move: nothing to search */
    ENGINE_EINVALID,  /* bad limits or arguments (an illegal move in the list) */
    ENGINE_EBUSY,     /* (pool) no engine came free by the caller's deadline */
    ENGINE_EDOWN,     /* (pool) no engine is running, or the pool has none */
    ENGINE_STATUS_COUNT
} engine_status_t;

/* Stable snake_case name of a status, e.g. "timeout". */
const char *engine_status_name(engine_status_t status);

/* Zero fields take the defaults. path is never sent to the engine. */
typedef struct {
    const char *path;         /* the executable, e.g. /usr/games/stockfish */
    int threads;              /* 1 by default; 1..ENGINE_THREADS_MAX */
    int hash_mb;              /* 16 by default; 1..ENGINE_HASH_MAX_MB */
    int handshake_timeout_ms; /* each handshake/isready wait; 5000 by default */
    int stop_grace_ms;        /* wait for bestmove after "stop"; 200 by default */
} engine_options_t;

/* At least one of depth, nodes, movetime_ms or has_clock. deadline_ms is an
 * absolute clock_now_ms() time by which the search must end; 0 means
 * movetime (or the side to move's clock time) plus a margin, and a
 * depth- or nodes-only search must give one. */
typedef struct {
    int depth;
    uint64_t nodes;
    int movetime_ms;
    bool has_clock;
    long wtime_ms, btime_ms, winc_ms, binc_ms;
    int movestogo; /* with has_clock: the moves to the next period (0: none, sudden death) */
    int multipv; /* 1..ENGINE_MULTIPV_MAX; 0 means 1 */
    uint64_t deadline_ms;
} engine_limits_t;

typedef enum { ENGINE_BOUND_EXACT = 0, ENGINE_BOUND_LOWER, ENGINE_BOUND_UPPER } engine_bound_t;

/* One principal variation, scores from the side to move's point of view. */
typedef struct {
    int multipv, depth, seldepth;
    bool is_mate;   /* value is moves to mate (negative: being mated), else centipawns */
    int value;
    engine_bound_t bound;
    bool has_wdl;
    int wdl[3];     /* per mille: win, draw, loss */
    uint64_t nodes, nps;
    long time_ms;
    move_t pv[ENGINE_PV_MAX]; /* legal moves only: cut at the first illegal one */
    int pv_count;
} engine_line_t;

typedef struct {
    move_t bestmove;                   /* legal in the searched position */
    char bestmove_uci[UCI_BUFFER_SIZE];
    move_t ponder;                     /* MOVE_NONE when none, or not legal after bestmove */
    char ponder_uci[UCI_BUFFER_SIZE];
    engine_line_t lines[ENGINE_MULTIPV_MAX]; /* lines[i].multipv == i + 1 */
    int line_count;
    int illegal_pv_moves;              /* principal variations cut at an illegal move */
    bool stopped;                      /* the deadline came and "stop" was sent */
} engine_result_t;

typedef struct engine engine_t;

/* Starts the engine (its own process group, nice +10, stderr to /dev/null)
 * and runs the handshake. NULL on failure, a sentence in err. The caller
 * frees the engine with engine_free(). */
engine_t *engine_start(const engine_options_t *opt, engine_status_t *status, char *err, size_t err_size);

/* Kills the engine's process group if it still runs, reaps it, and starts a
 * fresh engine with the same options. On failure the engine stays dead. */
engine_status_t engine_restart(engine_t *e, char *err, size_t err_size);

/* "quit", a short wait, then SIGKILL to the process group, reaped. NULL is fine. */
void engine_free(engine_t *e);

/* The variants e plays, a bit (1u << variant_t) each: standard chess
 * (Chess960 with it) always, and those its UCI_Variant option listed. An
 * engine ignores a variant it does not know without a word and plays chess
 * (Fairy-Stockfish 11.1 and atomic), so only a listed one is ever asked
 * for. 0 for NULL. */
unsigned engine_variants(const engine_t *e);
/* The chessd variants an "option name UCI_Variant type combo default chess
 * var A var B ..." line lists: each var whose name is a variant's engine
 * name (variant.h; "3check", "kingofthehill" ...). 0 when line is not the
 * UCI_Variant option. */
unsigned engine_variants_announced(const char *line);

/* The engine's "id name", e.g. "Stockfish 15.1". Owned by e. */
const char *engine_name(const engine_t *e);
/* The child's pid (its process group id too), or -1 when it is not running. */
pid_t engine_pid(const engine_t *e);
bool engine_alive(const engine_t *e);

/* How strongly the engine plays. skill_level is Stockfish's "Skill Level",
 * 1..ENGINE_SKILL_MAX (20 is full strength), and 0 is full strength too, so
 * that the zero value of this struct is full strength (Skill Level 0 itself
 * is what UCI_LimitStrength at UCI_Elo 1350 plays: Stockfish 15.1 turns a
 * UCI_Elo into a fractional skill, 0.01 for 1350). When limit_strength,
 * "UCI_LimitStrength" with "UCI_Elo" uci_elo, 1..ENGINE_ELO_MAX, clamped to
 * what the engine announced (1350..2850 in Stockfish 15.1); UCI_Elo then
 * overrides the Skill Level. uci_elo is not looked at otherwise. */
typedef struct {
    int skill_level;
    bool limit_strength;
    int uci_elo;
} engine_strength_t;

enum { ENGINE_SKILL_MAX = 20, ENGINE_ELO_MAX = 4000 };

/* Sends the options of *strength that differ from those last set (an
 * option the engine did not announce is skipped; a value is clamped to the
 * announced range). Full strength after start and restart. ENGINE_EINVALID,
 * nothing sent, for a value out of the ranges above; a failed write leaves
 * the engine dead. */
engine_status_t engine_set_strength(engine_t *e, const engine_strength_t *strength, char *err, size_t err_size);

/* Sets UCI_Chess960 when it changes, then "ucinewgame" and "isready". */
engine_status_t engine_new_game(engine_t *e, bool chess960, char *err, size_t err_size);

/* Searches the position reached from start by moves (each legal in turn).
 * On ENGINE_OK, *out holds a legal bestmove and the latest line of each
 * multipv. A position with no legal move (mate, stalemate, a variant's own
 * end: a finished three-check position kills Fairy-Stockfish 11.1) is
 * ENGINE_ENO_MOVES and never sent; a variant the engine does not play
 * (engine_variants) is ENGINE_EINVALID, nothing sent. "setoption name
 * UCI_Variant" goes first when the position's variant is not the one the
 * engine holds. Every move read back (bestmove, ponder, each pv) must be
 * legal by chessd's rules: an illegal bestmove is ENGINE_EGARBAGE. Any
 * status but OK, ENO_MOVES and EINVALID leaves the engine dead (its process
 * group killed and reaped): engine_restart() it. */
engine_status_t engine_search(engine_t *e, const position_t *start, const move_t *moves, int move_count,
                              const engine_limits_t *limits, engine_result_t *out, char *err, size_t err_size);

/* Appends "position fen <fen_format(start)>[ moves <uci_format...>]\n" to
 * command, replaying moves on a copy of start (the position reached into
 * *reached when not NULL). ENGINE_EINVALID when a move is not legal. */
engine_status_t engine_format_position(const position_t *start, const move_t *moves, int move_count,
                                       buf_t *command, position_t *reached, char *err, size_t err_size);

/* Whether length bytes may be an option value in a command: non-empty,
 * printable ASCII only (no newline, no NUL, no control byte). */
bool engine_option_ok(const char *value, size_t length);
/* Whether length bytes are one command: printable ASCII ended by its only '\n'. */
bool engine_command_ok(const char *text, size_t length);

#endif
