/* The bulks of bulk.h. A creation makes every game in memory, its id in
 * the bulk's slot so that one script writes them all on a Cluster too. It
 * lowers their deadlines, then writes the lot with its kept answer in one
 * step: a replica killed on the way leaves nothing. */
#include "bulk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/base/text.h"
#include "../../store/webhooks.h"
#include "../http/jsonw.h"
#include "tokens.h"

static const char bulk_scope[] = "bulk";
static const char location_prefix[] = "/v1/games/bulk/";

static game_svc_status_t fail(game_svc_result_t *out, game_svc_status_t status, const char *detail)
{
    snprintf(out->detail, sizeof out->detail, "%s", detail);
    return status;
}

static game_svc_status_t from_store(store_status_t status, game_svc_result_t *out)
{
    switch (status) {
    case STORE_ENOT_FOUND: return fail(out, GAME_SVC_ENOT_FOUND, "no bulk has this id");
    case STORE_EUNAVAILABLE: return GAME_SVC_EUNAVAILABLE;
    case STORE_EFULL: return GAME_SVC_EFULL;
    case STORE_EUNKNOWN: return GAME_SVC_EUNKNOWN;
    default: return GAME_SVC_ESTORE;
    }
}

/* --- the info text --- */

static char *info_text(const game_bulk_t *b)
{
    char *text = malloc(256 + TOKENS_HASH_SIZE);
    if (text)
        snprintf(text, 256 + TOKENS_HASH_SIZE,
                 "created %" PRId64 "\ntoken %s\ncount %u\nstart_at %" PRId64 "\nstarted %" PRId64 "\nstate %s",
                 b->created_at_ms, b->token_hash, b->count, b->start_at_ms, b->started_at_ms,
                 b->cancelled ? "cancelled" : "open");
    return text;
}

static bool info_read(const char *text, game_bulk_t *b)
{
    char state[16];
    int n = sscanf(text, "created %" SCNd64 "\ntoken %64s\ncount %u\nstart_at %" SCNd64 "\nstarted %" SCNd64
                         "\nstate %15s",
                   &b->created_at_ms, b->token_hash, &b->count, &b->start_at_ms, &b->started_at_ms, state);
    b->cancelled = n == 6 && !strcmp(state, "cancelled");
    return n == 6 && b->count >= 1 && b->count <= GAME_BULK_MAX && strlen(b->token_hash) == TOKENS_HASH_SIZE - 1;
}

void game_bulk_free(game_bulk_t *b)
{
    free(b->ids);
    free(b->info);
    memset(b, 0, sizeof *b);
}

/* --- creation --- */

/* What a creation holds while it is made: each game, its players' tokens,
 * its state and tags texts, its write id and its deadline. */
typedef struct {
    game_svc_game_t game;
    char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE];
    char state[GAME_RECORD_STATE_MAX];
    char *meta;
    size_t meta_length;
    char write_id[STORE_WRITE_ID_SIZE];
} made_t;

/* The bulk's id: in the slot of the key's record when there is a key (one
 * script writes both), and the slot every game's id is fitted to. */
static bool bulk_id(const game_svc_request_t *rq, char id[TOKENS_ID_SIZE], unsigned *slot)
{
    if (!tokens_new_id(id))
        return false;
    if (!rq->key) {
        *slot = store_id_slot(id);
        return true;
    }
    *slot = store_idempotency_slot(bulk_scope, rq->key);
    return store_id_fit_slot(id, tokens_id_alphabet(), *slot);
}

