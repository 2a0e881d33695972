/* chessd's one monotonic clock (header-only): CLOCK_MONOTONIC in
 * microseconds and milliseconds, and deadlines for pthread_cond_timedwait on a
 * condition variable set to CLOCK_MONOTONIC. It lives in the base room so that
 * every layer reads the same clock; the rules proper never read it
 * (tests/layering.sh checks their objects by symbol). */
#ifndef CHESSD_RULES_BASE_CLOCK_H
#define CHESSD_RULES_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The CLOCK_MONOTONIC time ms milliseconds (ms >= 0) from now, as the
 * absolute struct timespec pthread_cond_timedwait takes. */
static inline struct timespec clock_deadline_after_ms(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

#endif
