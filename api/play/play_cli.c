/* The command line of `chessd play` (see play_cli.h): its options, its
 * usage, and the choice between the local session (play.h) and the remote
 * one (play_remote.h). */
#include "play_cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rules/chess960.h"
#include "../../rules/rules.h"
#include "../config.h"
#include "play.h"
#include "play_remote.h"
#include "../game/tokens.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chessd play [--fen FEN | --chess960-position N | --chess960] [--ascii | --unicode] [--flip]\n"
            "                   [--max-plies N]\n"
            "       chessd play --server URL --game ID [--token TOKEN] [--ca-file PEM] [--ascii | --unicode]\n"
            "                   [--flip]\n"
            "\n"
            "Plays chess in a terminal. Alone, it plays both sides from the start position or\n"
            "from --fen; with --server it plays one side of a stored game through the HTTP\n"
            "API (the side the player token belongs to), showing the opponent's moves as\n"
            "they arrive on the game's event stream.\n"
            "\n"
            "  --fen FEN        start from this position (a Chess960 castling field is recognised)\n"
            "  --chess960       read the FEN's castling as Chess960; without --fen, a random\n"
            "                   Chess960 start\n"
            "  --chess960-position N  Chess960 start N (0-959, Scharnagl numbering; 518 is the\n"
            "                   standard position)\n"
            "  --ascii          letters for the pieces (the default unless stdout is a terminal\n"
            "                   and LC_ALL, LC_CTYPE or LANG names UTF-8)\n"
            "  --unicode        Unicode pieces even when the output is not a terminal\n"
            "  --flip           Black at the bottom\n"
            "  --max-plies N    the most plies the game may have (default: as --max-game-plies)\n"
            "  --server URL     a chessd server, http://host[:port][/path] or https://...\n"
            "  --ca-file PEM    the CAs to trust for https (default: the system's)\n"
            "  --game ID        the stored game's id\n"
            "  --token TOKEN    the player's token (or CHESSD_PLAY_TOKEN); never printed\n"
            "\n"
            "Type a move in SAN or UCI (e4, Nf3, e7e8q, O-O), or a command:\n");
    play_print_help(out, true);
}

/* ---- the command line ---- */

/* The value of option `name` at argv[*i] ("--name VALUE" or "--name=VALUE"),
 * advancing *i; NULL when argv[*i] is another option. *missing is set when
 * it is this option without a value. */
static char *option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/* Copies a secret argument into copy and blanks it in argv, so that it no
 * longer shows in the process list (/proc/PID/cmdline) once read; a secret
 * too long for copy is left to the remote mode to refuse. */
static const char *hide(char *arg, char *copy, size_t size)
{
    size_t n = strlen(arg);
    if (n >= size)
        return arg;
    memcpy(copy, arg, n + 1);
    memset(arg, 'x', n);
    return copy;
}

int play_cli_main(int argc, char **argv)
{
    const char *fen = NULL, *server = NULL, *game_id = NULL, *token = NULL, *max_plies = NULL, *ca_file = NULL,
               *number = NULL;
    char token_copy[1024];
    /* --help or -h anywhere: the usage, whatever else the line holds (as every subcommand) */
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
    }
    bool chess960 = false, ascii = false, unicode = false, flip = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        char *v;
        bool missing = false;
        if (!strcmp(a, "--chess960"))
            chess960 = true;
        else if (!strcmp(a, "--ascii"))
            ascii = true;
        else if (!strcmp(a, "--unicode"))
            unicode = true;
        else if (!strcmp(a, "--flip"))
            flip = true;
        else if ((v = option_value(argc, argv, &i, "--fen", &missing)))
            fen = v;
        else if ((v = option_value(argc, argv, &i, "--server", &missing)))
            server = v;
        else if ((v = option_value(argc, argv, &i, "--game", &missing)))
            game_id = v;
        else if ((v = option_value(argc, argv, &i, "--token", &missing)))
            token = hide(v, token_copy, sizeof token_copy);
        else if ((v = option_value(argc, argv, &i, "--max-plies", &missing)))
            max_plies = v;
        else if ((v = option_value(argc, argv, &i, "--ca-file", &missing)))
            ca_file = v;
        else if ((v = option_value(argc, argv, &i, "--chess960-position", &missing)))
            number = v;
        else {
            if (missing)
                fprintf(stderr, "chessd play: %s needs a value\n", a);
            else
                fprintf(stderr, "chessd play: unknown argument '%s' (see chessd play --help)\n", a);
            return 2;
        }
    }
    if (ascii && unicode) {
        fprintf(stderr, "chessd play: --ascii and --unicode exclude each other\n");
        return 2;
    }
    config_t cfg;
    char err[256];
    if (!config_load(&cfg, 0, NULL, err, sizeof err)) {
        fprintf(stderr, "chessd play: %s\n", err);
        return 2;
    }
    play_view_t view = {
        .unicode = unicode || (!ascii && isatty(STDOUT_FILENO) && play_locale_is_utf8()),
        .flip = flip,
        .prompt = isatty(STDIN_FILENO),
        .max_plies = (int)cfg.max_game_plies,
    };
    if (max_plies) {
        char *end;
        long n = strtol(max_plies, &end, 10);
        if (!*max_plies || *end || n < 1 || n > GAME_MAX_PLIES) {
            fprintf(stderr, "chessd play: --max-plies must be a number from 1 to %d\n", GAME_MAX_PLIES);
            return 2;
        }
        view.max_plies = (int)n;
    }
    if (server || game_id || token || ca_file) {
        if (fen || chess960 || number || max_plies) {
            fprintf(stderr, "chessd play: the start and --max-plies are the stored game's with --server\n");
            return 2;
        }
        if (!token)
            token = getenv("CHESSD_PLAY_TOKEN");
        if (!server || !game_id || !token || !*token) {
            fprintf(stderr, "chessd play: the remote mode needs --server, --game and --token (or CHESSD_PLAY_TOKEN)\n");
            return 2;
        }
        return play_remote_run(server, game_id, token, ca_file, &view);
    }
    position_t start;
    if (number || (chess960 && !fen)) {
        if (fen) {
            fprintf(stderr, "chessd play: --fen and --chess960-position exclude each other\n");
            return 2;
        }
        char *end = NULL;
        long n = number ? strtol(number, &end, 10) : -1;
        uint32_t drawn;
        if (number && (!*number || *end || n < 0 || n >= CHESS960_COUNT)) {
            fprintf(stderr, "chessd play: --chess960-position must be a number from 0 to %d\n", CHESS960_COUNT - 1);
            return 2;
        }
        if (!number) { /* --chess960 alone: a random start, as a game created with "chess960": true */
            if (!tokens_random_below(CHESS960_COUNT, &drawn)) {
                fprintf(stderr, "chessd play: no randomness for a Chess960 start\n");
                return 1;
            }
            n = (long)drawn;
        }
        (void)chess960_start((int)n, &start); /* in range */
        printf("Chess960 start %ld\n", n);
        return play_session(stdin, stdout, &start, &view);
    }
    const char *text = fen ? fen : FEN_START;
    fen_error_t fe = fen_parse(text, strlen(text), chess960 ? FEN_CHESS960 : FEN_DETECT_CHESS960, &start, err,
                               sizeof err);
    if (fe != FEN_OK) {
        fprintf(stderr, "chessd play: invalid_fen (%s): %s\n", fen_error_code(fe), err);
        return 2;
    }
    return play_session(stdin, stdout, &start, &view);
}