/* Makes pairing i's game of shared into m, in slot, of bulk id. */
static game_svc_status_t make_game(const game_svc_config_t *c, const game_svc_new_t *shared,
                                   const game_bulk_pairing_t *p, const char *id, unsigned slot, made_t *m,
                                   game_svc_result_t *out)
{
    game_svc_new_t spec = *shared;
    memcpy(spec.names, p->names, sizeof spec.names);
    spec.meta = NULL;
    spec.pgn = NULL;
    spec.engine = (game_engine_t){ 0 };
    game_meta_t *meta = NULL;
    if (p->meta || shared->meta) {
        if (!(meta = game_meta_new()) || (p->meta && !game_meta_copy(meta, p->meta))) {
            game_meta_free(meta);
            return fail(out, GAME_SVC_EINTERNAL, "out of memory");
        }
        if (shared->meta)
            game_meta_merge(meta, shared->meta);
        spec.meta = meta;
    }
    game_svc_status_t status = game_svc_prepare(c, &spec, &m->game, m->tokens, out);
    game_meta_free(meta);
    if (status != GAME_SVC_OK)
        return status;
    game_record_t *r = &m->game.record;
    if (!store_id_fit_slot(r->id, tokens_id_alphabet(), slot) || !tokens_new_write_id(m->write_id))
        return fail(out, GAME_SVC_EINTERNAL, "no id could be drawn");
    text_copy(r->bulk, sizeof r->bulk, id);
    r->version = 1;
    r->updated_at_ms = r->created_at_ms;
    if (!game_record_state(r, m->state, sizeof m->state)
        || (m->game.meta && !game_meta_text(m->game.meta, &m->meta, &m->meta_length)))
        return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    return GAME_SVC_OK;
}

static void write_player(jsonw_t *w, const char *key, const game_player_t *player, const char *token)
{
    jsonw_key(w, key);
    jsonw_object_begin(w);
    jsonw_kv_string(w, "name", player->name);
    if (token)
        jsonw_kv_string(w, "token", token);
    jsonw_object_end(w);
}

static void write_time(jsonw_t *w, const char *key, int64_t ms)
{
    if (ms)
        jsonw_kv_int(w, key, ms);
    else
        jsonw_kv_null(w, key);
}

/* The creation's answer: the bulk, its token, each game's tokens, and
 * the games' webhook subscriptions (webhooks, a JSON array; NULL: none). */
static char *created_json(const game_bulk_t *b, const char *token, const made_t *made, const char *webhooks,
                          size_t *length)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "id", b->id);
    jsonw_kv_string(&w, "token", token);
    jsonw_kv_int(&w, "created_at_ms", b->created_at_ms);
    write_time(&w, "start_clocks_at_ms", b->start_at_ms);
    jsonw_kv_int(&w, "count", b->count);
    jsonw_key(&w, "games");
    jsonw_array_begin(&w);
    for (unsigned i = 0; i < b->count; i++) {
        const game_record_t *r = &made[i].game.record;
        jsonw_object_begin(&w);
        jsonw_kv_string(&w, "id", r->id);
        write_player(&w, "white", &r->players[WHITE], made[i].tokens[WHITE]);
        write_player(&w, "black", &r->players[BLACK], made[i].tokens[BLACK]);
        jsonw_object_end(&w);
    }
    jsonw_array_end(&w);
    if (webhooks) {
        jsonw_key(&w, "webhooks");
        jsonw_raw(&w, webhooks);
    }
    jsonw_object_end(&w);
    return jsonw_finish(&w, length);
}

/* Writes the bulk b of made games, answered by body: their deadlines, then
 * the bulk in one step. */
