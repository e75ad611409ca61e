/* invariant.c - see invariant.h. */
#include "invariant.h"

#include <criterion/criterion.h>
#include "support/jtree.h"
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

void inv_check(const struct snap *s, const char *what)
{
	struct anl_result *r = anl_analyze(s);
	struct anl_opts o = { .format = ANL_FORMAT_JSON };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	yajl_val j, ranks;
	int active = 0, waiting = 0;
	enum anl_verdict v = anl_verdict(r);

	anl_report(r, &o, f);
	fclose(f);
	anl_result_free(r);
	j = jt_parse(text);
	cr_assert_not_null(j, "%s: report is not JSON", what);
	ranks = jt_get(j, "ranks");
	for (size_t i = 0; i < jt_len(ranks); i++) {
		const char *role = jt_str(jt_get(
			jt_at(ranks, i), "role"));

		active += !strcmp(role, "active");
		waiting += !strcmp(role, "released");
	}
	cr_expect(v != ANL_NO_DEADLOCK || active > 0 || waiting == 0,
		  "%s: \"no deadlock\" with no rank going on and %d waiting: %s",
		  what, waiting,
		  jt_str(jt_get(j, "summary")));
	jt_free(j);
	free(text);
}
