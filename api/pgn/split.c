/* Cutting a PGN stream between games (see split.h): a small state machine
 * over comments, rest-of-line comments, tag lines and their strings. A cut
 * is only where the reader would begin a new game anyway, so reading the
 * pieces one by one reads the games the whole text holds. */
#include "split.h"

#include <string.h>

void pgn_split_init(pgn_split_t *s, size_t min_piece)
{
    memset(s, 0, sizeof *s);
    s->min_piece = min_piece;
    s->line_start = s->line_blank = true;
}

void pgn_split_scan(pgn_split_t *s, const char *text, size_t length)
{
    for (; s->at < length; s->at++) {
        char c = text[s->at];
        if (c == '\n' || (c == '\r' && (s->at + 1 >= length || text[s->at + 1] != '\n'))) {
            s->prev_blank = s->line_blank;
            s->line_start = s->line_blank = true;
            s->in_line_comment = s->in_tag = s->in_string = false;
            continue;
        }
        bool line_start = s->line_start;
        s->line_start = false;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
            continue;
        s->line_blank = false;
        if (s->in_comment) {
            s->in_comment = c != '}';
            continue;
        }
        if (s->in_line_comment)
            continue;
        if (s->in_tag) {
            if (s->in_string)
                s->in_string = c != '"' || text[s->at - 1] == '\\';
            else if (c == '"')
                s->in_string = true;
            else if (c == ']')
                s->in_tag = false;
            continue;
        }
        if (c == '[') {
            if (line_start && s->prev_blank && s->movetext) {
                if (s->cut < s->min_piece)
                    s->cut = s->at;
                s->last = s->at;
                if (!s->first)
                    s->first = s->at;
                s->movetext = false;
            }
            s->in_tag = true;
        } else if (c == '{') {
            s->in_comment = true;
            s->movetext = true;
        } else if (c == ';' || (c == '%' && line_start)) {
            s->in_line_comment = true;
        } else {
            s->movetext = true;
        }
    }
}

void pgn_split_consumed(pgn_split_t *s, size_t cut)
{
    s->at -= cut;
    s->cut = s->cut > cut ? s->cut - cut : 0;
    s->first = s->first > cut ? s->first - cut : 0;
    s->last = s->last > cut ? s->last - cut : 0;
}
