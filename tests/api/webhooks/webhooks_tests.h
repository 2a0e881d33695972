/* The webhooks suite's parts: each test file of tests/api/webhooks/ adds its
 * tests (for allow.c, sign.c and send.c) to the one suite that
 * test_webhooks.c registers. */
#ifndef CHESSD_TESTS_API_WEBHOOKS_WEBHOOKS_TESTS_H
#define CHESSD_TESTS_API_WEBHOOKS_WEBHOOKS_TESTS_H

#include <CUnit/CUnit.h>

void webhooks_allow_tests_add(CU_pSuite suite);
void webhooks_sign_tests_add(CU_pSuite suite);
void webhooks_send_tests_add(CU_pSuite suite);

/* The send tests' receivers and certificate, made once for the suite. */
int webhooks_send_setup(void);
int webhooks_send_teardown(void);

#endif
