/* The game API's handlers: each reads its request (the query, the body, the
 * player token, If-Match and Idempotency-Key) and calls the game service
 * (api/game/service.h). Its status becomes the answer in one place
 * (game_http.h), and api/render/ renders what a read returns. The rules, the
 * store, the compare-and-set and the clock are the service's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "analysis_http.h"
#include "review_http.h"
#include "../app.h"
#include "../../rules/base/decimal.h"
#include "../../rules/game.h"
#include "../../rules/rules.h"
#include "../../rules/base/text.h"
#include "../../store/finished_feed.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"
#include "../../store/store.h"
#include "../config.h"
#include "../metrics.h"
#include "../engine/levels.h"
#include "../game/export.h"
#include "../render/embed.h"
#include "../game/idempotency.h"
#include "../game/service.h"
#include "../game/spectator.h"
#include "../game/tokens.h"
#include "handlers.h"
#include "../input.h"
#include "../http/membudget.h"
#include "../../rules/base/utf8.h"
#include "../metrics.h"
#include "../problem.h"
#include "../service_keys.h"
#include "board_svg_http.h"
#include "bulk_handlers.h"
#include "../game/bulk.h"
#include "game_create_input.h"
#include "game_http.h"
#include "webhook_http.h"
#include "../render/game_json.h"
#include "../render/pgn.h"

static const char game_location_prefix[] = "/v1/games/";



/* --- reading a write request --- */


/* A whole number of at least min under key in root into *out (*given:
 * the key is there); else the sentence refusing it, into *invalid. */
static void read_count(const cJSON *root, const char *key, double min, const char *refusal, bool *given,
                       uint64_t *out, const char **invalid)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    *given = item != NULL;
    if (!item)
        return;
    if (!cJSON_IsNumber(item) || item->valuedouble < min || item->valuedouble > 9007199254740991.0
        || item->valuedouble != (double)(uint64_t)item->valuedouble)
        *invalid = refusal;
    else
        *out = (uint64_t)item->valuedouble;
}

/* What a change was made against: body expected_version and/or If-Match,
 * or (a move's) expected_ply. */
static void read_version(const api_request_t *req, const cJSON *root, game_svc_version_t *v)
{
    memset(v, 0, sizeof *v);
    v->if_match = api_request_header(req, "If-Match");
    read_count(root, "expected_version", 1, "'expected_version' must be a whole number from 1", &v->given,
               &v->expected, &v->invalid);
    read_count(root, "expected_ply", 0, "'expected_ply' must be a whole number from 0", &v->ply_given, &v->ply,
               &v->invalid);
}


/* Reads a change's own fields from the body into *a (a->kind set). */
typedef void (*action_reader_fn)(const cJSON *root, game_svc_action_t *a);

static void read_move(const cJSON *root, game_svc_action_t *a)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "move");
    const cJSON *offer = cJSON_GetObjectItemCaseSensitive(root, "offer_draw");
    if (cJSON_IsString(item))
        a->move = item->valuestring;
    else
        a->invalid = "'move' must be a string (UCI or SAN)";
    if (offer && !cJSON_IsBool(offer))
        a->invalid = "'offer_draw' must be true or false";
    a->offer_draw = cJSON_IsTrue(offer);
}

/* "action" as the index of one of names (count of them), or invalid. */
static void read_action(const cJSON *root, const char *const *names, int count, const char *invalid,
                        game_svc_action_t *a)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "action");
    a->action = -1;
    for (int i = 0; i < count && cJSON_IsString(item); i++)
        if (!strcmp(item->valuestring, names[i]))
            a->action = i;
    if (a->action < 0)
        a->invalid = invalid;
}

static void read_draw(const cJSON *root, game_svc_action_t *a)
{
    static const char *const actions[GAME_DRAW_ACTION_COUNT] = { "offer", "accept", "decline", "claim" };
    read_action(root, actions, GAME_DRAW_ACTION_COUNT, "'action' must be offer, accept, decline or claim", a);
}

