/* `chessd play --server URL --game ID --token T`: one side of a stored game
 * (or of a game against the computer it creates, --level), played through
 * the HTTP API over http:// or https://. Moves go by POST
 * /v1/games/{id}/moves with expected_version; the opponent's come from GET
 * /v1/games/{id}/events, read while standard input is read, with poll().
 * The token is sent in the Authorization header and never printed. */
#ifndef CHESSD_API_PLAY_PLAY_REMOTE_H
#define CHESSD_API_PLAY_PLAY_REMOTE_H

#include "play.h"

/* Runs the session on input (standard input's, play_input.h) and standard
 * output; ca_file (PEM, may be NULL: the system's CAs) is trusted for an
 * https server. Returns the exit status:
 * 0 after quit or the end of input; 1 when the server cannot be used
 * (unreachable, the game or the token refused); 2 for a bad URL, id, token or
 * CA file. */
int play_remote_run(const char *server, const char *game_id, const char *token, const char *ca_file,
                    const play_view_t *view, play_input_t *input);

/* `chessd play --server URL --level N [--color C]`: creates a game against
 * the computer (POST /v1/games with "engine": level, and the side other than
 * color; color -1: the server draws the sides), prints its id, and plays it
 * as play_remote_run does with the token the answer carries (never printed).
 * The same exit statuses; 1 too when the server refuses the game. */
int play_remote_new(const char *server, int level, int color, variant_t variant, const char *ca_file,
                    const play_view_t *view, play_input_t *input);

#endif
