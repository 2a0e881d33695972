/* Placeholder for the stockfish suite. */
#include "tests.h"

int test_stockfish_register(void)
{
    return CU_add_suite("stockfish", NULL, NULL) ? CUE_SUCCESS : CU_get_error();
}
