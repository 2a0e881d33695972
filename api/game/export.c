/* Export by ids, and a page of the finished-games feed (export.h). One
 * lock guards an export's state; the transport's read and a production job
 * take it, the job drops it while it reads and renders a batch. The export is held by the transport (until
 * its free) and by the production job while one is queued or running; the
 * last to let go frees it. At most one job at a time (producing). Its text
 * is charged to the buffer budget (http/membudget.h), which may cut it. */
#include "export.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/game_record.h"
#include "../http/buf.h"
#include "../http/jsonw.h"
#include "../http/membudget.h"
#include "../render/game_json.h"
#include "../render/pgn.h"
#include "spectator.h"

enum { BATCH = 8, RESUME_BELOW = EXPORT_BUFFERED_MAX / 4 };

struct game_export {
    pthread_mutex_t lock;
    game_svc_config_t games;
    workpool_t *pool;
    bool pgn;
    pgn_defaults_t defaults; /* a PGN export's Event and Site */
    char (*ids)[GAME_ID_SIZE];
    store_feed_entry_t *feed; /* a feed page: its entries (ids unused); NULL: an export by ids */
    int count, next;
    buf_t out;      /* made, not yet read: from taken to out.length */
    size_t taken;
    bool producing; /* a job is queued or running (and holds a reference) */
    bool done, failed, gone;
    bool suspended;
    api_body_conn_t conn;
    int refs;
    unsigned exported, missing;
    char exported_text[16], missing_text[16];
    membudget_reader_t reader; /* registered from attach to free */
    size_t charged;            /* out.capacity as charged, under lock */
    /* Who asks (spectator.h): a games' player sees it live, a spectator behind. */
    char token[64];            /* "": none */
    bool live_key;
};

static atomic_uint running;      /* exports made and not yet freed */
static atomic_ullong shed_count; /* exports cut for the budget */

bool game_export_reserve(unsigned max)
{
    unsigned now = atomic_load(&running);
    do {
        if (now >= max)
            return false;
    } while (!atomic_compare_exchange_weak(&running, &now, now + 1));
    return true;
}

void game_export_unreserve(void) { atomic_fetch_sub(&running, 1); }

void game_export_stats(unsigned *open, unsigned long long *shed)
{
    *open = atomic_load(&running);
    *shed = atomic_load(&shed_count);
}

/* Charges out's capacity to the budget, under e->lock. */
static void charge(game_export_t *e) { membudget_track(&e->reader, &e->charged, e->out.capacity); }

static void destroy(game_export_t *e)
{
    pthread_mutex_destroy(&e->lock);
    buf_free(&e->out);
    charge(e);
    game_export_unreserve();
    free(e->ids);
    free(e->feed);
    free(e);
}

/* Drops a reference, under e->lock (which it releases). */
static void release_locked(game_export_t *e)
{
    int left = --e->refs;
    pthread_mutex_unlock(&e->lock);
    if (left == 0)
        destroy(e);
}

static void produce(void *arg);

/* Queues the next job, under e->lock; false when the pool refused it. */
static bool start_job_locked(game_export_t *e)
{
    e->producing = true;
    e->refs++;
    if (workpool_submit(e->pool, produce, e))
        return true;
    e->producing = false;
    e->refs--;
    return false;
}

/* Wakes the connection when it waits for bytes, under e->lock. */
static void wake_locked(game_export_t *e)
{
    if (e->suspended) {
        e->suspended = false;
        e->conn.resume(e->conn.arg);
    }
}

/* A feed line: the entry's cursor and summary, and "game" the game's JSON
 * (game_length bytes), or null when it left Redis (game NULL). */
static void feed_line(const store_feed_entry_t *entry, const char *game, size_t game_length, buf_t *piece)
{
    char ended[GAME_JSON_TIME_SIZE];
    game_json_iso_time(entry->ended_at_ms, ended);
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "cursor", entry->cursor);
    jsonw_kv_string(&w, "id", entry->id);
    jsonw_kv_string(&w, "status", entry->status);
    jsonw_kv_string(&w, "result", entry->result);
    jsonw_key(&w, "termination");
    if (entry->termination[0])
        jsonw_string(&w, entry->termination);
    else
        jsonw_null(&w);
    jsonw_kv_string(&w, "ended_at", ended);
    jsonw_key(&w, "game");
    if (game)
        jsonw_raw_n(&w, game, game_length);
    else
        jsonw_null(&w);
    jsonw_object_end(&w);
    size_t length = 0;
    char *text = jsonw_finish(&w, &length);
    if (!text) {
        buf_fail(piece);
        return;
    }
    buf_append(piece, text, length);
    buf_putc(piece, '\n');
    free(text);
}

/* A feed entry's line into piece: GAME_SVC_OK with its game, GAME_SVC_ENOT_FOUND
 * with null (the game left Redis, or can no longer be read), or a failure. */
