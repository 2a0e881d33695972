/* Placeholder for the fen suite. */
#include "tests.h"

int test_fen_register(void)
{
    return CU_add_suite("fen", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
