/*
 * faults.c - what both phase x fault tables check of a rank that was
 * SIGSTOPped by someone else.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "faults.h"

void fault_expect_stopped(const struct snap *s, int victim, enum fault fault,
			  const char *phase)
{
	static const struct anl_opts text = { .format = ANL_FORMAT_TEXT };
	struct anl_result *r;
	char *sum = NULL, *want;
	size_t len = 0;
	FILE *f;

	cr_expect_eq(s->ranks[victim].stopped_by, SIGSTOP,
		     "%s at %s: rank %d stopped_by %d", fault_names[fault],
		     phase, victim, s->ranks[victim].stopped_by);
	r = anl_analyze(s);
	f = open_memstream(&sum, &len);
	anl_report(r, &text, f);
	fclose(f);
	*strchrnul(sum, '\n') = '\0';	/* the verdict */
	if (asprintf(&want, "rank %d is stopped by SIGSTOP", victim) < 0)
		want = NULL;
	cr_expect(want && strstr(sum, want), "%s at %s: summary %s",
		  fault_names[fault], phase, sum);
	free(want);
	free(sum);
	anl_result_free(r);
}