static game_svc_status_t write_bulk(const game_svc_config_t *c, const game_svc_request_t *rq, const game_bulk_t *b,
                                    made_t *made, const char *body, size_t body_length, game_svc_result_t *out)
{
    const char **ids = malloc(b->count * sizeof *ids);
    int64_t *due = malloc(b->count * sizeof *due);
    store_bulk_game_t *games = malloc(b->count * sizeof *games);
    char location[IDEM_LOCATION_SIZE], *info = info_text(b), *kept = NULL, *replay = NULL;
    text_join(location, sizeof location, (const char *const[]){ location_prefix, b->id }, 2);
    if (rq->key)
        kept = idem_kept_seal(rq->fingerprint, 201, 1, location, body, body_length);
    game_svc_status_t status = GAME_SVC_OK;
    if (!ids || !due || !games || !info || (rq->key && !kept))
        status = fail(out, GAME_SVC_EINTERNAL, "out of memory");
    for (unsigned i = 0; status == GAME_SVC_OK && i < b->count; i++) {
        const game_record_t *r = &made[i].game.record;
        ids[i] = r->id;
        due[i] = game_flag_deadline(&r->game);
        games[i] = (store_bulk_game_t){ r->id, made[i].state, strlen(made[i].state), made[i].meta,
                                        made[i].meta_length, made[i].write_id, r->webhooks };
    }
    store_status_t written = STORE_OK;
    /* Games with subscriptions are known to the webhook sweep first (store/webhooks.h, step 1). */
    if (status == GAME_SVC_OK && made[0].game.record.webhooks[0])
        written = store_webhook_games_add(c->store, ids, b->count);
    if (status == GAME_SVC_OK && written == STORE_OK
        && (written = store_bulk_deadlines(c->store, ids, due, b->count)) == STORE_OK) {
        store_idempotency_t idem = { bulk_scope, rq->key, kept, c->idempotency_ttl_seconds, 0 };
        written = store_bulk_create(c->store, b->id, info, games, b->count, rq->key ? &idem : NULL, &replay);
    }
    if (status == GAME_SVC_OK && written == STORE_EREPLAY)
        status = game_svc_open_kept(rq->fingerprint, replay, out);
    else if (status == GAME_SVC_OK && written == STORE_EEXISTS)
        status = fail(out, GAME_SVC_EINTERNAL, "a drawn id was taken; retry");
    else if (status == GAME_SVC_OK && written != STORE_OK)
        status = from_store(written, out);
    if (status == GAME_SVC_OK)
        text_copy(out->location, sizeof out->location, location);
    free(replay);
    free(kept);
    free(info);
    free(games);
    free(due);
    free(ids);
    return status;
}

game_svc_status_t game_bulk_create(const game_svc_config_t *c, const game_svc_request_t *rq,
                                   const game_svc_new_t *shared, const game_bulk_pairing_t *pairings, unsigned count,
                                   game_svc_result_t *out)
{
    game_svc_status_t status = game_svc_kept(c, bulk_scope, rq, out);
    if (status != GAME_SVC_OK)
        return status;
    if (count < 1 || count > GAME_BULK_MAX)
        return fail(out, GAME_SVC_EINVALID, "a bulk has 1 to 500 games");
    game_bulk_t b = { .count = count, .start_at_ms = shared->start_at_ms };
    char token[TOKENS_TOKEN_SIZE];
    unsigned slot;
    made_t *made = calloc(count, sizeof *made);
    if (!made)
        return fail(out, GAME_SVC_EINTERNAL, "out of memory");
    if (!bulk_id(rq, b.id, &slot) || !tokens_new_token(token) || !tokens_hash(token, b.token_hash))
        status = fail(out, GAME_SVC_EINTERNAL, "no randomness for the bulk's id or token");
    for (unsigned i = 0; status == GAME_SVC_OK && i < count; i++)
        status = make_game(c, shared, &pairings[i], b.id, slot, &made[i], out);
    /* The bulk's subscriptions are recorded before any game names them. */
    if (status == GAME_SVC_OK && shared->on_id && !shared->on_id(shared->on_id_ctx, b.id))
        status = fail(out, GAME_SVC_EUNAVAILABLE, "the bulk's webhook subscriptions could not be recorded");
    char *body = NULL;
    size_t body_length = 0;
    if (status == GAME_SVC_OK) {
        b.created_at_ms = made[0].game.record.created_at_ms;
        if (!(body = created_json(&b, token, made, shared->answer_webhooks, &body_length)))
            status = fail(out, GAME_SVC_EINTERNAL, "out of memory");
    }
    if (status == GAME_SVC_OK)
        status = write_bulk(c, rq, &b, made, body, body_length, out);
    if (status == GAME_SVC_OK) {
        free(out->body);
        out->body = body;
        out->body_length = body_length;
        out->answer_status = 201;
        out->version = 1;
        body = NULL;
    }
    free(body);
    for (unsigned i = 0; i < count; i++) {
        game_svc_game_free(&made[i].game);
        free(made[i].meta);
    }
    free(made);
    return status;
}

