/* Tool subcommands of the chessd binary that run without the server. */
#ifndef CHESSD_API_PERFT_CLI_H
#define CHESSD_API_PERFT_CLI_H

#include <stdio.h>

/* `chessd perft [--variant V] DEPTH [FEN [MOVES...]]`; argv holds the arguments after
 * "perft". Returns the process exit status. */
int cli_perft(int argc, char **argv, FILE *out, FILE *err);

#endif
