#!/usr/bin/env bash
# Every *.c and *.h file (git ls-files; find outside git) opens, after blank lines, with a /* */ comment
# of at most 6 lines, and no sentence in it is over 40 words. A sentence ends at . ; ? or ! before
# whitespace, outside parentheses, except in e.g. i.e. cf. vs. and ellipses; a word has a letter or digit.
# Run from the repository root: prints each offender with its line count and longest sentence, exits 1.
# It first checks itself on a small tree with one good file and one of each fault, and exits 2 if that fails.
set -euo pipefail

MAX_LINES=6
MAX_WORDS=40

# The source files under the current directory, one path a line; --find
# skips git (the self-test's tree may sit inside a repository's TMPDIR).
source_files() {
    if [ "${1:-}" != --find ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -- '*.c' '*.h'
    else
        find . -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n' | sort
    fi
}

# Reads paths on stdin; prints one line per file whose opener breaks the rule.
offenders() {
    python3 -c "$OFFENDERS_PY" "$MAX_LINES" "$MAX_WORDS"
}

read -r -d '' OFFENDERS_PY <<'PYTHON' || true
import re, sys

max_lines, max_words = int(sys.argv[1]), int(sys.argv[2])
ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.")
OPENING = "(\"'`"
CLOSING = ")\"'`"

# The opening comment's lines, from the one with /* to the one with */; None
# when the first line that is not blank does not start a comment.
def opener(text):
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines) or not lines[i].lstrip().startswith("/*"):
        return None
    rest = lines[i].lstrip()[2:]
    for j in range(i, len(lines)):
        if "*/" in (rest if j == i else lines[j]):
            return lines[i:j + 1]
    return None

# The comment's text on one line: markers and leading stars gone, runs of
# white space one space.
def body(lines):
    text = "\n".join(lines)
    text = text[text.find("/*") + 2:text.rfind("*/")]
    text = "\n".join(re.sub(r"^\s*\*+(?!/)", "", line) for line in text.split("\n"))
    return " ".join(text.split())

# A sentence ends at . ; ? or ! (and any closing brackets or quotes after it)
# before a space or the end, outside parentheses; not at a dot that follows a
# dot (an ellipsis), nor at the last dot of e.g. i.e. cf. vs.
def sentences(text):
    out, start, depth = [], 0, 0
    for k, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
        if depth or c not in ".;?!":
            continue
        end = k + 1
        while end < len(text) and text[end] in CLOSING:
            end += 1
        if end < len(text) and text[end] != " ":
            continue
        if c == "." and k > 0 and text[k - 1] == ".":
            continue
        word = text[:k + 1].rsplit(" ", 1)[-1].lstrip(OPENING).lower()
        if word in ABBREVIATIONS:
            continue
        out.append(text[start:end].strip())
        start = end
    if text[start:].strip():
        out.append(text[start:].strip())
    return out

def words(sentence):
    return sum(1 for token in sentence.split() if re.search(r"[A-Za-z0-9]", token))

for path in sys.stdin.read().split("\n"):
    if not path:
        continue
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = opener(f.read())
    if lines is None:
        print(f"{path}: no opening /* */ comment")
        continue
    longest = max(sentences(body(lines)) or [""], key=words)
    if len(lines) > max_lines or words(longest) > max_words:
        print(f"{path}: {len(lines)} lines, longest sentence {words(longest)} words: {longest}")
PYTHON

# A tree with a good file (its sentences are exactly 40 words only if e.g., store.h, 0.9.75, ..., the
# parenthesis and the = sign neither split nor count), a 7-line opener, a 41-word sentence written the
# same way, and a file with no opener: exactly the three faults must be reported.
self_test() (
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    forty="one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    forty="$forty sixteen seventeen eighteen nineteen twenty e.g. store.h and 0.9.75 ... twenty-five = (twenty-six."
    forty="$forty Twenty-seven; twenty-eight) twenty-nine thirty thirty-one thirty-two thirty-three thirty-four"
    forty="$forty thirty-five thirty-six thirty-seven thirty-eight thirty-nine forty"
    printf '\n/* Good: a short opener.\n * %s. A second sentence;\n * a third? A fourth! Done. */\nint good;\n' \
        "$forty" >"$dir/good.c"
    printf '/* Long: seven lines.\n * two\n * three\n * four\n * five\n * six\n */\nint long_opener;\n' \
        >"$dir/long.c"
    printf '/* Wordy. %s forty-one.\n */\nint wordy;\n' "$forty" >"$dir/wordy.h"
    printf '// A line comment is not an opener.\nint none;\n' >"$dir/none.c"
    found=$(cd "$dir" && source_files --find | offenders | sed 's/: .*//' | sort | tr '\n' ' ')
    if [ "$found" != "long.c none.c wordy.h " ]; then
        echo "file_openers: the self-test found '$found', not long.c none.c wordy.h:" >&2
        (cd "$dir" && source_files --find | offenders) >&2
        exit 2
    fi
)

self_test || exit 2
found=$(source_files | offenders)
if [ -n "$found" ]; then
    echo "file_openers: openers over $MAX_LINES lines or with a sentence over $MAX_WORDS words:" >&2
    echo "$found" >&2
    exit 1
fi
echo "file_openers: every file opens with a comment of at most $MAX_LINES lines and sentences of at most $MAX_WORDS words"
