/* Tests for rules/opening.c against the data set it was built from: the
 * TSV files of rules/openings/, read here again, not through the generated
 * table. Every line, played with SAN, ends in a position named as the data
 * set names it; transpositions are named alike. Also the walk back, its ply
 * bound, Chess960, and a game's opening through moves, takebacks and
 * replays. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/fen.h"
#include "../../rules/game.h"
#include "../../rules/opening.h"
#include "../../rules/san.h"
#include "../support/tests.h"

enum { LINES_MAX = 5000, TEXT_MAX = 1024 };

typedef struct {
    char eco[4];
    char name[256];
    char pgn[TEXT_MAX];
    uint64_t key; /* of the position the line ends in */
    int plies;
} line_t;

static line_t lines[LINES_MAX];
static int line_count;

static void start(position_t *pos)
{
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, pos, NULL, 0), FEN_OK);
}

/* Plays the SAN moves of text (move numbers skipped) from pos; the count of
 * plies, or -1 on a move the rules refuse. Each position reached is passed
 * to fn when not NULL. */
static int play_san(position_t *pos, const char *text, void (*fn)(const position_t *, void *), void *ctx)
{
    char copy[TEXT_MAX];
    snprintf(copy, sizeof copy, "%s", text);
    int plies = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        size_t length = strlen(t);
        if (t[length - 1] == '.')
            continue;
        move_t move;
        if (san_parse(pos, t, length, &move, NULL, 0) != LEGALITY_OK)
            return -1;
        position_undo_t undo;
        position_make(pos, move, &undo);
        plies++;
        if (fn)
            fn(pos, ctx);
    }
    return plies;
}

static int load_lines(void)
{
    static const char *const files[] = { "rules/openings/a.tsv", "rules/openings/b.tsv", "rules/openings/c.tsv",
                                         "rules/openings/d.tsv", "rules/openings/e.tsv" };
    line_count = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        FILE *in = fopen(files[f], "r");
        if (!in)
            return -1;
        char text[TEXT_MAX + 300];
        for (int number = 0; fgets(text, sizeof text, in); number++) {
            text[strcspn(text, "\n")] = '\0';
            if (number == 0)
                continue;
            char *name = strchr(text, '\t'), *pgn = name ? strchr(name + 1, '\t') : NULL;
            if (!pgn || line_count == LINES_MAX) {
                fclose(in);
                return -1;
            }
            *name++ = '\0';
            *pgn++ = '\0';
            line_t *l = &lines[line_count++];
            if (strlen(text) != 3 || strlen(name) >= sizeof l->name || strlen(pgn) >= sizeof l->pgn) {
                fclose(in);
                return -1;
            }
            memcpy(l->eco, text, 4);
            memcpy(l->name, name, strlen(name) + 1);
            memcpy(l->pgn, pgn, strlen(pgn) + 1);
        }
        fclose(in);
    }
    return 0;
}

/* Whether the data set names the position with this key `name` (with eco)
 * through any of its lines. */
static bool data_set_names(uint64_t key, const char *eco, const char *name)
{
    for (int i = 0; i < line_count; i++)
        if (lines[i].key == key && !strcmp(lines[i].name, name) && !strcmp(lines[i].eco, eco))
            return true;
    return false;
}