static void read_takeback(const cJSON *root, game_svc_action_t *a)
{
    static const char *const actions[GAME_TAKEBACK_ACTION_COUNT] = { "offer", "accept", "decline" };
    read_action(root, actions, GAME_TAKEBACK_ACTION_COUNT, "'action' must be offer, accept or decline", a);
}

/* "ms": the time given, 1..GAME_GIVE_TIME_MAX (60 s) a call. */
static void read_give_time(const cJSON *root, game_svc_action_t *a)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "ms");
    if (cJSON_IsNumber(ms) && ms->valuedouble >= 1 && ms->valuedouble <= (double)GAME_GIVE_TIME_MAX
        && ms->valuedouble == (double)(int64_t)ms->valuedouble)
        a->give_ms = (int64_t)ms->valuedouble;
    else
        a->invalid = "'ms' must be a whole number of milliseconds from 1 to 60000";
}

/* "other_token": the other player's, which starting the clocks takes too. */
static void read_start_clocks(const cJSON *root, game_svc_action_t *a)
{
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(root, "other_token");
    if (cJSON_IsString(token) && token->valuestring[0])
        a->other_token = token->valuestring;
    else
        a->invalid = "'other_token' must be the other player's token: starting the clocks takes both";
}

/* --- the changes --- */

static void game_change(const api_request_t *req, api_response_t *res, const char *const *allowed,
                        game_svc_action_kind_t kind, action_reader_fn read)
{
    idem_request_t idem;
    bool with_moves;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res) || !game_http_idempotency(req, false, &idem, res))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    game_svc_config_t c;
    game_http_service(req, &c);
    char client[API_CLIENT_SIZE];
    api_request_client(req, client);
    game_svc_request_t rq = { .key = idem.key, .fingerprint = idem.fingerprint, .legal_moves = with_moves,
                              .answer_status = 200, .client = client };
    game_svc_version_t version;
    read_version(req, root, &version);
    game_svc_action_t action = { .kind = kind };
    if (read)
        read(root, &action);
    game_svc_result_t out = { 0 };
    game_http_answer(req, res, game_svc_change(&c, req->path_param, game_http_bearer(req), &rq, &version, &action, &out), &out);
    game_svc_result_free(&out);
    cJSON_Delete(root);
}

void handle_game_move(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "move", "offer_draw", "expected_version", "expected_ply", NULL };
    game_change(req, res, allowed, GAME_SVC_MOVE, read_move);
}

void handle_game_undo(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_UNDO, NULL);
}

void handle_game_resign(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_RESIGN, NULL);
}

void handle_game_draw(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "action", "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_DRAW, read_draw);
}

void handle_game_takeback(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "action", "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_TAKEBACK, read_takeback);
}

void handle_game_abort(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_ABORT, NULL);
}

void handle_game_give_time(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "ms", "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_GIVE_TIME, read_give_time);
}

void handle_game_start_clocks(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "other_token", "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_START_CLOCKS, read_start_clocks);
}

/* The claims against an opponent gone on their turn: which one is the route's. */
static void read_claim_victory(const cJSON *root, game_svc_action_t *a)
{
    (void)root;
    a->action = GAME_CLAIM_VICTORY;
}

static void read_claim_draw(const cJSON *root, game_svc_action_t *a)
{
    (void)root;
    a->action = GAME_CLAIM_DRAW;
}

void handle_game_claim_victory(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_CLAIM, read_claim_victory);
}

void handle_game_claim_draw(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, GAME_SVC_CLAIM, read_claim_draw);
}

/* --- a new game --- */

