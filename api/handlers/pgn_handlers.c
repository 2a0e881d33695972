/* POST /v1/pgn: reads PGN (rules/pgn_read.h) a game at a time
 * (api/pgn/batch.h) and answers each game's tags, tree, final position and
 * result, or its errors, as JSON, NDJSON or PGN. Stateless. A body past
 * --max-body (up to --max-pgn-bytes) was kept in a file by the transport
 * and is read in pieces as the answer is sent, in bounded memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rules/base/clock.h"
#include "../../rules/pgn_read.h"
#include "../app.h"
#include "../config.h"
#include "../http/body.h"
#include "../input.h"
#include "handlers.h"
#include "../pgn/batch.h"
#include "../pgn/split.h"
#include "../problem.h"

/* The PGN text of the request: the body itself (application/x-chess-pgn,
 * text/plain, or no Content-Type) or the "pgn" string of a JSON object in
 * *root. False with res filled when there is none. *root, when set, is the
 * caller's to delete. */
static bool pgn_text(const api_request_t *req, cJSON **root, const char **text, size_t *length, api_response_t *res)
{
    static const char *const allowed[] = { "pgn", NULL };
    const char *type = api_request_header(req, "Content-Type");
    *root = NULL;
    if (!type || body_media_type_is(type, "application/x-chess-pgn") || body_media_type_is(type, "text/plain")) {
        *text = req->body; /* the reader checks that it is UTF-8 */
        *length = req->body_length;
        return true;
    }
    if (!body_media_type_is(type, "application/json")) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "Content-Type is '%.60s'; send application/x-chess-pgn, text/plain or application/json", type);
        api_problem(res, API_EUNSUPPORTED_MEDIA_TYPE, detail, NULL, NULL);
        return false;
    }
    if (!(*root = input_object(req, allowed, res)))
        return false;
    const cJSON *pgn = cJSON_GetObjectItemCaseSensitive(*root, "pgn");
    if (!cJSON_IsString(pgn)) {
        api_problem(res, API_EINVALID_FIELD, "'pgn' must be a string holding PGN text", NULL, NULL);
        return false;
    }
    *text = pgn->valuestring;
    *length = strlen(pgn->valuestring);
    return true;
}

/* --- a body kept in a file: read and answered as it is sent --- */

/* What one piece's answer may grow to is a multiple of its text (a move's
 * FEN, JSON's escapes): pieces of about 64 KiB, games of at most 1 MiB,
 * keep it a few MiB. */
enum {
    FILL_BYTES = 256 * 1024,  /* read from the file at a time */
    PIECE_BYTES = 64 * 1024,  /* a piece is cut at the first game boundary past this */
    GAME_MAX_BYTES = 1 << 20, /* a game longer than this fails, unread */
};

typedef struct {
    int fd;
    uint64_t size, offset;
    int64_t deadline_us; /* clock_now_us() */
    pgn_batch_t *batch;
    char *in;          /* read, not yet answered: up to GAME_MAX_BYTES + FILL_BYTES */
    size_t in_length;
    pgn_split_t split;
    int line;          /* of in[0] */
    bool passing;      /* a game over GAME_MAX_BYTES, passed until the next cut */
    buf_t out;
    size_t out_sent;
    bool began, ended;
} pgn_stream_t;

/* Lines in text as the reader counts them: LF, CRLF or a lone CR. */
static int count_lines(const char *text, size_t length)
{
    int lines = 0;
    for (size_t i = 0; i < length; i++)
        lines += text[i] == '\n' || (text[i] == '\r' && (i + 1 >= length || text[i + 1] != '\n'));
    return lines;
}

/* Drops the first n bytes read. */
static void take(pgn_stream_t *s, size_t n)
{
    s->line += count_lines(s->in, n);
    memmove(s->in, s->in + n, s->in_length - n);
    s->in_length -= n;
    pgn_split_consumed(&s->split, n);
}

/* Makes more of the answer; false when it cannot go on. */
static bool produce(pgn_stream_t *s)
{
    if (!s->began) {
        pgn_batch_begin(s->batch, &s->out);
        s->began = true;
        return true;
    }
    if (s->offset < s->size && s->in_length < GAME_MAX_BYTES) {
        size_t want = FILL_BYTES;
        if (want > s->size - s->offset)
            want = (size_t)(s->size - s->offset);
        ssize_t n = pread(s->fd, s->in + s->in_length, want, (off_t)s->offset);
        if (n <= 0)
            return false;
        s->in_length += (size_t)n;
        s->offset += (uint64_t)n;
        pgn_split_scan(&s->split, s->in, s->in_length);
    }
    bool end = s->offset >= s->size;
    size_t cut = end ? s->in_length : s->split.cut;
    if (!cut && s->in_length >= GAME_MAX_BYTES)
        cut = s->split.last; /* the whole games before one that is too long */
    if (s->passing) { /* up to the next game: the first place to cut */
        size_t first = s->split.first;
        take(s, first ? first : s->in_length);
        s->passing = !first && !end;
    } else if (cut > 0) {
        pgn_read_error_t error;
        if (pgn_batch_piece(s->batch, s->in, cut, s->line, &s->out, &error) != PGN_BATCH_OK)
            return false;
        take(s, cut);
    } else if (s->in_length >= GAME_MAX_BYTES) {
        pgn_batch_oversized(s->batch, &s->out, s->line, GAME_MAX_BYTES);
        take(s, s->in_length);
        s->passing = true;
    }
    if (end && s->in_length == 0) {
        pgn_batch_end(s->batch, &s->out);
        s->ended = true;
    }
    return !buf_failed(&s->out);
}

