/*
 * faults.c - what both phase x fault tables check of a rank that was
 * SIGSTOPped by someone else, and of a starter that exited.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "faults.h"
#include "snapbuild.h"

/* The text report of s, whole (heap, the caller's). */
static char *text_report(const struct snap *s)
{
	static const struct anl_opts text = { .format = ANL_FORMAT_TEXT };

	return sb_render(s, &text);
}

void fault_expect_starter_gone(const struct snap *s, const char *err,
			       enum fault fault, const char *phase)
{
	char *want = NULL, *report = text_report(s);

	if (asprintf(&want, "the starter (pid %d) exited during the "
		     "collection", s->starter_pid) < 0)
		want = NULL;
	cr_assert_not_null(want);
	cr_expect_not_null(strstr(report, want), "%s at %s: report: %s",
			   fault_names[fault], phase, report);
	cr_expect_not_null(strstr(err, want), "%s at %s: stderr: %s",
			   fault_names[fault], phase, err);
	free(want);
	free(report);
}

void fault_expect_unread_named(const struct snap *s, int victim,
			       enum fault fault, const char *phase)
{
	const struct snap_rank *v = &s->ranks[victim];
	const char *why = v->state != SNAP_RANK_COLLECTED ? v->reason
							  : v->queues_reason;
	char *report = text_report(s), *missing, *rank = NULL, *end_of;
	bool named = false;

	cr_assert(why && *why, "%s at %s: rank %d: no reason in the snapshot",
		  fault_names[fault], phase, victim);
	if (asprintf(&rank, "rank %d:", victim) < 0)
		rank = NULL;
	cr_assert_not_null(rank);
	/* One line of "missing:" (up to the blank line that ends it) names
	 * the rank and why. */
	missing = strstr(report, "\nmissing:\n");
	if (missing && (end_of = strstr(missing + 10, "\n\n")))
		end_of[1] = '\0';
	for (char *l = missing; l && *l; l = strchr(l + 1, '\n')) {
		char *end = strchrnul(l + 1, '\n'), keep = *end;

		*end = '\0';
		named |= strstr(l, rank) && strstr(l, why);
		*end = keep;
	}
	cr_expect(named, "%s at %s: no line of 'missing:' names %s(%s): %s",
		  fault_names[fault], phase, rank, why, report);
	free(rank);
	free(report);
}

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
