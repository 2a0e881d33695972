/* Placeholder for the position suite. */
#include "tests.h"

int test_position_register(void)
{
    return CU_add_suite("position", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
