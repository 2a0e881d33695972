/* Start-up of the rules core: the only place its tables are written. */
#include "rules.h"

#include "zobrist.h"

void rules_init(void)
{
    static bool done;
    if (done)
        return;
    attacks_init();
    zobrist_init();
    done = true;
}