/* --- reads and the organiser --- */

game_svc_status_t game_bulk_load(const game_svc_config_t *c, const char *id, game_bulk_t *b, game_svc_result_t *out)
{
    memset(b, 0, sizeof *b);
    char *ids = NULL;
    if (!tokens_is_id(id))
        return fail(out, GAME_SVC_ENOT_FOUND, "no bulk has this id");
    store_status_t status = store_bulk_read(c->store, id, &b->info, &ids);
    if (status != STORE_OK)
        return from_store(status, out);
    text_copy(b->id, sizeof b->id, id);
    bool ok = info_read(b->info, b) && (b->ids = calloc(b->count, sizeof *b->ids));
    unsigned n = 0;
    for (const char *p = ids; ok && *p && n < b->count; n++) {
        size_t length = strcspn(p, " ");
        ok = length > 0 && length < GAME_ID_SIZE;
        if (ok)
            memcpy(b->ids[n], p, length);
        p += length + (p[length] == ' ');
    }
    free(ids);
    if (!ok || n != b->count) {
        game_bulk_free(b);
        return fail(out, GAME_SVC_ESTORE, "the bulk's record cannot be read");
    }
    return GAME_SVC_OK;
}

game_svc_status_t game_bulk_authorize(const game_bulk_t *b, const char *token, game_svc_result_t *out)
{
    char hash[TOKENS_HASH_SIZE];
    if (!token || !*token)
        return fail(out, GAME_SVC_EUNAUTHORIZED, "send Authorization: Bearer <the bulk's token>");
    if (!tokens_hash(token, hash))
        return fail(out, GAME_SVC_EINTERNAL, "the token cannot be checked now");
    return tokens_hash_equal(hash, b->token_hash)
               ? GAME_SVC_OK
               : fail(out, GAME_SVC_EFORBIDDEN, "the token is not this bulk's (the one its creation answered)");
}

/* One game's line of a bulk's state. */
static void write_game_state(jsonw_t *w, const game_record_t *r)
{
    const game_t *g = &r->game;
    jsonw_object_begin(w);
    jsonw_kv_string(w, "id", r->id);
    jsonw_kv_int(w, "version", (long long)r->version);
    jsonw_kv_string(w, "status", game_state_name(g->state));
    jsonw_kv_string(w, "result", game_result_name(g->result));
    if (g->termination != GAME_TERMINATION_NONE)
        jsonw_kv_string(w, "termination", game_termination_name(g->termination));
    else
        jsonw_kv_null(w, "termination");
    jsonw_kv_int(w, "plies", g->ply_count);
    write_player(w, "white", &r->players[WHITE], NULL);
    write_player(w, "black", &r->players[BLACK], NULL);
    jsonw_object_end(w);
}

/* The games' states as one script reads them (one round trip, however
 * many games), each judged at Redis's time as a read would judge it: a
 * flag fallen is shown fallen (the sweep records it). */
static game_svc_status_t write_games(const game_svc_config_t *c, const game_bulk_t *b, jsonw_t *w,
                                     game_svc_result_t *out)
{
    const char **ids = malloc(b->count * sizeof *ids);
    char **states = calloc(b->count, sizeof *states);
    size_t *lengths = calloc(b->count, sizeof *lengths);
    uint64_t *versions = calloc(b->count, sizeof *versions);
    game_record_t *r = malloc(sizeof *r);
    int64_t now = 0;
    store_status_t read = STORE_EUNAVAILABLE;
    if (ids && states && lengths && versions && r) {
        for (unsigned i = 0; i < b->count; i++)
            ids[i] = b->ids[i];
        read = store_bulk_states(c->store, b->id, ids, b->count, states, lengths, versions, &now);
    }
    game_svc_status_t status = read == STORE_OK ? GAME_SVC_OK : from_store(read, out);
    for (unsigned i = 0; status == GAME_SVC_OK && i < b->count; i++) {
        memset(r, 0, sizeof *r);
        if (!states[i]) { /* ended and expired */
            jsonw_object_begin(w);
            jsonw_kv_string(w, "id", b->ids[i]);
            jsonw_kv_string(w, "status", "gone");
            jsonw_object_end(w);
        } else if (game_record_read(r, states[i], lengths[i], "", 0)) {
            text_copy(r->id, sizeof r->id, b->ids[i]);
            r->version = versions[i];
            (void)game_flag(&r->game, now);
            write_game_state(w, r);
        } else {
            status = fail(out, GAME_SVC_EBAD_RECORD, "a game of the bulk cannot be read");
        }
    }
    for (unsigned i = 0; states && i < b->count; i++)
        free(states[i]);
    free(r);
    free(versions);
    free(lengths);
    free(states);
    free(ids);
    return status;
}

