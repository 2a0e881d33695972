/* jsonw_bench: why chessd writes its JSON with jsonw rather than building
 * cJSON trees. It times the full Position object of Kiwipete (48 legal
 * moves) written both ways, rules work included, once the two texts are
 * checked to be the same bytes; then the texts a move writes besides (main).
 * The best round of each is kept: noise on a shared machine only adds time.
 *   make bench, or: make build/jsonw_bench && build/jsonw_bench */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../api/render/game_json.h"
#include "../../api/render/position_json.h"
#include "../../store/game_record.h"

static int rounds = 15, renders = 2000;

static const char *const KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
static const char piece_letters[] = "pnbrqk";
static const char *const color_names[COLOR_COUNT] = { "white", "black" };

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void square_name(int sq, char *out)
{
    out[0] = (char)('a' + square_file(sq));
    out[1] = (char)('1' + square_rank(sq));
    out[2] = '\0';
}

static cJSON *letter_or_null(int type)
{
    if (type < 0 || type >= PIECE_TYPE_COUNT)
        return cJSON_CreateNull();
    char letter[2] = { piece_letters[type], '\0' };
    return cJSON_CreateString(letter);
}

static cJSON *move_tree(const position_t *pos, const move_list_t *legal, move_t move)
{
    char uci[UCI_BUFFER_SIZE], san[SAN_BUFFER_SIZE], from[3], to[3];
    int kind = move_kind(move), from_sq = move_from(move), to_sq = move_to(move);
    piece_t piece = pos->board[from_sq];
    int captured = -1;
    if (kind == MOVE_EN_PASSANT)
        captured = PAWN;
    else if (kind != MOVE_CASTLING && pos->board[to_sq] != NO_PIECE)
        captured = (int)piece_type(pos->board[to_sq]);
    uci_format(pos, move, uci);
    san_format_with(pos, legal, move, san);
    square_name(from_sq, from);
    square_name(kind == MOVE_CASTLING ? position_castle_king_to(pos, to_sq) : to_sq, to);
    char suffix = san[0] ? san[strlen(san) - 1] : '\0';
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "uci", uci);
    cJSON_AddStringToObject(m, "san", san);
    cJSON_AddStringToObject(m, "from", from);
    cJSON_AddStringToObject(m, "to", to);
    cJSON_AddItemToObject(m, "piece", letter_or_null(piece_type(piece)));
    cJSON_AddStringToObject(m, "color", color_names[piece_color(piece)]);
    cJSON_AddItemToObject(m, "captured", letter_or_null(captured));
    cJSON_AddItemToObject(m, "promotion", letter_or_null(kind == MOVE_PROMOTION ? (int)move_promotion(move) : -1));
    cJSON *flags = cJSON_AddArrayToObject(m, "flags");
    if (captured >= 0)
        cJSON_AddItemToArray(flags, cJSON_CreateString("capture"));
    if (kind == MOVE_EN_PASSANT)
        cJSON_AddItemToArray(flags, cJSON_CreateString("en_passant"));
    if (kind == MOVE_CASTLING)
        cJSON_AddItemToArray(flags, cJSON_CreateString("castle"));
    if (kind == MOVE_PROMOTION)
        cJSON_AddItemToArray(flags, cJSON_CreateString("promotion"));
    if (piece_type(piece) == PAWN && (from_sq ^ to_sq) == 16)
        cJSON_AddItemToArray(flags, cJSON_CreateString("double_push"));
    if (suffix == '+' || suffix == '#')
        cJSON_AddItemToArray(flags, cJSON_CreateString("check"));
    if (suffix == '#')
        cJSON_AddItemToArray(flags, cJSON_CreateString("checkmate"));
    return m;
}

/* The Position object as position_json_write() writes it, through a cJSON
 * tree printed with cJSON_PrintUnformatted(): the members of
 * api/render/position_json.c, mirrored by hand. */
