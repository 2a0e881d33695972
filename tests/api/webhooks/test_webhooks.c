/* The CUnit suite "webhooks": the destination policy, the signatures and
 * the delivery of api/webhooks/, one suite over three test files. Its setup
 * makes a self-signed certificate for the https receiver. */
#include "../../support/tests.h"
#include "webhooks_tests.h"

int test_webhooks_register(void)
{
    CU_pSuite suite = CU_add_suite("webhooks", webhooks_send_setup, webhooks_send_teardown);
    if (!suite)
        return -1;
    webhooks_allow_tests_add(suite);
    webhooks_sign_tests_add(suite);
    webhooks_send_tests_add(suite);
    return CU_get_error();
}
