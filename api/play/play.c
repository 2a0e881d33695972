/* `chessd play` (see play.h): what the local and remote sessions print,
 * their table of commands, and the local session itself. The moves played
 * are kept as move-list text, as a stored game keeps them, so a move, a
 * claim, the PGN and a refusal go through the HTTP API's code. Against the
 * computer, its move is chosen as soon as it is its turn (play_engine.h),
 * so the input is read only on the person's turn. */
#include "play.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../../rules/rules.h"
#include "../http/buf.h"
#include "../render/pgn.h"
#include "../problem.h"

/* Piece values, indexed by piece_type_t (the king counts nothing; S-chess's
 * Hawk and Elephant as its players value them, 7 and 8). Unicode has no
 * glyph for the two: they are their letters. */
static const int piece_values[PIECE_TYPE_COUNT] = { 1, 3, 3, 5, 9, 0, 7, 8 };
static const char *const piece_glyphs[COLOR_COUNT][PIECE_TYPE_COUNT] = {
    { "\u2659", "\u2658", "\u2657", "\u2656", "\u2655", "\u2654", "H", "E" },
    { "\u265f", "\u265e", "\u265d", "\u265c", "\u265b", "\u265a", "h", "e" },
};

/* The board in colour: xterm 256-colour numbers from the 6x6x6 cube, which
 * terminal themes leave alone (unlike the first 16). Every square's
 * luminance lies between 0.1 and 0.3, where a white and a black piece both
 * keep a contrast of 3:1 or more, on a dark terminal as on a light one.
 * Squares by [marked][light]: brown, and blue for the last move's. */
static const int square_colors[2][2] = { { 94, 137 }, { 31, 67 } };
static const int piece_colors[COLOR_COUNT] = { 231, 16 }; /* #ffffff, #000000 */

/* The commands: their words, and their help (an alias has none). The
 * remote_help lines say what --server changes. */
static const struct {
    const char *word;
    play_command_t command;
    bool remote_only;
    const char *help;
    const char *remote_help;
} commands[] = {
    { "moves", PLAY_COMMAND_MOVES, false, "every legal move, in SAN", NULL },
    { "hint", PLAY_COMMAND_HINT, false,
      "the engine's best move for the side to move, and its score from that\n"
      "           side's view in pawns, or the moves to mate",
      "(with --server: GET /analysis, open in a game against the computer\n"
      "           and once a game is over)" },
    { "undo", PLAY_COMMAND_UNDO, false, "take back the last move; against the computer, yours and its reply",
      "(with --server: your own, by POST /undo when the game's takeback\n"
      "           policy is free, else by a takeback offer the opponent accepts)" },
    { "fen", PLAY_COMMAND_FEN, false, "the position as FEN", NULL },
    { "pgn", PLAY_COMMAND_PGN, false, "the game as PGN", NULL },
    { "claim", PLAY_COMMAND_CLAIM, false, "claim a draw (fifty-move rule or threefold repetition)", NULL },
    { "board", PLAY_COMMAND_BOARD, false, "show the board again", NULL },
    { "help", PLAY_COMMAND_HELP, false, "this list", NULL },
    { "quit", PLAY_COMMAND_QUIT, false, "leave (the end of input too)", NULL },
    { "exit", PLAY_COMMAND_QUIT, false, NULL, NULL },
    { "draw", PLAY_COMMAND_DRAW, true, "offer a draw", NULL },
    { "accept", PLAY_COMMAND_ACCEPT, true, "accept the opponent's draw or takeback offer", NULL },
    { "decline", PLAY_COMMAND_DECLINE, true, "decline it", NULL },
    { "resign", PLAY_COMMAND_RESIGN, true, "resign the game", NULL },
};
enum { COMMAND_ROWS = sizeof commands / sizeof commands[0] };

/* ---- what both sessions print ---- */

const char *play_color_name(int color) { return color_name(color == BLACK ? BLACK : WHITE); }

int play_color_from_name(const char *text, size_t length)
{
    for (int c = 0; c < COLOR_COUNT; c++)
        if (strlen(color_name((color_t)c)) == length && !memcmp(color_name((color_t)c), text, length))
            return c;
    return -1;
}

