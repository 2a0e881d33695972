/* The Redis URL of store.h's store_config_t, taken apart: scheme (TLS or
 * not, one node or a Cluster), the nodes, the database, and the user and
 * password percent-decoded (credentials.h). No reason written here holds a
 * credential. */
#ifndef CHESSD_STORE_URL_H
#define CHESSD_STORE_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "cluster.h"

enum { URL_SEEDS_MAX = 16, URL_USER_SIZE = 256, URL_PASSWORD_SIZE = 1024 };

typedef struct {
    bool tls;       /* rediss:// or rediss+cluster:// */
    bool cluster;   /* redis+cluster:// or rediss+cluster:// */
    cluster_node_t seeds[URL_SEEDS_MAX]; /* one node, or a cluster's seed nodes */
    unsigned seed_count;
    int db;
    char user[URL_USER_SIZE];
    char password[URL_PASSWORD_SIZE];
    bool user_only; /* credentials of a user without a ':' (the password given apart) */
} url_t;

/* Splits redis[s][+cluster]://[[user]:password@]host[:port][,host[:port]...][/db]
 * into *out (cleared first). False, with the reason in err, on anything else:
 * the syntax of store_config_t.url, at most URL_SEEDS_MAX nodes, a cluster's
 * database only 0. Wipe out->password after use. */
bool url_parse(const char *text, url_t *out, char *err, size_t err_size);

#endif
