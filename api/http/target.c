/* See target.h. One pass over the raw target: the scheme and authority of an
 * absolute-form target are skipped, the path is decoded segment by segment,
 * the query is cut at '&' and each piece at its first '='. */
#include "target.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

typedef enum { DECODE_OK, DECODE_BAD, DECODE_FULL } decode_result_t;

/* Decodes [s, end) into out (size bytes, NUL-terminated). In a path
 * (is_path) %2F, %00 and control characters are bad. */
static decode_result_t decode(const char *s, const char *end, char *out, size_t size, size_t *length, bool is_path)
{
    size_t n = 0;
    for (; s < end; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '%') {
            int high = end - s >= 3 ? hex_value(s[1]) : -1;
            int low = end - s >= 3 ? hex_value(s[2]) : -1;
            if (high < 0 || low < 0)
                return DECODE_BAD;
            c = (unsigned char)(high * 16 + low);
            s += 2;
            if (is_path && (c == '/' || c == '\0'))
                return DECODE_BAD;
        }
        else if (c == '+' && !is_path)
            c = ' '; /* form encoding, as in every query libmicrohttpd reads */
        if (is_path && (c < 0x20 || c == 0x7f))
            return DECODE_BAD;
        if (n + 1 >= size)
            return DECODE_FULL;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    *length = n;
    return DECODE_OK;
}

static target_status_t fail(target_status_t status, char *detail, size_t detail_size, const char *text)
{
    snprintf(detail, detail_size, "%s", text);
    return status;
}

static target_status_t parse_path(const char *p, const char *end, target_t *out, char *detail, size_t detail_size)
{
    size_t n = 0;
    while (p < end) {
        /* One segment (with its leading '/') at a time. */
        const char *next = memchr(p + 1, '/', (size_t)(end - p - 1));
        const char *stop = next ? next : end;
        size_t length = 0;
        decode_result_t result = n + 1 < sizeof out->path ? DECODE_OK : DECODE_FULL;
        if (result == DECODE_OK) {
            out->path[n++] = '/';
            result = decode(p + 1, stop, out->path + n, sizeof out->path - n, &length, true);
        }
        if (result == DECODE_FULL)
            return fail(TARGET_EPATH_TOO_LONG, detail, detail_size, "the path is too long");
        if (result == DECODE_BAD)
            return fail(TARGET_EPATH_ESCAPE, detail, detail_size,
                        "the path has a bad percent-escape, an encoded '/' (%2F) or NUL (%00), or a control "
                        "character");
        n += length;
        p = stop;
    }
    out->path[n] = '\0';
    return TARGET_OK;
}

/* Decodes [from, to) into the query text; fills *text and *length. */
static decode_result_t decode_part(target_t *out, size_t *used, const char *from, const char *to, const char **text,
                                   size_t *length)
{
    char *into = out->query_text + *used;
    decode_result_t result = decode(from, to, into, sizeof out->query_text - *used, length, false);
    if (result == DECODE_OK) {
        *text = into;
        *used += *length + 1;
    }
    return result;
}

static target_status_t parse_query(const char *p, const char *end, target_t *out, char *detail, size_t detail_size)
{
    size_t used = 0;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if (stop > p) {
            if (out->param_count == TARGET_PARAM_MAX)
                return fail(TARGET_EQUERY_TOO_BIG, detail, detail_size, "the query has too many parameters");
            const char *eq = memchr(p, '=', (size_t)(stop - p));
            target_param_t *param = &out->params[out->param_count];
            decode_result_t result = decode_part(out, &used, p, eq ? eq : stop, &param->name, &param->name_length);
            if (result == DECODE_OK)
                result = decode_part(out, &used, eq ? eq + 1 : stop, stop, &param->value, &param->value_length);
            if (result == DECODE_FULL)
                return fail(TARGET_EQUERY_TOO_BIG, detail, detail_size, "the query is too long");
            if (result == DECODE_BAD)
                return fail(TARGET_EQUERY_ESCAPE, detail, detail_size, "the query has a bad percent-escape");
            out->param_count++;
        }
        p = amp ? amp + 1 : end;
    }
    return TARGET_OK;
}

target_status_t target_parse(const char *raw, size_t length, target_t *out, char *detail, size_t detail_size)
{
    const char *p = raw, *end = raw + length;
    out->path[0] = '\0';
    out->param_count = 0;
    /* Absolute-form: the path is what follows the authority (RFC 9112 section 3.2.2). */
    size_t scheme = length >= 7 && !strncasecmp(p, "http://", 7) ? 7 : length >= 8 && !strncasecmp(p, "https://", 8) ? 8 : 0;
    if (scheme) {
        p += scheme;
        while (p < end && *p != '/' && *p != '?')
            p++;
        if (p == end || *p == '?') {
            /* An empty path in absolute-form stands for "/". */
            strcpy(out->path, "/");
            return p < end ? parse_query(p + 1, end, out, detail, detail_size) : TARGET_OK;
        }
    }
    if (p == end || *p != '/')
        return fail(TARGET_ENOT_PATH, detail, detail_size, "the request target must be a path starting with '/'");
    const char *question = memchr(p, '?', (size_t)(end - p));
    const char *path_end = question ? question : end;
    if (memchr(p, '#', (size_t)(end - p)))
        return fail(TARGET_ENOT_PATH, detail, detail_size, "the request target must not have a fragment ('#')");
    target_status_t status = parse_path(p, path_end, out, detail, detail_size);
    if (status != TARGET_OK || !question)
        return status;
    return parse_query(question + 1, end, out, detail, detail_size);
}

const char *target_query(const target_t *target, const char *name)
{
    for (int i = 0; i < target->param_count; i++)
        if (!strcmp(target->params[i].name, name))
            return target->params[i].value;
    return NULL;
}
