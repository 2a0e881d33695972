/* See message.h. */
#include "message.h"

#include <stdarg.h>
#include <stdio.h>

int message_set(int code, char *message, size_t message_size, const char *format, ...)
{
    if (message && message_size) {
        va_list args;
        va_start(args, format);
        vsnprintf(message, message_size, format, args);
        va_end(args);
    }
    return code;
}
