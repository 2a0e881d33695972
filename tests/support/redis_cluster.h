/* A private Redis Cluster for test suites: M masters with R replicas each,
 * redis-server children (redis_server.h) with cluster mode on, their config
 * and logs in one temporary directory, joined by `redis-cli --cluster create`.
 * Nodes listen on 127.0.0.1 at free ports in 20000-45000 whose bus port
 * (+10000) is free too. The owner must call redis_cluster_stop, which kills
 * every node and removes the directory; on failure the reason is in c->error. */
#ifndef CHESSD_TESTS_SUPPORT_REDIS_CLUSTER_H
#define CHESSD_TESTS_SUPPORT_REDIS_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#include "../../store/cluster.h"
#include "redis_server.h"

enum {
    REDIS_CLUSTER_NODES_MAX = 32,
    REDIS_CLUSTER_ID_SIZE = 41, /* a node id: 40 hex digits and the NUL */
    REDIS_CLUSTER_PATH_SIZE = 128,
};

typedef struct {
    unsigned masters;             /* 3 when 0 */
    unsigned replicas_per_master; /* 0 for none */
    unsigned node_timeout_ms;     /* cluster-node-timeout; 1000 when 0 (small: failovers come fast) */
} redis_cluster_options_t;

typedef struct {
    redis_server_t server;            /* server.port; server.pid is 0 once the node is killed */
    bool master;                      /* its role at the last redis_cluster_refresh */
    char id[REDIS_CLUSTER_ID_SIZE];   /* its node id */
    int master_index;                 /* a replica's master in nodes[]; -1 for a master */
    /* What its redis-server arguments point at (server.extra_args). */
    char dir[REDIS_CLUSTER_PATH_SIZE];
    char config_file[REDIS_CLUSTER_PATH_SIZE];
    char log_file[REDIS_CLUSTER_PATH_SIZE];
    char node_timeout[16];
    const char *args[16];
} redis_cluster_node_t;

typedef struct {
    redis_cluster_node_t nodes[REDIS_CLUSTER_NODES_MAX]; /* the first `masters` were created as masters */
    unsigned node_count;
    char dir[REDIS_CLUSTER_PATH_SIZE]; /* the temporary directory; "" when none */
    char error[1024];                  /* why the last call failed */
} redis_cluster_t;

/* Starts the nodes, joins them (masters share the slots evenly, each with
 * its replicas) and waits up to 30 s until redis_cluster_wait_ok. False, with
 * c->error set and nothing left running, when a node or redis-cli (found as
 * CHESSD_REDIS_CLI or redis-cli on PATH) fails. c is overwritten. */
bool redis_cluster_start(redis_cluster_t *c, const redis_cluster_options_t *options);

/* SIGKILLs every node still running and removes the temporary directory.
 * Safe on a zeroed or stopped cluster. */
void redis_cluster_stop(redis_cluster_t *c);

/* Waits up to timeout_ms until every running node reports cluster_state:ok,
 * all of them tell the same story by CLUSTER NODES (the master serving each
 * slot, none of them a killed node; the role and master of every running
 * node) and every running replica has its link to its master up; then
 * refreshes the roles. False, with c->error set, on timeout. */
bool redis_cluster_wait_ok(redis_cluster_t *c, unsigned timeout_ms);

/* Reads roles, ids and masters of c->nodes from the CLUSTER NODES of the
 * first running node. False when it cannot be read. */
bool redis_cluster_refresh(redis_cluster_t *c);

/* "redis+cluster://127.0.0.1:<port>,..." of the running masters (roles of
 * the last refresh) into buf. */
void redis_cluster_url(const redis_cluster_t *c, char *buf, size_t size);

/* Runs one command (hiredis format) on node `index` over a new connection;
 * its reply (caller frees with freeReplyObject), or NULL. */
redisReply *redis_cluster_command(const redis_cluster_t *c, unsigned index, const char *format, ...);

/* The index in c->nodes of the node on port, or -1. */
int redis_cluster_find_port(const redis_cluster_t *c, int port);

/* For each slot, the port of the master serving it by node `index`'s CLUSTER
 * NODES (0 when none); slots being migrated count for their current owner.
 * False when that cannot be read. */
bool redis_cluster_slot_owners(const redis_cluster_t *c, unsigned index, int owner_port[CLUSTER_SLOT_COUNT]);

/* SIGKILLs node `index` (a crash: no shutdown). */
void redis_cluster_kill(redis_cluster_t *c, unsigned index);

/* CLUSTER FAILOVER on replica `index` (its master must be up), then waits up
 * to timeout_ms until it is a master and redis_cluster_wait_ok. False, with
 * c->error set, when it is not a replica or does not take over in time. */
bool redis_cluster_failover(redis_cluster_t *c, unsigned index, unsigned timeout_ms);

#endif
