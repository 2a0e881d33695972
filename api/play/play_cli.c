/* The command line of `chessd play` (see play_cli.h): its options, its
 * usage, how the session shows and reads (play_settings.h, the terminal),
 * and the choice between the local session (play.h, run_local) and the
 * remote one (play_remote.h, run_remote). */
#include "play_cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rules/chess960.h"
#include "../../rules/rules.h"
#include "../engine/uci.h"
#include "play.h"
#include "play_random.h"
#include "play_remote.h"
#include "play_settings.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chessd play [--level N [--color C]] [--engine PATH] [--variant V] [--fen FEN | --chess960-position N |\n"
            "                   --chess960] [--ascii | --unicode] [--flip] [--max-plies N]\n"
            "       chessd play --server URL --game ID [--token TOKEN] [--ca-file PEM] [--ascii | --unicode]\n"
            "                   [--flip]\n"
            "       chessd play --server URL --level N [--color C] [--ca-file PEM] [--ascii | --unicode] [--flip]\n"
            "\n"
            "Plays chess in a terminal. Alone, it plays both sides from the start position or\n"
            "from --fen; with --level, one side against the computer (the engine driven\n"
            "directly, no server). With --server it plays one side of a stored game through\n"
            "the HTTP API (the side the player token belongs to), showing the opponent's\n"
            "moves as they arrive on the game's event stream; with --server and --level, it\n"
            "creates a game against the computer on the server and plays it.\n"
            "\n"
            "At a terminal the line is edited as in a shell (arrow keys, Ctrl-A, Ctrl-E; Up and\n"
            "Down for the session's lines; libedit, with ~/.editrc), and the board is drawn in\n"
            "colour with the last move's squares tinted. Piped, under NO_COLOR or with --ascii,\n"
            "no colour: the last move's squares are in brackets, \"[P]\".\n"
            "\n"
            "  --level N        play against the computer at level N (1, the weakest, to 8, the\n"
            "                   strongest; the levels of POST /v1/games \"engine\")\n"
            "  --color C        the side you play against the computer: white (the default),\n"
            "                   black or random\n"
            "  --engine PATH    the UCI engine the computer and hints use without --server\n"
            "                   (default " ENGINE_DEFAULT_PATH ")\n"
            "  --variant V      play a variant: crazyhouse, atomic, antichess, kingOfTheHill, threeCheck,\n"
            "                   horde, racingKings or seirawan (against the computer: Fairy-Stockfish)\n"
            "  --fen FEN        start from this position (a Chess960 castling field is recognised)\n"
            "  --chess960       read the FEN's castling as Chess960; without --fen, a random\n"
            "                   Chess960 start\n"
            "  --chess960-position N  Chess960 start N (0-959, Scharnagl numbering; 518 is the\n"
            "                   standard position)\n"
            "  --ascii          plain letters, no colour and no Unicode (Unicode is the default when\n"
            "                   stdout is a terminal and LC_ALL, LC_CTYPE or LANG names UTF-8)\n"
            "  --unicode        Unicode pieces even when the output is not a terminal\n"
            "  --flip           the board the other way up: Black at the bottom (White when you play\n"
            "                   black, whose side is at the bottom without it)\n"
            "  --max-plies N    the most plies the game may have (default: CHESSD_MAX_GAME_PLIES,\n"
            "                   else %d, as the server's --max-game-plies)\n"
            "  --server URL     a chessd server, http://host[:port][/path] or https://...\n"
            "  --ca-file PEM    the CAs to trust for https (default: the system's)\n"
            "  --game ID        the stored game's id\n"
            "  --token TOKEN    the player's token (or CHESSD_PLAY_TOKEN); never printed\n"
            "\n"
            "Type a move in SAN or UCI (e4, Nf3, e7e8q, O-O), or a command:\n",
            PLAY_SETTINGS_MAX_PLIES_DEFAULT);
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

/* Everything the command line says. */
typedef struct {
    const char *fen, *server, *game_id, *token, *max_plies, *ca_file, *number, *level, *color, *engine, *variant_name;
    variant_t variant;
    bool chess960, ascii, unicode, flip;
    char token_copy[1024];
} options_t;