static void stream_attach(void *stream, const api_body_conn_t *conn)
{
    (void)stream;
    (void)conn; /* the file is always ready: the stream never waits */
}

static ssize_t stream_read(void *stream, char *out, size_t max)
{
    pgn_stream_t *s = stream;
    while (s->out_sent >= s->out.length) {
        s->out.length = s->out_sent = 0;
        if (s->ended)
            return -1;
        if (clock_now_us() > s->deadline_us || !produce(s))
            return -2; /* the answer is cut: the connection closes */
    }
    size_t n = s->out.length - s->out_sent;
    if (n > max)
        n = max;
    memcpy(out, s->out.data + s->out_sent, n);
    s->out_sent += n;
    return (ssize_t)n;
}

static void stream_free(void *stream)
{
    pgn_stream_t *s = stream;
    if (s->fd >= 0)
        close(s->fd);
    pgn_batch_free(s->batch);
    free(s->in);
    buf_free(&s->out);
    free(s);
}

static const api_body_ops_t pgn_stream_ops = { stream_attach, stream_read, NULL, stream_free };

/* Answers a body kept in a file (past --max-body), read as it is sent. */
static void answer_spooled(const api_request_t *req, const pgn_batch_options_t *options, const char *type,
                           api_response_t *res)
{
    const app_t *app = req->app;
    pgn_stream_t *s = calloc(1, sizeof *s);
    if (s) {
        s->fd = dup(req->body_fd);
        s->in = malloc(GAME_MAX_BYTES + FILL_BYTES);
        s->batch = pgn_batch_new(options);
    }
    if (!s || s->fd < 0 || !s->in || !s->batch) {
        if (s)
            stream_free(s);
        api_problem(res, API_EINTERNAL, "out of memory or descriptors", NULL, NULL);
        return;
    }
    s->size = req->body_length;
    s->line = 1;
    s->deadline_us = clock_now_us() + (int64_t)app->config->pgn_timeout_seconds * 1000000;
    pgn_split_init(&s->split, PIECE_BYTES);
    buf_init(&s->out);
    res->status = 200;
    res->content_type = type;
    res->body_stream = s;
    res->body_ops = &pgn_stream_ops;
}

void handle_pgn(const api_request_t *req, api_response_t *res)
{
    bool with_moves, strict, moves;
    const char *text;
    size_t length;
    cJSON *root = NULL;
    if (!input_query_bool(req, "legal_moves", false, &with_moves, res)
        || !input_query_bool(req, "strict", false, &strict, res) || !input_query_bool(req, "moves", true, &moves, res))
        return;
    const char *accept = api_request_header(req, "Accept");
    pgn_out_t format = accept && strstr(accept, "application/x-chess-pgn") ? PGN_OUT_PGN
                       : accept && strstr(accept, "application/x-ndjson") ? PGN_OUT_NDJSON
                                                                           : PGN_OUT_JSON;
    const char *type = format == PGN_OUT_PGN      ? "application/x-chess-pgn"
                       : format == PGN_OUT_NDJSON ? "application/x-ndjson"
                                                  : "application/json";
    pgn_batch_options_t options = { format, with_moves, moves, strict, 100 };
    if (req->body_spooled) {
        const char *content = api_request_header(req, "Content-Type");
        if (content && !body_media_type_is(content, "application/x-chess-pgn")
            && !body_media_type_is(content, "text/plain")) {
            api_problem(res, API_EUNSUPPORTED_MEDIA_TYPE,
                        "a body over --max-body is read as it comes: send it as application/x-chess-pgn or text/plain",
                        NULL, NULL);
            return;
        }
        if (strict) {
            api_problem(res, API_EINVALID_PARAMETER,
                        "strict answers the first error before any game: send at most --max-body bytes for it",
                        NULL, NULL);
            return;
        }
        options.max_games = 0;
        answer_spooled(req, &options, type, res);
        return;
    }
    if (!pgn_text(req, &root, &text, &length, res)) {
        cJSON_Delete(root);
        return;
    }
    pgn_batch_t *batch = pgn_batch_new(&options);
    buf_t out;
    buf_init(&out);
    pgn_read_error_t error;
    pgn_batch_status_t status = batch ? PGN_BATCH_OK : PGN_BATCH_ENO_MEMORY;
    if (batch) {
        pgn_batch_begin(batch, &out);
        status = pgn_batch_piece(batch, text, length, 1, &out, &error);
    }
    if (status == PGN_BATCH_OK && pgn_batch_games(batch) == 0) {
        memset(&error, 0, sizeof error);
        error.status = PGN_READ_ENO_GAME;
        error.line = 1 + count_lines(text, length);
        error.column = 1;
        snprintf(error.message, sizeof error.message, "the text holds no game");
        status = PGN_BATCH_EREAD;
    }
    if (status == PGN_BATCH_OK) {
        pgn_batch_end(batch, &out);
        size_t body_length = 0;
        char *body = buf_finish(&out, &body_length);
        api_response_set(res, 200, type, body, body_length);
    } else {
        buf_free(&out);
        if (status == PGN_BATCH_EREAD)
            api_problem_pgn(res, &error);
        else if (status == PGN_BATCH_ETOO_LARGE)
            api_problem(res, API_EPGN_TOO_LARGE, "a game's tree holds more than the server keeps for one game", NULL,
                        NULL);
        else
            api_problem(res, API_EUNAVAILABLE, "out of memory reading the PGN; try again later", NULL, NULL);
    }
    pgn_batch_free(batch);
    cJSON_Delete(root);
}
