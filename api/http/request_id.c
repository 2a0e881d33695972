/* Request ids (request_id.h). */
#include "request_id.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

#include "../../rules/base/clock.h"
#include "../../rules/base/hex.h"

/* A fresh request id: unique, not secret. A per-thread xorshift generator,
 * seeded once from the kernel, saves a system call per request. */
void request_id_make(char *out)
{
    static _Thread_local uint64_t state[2];
    if (!state[0] && !state[1]) {
        if (getrandom(state, sizeof state, 0) != (ssize_t)sizeof state || (!state[0] && !state[1])) {
            state[0] = clock_now_us() | 1;
            state[1] = (uint64_t)(uintptr_t)&state;
        }
    }
    unsigned char bytes[16];
    for (int half = 0; half < 2; half++) {
        uint64_t x = state[0], y = state[1];
        state[0] = y;
        x ^= x << 23;
        state[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
        uint64_t v = state[1] + y;
        memcpy(bytes + 8 * half, &v, 8);
    }
    hex_encode(bytes, sizeof bytes, out);
}

void request_id_choose(const char *given, char *out)
{
    if (given) {
        size_t n = strlen(given);
        bool plain = n > 0 && n <= REQUEST_ID_MAX;
        for (size_t i = 0; plain && i < n; i++) {
            char c = given[i];
            plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
                    || c == '_' || c == '.' || c == ':';
        }
        if (plain) {
            memcpy(out, given, n + 1);
            return;
        }
    }
    request_id_make(out);
}
