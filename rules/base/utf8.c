/* See utf8.h. Overlong forms, surrogates and code points above U+10FFFF are invalid. */
#include "utf8.h"

static bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

size_t utf8_sequence_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t length;
    unsigned char low = 0x80, high = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        length = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        length = 3;
        if (c == 0xE0)
            low = 0xA0;
        else if (c == 0xED)
            high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4;
        if (c == 0xF0)
            low = 0x90;
        else if (c == 0xF4)
            high = 0x8F;
    } else {
        return 0;
    }
    if (n < length || s[1] < low || s[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if (!continuation(s[i]))
            return 0;
    return length;
}

bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t length = utf8_sequence_length(p + i, n - i);
        if (!length)
            return false;
        i += length;
    }
    return true;
}

size_t utf8_length(const char *s)
{
    size_t count = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        count += (*p & 0xC0) != 0x80;
    return count;
}
