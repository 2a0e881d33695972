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

#endif
