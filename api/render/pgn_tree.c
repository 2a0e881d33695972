/* The PGN game tree (see tree.h), built as the reader calls back. A comment
 * goes to the last move of its line, before the line's first move, or to the
 * game when the mainline has none yet. A variation of a variation's first
 * move joins that variation's siblings, as chessops places them. */
#include "pgn_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/decimal.h"
#include "../../rules/fen.h"

void pgn_tree_init(pgn_tree_t *t, size_t max_bytes)
{
    memset(t, 0, sizeof *t);
    t->tags_tail = &t->tags;
    t->comments_tail = &t->comments;
    for (int d = 0; d <= PGN_READ_DEPTH_MAX; d++)
        t->line[d].before_tail = &t->line[d].before;
    t->max_bytes = max_bytes;
}

static void free_texts(pgn_text_t *x)
{
    while (x) {
        pgn_text_t *next = x->next;
        free(x);
        x = next;
    }
}

/* Frees a line and every line below it, without recursion on the line's length. */
static void free_line(pgn_node_t *n)
{
    while (n) {
        pgn_node_t *next = n->next;
        for (pgn_node_t *v = n->variations; v;) {
            pgn_node_t *sibling = v->sibling;
            free_line(v);
            v = sibling;
        }
        free_texts(n->before);
        free_texts(n->after);
        free(n->nags);
        free(n->shapes);
        free(n);
        n = next;
    }
}

void pgn_tree_reset(pgn_tree_t *t)
{
    for (pgn_tag_t *g = t->tags; g;) {
        pgn_tag_t *next = g->next;
        free(g->value);
        free(g);
        g = next;
    }
    free_texts(t->comments);
    free_line(t->moves);
    for (int d = 0; d <= PGN_READ_DEPTH_MAX; d++)
        free_texts(t->line[d].before);
    bool no_fens = t->no_fens;
    pgn_tree_init(t, t->max_bytes);
    t->no_fens = no_fens;
}

/* malloc, counted against the tree's bound. */
static void *tree_alloc(pgn_tree_t *t, size_t size)
{
    if (t->bytes + size > t->max_bytes) {
        t->too_large = true;
        return NULL;
    }
    void *p = calloc(1, size);
    if (!p) {
        t->no_memory = true;
        return NULL;
    }
    t->bytes += size;
    return p;
}

static pgn_text_t *text_new(pgn_tree_t *t, const char *s, size_t length)
{
    pgn_text_t *x = tree_alloc(t, sizeof *x + length + 1);
    if (x) {
        memcpy(x->text, s, length);
        x->text[length] = '\0';
        x->length = length;
    }
    return x;
}

bool pgn_tree_tag(pgn_tree_t *t, const char *name, const char *value, size_t value_length)
{
    size_t name_length = strlen(name);
    pgn_tag_t *g = tree_alloc(t, sizeof *g + name_length + 1);
    if (!g)
        return false;
    g->value = tree_alloc(t, value_length + 1);
    if (!g->value) {
        free(g);
        return false;
    }
    memcpy(g->name, name, name_length + 1);
    memcpy(g->value, value, value_length);
    g->value_length = value_length;
    *t->tags_tail = g;
    t->tags_tail = &g->next;
    return true;
}

bool pgn_tree_node(pgn_tree_t *t, const pgn_read_node_t *node)
{
    char fen[FEN_BUFFER_SIZE] = "";
    if (!t->no_fens)
        fen_format(node->after, fen, sizeof fen);
    size_t fen_length = strlen(fen);
    pgn_node_t *n = tree_alloc(t, sizeof *n + fen_length + 1);
    if (!n)
        return false;
    memcpy(n->fen, fen, fen_length + 1);
    size_t uci = strnlen(node->played->uci, sizeof n->uci - 1), san = strnlen(node->played->san, sizeof n->san - 1);
    memcpy(n->uci, node->played->uci, uci);
    memcpy(n->san, node->played->san, san);
    n->fullmove = node->before->fullmove_number;
    n->white = node->before->side_to_move == WHITE;
    n->eval_depth = -1;
    int d = node->depth;
    n->before = t->line[d].before;
    t->line[d].before = NULL;
    t->line[d].before_tail = &t->line[d].before;
    pgn_node_t *last = t->line[d].last;
    if (last) {
        last->next = n;
    } else if (d == 0) {
        t->moves = n;
    } else { /* a variation's first move: after the other variations of the move it replaces */
        pgn_node_t **slot = &t->line[d].owner->variations;
        while (*slot)
            slot = &(*slot)->sibling;
        *slot = n;
    }
    if (!last)
        t->line[d].first = n;
    t->line[d].last = n;
    return true;
}

