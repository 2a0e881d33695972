/* The commands inside a PGN comment, as Lichess, chess.com and chessops
 * write them: [%clk] and [%emt] times, [%eval] in pawns or mate, [%csl]
 * and [%cal] squares and arrows. They are lifted out of the text exactly
 * as chessops's parseComment lifts them, and the rest of the text is kept.
 * Pure: the caller gives the buffer the text is written to. */
#ifndef CHESSD_RULES_PGN_COMMENT_H
#define CHESSD_RULES_PGN_COMMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PGN_COMMENT_SHAPES_MAX = 128 };

/* A square (from == to) or an arrow; color is 'G', 'R', 'Y' or 'B'. */
typedef struct {
    char color;
    int8_t from, to;
} pgn_shape_t;

typedef struct {
    bool has_clock, has_emt, has_eval;
    int64_t clock_ms, emt_ms;
    bool eval_mate;            /* eval is mate in that many moves (signed) */
    int eval;                  /* else centipawns, from White's point of view */
    int eval_depth;            /* -1: none given */
    int shape_count;           /* shapes past PGN_COMMENT_SHAPES_MAX are dropped */
    pgn_shape_t shapes[PGN_COMMENT_SHAPES_MAX];
} pgn_comment_t;

/* Reads the commands of length bytes of comment text into *out and writes
 * what is left, trimmed, to text (room for length + 1 bytes; terminated).
 * Returns the length of that text. A command seen twice: the last wins. */
size_t pgn_comment_parse(const char *comment, size_t length, pgn_comment_t *out, char *text);

/* Writes the commands of c as chessops's makeComment orders them
 * ([%csl], [%cal], [%eval], [%emt], [%clk]), separated by single spaces,
 * to out (PGN_COMMENT_COMMANDS_MAX bytes). Returns the length written. */
enum { PGN_COMMENT_COMMANDS_MAX = 16 + PGN_COMMENT_SHAPES_MAX * 6 + 128 };
size_t pgn_comment_commands(const pgn_comment_t *c, char *out);

#endif