static char *render_cjson(const position_t *pos, const status_t *status)
{
    char fen[FEN_BUFFER_SIZE], castling[8], ep[3];
    fen_format(pos, fen, sizeof fen);
    const char *field = strchr(strchr(fen, ' ') + 1, ' ') + 1;
    size_t n = strcspn(field, " ");
    memcpy(castling, field, n);
    castling[n] = '\0';
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "fen", fen);
    cJSON_AddStringToObject(root, "turn", color_names[pos->side_to_move]);
    cJSON_AddBoolToObject(root, "check", status->check);
    cJSON_AddStringToObject(root, "status", status_state_name(status->state));
    cJSON_AddStringToObject(root, "result", position_json_result(pos, status));
    if (status->state == STATUS_DRAW)
        cJSON_AddStringToObject(root, "draw_reason", status_draw_reason_name(status->draw_reason));
    else
        cJSON_AddNullToObject(root, "draw_reason");
    cJSON *claims = cJSON_AddArrayToObject(root, "claimable_draws");
    if (status->claimable & STATUS_CLAIM_FIFTY_MOVES)
        cJSON_AddItemToArray(claims, cJSON_CreateString("fifty_moves"));
    if (status->claimable & STATUS_CLAIM_THREEFOLD_REPETITION)
        cJSON_AddItemToArray(claims, cJSON_CreateString("threefold_repetition"));
    cJSON_AddNumberToObject(root, "halfmove_clock", pos->halfmove_clock);
    cJSON_AddNumberToObject(root, "fullmove_number", pos->fullmove_number);
    cJSON_AddStringToObject(root, "castling_rights", castling);
    if (pos->en_passant != SQ_NONE) {
        square_name(pos->en_passant, ep);
        cJSON_AddStringToObject(root, "en_passant", ep);
    } else {
        cJSON_AddNullToObject(root, "en_passant");
    }
    cJSON_AddBoolToObject(root, "chess960", pos->chess960);
    cJSON_AddNumberToObject(root, "repetitions", status->repetitions);
    cJSON_AddNullToObject(root, "opening");
    move_list_t legal;
    movegen_legal(pos, &legal);
    cJSON *moves = cJSON_AddArrayToObject(root, "legal_moves");
    for (int i = 0; i < legal.count; i++)
        cJSON_AddItemToArray(moves, move_tree(pos, &legal, legal.moves[i]));
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static char *render_jsonw(const position_t *pos, const status_t *status)
{
    jsonw_t w;
    jsonw_init(&w);
    position_json_write(&w, pos, status, NULL, true);
    return jsonw_finish(&w, NULL);
}

/* Seconds for `renders` renders. */
static double time_renders(char *(*render)(const position_t *, const status_t *), const position_t *pos,
                           const status_t *status)
{
    double start = now_seconds();
    for (int i = 0; i < renders; i++)
        free(render(pos, status));
    return now_seconds() - start;
}

/* A 40-ply line (the Najdorf's main line and on), its game as stored. */
static const char *const LINE = "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6 c1e3 e7e5 d4b3 c8e6 f2f3 f8e7 "
                                "d1d2 e8g8 e1c1 b8d7 g2g4 b7b5 g4g5 b5b4 c3e2 f6e8 f3f4 a6a5 f4f5 a5a4 b3d4 e5d4 "
                                "e2d4 b4b3 c1b1 e6c4 a2b3 a4b3";

static bool play_line(game_record_t *r, game_played_t *last)
{
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "AbCdEfGh_-123456");
    r->created_at_ms = 1796316722576;
    r->updated_at_ms = r->created_at_ms + 40000;
    r->version = 41;
    position_t start;
    const char *fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    if (fen_parse(fen, strlen(fen), 0, &start, NULL, 0) != FEN_OK)
        return false;
    game_start(&r->game, &start);
    if (!game_set_rules(&r->game, 300000, 2000, GAME_TAKEBACK_AGREEMENT))
        return false;
    int64_t now = r->created_at_ms;
    for (const char *p = LINE; *p;) {
        size_t length = strcspn(p, " ");
        if (game_move(&r->game, (color_t)r->game.pos.side_to_move, p, length, GAME_MAX_PLIES, now += 1000, last)
            != GAME_OK)
            return false;
        p += length + (p[length] == ' ');
    }
    return true;
}

static double best_of(double a, double b) { return a < b ? a : b; }

/* Times each way over ROUNDS rounds of RENDERS renders (the arguments; 15
 * and 2000 by default), interleaved, keeping the best round of each. Then,
 * after a 40-ply line at its 41st move's position: the GameChange answer and
 * its event written apart (game_json_change twice) and together
 * (game_json_change_and_event, which must give the same bytes), and the
 * game's state text (game_record_state). */
