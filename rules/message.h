/* Writing an error sentence into a caller's buffer: the one helper behind
 * every rules module's "code plus sentence" results. */
#ifndef CHESSD_RULES_MESSAGE_H
#define CHESSD_RULES_MESSAGE_H

#include <stddef.h>

/* Formats into message (always terminated; nothing when message is NULL or
 * message_size is 0) and returns code, so callers can `return message_set(...)`. */
int message_set(int code, char *message, size_t message_size, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

#endif