game_svc_status_t game_bulk_status(const game_svc_config_t *c, const game_bulk_t *b, buf_t *body,
                                   game_svc_result_t *out)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "id", b->id);
    jsonw_kv_int(&w, "created_at_ms", b->created_at_ms);
    write_time(&w, "start_clocks_at_ms", b->start_at_ms);
    write_time(&w, "clocks_started_at_ms", b->started_at_ms);
    jsonw_kv_bool(&w, "cancelled", b->cancelled);
    jsonw_kv_int(&w, "count", b->count);
    jsonw_key(&w, "games");
    jsonw_array_begin(&w);
    game_svc_status_t status = write_games(c, b, &w, out);
    jsonw_array_end(&w);
    jsonw_object_end(&w);
    size_t length = 0;
    char *json = jsonw_finish(&w, &length);
    if (status == GAME_SVC_OK && !json)
        status = fail(out, GAME_SVC_EINTERNAL, "out of memory");
    if (status == GAME_SVC_OK)
        buf_append(body, json, length);
    free(json);
    return status;
}

/* Records the organiser's change in the bulk's info (compare-and-set on
 * the info read; a lost race changes nothing the games do not say). */
static void record_action(const game_svc_config_t *c, game_bulk_t *b, game_svc_bulk_action_t action, int64_t now)
{
    if (action == GAME_SVC_BULK_CANCEL)
        b->cancelled = true;
    else if (!b->started_at_ms)
        b->started_at_ms = now;
    char *info = info_text(b);
    if (info)
        (void)store_bulk_update(c->store, b->id, b->info, info);
    free(info);
}

game_svc_status_t game_bulk_organize(const game_svc_config_t *c, game_bulk_t *b, game_svc_bulk_action_t action,
                                     unsigned *changed, game_svc_result_t *out)
{
    *changed = 0;
    game_svc_status_t status = GAME_SVC_OK;
    /* A cancel is all or nothing as far as the games allow: all judged first. */
    for (unsigned i = 0; action == GAME_SVC_BULK_CANCEL && i < b->count && status == GAME_SVC_OK; i++) {
        status = game_svc_organize(c, b->ids[i], b->id, action, true, out);
        if (status == GAME_SVC_EREFUSED && out->refusal == GAME_EOVER)
            status = GAME_SVC_OK; /* already over: nothing to cancel */
        else if (status == GAME_SVC_ENOT_FOUND)
            status = GAME_SVC_OK; /* over and gone */
        else if (status == GAME_SVC_EREFUSED)
            text_copy(out->detail, sizeof out->detail, b->ids[i]); /* the game that has begun */
    }
    for (unsigned i = 0; i < b->count && status == GAME_SVC_OK; i++) {
        game_svc_result_t one = { 0 };
        game_svc_status_t done = game_svc_organize(c, b->ids[i], b->id, action, false, &one);
        if (done == GAME_SVC_OK)
            ++*changed;
        else if (done != GAME_SVC_EREFUSED && done != GAME_SVC_ENOT_FOUND) {
            status = done; /* the store failed: the rest are left as they are, to retry */
            memcpy(out->detail, one.detail, sizeof out->detail);
        }
        game_svc_result_free(&one);
    }
    if (status == GAME_SVC_OK || *changed)
        record_action(c, b, action, (int64_t)time(NULL) * 1000);
    return status;
}
