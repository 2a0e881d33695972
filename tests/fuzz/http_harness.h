/* The HTTP side of the fuzz targets fuzz_http and fuzz_games: one framed
 * request run through routes_dispatch, as the server would run it, with the
 * answer checked. The request's headers come through its own header
 * callback, so a binary using it links without api/server.o. Framing:
 * "METHOD TARGET\n", "Name: value\n" header lines, an empty line, then the
 * body ("\r\n" works too; no empty line: no body). */
#ifndef CHESSD_TESTS_FUZZ_HTTP_HARNESS_H
#define CHESSD_TESTS_FUZZ_HTTP_HARNESS_H

#include <stddef.h>

#include "../../api/config.h"
#include "../../store/store.h"

/* Process set-up shared by the targets: rules tables, the token secret,
 * and the server's default config (CHESSD_* variables apply) with perft
 * depth limited to 2 and the Redis timeouts at 50 ms. */
void http_harness_init(config_t *cfg);

/* Runs the request framed in data[0..size) and checks the answer: status
 * 100-599 and not 500, valid UTF-8 JSON wherever the content type says JSON,
 * Allow on 405 and so on; a failed check aborts. Returns the status, or 0
 * when the input frames no request (empty, or a body over cfg->max_body).
 * With FUZZ_HTTP_PRINT set in the environment, each answer goes to stderr. */
unsigned http_harness_run(const char *data, size_t size, const config_t *cfg, store_t *store);

#endif
