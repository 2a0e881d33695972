/* What fuzz_fen and fuzz_variant check of every position they reach: that
 * its FEN reads back, in its own variant, to the same position_t and is
 * written the same again. FUZZ_CHECK (fuzz.h) reports a failure. */
#ifndef CHESSD_TESTS_FUZZ_FEN_CHECKS_H
#define CHESSD_TESTS_FUZZ_FEN_CHECKS_H

#include "../../rules/rules.h"

/* The flags a formatted FEN of pos is read back with: flags, with
 * FEN_DETECT_CHESS960 replaced by what the position says. */
unsigned fen_checks_flags(const position_t *pos, unsigned flags);

/* The first field in which a and b differ, for a crash report. */
const char *fen_checks_difference(const position_t *a, const position_t *b);

/* fen_format(pos) reads back in pos's variant to pos exactly and formats
 * the same again; origin says where pos came from. */
void fen_checks_round_trip(const position_t *pos, unsigned flags, const char *origin);

#endif
