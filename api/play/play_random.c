/* The terminal client's randomness (see play_random.h): getrandom(2), which
 * blocks only until the kernel's pool is first seeded at boot, and is
 * retried when a signal interrupts it. */
#include "play_random.h"

#include <errno.h>
#include <stddef.h>
#include <sys/random.h>
#include <sys/types.h>

/* Fills size bytes (at most 256: one getrandom call never returns fewer then). */
static bool random_bytes(void *out, size_t size)
{
    ssize_t n;
    do
        n = getrandom(out, size, 0);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)size;
}

bool play_random_below(uint32_t bound, uint32_t *out)
{
    if (bound == 0)
        return false;
    uint32_t limit = UINT32_MAX - (uint32_t)(((uint64_t)UINT32_MAX + 1) % bound); /* the last draw kept */
    for (;;) {
        uint32_t draw;
        if (!random_bytes(&draw, sizeof draw))
            return false;
        if (draw <= limit) {
            *out = draw % bound;
            return true;
        }
    }
}

bool play_random_u64(uint64_t *out)
{
    uint64_t draw;
    if (!random_bytes(&draw, sizeof draw))
        return false;
    *out = draw;
    return true;
}
