/* The terminal client's own randomness: a random Chess960 start, a colour
 * drawn for --color random, and the seed of the computer's level draws. It
 * reads the kernel's generator (getrandom(2)), so the client needs nothing
 * of the server's token module and its OpenSSL state. */
#ifndef CHESSD_API_PLAY_PLAY_RANDOM_H
#define CHESSD_API_PLAY_PLAY_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

/* A uniform number in 0..bound-1 (bound >= 1), without modulo bias: a draw
 * in the incomplete last block of 2^32 is drawn again. False, *out
 * untouched, when bound is 0 or the kernel gives no random bytes. */
bool play_random_below(uint32_t bound, uint32_t *out);

/* 64 random bits into *out; false, *out untouched, when the kernel gives none. */
bool play_random_u64(uint64_t *out);

#endif
