/* Bounded copies and joins of NUL-terminated texts into a caller's buffer,
 * for the texts written every request (keys, scopes, locations) where a
 * printf of "%s" would cost more than the copy. Each behaves as snprintf
 * with "%s" (or "%s%s..."): the output is cut to size - 1 chars and always
 * NUL-terminated when size > 0, and the return is the whole length, so
 * `n < size` says nothing was cut. Pure: no allocation, any thread. */
#ifndef CHESSD_RULES_BASE_TEXT_H
#define CHESSD_RULES_BASE_TEXT_H

#include <stddef.h>

/* snprintf(out, size, "%s", text); NULL text is "". */
size_t text_copy(char *out, size_t size, const char *text);

/* snprintf(out, size, "%s%s...", parts[0], parts[1], ...), count parts;
 * a NULL part is "". */
size_t text_join(char *out, size_t size, const char *const *parts, size_t count);

#endif