void handle_game_create(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen", "chess960", "chess960_position", "variant", "white", "black",
                                           "clock", "takeback", "pgn", "engine", "analysis", "days_per_move",
                                           "start_clocks_at", "rules", "draw_offers_from_move", "draw_odds", "tags",
                                           "metadata", "spectator_delay_plies", "webhooks", NULL };
    idem_request_t idem;
    bool with_moves;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res) || !game_http_idempotency(req, true, &idem, res))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    game_svc_config_t c;
    game_http_service(req, &c);
    char client[API_CLIENT_SIZE];
    api_request_client(req, client);
    game_svc_request_t rq = { .key = idem.key, .fingerprint = idem.fingerprint, .legal_moves = with_moves,
                              .answer_status = 201, .location_prefix = game_location_prefix, .client = client };
    game_svc_result_t out = { 0 };
    game_svc_new_t *spec = calloc(1, sizeof *spec); /* two names of 257 bytes and a position: off the stack */
    game_svc_status_t status = spec ? game_svc_created_before(&c, &rq, &out) : GAME_SVC_EINTERNAL;
    if (!spec)
        snprintf(out.detail, sizeof out.detail, "out of memory");
    /* The computer and hints in a variant need an engine that plays it. */
    webhook_http_games_t *hooks = calloc(1, sizeof *hooks); /* eight subscriptions of 2.3 kB */
    if (!hooks && status == GAME_SVC_OK)
        status = GAME_SVC_EINTERNAL;
    if (status != GAME_SVC_OK
        || (game_create_input_read(root, spec, res)
            && (spec->start.variant == VARIANT_STANDARD || (!spec->engine.plays && !spec->analysis)
                || analysis_pool(app_of(req), (variant_t)spec->start.variant, res))
            && webhook_http_games_read(req, res, root, STORE_WEBHOOK_SCOPE_GAME, hooks)
            && webhook_http_games_see_live(req, res, hooks,
                                           spec->spectator_delay_plies >= 0 ? spec->spectator_delay_plies
                                                                            : c.spectator_delay_plies))) {
        if (status == GAME_SVC_OK) {
            webhook_http_games_attach(hooks, spec);
            status = game_svc_create(&c, &rq, spec, &out);
            /* No game written: the subscriptions made for it go too. */
            webhook_http_games_done(hooks, status == GAME_SVC_OK || status == GAME_SVC_EUNKNOWN);
        }
        game_http_answer(req, res, status, &out);
    } else if (hooks) {
        webhook_http_games_done(hooks, false);
    }
    free(hooks);
    game_svc_result_free(&out);
    if (spec)
        game_meta_free(spec->meta);
    free(spec);
    cJSON_Delete(root);
}

/* --- reads --- */

/* A GET that found the client's copy current (304) and says "Prefer:
 * wait=N": the server is asked to hold it until the game passes version or N
 * seconds pass, then to run this handler again (req->waited_seconds set). */
static void long_poll(const api_request_t *req, api_response_t *res, uint64_t version)
{
    unsigned wait = api_prefer_wait(api_request_header(req, "Prefer"), API_WAIT_MAX_SECONDS);
    if (wait && !req->waited_seconds && !req->draining) {
        res->wait_seconds = wait;
        res->wait_version = version;
    }
}

/* Whether the request's If-None-Match names r's entity tag as read (or is "*"). */
static bool client_copy_current(const api_request_t *req, const game_record_t *r)
{
    char etag[GAME_HTTP_ETAG_SIZE];
    game_http_record_etag(etag, r);
    const char *if_none_match = api_request_header(req, "If-None-Match");
    return if_none_match && (strstr(if_none_match, etag) || !strcmp(if_none_match, "*"));
}

/* Reads the request's game in full (a fallen flag recorded first), as its
 * caller may see it: live, or a spectator's view (spectator.h); keep: the
 * live game goes into the game cache. False with res filled when it cannot
 * be read. *g is to be freed either way. */
static bool read_game(const api_request_t *req, api_response_t *res, game_svc_game_t *g, bool keep)
{
    game_svc_config_t c;
    game_http_service(req, &c);
    game_svc_result_t out = { 0 };
    memset(g, 0, sizeof *g);
    game_svc_status_t status = game_svc_read(&c, req->path_param, STORE_LOAD_FULL, g, &out);
    if (status == GAME_SVC_OK && keep)
        game_svc_keep(&c, g); /* the live game, before any view is made of it */
    if (status == GAME_SVC_OK)
        status = spectator_apply(g, game_svc_is_player(&g->record, game_http_bearer(req)), game_http_live_key(req));
    if (status != GAME_SVC_OK)
        game_http_answer(req, res, status, &out);
    game_svc_result_free(&out);
    return status == GAME_SVC_OK;
}

