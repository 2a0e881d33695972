/* Placeholder for the legality suite. */
#include "tests.h"

int test_legality_register(void)
{
    return CU_add_suite("legality", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
