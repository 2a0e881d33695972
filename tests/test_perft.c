/* Placeholder for the perft suite. */
#include "tests.h"

int test_perft_register(void)
{
    return CU_add_suite("perft", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