/* Reads argv into o; false, with the reason on stderr, for an unknown option or a missing value. */
static bool read_options(int argc, char **argv, options_t *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        char *v;
        bool missing = false;
        if (!strcmp(a, "--chess960"))
            o->chess960 = true;
        else if (!strcmp(a, "--ascii"))
            o->ascii = true;
        else if (!strcmp(a, "--unicode"))
            o->unicode = true;
        else if (!strcmp(a, "--flip"))
            o->flip = true;
        else if ((v = option_value(argc, argv, &i, "--fen", &missing)))
            o->fen = v;
        else if ((v = option_value(argc, argv, &i, "--server", &missing)))
            o->server = v;
        else if ((v = option_value(argc, argv, &i, "--game", &missing)))
            o->game_id = v;
        else if ((v = option_value(argc, argv, &i, "--token", &missing)))
            o->token = hide(v, o->token_copy, sizeof o->token_copy);
        else if ((v = option_value(argc, argv, &i, "--max-plies", &missing)))
            o->max_plies = v;
        else if ((v = option_value(argc, argv, &i, "--ca-file", &missing)))
            o->ca_file = v;
        else if ((v = option_value(argc, argv, &i, "--chess960-position", &missing)))
            o->number = v;
        else if ((v = option_value(argc, argv, &i, "--level", &missing)))
            o->level = v;
        else if ((v = option_value(argc, argv, &i, "--color", &missing)))
            o->color = v;
        else if ((v = option_value(argc, argv, &i, "--engine", &missing)))
            o->engine = v;
        else if ((v = option_value(argc, argv, &i, "--variant", &missing)))
            o->variant_name = v;
        else {
            if (missing)
                fprintf(stderr, "chessd play: %s needs a value\n", a);
            else
                fprintf(stderr, "chessd play: unknown argument '%s' (see chessd play --help)\n", a);
            return false;
        }
    }
    return true;
}

/* The computer's side from --color (the person's side; -1 for random,
 * drawn by the caller); false, with the reason on stderr, for a bad value. */
static bool read_color(const char *text, int *color)
{
    if (!text || !strcmp(text, "white"))
        *color = WHITE;
    else if (!strcmp(text, "black"))
        *color = BLACK;
    else if (!strcmp(text, "random"))
        *color = -1;
    else {
        fprintf(stderr, "chessd play: --color must be white, black or random\n");
        return false;
    }
    return true;
}

/* --level's number; 0, with the reason on stderr, when it is not one of the levels. */
static int read_level(const char *text)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (!*text || *end || n < LEVEL_MIN || n > LEVEL_MAX) {
        fprintf(stderr, "chessd play: --level must be a number from %d to %d\n", LEVEL_MIN, LEVEL_MAX);
        return 0;
    }
    return (int)n;
}

/* --server: a stored game joined, or (--level) one against the computer created. */
static int run_remote(options_t *o, const play_settings_t *settings, const play_view_t *view, play_input_t *input)
{
    if (o->fen || o->chess960 || o->number || o->max_plies) {
        fprintf(stderr, "chessd play: the start and --max-plies are the stored game's with --server\n");
        return 2;
    }
    if (o->engine) {
        fprintf(stderr, "chessd play: --engine is for the local session; with --server the server's engine plays\n");
        return 2;
    }
    if (o->level) {
        int level = read_level(o->level), color;
        if (!level || !read_color(o->color, &color))
            return 2;
        if (o->game_id || o->token) {
            fprintf(stderr, "chessd play: --level creates a new game; --game and --token join a stored one\n");
            return 2;
        }
        return play_remote_new(o->server, level, color, o->variant, o->ca_file, view, input);
    }
    if (!o->token)
        o->token = settings->token;
    if (!o->server || !o->game_id || !o->token || !*o->token) {
        fprintf(stderr, "chessd play: the remote mode needs --server, --game and --token (or CHESSD_PLAY_TOKEN)\n");
        return 2;
    }
    return play_remote_run(o->server, o->game_id, o->token, o->ca_file, view, input);
}

/* The start position from --fen, --chess960-position or --chess960 (the
 * standard one without them); an exit status, 0 when *start is set. */
static int read_start(const options_t *o, position_t *start)
{
    char err[256];
    if (o->number || (o->chess960 && !o->fen)) {
        if (o->fen) {
            fprintf(stderr, "chessd play: --fen and --chess960-position exclude each other\n");
            return 2;
        }
        char *end = NULL;
        long n = o->number ? strtol(o->number, &end, 10) : -1;
        uint32_t drawn;
        if (o->number && (!*o->number || *end || n < 0 || n >= CHESS960_COUNT)) {
            fprintf(stderr, "chessd play: --chess960-position must be a number from 0 to %d\n", CHESS960_COUNT - 1);
            return 2;
        }
        if (!o->number) { /* --chess960 alone: a random start, as a game created with "chess960": true */
            if (!play_random_below(CHESS960_COUNT, &drawn)) {
                fprintf(stderr, "chessd play: no randomness for a Chess960 start\n");
                return 1;
            }
            n = (long)drawn;
        }
        (void)chess960_start((int)n, start); /* in range */
        printf("Chess960 start %ld\n", n);
        return 0;
    }
    if (!o->fen) {
        fen_start(o->variant, start);
        return 0;
    }
    const char *text = o->fen;
    fen_error_t fe = fen_parse_variant(text, strlen(text), o->variant,
                                       o->chess960 ? FEN_CHESS960 : FEN_DETECT_CHESS960, start, err, sizeof err);
    if (fe != FEN_OK) {
        fprintf(stderr, "chessd play: invalid_fen (%s): %s\n", fen_error_code(fe), err);
        return 2;
    }
    return 0;
}

