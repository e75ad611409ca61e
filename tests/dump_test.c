/*
 * dump_test.c - --dump output of the fixture snapshots, compared with
 * tests/expected/dump/<fixture>.txt (see the README there to regenerate).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "snap.h"
#include "support/mpijob.h"

static char *dump_fixture(const char *name)
{
	char path[256], *buf = NULL;
	struct snap *s;
	size_t len = 0;
	FILE *f, *mem;

	snprintf(path, sizeof(path), "tests/fixtures/snapshots/%s.jsonl", name);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s (run from the repository root)", path);
	cr_assert_eq(snap_read(f, path, &s), 0);
	fclose(f);
	mem = open_memstream(&buf, &len);
	anl_dump(s, mem);
	fclose(mem);
	snap_free(s);
	return buf;
}

/* MD_REGEN_DUMP=1 rewrites the expected file instead (review the diff). */
static void check_dump(const char *name)
{
	char path[256], *got = dump_fixture(name), *want;
	FILE *f;

	snprintf(path, sizeof(path), "tests/expected/dump/%s.txt", name);
	if (getenv("MD_REGEN_DUMP")) {
		f = fopen(path, "w");
		cr_assert_not_null(f, "%s", path);
		fputs(got, f);
		fclose(f);
	}
	want = mj_slurp(path);
	cr_assert_not_null(want, "%s missing", path);
	cr_assert_str_eq(got, want, "dump of %s differs from %s", name, path);
	free(got);
	free(want);
}

Test(dump, shows_ops_extra_text_and_stacks_of_ring)
{
	check_dump("ring3");
}

Test(dump, shows_reasons_of_gone_unread_and_remote_ranks)
{
	check_dump("gone4");
}

Test(dump, is_the_same_on_every_call)
{
	char *a = dump_fixture("ring3"), *b = dump_fixture("ring3");

	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

Test(dump, marks_corrected_status_and_missing_unexpected_queue)
{
	char *d = dump_fixture("ring3");

	cr_assert(strstr(d, "(status corrected: still being waited on)"));
	cr_assert(strstr(d, "unexpected queue: not available from the DLL"));
	cr_assert(strstr(d, "from ANY_SOURCE, tag ANY"));
	cr_assert(strstr(d, "(MPI progress thread)"));
	free(d);
}
