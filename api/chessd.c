/* chessd's entry point: parses the command line and dispatches to a
 * subcommand (the rows of commands[]). The only file that knows main. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"
#include "perft_cli.h"
#include "config.h"
#include "keys_cli.h"
#include "play/play_cli.h"
#include "server.h"
#include "game/token_secret.h"
#include "version.h"

/* Every subcommand, for `chessd help` and for `chessd <command> --help` (or
 * -h, or `chessd help <command>`), which prints its row (and the serve options for serve) to stdout and
 * exits 0 whatever else the line holds. A new subcommand adds its row here
 * and its branch in main(); a row's summary lines are separated by '\n'. */
static const struct {
    const char *name, *synopsis, *summary;
    bool serve_options; /* its help ends with the serve options */
} commands[] = {
    { "serve", "serve [options]", "run the HTTP service (options below)", true },
    { "engine", "engine [options]",
      "play the computer's turns in games stored in Redis, without the public API\n(only /healthz, /readyz and "
      "/metrics; the serve options below)",
      true },
    { "perft", "perft [--variant V] DEPTH [FEN [MOVES...]]",
      "count leaf nodes; one '<uci> <count>' line per root\nmove, a blank line, then the total (perftree format);\n"
      "V is a variant's name (standard by default)",
      false },
    { "play", "play [options]",
      "play chess in a terminal: both sides, one against the computer\n(--level), or one side of a stored game (chessd play --help)",
      false },
    { "keys", "keys new NAME [SCOPE...]",
      "make a service key for --service-keys-file: print it once, then\nits line (NAME SCOPES QUOTAS SHA256); the scopes: games:create,\n"
      "games:bulk, games:export, games:read-live, analysis, admin;\n`chessd keys hash` prints the SHA-256 of a key read on stdin",
      false },
    { "version", "version", "print the version (also chessd -v, chessd --version)", false },
    { "help", "help [COMMAND]", "print this help (also chessd -h, chessd --help), or COMMAND's", false },
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

/* The summary, each line after the first indented to column `indent`. */
static void print_summary(FILE *out, const char *summary, int indent)
{
    for (const char *p = summary; *p; p++) {
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%*s", indent, "");
    }
    fputc('\n', out);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: chessd <command> [arguments]\n       chessd <command> --help\n\ncommands:\n");
    for (int i = 0; i < COMMAND_COUNT; i++) {
        fprintf(out, "  %-29s ", commands[i].synopsis);
        print_summary(out, commands[i].summary, 32);
    }
    fputc('\n', out);
    config_usage(out);
}

/* For a word that names no command: the usage and the commands on one line. */
static void short_usage(FILE *out)
{
    fprintf(out, "usage: chessd <command> [arguments]; commands:");
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, " %s", commands[i].name);
    fprintf(out, " (chessd help: what each does)\n");
}

/* Prints command name's help to stdout; false when name has no row. */
static bool print_command_help(const char *name)
{
    for (int i = 0; i < COMMAND_COUNT; i++) {
        if (strcmp(commands[i].name, name))
            continue;
        printf("usage: chessd %s\n\n", commands[i].synopsis);
        print_summary(stdout, commands[i].summary, 0);
        if (commands[i].serve_options) {
            putchar('\n');
            config_usage(stdout);
        }
        return true;
    }
    return false;
}

/* `chessd <name> ... --help`: true when name has a row and an argument after
 * it is --help or -h; its help is then printed to stdout. */
static bool command_help(const char *name, int argc, char **argv)
{
    bool asked = false;
    for (int i = 0; i < argc && !asked; i++)
        asked = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    return asked && print_command_help(name);
}

static int serve(int argc, char **argv, bool engine_only)
{
    config_t cfg;
    char err[256];
    const char *name = engine_only ? "engine" : "serve";
    if (!config_load(&cfg, argc, argv, err, sizeof err)) {
        fprintf(stderr, "chessd %s: %s\n", name, err);
        return 2;
    }
    /* Without Redis there are no games, so no player tokens: the secret is
     * only checked when one is given (a bad one should not wait for Redis to
     * be configured to be found). */
    const char *secret = getenv("CHESSD_TOKEN_SECRET");
    if ((config_redis_enabled(&cfg) || (secret && *secret)) && !token_secret_init(secret, err, sizeof err)) {
        fprintf(stderr, "chessd %s: %s; not starting\n", name, err);
        return 2;
    }
    return engine_only ? server_run_engine(&cfg) : server_run(&cfg);
}

int main(int argc, char **argv)
{
    rules_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *command = argv[1];
    if (!strcmp(command, "play")) /* before command_help: it prints its own, longer usage for --help */
        return play_cli_main(argc - 2, argv + 2);
    if (command_help(command, argc - 2, argv + 2))
        return 0;
    if (!strcmp(command, "serve") || !strcmp(command, "engine"))
        return serve(argc - 2, argv + 2, !strcmp(command, "engine"));
    if (!strcmp(command, "perft"))
        return cli_perft(argc - 2, argv + 2, stdout, stderr);
    if (!strcmp(command, "keys"))
        return keys_cli_main(argc - 2, argv + 2, stdin, stdout, stderr);
    if (!strcmp(command, "version") || !strcmp(command, "--version") || !strcmp(command, "-v")) {
        printf("chessd %s\n", CHESSD_VERSION);
        return 0;
    }
    if (!strcmp(command, "help") && argc > 2) { /* chessd help COMMAND */
        if (!strcmp(argv[2], "play")) { /* as chessd play --help */
            char *help[] = { "--help", NULL };
            return play_cli_main(1, help);
        }
        if (print_command_help(argv[2]))
            return 0;
        command = argv[2];
    } else if (!strcmp(command, "help") || !strcmp(command, "--help") || !strcmp(command, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "chessd: unknown command '%s'\n", command);
    /* A word is a command misspelt: one line of commands. An option in its
     * place (chessd --port 80) was meant for serve: the usage with serve's options. */
    if (command[0] == '-')
        usage(stderr);
    else
        short_usage(stderr);
    return 2;
}
