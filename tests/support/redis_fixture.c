/* A store on a private redis-server or Redis Cluster for a suite's init
 * and cleanup (see redis_fixture.h). */
#include "redis_fixture.h"

#include <stdio.h>

enum { CLUSTER_NODE_TIMEOUT_MS = 15000 };

static void ignore_sigpipe(redis_fixture_t *f)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &f->saved_sigpipe_action);
}

static void restore_sigpipe(const redis_fixture_t *f) { sigaction(SIGPIPE, &f->saved_sigpipe_action, NULL); }

store_t *redis_fixture_start_server(redis_fixture_t *f, const char *suite, unsigned timeout_ms)
{
    ignore_sigpipe(f);
    f->on_cluster = false;
    f->store = NULL;
    redis_server_init(&f->server);
    if (!redis_server_start(&f->server)) {
        fprintf(stderr, "\n%s suite: cannot start a private redis-server: %s\n", suite, f->server.error);
        restore_sigpipe(f);
        return NULL;
    }
    char url[64];
    redis_server_url(&f->server, url, sizeof url);
    if (!(f->store = redis_server_open_store(url, timeout_ms))) {
        redis_server_stop(&f->server);
        restore_sigpipe(f);
    }
    return f->store;
}

store_t *redis_fixture_start_cluster(redis_fixture_t *f, const char *suite, unsigned timeout_ms)
{
    ignore_sigpipe(f);
    f->on_cluster = true;
    f->store = NULL;
    redis_cluster_options_t options = {
        .masters = REDIS_FIXTURE_MASTERS,
        .replicas_per_master = 0,
        .node_timeout_ms = CLUSTER_NODE_TIMEOUT_MS,
    };
    if (!redis_cluster_start(&f->cluster, &options)) {
        fprintf(stderr, "\n%s suite: cannot start a Redis Cluster: %s\n", suite, f->cluster.error);
        f->on_cluster = false;
        restore_sigpipe(f);
        return NULL;
    }
    char url[512];
    redis_cluster_url(&f->cluster, url, sizeof url);
    if (!(f->store = redis_server_open_store(url, timeout_ms))) {
        redis_cluster_stop(&f->cluster);
        f->on_cluster = false;
        restore_sigpipe(f);
    }
    return f->store;
}

void redis_fixture_stop(redis_fixture_t *f)
{
    store_close(f->store);
    f->store = NULL;
    if (f->on_cluster)
        redis_cluster_stop(&f->cluster);
    else
        redis_server_stop(&f->server);
    f->on_cluster = false;
    restore_sigpipe(f);
}
