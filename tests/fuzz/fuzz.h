/* Shared by the libFuzzer targets in tests/fuzz/: the libFuzzer entry points
 * (declared here so -Wmissing-prototypes holds) and FUZZ_CHECK, which prints
 * what broke and aborts, the signal libFuzzer records as a crash. Test code
 * only: nothing in rules/, api/ or store/ includes this. */
#ifndef CHESSD_TESTS_FUZZ_FUZZ_H
#define CHESSD_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with the condition, the place and a printf-style explanation. */
#define FUZZ_CHECK(cond, ...)                                                                   \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "\nFUZZ_CHECK failed: %s\n  at %s:%d\n  ", #cond, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

#endif
