/*
 * snapread_fuzz.c - fuzz harness for snap_read() and, on every input that
 * reads, the analyzer and every report writer (libFuzzer interface; AFL++
 * links it with its driver too).  Built and run by scripts/fuzz.sh.
 *
 * Whatever the bytes, snap_read must return 0 with a snapshot or
 * -MD_E_INPUT without one, never crash, never leak (LeakSanitizer).  A
 * snapshot that reads must write and read back, and its analysis and
 * reports (text with and without ranges, JSON, DOT, JUnit, dump) must
 * not crash.  At exit the harness writes how many inputs reached the
 * report writers ("reports N") to the file $MD_FUZZ_COUNTS, if set:
 * fuzz.sh closes the target's stderr (one error line per bad input).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "md.h"
#include "snap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long long reports;
static FILE *sink;

static void print_counts(void)
{
	const char *path = getenv("MD_FUZZ_COUNTS");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "reports %llu\n", reports);
		fclose(f);
	}
}

static void write_reports(const struct snap *s)
{
	static const struct anl_opts opts[] = {
		{ .format = ANL_FORMAT_TEXT },
		{ .format = ANL_FORMAT_TEXT, .all_ranks = true, .github = true },
		{ .format = ANL_FORMAT_JSON },
		{ .format = ANL_FORMAT_DOT },
	};
	struct anl_result *r = anl_analyze(s);

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		anl_report(r, &opts[i], sink);
	if (anl_write_junit(r, "fuzz", "/dev/null") != 0)
		abort();
	anl_dump(s, sink);
	anl_result_free(r);
	reports++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap *s = NULL, *back = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int ret;

	if (!sink) {
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
		atexit(print_counts);
	}
	/* In memory: no file system per input.  The size check against a
	 * regular file's bytes is in the seed corpus and snapio_test.c. */
	f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	if (!f)
		abort();
	ret = snap_read(f, "fuzz", &s);
	fclose(f);
	if (ret != 0 && ret != -MD_E_INPUT)
		abort();
	if (ret)
		return 0;
	mem = open_memstream(&text, &len);
	if (snap_write(s, mem) != 0)
		abort();
	fclose(mem);
	f = fmemopen(text, len, "r");
	if (!f || snap_read(f, "fuzz-back", &back) != 0)
		abort();
	fclose(f);
	if (back->nranks != s->nranks || back->ncomms != s->ncomms)
		abort();
	write_reports(s);
	snap_free(back);
	snap_free(s);
	free(text);
	return 0;
}
