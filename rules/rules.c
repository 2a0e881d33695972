/* Start-up of the rules core: the only place its tables, and the variants'
 * hooks below the variant code, are written. */
#include "rules.h"

#include "zobrist.h"

void rules_init(void)
{
    static bool done;
    if (done)
        return;
    attacks_init();
    zobrist_init();
    position_variant_hooks = (position_variant_hooks_t){ variant_make, variant_checkers, variant_generate };
    done = true;
}
