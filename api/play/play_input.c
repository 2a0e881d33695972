/* The lines of `chessd play` (see play_input.h). With a terminal, libedit
 * edits the line (emacs keys, or the user's ~/.editrc) and keeps the
 * session's history; its bytes come through edit_read_char, which runs the
 * wait hook first, so the remote session's stream is read while a line is
 * typed. Plain input is read with getc, and unbuffered when there is a hook. */
#include "play_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <histedit.h>

enum { HISTORY_SIZE = 500 };

struct play_input {
    FILE *in, *out;
    bool prompt;             /* plain: print the prompt */
    EditLine *el;            /* NULL: plain lines */
    History *history;        /* with el */
    const char *prompt_text; /* the current read's */
    play_input_wait_fn *wait;
    void *wait_ctx;
    bool reading; /* inside play_input_read */
    bool hidden;  /* play_input_hide took the prompt off the screen */
    bool stopped; /* the wait hook said stop: every read ends */
};

/* Runs the wait hook; false (and from then on) when it says stop. */
static bool wait_for_input(play_input_t *input)
{
    if (!input->stopped && input->wait && !input->wait(input->wait_ctx))
        input->stopped = true;
    return !input->stopped;
}

static char *edit_prompt(EditLine *el)
{
    play_input_t *input = NULL;
    el_get(el, EL_CLIENTDATA, &input);
    return (char *)(input && input->prompt_text ? input->prompt_text : "");
}

/* libedit's source of characters: a byte at a time from the input, after the
 * wait hook. Moves and commands are ASCII; another byte reads as '?'.
 * Returns 1, 0 at the end of input (or when the hook said stop), -1 on error. */
static int edit_read_char(EditLine *el, wchar_t *c)
{
    play_input_t *input = NULL;
    if (el_get(el, EL_CLIENTDATA, &input) != 0 || !input)
        return -1;
    if (!wait_for_input(input))
        return 0;
    unsigned char byte;
    ssize_t n;
    do
        n = read(fileno(input->in), &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return (int)n;
    *c = byte < 0x80 ? (wchar_t)byte : L'?';
    return 1;
}

/* Sets up libedit on in and out; false (nothing kept) when it cannot. */
static bool edit_open(play_input_t *input)
{
    EditLine *el = el_init("chessd", input->in, input->out, stderr);
    History *hist = history_init();
    if (!el || !hist) {
        if (el)
            el_end(el);
        if (hist)
            history_end(hist);
        return false;
    }
    HistEvent event;
    history(hist, &event, H_SETSIZE, HISTORY_SIZE);
    history(hist, &event, H_SETUNIQUE, 1);
    el_set(el, EL_CLIENTDATA, input);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_SIGNAL, 1); /* Ctrl-C, Ctrl-Z and a resize leave the terminal as it was */
    el_set(el, EL_PROMPT, edit_prompt);
    el_set(el, EL_HIST, history, hist);
    el_set(el, EL_GETCFN, edit_read_char);
    el_source(el, NULL); /* $EDITRC or ~/.editrc, when there is one */
    input->el = el;
    input->history = hist;
    return true;
}

play_input_t *play_input_open(FILE *in, FILE *out, bool edit, bool prompt)
{
    play_input_t *input = calloc(1, sizeof *input);
    if (!input)
        return NULL;
    input->in = in;
    input->out = out;
    input->prompt = prompt;
    if (edit && !edit_open(input))
        input->prompt = true; /* plain lines at a terminal, prompted as before */
    return input;
}

void play_input_free(play_input_t *input)
{
    if (!input)
        return;
    if (input->el)
        el_end(input->el);
    if (input->history)
        history_end(input->history);
    free(input);
}

void play_input_set_wait(play_input_t *input, play_input_wait_fn *wait, void *ctx)
{
    input->wait = wait;
    input->wait_ctx = ctx;
    if (!input->el)
        setvbuf(input->in, NULL, _IONBF, 0);
}

/* Copies text (n bytes, its newline and a CR before it cut) into line. */
static play_input_status_t take_line(const char *text, size_t n, char *line, size_t size, size_t *length)
{
    if (n > 0 && text[n - 1] == '\n')
        n--;
    if (n > 0 && text[n - 1] == '\r')
        n--;
    if (n >= size)
        return PLAY_INPUT_TOO_LONG;
    memmove(line, text, n);
    line[n] = '\0';
    *length = n;
    return PLAY_INPUT_LINE;
}

static play_input_status_t edit_read(play_input_t *input, char *line, size_t size, size_t *length)
{
    int count = 0;
    const char *text = el_gets(input->el, &count);
    if (!text || count <= 0)
        return PLAY_INPUT_END;
    play_input_status_t status = take_line(text, (size_t)count, line, size, length);
    if (status == PLAY_INPUT_LINE && strspn(line, " \t") < *length) {
        HistEvent event;
        history(input->history, &event, H_ENTER, line);
    }
    return status;
}

/* A line of plain input; a last line without its newline counts. */
static play_input_status_t plain_read(play_input_t *input, char *line, size_t size, size_t *length)
{
    if (input->prompt) {
        fputs(input->prompt_text, input->out);
        fflush(input->out);
    }
    size_t n = 0;
    bool too_long = false;
    int c = EOF;
    while (wait_for_input(input) && (c = getc(input->in)) != EOF && c != '\n') {
        if (n + 1 < size)
            line[n++] = (char)c;
        else
            too_long = true;
    }
    if (c == EOF && n == 0 && !too_long)
        return PLAY_INPUT_END;
    if (too_long)
        return PLAY_INPUT_TOO_LONG;
    return take_line(line, n, line, size, length);
}

play_input_status_t play_input_read(play_input_t *input, const char *prompt, char *line, size_t size, size_t *length)
{
    if (input->stopped || size == 0)
        return PLAY_INPUT_END;
    fflush(input->out);
    input->prompt_text = prompt;
    input->reading = true;
    input->hidden = false;
    play_input_status_t status = input->el ? edit_read(input, line, size, length) : plain_read(input, line, size, length);
    input->reading = false;
    return status;
}

void play_input_hide(play_input_t *input)
{
    if (!input->reading || input->hidden)
        return;
    input->hidden = true;
    /* libedit: the prompt and the line so far are erased (a carriage return
     * and ANSI "erase in line"), redrawn by play_input_show; plain: what
     * follows starts on a line of its own. */
    if (input->el)
        fputs("\r\033[K", input->out);
    else if (input->prompt)
        fputc('\n', input->out);
}

void play_input_show(play_input_t *input)
{
    if (!input->hidden)
        return;
    input->hidden = false;
    if (input->el)
        el_set(input->el, EL_REFRESH);
    else if (input->prompt)
        fputs(input->prompt_text, input->out);
    fflush(input->out);
}
