/* Reading a move a client typed: UCI or SAN, decided by the text itself.
 * The result is a legal move, or the precise reason the text does not name
 * one. Also the words of a move list given as one text (`chessd perft`). */
#ifndef CHESSD_RULES_NOTATION_H
#define CHESSD_RULES_NOTATION_H

#include <stdbool.h>
#include <stddef.h>

#include "legality.h"

/* Reads `length` bytes of UCI or SAN and finds the legal move they name in
 * pos; blanks (space, tab, CR, LF) before and after are skipped, as a FEN's
 * are, and any inside refuse it. On success *move is set and LEGALITY_OK
 * returned; otherwise the reason is returned and a sentence written to
 * message (always terminated). */
legality_reason_t notation_parse_move(const position_t *pos, const char *text, size_t length, move_t *move,
                                      char *message, size_t message_size);

/* The next move of a list of moves separated by spaces, in the NUL-terminated
 * text at *cursor: skips the spaces there, sets *move_text and *length to the
 * word that follows (the bytes up to the next space or the end) and moves
 * *cursor past it. False, with nothing set, when only spaces are left. Each
 * word is then read with notation_parse_move. */
bool notation_next_in_list(const char **cursor, const char **move_text, size_t *length);

#endif