void handle_game_get(const api_request_t *req, api_response_t *res)
{
    bool with_moves;
    game_svc_game_t g;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res))
        return;
    if (read_game(req, res, &g, true)) {
        if (client_copy_current(req, &g.record)) {
            api_response_set(res, 304, "application/json", calloc(1, 1), 0);
            long_poll(req, res, g.record.version);
        } else {
            size_t length = 0;
            char *body = game_json_game(&g.record, g.meta, g.moves, g.moves_length, g.now_ms,
                                        with_moves ? GAME_JSON_LEGAL_MOVES : 0, NULL, &length);
            api_response_set(res, 200, "application/json", body, length);
        }
        game_http_record_etag(res->etag, &g.record);
        if (req->waited_seconds)
            snprintf(res->preference_applied, sizeof res->preference_applied, "wait=%u", req->waited_seconds);
    }
    game_svc_game_free(&g);
}

/* The squares of the last move in a move list (well formed), or SQ_NONE. */
static void last_move_squares(const char *line, size_t length, board_svg_options_t *options)
{
    options->lastmove_from = options->lastmove_to = SQ_NONE;
    const char *entry = line + length;
    while (entry > line && entry[-1] != ' ')
        entry--;
    const char *colon = memchr(entry, ':', (size_t)(line + length - entry));
    uci_text_t move;
    if (colon && uci_read(entry, (size_t)(colon - entry), &move)) {
        options->lastmove_from = move.from;
        options->lastmove_to = move.to;
    }
}

/* GET /v1/games/{id}/board.svg: the current position with the last move
 * and a check marked, the version as ETag (304 when If-None-Match names it). */
void handle_game_board_svg(const api_request_t *req, api_response_t *res)
{
    board_svg_options_t options;
    game_svc_game_t g;
    if (!board_svg_read_query(req, false, &options, res))
        return;
    const char *v = api_request_query(req, "v");
    if (v && (!*v || strlen(v) > 20 || strspn(v, "0123456789") != strlen(v))) {
        api_problem(res, API_EINVALID_PARAMETER, "'v' must be 1 to 20 digits (it is otherwise ignored)", NULL, NULL);
        return;
    }
    if (read_game(req, res, &g, false)) {
        if (client_copy_current(req, &g.record)) {
            api_response_set(res, 304, BOARD_SVG_CONTENT_TYPE, calloc(1, 1), 0);
        } else {
            last_move_squares(g.moves ? g.moves : "", g.moves ? g.moves_length : 0, &options);
            board_svg_respond(res, &g.record.game.pos, &options);
        }
        game_http_record_etag(res->etag, &g.record);
    }
    game_svc_game_free(&g);
}

void handle_game_pgn(const api_request_t *req, api_response_t *res)
{
    game_svc_game_t g;
    if (read_game(req, res, &g, false)) {
        size_t length = 0;
        pgn_defaults_t defaults;
        config_pgn_defaults(app_of(req)->config, &defaults);
        int eval_count = 0;
        char **evals = review_pgn_evals(req, &g, &eval_count);
        char *text = pgn_write_record_evals(&g.record, g.meta, g.moves, g.moves ? g.moves_length : 0, &defaults,
                                            (const char *const *)evals, eval_count, &length);
        review_pgn_evals_free(evals, eval_count);
        api_response_set(res, 200, "application/x-chess-pgn", text, length);
        game_http_record_etag(res->etag, &g.record);
    }
    game_svc_game_free(&g);
}

/* --- analysis of a stored game --- */

/* Whether a game's position may be analysed now: once it is over, and
 * while it is played against the computer or in a game created with
 * "analysis": true; in any other game between two people a hint is help
 * from outside. */
static bool analysis_allowed(const game_record_t *record)
{
    return game_is_over(&record->game) || record->engine.plays || record->analysis;
}

bool game_analysis_allowed(const game_record_t *record) { return analysis_allowed(record); }

/* With service keys, whether the caller may analyse the game in r: a key
 * (routes_handle has found it holds the scope analysis), or a player's
 * token, which routes_handle let through for this check; else false with
 * res filled (403 forbidden). */
