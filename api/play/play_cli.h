/* `chessd play`: the subcommand's entry point (options, usage, and the
 * local or the remote session). */
#ifndef CHESSD_API_PLAY_PLAY_CLI_H
#define CHESSD_API_PLAY_PLAY_CLI_H

/* `chessd play [options]`: argv holds the arguments after "play". Returns the
 * process exit status (0 after quit or the end of input, 1 when the server
 * cannot be used or the computer's engine failed mid-game, 2 for bad
 * arguments and for --level without an engine). */
int play_cli_main(int argc, char **argv);

#endif
