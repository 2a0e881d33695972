/* The helpers every suite shares (declared in tests.h): the perft data
 * directory, FEN and move-list shortcuts that CU-assert what they parse, the
 * buf allocation failures on demand, and the monotonic clock. */
#include "tests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../api/http/buf.h"

const char *tests_perft_dir(void)
{
    const char *dir = getenv("CHESSD_PERFT_DIR");
    return dir && *dir ? dir : "tests/data/perft";
}

bool tests_parse_fen(const char *fen, position_t *pos)
{
    char message[256];
    fen_error_t err = fen_parse(fen, strlen(fen), FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960, pos, message,
                                sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    return err == FEN_OK;
}

bool tests_play(position_t *pos, const char *moves, uint64_t *history, size_t *history_count)
{
    const char *cursor = moves, *p;
    size_t len;
    while (notation_next_in_list(&cursor, &p, &len)) {
        move_t move;
        char message[256];
        legality_reason_t r = notation_parse_move(pos, p, len, &move, message, sizeof message);
        if (r != LEGALITY_OK)
            fprintf(stderr, "\nmove '%.*s' refused: %s\n", (int)len, p, message);
        CU_ASSERT_EQUAL_FATAL(r, LEGALITY_OK);
        if (history)
            history[(*history_count)++] = pos->key;
        position_undo_t undo;
        position_make(pos, move, &undo);
    }
    return true;
}

static long allocations_left, allocation_calls;
static size_t last_allocation_size;

static void *failing_realloc(void *ptr, size_t size)
{
    allocation_calls++;
    last_allocation_size = size;
    if (allocations_left == 0)
        return NULL;
    allocations_left--;
    return realloc(ptr, size);
}

void tests_fail_allocations_after(long successes)
{
    allocations_left = successes;
    allocation_calls = 0;
    last_allocation_size = 0;
    buf_set_realloc(failing_realloc);
}

void tests_allocations_work(void) { buf_set_realloc(NULL); }

long tests_allocation_calls(void) { return allocation_calls; }

size_t tests_last_allocation_size(void) { return last_allocation_size; }

long tests_monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool tests_temp_dir(char dir[64], const char *name)
{
    snprintf(dir, 64, "/tmp/chessd-%.32s-XXXXXX", name);
    if (mkdtemp(dir))
        return true;
    fprintf(stderr, "\n%s: mkdtemp: %s\n", name, strerror(errno));
    dir[0] = '\0';
    return false;
}

void tests_remove_dir(const char *dir)
{
    if (!dir[0])
        return;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "\ncould not remove %s\n", dir);
}
