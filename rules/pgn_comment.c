/* PGN comment commands (see pgn_comment.h). Three passes over the text,
 * as chessops makes them: the times, then the shapes, then the evaluation.
 * Each command found, with one blank before and after it, becomes two
 * spaces; the text left is trimmed at the end. Blanks are ASCII's. */
#include "pgn_comment.h"

#include <string.h>

#include "base/decimal.h"
#include "types.h"

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Up to max digits at s[*at] (at least min); their value in *value. */
static bool digits(const char *s, size_t n, size_t *at, int min, int max, long long *value, int *count)
{
    int k = 0;
    long long v = 0;
    while (*at < n && k < max && is_digit(s[*at])) {
        v = v * 10 + (s[(*at)++] - '0');
        k++;
    }
    if (value)
        *value = v;
    if (count)
        *count = k;
    return k >= min && !(*at < n && is_digit(s[*at]) && k == max);
}

static bool literal(const char *s, size_t n, size_t *at, const char *word)
{
    size_t w = strlen(word);
    if (n - *at < w || memcmp(s + *at, word, w))
        return false;
    *at += w;
    return true;
}

/* [%clk h:mm:ss(.fff)] or [%emt ...] at s[*at], its end after ']' in *at. */
static bool match_time(const char *s, size_t n, size_t *at, pgn_comment_t *c)
{
    bool emt;
    if (literal(s, n, at, "[%emt"))
        emt = true;
    else if (literal(s, n, at, "[%clk"))
        emt = false;
    else
        return false;
    long long h, m, sec, frac = 0;
    int frac_digits = 0;
    if (*at >= n || !is_space(s[(*at)++]) || !digits(s, n, at, 1, 5, &h, NULL) || !literal(s, n, at, ":")
        || !digits(s, n, at, 1, 2, &m, NULL) || !literal(s, n, at, ":") || !digits(s, n, at, 1, 2, &sec, NULL))
        return false;
    if (literal(s, n, at, ".") && !digits(s, n, at, 0, 3, &frac, &frac_digits))
        return false;
    if (!literal(s, n, at, "]"))
        return false;
    for (int i = frac_digits; i < 3; i++)
        frac *= 10;
    int64_t ms = ((h * 60 + m) * 60 + sec) * 1000 + frac;
    if (emt) {
        c->has_emt = true;
        c->emt_ms = ms;
    } else {
        c->has_clock = true;
        c->clock_ms = ms;
    }
    return true;
}

/* One shape: a colour letter and one or two squares. */
static bool shape(const char *s, size_t n, size_t *at, pgn_shape_t *out)
{
    if (n - *at < 3 || !strchr("RGYB", s[*at]) || !s[*at] || s[*at + 1] < 'a' || s[*at + 1] > 'h'
        || s[*at + 2] < '1' || s[*at + 2] > '8')
        return false;
    out->color = s[*at];
    out->from = out->to = (int8_t)square_make(s[*at + 1] - 'a', s[*at + 2] - '1');
    *at += 3;
    if (n - *at >= 2 && s[*at] >= 'a' && s[*at] <= 'h' && s[*at + 1] >= '1' && s[*at + 1] <= '8') {
        out->to = (int8_t)square_make(s[*at] - 'a', s[*at + 1] - '1');
        *at += 2;
    }
    return true;
}

static bool match_shapes(const char *s, size_t n, size_t *at, pgn_comment_t *c)
{
    if (!literal(s, n, at, "[%csl") && !literal(s, n, at, "[%cal"))
        return false;
    if (*at >= n || !is_space(s[(*at)++]))
        return false;
    pgn_shape_t found[PGN_COMMENT_SHAPES_MAX];
    int count = 0;
    for (;;) {
        pgn_shape_t one;
        if (!shape(s, n, at, &one))
            return false;
        if (count < PGN_COMMENT_SHAPES_MAX)
            found[count++] = one;
        if (literal(s, n, at, "]"))
            break;
        if (!literal(s, n, at, ","))
            return false;
    }
    for (int i = 0; i < count && c->shape_count < PGN_COMMENT_SHAPES_MAX; i++)
        c->shapes[c->shape_count++] = found[i];
    return true;
}

/* [%eval 0.17], [%eval -1.5,20], [%eval #-3], [%eval #2,30]. */
static bool match_eval(const char *s, size_t n, size_t *at, pgn_comment_t *c)
{
    if (!literal(s, n, at, "[%eval") || *at >= n || !is_space(s[(*at)++]))
        return false;
    bool mate = literal(s, n, at, "#");
    int sign = literal(s, n, at, "-") ? -1 : (literal(s, n, at, "+"), 1);
    long long whole, frac = 0;
    int whole_digits, frac_digits = 0;
    if (!digits(s, n, at, 0, 5, &whole, &whole_digits))
        return false;
    if (mate) {
        if (whole_digits == 0)
            return false;
    } else if (literal(s, n, at, ".")) {
        if (!digits(s, n, at, 1, 2, &frac, &frac_digits))
            return false;
    } else if (whole_digits == 0) {
        return false;
    }
    long long depth = -1;
    size_t before_depth = *at;
    if (literal(s, n, at, ",") && !digits(s, n, at, 1, 5, &depth, NULL)) {
        *at = before_depth;
        depth = -1;
    }
    if (!literal(s, n, at, "]"))
        return false;
    c->has_eval = true;
    c->eval_mate = mate;
    c->eval = (int)(sign * (mate ? whole : whole * 100 + (frac_digits == 1 ? frac * 10 : frac)));
    c->eval_depth = (int)depth;
    return true;
}

