/* invariant.c - see invariant.h. */
#include "invariant.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
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
	json_object *j, *ranks;
	int active = 0, waiting = 0;
	enum anl_verdict v = anl_verdict(r);

	anl_report(r, &o, f);
	fclose(f);
	anl_result_free(r);
	j = json_tokener_parse(text);
	cr_assert_not_null(j, "%s: report is not JSON", what);
	ranks = json_object_object_get(j, "ranks");
	for (size_t i = 0; i < json_object_array_length(ranks); i++) {
		const char *role = json_object_get_string(json_object_object_get(
			json_object_array_get_idx(ranks, i), "role"));

		active += !strcmp(role, "active");
		waiting += !strcmp(role, "released");
	}
	cr_expect(v != ANL_NO_DEADLOCK || active > 0 || waiting == 0,
		  "%s: \"no deadlock\" with no rank going on and %d waiting: %s",
		  what, waiting,
		  json_object_get_string(json_object_object_get(j, "summary")));
	json_object_put(j);
	free(text);
}