play_command_t play_command_find(const char *text, size_t length, bool remote)
{
    for (size_t i = 0; i < COMMAND_ROWS; i++)
        if (strlen(commands[i].word) == length && !memcmp(commands[i].word, text, length)
            && (remote || !commands[i].remote_only))
            return commands[i].command;
    return PLAY_COMMAND_MOVE;
}

const char *play_trim(const char *text, size_t *length)
{
    size_t n = *length;
    while (n > 0 && isspace((unsigned char)*text)) {
        text++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    *length = n;
    return text;
}

/* A variant's pockets or reserves, or its checks given, under the board. */
static void print_held(FILE *out, const position_t *pos, const play_view_t *view)
{
    if (pos->variant == VARIANT_THREE_CHECK)
        fprintf(out, "Checks given: white %d, black %d (three win)\n", pos->checks[WHITE], pos->checks[BLACK]);
    if (pos->variant != VARIANT_CRAZYHOUSE && pos->variant != VARIANT_SEIRAWAN)
        return;
    for (int c = 0; c < COLOR_COUNT; c++) {
        fprintf(out, "%s %s:", color_title((color_t)c), pos->variant == VARIANT_CRAZYHOUSE ? "pocket" : "reserve");
        int shown = 0;
        for (int t = 0; t < PIECE_TYPE_COUNT; t++)
            for (int k = 0; k < pos->pocket[c][t]; k++, shown++) {
                piece_t p = piece_make((color_t)c, (piece_type_t)t);
                if (view->unicode)
                    fprintf(out, " %s", piece_glyphs[c][t]);
                else
                    fprintf(out, " %c", piece_letter(p));
            }
        fputs(shown ? "\n" : " -\n", out);
    }
}

/* What a square shows: its piece as a glyph or a letter, else an empty
 * square's sign. In colour a piece's colour says its side, so both sides
 * take the solid glyphs, which read best on any background. */
static const char *square_text(piece_t p, const play_view_t *view, char letter[2])
{
    if (p == NO_PIECE)
        return view->color ? " " : view->unicode ? "\u00b7" : ".";
    if (view->unicode)
        return piece_glyphs[view->color && piece_type(p) < HAWK ? BLACK : piece_color(p)][piece_type(p)];
    letter[0] = piece_letter(p);
    letter[1] = '\0';
    return letter;
}

/* One rank. In colour a square is three columns on its own background;
 * else two, a marked square's brackets taking the blanks beside it (two
 * marked side by side share a pair: "[K R]"). */
static void print_rank(FILE *out, const position_t *pos, int rank, bitboard_t marked, const play_view_t *view)
{
    fprintf(out, "%d%s", rank + 1, view->color ? " " : "");
    bool bracket_open = false;
    for (int column = 0; column < FILE_COUNT; column++) {
        int file = view->flip ? FILE_COUNT - 1 - column : column;
        int square = square_make(file, rank);
        piece_t p = pos->board[square];
        bool mark = bb_has(marked, square);
        char letter[2];
        const char *text = square_text(p, view, letter);
        if (view->color) {
            int background = square_colors[mark][(file + rank) % 2];
            int foreground = piece_colors[p == NO_PIECE ? WHITE : piece_color(p)];
            fprintf(out, "\033[48;5;%d;38;5;%dm %s ", background, foreground, text);
        } else {
            fputc(mark == bracket_open ? ' ' : mark ? '[' : ']', out);
            fputs(text, out);
            bracket_open = mark;
        }
    }
    fputs(view->color ? "\033[0m\n" : bracket_open ? "]\n" : "\n", out);
}

void play_print_board(FILE *out, const position_t *pos, bitboard_t marked, const play_view_t *view)
{
    for (int row = 0; row < RANK_COUNT; row++)
        print_rank(out, pos, view->flip ? row : RANK_COUNT - 1 - row, marked, view);
    fputs(view->color ? "  " : " ", out);
    for (int column = 0; column < FILE_COUNT; column++) {
        fprintf(out, " %c", 'a' + (view->flip ? FILE_COUNT - 1 - column : column));
        if (view->color && column + 1 < FILE_COUNT)
            fputc(' ', out);
    }
    fputc('\n', out);
    print_held(out, pos, view);
}

bitboard_t play_last_move(const char *line, size_t length)
{
    if (!line || !length)
        return 0;
    const char *entry = line, *end = line + length;
    for (const char *p = line; p < end; p++)
        if (*p == ' ')
            entry = p + 1;
    const char *colon = memchr(entry, ':', (size_t)(end - entry));
    uci_text_t uci;
    if (!uci_read(entry, (size_t)((colon ? colon : end) - entry), &uci))
        return 0;
    return bb_square(uci.from) | bb_square(uci.to);
}

void play_print_material(FILE *out, const position_t *pos, const play_view_t *view)
{
    int total[COLOR_COUNT] = { 0, 0 };
    for (int c = 0; c < COLOR_COUNT; c++)
        for (int t = 0; t < PIECE_TYPE_COUNT; t++)
            total[c] += piece_values[t] * bb_count(position_pieces(pos, (color_t)c, (piece_type_t)t));
    fprintf(out, "Material %s white %d, black %d\n", view->unicode ? "\u2014" : "-", total[WHITE], total[BLACK]);
}

void play_print_moves(FILE *out, const position_t *initial, const char *line, size_t length)
{
    fputs("Moves:", out);
    unsigned number = initial->fullmove_number;
    bool white = initial->side_to_move == WHITE, first = true;
    for (const char *p = line, *end = line + length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        const char *san = colon ? colon + 1 : p;
        const char *clock = memchr(san, ':', (size_t)(stop - san)); /* a clock after the SAN, if any */
        int n = (int)((clock ? clock : stop) - san);
        if (white)
            fprintf(out, " %u. %.*s", number, n, san);
        else if (first)
            fprintf(out, " %u... %.*s", number, n, san);
        else
            fprintf(out, " %.*s", n, san);
        if (!white)
            number++;
        white = !white;
        first = false;
        p = stop < end ? stop + 1 : end;
    }
    fputc('\n', out);
}

void play_print_game(FILE *out, const game_t *g, const char *line, size_t length, const play_view_t *view)
{
    play_print_board(out, &g->pos, play_last_move(line, length), view);
    fprintf(out, "%s to move%s\n", color_title(g->pos.side_to_move), g->status.check ? ", in check" : "");
    if (g->state == GAME_ACTIVE) {
        fputs("Status: active\n", out);
    } else {
        const char *state = game_state_name(g->state), *termination = game_termination_name(g->termination);
        fprintf(out, "Status: %s", state);
        if (strcmp(state, termination))
            fprintf(out, " (%s)", termination);
        fprintf(out, ", result %s\n", game_result_name(g->result));
    }
    if (g->status.claimable)
        fprintf(out, "Draw may be claimed:%s%s\n", g->status.claimable & STATUS_CLAIM_FIFTY_MOVES ? " fifty_moves" : "",
                g->status.claimable & STATUS_CLAIM_THREEFOLD_REPETITION ? " threefold_repetition" : "");
    play_print_material(out, &g->pos, view);
    play_print_moves(out, &g->initial, line, length);
    fputc('\n', out);
}

void play_print_help(FILE *out, bool remote)
{
    bool remote_shown = false;
    for (size_t i = 0; i < COMMAND_ROWS; i++) {
        if (!commands[i].help || (commands[i].remote_only && !remote))
            continue;
        if (commands[i].remote_only && !remote_shown) {
            fputs("with --server only:\n", out);
            remote_shown = true;
        }
        fprintf(out, "  %-8s %s\n", commands[i].word, commands[i].help);
        if (remote && commands[i].remote_help)
            fprintf(out, "           %s\n", commands[i].remote_help);
    }
}

void play_print_hint(FILE *out, const char *san, bool is_mate, int value)
{
    if (is_mate)
        fprintf(out, "hint: %s (%s in %d)\n", san, value < 0 ? "mated" : "mate", abs(value));
    else
        fprintf(out, "hint: %s (%c%d.%02d)\n", san, value < 0 ? '-' : '+', abs(value) / 100, abs(value) % 100);
}

void play_print_error(FILE *out, const char *code, const char *detail)
{
    fprintf(out, "error: %s: ", code);
    for (const unsigned char *p = (const unsigned char *)detail; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
    fputc('\n', out);
}

void play_print_line_too_long(FILE *out)
{
    char detail[64];
    snprintf(detail, sizeof detail, "a line may hold at most %d bytes", PLAY_LINE_MAX);
    play_print_error(out, "line_too_long", detail);
}

void play_print_problem(FILE *out, const api_response_t *res)
{
    cJSON *doc = res->body ? cJSON_ParseWithLengthOpts(res->body, res->body_length, NULL, 0) : NULL;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(doc, "code");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(doc, "detail");
    play_print_error(out, cJSON_IsString(code) ? code->valuestring : "internal_error",
                     cJSON_IsString(detail) ? detail->valuestring : "no detail");
    cJSON_Delete(doc);
}

void play_print_legal_moves(FILE *out, const game_t *g)
{
    const position_t *pos = &g->pos;
    move_list_t legal = { .count = 0 };
    if (!game_is_over(g))
        movegen_legal(pos, &legal);
    fprintf(out, "Legal moves (%d):", legal.count);
    for (int i = 0; i < legal.count; i++) {
        char san[SAN_BUFFER_SIZE];
        fprintf(out, " %s", san_format_with(pos, &legal, legal.moves[i], san));
    }
    fputc('\n', out);
}

/* ---- the local session ---- */

typedef struct {
    game_t game;
    buf_t line; /* the moves played, as move-list text */
    const play_view_t *view;
    const play_local_t *local;
    play_engine_t *engine; /* local->engine, or the one started here for hints */
    bool own_engine;       /* started here: freed at the end */
    bool engine_failed;    /* the computer could not move: the session ends */
    FILE *out;
} session_t;

/* A refused game operation, printed as the HTTP API words it. */
static void print_game_refusal(FILE *out, game_status_t status)
{
    api_response_t res = { 0 };
    api_problem_game(&res, status);
    play_print_problem(out, &res);
    free(res.body);
}

/* Appends a played move to the line. */
static void session_append(session_t *s, const game_played_t *played)
{
    char entry[GAME_LINE_ENTRY_SIZE];
    size_t n = game_line_entry(played, entry);
    if (s->line.length)
        buf_putc(&s->line, ' ');
    buf_append(&s->line, entry, n);
}

static void session_show(session_t *s)
{
    play_print_game(s->out, &s->game, s->line.data ? s->line.data : "", s->line.length, s->view);
}

static bool computer_to_move(const session_t *s)
{
    return s->local->computer && !game_is_over(&s->game) && s->game.pos.side_to_move == s->local->computer_color;
}

/* The computer's move, announced as the remote mode announces the
 * opponent's ("black played e5") and played as a typed one; then the game
 * is shown, with the move before it when the computer cannot move. */
static void computer_move(session_t *s)
{
    game_t *g = &s->game;
    move_t move;
    char err[256], uci[UCI_BUFFER_SIZE];
    engine_status_t status = play_engine_move(s->engine, &s->local->level, g, s->line.data, s->line.length, &move,
                                              err, sizeof err);
    if (status != ENGINE_OK) {
        session_show(s);
        play_print_error(s->out, "engine_failed", err);
        s->engine_failed = true;
        return;
    }
    uci_format(&g->pos, move, uci);
    game_played_t played;
    int mover = g->pos.side_to_move;
    game_status_t refused = game_move(g, (color_t)mover, uci, strlen(uci), s->view->max_plies, 0, &played);
    if (refused != GAME_OK) { /* a game as long as it may be: the person's move is refused the same way */
        session_show(s);
        print_game_refusal(s->out, refused);
        return;
    }
    fprintf(s->out, "%s played %s\n", play_color_name(mover), played.san);
    session_append(s, &played);
    session_show(s);
}

/* A typed move. Against the computer the board waits for its reply, so
 * that a turn shows one board, with the reply marked. */
static void session_move(session_t *s, const char *text, size_t length)
{
    game_played_t played;
    game_t *g = &s->game;
    game_status_t status = game_move(g, (color_t)g->pos.side_to_move, text, length, s->view->max_plies, 0, &played);
    if (status == GAME_EILLEGAL_MOVE) {
        /* The API's problem for the same move: its move index is the ply count. */
        char fen[FEN_BUFFER_SIZE], move_text[PLAY_LINE_MAX + 1];
        snprintf(move_text, sizeof move_text, "%.*s", (int)length, text);
        api_response_t res = { 0 };
        api_problem_move(&res, api_status_for_reason(played.reason), played.message, g->ply_count, move_text,
                         played.reason, fen_format(&g->pos, fen, sizeof fen));
        play_print_problem(s->out, &res);
        free(res.body);
        return;
    }
    if (status != GAME_OK) {
        print_game_refusal(s->out, status);
        return;
    }
    session_append(s, &played);
    if (computer_to_move(s)) {
        fflush(s->out); /* what was printed before, while the computer thinks */
        computer_move(s);
    } else {
        session_show(s);
    }
}

/* Takes back the last ply (and a claim that ended the game after it) by
 * replaying the others from the start; against the computer, back to the
 * person's last move, the computer's reply with it, so that the person is
 * to move again. */
static void session_undo(session_t *s)
{
    game_t *g = &s->game;
    int plies = s->local->computer && g->pos.side_to_move != s->local->computer_color ? 2 : 1;
    if (g->ply_count < plies) {
        play_print_error(s->out, "nothing_to_undo", g->ply_count ? "you have not moved yet" : "no move has been played");
        return;
    }
    size_t keep = game_line_keep(s->line.data, s->line.length, plies);
    game_t replayed;
    if (game_replay(&replayed, &g->initial, s->line.data, keep, GAME_ACTIVE, GAME_RESULT_NONE, GAME_TERMINATION_NONE,
                    GAME_OFFER_NONE) != GAME_OK) {
        play_print_error(s->out, "internal_error", "the moves before the last one cannot be replayed");
        return;
    }
    *g = replayed;
    s->line.length = keep;
    if (s->line.data)
        s->line.data[keep] = '\0';
    session_show(s);
}

static void session_claim(session_t *s)
{
    game_status_t status = game_draw(&s->game, (color_t)s->game.pos.side_to_move, GAME_DRAW_CLAIM, 0);
    if (status != GAME_OK) {
        print_game_refusal(s->out, status);
        return;
    }
    session_show(s);
}

/* The engine hints come from: the computer's, or one started at the first hint. */
static play_engine_t *hint_engine(session_t *s)
{
    if (s->engine)
        return s->engine;
    const char *path = s->local->engine_path;
    if (!path || !*path) {
        play_print_error(s->out, "engine_unavailable", "no engine for hints (--engine PATH names one)");
        return NULL;
    }
    char err[256], detail[sizeof err + 600];
    s->engine = play_engine_start(path, s->game.initial.chess960, err, sizeof err);
    if (!s->engine) {
        snprintf(detail, sizeof detail, "no engine for hints at %.500s: %s (install stockfish, or give --engine PATH)",
                 path, err);
        play_print_error(s->out, "engine_unavailable", detail);
        return NULL;
    }
    s->own_engine = true;
    return s->engine;
}

/* `hint`: at full strength, also once the game is over while its position has a move (as GET /analysis). */
static void session_hint(session_t *s)
{
    const game_t *g = &s->game;
    move_list_t legal;
    movegen_legal(&g->pos, &legal);
    if (legal.count == 0) { /* as the server's analysis, which has no move then */
        play_print_error(s->out, "game_over", "the game is over and its position has no legal move");
        return;
    }
    play_engine_t *engine = hint_engine(s);
    if (!engine)
        return;
    play_hint_t hint;
    char err[256], san[SAN_BUFFER_SIZE];
    if (play_engine_hint(engine, g, s->line.data, s->line.length, &hint, err, sizeof err) != ENGINE_OK) {
        play_print_error(s->out, "engine_failed", err);
        return;
    }
    play_print_hint(s->out, san_format_with(&g->pos, &legal, hint.move, san), hint.is_mate, hint.value);
}

static void session_pgn(session_t *s)
{
    const game_t *g = &s->game;
    char computer[LEVEL_NAME_MAX];
    level_name(&s->local->level, computer, sizeof computer);
    pgn_game_t pgn = {
        .white = s->local->computer && s->local->computer_color == WHITE ? computer : "",
        .black = s->local->computer && s->local->computer_color == BLACK ? computer : "",
        .created_at_ms = (int64_t)time(NULL) * 1000,
        .initial = &g->initial,
        .result = game_result_name(g->result),
        .over = game_is_over(g),
        .opening = game_opening(g),
        .moves = s->line.data ? s->line.data : "",
        .moves_length = s->line.length,
    };
    size_t length;
    char *text = pgn_write(&pgn, &length);
    if (!text) {
        play_print_error(s->out, "internal_error", "out of memory");
        return;
    }
    fwrite(text, 1, length, s->out);
    fputc('\n', s->out);
    free(text);
}

/* Runs one command; false to end the session. */
static bool session_command(session_t *s, const char *text, size_t length)
{
    switch (play_command_find(text, length, false)) {
    case PLAY_COMMAND_QUIT:
        return false;
    case PLAY_COMMAND_HELP:
        play_print_help(s->out, false);
        break;
    case PLAY_COMMAND_MOVES:
        play_print_legal_moves(s->out, &s->game);
        break;
    case PLAY_COMMAND_HINT:
        session_hint(s);
        break;
    case PLAY_COMMAND_FEN: {
        char fen[FEN_BUFFER_SIZE];
        fprintf(s->out, "%s\n", fen_format(&s->game.pos, fen, sizeof fen));
        break;
    }
    case PLAY_COMMAND_BOARD:
        session_show(s);
        break;
    case PLAY_COMMAND_UNDO:
        session_undo(s);
        break;
    case PLAY_COMMAND_CLAIM:
        session_claim(s);
        break;
    case PLAY_COMMAND_PGN:
        session_pgn(s);
        break;
    default: /* a move (the remote mode's commands are none here) */
        session_move(s, text, length);
        break;
    }
    return true;
}

int play_session(play_input_t *input, FILE *out, const position_t *start, const play_view_t *view,
                 const play_local_t *local)
{
    session_t s = { .view = view, .local = local, .engine = local->engine, .out = out };
    game_start(&s.game, start);
    buf_init(&s.line);
    if (local->computer) {
        char name[LEVEL_NAME_MAX];
        level_name(&local->level, name, sizeof name);
        fprintf(out, "You play %s against %s (%s).\n", play_color_name(!local->computer_color), name,
                play_engine_name(local->engine));
    }
    if (view->prompt)
        fputs("chessd play: type a move (e4, Nf3, e7e8q) or help.\n\n", out);
    if (computer_to_move(&s))
        computer_move(&s);
    else
        session_show(&s);
    char raw[PLAY_LINE_MAX + 1];
    /* the side whose move is read: against the computer, always the person's */
    char prompt[16];
    while (!s.engine_failed) {
        snprintf(prompt, sizeof prompt, "%s> ",
                 play_color_name(local->computer ? !local->computer_color : s.game.pos.side_to_move));
        size_t length = 0;
        play_input_status_t read = play_input_read(input, prompt, raw, sizeof raw, &length);
        if (read == PLAY_INPUT_END) {
            if (view->prompt)
                fputc('\n', out);
            break;
        }
        if (read == PLAY_INPUT_TOO_LONG) {
            play_print_line_too_long(out);
            continue;
        }
        const char *text = play_trim(raw, &length);
        if (length == 0)
            continue;
        if (!session_command(&s, text, length))
            break;
        if (buf_failed(&s.line)) {
            play_print_error(out, "internal_error", "out of memory");
            break;
        }
    }
    fflush(out);
    buf_free(&s.line);
    if (s.own_engine)
        play_engine_free(s.engine);
    return s.engine_failed ? 1 : 0;
}
