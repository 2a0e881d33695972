/* chessd's entry point: parses the command line and dispatches to a
 * subcommand ("serve", "perft", "version"). The only file that knows main. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"
#include "cli.h"
#include "config.h"
#include "play_cli.h"
#include "server.h"
#include "token_secret.h"
#include "version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chessd <command> [arguments]\n"
            "\n"
            "commands:\n"
            "  serve [options]               run the HTTP service (options below)\n"
            "  perft DEPTH [FEN [MOVES...]]  count leaf nodes; one '<uci> <count>' line per root\n"
            "                                move, a blank line, then the total (perftree format)\n"
            "  play [options]                play chess in a terminal (chessd play --help)\n"
            "  version                       print the version\n"
            "  help                          print this help\n\n");
    config_usage(out);
}

static int serve(int argc, char **argv)
{
    config_t cfg;
    char err[256];
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { /* README: `chessd serve --help` */
            config_usage(stdout);
            return 0;
        }
    }
    if (!config_load(&cfg, argc, argv, err, sizeof err)) {
        fprintf(stderr, "chessd serve: %s\n", err);
        return 2;
    }
    /* Without Redis there are no games, so no player tokens: the secret is
     * only checked when one is given (a bad one should not wait for Redis to
     * be configured to be found). */
    const char *secret = getenv("CHESSD_TOKEN_SECRET");
    if ((config_redis_enabled(&cfg) || (secret && *secret)) && !token_secret_init(secret, err, sizeof err)) {
        fprintf(stderr, "chessd serve: %s; not starting\n", err);
        return 2;
    }
    return server_run(&cfg);
}

int main(int argc, char **argv)
{
    rules_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *command = argv[1];
    if (!strcmp(command, "serve"))
        return serve(argc - 2, argv + 2);
    if (!strcmp(command, "perft"))
        return cli_perft(argc - 2, argv + 2, stdout, stderr);
    if (!strcmp(command, "play"))
        return play_cli_main(argc - 2, argv + 2);
    if (!strcmp(command, "version") || !strcmp(command, "--version")) {
        printf("chessd %s\n", CHESSD_VERSION);
        return 0;
    }
    if (!strcmp(command, "help") || !strcmp(command, "--help") || !strcmp(command, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "chessd: unknown command '%s'\n", command);
    usage(stderr);
    return 2;
}