static game_svc_status_t render_feed(game_export_t *e, const store_feed_entry_t *entry, buf_t *piece)
{
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_read(&e->games, entry->id, STORE_LOAD_FULL, &g, &out);
    size_t length = 0;
    char *game = status == GAME_SVC_OK
                     ? game_json_game(&g.record, g.meta, g.moves, g.moves_length, g.now_ms, 0, NULL, &length)
                     : NULL;
    if (status == GAME_SVC_OK && !game)
        status = GAME_SVC_EINTERNAL;
    if (status == GAME_SVC_EBAD_RECORD || status == GAME_SVC_EDAMAGED)
        status = GAME_SVC_ENOT_FOUND;
    if (status == GAME_SVC_OK || status == GAME_SVC_ENOT_FOUND)
        feed_line(entry, game, length, piece);
    free(game);
    game_svc_result_free(&out);
    game_svc_game_free(&g);
    return status;
}

/* One game's text into piece, after a blank line when separate (a PGN game
 * after another): GAME_SVC_OK, GAME_SVC_ENOT_FOUND (skipped), or a failure. */
static game_svc_status_t render(game_export_t *e, const char *id, bool separate, buf_t *piece)
{
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_read(&e->games, id, STORE_LOAD_FULL, &g, &out);
    if (status == GAME_SVC_OK)
        status = spectator_apply(&g, e->token[0] && game_svc_is_player(&g.record, e->token), e->live_key);
    if (status == GAME_SVC_OK) {
        size_t length = 0;
        char *text = e->pgn ? pgn_write_record(&g.record, g.meta, g.moves, g.moves ? g.moves_length : 0, &e->defaults,
                                               &length)
                            : game_json_game(&g.record, g.meta, g.moves, g.moves_length, g.now_ms, 0, NULL, &length);
        if (!text) {
            status = GAME_SVC_EINTERNAL;
        } else {
            if (separate)
                buf_putc(piece, '\n');
            buf_append(piece, text, length);
            if (!e->pgn)
                buf_putc(piece, '\n');
            free(text);
        }
    }
    game_svc_result_free(&out);
    game_svc_game_free(&g);
    return status;
}

/* A production job: one batch read and rendered, then the next job queued
 * while the client keeps up, else production pauses until read drains. */
static void produce(void *arg)
{
    game_export_t *e = arg;
    pthread_mutex_lock(&e->lock);
    int first = e->next, last = e->next + BATCH < e->count ? e->next + BATCH : e->count;
    bool stop = e->gone || e->failed;
    unsigned before = e->exported;
    pthread_mutex_unlock(&e->lock);
    buf_t piece;
    buf_init(&piece);
    unsigned found = 0, missing = 0;
    bool failed = false;
    for (int i = first; i < last && !stop && !failed; i++) {
        game_svc_status_t status = e->feed ? render_feed(e, &e->feed[i], &piece)
                                           : render(e, e->ids[i], e->pgn && before + found > 0, &piece);
        if (status == GAME_SVC_OK)
            found++;
        else if (status == GAME_SVC_ENOT_FOUND)
            missing++;
        else
            failed = true;
    }
    failed = failed || buf_failed(&piece);
    pthread_mutex_lock(&e->lock);
    if (!stop && !e->failed) { /* failed meanwhile: cut for the budget */
        if (failed) {
            e->failed = true;
        } else {
            if (piece.length) /* its age counts from its first byte waiting */
                membudget_waiting(&e->reader);
            if (piece.length) /* a batch of ids not found made nothing */
                buf_append(&e->out, piece.data, piece.length);
            charge(e);
            e->failed = buf_failed(&e->out);
            e->exported += found;
            e->missing += missing;
            e->next = last;
            e->done = e->next == e->count;
        }
    }
    buf_free(&piece);
    e->producing = false;
    if (!e->gone) {
        bool more = !e->done && !e->failed && e->out.length - e->taken < EXPORT_BUFFERED_MAX;
        if (more && !start_job_locked(e))
            e->failed = true;
        wake_locked(e);
    }
    release_locked(e); /* this job's reference */
}

/* The budget's close (membudget.h): the text waiting is dropped and the
 * connection closed; the client sees a cut answer, without trailers. */
static void export_shed(void *arg)
{
    game_export_t *e = arg;
    pthread_mutex_lock(&e->lock);
    if (!e->failed && !e->gone) {
        e->failed = true;
        buf_free(&e->out);
        e->taken = 0;
        charge(e);
        atomic_fetch_add(&shed_count, 1);
        if (e->conn.abort)
            e->conn.abort(e->conn.arg);
        wake_locked(e);
    }
    pthread_mutex_unlock(&e->lock);
}