static void test_every_line_of_the_data_set_names_its_position(void)
{
    CU_ASSERT_EQUAL_FATAL(line_count, 3807);
    int longest = 0;
    for (int i = 0; i < line_count; i++) {
        position_t pos;
        start(&pos);
        lines[i].plies = play_san(&pos, lines[i].pgn, NULL, NULL);
        CU_ASSERT_FATAL(lines[i].plies > 0);
        lines[i].key = pos.key;
        if (lines[i].plies > longest)
            longest = lines[i].plies;
    }
    CU_ASSERT_EQUAL(OPENING_PLIES_MAX, longest);
    int wrong = 0;
    for (int i = 0; i < line_count; i++) {
        position_t pos;
        start(&pos);
        play_san(&pos, lines[i].pgn, NULL, NULL);
        const opening_t *o = opening_at(&pos);
        bool ok = o && o->key == pos.key && data_set_names(pos.key, o->eco, o->name) && o->plies <= lines[i].plies;
        if (!ok && wrong++ < 5)
            fprintf(stderr, "\n%s %s (%s): named %s\n", lines[i].eco, lines[i].name, lines[i].pgn, o ? o->name : "none");
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* The opening of a line as the walk back finds it: the last named position. */
static void follow(const position_t *pos, void *ctx) { opening_follow(ctx, pos); }

static const opening_t *opening_of_line(const char *fen, const char *moves)
{
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse(fen, strlen(fen), FEN_DETECT_CHESS960, &pos, NULL, 0), FEN_OK);
    const opening_t *o = opening_at(&pos);
    CU_ASSERT_FATAL(play_san(&pos, moves, follow, &o) >= 0);
    return o;
}

static void test_a_transposition_gets_the_name_of_the_position(void)
{
    /* The Najdorf by its main line, and with White's and Black's knight moves swapped in order. */
    const opening_t *main = opening_of_line(FEN_START, "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6");
    const opening_t *other = opening_of_line(FEN_START, "e4 c5 Nc3 d6 Nf3 Nf6 d4 cxd4 Nxd4 a6");
    CU_ASSERT_PTR_NOT_NULL_FATAL(main);
    CU_ASSERT_STRING_EQUAL(main->eco, "B90");
    CU_ASSERT_STRING_EQUAL(main->name, "Sicilian Defense: Najdorf Variation");
    CU_ASSERT_PTR_EQUAL(other, main);
    /* The Queen's Gambit Declined from 1. c4. */
    const opening_t *qgd = opening_of_line(FEN_START, "d4 d5 c4 e6");
    const opening_t *english = opening_of_line(FEN_START, "c4 e6 d4 d5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(qgd);
    CU_ASSERT_PTR_EQUAL(english, qgd);
}

static void test_the_walk_back_keeps_the_last_named_position(void)
{
    const opening_t *najdorf = opening_of_line(FEN_START, "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6");
    /* Moves no line has: the name stays the Najdorf's. */
    const opening_t *after = opening_of_line(FEN_START, "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6 a3 h6 b3 g6");
    CU_ASSERT_PTR_EQUAL(after, najdorf);
    /* The start position has no name, and a line of moves no data set line starts with has the first move's. */
    CU_ASSERT_PTR_NULL(opening_of_line(FEN_START, ""));
    const opening_t *a3 = opening_of_line(FEN_START, "a3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a3);
    CU_ASSERT_PTR_EQUAL(opening_of_line(FEN_START, "a3 h6 h3 a6"), a3);
}

static void test_positions_past_the_longest_line_and_chess960_have_none(void)
{
    /* After 1. e4 by FEN: named; the same placement at move 30 is past the data set's plies. */
    const opening_t *e4 = opening_of_line("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e4);
    CU_ASSERT_STRING_EQUAL(e4->name, "King's Pawn Game");
    CU_ASSERT_PTR_NULL(opening_of_line("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 30", ""));
    /* Ply OPENING_PLIES_MAX (even: White to move) is looked up, the ones after it are not. */
    CU_ASSERT_EQUAL_FATAL(OPENING_PLIES_MAX % 2, 0);
    const opening_t *e4e5 = opening_of_line(FEN_START, "e4 e5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(e4e5);
    char fen[FEN_BUFFER_SIZE];
    snprintf(fen, sizeof fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 %d", OPENING_PLIES_MAX / 2 + 1);
    CU_ASSERT_PTR_EQUAL(opening_of_line(fen, ""), e4e5);
    snprintf(fen, sizeof fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 %d", OPENING_PLIES_MAX / 2 + 2);
    CU_ASSERT_PTR_NULL(opening_of_line(fen, ""));
    snprintf(fen, sizeof fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 %d", OPENING_PLIES_MAX / 2 + 1);
    CU_ASSERT_PTR_NULL(opening_of_line(fen, ""));
    /* Chess960 position 518 is the standard start, but a Chess960 game has no opening names. */
    position_t pos;
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), FEN_CHESS960, &pos, NULL, 0), FEN_OK);
    CU_ASSERT_FATAL(pos.chess960);
    const opening_t *o = opening_at(&pos);
    CU_ASSERT_FATAL(play_san(&pos, "e4 c5", follow, &o) == 2);
    CU_ASSERT_PTR_NULL(o);
}

static void test_an_en_passant_square_counts_only_when_a_capture_there_is_legal(void)
{
    /* 1. d4 c5 2. d5 e5 (the Old Benoni): dxe6 is legal, so e6 is part of the named position. */
    const opening_t *old_benoni = opening_of_line(FEN_START, "d4 c5 d5 e5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(old_benoni);
    CU_ASSERT_STRING_EQUAL(old_benoni->name, "Benoni Defense: Old Benoni");
    CU_ASSERT_PTR_EQUAL(opening_of_line("rnbqkbnr/pp1p1ppp/8/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3", ""),
                        old_benoni);
    CU_ASSERT_PTR_NOT_EQUAL(opening_of_line("rnbqkbnr/pp1p1ppp/8/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq - 0 3", ""),
                            old_benoni);
    /* 1. e4 c5 by FEN with an en passant square no pawn can take: the same position as without it. */
    const opening_t *sicilian = opening_of_line(FEN_START, "e4 c5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sicilian);
    CU_ASSERT_PTR_EQUAL(opening_of_line("rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2", ""), sicilian);
}

static void test_a_game_follows_its_opening_through_moves_takebacks_and_replays(void)
{
    position_t initial;
    start(&initial);
    game_t g;
    game_start(&g, &initial);
    CU_ASSERT_PTR_NULL(game_opening(&g));
    static const char *const moves[] = { "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "h3" };
    char line[512] = "";
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        game_played_t played;
        CU_ASSERT_EQUAL_FATAL(game_move(&g, g.pos.side_to_move, moves[i], strlen(moves[i]), GAME_MAX_PLIES, 0, &played),
                              GAME_OK);
        char entry[64];
        game_line_entry(&played, entry);
        if (line[0])
            strcat(line, " ");
        strcat(line, entry);
    }
    const opening_t *o = game_opening(&g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_STRING_EQUAL(o->eco, "B90");
    CU_ASSERT_STRING_EQUAL(o->name, "Sicilian Defense: Najdorf Variation, Adams Attack");
    /* The same game by replay. */
    game_t r;
    CU_ASSERT_EQUAL_FATAL(game_replay(&r, &initial, line, strlen(line), GAME_ACTIVE, GAME_RESULT_NONE,
                                      GAME_TERMINATION_NONE, GAME_OFFER_NONE),
                          GAME_OK);
    CU_ASSERT_EQUAL(r.opening_key, g.opening_key);
    /* A takeback walks back: h3 taken back, the Najdorf. */
    CU_ASSERT_EQUAL_FATAL(game_set_rules(&g, 0, 0, GAME_TAKEBACK_FREE), true);
    g.takeback = GAME_TAKEBACK_FREE;
    CU_ASSERT_EQUAL_FATAL(game_undo(&g, WHITE, line, strlen(line), 0), GAME_OK);
    o = game_opening(&g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_STRING_EQUAL(o->name, "Sicilian Defense: Najdorf Variation");
    /* A key the table does not have (an older data set's) reads as none. */
    game_restore_opening(&g, UINT64_C(0x0123456789abcdef));
    CU_ASSERT_PTR_NULL(game_opening(&g));
    CU_ASSERT_EQUAL(g.opening_key, 0);
}

int test_opening_register(void)
{
    CU_pSuite suite = CU_add_suite("opening", load_lines, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_every_line_of_the_data_set_names_its_position);
    CU_ADD_TEST(suite, test_a_transposition_gets_the_name_of_the_position);
    CU_ADD_TEST(suite, test_the_walk_back_keeps_the_last_named_position);
    CU_ADD_TEST(suite, test_positions_past_the_longest_line_and_chess960_have_none);
    CU_ADD_TEST(suite, test_an_en_passant_square_counts_only_when_a_capture_there_is_legal);
    CU_ADD_TEST(suite, test_a_game_follows_its_opening_through_moves_takebacks_and_replays);
    return CUE_SUCCESS;
}
