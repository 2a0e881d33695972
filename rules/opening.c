/* The opening table's lookup (see opening.h): an open-addressing hash of the
 * named positions' keys, generated at build time into opening_table.h. */
#include "opening.h"

#include <stddef.h>

#include "opening_table.h"

_Static_assert((OPENING_TABLE_SLOTS & (OPENING_TABLE_SLOTS - 1)) == 0, "the slot count is a power of two");
_Static_assert(OPENING_TABLE_POSITIONS < OPENING_TABLE_SLOTS, "an empty slot ends every probe");

const int OPENING_PLIES_MAX = OPENING_TABLE_PLIES_MAX;

const opening_t *opening_find(uint64_t key)
{
    for (size_t s = (size_t)(key & (OPENING_TABLE_SLOTS - 1));; s = (s + 1) & (OPENING_TABLE_SLOTS - 1)) {
        unsigned index = opening_slots[s];
        if (index == 0)
            return NULL;
        if (opening_table[index - 1].key == key)
            return &opening_table[index - 1];
    }
}

const opening_t *opening_at(const position_t *pos)
{
    int ply = 2 * ((int)pos->fullmove_number - 1) + (pos->side_to_move == BLACK);
    if (pos->chess960 || ply < 1 || ply > OPENING_TABLE_PLIES_MAX)
        return NULL;
    return opening_find(pos->key);
}