/* The local session: two people (hints from the engine at --engine's path,
 * started at the first hint), or one against the computer (--level: the
 * engine started first; without one, exit 2). */
static int run_local(const options_t *o, const play_settings_t *settings, play_view_t *view, play_input_t *input)
{
    play_local_t local = { .engine_path = o->engine                          ? o->engine
                                          : o->variant != VARIANT_STANDARD ? settings->variant_engine_path
                                                                           : settings->engine_path };
    int color = WHITE;
    if (o->level) {
        int level = read_level(o->level);
        if (!level || !read_color(o->color, &color))
            return 2;
        (void)level_of(level, &local.level); /* in range */
    } else if (o->color) {
        fprintf(stderr, "chessd play: --color is the side you play against the computer: give --level too\n");
        return 2;
    }
    position_t start;
    int status = read_start(o, &start);
    if (status)
        return status;
    if (!o->level)
        return play_session(input, stdout, &start, view, &local);
    if (color < 0) {
        uint32_t drawn;
        if (!play_random_below(COLOR_COUNT, &drawn)) {
            fprintf(stderr, "chessd play: no randomness to draw your color\n");
            return 1;
        }
        color = (int)drawn;
    }
    char err[256];
    local.engine = *local.engine_path ? play_engine_start(local.engine_path, start.chess960, err, sizeof err) : NULL;
    if (!local.engine) {
        fprintf(stderr, "chessd play: --level needs a chess engine, and none runs at '%s': %s (install stockfish, "
                        "or give --engine PATH)\n",
                local.engine_path, *local.engine_path ? err : "no path");
        return 2;
    }
    local.computer = true;
    local.computer_color = !color;
    view->flip = view->flip != (color == BLACK); /* the person's side at the bottom, as in the remote mode */
    status = play_session(input, stdout, &start, view, &local);
    play_engine_free(local.engine);
    return status;
}

int play_cli_main(int argc, char **argv)
{
    /* --help or -h anywhere: the usage, whatever else the line holds (as every subcommand) */
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
    }
    static options_t o; /* the token's copy: kept out of the stack */
    memset(&o, 0, sizeof o);
    if (!read_options(argc, argv, &o))
        return 2;
    if (o.ascii && o.unicode) {
        fprintf(stderr, "chessd play: --ascii and --unicode exclude each other\n");
        return 2;
    }
    bool named_960 = false;
    if (o.variant_name && !variant_from_name(o.variant_name, strlen(o.variant_name), &o.variant, &named_960)) {
        fprintf(stderr, "chessd play: unknown variant '%s' (crazyhouse, atomic, antichess, kingOfTheHill, "
                        "threeCheck, horde, racingKings, seirawan)\n", o.variant_name);
        return 2;
    }
    o.chess960 = o.chess960 || named_960;
    if (o.variant != VARIANT_STANDARD && (o.chess960 || o.number)) {
        fprintf(stderr, "chessd play: Chess960 goes with standard chess only, not with --variant\n");
        return 2;
    }
    play_settings_t settings;
    char err[256];
    if (!play_settings_load(&settings, err, sizeof err)) {
        fprintf(stderr, "chessd play: %s\n", err);
        return 2;
    }
    /* Colours and glyphs for a terminal only; line editing when a person
     * types at one and it shows what is typed (play_input.h). */
    bool terminal = isatty(STDOUT_FILENO);
    play_view_t view = {
        .unicode = o.unicode || (!o.ascii && terminal && settings.utf8),
        .color = !o.ascii && terminal && settings.color,
        .flip = o.flip,
        .prompt = isatty(STDIN_FILENO),
        .max_plies = settings.max_plies,
    };
    if (o.max_plies) {
        char *end;
        long n = strtol(o.max_plies, &end, 10);
        if (!*o.max_plies || *end || n < 1 || n > GAME_MAX_PLIES) {
            fprintf(stderr, "chessd play: --max-plies must be a number from 1 to %d\n", GAME_MAX_PLIES);
            return 2;
        }
        view.max_plies = (int)n;
    }
    /* A write to an engine that died, or to a server that closed, is an
     * error to handle (EPIPE), not the end of the process. */
    signal(SIGPIPE, SIG_IGN);
    play_input_t *input = play_input_open(stdin, stdout, view.prompt && terminal, view.prompt);
    if (!input) {
        fprintf(stderr, "chessd play: out of memory\n");
        return 1;
    }
    int status;
    if (o.server || o.game_id || o.token || o.ca_file) {
        status = run_remote(&o, &settings, &view, input);
        memset(o.token_copy, 0, sizeof o.token_copy);
    } else {
        status = run_local(&o, &settings, &view, input);
    }
    play_input_free(input);
    return status;
}
