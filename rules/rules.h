/* The one header api/ and store/ include: everything the rules core offers.
 * Call rules_init() once, before any thread uses the rules; after it the
 * module holds no mutable state and every function is thread-safe. */
#ifndef CHESSD_RULES_RULES_H
#define CHESSD_RULES_RULES_H

#include "chess960.h"
#include "fen.h"
#include "movegen.h"
#include "perft.h"
#include "san.h"
#include "status.h"
#include "position.h"
#include "notation.h"
#include "opening.h"
#include "uci_move.h"
#include "variant.h"

/* Builds the attack and hash tables. Idempotent; not thread-safe itself. */
void rules_init(void);

#endif
