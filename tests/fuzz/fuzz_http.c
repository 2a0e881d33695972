/* libFuzzer target for the HTTP layer: one whole request (framed as
 * http_harness.h says) through routes_dispatch, the handler code the server
 * runs. The store is on a Redis URL where nothing listens: game routes get
 * as far as the store (then 503), everything else runs in full.
 * http_harness.c checks every answer; ASan/LSan catch leaks and bad memory. */
#include <stdio.h>

#include "../../api/config.h"
#include "../../store/store.h"
#include "fuzz.h"
#include "http_harness.h"

static config_t config;
static store_t *store;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    http_harness_init(&config);
    /* Nothing listens on port 1: every store call fails at once (503). */
    store_config_t store_cfg = { .url = "redis://127.0.0.1:1/0", .connect_timeout_ms = 50, .command_timeout_ms = 50 };
    char err[256];
    store = store_open(&store_cfg, err, sizeof err);
    FUZZ_CHECK(store != NULL, "store_open: %s", err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    http_harness_run((const char *)data, size, &config, store);
    return 0;
}
