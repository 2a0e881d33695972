/* Server configuration: every setting has a default, a command-line flag
 * and an environment variable (CHESSD_*); flags win over the environment. */
#ifndef CHESSD_API_CONFIG_H
#define CHESSD_API_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { CONFIG_MAX_MOVES = 1000, CONFIG_MAX_JSON_DEPTH = 16 };

typedef struct config {
    char bind[64];
    unsigned port;
    unsigned threads;
    size_t max_body;
    unsigned timeout_seconds;
    unsigned max_connections;
    unsigned per_ip_connections; /* 0: unlimited */
    unsigned max_perft_depth;
    unsigned shutdown_grace_seconds;
    char redis_url[256];
    unsigned redis_connect_timeout_ms;
    unsigned redis_timeout_ms;
    unsigned finished_game_ttl_seconds; /* 0: keep finished games forever */
    unsigned idempotency_ttl_seconds;
    unsigned max_game_plies;
    unsigned rate_limit_ip;     /* requests per second per client address; 0: off */
    unsigned rate_limit_token;  /* requests per second per player token; 0: off */
    unsigned rate_limit_burst;  /* bucket size; 0: one second's worth */
} config_t;

/* Fills cfg from defaults, then the environment, then argv (the arguments
 * after "serve"). On error writes a sentence to err and returns false. */
bool config_load(config_t *cfg, int argc, char **argv, char *err, size_t err_size);

/* Prints the flags, their variables and defaults. */
void config_usage(FILE *out);

#endif
