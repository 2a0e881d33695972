/* The stateless rules API: /v1/position (GET and POST), /v1/position/moves
 * and /v1/perft. Each handler reads its input, runs the rules core on a
 * stack-allocated position and writes JSON (or, on request, text; GET
 * /v1/position also an SVG picture). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../app.h"
#include "../../rules/rules.h"
#include "board_svg_http.h"
#include "../input.h"
#include "../config.h"
#include "handlers.h"
#include "../render/board_text.h"
#include "../render/position_json.h"
#include "../problem.h"

/* A FEN from the query string, as the transport decoded it: a bare '+' is
 * a space (form encoding), %2B a '+' (three-check's counters). */
static const char *query_fen(const api_request_t *req, char *buf, size_t size)
{
    const char *fen = api_request_query(req, "fen");
    if (!fen)
        return NULL;
    snprintf(buf, size, "%s", fen);
    return buf;
}

/* GET /v1/position?chess960_position=N: *number is N (0..959), or -1 when
 * the parameter is absent. False with res filled when N is no start number
 * or comes with a fen or chess960=false. */
static bool query_chess960_position(const api_request_t *req, bool has_fen, int *number, api_response_t *res)
{
    const char *text = api_request_query(req, "chess960_position");
    const char *chess960 = api_request_query(req, "chess960");
    *number = -1;
    if (!text)
        return true;
    char *end;
    long value = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || value >= CHESS960_COUNT) {
        api_problem(res, API_EINVALID_CHESS960_POSITION,
                    "chess960_position must be a whole number from 0 to 959 (518 is the standard start)", NULL, NULL);
        return false;
    }
    if (has_fen || (chess960 && strcmp(chess960, "true") && strcmp(chess960, "1"))) {
        api_problem(res, API_ECONFLICTING_FIELDS,
                    has_fen ? "give fen or chess960_position, not both" : "chess960_position is a Chess960 start: "
                                                                          "leave out chess960 or set it true",
                    NULL, NULL);
        return false;
    }
    *number = (int)value;
    return true;
}

static void answer_position(const api_request_t *req, api_response_t *res, const position_t *pos,
                            const status_t *status, const opening_t *opening, bool with_moves)
{
    size_t length = 0;
    if (api_request_wants_text(req)) {
        char *text = board_text_render(pos, status, with_moves, &length);
        api_response_set(res, 200, "text/plain; charset=utf-8", text, length);
        return;
    }
    jsonw_t w;
    jsonw_init(&w);
    position_json_write(&w, pos, status, opening, with_moves);
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, 200, "application/json", body, length);
}

/* The quality (0 to 1000) an Accept header gives media type `type`
 * ("image/svg+xml") through a range naming it or its major type ("image/"
 * then a star), and in *index the range's place in the list; -1 when no
 * range names it. A range naming the type overrides its major type's
 * (RFC 9110 12.5.1: the most specific range decides, so svg's q=0 is not
 * undone by an image wildcard after it). A bare wildcard is not counted: it says what a
 * client tolerates, not what it asks for. */
static int accept_quality(const char *accept, const char *type, int *index)
{
    size_t type_length = strlen(type), major_length = strcspn(type, "/");
    int best = -1;
    bool best_exact = false;
    *index = -1;
    for (int i = 0; *accept; i++) {
        size_t length = strcspn(accept, ",");
        const char *range = accept, *end = accept + length;
        accept = *end ? end + 1 : end;
        while (range < end && (*range == ' ' || *range == '\t'))
            range++;
        size_t name = strcspn(range, ";, \t");
        bool exact = name == type_length && !strncasecmp(range, type, type_length);
        bool named = exact || (name == major_length + 2 && !strncasecmp(range, type, major_length + 1) &&
                               range[major_length + 1] == '*');
        if (!named || (best_exact && !exact))
            continue;
        int quality = 1000;
        for (const char *p = range + name; p < end; p++) {
            if (*p != ';')
                continue;
            const char *q = p + 1;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (q + 1 < end && (*q == 'q' || *q == 'Q') && q[1] == '=') { /* q=0, q=0.5, q=1.000 */
                q += 2;
                quality = q < end && *q == '1' ? 1000 : 0;
                if (q + 1 < end && *q == '0' && q[1] == '.') {
                    int scale = 100;
                    for (q += 2; q < end && scale && isdigit((unsigned char)*q); q++, scale /= 10)
                        quality += (*q - '0') * scale;
                }
            }
        }
        if (quality > best || (exact && !best_exact)) {
            best = quality;
            best_exact = exact;
            *index = i;
        }
    }
    return best;
}

