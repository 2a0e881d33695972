/* See decimal.h. */
#include "decimal.h"

size_t decimal_length(uint64_t value)
{
    size_t count = 1;
    while (value >= 10) {
        value /= 10;
        count++;
    }
    return count;
}

size_t decimal_write(uint64_t value, char *out)
{
    size_t count = decimal_length(value);
    for (size_t i = count; i-- > 0; value /= 10)
        out[i] = (char)('0' + value % 10);
    return count;
}

size_t decimal_write_signed(int64_t value, char *out)
{
    if (value >= 0)
        return decimal_write((uint64_t)value, out);
    out[0] = '-';
    return 1 + decimal_write((uint64_t)0 - (uint64_t)value, out + 1);
}
