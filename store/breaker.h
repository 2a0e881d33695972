/* The breaker (store_config_t.breaker): the health of each Redis node as
 * the store last saw it, and whether a command may be sent to one held
 * down. It keeps state only: the store tells it what each connection and
 * command found, and logs and connects itself. Safe on any thread. */
#ifndef CHESSD_STORE_BREAKER_H
#define CHESSD_STORE_BREAKER_H

#include <stdbool.h>

#include "cluster.h"
#include "store.h"

typedef struct breaker breaker_t;

/* A breaker that holds nodes down (on) or only watches (off: nothing is
 * ever marked down); retry_ms as store_config_t.breaker_retry_ms. NULL when
 * memory runs out. Free with breaker_free (NULL is fine). */
breaker_t *breaker_new(bool on, unsigned retry_ms);
void breaker_free(breaker_t *b);

bool breaker_is_on(const breaker_t *b);

/* fn(ctx) is called, with no lock held, each time a node is marked down
 * (store_on_down). */
void breaker_on_down(breaker_t *b, void (*fn)(void *ctx), void *ctx);

/* Marks node down for fault, with reason (which must hold no password).
 * STORE_FAULT_NONE (this process out of descriptors or memory) marks
 * nothing: Redis is not at fault. refused_quickly: a connection refused at
 * once, which a command may try again (breaker_allows). True when the node
 * was up before (the caller logs it), after the on_down call. */
bool breaker_down(breaker_t *b, const cluster_node_t *node, store_fault_t fault, const char *reason,
                  bool refused_quickly);

/* Marks node up (it answered); true when it was down. Cheap (one atomic)
 * while no node is down. */
bool breaker_up(breaker_t *b, const cluster_node_t *node);

/* Whether a command may be sent to node now: yes while it is up. While it
 * is down, only as a trial once every retry_ms (when that is not 0), or
 * when its latest failure was a connection refused at once: trying again
 * costs what failing at once does. */
bool breaker_allows(breaker_t *b, const cluster_node_t *node);

/* Whether node is not held down (no trial is taken). */
bool breaker_is_up(breaker_t *b, const cluster_node_t *node);

/* Whether any node is held down (one atomic). */
bool breaker_any_down(breaker_t *b);

/* Copies up to max nodes held down into out; how many. */
unsigned breaker_down_nodes(breaker_t *b, cluster_node_t *out, unsigned max);

/* Marks up every node held down that is neither one of a cluster's
 * masters nor one of its seeds: a node replaced (a pod back with a new
 * address) or forgotten would else be held down, and probed, for ever. */
void breaker_forget_unknown(breaker_t *b, const cluster_node_t *masters, unsigned master_count,
                            const cluster_node_t *seeds, unsigned seed_count);

/* What the last probe found wrong beyond a node being away (a Cluster not
 * serving every slot), told by breaker_health while every node is up;
 * STORE_FAULT_NONE when nothing. */
void breaker_set_probe_fault(breaker_t *b, store_fault_t fault, const char *reason);

/* store_health: the first node held down, else the probe's fault. */
void breaker_health(breaker_t *b, store_health_t *out);

/* Nodes a breaker keeps: a cluster's masters and replicas; past it, the
 * entry of a node that is up is reused. */
enum { BREAKER_NODES = 64 };

#endif