static void export_attach(void *stream, const api_body_conn_t *conn)
{
    game_export_t *e = stream;
    membudget_register(&e->reader, export_shed, e); /* not under e->lock: shedding takes it */
    pthread_mutex_lock(&e->lock);
    e->conn = *conn;
    if (!start_job_locked(e))
        e->failed = true;
    pthread_mutex_unlock(&e->lock);
}

static ssize_t export_read(void *stream, char *out, size_t max)
{
    game_export_t *e = stream;
    pthread_mutex_lock(&e->lock);
    ssize_t n;
    size_t ready = e->out.length - e->taken;
    if (ready > 0) {
        size_t take = ready < max ? ready : max;
        memcpy(out, e->out.data + e->taken, take);
        e->taken += take;
        if (e->taken == e->out.length) { /* all read: a reader that keeps up holds no buffer */
            buf_free(&e->out);
            e->taken = 0;
            charge(e);
            membudget_drained(&e->reader);
        } else if (e->taken > EXPORT_BUFFERED_MAX) {
            memmove(e->out.data, e->out.data + e->taken, e->out.length - e->taken);
            e->out.length -= e->taken;
            e->taken = 0;
        }
        if (!e->done && !e->failed && !e->producing && e->out.length - e->taken < RESUME_BELOW
            && !start_job_locked(e))
            e->failed = true;
        n = (ssize_t)take;
    } else if (e->failed) {
        n = -2;
    } else if (e->done) {
        n = -1;
    } else {
        if (!e->producing && !start_job_locked(e)) {
            e->failed = true;
            n = -2;
        } else {
            e->suspended = true;
            e->conn.suspend(e->conn.arg);
            n = 0;
        }
    }
    pthread_mutex_unlock(&e->lock);
    return n;
}

static size_t export_trailers(void *stream, const char **names, const char **values, size_t max)
{
    game_export_t *e = stream;
    if (max < 2)
        return 0;
    pthread_mutex_lock(&e->lock);
    snprintf(e->exported_text, sizeof e->exported_text, "%u", e->exported);
    snprintf(e->missing_text, sizeof e->missing_text, "%u", e->missing);
    pthread_mutex_unlock(&e->lock);
    names[0] = "X-Games-Exported";
    values[0] = e->exported_text;
    names[1] = "X-Games-Missing";
    values[1] = e->missing_text;
    return 2;
}

static void export_free(void *stream)
{
    game_export_t *e = stream;
    membudget_unregister(&e->reader); /* first: no shedding reaches it after */
    pthread_mutex_lock(&e->lock);
    e->gone = true;
    release_locked(e);
}

const api_body_ops_t game_export_ops = { export_attach, export_read, export_trailers, export_free };

/* An export of count items, their room made by the caller (ids or feed,
 * malloc'd: the export owns them, also when NULL is returned); defaults
 * NULL: none (NDJSON). */
static game_export_t *export_new(const game_svc_config_t *games, workpool_t *pool, char (*ids)[GAME_ID_SIZE],
                                 store_feed_entry_t *feed, int count, bool pgn, const pgn_defaults_t *defaults)
{
    game_export_t *e = calloc(1, sizeof *e);
    if (!e || (!ids && !feed) || pthread_mutex_init(&e->lock, NULL) != 0) {
        free(ids);
        free(feed);
        free(e);
        return NULL;
    }
    e->ids = ids;
    e->feed = feed;
    e->games = *games;
    e->pool = pool;
    e->pgn = pgn;
    if (defaults)
        e->defaults = *defaults;
    e->count = count;
    e->refs = 1; /* the transport's */
    buf_init(&e->out);
    return e;
}

game_export_t *game_export_new(const game_svc_config_t *games, workpool_t *pool, const char *const *ids, int count,
                               bool pgn, const pgn_defaults_t *defaults, const char *token, bool live_key)
{
    char (*copy)[GAME_ID_SIZE] = calloc((size_t)count, sizeof *copy);
    for (int i = 0; copy && i < count; i++)
        snprintf(copy[i], GAME_ID_SIZE, "%s", ids[i]);
    game_export_t *e = export_new(games, pool, copy, NULL, count, pgn, defaults);
    if (e && token && strlen(token) < sizeof e->token) /* a longer one is no player's */
        strcpy(e->token, token);
    if (e)
        e->live_key = live_key;
    return e;
}

game_export_t *game_export_feed_new(const game_svc_config_t *games, workpool_t *pool, const store_feed_entry_t *entries,
                                    int count)
{
    /* One item at least: an empty page is an answer of no line, made the same way. */
    store_feed_entry_t *copy = calloc(count > 0 ? (size_t)count : 1, sizeof *copy);
    if (copy && count > 0)
        memcpy(copy, entries, (size_t)count * sizeof *copy);
    return export_new(games, pool, NULL, copy, count, false, NULL);
}
