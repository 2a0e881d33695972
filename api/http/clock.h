/* The monotonic clock of all of api/ (header-only): CLOCK_MONOTONIC in
 * microseconds and milliseconds, and deadlines for pthread_cond_timedwait on a
 * condition variable set to CLOCK_MONOTONIC. It lives in the transport, the
 * lowest layer of api/, so that every part of api/ can use it. store/ keeps
 * its own (sock_now_ms in store/sock.h): neither layer may reach into the
 * other, and rules/, below both, is pure and reads no clock. */
#ifndef CHESSD_API_HTTP_CLOCK_H
#define CHESSD_API_HTTP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
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
