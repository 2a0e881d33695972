/* `chessd play`: chess in a terminal over the rules core. The local session
 * plays both sides from a FEN, or one side against the computer (an engine
 * driven directly, play_engine.h); play_remote.h plays one side of a stored
 * game through the HTTP API. This module also holds what both print: the board,
 * the turn and status lines, the material line and the move list, and an
 * error line with the same code and detail as the HTTP API's problem. The
 * output never holds terminal escapes, so a script can read it. */
#ifndef CHESSD_API_PLAY_H
#define CHESSD_API_PLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../../rules/game.h"
#include "../http/request.h"
#include "play_engine.h"

/* The longest input line read (bytes, newline excluded); a longer one is refused whole. */
enum { PLAY_LINE_MAX = 256 };

/* How the session shows things. */
typedef struct {
    bool unicode;  /* pieces as ♔♕♖♗♘♙/♚♛♜♝♞♟, empty squares as ·, an em dash; else letters, '.', '-' */
    bool flip;     /* Black at the bottom */
    bool prompt;   /* print a prompt ("white> ") before reading each line */
    int max_plies; /* the most plies a game may have (GAME_MAX_PLIES at most) */
} play_view_t;

/* The computer in a local session, and the engine hints come from. */
typedef struct {
    play_engine_t *engine;   /* running (the computer's), or NULL; the caller's to free */
    const char *engine_path; /* without engine: started from here at the first hint (NULL or "": no hints) */
    bool computer;           /* the computer (engine, which must be set) plays computer_color at level */
    int computer_color;      /* color_t */
    level_t level;
} play_local_t;

/* The local session: plays from start (a legal position), both sides or,
 * with local->computer, the other side than the computer's, reading one
 * command or move a line from in until `quit` or end of input, writing to
 * out. Returns 0, or 1 when the computer could not move (its engine failed
 * even after a restart). */
int play_session(FILE *in, FILE *out, const position_t *start, const play_view_t *view, const play_local_t *local);

/* Whether the locale asks for UTF-8: the first of LC_ALL, LC_CTYPE and LANG
 * that is set and not empty names UTF-8 ("UTF-8" or "utf8", any case). */
bool play_locale_is_utf8(void);

/* "white" or "black". */
const char *play_color_name(int color);

/* The board, ranks and files labelled. */
void play_print_board(FILE *out, const position_t *pos, const play_view_t *view);

/* "Material — white 39, black 38" (P1 N3 B3 R5 Q9), with '-' for the dash
 * unless view->unicode. */
void play_print_material(FILE *out, const position_t *pos, const play_view_t *view);

/* "Moves: 1. e4 e5 2. Nf3" from move-list text ("uci:san" entries separated
 * by single spaces, see game_replay), numbered from initial's counters. */
void play_print_moves(FILE *out, const position_t *initial, const char *line, size_t length);

/* The whole picture after a change: board, "White to move[, in check]",
 * "Status: ...", the draws that may be claimed, material and moves. */
void play_print_game(FILE *out, const game_t *g, const char *line, size_t length, const play_view_t *view);

/* The commands, one a line; with remote, the remote mode's too. */
void play_print_help(FILE *out, bool remote);

/* "hint: Nf3 (+0.36)", "hint: Rd8# (mate in 1)" or "hint: Kh1 (mated in 2)":
 * the move in SAN and its score from the side to move's point of view
 * (is_mate: value is moves to mate, negative when being mated; else centipawns). */
void play_print_hint(FILE *out, const char *san, bool is_mate, int value);

/* "error: <code>: <detail>", control characters in detail shown as '?'. */
void play_print_error(FILE *out, const char *code, const char *detail);

/* Prints the problem+json document in res (built by api/problem.c, exactly
 * as the HTTP API answers) as an error line. */
void play_print_problem(FILE *out, const api_response_t *res);

/* "Legal moves (N): e4 d4 ..." in SAN, in the order of the HTTP API's list;
 * none once the game is over (as the API lists none then). */
void play_print_legal_moves(FILE *out, const game_t *g);

#endif