int main(int argc, char **argv)
{
    if (argc > 1)
        renders = atoi(argv[1]) > 0 ? atoi(argv[1]) : renders;
    if (argc > 2)
        rounds = atoi(argv[2]) > 0 ? atoi(argv[2]) : rounds;
    rules_init();
    position_t pos;
    char message[256];
    if (fen_parse(KIWIPETE, strlen(KIWIPETE), 0, &pos, message, sizeof message) != FEN_OK) {
        fprintf(stderr, "jsonw_bench: %s\n", message);
        return 1;
    }
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    char *a = render_jsonw(&pos, &status), *b = render_cjson(&pos, &status);
    if (!a || !b || strcmp(a, b)) {
        fprintf(stderr, "jsonw_bench: the two renderings differ:\n%s\n%s\n", a ? a : "(null)", b ? b : "(null)");
        return 1;
    }
    size_t bytes = strlen(a);
    free(a);
    free(b);
    double best_jsonw = 1e9, best_cjson = 1e9;
    for (int round = 0; round < rounds; round++) {
        double t = time_renders(render_jsonw, &pos, &status);
        best_jsonw = t < best_jsonw ? t : best_jsonw;
        t = time_renders(render_cjson, &pos, &status);
        best_cjson = t < best_cjson ? t : best_cjson;
    }
    printf("Kiwipete Position with legal moves (%zu bytes of JSON), best of %d x %d renders:\n", bytes, rounds,
           renders);
    printf("  jsonw:                        %7.2f us a render\n", best_jsonw / renders * 1e6);
    printf("  cJSON tree + PrintUnformatted: %6.2f us a render\n", best_cjson / renders * 1e6);
    printf("  cJSON / jsonw:                 %6.2fx\n", best_cjson / best_jsonw);

    game_record_t record;
    game_played_t played;
    if (!play_line(&record, &played)) {
        fprintf(stderr, "jsonw_bench: the line does not play\n");
        return 1;
    }
    int64_t at = record.updated_at_ms + 250;
    size_t answer_length, event_length, together_length, together_event_length;
    char *answer = game_json_change(&record, &played, "move", GAME_JSON_LEGAL_MOVES, at, &answer_length);
    char *event = game_json_change(&record, &played, "move", GAME_JSON_EVENT, at, &event_length);
    char *together_event = NULL;
    char *together = game_json_change_and_event(&record, &played, "move", GAME_JSON_LEGAL_MOVES, at, &together_length,
                                                &together_event, &together_event_length);
    if (!answer || !event || !together || answer_length != together_length || memcmp(answer, together, answer_length)
        || event_length != together_event_length || memcmp(event, together_event, event_length)) {
        fprintf(stderr, "jsonw_bench: the answer and event written together differ from each written alone\n");
        return 1;
    }
    free(answer), free(event), free(together), free(together_event);
    char state[GAME_RECORD_STATE_MAX];
    double apart = 1e9, joint = 1e9, state_text = 1e9;
    for (int round = 0; round < rounds; round++) {
        double start = now_seconds();
        for (int i = 0; i < renders; i++) {
            free(game_json_change(&record, &played, "move", GAME_JSON_LEGAL_MOVES, at, &answer_length));
            free(game_json_change(&record, &played, "move", GAME_JSON_EVENT, at, &event_length));
        }
        apart = best_of(apart, now_seconds() - start);
        start = now_seconds();
        for (int i = 0; i < renders; i++) {
            free(game_json_change_and_event(&record, &played, "move", GAME_JSON_LEGAL_MOVES, at, &together_length,
                                            &together_event, &together_event_length));
            free(together_event);
        }
        joint = best_of(joint, now_seconds() - start);
        start = now_seconds();
        for (int i = 0; i < renders; i++)
            if (!game_record_state(&record, state, sizeof state))
                return 1;
        state_text = best_of(state_text, now_seconds() - start);
    }
    printf("a move's texts after a 40-ply line (answer %zu bytes, event %zu), best of %d x %d:\n", answer_length,
           event_length, rounds, renders);
    printf("  answer and event apart:      %7.2f us\n", apart / renders * 1e6);
    printf("  answer and event together:   %7.2f us\n", joint / renders * 1e6);
    printf("  state text:                  %7.2f us\n", state_text / renders * 1e6);
    return 0;
}
