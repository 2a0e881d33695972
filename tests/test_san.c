/* Placeholder for the san suite. */
#include "tests.h"

int test_san_register(void)
{
    return CU_add_suite("san", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
