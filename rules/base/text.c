/* See text.h. */
#include "text.h"

#include <string.h>

size_t text_join(char *out, size_t size, const char *const *parts, size_t count)
{
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        const char *part = parts[i] ? parts[i] : "";
        size_t length = strlen(part);
        if (total + 1 < size) { /* room left before the NUL */
            size_t room = size - 1 - total;
            memcpy(out + total, part, length < room ? length : room);
        }
        total += length;
    }
    if (size)
        out[total < size ? total : size - 1] = '\0';
    return total;
}

size_t text_copy(char *out, size_t size, const char *text) { return text_join(out, size, &text, 1); }
