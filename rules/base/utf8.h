/* UTF-8 checks (RFC 3629): request bodies must be UTF-8, and every string
 * chessd writes into JSON stays valid UTF-8 even when cut short. */
#ifndef CHESSD_RULES_BASE_UTF8_H
#define CHESSD_RULES_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at s (n bytes available), or 0
 * when the bytes there are not valid UTF-8. */
size_t utf8_sequence_length(const unsigned char *s, size_t n);

/* Whether all n bytes are valid UTF-8. */
bool utf8_valid(const char *s, size_t n);

/* Number of characters (code points) in a valid UTF-8 string. */
size_t utf8_length(const char *s);

#endif
