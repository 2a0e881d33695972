/* Tests for api/play/play_input.c: plain lines read from memory (a CR cut,
 * a last line without its newline, an overlong line dropped whole, the
 * prompt), and the wait hook. libedit's editing is driven through a
 * pseudo-terminal: an arrow key moves the cursor back into the line, Up
 * brings back the last line, Ctrl-D ends. */
#include <fcntl.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../../api/play/play_input.h"
#include "../../support/tests.h"

/* A plain reader over text in memory; out collects what it prints. */
typedef struct {
    FILE *in, *out;
    char *printed;
    size_t printed_length;
    play_input_t *input;
} plain_t;

static void plain_open(plain_t *p, const char *text, bool prompt)
{
    memset(p, 0, sizeof *p);
    p->in = fmemopen((void *)text, strlen(text), "r");
    p->out = open_memstream(&p->printed, &p->printed_length);
    CU_ASSERT_FATAL(p->in && p->out);
    p->input = play_input_open(p->in, p->out, false, prompt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->input);
}

static void plain_close(plain_t *p)
{
    play_input_free(p->input);
    fclose(p->in);
    fclose(p->out);
    free(p->printed);
}

static void expect_line(play_input_t *input, const char *want)
{
    char line[16];
    size_t length = 99;
    CU_ASSERT_EQUAL_FATAL(play_input_read(input, "> ", line, sizeof line, &length), PLAY_INPUT_LINE);
    CU_ASSERT_STRING_EQUAL(line, want);
    CU_ASSERT_EQUAL(length, strlen(want));
}

static void test_plain_lines_cut_the_cr_and_keep_a_last_line_without_newline(void)
{
    plain_t p;
    plain_open(&p, "e4\r\n\n  Nf3 \nthis line is far too long\nquit", false);
    expect_line(p.input, "e4");
    expect_line(p.input, "");
    expect_line(p.input, "  Nf3 "); /* blanks are the caller's to cut */
    char line[16];
    size_t length;
    CU_ASSERT_EQUAL(play_input_read(p.input, "> ", line, sizeof line, &length), PLAY_INPUT_TOO_LONG);
    expect_line(p.input, "quit");
    CU_ASSERT_EQUAL(play_input_read(p.input, "> ", line, sizeof line, &length), PLAY_INPUT_END);
    fflush(p.out);
    CU_ASSERT_EQUAL(p.printed_length, 0); /* no prompt */
    plain_close(&p);
}

static void test_plain_prompt_is_printed_before_each_read_and_after_what_the_hook_shows(void)
{
    plain_t p;
    plain_open(&p, "e4\n", true);
    expect_line(p.input, "e4");
    play_input_hide(p.input); /* not reading: nothing to hide */
    play_input_show(p.input);
    char line[16];
    size_t length;
    CU_ASSERT_EQUAL(play_input_read(p.input, "black> ", line, sizeof line, &length), PLAY_INPUT_END);
    fflush(p.out);
    CU_ASSERT_STRING_EQUAL(p.printed, "> black> ");
    plain_close(&p);
}

/* A wait hook that counts its calls, prints a notice around the third one
 * (as the remote session prints a move), and says stop at the tenth. */
typedef struct {
    play_input_t *input;
    FILE *out;
    int calls;
} hook_t;

static bool counting_wait(void *ctx)
{
    hook_t *h = ctx;
    if (++h->calls == 3) {
        play_input_hide(h->input);
        fputs("notice\n", h->out);
        play_input_show(h->input);
    }
    return h->calls < 10;
}