/* Whether GET /v1/position answers with a picture: format=svg, or no format
 * and an Accept header that ranks image/svg+xml above JSON and text (by
 * quality, then by order). False with res filled for any other format than
 * svg or json. */
static bool wants_svg(const api_request_t *req, bool *svg, api_response_t *res)
{
    const char *format = api_request_query(req, "format");
    *svg = false;
    if (format) {
        if (strcmp(format, "svg") && strcmp(format, "json")) {
            api_problem(res, API_EINVALID_PARAMETER, "query parameter 'format' must be json or svg", NULL, NULL);
            return false;
        }
        *svg = !strcmp(format, "svg");
        return true;
    }
    const char *accept = api_request_header(req, "Accept");
    if (!accept)
        return true;
    int svg_index, other_index;
    int svg_quality = accept_quality(accept, BOARD_SVG_CONTENT_TYPE, &svg_index);
    *svg = svg_quality > 0;
    static const char *const others[] = { "application/json", "text/plain" };
    for (size_t i = 0; i < sizeof others / sizeof others[0] && *svg; i++) {
        int quality = accept_quality(accept, others[i], &other_index);
        *svg = svg_quality > quality || (svg_quality == quality && svg_index < other_index);
    }
    return true;
}

void handle_position(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen", "chess960", "chess960_position", "variant", NULL };
    char fen_buf[FEN_INPUT_MAX + 2];
    const char *fen = NULL;
    bool chess960 = false, with_moves, svg = false;
    variant_t variant = VARIANT_STANDARD;
    board_svg_options_t picture;
    int number = -1; /* a Chess960 start by number */
    cJSON *root = NULL;
    position_t pos;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res))
        return;
    if (!strcmp(req->method, "POST")) {
        if (!(root = input_object(req, allowed, res)))
            return;
        if (!input_position(root, &pos, res))
            goto done;
    } else {
        fen = query_fen(req, fen_buf, sizeof fen_buf);
        if (!input_query_variant(req, &variant, &chess960, res)
            || !query_chess960_position(req, fen != NULL || variant != VARIANT_STANDARD, &number, res)
            || !wants_svg(req, &svg, res) || !board_svg_read_query(req, false, &picture, res)
            || !board_svg_read_lastmove(req, variant, &picture, res))
            goto done;
        if (number >= 0)
            (void)chess960_start(number, &pos); /* in range: query_chess960_position() checked */
        else if (!input_fen(fen, chess960, variant, &pos, res))
            goto done;
    }
    if (svg) {
        board_svg_respond(res, &pos, &picture);
        goto done;
    }
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    answer_position(req, res, &pos, &status, opening_at(&pos), with_moves);
done:
    cJSON_Delete(root);
}

/* Writes each move of /v1/position/moves's answer as it is played. */
static void write_played(void *ctx, const position_t *before, move_t move)
{
    move_list_t legal;
    movegen_legal(before, &legal);
    position_json_move(ctx, before, &legal, move);
}

