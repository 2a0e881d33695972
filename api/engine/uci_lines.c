/* The parsers of uci_lines.h: a line split into space-separated tokens,
 * numbers clamped to an int's sane range, moves read as a client's are. */
#include "uci_lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next space-separated token of *cursor, or NULL at the end. */
static const char *next_token(const char **cursor, size_t *length)
{
    const char *p = *cursor;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return NULL;
    const char *end = p;
    while (*end && *end != ' ' && *end != '\t')
        end++;
    *length = (size_t)(end - p);
    *cursor = end;
    return p;
}

static bool token_is(const char *token, size_t length, const char *word)
{
    return length == strlen(word) && !memcmp(token, word, length);
}

/* A decimal integer token (optionally negative) into *value. */
static bool token_number(const char **cursor, long long *value)
{
    size_t length;
    const char *t = next_token(cursor, &length);
    if (!t || length > 20)
        return false;
    char text[24];
    memcpy(text, t, length);
    text[length] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end != text + length || end == text)
        return false;
    *value = v;
    return true;
}

static int clamp_int(long long v)
{
    return v > 1000000000 ? 1000000000 : v < -1000000000 ? -1000000000 : (int)v;
}

/* Reads one move the engine wrote: UCI text (the engine's notation; SAN is
 * never taken from it) naming a legal move of pos, found by the rules that
 * read a client's move. MOVE_NONE otherwise: an engine that plays a
 * variant's rules differently from chessd never gets a move past here. */
static move_t read_move(const position_t *pos, const char *text, size_t length)
{
    uci_text_t uci;
    move_t move = MOVE_NONE;
    char reason[128];
    if (!uci_read(text, length, &uci)
        || notation_parse_move(pos, text, length, &move, reason, sizeof reason) != LEGALITY_OK)
        return MOVE_NONE;
    return move;
}

void uci_lines_info(const position_t *pos, const char *line, int multipv_asked, engine_result_t *out)
{
    engine_line_t l;
    memset(&l, 0, sizeof l);
    l.multipv = 1;
    bool has_score = false, has_pv = false;
    const char *cursor = line + 4;
    size_t length;
    const char *t;
    long long v;
    while ((t = next_token(&cursor, &length))) {
        if (token_is(t, length, "string"))
            return;
        if (token_is(t, length, "depth") && token_number(&cursor, &v))
            l.depth = clamp_int(v);
        else if (token_is(t, length, "seldepth") && token_number(&cursor, &v))
            l.seldepth = clamp_int(v);
        else if (token_is(t, length, "multipv") && token_number(&cursor, &v))
            l.multipv = clamp_int(v);
        else if (token_is(t, length, "nodes") && token_number(&cursor, &v))
            l.nodes = v < 0 ? 0 : (uint64_t)v;
        else if (token_is(t, length, "nps") && token_number(&cursor, &v))
            l.nps = v < 0 ? 0 : (uint64_t)v;
        else if (token_is(t, length, "time") && token_number(&cursor, &v))
            l.time_ms = v < 0 ? 0 : (long)clamp_int(v);
        else if (token_is(t, length, "lowerbound"))
            l.bound = ENGINE_BOUND_LOWER;
        else if (token_is(t, length, "upperbound"))
            l.bound = ENGINE_BOUND_UPPER;
        else if (token_is(t, length, "score")) {
            const char *kind = next_token(&cursor, &length);
            if (!kind || !token_number(&cursor, &v))
                return;
            if (token_is(kind, length, "cp"))
                l.is_mate = false;
            else if (token_is(kind, length, "mate"))
                l.is_mate = true;
            else
                return;
            l.value = clamp_int(v);
            has_score = true;
        } else if (token_is(t, length, "wdl")) {
            long long w, d, lo;
            if (!token_number(&cursor, &w) || !token_number(&cursor, &d) || !token_number(&cursor, &lo))
                return;
            l.wdl[0] = clamp_int(w);
            l.wdl[1] = clamp_int(d);
            l.wdl[2] = clamp_int(lo);
            l.has_wdl = true;
        } else if (token_is(t, length, "pv")) {
            has_pv = true;
            position_t p = *pos;
            while ((t = next_token(&cursor, &length))) {
                move_t move = read_move(&p, t, length);
                if (move == MOVE_NONE) {
                    out->illegal_pv_moves++;
                    break;
                }
                if (l.pv_count < ENGINE_PV_MAX) {
                    l.pv[l.pv_count++] = move;
                    position_undo_t undo;
                    position_make(&p, move, &undo);
                }
            }
            break; /* pv is the last field */
        }
    }
    if (!has_score || !has_pv || l.pv_count == 0 || l.multipv < 1 || l.multipv > multipv_asked)
        return;
    out->lines[l.multipv - 1] = l;
    if (out->line_count < l.multipv)
        out->line_count = l.multipv;
}

