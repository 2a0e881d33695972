/* The growable arrays of the store (a thread's connections, a subscriber's
 * nodes): store_array_reserve() of store_private.h. Its own file, so a
 * program that brings its own store_* functions in place of store_redis.c
 * (the games fuzz target) can link the subscriber without it. */
#include <stdlib.h>

#include "store_private.h"

bool store_array_reserve(void **items, unsigned *capacity, unsigned count, size_t item_size)
{
    if (count < *capacity)
        return true;
    unsigned grown = *capacity ? 2 * *capacity : 4;
    void *bigger = realloc(*items, grown * item_size);
    if (!bigger)
        return false;
    *items = bigger;
    *capacity = grown;
    return true;
}
