/* `chessd keys`: service keys made and hashed without a server, for the
 * --service-keys-file that service_keys.h reads. */
#ifndef CHESSD_API_KEYS_CLI_H
#define CHESSD_API_KEYS_CLI_H

#include <stdio.h>

/* `chessd keys new NAME [SCOPE...]` and `chessd keys hash` (a key on in,
 * its SHA-256 on out); argv holds the arguments after "keys". Returns the
 * process exit status: 0, or 2 with the reason on err. */
int keys_cli_main(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