/* Lifts the commands into n; the last of each kind wins. */
static bool take_commands(pgn_tree_t *t, pgn_node_t *n, const pgn_comment_t *c)
{
    if (c->has_clock) {
        n->has_clock = true;
        n->clock_ms = c->clock_ms;
    }
    if (c->has_emt) {
        n->has_emt = true;
        n->emt_ms = c->emt_ms;
    }
    if (c->has_eval) {
        n->has_eval = true;
        n->eval_mate = c->eval_mate;
        n->eval = c->eval;
        n->eval_depth = c->eval_depth;
    }
    if (c->shape_count > 0) {
        int total = n->shape_count + c->shape_count;
        if (total > PGN_COMMENT_SHAPES_MAX)
            total = PGN_COMMENT_SHAPES_MAX;
        pgn_shape_t *shapes = tree_alloc(t, (size_t)total * sizeof *shapes);
        if (!shapes)
            return false;
        if (n->shape_count)
            memcpy(shapes, n->shapes, (size_t)n->shape_count * sizeof *shapes);
        memcpy(shapes + n->shape_count, c->shapes, (size_t)(total - n->shape_count) * sizeof *shapes);
        free(n->shapes);
        n->shapes = shapes;
        n->shape_count = total;
    }
    return true;
}

bool pgn_tree_comment(pgn_tree_t *t, int depth, const char *text, size_t length)
{
    char *rest = malloc(length + 1);
    pgn_comment_t *c = malloc(sizeof *c);
    if (!rest || !c) {
        free(rest);
        free(c);
        t->no_memory = true;
        return false;
    }
    size_t n = 0; /* "\r\n" read as "\n", as a reader that splits lines does */
    for (size_t i = 0; i < length; i++)
        if (!(text[i] == '\r' && i + 1 < length && text[i + 1] == '\n'))
            rest[n++] = text[i];
    n = pgn_comment_parse(rest, n, c, rest);
    bool ok = true;
    pgn_node_t *last = t->line[depth].last;
    pgn_text_t **tail = last ? NULL : depth == 0 ? t->comments_tail : t->line[depth].before_tail;
    if (last) {
        ok = take_commands(t, last, c);
        tail = &last->after;
        while (*tail)
            tail = &(*tail)->next;
    }
    if (ok && n > 0) {
        pgn_text_t *x = text_new(t, rest, n);
        ok = x != NULL;
        if (ok) {
            *tail = x;
            if (!last && depth == 0)
                t->comments_tail = &x->next;
            else if (!last)
                t->line[depth].before_tail = &x->next;
        }
    }
    free(rest);
    free(c);
    return ok;
}

bool pgn_tree_nag(pgn_tree_t *t, int depth, int nag)
{
    pgn_node_t *last = t->line[depth].last;
    if (!last)
        return true; /* a NAG before any move of its line has nothing to mark */
    int *nags = tree_alloc(t, (size_t)(last->nag_count + 1) * sizeof *nags);
    if (!nags)
        return false;
    if (last->nag_count)
        memcpy(nags, last->nags, (size_t)last->nag_count * sizeof *nags);
    nags[last->nag_count] = nag;
    free(last->nags);
    last->nags = nags;
    last->nag_count++;
    return true;
}

bool pgn_tree_variation(pgn_tree_t *t, int depth, bool open)
{
    if (open) { /* the reader has checked that the line it opens in has a move */
        pgn_node_t *replaced = t->line[depth - 1].last;
        bool first = depth - 1 > 0 && replaced == t->line[depth - 1].first;
        t->line[depth].owner = first ? t->line[depth - 1].owner : replaced;
    }
    t->line[depth].first = t->line[depth].last = NULL; /* opened or closed, the line starts afresh */
    free_texts(t->line[depth].before);
    t->line[depth].before = NULL;
    t->line[depth].before_tail = &t->line[depth].before;
    return true;
}

/* --- JSON --- */

