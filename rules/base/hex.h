/* Lower-case hexadecimal, the one table of hex digits: bytes and 64-bit
 * values written as hex into a caller's buffer, and read back. Used for
 * request ids, token hashes, idempotency fingerprints, script SHAs and the
 * game record's position keys. Pure: no allocation, any thread. */
#ifndef CHESSD_RULES_BASE_HEX_H
#define CHESSD_RULES_BASE_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the 2 * length lower-case hex digits of bytes, first byte first,
 * and a NUL into out, which holds 2 * length + 1 chars. Returns out. */
char *hex_encode(const uint8_t *bytes, size_t length, char *out);

/* Writes the 16 hex digits of value, most significant first, into out; no NUL. */
void hex_encode_u64(uint64_t value, char out[16]);

/* Reads exactly 16 lower-case hex digits at text (as hex_encode_u64 writes
 * them) into *value. False, *value untouched, when one of them is not. */
bool hex_decode_u64(const char *text, uint64_t *value);

/* How many lower-case hex digits text begins with. */
size_t hex_span(const char *text);

#endif
