/* Streaming JSON writer. Strings are escaped per RFC 8259 and kept valid
 * UTF-8: a byte that does not start a valid sequence (say, a character cut in
 * half by a length limit) is written as U+FFFD. */
#include "jsonw.h"

#include "../../rules/base/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jsonw_init(jsonw_t *w)
{
    memset(w, 0, sizeof *w);
    buf_init(&w->out);
}

void jsonw_discard(jsonw_t *w) { buf_free(&w->out); }

char *jsonw_finish(jsonw_t *w, size_t *length) { return buf_finish(&w->out, length); }

static void put(jsonw_t *w, const char *s, size_t n) { buf_append(&w->out, s, n); }

/* Comma before a value or key at the current level, unless right after a key. */
static void separate(jsonw_t *w)
{
    if (w->need_comma[w->depth])
        put(w, ",", 1);
    w->need_comma[w->depth] = true;
}

static void open_level(jsonw_t *w, char c)
{
    separate(w);
    put(w, &c, 1);
    if (w->depth + 1 >= JSONW_MAX_DEPTH) {
        buf_fail(&w->out);
        return;
    }
    w->need_comma[++w->depth] = false;
}

static void close_level(jsonw_t *w, char c)
{
    if (w->depth > 0)
        w->depth--;
    put(w, &c, 1);
}

void jsonw_object_begin(jsonw_t *w) { open_level(w, '{'); }
void jsonw_object_end(jsonw_t *w) { close_level(w, '}'); }
void jsonw_array_begin(jsonw_t *w) { open_level(w, '['); }
void jsonw_array_end(jsonw_t *w) { close_level(w, ']'); }

/* Bytes that need a closer look: controls, '"', '\\' and all non-ASCII. */
static bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

static void put_escaped(jsonw_t *w, const char *s, size_t n)
{
    /* Most strings need no escaping: one reservation and one copy. */
    buf_t *b = &w->out;
    if (n > SIZE_MAX - 2) {
        buf_fail(b);
        return;
    }
    if (!buf_reserve(b, n + 2))
        return;
    size_t i = 0;
    while (i < n && !needs_escape((unsigned char)s[i]))
        i++;
    char *out = b->data + b->length;
    out[0] = '"';
    memcpy(out + 1, s, i);
    if (i == n) {
        out[i + 1] = '"'; /* reserved above */
        buf_commit(b, i + 2);
        return;
    }
    buf_commit(b, i + 1);
    size_t start = i;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!needs_escape(c))
            continue;
        if (c >= 0x80) {
            size_t length = utf8_sequence_length((const unsigned char *)s + i, n - i);
            if (length) {
                i += length - 1; /* valid UTF-8 is copied as it is */
                continue;
            }
        }
        put(w, s + start, i - start);
        char esc[8];
        switch (c) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\r': put(w, "\\r", 2); break;
        case '\t': put(w, "\\t", 2); break;
        default:
            if (c >= 0x80) {
                put(w, "\\ufffd", 6);
                break;
            }
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(w, esc, 6);
        }
        start = i + 1;
    }
    put(w, s + start, n - start);
    put(w, "\"", 1);
}

void jsonw_key(jsonw_t *w, const char *key)
{
    /* Keys are the program's own literals: written without escaping. */
    size_t n = strlen(key);
    if (!buf_reserve(&w->out, n + 4))
        return;
    char *start = w->out.data + w->out.length, *out = start;
    if (w->need_comma[w->depth])
        *out++ = ',';
    *out++ = '"';
    memcpy(out, key, n);
    out += n;
    *out++ = '"';
    *out++ = ':';
    buf_commit(&w->out, (size_t)(out - start));
    w->need_comma[w->depth] = false; /* the value follows without a comma */
}

/* After a value at the current level, the next item needs a comma. */
static void value_done(jsonw_t *w) { w->need_comma[w->depth] = true; }

void jsonw_string_len(jsonw_t *w, const char *s, size_t length)
{
    separate(w);
    put_escaped(w, s, length);
    value_done(w);
}

void jsonw_string(jsonw_t *w, const char *s) { jsonw_string_len(w, s, strlen(s)); }

/* Writes v in decimal at the end of buf (24 bytes suffice); returns where it starts. */
static char *decimal(uint64_t v, bool negative, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (negative)
        *--p = '-';
    return p;
}

void jsonw_int(jsonw_t *w, long long v)
{
    char buf[24];
    /* The magnitude as unsigned, so LLONG_MIN does not overflow. */
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *start = decimal(magnitude, v < 0, buf + sizeof buf);
    separate(w);
    put(w, start, (size_t)(buf + sizeof buf - start));
    value_done(w);
}

void jsonw_uint(jsonw_t *w, uint64_t v)
{
    char buf[24];
    char *start = decimal(v, false, buf + sizeof buf);
    separate(w);
    put(w, start, (size_t)(buf + sizeof buf - start));
    value_done(w);
}

void jsonw_bool(jsonw_t *w, bool v)
{
    separate(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
    value_done(w);
}

void jsonw_null(jsonw_t *w)
{
    separate(w);
    put(w, "null", 4);
    value_done(w);
}

void jsonw_raw(jsonw_t *w, const char *json) { jsonw_raw_n(w, json, strlen(json)); }

void jsonw_raw_n(jsonw_t *w, const char *json, size_t length)
{
    separate(w);
    put(w, json, length);
    value_done(w);
}

void jsonw_kv_string(jsonw_t *w, const char *key, const char *s) { jsonw_key(w, key); jsonw_string(w, s); }
void jsonw_kv_int(jsonw_t *w, const char *key, long long v) { jsonw_key(w, key); jsonw_int(w, v); }
void jsonw_kv_bool(jsonw_t *w, const char *key, bool v) { jsonw_key(w, key); jsonw_bool(w, v); }
void jsonw_kv_null(jsonw_t *w, const char *key) { jsonw_key(w, key); jsonw_null(w); }
