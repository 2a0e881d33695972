/* The lines `chessd play` reads: with line editing and the session's
 * history (libedit) when standard input and output are both terminals,
 * else plain lines, as a script pipes them. libedit is linked into the one
 * chessd binary, but only this file calls it, on `chessd play`'s path. */
#ifndef CHESSD_API_PLAY_PLAY_INPUT_H
#define CHESSD_API_PLAY_PLAY_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    PLAY_INPUT_LINE = 0, /* a line was read */
    PLAY_INPUT_END,      /* the end of input (Ctrl-D on an empty line), an error, or the wait hook said stop */
    PLAY_INPUT_TOO_LONG, /* a line longer than the caller's buffer, read whole and dropped */
    PLAY_INPUT_STATUS_COUNT
} play_input_status_t;

typedef struct play_input play_input_t;

/* Waits until the input can be read, doing the session's other work
 * meanwhile (the remote session reads its event stream). Returns false to
 * stop reading: the read then ends as the end of input does. */
typedef bool play_input_wait_fn(void *ctx);

/* Reads lines from in; edit: with libedit, drawing on out (both must be
 * terminals), else plain lines, with the prompt printed when prompt is set.
 * NULL when out of memory. Free with play_input_free(). */
play_input_t *play_input_open(FILE *in, FILE *out, bool edit, bool prompt);

/* Restores the terminal and frees input; NULL is fine. */
void play_input_free(play_input_t *input);

/* Calls wait(ctx) before each read from the input, which is then read a
 * byte at a time (so that no byte waits in a buffer the hook cannot see).
 * Set it before the first read. */
void play_input_set_wait(play_input_t *input, play_input_wait_fn *wait, void *ctx);

/* Shows prompt (a static or long-lived string) and reads one line into
 * line (size bytes, NUL-terminated, without its newline or a CR before
 * it), its length in *length. A non-blank line joins the history. */
play_input_status_t play_input_read(play_input_t *input, const char *prompt, char *line, size_t size, size_t *length);

/* Around what the wait hook prints: hide takes the prompt and the line
 * being typed off the screen, show puts them back below what was printed
 * (plain: prints the prompt again). Both may be called at any time. */
void play_input_hide(play_input_t *input);
void play_input_show(play_input_t *input);

#endif
