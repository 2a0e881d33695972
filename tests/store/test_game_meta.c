/* Tests for store/game_meta.c: the tag checks (names, the server's own
 * tags, case, values, each known tag's format), the bound on custom tags,
 * the order tags are kept in. The metadata's checks, numbers and size at
 * its bound. The kept text read back whole; a hand-made one refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../store/game_meta.h"
#include "../support/tests.h"

static game_tag_status_t check(const char *name, const char *value)
{
    char detail[200] = "";
    game_tag_status_t status = game_meta_check_tag(name, value, strlen(value), detail, sizeof detail);
    if (status != GAME_TAG_OK) /* a refusal always says what is wrong, naming the tag */
        CU_ASSERT_PTR_NOT_NULL(strstr(detail, name));
    return status;
}

static void test_a_name_is_a_pgn_symbol_of_at_most_32_bytes_that_starts_with_a_letter(void)
{
    CU_ASSERT_EQUAL(check("Event", "x"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(check("ClubGameId", "x"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(check("a_1", "x"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(check("A2345678901234567890123456789012", "x"), GAME_TAG_OK); /* 32 bytes */
    CU_ASSERT_EQUAL(check("A23456789012345678901234567890123", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("1st", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("_x", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("Club Id", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("Club-Id", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("Cl\"ub", "x"), GAME_TAG_ENAME);
    CU_ASSERT_EQUAL(check("Caf\xc3\xa9", "x"), GAME_TAG_ENAME); /* letters are ASCII's */
}

static void test_the_tags_the_server_writes_are_refused_and_a_known_name_in_another_case(void)
{
    static const char *const server[] = { "White", "Black", "Result", "Variant", "SetUp", "FEN",
                                          "ECO", "Opening", "Termination", "TimeControl", "BlackTimeControl",
                                          "PlyCount" };
    for (size_t i = 0; i < sizeof server / sizeof *server; i++)
        CU_ASSERT_EQUAL(check(server[i], "x"), GAME_TAG_ESERVER);
    char detail[200];
    CU_ASSERT_EQUAL(game_meta_check_tag("White", "x", 1, detail, sizeof detail), GAME_TAG_ESERVER);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "'white'")); /* says where the name goes instead */
    CU_ASSERT_EQUAL(check("event", "x"), GAME_TAG_ECASE);
    CU_ASSERT_EQUAL(game_meta_check_tag("WHITEELO", "1", 1, detail, sizeof detail), GAME_TAG_ECASE);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "'WhiteElo'"));
    CU_ASSERT_EQUAL(check("result", "x"), GAME_TAG_ECASE);
    CU_ASSERT_EQUAL(check("Events", "x"), GAME_TAG_OK); /* another name, not another case */
}

static void test_a_value_is_utf8_of_at_most_255_bytes_without_control_characters(void)
{
    char value[300];
    memset(value, 'v', sizeof value);
    CU_ASSERT_EQUAL(game_meta_check_tag("Event", value, 255, NULL, 0), GAME_TAG_OK);
    CU_ASSERT_EQUAL(game_meta_check_tag("Event", value, 256, NULL, 0), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(check("Event", ""), GAME_TAG_OK);
    CU_ASSERT_EQUAL(check("Event", "Caf\xc3\xa9 \"Open\" \\ 2026"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(check("Event", "a\tb"), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(check("Event", "a\nb"), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(check("Event", "a\x7f"), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(check("Event", "a\xc2\x9b[31m"), GAME_TAG_EVALUE); /* C1: a terminal's CSI */
    CU_ASSERT_EQUAL(check("Event", "a\xff"), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(game_meta_check_tag("Event", "a\0b", 3, NULL, 0), GAME_TAG_EVALUE);
    CU_ASSERT_EQUAL(check("MyTag", "a\x1b[31m"), GAME_TAG_EVALUE); /* custom tags too */
}

static void test_each_known_tag_has_its_format(void)
{
    static const struct {
        const char *name, *value;
        bool ok;
    } cases[] = {
        { "Date", "2026.12.06", true },     { "Date", "2026.??.??", true },    { "Date", "????.??.??", true },
        { "Date", "2026.02.31", true },     { "Date", "2026.13.01", false },   { "Date", "2026.00.10", false },
        { "Date", "2026.12.32", false },    { "Date", "2026-12-06", false },   { "Date", "26.12.06", false },
        { "Date", "2026.12.6", false },     { "Date", "20?6.12.06", false },   { "Date", "", false },
        { "EventDate", "2026.??.01", true }, { "EventDate", "today", false },
        { "Round", "3", true },             { "Round", "3.1", true },          { "Round", "12.3.4", true },
        { "Round", "-", true },             { "Round", "?", true },            { "Round", "3.", false },
        { "Round", ".3", false },           { "Round", "3..1", false },        { "Round", "round 3", false },
        { "Round", "", false },
        { "WhiteElo", "0", true },          { "WhiteElo", "1850", true },      { "BlackElo", "4000", true },
        { "BlackElo", "4001", false },      { "WhiteElo", "-", false },        { "WhiteElo", "?", false },
        { "WhiteElo", "18500", false },     { "WhiteElo", "+185", false },     { "WhiteElo", "", false },
        { "WhiteTitle", "GM", true },       { "BlackTitle", "WCM", true },     { "WhiteTitle", "-", true },
        { "WhiteTitle", "gm", false },      { "WhiteTitle", "G M", false },    { "WhiteTitle", "ABCDEFGHI", false },
        { "WhiteFideId", "1503014", true }, { "BlackFideId", "12345678901", false },
        { "BlackFideId", "15o3014", false },
        { "Board", "4", true },             { "Board", "12345", false },       { "Board", "four", false },
        { "Site", "anything at all", true }, { "Annotator", "Ann O'Tate", true },
        { "WhiteTeam", "", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        game_tag_status_t status = check(cases[i].name, cases[i].value);
        if ((status == GAME_TAG_OK) != cases[i].ok)
            fprintf(stderr, "\n%s \"%s\": %d\n", cases[i].name, cases[i].value, status);
        CU_ASSERT_EQUAL(status, cases[i].ok ? GAME_TAG_OK : GAME_TAG_EFORMAT);
    }
}

static game_tag_status_t set(game_meta_t *meta, const char *name, const char *value)
{
    return game_meta_set_tag(meta, name, value, strlen(value), NULL, 0);
}

/* The names of meta's tags in their order, space-separated, into out. */
static const char *names_of(const game_meta_t *meta, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < meta->count; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", i ? " " : "", meta->tags[i].name);
    return out;
}

static void test_tags_are_kept_known_ones_in_the_tables_order_then_custom_ones_by_name(void)
{
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    CU_ASSERT_TRUE(game_meta_empty(meta));
    CU_ASSERT_EQUAL(set(meta, "Zeta", "z"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Annotator", "an"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Round", "2"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Alpha", "a"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "WhiteElo", "1500"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Event", "e"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "B_x", "b"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Date", "bad"), GAME_TAG_EFORMAT); /* refused: nothing changes */
    char names[400];
    CU_ASSERT_STRING_EQUAL(names_of(meta, names, sizeof names), "Event Round WhiteElo Annotator Alpha B_x Zeta");
    CU_ASSERT_EQUAL(set(meta, "Round", "3.1"), GAME_TAG_OK); /* replaced in its place */
    CU_ASSERT_STRING_EQUAL(names_of(meta, names, sizeof names), "Event Round WhiteElo Annotator Alpha B_x Zeta");
    CU_ASSERT_STRING_EQUAL(game_meta_tag(meta, "Round"), "3.1");
    CU_ASSERT_PTR_NULL(game_meta_tag(meta, "Site"));
    CU_ASSERT_PTR_NULL(game_meta_tag(NULL, "Site"));
    CU_ASSERT_FALSE(game_meta_empty(meta));
    game_meta_free(meta);
    game_meta_free(NULL);
}

static void test_sixteen_custom_tags_fit_and_a_seventeenth_is_too_many_the_known_ones_aside(void)
{
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    char name[24], detail[200];
    for (int i = 0; i < GAME_TAGS_CUSTOM_MAX; i++) {
        snprintf(name, sizeof name, "Custom%02d", i);
        CU_ASSERT_EQUAL(set(meta, name, "v"), GAME_TAG_OK);
    }
    CU_ASSERT_EQUAL(game_meta_set_tag(meta, "Custom99", "v", 1, detail, sizeof detail), GAME_TAG_ETOO_MANY);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "Custom99"));
    CU_ASSERT_EQUAL(set(meta, "Custom03", "again"), GAME_TAG_OK); /* a name it has is no new one */
    static const char *const known[] = { "Event", "Site", "Date", "Round", "WhiteTitle", "BlackTitle", "WhiteElo",
                                         "BlackElo", "WhiteFideId", "BlackFideId", "WhiteTeam", "BlackTeam",
                                         "EventDate", "Board", "Annotator" };
    CU_ASSERT_EQUAL(sizeof known / sizeof *known, GAME_TAGS_KNOWN);
    static const char *const values[] = { "e", "s", "2026.01.02", "1", "GM", "IM", "2700", "2600", "1", "2",
                                          "t", "u", "2026.01.01", "3", "a" };
    for (int i = 0; i < GAME_TAGS_KNOWN; i++)
        CU_ASSERT_EQUAL(set(meta, known[i], values[i]), GAME_TAG_OK);
    CU_ASSERT_EQUAL(meta->count, GAME_TAGS_MAX);
    for (int i = 0; i < GAME_TAGS_KNOWN; i++) { /* the table's order, then the custom ones */
        CU_ASSERT_STRING_EQUAL(meta->tags[i].name, known[i]);
        CU_ASSERT_EQUAL(meta->tags[i].rank, i);
    }
    CU_ASSERT_STRING_EQUAL(meta->tags[GAME_TAGS_KNOWN].name, "Custom00");
    CU_ASSERT_EQUAL(meta->tags[GAME_TAGS_KNOWN].rank, GAME_TAGS_KNOWN);
    game_meta_free(meta);
}

static void test_merge_adds_only_the_names_missing_and_only_as_many_as_fit(void)
{
    game_meta_t *given = game_meta_new(), *imported = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(given);
    CU_ASSERT_PTR_NOT_NULL_FATAL(imported);
    CU_ASSERT_EQUAL(set(given, "Round", "4"), GAME_TAG_OK);
    char name[24];
    for (int i = 0; i < 15; i++) {
        snprintf(name, sizeof name, "Given%02d", i);
        CU_ASSERT_EQUAL(set(given, name, "g"), GAME_TAG_OK);
    }
    CU_ASSERT_EQUAL(set(imported, "Round", "3.1"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(imported, "Event", "imported"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(imported, "Given00", "i"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(imported, "Imported1", "i"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(imported, "Imported2", "i"), GAME_TAG_OK);
    game_meta_merge(given, imported);
    CU_ASSERT_STRING_EQUAL(game_meta_tag(given, "Round"), "4");
    CU_ASSERT_STRING_EQUAL(game_meta_tag(given, "Event"), "imported");
    CU_ASSERT_STRING_EQUAL(game_meta_tag(given, "Given00"), "g");
    CU_ASSERT_STRING_EQUAL(game_meta_tag(given, "Imported1"), "i"); /* the sixteenth custom tag */
    CU_ASSERT_PTR_NULL(game_meta_tag(given, "Imported2"));         /* one too many: left out */
    game_meta_free(given);
    game_meta_free(imported);
}

/* Sets meta's metadata from json; its status. */
static game_metadata_status_t set_metadata(game_meta_t *meta, const char *json)
{
    cJSON *item = cJSON_Parse(json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(item);
    char detail[200] = "";
    game_metadata_status_t status = game_meta_set_metadata(meta, item, detail, sizeof detail);
    if (status != GAME_METADATA_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr(detail, "'metadata'"));
    cJSON_Delete(item);
    return status;
}

static void test_metadata_is_an_object_kept_as_compact_json_of_at_most_4096_bytes(void)
{
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    CU_ASSERT_EQUAL(set_metadata(meta, "[1, 2]"), GAME_METADATA_ETYPE);
    CU_ASSERT_EQUAL(set_metadata(meta, "\"text\""), GAME_METADATA_ETYPE);
    CU_ASSERT_EQUAL(set_metadata(meta, "null"), GAME_METADATA_ETYPE);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"a\": [1, {\"b\": 1e400}]}"), GAME_METADATA_ENUMBER);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"a\": {\"b\": 1, \"c\": 2, \"b\": 3}}"), GAME_METADATA_EREPEATED);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"a\": [{\"b\": 1}, {\"b\": 2}]}"), GAME_METADATA_OK); /* not repeated */
    CU_ASSERT_EQUAL(set_metadata(meta, " { \"id\" : \"g-1\" , \"n\" : [ 1 , 2.5 , true , null ] } "), GAME_METADATA_OK);
    CU_ASSERT_STRING_EQUAL(meta->metadata, "{\"id\":\"g-1\",\"n\":[1,2.5,true,null]}");
    CU_ASSERT_EQUAL(meta->metadata_length, strlen(meta->metadata));
    /* {"a":"x...x"}: 8 bytes and the string's. */
    char *json = malloc(GAME_METADATA_MAX + 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    for (int extra = 0; extra <= 1; extra++) {
        int n = GAME_METADATA_MAX - 8 + extra;
        snprintf(json, GAME_METADATA_MAX + 16, "{\"a\":\"%0*d\"}", n, 0);
        CU_ASSERT_EQUAL(strlen(json), (size_t)GAME_METADATA_MAX + (size_t)extra);
        CU_ASSERT_EQUAL(set_metadata(meta, json), extra ? GAME_METADATA_ETOO_LARGE : GAME_METADATA_OK);
    }
    CU_ASSERT_EQUAL(meta->metadata_length, (size_t)GAME_METADATA_MAX); /* the refused one changed nothing */
    free(json);
    game_meta_free(meta);
}

static void test_metadata_numbers_come_back_as_the_same_doubles_and_strings_escaped_as_json_asks(void)
{
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"n\": [9007199254740991, 0.1, -0, 1e300, 5e-324, 1.5e-7, 100.0, "
                                       "12345678901234567890, -2.5]}"), GAME_METADATA_OK);
    /* cJSON's printer would write 9.00719925474099e+15: not the same double. */
    CU_ASSERT_STRING_EQUAL(meta->metadata, "{\"n\":[9007199254740991,0.1,-0,1e+300,4.94065645841247e-324,1.5e-07,100,"
                                           "1.2345678901234567e+19,-2.5]}");
    cJSON *back = cJSON_Parse(meta->metadata), *list = cJSON_GetObjectItem(back, "n");
    static const double want[] = { 9007199254740991.0, 0.1, -0.0, 1e300, 5e-324, 1.5e-7, 100, 12345678901234567890.0, -2.5 };
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(list), 9);
    for (int i = 0; i < 9; i++)
        CU_ASSERT_EQUAL(cJSON_GetArrayItem(list, i)->valuedouble, want[i]);
    cJSON_Delete(back);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"s\\\"k\": \"a\\\"b\\\\c\\n\\u0001\\u007f\\u00e9\\ud83d\\ude00/\"}"),
                    GAME_METADATA_OK);
    CU_ASSERT_STRING_EQUAL(meta->metadata, "{\"s\\\"k\":\"a\\\"b\\\\c\\u000a\\u0001\x7f\xc3\xa9\xf0\x9f\x98\x80/\"}");
    /* Refusals found past the bound are not looked for: the size is. */
    char *json = malloc(2 * GAME_METADATA_MAX);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    snprintf(json, 2 * GAME_METADATA_MAX, "{\"a\":\"%0*d\",\"a\":1}", GAME_METADATA_MAX, 0);
    CU_ASSERT_EQUAL(set_metadata(meta, json), GAME_METADATA_ETOO_LARGE);
    free(json);
    game_meta_free(meta);
}

static void test_the_kept_text_reads_back_the_same_tags_and_metadata(void)
{
    game_meta_t *meta = game_meta_new(), *back = game_meta_new(), *copy = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    char *text = (char *)"unset";
    size_t length = 99;
    CU_ASSERT_TRUE(game_meta_text(meta, &text, &length)); /* nothing to keep */
    CU_ASSERT_PTR_NULL(text);
    CU_ASSERT_EQUAL(length, 0);
    CU_ASSERT_EQUAL(set(meta, "Event", "Caf\xc3\xa9 \"Open\" \\ 2026"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "Round", "3.1"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set(meta, "MyId", "x-1"), GAME_TAG_OK);
    CU_ASSERT_EQUAL(set_metadata(meta, "{\"ids\": [1, \"\\u00e9\\n\"], \"deep\": {\"a\": {}}}"), GAME_METADATA_OK);
    CU_ASSERT_TRUE_FATAL(game_meta_text(meta, &text, &length));
    CU_ASSERT_EQUAL(strlen(text), length);
    CU_ASSERT_TRUE(game_meta_read(back, text, length));
    CU_ASSERT_EQUAL(back->count, meta->count);
    for (int i = 0; i < meta->count && i < back->count; i++) {
        CU_ASSERT_STRING_EQUAL(back->tags[i].name, meta->tags[i].name);
        CU_ASSERT_STRING_EQUAL(back->tags[i].value, meta->tags[i].value);
    }
    CU_ASSERT_STRING_EQUAL(back->metadata, meta->metadata);
    CU_ASSERT_TRUE(game_meta_copy(copy, back));
    CU_ASSERT_STRING_EQUAL(copy->metadata, meta->metadata);
    CU_ASSERT_NOT_EQUAL(copy->metadata, back->metadata); /* its own */
    CU_ASSERT_EQUAL(copy->count, 3);
    free(text);
    CU_ASSERT_TRUE(game_meta_read(back, "", 0)); /* a game stored without: nothing */
    CU_ASSERT_TRUE(game_meta_empty(back));
    static const char tags_only[] = "{\"tags\":{\"Site\":\"s\"},\"later\":[1]}"; /* a later version's member */
    CU_ASSERT_TRUE(game_meta_read(back, tags_only, strlen(tags_only)));
    CU_ASSERT_STRING_EQUAL(game_meta_tag(back, "Site"), "s");
    CU_ASSERT_PTR_NULL(back->metadata);
    game_meta_free(meta);
    game_meta_free(back);
    game_meta_free(copy);
}

static void test_a_kept_text_this_code_did_not_write_is_refused(void)
{
    static const char *const bad[] = {
        "not json",
        "[]",
        "{\"tags\":[]}",
        "{\"tags\":{\"Event\":1}}",
        "{\"tags\":{\"Event\":\"a\\u001b[2J\"}}", /* a terminal escape, into a PGN */
        "{\"tags\":{\"White\":\"Mallory\"}}",
        "{\"tags\":{\"Date\":\"yesterday\"}}",
        "{\"tags\":{\"bad name\":\"x\"}}",
        "{\"metadata\":[1]}",
        "{\"notes\":[1]}",
        "{\"notes\":\"text\"}",
        "{\"tags\":{}} trailing",
        "{\"tags\":{}",
    };
    game_meta_t *meta = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CU_ASSERT_EQUAL(set(meta, "Event", "before"), GAME_TAG_OK);
        bool read = game_meta_read(meta, bad[i], strlen(bad[i]));
        if (read)
            fprintf(stderr, "\nread: %s\n", bad[i]);
        CU_ASSERT_FALSE(read);
        CU_ASSERT_TRUE(game_meta_empty(meta)); /* nothing half read */
    }
    char *huge = malloc(GAME_META_TEXT_MAX + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    memset(huge, ' ', GAME_META_TEXT_MAX + 1);
    memcpy(huge, "{\"tags\":{}}", 11);
    huge[GAME_META_TEXT_MAX + 1] = '\0';
    CU_ASSERT_FALSE(game_meta_read(meta, huge, GAME_META_TEXT_MAX + 1));
    free(huge);
    game_meta_free(meta);
}

/* An import's notes: kept as compact JSON, read back, copied, within their bound. */
static void test_notes_are_kept_read_back_copied_and_bounded(void)
{
    game_meta_t *meta = game_meta_new(), *back = game_meta_new(), *copy = game_meta_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(meta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    CU_ASSERT_TRUE(game_meta_empty(meta));
    static const char notes[] = "{\"line\":\"e2e4\",\"moves\":[{\"ply\":1,\"text\":\"a \\\"b\\\"\"}]}";
    CU_ASSERT_TRUE(game_meta_set_notes(meta, notes, sizeof notes - 1));
    CU_ASSERT_FALSE(game_meta_empty(meta)); /* notes alone are kept */
    char *text = NULL;
    size_t length = 0;
    CU_ASSERT_TRUE_FATAL(game_meta_text(meta, &text, &length));
    CU_ASSERT_TRUE(game_meta_read(back, text, length));
    CU_ASSERT_STRING_EQUAL(back->notes, notes);
    CU_ASSERT_EQUAL(back->notes_length, sizeof notes - 1);
    CU_ASSERT_TRUE(game_meta_copy(copy, back));
    CU_ASSERT_STRING_EQUAL(copy->notes, notes);
    free(text);
    /* over the bound: refused, and the notes before stay */
    char *huge = malloc(GAME_NOTES_MAX + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    memset(huge, ' ', GAME_NOTES_MAX + 1);
    CU_ASSERT_FALSE(game_meta_set_notes(meta, huge, GAME_NOTES_MAX + 1));
    CU_ASSERT_STRING_EQUAL(meta->notes, notes);
    free(huge);
    game_meta_free(meta);
    game_meta_free(back);
    game_meta_free(copy);
}

int test_game_meta_register(void)
{
    CU_pSuite suite = CU_add_suite("game_meta", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_name_is_a_pgn_symbol_of_at_most_32_bytes_that_starts_with_a_letter);
    CU_ADD_TEST(suite, test_notes_are_kept_read_back_copied_and_bounded);
    CU_ADD_TEST(suite, test_the_tags_the_server_writes_are_refused_and_a_known_name_in_another_case);
    CU_ADD_TEST(suite, test_a_value_is_utf8_of_at_most_255_bytes_without_control_characters);
    CU_ADD_TEST(suite, test_each_known_tag_has_its_format);
    CU_ADD_TEST(suite, test_tags_are_kept_known_ones_in_the_tables_order_then_custom_ones_by_name);
    CU_ADD_TEST(suite, test_sixteen_custom_tags_fit_and_a_seventeenth_is_too_many_the_known_ones_aside);
    CU_ADD_TEST(suite, test_merge_adds_only_the_names_missing_and_only_as_many_as_fit);
    CU_ADD_TEST(suite, test_metadata_is_an_object_kept_as_compact_json_of_at_most_4096_bytes);
    CU_ADD_TEST(suite, test_metadata_numbers_come_back_as_the_same_doubles_and_strings_escaped_as_json_asks);
    CU_ADD_TEST(suite, test_the_kept_text_reads_back_the_same_tags_and_metadata);
    CU_ADD_TEST(suite, test_a_kept_text_this_code_did_not_write_is_refused);
    return CUE_SUCCESS;
}
