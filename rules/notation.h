/* Reading a move a client typed: UCI or SAN, decided by the text itself.
 * The result is a legal move, or the precise reason the text does not name
 * one. */
#ifndef CHESSD_RULES_NOTATION_H
#define CHESSD_RULES_NOTATION_H

#include <stddef.h>

#include "legality.h"

/* Reads `length` bytes of UCI or SAN and finds the legal move they name in
 * pos. On success *move is set and LEGALITY_OK returned; otherwise the reason
 * is returned and a sentence written to message (always terminated). */
legality_reason_t notation_parse_move(const position_t *pos, const char *text, size_t length, move_t *move,
                                      char *message, size_t message_size);

#endif
