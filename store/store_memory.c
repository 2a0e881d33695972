/* store_memory_read() of store.h: Redis's maxmemory-policy, maxmemory and
 * used_memory, from every node that holds games. CONFIG GET first; managed
 * services often refuse or rename CONFIG, so INFO memory (which says the
 * same) where it fails. Nothing here writes, so a full Redis answers all of
 * it; a text Redis sends is kept only when it looks like a policy's name. */
#include "store.h"
#include "store_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

/* What one node said. */
typedef struct {
    char policy[STORE_MEMORY_POLICY_SIZE]; /* "" when neither CONFIG nor INFO said */
    uint64_t maxmemory, used;
    bool has_maxmemory, has_used;
} node_memory_t;

/* A policy's name as Redis spells them (lower case, digits, '-'). */
static bool policy_ok(const char *text, size_t length)
{
    if (length == 0 || length >= STORE_MEMORY_POLICY_SIZE)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= '0' && text[i] <= '9') || text[i] == '-'))
            return false;
    return true;
}

/* A byte count in decimal, all of text. */
static bool read_bytes(const char *text, size_t length, uint64_t *out)
{
    char digits[24], *end;
    if (length == 0 || length >= sizeof digits || text[0] < '0' || text[0] > '9')
        return false;
    memcpy(digits, text, length);
    digits[length] = '\0';
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

/* The value of field in an INFO text ("field:value\r\n" lines): *value
 * and *length; false when it is not there. */
static bool info_field(const char *info, size_t info_length, const char *field, const char **value, size_t *length)
{
    size_t n = strlen(field);
    const char *p = info, *end = info + info_length;
    while (p < end) {
        const char *stop = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = stop ? stop : end;
        if (line_end > p && line_end[-1] == '\r')
            line_end--;
        if ((size_t)(line_end - p) > n && !memcmp(p, field, n) && p[n] == ':') {
            *value = p + n + 1;
            *length = (size_t)(line_end - p - (ptrdiff_t)n - 1);
            return true;
        }
        p = stop ? stop + 1 : end;
    }
    return false;
}

/* CONFIG GET name on the node of slot: the value's reply element copied
 * to out (NUL added) when Redis gave one. *answered: a reply came at all
 * (an error, CONFIG being refused, is one). */
static bool config_get(store_t *store, unsigned slot, const char *name, char *out, size_t size, bool *answered)
{
    const char *argv[] = { "CONFIG", "GET", name };
    redisReply *r = store_command(store, slot, 3, argv, NULL, NULL);
    *answered = r != NULL;
    bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING
              && r->element[1]->len < size;
    if (ok) {
        memcpy(out, r->element[1]->str, r->element[1]->len);
        out[r->element[1]->len] = '\0';
    }
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Reads one node (the one serving slot). False when it did not answer. */
static bool read_node(store_t *store, unsigned slot, node_memory_t *m)
{
    memset(m, 0, sizeof *m);
    char text[STORE_MEMORY_POLICY_SIZE];
    bool answered;
    if (config_get(store, slot, "maxmemory-policy", text, sizeof text, &answered) && policy_ok(text, strlen(text)))
        memcpy(m->policy, text, strlen(text) + 1);
    if (!answered)
        return false;
    if (config_get(store, slot, "maxmemory", text, sizeof text, &answered))
        m->has_maxmemory = read_bytes(text, strlen(text), &m->maxmemory);
    const char *argv[] = { "INFO", "memory" };
    redisReply *r = store_command(store, slot, 2, argv, NULL, NULL);
    if (!r)
        return false;
    const char *value;
    size_t length;
    if (r->type == REDIS_REPLY_STRING) {
        if (!m->policy[0] && info_field(r->str, r->len, "maxmemory_policy", &value, &length) && policy_ok(value, length)) {
            memcpy(m->policy, value, length);
            m->policy[length] = '\0';
        }
        if (!m->has_maxmemory && info_field(r->str, r->len, "maxmemory", &value, &length))
            m->has_maxmemory = read_bytes(value, length, &m->maxmemory);
        if (info_field(r->str, r->len, "used_memory", &value, &length))
            m->has_used = read_bytes(value, length, &m->used);
    }
    freeReplyObject(r);
    return true;
}

/* Folds node's reading into out: the first node not at noeviction is the
 * one reported. */
static void take_node(store_memory_t *out, const node_memory_t *m, const char *name)
{
    const char *policy = m->policy[0] ? m->policy : "unknown";
    bool evicts = strcmp(policy, "noeviction") != 0;
    bool reported_evicts = out->nodes > 0 && strcmp(out->policy, "noeviction") != 0;
    if (out->nodes == 0 || (evicts && !reported_evicts)) {
        snprintf(out->policy, sizeof out->policy, "%s", policy);
        out->maxmemory = m->has_maxmemory ? m->maxmemory : 0;
        snprintf(out->node, sizeof out->node, "%s", name);
    }
    /* Room unless a node is known to use its maxmemory up. */
    if (m->has_maxmemory && m->maxmemory > 0 && (!m->has_used || m->used >= m->maxmemory))
        out->room = false;
    out->nodes++;
}

store_status_t store_memory_read(store_t *store, store_memory_t *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->policy, sizeof out->policy, "unknown");
    out->room = true;
    int64_t began = clock_now_ms();
    node_memory_t m;
    if (!store_is_cluster(store)) {
        if (!read_node(store, 0, &m))
            return STORE_EUNAVAILABLE;
        take_node(out, &m, "");
    } else {
        cluster_map_t *map = malloc(sizeof *map); /* large: not on the stack */
        if (!map || !store_cluster_map(store, map)) {
            free(map);
            return STORE_EUNAVAILABLE;
        }
        bool all = true;
        for (unsigned i = 0; i < map->node_count; i++) {
            unsigned slot = 0;
            while (slot < CLUSTER_SLOT_COUNT && map->slot_node[slot] != i)
                slot++;
            if (slot == CLUSTER_SLOT_COUNT)
                continue; /* a master serving no slot holds no game */
            char name[STORE_MEMORY_NODE_SIZE];
            bool v6 = strchr(map->nodes[i].host, ':') != NULL;
            snprintf(name, sizeof name, "%s%.*s%s:%d", v6 ? "[" : "", (int)(sizeof name - 20), map->nodes[i].host,
                     v6 ? "]" : "", map->nodes[i].port);
            if (read_node(store, slot, &m))
                take_node(out, &m, name);
            else
                all = false;
        }
        free(map);
        if (!all || out->nodes == 0)
            return STORE_EUNAVAILABLE;
    }
    if (out->room)
        store_full_clear(store, began);
    return STORE_OK;
}
