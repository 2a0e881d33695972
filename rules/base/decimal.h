/* Unsigned decimal numbers written by hand into a caller's buffer (the
 * digits only, no NUL), for texts written many times a request where a
 * printf would be most of the cost: FEN counters, the state text's figures,
 * Redis protocol lengths. Pure: no allocation, any thread. */
#ifndef CHESSD_RULES_BASE_DECIMAL_H
#define CHESSD_RULES_BASE_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* The most digits a uint64_t has. */
enum { DECIMAL_U64_MAX = 20 };

/* How many decimal digits value has (1 for 0). */
size_t decimal_length(uint64_t value);

/* Writes value's decimal digits, most significant first, into out (room
 * for decimal_length(value) chars); returns their count. */
size_t decimal_write(uint64_t value, char *out);

/* The same for a signed value, a '-' first when it is negative (room for
 * DECIMAL_U64_MAX + 1 chars at most). */
size_t decimal_write_signed(int64_t value, char *out);

#endif