engine_status_t uci_lines_bestmove(const position_t *pos, const char *line, engine_result_t *out, char *err,
                                   size_t err_size)
{
    const char *cursor = line + 8;
    size_t length;
    const char *t = next_token(&cursor, &length);
    move_t best = t ? read_move(pos, t, length) : MOVE_NONE;
    if (best == MOVE_NONE) {
        int shown = t ? (int)(length > 16 ? 16 : length) : 0;
        if (err && err_size)
            snprintf(err, err_size, "the engine's bestmove '%.*s' is not legal", shown, t ? t : "");
        return ENGINE_EGARBAGE;
    }
    out->bestmove = best;
    uci_format(pos, best, out->bestmove_uci);
    t = next_token(&cursor, &length);
    if (t && token_is(t, length, "ponder") && (t = next_token(&cursor, &length))) {
        position_t after = *pos;
        position_undo_t undo;
        position_make(&after, best, &undo);
        move_t ponder = read_move(&after, t, length);
        if (ponder != MOVE_NONE) {
            out->ponder = ponder;
            uci_format(&after, ponder, out->ponder_uci);
        }
    }
    return ENGINE_OK;
}


void uci_lines_strength_option(strength_option_t *o, const char *rest)
{
    strength_option_t found = {.min = 0, .max = 1};
    bool spin = false, has_default = false, has_min = false, has_max = false;
    const char *cursor = rest;
    size_t length;
    const char *t;
    long long v;
    while ((t = next_token(&cursor, &length))) {
        if (token_is(t, length, "type")) {
            t = next_token(&cursor, &length);
            if (!t || !(token_is(t, length, "spin") || token_is(t, length, "check")))
                return;
            spin = token_is(t, length, "spin");
        } else if (token_is(t, length, "default") && spin && token_number(&cursor, &v)) {
            found.value = clamp_int(v);
            has_default = true;
        } else if (token_is(t, length, "default") && !spin && (t = next_token(&cursor, &length))) {
            found.value = token_is(t, length, "true");
            has_default = token_is(t, length, "true") || token_is(t, length, "false");
        } else if (token_is(t, length, "min") && token_number(&cursor, &v)) {
            found.min = clamp_int(v);
            has_min = true;
        } else if (token_is(t, length, "max") && token_number(&cursor, &v)) {
            found.max = clamp_int(v);
            has_max = true;
        }
    }
    if (!has_default || (spin && (!has_min || !has_max)) || found.min > found.value || found.value > found.max)
        return;
    found.announced = true;
    found.check = !spin;
    *o = found;
}

unsigned engine_variants_announced(const char *line)
{
    static const char option[] = "option name UCI_Variant ";
    if (!line || strncmp(line, option, sizeof option - 1))
        return 0;
    unsigned found = 0;
    const char *cursor = line + sizeof option - 1;
    size_t length;
    const char *t;
    while ((t = next_token(&cursor, &length))) {
        if (!token_is(t, length, "var") || !(t = next_token(&cursor, &length)))
            continue;
        for (int v = 0; v < VARIANT_COUNT; v++)
            if (token_is(t, length, variant_rules((variant_t)v)->engine))
                found |= 1u << v;
    }
    return found;
}
