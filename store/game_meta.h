/* A game's tags and metadata, set at its creation and never changed: PGN
 * tags checked as PGN allows and bounded, an opaque JSON object, and an
 * imported PGN's notes. They are kept in the game's hash apart from the
 * state text (its "meta" field), so no change loads them; only full reads do. */
#ifndef CHESSD_STORE_GAME_META_H
#define CHESSD_STORE_GAME_META_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    GAME_TAG_NAME_MAX = 32,     /* bytes of a tag's name */
    GAME_TAG_VALUE_MAX = 255,   /* bytes of a tag's value */
    GAME_TAGS_KNOWN = 15,       /* the tags game_meta.c's table knows, Event to Annotator */
    GAME_TAGS_ROSTER = 4,       /* the first known ones, the Seven Tag Roster's: Event, Site, Date, Round */
    GAME_TAGS_CUSTOM_MAX = 16,  /* tags besides the known ones */
    GAME_TAGS_MAX = GAME_TAGS_KNOWN + GAME_TAGS_CUSTOM_MAX,
    GAME_METADATA_MAX = 4096,   /* bytes of the metadata as compact JSON */
    GAME_NOTES_MAX = 131072,    /* bytes of the notes an imported PGN leaves, as compact JSON */
    GAME_META_TEXT_MAX = GAME_NOTES_MAX + 65536, /* bytes of a stored meta text read back (above what is written) */
};

typedef struct {
    char name[GAME_TAG_NAME_MAX + 1];
    char value[GAME_TAG_VALUE_MAX + 1];
    int rank; /* its place in the known tags' table, GAME_TAGS_KNOWN for a custom one */
} game_tag_t;

/* The tags in the order they are written: the known ones in the table's
 * order, then the custom ones by name (bytewise). Large (about 9 KiB):
 * make it with game_meta_new, free with game_meta_free. */
typedef struct {
    int count;
    game_tag_t tags[GAME_TAGS_MAX];
    char *metadata; /* a JSON object, compact, malloc'd; NULL: none */
    size_t metadata_length;
    /* the comments, NAGs and variations of an imported PGN's mainline: a
     * JSON object, compact, malloc'd, that only the PGN writer reads
     * (api/render/pgn.h); NULL: none */
    char *notes;
    size_t notes_length;
} game_meta_t;

/* A zeroed meta (no tags, no metadata), or NULL when out of memory. */
game_meta_t *game_meta_new(void);
/* Frees meta and what it owns; NULL is fine. */
void game_meta_free(game_meta_t *meta);
/* Whether meta holds nothing (NULL holds nothing). */
bool game_meta_empty(const game_meta_t *meta);

typedef enum {
    GAME_TAG_OK = 0,
    GAME_TAG_ENAME,     /* not a PGN symbol: a letter, then letters, digits and '_', 1 to 32 bytes */
    GAME_TAG_ESERVER,   /* one the server writes (White, Black, Result, TimeControl, FEN...) */
    GAME_TAG_ECASE,     /* a known or server tag's name in another case ("event") */
    GAME_TAG_EVALUE,    /* a value not UTF-8, with a control character, or over 255 bytes */
    GAME_TAG_EFORMAT,   /* a value not in its tag's format (a Date, an Elo...) */
    GAME_TAG_ETOO_MANY, /* a custom name past GAME_TAGS_CUSTOM_MAX */
} game_tag_status_t;

/* Whether name may carry value (length bytes), whichever meta it goes in;
 * what is wrong in detail (size bytes, may be 0), naming the tag. */
game_tag_status_t game_meta_check_tag(const char *name, const char *value, size_t length, char *detail,
                                      size_t size);

/* Sets tag name to value in meta, replacing a value it had, in its place
 * in the order; checked first (game_meta_check_tag), and a new custom name
 * past the bound is GAME_TAG_ETOO_MANY. Nothing changes unless GAME_TAG_OK. */
game_tag_status_t game_meta_set_tag(game_meta_t *meta, const char *name, const char *value, size_t length,
                                    char *detail, size_t size);

/* The value of tag name in meta (NULL: none, or meta NULL). */
const char *game_meta_tag(const game_meta_t *meta, const char *name);

/* Adds to dst the tags of src it has no value for; those refused (a
 * custom name past the bound) are left out. */
void game_meta_merge(game_meta_t *dst, const game_meta_t *src);

/* dst (empty) becomes a copy of src; false when out of memory (dst then
 * holds src's tags, no metadata and no notes). */
bool game_meta_copy(game_meta_t *dst, const game_meta_t *src);

/* Sets meta's notes to a copy of text (a JSON object, compact, as
 * api/render writes it; not read here). False, and nothing changed, when
 * it is over GAME_NOTES_MAX bytes or out of memory. */
bool game_meta_set_notes(game_meta_t *meta, const char *text, size_t length);

typedef enum {
    GAME_METADATA_OK = 0,
    GAME_METADATA_ETYPE,      /* not an object */
    GAME_METADATA_ENUMBER,    /* a number beyond a double (1e400): its value would not survive */
    GAME_METADATA_EREPEATED,  /* an object in it names a member twice */
    GAME_METADATA_ETOO_LARGE, /* over GAME_METADATA_MAX bytes as compact JSON */
    GAME_METADATA_ENOMEM,
} game_metadata_status_t;

/* Sets meta's metadata to object as compact JSON; what is wrong in detail.
 * Nothing changes unless GAME_METADATA_OK. */
game_metadata_status_t game_meta_set_metadata(game_meta_t *meta, const cJSON *object, char *detail, size_t size);

/* The text kept in the game's hash: {"tags": {...}, "metadata": {...},
 * "notes": {...}}, in
 * *text (malloc'd, caller frees; length in *length), or *text NULL when
 * meta holds nothing. False when out of memory. */
bool game_meta_text(const game_meta_t *meta, char **text, size_t *length);

/* Reads a kept text into meta (emptied first); false when it is not one
 * this code writes, or out of memory. Every tag is checked again, so a
 * hand-made record cannot put a control character into a PGN. Members
 * other than tags, metadata and notes are ignored: a later version may add some. */
bool game_meta_read(game_meta_t *meta, const char *text, size_t length);

#endif