static void test_the_wait_hook_runs_before_each_byte_and_stops_the_reads(void)
{
    plain_t p;
    plain_open(&p, "e4\ne5\nNf3 Nc6\n", true);
    hook_t h = { .input = p.input, .out = p.out };
    play_input_set_wait(p.input, counting_wait, &h);
    expect_line(p.input, "e4"); /* three calls: e, 4, newline */
    CU_ASSERT_EQUAL(h.calls, 3);
    expect_line(p.input, "e5");
    expect_line(p.input, "Nf3"); /* the tenth call said stop: what was read counts, as at the end of input */
    char line[16];
    size_t length;
    CU_ASSERT_EQUAL(play_input_read(p.input, "> ", line, sizeof line, &length), PLAY_INPUT_END);
    CU_ASSERT_EQUAL(h.calls, 10); /* not called again once stopped */
    fflush(p.out);
    /* The notice starts a line of its own and the prompt follows it again. */
    CU_ASSERT_STRING_EQUAL(p.printed, "> \nnotice\n> > > ");
    plain_close(&p);
}

/* ---- libedit, through a pseudo-terminal ---- */

/* Keys written to the terminal's master side, a script at a time, each
 * when the reader has taken all the earlier ones: libedit has the terminal
 * in its raw mode by then, so the kernel edits nothing. */
typedef struct {
    int master, slave;
    const char *const *scripts;
    int next;
} keys_t;

static bool type_keys(void *ctx)
{
    keys_t *k = ctx;
    int pending = 0;
    if (ioctl(k->slave, FIONREAD, &pending) == 0 && pending == 0) {
        if (!k->scripts[k->next])
            return false;
        const char *s = k->scripts[k->next++];
        CU_ASSERT_EQUAL(write(k->master, s, strlen(s)), (ssize_t)strlen(s));
    }
    char drain[4096]; /* what libedit draws, so that it never blocks on a full terminal */
    while (read(k->master, drain, sizeof drain) > 0) {
    }
    return true;
}

static void test_libedit_edits_the_line_with_arrow_keys_and_recalls_the_history(void)
{
    int master, slave;
    CU_ASSERT_EQUAL_FATAL(openpty(&master, &slave, NULL, NULL, NULL), 0);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    const char *term = getenv("TERM");
    char *saved_term = term ? strdup(term) : NULL;
    setenv("TERM", "xterm", 1);
    setenv("EDITRC", "/dev/null", 1);
    FILE *in = fdopen(slave, "r"), *out = fdopen(dup(slave), "w");
    CU_ASSERT_FATAL(in && out);
    play_input_t *input = play_input_open(in, out, true, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(input);
    /* "e24", Left, "e", Enter: e2e4. Up, Enter: e2e4 again. Ctrl-D on an empty line: the end. */
    static const char *const scripts[] = { "e24\033[De\r", "\033[A\r", "\004", NULL };
    keys_t keys = { .master = master, .slave = slave, .scripts = scripts };
    play_input_set_wait(input, type_keys, &keys);
    expect_line(input, "e2e4");
    expect_line(input, "e2e4");
    char line[16];
    size_t length;
    CU_ASSERT_EQUAL(play_input_read(input, "> ", line, sizeof line, &length), PLAY_INPUT_END);
    play_input_free(input);
    fclose(in);
    fclose(out);
    close(master);
    unsetenv("EDITRC");
    if (saved_term)
        setenv("TERM", saved_term, 1);
    else
        unsetenv("TERM");
    free(saved_term);
}

int test_play_input_register(void)
{
    CU_pSuite suite = CU_add_suite("play_input", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "plain_lines_cut_the_cr_and_keep_a_last_line_without_newline",
                test_plain_lines_cut_the_cr_and_keep_a_last_line_without_newline);
    CU_add_test(suite, "plain_prompt_is_printed_before_each_read_and_after_what_the_hook_shows",
                test_plain_prompt_is_printed_before_each_read_and_after_what_the_hook_shows);
    CU_add_test(suite, "the_wait_hook_runs_before_each_byte_and_stops_the_reads",
                test_the_wait_hook_runs_before_each_byte_and_stops_the_reads);
    CU_add_test(suite, "libedit_edits_the_line_with_arrow_keys_and_recalls_the_history",
                test_libedit_edits_the_line_with_arrow_keys_and_recalls_the_history);
    return 0;
}