static bool caller_may_analyse(const api_request_t *req, const game_record_t *r, api_response_t *res)
{
    if (!app_of(req)->service_keys || service_keys_is_key(api_request_header(req, "Authorization"))
        || game_svc_is_player(r, game_http_bearer(req)))
        return true;
    api_problem(res, API_EFORBIDDEN,
                "the token is not a player's of this game: a game's analysis needs a player's token or a service "
                "key with the scope analysis",
                NULL, NULL);
    return false;
}

/* GET /v1/games/{id}/analysis: the engine's view of the game's current
 * position, with the limits of POST /v1/position/analysis in the query.
 * head: HEAD, every check of GET's but no search (analysis_respond). */
static void game_analysis(const api_request_t *req, api_response_t *res, bool head)
{
    analysis_request_t rq;
    if (!analysis_read_query(req, &rq, res))
        return;
    game_svc_game_t g;
    store_set_deadline(store_now_ms() + app_of(req)->config->redis_timeout_ms);
    bool read = read_game(req, res, &g, false);
    store_set_deadline(0);
    read = read && caller_may_analyse(req, &g.record, res);
    if (read && !analysis_allowed(&g.record)) {
        api_problem(res, API_EANALYSIS_NOT_ALLOWED,
                    "this game between two people is still being played, and an engine's hint would be help from "
                    "outside the game; it can be analysed once it is over",
                    NULL, NULL);
    } else if (read) {
        move_t *moves = malloc(sizeof *moves * GAME_MAX_PLIES);
        uint64_t *history = malloc(sizeof *history * (GAME_MAX_PLIES + 1));
        int count = moves && history ? game_line_moves(&g.record.game.initial, g.moves, g.moves_length, moves, history,
                                                       GAME_MAX_PLIES)
                                     : -1;
        if (count < 0 || count != g.record.game.ply_count)
            api_problem_game(res, GAME_EBAD_RECORD);
        else
            analysis_respond(req, res, &g.record.game.initial, moves, count, history, &rq, head);
        free(moves);
        free(history);
    }
    game_svc_game_free(&g);
}

bool game_read_for_analysis(const api_request_t *req, api_response_t *res, game_svc_game_t *g)
{
    store_set_deadline(store_now_ms() + app_of(req)->config->redis_timeout_ms);
    bool read = read_game(req, res, g, false);
    store_set_deadline(0);
    return read && caller_may_analyse(req, &g->record, res);
}

void handle_game_analysis(const api_request_t *req, api_response_t *res) { game_analysis(req, res, false); }

void handle_game_analysis_head(const api_request_t *req, api_response_t *res) { game_analysis(req, res, true); }

/* --- export by ids --- */

/* Whether the Accept header asks for PGN (application/x-chess-pgn named
 * before application/x-ndjson, or alone); NDJSON otherwise. */
static bool wants_pgn(const api_request_t *req)
{
    const char *accept = api_request_header(req, "Accept");
    const char *pgn = accept ? strstr(accept, "application/x-chess-pgn") : NULL;
    const char *ndjson = accept ? strstr(accept, "application/x-ndjson") : NULL;
    return pgn && (!ndjson || pgn < ndjson);
}

/* Whether one more export may run now, a place reserved for it when so
 * (game_export_reserve); else the refusal is answered: the buffer budget
 * spent, or --max-exports running. Exports and feed pages share both. */
static bool export_admit(const app_t *app, api_response_t *res)
{
    if (!app->store_pool) {
        api_problem(res, API_EINTERNAL, "no pool for the export", NULL, NULL);
        return false;
    }
    if (membudget_full()) {
        metrics_add(METRIC_BUFFER_REFUSALS, METRICS_REFUSED_BUFFERS_FULL, 1);
        api_problem(res, API_EBUFFERS_FULL,
                    "this replica holds as many bytes for slow readers as --buffer-budget allows; retry shortly", NULL,
                    NULL);
        res->retry_after = EXPORT_RETRY_AFTER;
        return false;
    }
    if (!game_export_reserve(app->config->max_exports)) {
        metrics_add(METRIC_BUFFER_REFUSALS, METRICS_REFUSED_TOO_MANY_EXPORTS, 1);
        api_problem(res, API_ETOO_MANY_EXPORTS, "this replica runs --max-exports exports already; retry shortly", NULL,
                    NULL);
        res->retry_after = EXPORT_RETRY_AFTER;
        return false;
    }
    return true;
}

