/*
 * invariant.h - what every analysis must satisfy, checked on every
 * snapshot the analyzer's tests analyse (analyze_test.c, report_test.c,
 * and every file under tests/fixtures/).
 */
#ifndef MD_INVARIANT_H
#define MD_INVARIANT_H

#include "snap.h"

/*
 * A report never says "no deadlock" while no rank goes on and ranks
 * wait: waiting ranks are released by someone going on, or they are
 * stuck.  Fails the running test (naming what) when s breaks it.
 */
void inv_check(const struct snap *s, const char *what);

#endif /* MD_INVARIANT_H */
