/* See breaker.h. The nodes seen to fail are kept under one lock; a count
 * of those held down is kept apart, so that while all is well a command
 * reads one atomic and takes no lock. */
#include "breaker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

/* A node's health as the breaker knows it. */
typedef struct {
    cluster_node_t node;
    bool down;
    store_fault_t fault;
    char reason[320];
    int64_t trial_ms; /* monotonic ms when a command was last let through to it while down */
    bool refused_quickly; /* the latest failure: a connection that failed at once (refused, no route) */
} node_health_t;

struct breaker {
    bool on;
    unsigned retry_ms;
    pthread_mutex_t lock;
    node_health_t health[BREAKER_NODES];
    unsigned health_count;
    atomic_uint down_nodes;
    void (*on_down)(void *ctx);
    void *on_down_ctx;
    store_fault_t probe_fault;
    char probe_reason[320];
};

breaker_t *breaker_new(bool on, unsigned retry_ms)
{
    breaker_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->on = on;
    b->retry_ms = retry_ms;
    pthread_mutex_init(&b->lock, NULL);
    return b;
}

void breaker_free(breaker_t *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

bool breaker_is_on(const breaker_t *b) { return b->on; }

void breaker_on_down(breaker_t *b, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&b->lock);
    b->on_down = fn;
    b->on_down_ctx = ctx;
    pthread_mutex_unlock(&b->lock);
}

static bool same_node(const cluster_node_t *a, const cluster_node_t *b)
{
    return a->port == b->port && !strcmp(a->host, b->host);
}

/* node's entry, or NULL. Under the lock. */
static node_health_t *health_entry(breaker_t *b, const cluster_node_t *node)
{
    for (unsigned i = 0; i < b->health_count; i++)
        if (same_node(&b->health[i].node, node))
            return &b->health[i];
    return NULL;
}

/* node's entry, else a new one, else that of a node that is up; NULL when
 * every entry holds a node down. Under the lock. */
static node_health_t *health_entry_for(breaker_t *b, const cluster_node_t *node)
{
    node_health_t *h = health_entry(b, node);
    for (unsigned i = 0; !h && i < BREAKER_NODES; i++) {
        if (i == b->health_count)
            h = &b->health[b->health_count++];
        else if (!b->health[i].down)
            h = &b->health[i];
    }
    return h;
}

bool breaker_down(breaker_t *b, const cluster_node_t *node, store_fault_t fault, const char *reason,
                  bool refused_quickly)
{
    if (!b->on || fault == STORE_FAULT_NONE)
        return false;
    pthread_mutex_lock(&b->lock);
    node_health_t *h = health_entry_for(b, node);
    bool was_down = h && h->down;
    void (*wake)(void *) = b->on_down;
    void *wake_ctx = b->on_down_ctx;
    if (h) {
        if (!h->down)
            atomic_fetch_add(&b->down_nodes, 1);
        h->node = *node;
        h->down = true;
        h->fault = fault;
        snprintf(h->reason, sizeof h->reason, "%s", reason);
        h->trial_ms = clock_now_ms();
        h->refused_quickly = refused_quickly;
    }
    pthread_mutex_unlock(&b->lock);
    bool newly = h && !was_down;
    if (newly && wake)
        wake(wake_ctx); /* the probe runs now, not at its next turn */
    return newly;
}

/* Marks an entry up. Under the lock. */
static void mark_up(breaker_t *b, node_health_t *h)
{
    h->down = false;
    h->fault = STORE_FAULT_NONE;
    atomic_fetch_sub(&b->down_nodes, 1);
}

bool breaker_up(breaker_t *b, const cluster_node_t *node)
{
    if (!atomic_load(&b->down_nodes))
        return false;
    pthread_mutex_lock(&b->lock);
    node_health_t *h = health_entry(b, node);
    bool was_down = h && h->down;
    if (was_down)
        mark_up(b, h);
    pthread_mutex_unlock(&b->lock);
    return was_down;
}

/* Whether node is up or, with trials, one may be sent to it now (see
 * breaker_allows). */
static bool passes(breaker_t *b, const cluster_node_t *node, bool trials)
{
    if (!atomic_load(&b->down_nodes))
        return true;
    pthread_mutex_lock(&b->lock);
    node_health_t *h = health_entry(b, node);
    bool allowed = !h || !h->down || (trials && h->refused_quickly);
    if (!allowed && trials && b->retry_ms) {
        int64_t now = clock_now_ms();
        if (now - h->trial_ms >= (int64_t)b->retry_ms) {
            h->trial_ms = now;
            allowed = true;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return allowed;
}

bool breaker_allows(breaker_t *b, const cluster_node_t *node) { return passes(b, node, true); }

bool breaker_is_up(breaker_t *b, const cluster_node_t *node) { return passes(b, node, false); }

bool breaker_any_down(breaker_t *b) { return atomic_load(&b->down_nodes) != 0; }

unsigned breaker_down_nodes(breaker_t *b, cluster_node_t *out, unsigned max)
{
    unsigned count = 0;
    pthread_mutex_lock(&b->lock);
    for (unsigned i = 0; i < b->health_count && count < max; i++)
        if (b->health[i].down)
            out[count++] = b->health[i].node;
    pthread_mutex_unlock(&b->lock);
    return count;
}

/* Whether node is one of the count in nodes. */
static bool among(const cluster_node_t *node, const cluster_node_t *nodes, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        if (same_node(&nodes[i], node))
            return true;
    return false;
}

void breaker_forget_unknown(breaker_t *b, const cluster_node_t *masters, unsigned master_count,
                            const cluster_node_t *seeds, unsigned seed_count)
{
    pthread_mutex_lock(&b->lock);
    for (unsigned i = 0; i < b->health_count; i++) {
        node_health_t *h = &b->health[i];
        if (h->down && !among(&h->node, masters, master_count) && !among(&h->node, seeds, seed_count))
            mark_up(b, h);
    }
    pthread_mutex_unlock(&b->lock);
}

void breaker_set_probe_fault(breaker_t *b, store_fault_t fault, const char *reason)
{
    pthread_mutex_lock(&b->lock);
    b->probe_fault = fault;
    snprintf(b->probe_reason, sizeof b->probe_reason, "%s", reason);
    pthread_mutex_unlock(&b->lock);
}

void breaker_health(breaker_t *b, store_health_t *out)
{
    memset(out, 0, sizeof *out);
    out->up = true;
    pthread_mutex_lock(&b->lock);
    for (unsigned i = 0; i < b->health_count && out->up; i++) {
        if (b->health[i].down) {
            out->up = false;
            out->fault = b->health[i].fault;
            snprintf(out->reason, sizeof out->reason, "%s", b->health[i].reason);
        }
    }
    if (out->up && b->probe_fault != STORE_FAULT_NONE) {
        out->up = false;
        out->fault = b->probe_fault;
        snprintf(out->reason, sizeof out->reason, "%s", b->probe_reason);
    }
    pthread_mutex_unlock(&b->lock);
}
