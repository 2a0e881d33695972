/* Standard Algebraic Notation. san_format() writes canonical SAN with minimal
 * disambiguation (file, then rank, then both), "x", "=Q", "+"/"#" and
 * O-O/O-O-O. san_parse() is lenient but never wrong: it reads the usual
 * slips of hand-written SAN, and rejects an ambiguous move, naming the
 * candidates. */
#ifndef CHESSD_RULES_SAN_H
#define CHESSD_RULES_SAN_H

#include <stddef.h>

#include "legality.h"

enum { SAN_BUFFER_SIZE = 16, SAN_INPUT_MAX = 32 };

/* Writes the SAN of move (legal in pos) into buf (SAN_BUFFER_SIZE bytes). Returns buf. */
char *san_format(const position_t *pos, move_t move, char *buf);

/* The same, given the legal moves of pos (saves regenerating them when
 * formatting a whole list); NULL: made only when another piece of the
 * mover's kind attacks the target square. */
char *san_format_with(const position_t *pos, const move_list_t *legal, move_t move, char *buf);

/* Finds the legal move that `length` bytes of SAN name in pos. On failure
 * returns the reason (LEGALITY_UNPARSEABLE when the text is not SAN) and
 * writes a sentence to message. Accepted beside canonical SAN: missing or
 * extra check marks and annotations (!?), 0-0, a missing "x",
 * over-disambiguation (Ng1f3), "e8Q", and a lower-case piece letter (nf3,
 * qxh5). "bxc4" is the b-pawn's capture it says, and the bishop's only when
 * no b-pawn move fits. */
legality_reason_t san_parse(const position_t *pos, const char *text, size_t length, move_t *move,
                            char *message, size_t message_size);

#endif
