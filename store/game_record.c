/* game_record_t <-> JSON. Moves are kept as UCI text in the JSON for
 * readability and as 16-bit moves in memory; reading replays them on the
 * initial position, so a record whose moves are not legal is refused. */
#include "game_record.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const color_keys[COLOR_COUNT] = { "white", "black" };

void game_record_init(game_record_t *g)
{
    memset(g, 0, sizeof *g);
    strcpy(g->status, "active");
    strcpy(g->result, "*");
    g->draw_offer = -1;
}

void game_record_free(game_record_t *g)
{
    if (!g)
        return;
    free(g->moves);
    g->moves = NULL;
    g->move_count = g->move_capacity = 0;
}

/* Appends move with the legal moves of `before` at hand (for the SAN). */
static bool push_with_legal(game_record_t *g, const position_t *before, const move_list_t *legal, move_t move)
{
    if (g->move_count >= GAME_MAX_PLIES)
        return false;
    if (g->move_count == g->move_capacity) {
        int capacity = g->move_capacity ? g->move_capacity * 2 : 64;
        game_move_t *moves = realloc(g->moves, sizeof *moves * (size_t)capacity);
        if (!moves)
            return false;
        g->moves = moves;
        g->move_capacity = capacity;
    }
    game_move_t *m = &g->moves[g->move_count++];
    memset(m, 0, sizeof *m);
    m->move = move;
    uci_format(before, move, m->uci);
    san_format_with(before, legal, move, m->san);
    return true;
}

bool game_record_push_move(game_record_t *g, const position_t *before, move_t move)
{
    move_list_t legal;
    movegen_legal(before, &legal);
    return push_with_legal(g, before, &legal, move);
}

char *game_record_to_json(const game_record_t *g, size_t *length)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *moves = NULL, *players = NULL;
    char *text = NULL;
    if (!root)
        return NULL;
    if (!cJSON_AddStringToObject(root, "id", g->id) || !cJSON_AddNumberToObject(root, "created_at", (double)g->created_at_ms)
        || !cJSON_AddNumberToObject(root, "updated_at", (double)g->updated_at_ms)
        || !cJSON_AddBoolToObject(root, "chess960", g->chess960)
        || !cJSON_AddStringToObject(root, "initial_fen", g->initial_fen) || !cJSON_AddStringToObject(root, "fen", g->fen)
        || !cJSON_AddStringToObject(root, "status", g->status) || !cJSON_AddStringToObject(root, "result", g->result)
        || !cJSON_AddStringToObject(root, "termination", g->termination)
        || !cJSON_AddNumberToObject(root, "draw_offer", g->draw_offer))
        goto done;
    if (!(moves = cJSON_AddArrayToObject(root, "moves")))
        goto done;
    for (int i = 0; i < g->move_count; i++) {
        cJSON *item = cJSON_CreateString(g->moves[i].uci);
        if (!item)
            goto done;
        cJSON_AddItemToArray(moves, item);
    }
    if (!(players = cJSON_AddObjectToObject(root, "players")))
        goto done;
    for (int c = 0; c < COLOR_COUNT; c++) {
        cJSON *p = cJSON_AddObjectToObject(players, color_keys[c]);
        if (!p || !cJSON_AddStringToObject(p, "name", g->players[c].name)
            || !cJSON_AddStringToObject(p, "token_hash", g->players[c].token_hash))
            goto done;
    }
    text = cJSON_PrintUnformatted(root);
    if (text && length)
        *length = strlen(text);
done:
    cJSON_Delete(root);
    return text;
}

static bool copy_string(const cJSON *root, const char *key, char *out, size_t size)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= size)
        return false;
    strcpy(out, item->valuestring);
    return true;
}

static bool read_number(const cJSON *root, const char *key, double *out)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsNumber(item))
        return false;
    *out = item->valuedouble;
    return true;
}

bool game_record_from_json(game_record_t *g, const char *text, size_t length)
{
    game_record_init(g);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
    if (root) {
        while (end < text + length && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
            end++;
        if (end != text + length) {
            cJSON_Delete(root);
            return false;
        }
    }
    bool ok = false;
    double created, updated, offer;
    if (!root)
        return false;
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(root, "moves");
    const cJSON *players = cJSON_GetObjectItemCaseSensitive(root, "players");
    if (!copy_string(root, "id", g->id, sizeof g->id) || !read_number(root, "created_at", &created)
        || !read_number(root, "updated_at", &updated) || !cJSON_IsBool(chess960)
        || !copy_string(root, "initial_fen", g->initial_fen, sizeof g->initial_fen)
        || !copy_string(root, "fen", g->fen, sizeof g->fen) || !copy_string(root, "status", g->status, sizeof g->status)
        || !copy_string(root, "result", g->result, sizeof g->result)
        || !copy_string(root, "termination", g->termination, sizeof g->termination)
        || !read_number(root, "draw_offer", &offer) || !cJSON_IsArray(moves) || !cJSON_IsObject(players)
        || !(created >= -9e15 && created <= 9e15) || !(updated >= -9e15 && updated <= 9e15))
        goto done;
    g->created_at_ms = (int64_t)created;
    g->updated_at_ms = (int64_t)updated;
    g->chess960 = cJSON_IsTrue(chess960);
    g->draw_offer = offer == WHITE || offer == BLACK ? (int)offer : -1;
    for (int c = 0; c < COLOR_COUNT; c++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(players, color_keys[c]);
        if (!copy_string(p, "name", g->players[c].name, sizeof g->players[c].name)
            || !copy_string(p, "token_hash", g->players[c].token_hash, sizeof g->players[c].token_hash))
            goto done;
    }
    position_t pos;
    if (fen_parse(g->initial_fen, strlen(g->initial_fen), g->chess960 ? FEN_CHESS960 : 0, &pos, NULL, 0) != FEN_OK)
        goto done;
    for (const cJSON *m = moves->child; m; m = m->next) {
        move_t move;
        /* Stored moves are UCI, checked against the legal moves as they are replayed. */
        uci_text_t uci;
        if (!cJSON_IsString(m) || !uci_read(m->valuestring, strlen(m->valuestring), &uci))
            goto done;
        move = uci_to_move(&pos, &uci);
        move_list_t legal;
        movegen_legal(&pos, &legal);
        bool listed = false;
        for (int i = 0; i < legal.count && !listed; i++)
            listed = legal.moves[i] == move;
        if (!listed || !push_with_legal(g, &pos, &legal, move))
            goto done;
        position_undo_t undo;
        position_make(&pos, move, &undo);
    }
    ok = true;
done:
    cJSON_Delete(root);
    if (!ok)
        game_record_free(g);
    return ok;
}