typedef bool (*matcher_t)(const char *s, size_t n, size_t *at, pgn_comment_t *c);

/* One pass: every command matcher finds becomes two spaces, in place. */
static size_t pass(char *s, size_t n, matcher_t match, pgn_comment_t *c)
{
    size_t out = 0, i = 0;
    while (i < n) {
        size_t at = i + (is_space(s[i]) ? 1 : 0), end = at;
        bool found = false;
        if (at < n && s[at] == '[' && at + 1 < n && s[at + 1] == '%') /* a command may begin here */
            found = match(s, n, &end, c); /* a matcher changes c only when it matches */
        if (found) {
            if (end < n && is_space(s[end]))
                end++;
            s[out++] = ' ';
            s[out++] = ' ';
            i = end;
        } else {
            s[out++] = s[i++];
        }
    }
    return out;
}

size_t pgn_comment_parse(const char *comment, size_t length, pgn_comment_t *out, char *text)
{
    out->has_clock = out->has_emt = out->has_eval = out->eval_mate = false;
    out->clock_ms = out->emt_ms = 0;
    out->eval = out->shape_count = 0;
    out->eval_depth = -1;
    memcpy(text, comment, length);
    size_t n = length;
    bool commands = false; /* most comments have none: no pass then */
    for (size_t i = 0; i + 1 < length && !commands; i++)
        commands = comment[i] == '[' && comment[i + 1] == '%';
    if (commands) {
        n = pass(text, n, match_time, out);
        n = pass(text, n, match_shapes, out);
        n = pass(text, n, match_eval, out);
    }
    size_t start = 0;
    while (start < n && is_space(text[start]))
        start++;
    while (n > start && is_space(text[n - 1]))
        n--;
    memmove(text, text + start, n - start);
    text[n - start] = '\0';
    return n - start;
}

/* Appends s, or v's decimal digits (at least min of them), at out + n. */
static size_t put_str(char *out, size_t n, const char *s)
{
    size_t k = strlen(s);
    memcpy(out + n, s, k);
    return n + k;
}

static size_t put_uint(char *out, size_t n, unsigned long long v, int min)
{
    for (size_t k = decimal_length(v); k < (size_t)min; k++)
        out[n++] = '0';
    return n + decimal_write(v, out + n);
}

/* h:mm:ss with up to three decimals, as chessops's makeClk writes it. */
static size_t put_time(char *out, size_t n, int64_t ms)
{
    int64_t s = ms / 1000, frac = ms % 1000;
    n = put_uint(out, n, (unsigned long long)(s / 3600), 1);
    out[n++] = ':';
    n = put_uint(out, n, (unsigned long long)(s / 60 % 60), 2);
    out[n++] = ':';
    n = put_uint(out, n, (unsigned long long)(s % 60), 2);
    if (frac) {
        out[n++] = '.';
        n = put_uint(out, n, (unsigned long long)frac, 3);
        while (out[n - 1] == '0')
            n--;
    }
    return n;
}

static size_t shapes_text(const pgn_comment_t *c, bool arrows, char *out)
{
    size_t n = 0;
    for (int i = 0; i < c->shape_count; i++) {
        const pgn_shape_t *sh = &c->shapes[i];
        if ((sh->from != sh->to) != arrows)
            continue;
        if (n == 0) {
            memcpy(out, arrows ? "[%cal " : "[%csl ", 6);
            n = 6;
        } else {
            out[n++] = ',';
        }
        out[n++] = sh->color;
        out[n++] = (char)('a' + square_file(sh->from));
        out[n++] = (char)('1' + square_rank(sh->from));
        if (arrows) {
            out[n++] = (char)('a' + square_file(sh->to));
            out[n++] = (char)('1' + square_rank(sh->to));
        }
    }
    if (n)
        out[n++] = ']';
    return n;
}

size_t pgn_comment_commands(const pgn_comment_t *c, char *out)
{
    size_t n = 0;
    for (int arrows = 0; arrows < 2; arrows++) {
        size_t k = shapes_text(c, arrows, out + n + (n ? 1 : 0));
        if (k) {
            if (n)
                out[n++] = ' ';
            n += k;
        }
    }
    if (c->has_eval) {
        n = put_str(out, n, n ? " [%eval " : "[%eval ");
        unsigned long long v = (unsigned long long)(c->eval < 0 ? -(long long)c->eval : c->eval);
        if (c->eval_mate) {
            out[n++] = '#';
            if (c->eval < 0)
                out[n++] = '-';
            n = put_uint(out, n, v, 1);
        } else {
            if (c->eval < 0)
                out[n++] = '-';
            n = put_uint(out, n, v / 100, 1);
            out[n++] = '.';
            n = put_uint(out, n, v % 100, 2);
        }
        if (c->eval_depth >= 0) {
            out[n++] = ',';
            n = put_uint(out, n, (unsigned long long)c->eval_depth, 1);
        }
        out[n++] = ']';
    }
    for (int clock = 0; clock < 2; clock++) {
        if (!(clock ? c->has_clock : c->has_emt))
            continue;
        n = put_str(out, n, n ? " [%" : "[%");
        n = put_str(out, n, clock ? "clk " : "emt ");
        n = put_time(out, n, clock ? c->clock_ms : c->emt_ms);
        out[n++] = ']';
    }
    out[n] = '\0';
    return n;
}
