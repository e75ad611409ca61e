/*
 * analyze.h - from a snapshot to a verdict and a report.
 */
#ifndef MD_ANALYZE_H
#define MD_ANALYZE_H

#include <stdbool.h>
#include <stdio.h>

#include "snap.h"

enum anl_verdict {
	ANL_NO_DEADLOCK,
	ANL_DEADLOCK,
	ANL_INCOMPLETE,
};

enum anl_format {
	ANL_FORMAT_TEXT,
	ANL_FORMAT_JSON,
	ANL_FORMAT_DOT,
};

struct anl_opts {
	enum anl_format format;
	bool all_ranks;		/* text: one line per rank instead of ranges */
	bool github;		/* also print ::error annotations (stdout) */
};

struct anl_result;

/* Analyse s.  The result borrows s: free it before s.  Never fails. */
struct anl_result *anl_analyze(const struct snap *s);
void anl_result_free(struct anl_result *r);

enum anl_verdict anl_verdict(const struct anl_result *r);
/* The exit code of DESIGN.md for the verdict: 0, 1 or 2. */
int anl_exit_code(const struct anl_result *r);

/* Write the report in o->format to out. */
void anl_report(const struct anl_result *r, const struct anl_opts *o,
		FILE *out);

/*
 * Write a JUnit XML file with one test case named name (the job); a
 * deadlock or incomplete verdict is a failure whose text is the text
 * report.  Returns 0 or -MD_E_SYS (reported).
 */
int anl_write_junit(const struct anl_result *r, const char *name,
		    const char *path);

/* --dump: the snapshot for a person, grouped by rank. */
void anl_dump(const struct snap *s, FILE *out);

#endif /* MD_ANALYZE_H */
