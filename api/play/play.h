/* `chessd play`: chess in a terminal over the rules core. The local session
 * plays both sides, or one against the computer (play_engine.h);
 * play_remote.h plays one side of a stored game over the HTTP API. Both
 * share what this module prints (the board, status, material, moves, and
 * errors worded as the API's problems) and its table of commands. Only a
 * board drawn in colour (play_view_t) holds terminal escapes. */
#ifndef CHESSD_API_PLAY_PLAY_H
#define CHESSD_API_PLAY_PLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../../rules/game.h"
#include "../http/request.h"
#include "play_engine.h"
#include "play_input.h"

/* The longest input line read (bytes, newline excluded); a longer one is refused whole. */
enum { PLAY_LINE_MAX = 256 };

/* How the session shows things. */
typedef struct {
    bool unicode;  /* pieces as ♔♕♖♗♘♙/♚♛♜♝♞♟, empty squares as ·, an em dash; else letters, '.', '-' */
    bool color;    /* the board's squares and pieces in colour, the last move's squares tinted; else that
                      move's squares in brackets, "[P]" */
    bool flip;     /* Black at the bottom */
    bool prompt;   /* a person types (standard input is a terminal): greet, and prompt ("white> ") */
    int max_plies; /* the most plies a game may have (GAME_MAX_PLIES at most) */
} play_view_t;

/* The commands both sessions read, one table (play.c) for their words and
 * their help. A line that is no command's word is a move. */
typedef enum {
    PLAY_COMMAND_MOVE = 0, /* no command: the line is a move */
    PLAY_COMMAND_MOVES,
    PLAY_COMMAND_HINT,
    PLAY_COMMAND_UNDO,
    PLAY_COMMAND_FEN,
    PLAY_COMMAND_PGN,
    PLAY_COMMAND_CLAIM,
    PLAY_COMMAND_BOARD,
    PLAY_COMMAND_HELP,
    PLAY_COMMAND_QUIT,
    PLAY_COMMAND_DRAW, /* this one and those below: with --server only */
    PLAY_COMMAND_ACCEPT,
    PLAY_COMMAND_DECLINE,
    PLAY_COMMAND_RESIGN,
    PLAY_COMMAND_COUNT
} play_command_t;

/* The command text (length bytes, blanks cut) names; PLAY_COMMAND_MOVE
 * when none, or when it is one of the remote mode's and remote is false. */
play_command_t play_command_find(const char *text, size_t length, bool remote);

/* The word of a line: its leading and trailing blanks cut; *length is its size. */
const char *play_trim(const char *text, size_t *length);

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
 * command or move a line from input until `quit` or end of input, writing
 * to out. The board shows once a move, against the computer once after its
 * reply. Returns 0, or 1 when the computer could not move (its engine
 * failed even after a restart). */
int play_session(play_input_t *input, FILE *out, const position_t *start, const play_view_t *view,
                 const play_local_t *local);

/* "white" or "black". */
const char *play_color_name(int color);
/* WHITE or BLACK for their names (text: length bytes), else -1. */
int play_color_from_name(const char *text, size_t length);

/* The board, ranks and files labelled, the squares of marked (a bitboard:
 * the last move's, see play_last_move) marked. */
void play_print_board(FILE *out, const position_t *pos, bitboard_t marked, const play_view_t *view);

/* The squares of the last move of move-list text line (length bytes, see
 * game_replay): its from and to squares, a drop's one; 0 when none. */
bitboard_t play_last_move(const char *line, size_t length);

/* "Material — white 39, black 38" (P1 N3 B3 R5 Q9), with '-' for the dash
 * unless view->unicode. */
void play_print_material(FILE *out, const position_t *pos, const play_view_t *view);

/* "Moves: 1. e4 e5 2. Nf3" from move-list text ("uci:san" entries separated
 * by single spaces, see game_replay), numbered from initial's counters. */
void play_print_moves(FILE *out, const position_t *initial, const char *line, size_t length);

/* The whole picture after a change: board (the last move marked), "White to move[, in check]",
 * "Status: ...", the draws that may be claimed, material and moves. */
void play_print_game(FILE *out, const game_t *g, const char *line, size_t length, const play_view_t *view);

/* The commands, one a line, from the table; with remote, the remote mode's too. */
void play_print_help(FILE *out, bool remote);

/* "hint: Nf3 (+0.36)", "hint: Rd8# (mate in 1)" or "hint: Kh1 (mated in 2)":
 * the move in SAN and its score from the side to move's point of view
 * (is_mate: value is moves to mate, negative when being mated; else centipawns). */
void play_print_hint(FILE *out, const char *san, bool is_mate, int value);

/* "error: <code>: <detail>", control characters in detail shown as '?'. */
void play_print_error(FILE *out, const char *code, const char *detail);

/* "error: line_too_long: ..." for a line over PLAY_LINE_MAX bytes. */
void play_print_line_too_long(FILE *out);

/* Prints the problem+json document in res (built by api/problem.c, exactly
 * as the HTTP API answers) as an error line. */
void play_print_problem(FILE *out, const api_response_t *res);

/* "Legal moves (N): e4 d4 ..." in SAN, in the order of the HTTP API's list;
 * none once the game is over (as the API lists none then). */
void play_print_legal_moves(FILE *out, const game_t *g);

#endif
