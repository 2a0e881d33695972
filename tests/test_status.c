/* Placeholder for the status suite. */
#include "tests.h"

int test_status_register(void)
{
    return CU_add_suite("status", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
