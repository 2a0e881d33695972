/* The set-up shared by the store suites that run one set of tests twice, on
 * a private redis-server and on a private Redis Cluster (deadlines,
 * engine_jobs): the Redis, a store open on it, SIGPIPE ignored meanwhile.
 * The suite owns its redis_fixture_t; the fixture owns the rest until
 * redis_fixture_stop. A start that fails leaves nothing running. */
#ifndef CHESSD_TESTS_SUPPORT_REDIS_FIXTURE_H
#define CHESSD_TESTS_SUPPORT_REDIS_FIXTURE_H

#include <signal.h>
#include <stdbool.h>

#include "../../store/store.h"
#include "redis_cluster.h"
#include "redis_server.h"

enum { REDIS_FIXTURE_MASTERS = 3 };

typedef struct {
    bool on_cluster;         /* which of server and cluster runs */
    redis_server_t server;   /* the redis-server, when not on_cluster */
    redis_cluster_t cluster; /* REDIS_FIXTURE_MASTERS masters, no replicas, when on_cluster */
    store_t *store;          /* open on it from the start to the stop; NULL otherwise */
    struct sigaction saved_sigpipe_action;
} redis_fixture_t;

/* Ignores SIGPIPE (as the server does: a dead peer is an error value),
 * starts a private redis-server and opens a store on it with connect and
 * command timeouts of timeout_ms. Returns f->store, or NULL with the reason
 * on stderr under suite's name, nothing running and SIGPIPE as it was. */
store_t *redis_fixture_start_server(redis_fixture_t *f, const char *suite, unsigned timeout_ms);

/* The same on a Redis Cluster of REDIS_FIXTURE_MASTERS masters and no
 * replicas. Its node timeout (15 s) is far above any test's pause of a
 * master, so a frozen master is never failed over, nor the cluster marked
 * down. */
store_t *redis_fixture_start_cluster(redis_fixture_t *f, const char *suite, unsigned timeout_ms);

/* Closes the store, stops the server or the cluster and puts SIGPIPE's
 * action back. */
void redis_fixture_stop(redis_fixture_t *f);

#endif