static void texts_json(jsonw_t *w, const char *key, const pgn_text_t *x)
{
    if (!x)
        return;
    jsonw_key(w, key);
    jsonw_array_begin(w);
    for (; x; x = x->next)
        jsonw_string_len(w, x->text, x->length);
    jsonw_array_end(w);
}

static const char *shape_color_name(char c)
{
    return c == 'G' ? "green" : c == 'R' ? "red" : c == 'Y' ? "yellow" : "blue";
}

static void square_json(jsonw_t *w, const char *key, int sq)
{
    char name[3] = { (char)('a' + square_file(sq)), (char)('1' + square_rank(sq)), '\0' };
    jsonw_kv_string(w, key, name);
}

static void shapes_json(jsonw_t *w, const pgn_node_t *n, bool arrows)
{
    bool any = false;
    for (int i = 0; i < n->shape_count; i++) {
        const pgn_shape_t *s = &n->shapes[i];
        if ((s->from != s->to) != arrows)
            continue;
        if (!any) {
            jsonw_key(w, arrows ? "arrows" : "squares");
            jsonw_array_begin(w);
            any = true;
        }
        jsonw_object_begin(w);
        jsonw_kv_string(w, "color", shape_color_name(s->color));
        if (arrows) {
            square_json(w, "from", s->from);
            square_json(w, "to", s->to);
        } else {
            square_json(w, "square", s->from);
        }
        jsonw_object_end(w);
    }
    if (any)
        jsonw_array_end(w);
}

static void nags_json(jsonw_t *w, const pgn_node_t *n)
{
    if (!n->nag_count)
        return;
    jsonw_key(w, "nags");
    jsonw_array_begin(w);
    for (int i = 0; i < n->nag_count; i++)
        jsonw_int(w, n->nags[i]);
    jsonw_array_end(w);
}

