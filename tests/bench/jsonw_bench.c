/* jsonw_bench: why chessd writes its JSON with jsonw rather than building
 * cJSON trees. Renders the full Position object of Kiwipete (48 legal moves)
 * both ways: position_json_write() into jsonw, and the same members as a cJSON
 * tree printed with cJSON_PrintUnformatted(). The two texts are checked to be
 * the same bytes, then each way is timed over ROUNDS rounds of RENDERS
 * renders (arguments; 15 and 2000 by default), interleaved, and the best round of each is kept (noise on a shared
 * machine only ever adds time). Both include the rules work (move
 * generation, SAN); the cJSON tree mirrors api/render/position_json.c by hand.
 *
 *   make bench, or: make build/jsonw_bench && build/jsonw_bench */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../api/render/position_json.h"

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

/* The Position object as position_json_write() writes it, through a cJSON tree. */
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
    return 0;
}