void handle_position_moves(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen", "chess960", "chess960_position", "variant", "moves", NULL };
    bool with_moves;
    position_t pos;
    input_played_t played = { 0 };
    jsonw_t w;
    jsonw_init(&w);
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    if (!input_position(root, &pos, res))
        goto done;
    jsonw_object_begin(&w);
    jsonw_key(&w, "moves");
    jsonw_array_begin(&w);
    if (!input_play_moves(root, true, &pos, &played, write_played, &w, res))
        goto done;
    jsonw_array_end(&w);
    status_t status;
    status_evaluate(&pos, played.history, (size_t)played.count, &status);
    if (api_request_wants_text(req)) {
        answer_position(req, res, &pos, &status, played.opening, with_moves);
        goto done;
    }
    jsonw_key(&w, "position");
    position_json_write(&w, &pos, &status, played.opening, with_moves);
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, 200, "application/json", body, length);
done:
    jsonw_discard(&w);
    input_played_free(&played);
    cJSON_Delete(root);
}

/* The `budget` member of a perft_too_large problem. */
static void write_perft_budget(jsonw_t *w, const void *ctx)
{
    jsonw_key(w, "budget");
    jsonw_uint(w, *(const uint64_t *)ctx);
}

/* GET /v1/perft: the depth is checked against --max-perft-depth before any
 * work, then the count runs within --max-perft-nodes (every position visited,
 * root, interior and leaves) and is refused as perft_too_large once it passes it. */
void handle_perft(const api_request_t *req, api_response_t *res)
{
    char fen_buf[FEN_INPUT_MAX + 2], detail[160];
    bool chess960;
    variant_t variant;
    position_t pos;
    if (!input_query_variant(req, &variant, &chess960, res))
        return;
    const char *depth_text = api_request_query(req, "depth");
    size_t digits = depth_text ? strspn(depth_text, "0123456789") : 0;
    while (digits > 1 && depth_text[0] == '0') { /* leading zeros */
        depth_text++;
        digits--;
    }
    /* Any longer number is over every limit; strtol only sees short ones. */
    long depth = digits && digits <= 4 ? strtol(depth_text, NULL, 10) : 99999;
    if (!depth_text || digits == 0 || depth_text[digits] || depth == 0) {
        api_problem(res, API_EINVALID_PARAMETER, "query parameter 'depth' must be a whole number from 1", NULL,
                    NULL);
        return;
    }
    if (depth > (long)app_of(req)->config->max_perft_depth) {
        snprintf(detail, sizeof detail, "depth %.12s is above this server's limit of %u", depth_text,
                 app_of(req)->config->max_perft_depth);
        api_problem(res, API_EPERFT_DEPTH_TOO_LARGE, detail, NULL, NULL);
        return;
    }
    if (!input_fen(query_fen(req, fen_buf, sizeof fen_buf), chess960, variant, &pos, res))
        return;
    move_t moves[MOVE_LIST_MAX];
    uint64_t counts[MOVE_LIST_MAX], total = 0;
    perft_budget_t budget = { .limit = (uint64_t)app_of(req)->config->max_perft_nodes, .visited = 0 };
    int n = 0;
    if (perft_divide_budgeted(&pos, (int)depth, &budget, moves, counts, &n) != PERFT_OK) {
        snprintf(detail, sizeof detail,
                 "perft to depth %ld of this position visits more than this server's budget of %llu nodes", depth,
                 (unsigned long long)budget.limit);
        api_problem(res, API_EPERFT_TOO_LARGE, detail, write_perft_budget, &budget.limit);
        return;
    }
    char fen[FEN_BUFFER_SIZE];
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "fen", fen_format(&pos, fen, sizeof fen));
    jsonw_kv_int(&w, "depth", depth);
    for (int i = 0; i < n; i++)
        total += counts[i];
    jsonw_key(&w, "nodes");
    jsonw_uint(&w, total);
    jsonw_key(&w, "divide");
    jsonw_object_begin(&w);
    for (int i = 0; i < n; i++) {
        char uci[UCI_BUFFER_SIZE];
        jsonw_key(&w, uci_format(&pos, moves[i], uci));
        jsonw_uint(&w, counts[i]);
    }
    jsonw_object_end(&w);
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, 200, "application/json", body, length);
}
