/* The HTTP server: libmicrohttpd with an epoll thread pool, bounded bodies,
 * connections and time, one log line per request, graceful shutdown on
 * SIGTERM/SIGINT. */
#ifndef CHESSD_API_SERVER_H
#define CHESSD_API_SERVER_H

#include "config.h"

/* Serves until SIGTERM or SIGINT, then stops accepting, lets requests in
 * flight finish (up to the grace period) and returns 0; non-zero when the
 * server cannot start. */
int server_run(const config_t *cfg);

/* `chessd engine`: the computer's turns in stored games, without the public
 * API: only /healthz, /readyz and /metrics are served. Needs Redis and an
 * engine (2 when either is missing). /readyz is 503 engine_unavailable
 * while no engine runs. Otherwise as server_run. */
int server_run_engine(const config_t *cfg);

#endif
