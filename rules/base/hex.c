/* Lower-case hexadecimal (see hex.h): every hex digit chessd writes comes
 * from the one digit table below. */
#include "hex.h"

#include <string.h>

static const char digits[] = "0123456789abcdef";

char *hex_encode(const uint8_t *bytes, size_t length, char *out)
{
    for (size_t i = 0; i < length; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * length] = '\0';
    return out;
}

void hex_encode_u64(uint64_t value, char out[16])
{
    for (int i = 0; i < 16; i++)
        out[i] = digits[(value >> (60 - 4 * i)) & 15];
}

bool hex_decode_u64(const char *text, uint64_t *value)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        const char *digit = text[i] ? memchr(digits, text[i], 16) : NULL;
        if (!digit)
            return false;
        v = v << 4 | (uint64_t)(digit - digits);
    }
    *value = v;
    return true;
}

size_t hex_span(const char *text) { return strspn(text, digits); }