static void line_json(jsonw_t *w, const pgn_node_t *n)
{
    jsonw_array_begin(w);
    for (; n; n = n->next) {
        jsonw_object_begin(w);
        jsonw_kv_string(w, "uci", n->uci);
        jsonw_kv_string(w, "san", n->san);
        jsonw_kv_string(w, "fen", n->fen);
        texts_json(w, "comments_before", n->before);
        texts_json(w, "comments", n->after);
        nags_json(w, n);
        if (n->has_clock)
            jsonw_kv_int(w, "clock_ms", n->clock_ms);
        if (n->has_emt)
            jsonw_kv_int(w, "emt_ms", n->emt_ms);
        if (n->has_eval) {
            jsonw_key(w, "eval");
            jsonw_object_begin(w);
            jsonw_kv_int(w, n->eval_mate ? "mate" : "cp", n->eval);
            if (n->eval_depth >= 0)
                jsonw_kv_int(w, "depth", n->eval_depth);
            jsonw_object_end(w);
        }
        shapes_json(w, n, true);
        shapes_json(w, n, false);
        if (n->variations) {
            jsonw_key(w, "variations");
            jsonw_array_begin(w);
            for (const pgn_node_t *v = n->variations; v; v = v->sibling)
                line_json(w, v);
            jsonw_array_end(w);
        }
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
}

void pgn_tree_tags_json(const pgn_tree_t *t, jsonw_t *w)
{
    for (const pgn_tag_t *g = t->tags; g; g = g->next) {
        jsonw_key(w, g->name);
        jsonw_string_len(w, g->value, g->value_length);
    }
}

void pgn_tree_json(const pgn_tree_t *t, jsonw_t *w)
{
    jsonw_key(w, "tags");
    jsonw_object_begin(w);
    pgn_tree_tags_json(t, w);
    jsonw_object_end(w);
    texts_json(w, "comments", t->comments);
    jsonw_key(w, "moves");
    line_json(w, t->moves);
}

/* --- PGN --- */

enum { LINE_COLUMNS = 80 };

/* The movetext being laid out: tokens joined by spaces, a line broken
 * before a token that would pass 80 columns (python-chess's rule). */
typedef struct {
    buf_t *out;
    size_t line;         /* bytes on the current line, its trailing space included */
    bool force_number;   /* Black's move gets "N..." */
    jsonw_t *tokens;     /* not NULL: each token is a string of this array, not laid out */
} layout_t;

/* Drops the space after the last token. */
static void drop_space(buf_t *b)
{
    if (!b->failed && b->length > 0 && b->data[b->length - 1] == ' ')
        b->data[--b->length] = '\0';
}

/* Columns count characters, as python-chess's len() does: UTF-8's continuation bytes do not. */
static size_t characters(const char *s, size_t length)
{
    size_t n = 0;
    for (size_t i = 0; i < length; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

static void token(layout_t *l, const char *s, size_t length)
{
    if (l->tokens) {
        jsonw_string_len(l->tokens, s, length);
        return;
    }
    size_t width = characters(s, length);
    if (l->line > 0 && l->line + width + 1 > LINE_COLUMNS) {
        drop_space(l->out);
        buf_putc(l->out, '\n');
        l->line = 0;
    }
    buf_append(l->out, s, length);
    buf_putc(l->out, ' ');
    l->line += width + 1;
}

static void token_str(layout_t *l, const char *s) { token(l, s, strlen(s)); }

static void comment_token(layout_t *l, const char *text, size_t length, const char *commands, size_t commands_length)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{ ");
    buf_append(&b, text, length);
    if (length && commands_length)
        buf_putc(&b, ' ');
    buf_append(&b, commands, commands_length);
    buf_puts(&b, " }");
    if (b.failed) {
        buf_fail(l->tokens ? &l->tokens->out : l->out);
    } else {
        token(l, b.data, b.length);
    }
    buf_free(&b);
    l->force_number = true;
}

/* The commands of n of the kinds asked (COMMANDS_ bits) in chessops's order. */
enum { COMMANDS_SHAPES = 1, COMMANDS_EVAL = 2, COMMANDS_EMT = 4, COMMANDS_CLOCK = 8, COMMANDS_ALL = 15 };
static size_t node_commands(const pgn_node_t *n, unsigned kinds, char *out)
{
    pgn_comment_t c;
    memset(&c, 0, sizeof c);
    c.has_clock = n->has_clock && (kinds & COMMANDS_CLOCK);
    c.clock_ms = n->clock_ms;
    c.has_emt = n->has_emt && (kinds & COMMANDS_EMT);
    c.emt_ms = n->emt_ms;
    c.has_eval = n->has_eval && (kinds & COMMANDS_EVAL);
    c.eval_mate = n->eval_mate;
    c.eval = n->eval;
    c.eval_depth = n->eval_depth;
    c.shape_count = kinds & COMMANDS_SHAPES ? n->shape_count : 0;
    if (c.shape_count)
        memcpy(c.shapes, n->shapes, (size_t)c.shape_count * sizeof *n->shapes);
    return pgn_comment_commands(&c, out);
}

static void write_line(layout_t *l, const pgn_node_t *n)
{
    l->force_number = true;
    for (; n; n = n->next) {
        for (const pgn_text_t *x = n->before; x; x = x->next)
            comment_token(l, x->text, x->length, "", 0);
        char number[24];
        if (n->white || l->force_number) {
            size_t k = decimal_write((uint64_t)n->fullmove, number);
            memcpy(number + k, n->white ? "." : "...", n->white ? 2 : 4);
            token_str(l, number);
        }
        token_str(l, n->san);
        l->force_number = false;
        for (int i = 0; i < n->nag_count; i++) {
            number[0] = '$';
            number[1 + decimal_write((uint64_t)n->nags[i], number + 1)] = '\0';
            token_str(l, number);
        }
        char commands[PGN_COMMENT_COMMANDS_MAX];
        size_t commands_length = node_commands(n, COMMANDS_ALL, commands);
        const pgn_text_t *x = n->after;
        if (x || commands_length) {
            comment_token(l, x ? x->text : "", x ? x->length : 0, commands, commands_length);
            if (x)
                x = x->next;
        }
        for (; x; x = x->next)
            comment_token(l, x->text, x->length, "", 0);
        for (const pgn_node_t *v = n->variations; v; v = v->sibling) {
            token_str(l, "(");
            write_line(l, v);
            token_str(l, ")");
            l->force_number = true;
        }
    }
}

static void tag_line(buf_t *out, const char *name, const char *value, size_t length)
{
    buf_putc(out, '[');
    buf_puts(out, name);
    buf_puts(out, " \"");
    for (size_t i = 0; i < length; i++) {
        if (value[i] == '"' || value[i] == '\\')
            buf_putc(out, '\\');
        buf_putc(out, value[i]);
    }
    buf_puts(out, "\"]\n");
}

static const pgn_tag_t *find_tag(const pgn_tree_t *t, const char *name)
{
    for (const pgn_tag_t *g = t->tags; g; g = g->next)
        if (!strcmp(g->name, name))
            return g;
    return NULL;
}

void pgn_tree_write(const pgn_tree_t *t, const char *result, buf_t *out)
{
    static const char *const roster[7][2] = { { "Event", "?" }, { "Site", "?" }, { "Date", "????.??.??" },
                                              { "Round", "?" }, { "White", "?" }, { "Black", "?" },
                                              { "Result", NULL } };
    for (int i = 0; i < 7; i++) {
        const pgn_tag_t *g = find_tag(t, roster[i][0]);
        if (i == 6)
            tag_line(out, "Result", result, strlen(result));
        else if (g)
            tag_line(out, g->name, g->value, g->value_length);
        else
            tag_line(out, roster[i][0], roster[i][1], strlen(roster[i][1]));
    }
    for (const pgn_tag_t *g = t->tags; g; g = g->next) {
        bool in_roster = false;
        for (int i = 0; i < 7; i++)
            in_roster = in_roster || !strcmp(g->name, roster[i][0]);
        if (!in_roster)
            tag_line(out, g->name, g->value, g->value_length);
    }
    buf_putc(out, '\n');
    layout_t l = { out, 0, true, NULL };
    for (const pgn_text_t *x = t->comments; x; x = x->next)
        comment_token(&l, x->text, x->length, "", 0);
    write_line(&l, t->moves);
    token_str(&l, result);
    drop_space(out);
    buf_putc(out, '\n');
}

/* --- a stored game's notes --- */

/* Whether n carries anything a stored game keeps beside its move and clock. */
static bool has_notes(const pgn_node_t *n)
{
    return n->before || n->after || n->nag_count || n->shape_count || n->has_eval || n->has_emt || n->variations;
}

bool pgn_tree_has_notes(const pgn_tree_t *t)
{
    if (t->comments)
        return true;
    for (const pgn_node_t *n = t->moves; n; n = n->next)
        if (has_notes(n))
            return true;
    return false;
}

static void commands_json(jsonw_t *w, const char *key, const pgn_node_t *n, unsigned kind)
{
    char commands[PGN_COMMENT_COMMANDS_MAX];
    size_t length = node_commands(n, kind, commands);
    if (length) {
        jsonw_key(w, key);
        jsonw_string_len(w, commands, length);
    }
}

void pgn_tree_notes(const pgn_tree_t *t, jsonw_t *w)
{
    jsonw_object_begin(w);
    buf_t line;
    buf_init(&line);
    for (const pgn_node_t *n = t->moves; n; n = n->next) {
        if (line.length)
            buf_putc(&line, ' ');
        buf_puts(&line, n->uci);
    }
    if (line.failed)
        buf_fail(&w->out);
    jsonw_key(w, "line");
    jsonw_string_len(w, line.data ? line.data : "", line.length);
    buf_free(&line);
    texts_json(w, "comments", t->comments);
    jsonw_key(w, "moves");
    jsonw_array_begin(w);
    int ply = 0;
    for (const pgn_node_t *n = t->moves; n; n = n->next) {
        ply++;
        if (!has_notes(n))
            continue;
        jsonw_object_begin(w);
        jsonw_kv_int(w, "ply", ply);
        texts_json(w, "before", n->before);
        nags_json(w, n);
        if (n->after) {
            jsonw_key(w, "text");
            jsonw_string_len(w, n->after->text, n->after->length);
            texts_json(w, "more", n->after->next);
        }
        commands_json(w, "shapes", n, COMMANDS_SHAPES);
        commands_json(w, "eval", n, COMMANDS_EVAL);
        commands_json(w, "emt", n, COMMANDS_EMT);
        if (n->variations) {
            jsonw_key(w, "variations");
            jsonw_array_begin(w);
            layout_t l = { NULL, 0, true, w };
            for (const pgn_node_t *v = n->variations; v; v = v->sibling) {
                token_str(&l, "(");
                write_line(&l, v);
                token_str(&l, ")");
            }
            jsonw_array_end(w);
        }
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
    jsonw_object_end(w);
}