/* The answer of an export made on a place reserved (NULL: out of memory,
 * the place given back). */
static void export_answer(game_export_t *e, bool pgn, api_response_t *res)
{
    if (!e) {
        game_export_unreserve();
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return;
    }
    res->status = 200;
    res->content_type = pgn ? "application/x-chess-pgn" : "application/x-ndjson";
    res->body_stream = e;
    res->body_ops = &game_export_ops;
    res->trailer = GAME_EXPORT_TRAILERS;
}

void handle_games_export(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "ids", "bulk", NULL };
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    const char *list[GAME_BULK_MAX];
    int unique = 0;
    const app_t *app = app_of(req);
    void *bulk = NULL; /* the ids of a bulk, held while the export is made */
    if (bulk_ids_read(req, root, list, EXPORT_IDS_MAX, &unique, &bulk, res) && export_admit(app, res)) {
        game_svc_config_t c;
        game_http_service(req, &c);
        bool pgn = wants_pgn(req);
        pgn_defaults_t defaults;
        config_pgn_defaults(app->config, &defaults);
        export_answer(game_export_new(&c, app->store_pool, list, unique, pgn, &defaults, game_http_bearer(req),
                                      game_http_live_key(req)),
                      pgn, res);
    }
    bulk_ids_free(bulk);
    cJSON_Delete(root);
}

/* GET /v1/games/finished: a page of the finished-games feed, the games
 * after the cursor `after` (none: from the oldest kept), `limit` at most;
 * written as an export is, so a page of long games holds little memory. */
void handle_games_finished(const api_request_t *req, api_response_t *res)
{
    enum { LIMIT_DEFAULT = 100 };
    const app_t *app = app_of(req);
    const char *after = api_request_query(req, "after");
    unsigned limit;
    if (after && !store_feed_cursor_ok(after)) {
        api_problem(res, API_EINVALID_PARAMETER,
                    "query parameter 'after' must be a cursor of the feed, a line's \"cursor\" (\"<ms>-<seq>\", as "
                    "1767225600000-0)",
                    NULL, NULL);
        return;
    }
    if (!input_query_uint(req, "limit", 1, STORE_FEED_READ_MAX, LIMIT_DEFAULT, &limit, res))
        return;
    store_feed_entry_t *entries = malloc(limit * sizeof *entries);
    unsigned count = 0;
    store_status_t status = entries ? store_feed_read(app->store, after, limit, entries, &count) : STORE_EUNAVAILABLE;
    if (!entries)
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
    else if (status != STORE_OK)
        api_problem_store(res, status, app->store);
    else if (export_admit(app, res)) {
        game_svc_config_t c;
        game_http_service(req, &c);
        export_answer(game_export_feed_new(&c, app->store_pool, entries, (int)count), false, res);
    }
    free(entries);
}

/* --- the embeddable board --- */

/* GET /v1/games/{id}/embed: the page, for a game that exists (404 else),
 * never without its Content-Security-Policy. */
void handle_game_embed(const api_request_t *req, api_response_t *res)
{
    const char *policy = embed_policy(app_of(req)->config->embed_frame_ancestors);
    if (!policy) {
        api_problem(res, API_EINTERNAL, "the page's security policy could not be made", NULL, NULL);
        return;
    }
    game_svc_game_t g;
    if (read_game(req, res, &g, false)) {
        buf_t page;
        buf_init(&page);
        embed_page(&page, g.record.id);
        size_t length = 0;
        char *body = buf_finish(&page, &length);
        api_response_set(res, 200, "text/html; charset=utf-8", body, length);
        res->security_policy = policy;
    }
    game_svc_game_free(&g);
}
