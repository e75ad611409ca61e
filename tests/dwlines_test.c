/*
 * dwlines_test.c - source lines of call sites, checked against return
 * addresses and __LINE__ printed by a program compiled here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/dwlines.h"
#include "../collector/elfsym.h"
#include "md.h"
#include "support/elf_fixture.h"

/* Each call to where() prints its return address and the caller's line:
 * what a stack walk gives for a caller's frame.  NO_TAIL_CALL keeps -O2
 * from turning the calls into jumps (the return address would then be
 * main's). */
static const char prog_src[] =
	"#include <stdio.h>\n"
	"#define NO_TAIL_CALL __asm__ volatile(\"\" ::: \"memory\")\n"
	"__attribute__((noinline)) void where(int line)\n"
	"{\n"
	"	printf(\"ra %p %d\\n\", __builtin_return_address(0), line);\n"
	"}\n"
	"__attribute__((noinline)) void caller_one(void)\n"
	"{\n"
	"	where(__LINE__);\n"
	"	NO_TAIL_CALL;\n"
	"}\n"
	"__attribute__((noinline)) static void caller_two(int n)\n"
	"{\n"
	"	if (n > 1)\n"
	"		where(__LINE__);\n"
	"	else\n"
	"		where(__LINE__);\n"
	"	NO_TAIL_CALL;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"main %p\\n\", (void *)main);\n"
	"	caller_one();\n"
	"	caller_two(2);\n"
	"	caller_two(0);\n"
	"	return 0;\n"
	"}\n";

static const char *const callers[] = { "caller_one", "caller_two",
				       "caller_two" };

struct lprog {
	char *dir, *path, *out;
	uint64_t bias;
	struct es_image *img;
};

static struct lprog build_src(const char *src, const char *flags)
{
	struct lprog p;
	unsigned long long main_rt;
	uint64_t main_file;

	p.dir = ef_tmpdir();
	p.path = ef_cc(p.dir, "lines", src, flags, NULL);
	cr_assert_not_null(p.path, "cc failed");
	p.out = ef_output("'%s'", p.path);
	cr_assert_not_null(p.out);
	cr_assert_eq(sscanf(strstr(p.out, "main "), "main %llx", &main_rt), 1);
	cr_assert_eq(es_image_open(p.path, &p.img), 0);
	cr_assert_eq(es_lookup(p.img, "main", &main_file), 0);
	p.bias = main_rt - main_file;
	return p;
}

static struct lprog build(const char *flags)
{
	return build_src(prog_src, flags);
}

static void free_lprog(struct lprog *p)
{
	es_image_free(p->img);
	free(p->path);
	free(p->out);
	ef_rmtree(p->dir);
}

/* Call site i of the program's output: file address of ra - 1, line. */
static void call_site(const struct lprog *p, int i, uint64_t *addr, int *line)
{
	const char *l = p->out;
	unsigned long long ra;
	int k;

	for (k = 0; k <= i; k++) {
		l = strstr(l, "ra ");
		cr_assert_not_null(l);
		l += 3;
	}
	cr_assert_eq(sscanf(l, "%llx %d", &ra, line), 2);
	*addr = ra - 1 - p->bias;
}

static void expect_call_sites(const struct dl_table *t, const struct lprog *p)
{
	struct dl_loc loc;
	uint64_t addr;
	int line, i;

	for (i = 0; i < 3; i++) {
		call_site(p, i, &addr, &line);
		cr_assert_eq(dl_lookup(t, addr, &loc), 0, "call %d", i);
		cr_expect_str_eq(loc.func, callers[i], "call %d", i);
		cr_assert_not_null(loc.file);
		cr_expect_not_null(strstr(loc.file, "lines.c"), "%s", loc.file);
		cr_expect_eq(loc.line, line, "call %d in %s", i, callers[i]);
	}
}

Test(dwlines, call_sites_map_to_their_function_file_and_line)
{
	struct lprog p = build("-g -O0");
	struct dl_table *t;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	cr_expect_gt(dl_table_nrows(t), 0);
	dl_table_free(t);
	free_lprog(&p);
}

Test(dwlines, call_sites_are_right_when_optimised)
{
	struct lprog p = build("-g -O2");
	struct dl_table *t;

	cr_assert_eq(dl_table_open(p.path, NULL, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	free_lprog(&p);
}

/* A static inline function of a header that comes first in the unit:
 * gcc's DWARF 5 rows in it name no file (the default, file 1), which
 * libdwarf 20210528 reads as file 0, the .c file.  #line stands for the
 * header. */
static const char header_first_src[] =
	"#include <stdio.h>\n"
	"__attribute__((noinline)) void where(int line);\n"
	"#line 1 \"helper.h\"\n"
	"__attribute__((noinline)) void in_header(void)\n"
	"{\n"
	"	where(__LINE__);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"#line 9 \"lines.c\"\n"
	"__attribute__((noinline)) void where(int line)\n"
	"{\n"
	"	printf(\"ra %p %d\\n\", __builtin_return_address(0), line);\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"main %p\\n\", (void *)main);\n"
	"	in_header();\n"
	"	return 0;\n"
	"}\n";

Test(dwlines, a_header_function_first_in_the_unit_is_named_by_the_header)
{
	struct lprog p = build_src(header_first_src, "-g -O0 -gdwarf-5");
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t addr;
	int line;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	call_site(&p, 0, &addr, &line);
	cr_assert_eq(dl_lookup(t, addr, &loc), 0);
	cr_expect_str_eq(loc.func, "in_header");
	cr_assert_not_null(loc.file);
	cr_expect(strstr(loc.file, "helper.h") != NULL, "file %s", loc.file);
	cr_expect_eq(loc.line, line);
	dl_table_free(t);
	free_lprog(&p);
}

Test(dwlines, lines_come_from_the_separate_debug_file)
{
	struct lprog p = build("-g -O0");
	struct dl_table *t;
	char *stripped = xasprintf("%s/stripped", p.dir);
	char *dbg = xasprintf("%s/stripped.debug", p.dir);

	cr_assert_eq(ef_sh("objcopy --only-keep-debug '%s' '%s' && objcopy "
			   "--strip-debug --add-gnu-debuglink='%s' '%s' '%s'",
			   p.path, dbg, dbg, p.path, stripped), 0);
	cr_assert_eq(dl_table_open(stripped, NULL, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	free(stripped);
	free(dbg);
	free_lprog(&p);
}

Test(dwlines, without_dwarf_names_come_from_the_symbol_table)
{
	struct lprog p = build("-O0");
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t addr;
	int line;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	cr_expect_eq(dl_table_nrows(t), 0);
	call_site(&p, 0, &addr, &line);
	cr_assert_eq(dl_lookup(t, addr, &loc), 0);
	cr_expect_str_eq(loc.func, "caller_one");
	cr_expect_null(loc.file);
	cr_expect_eq(loc.line, 0);
	dl_table_free(t);
	free_lprog(&p);
}

Test(dwlines, address_outside_any_code_is_not_found)
{
	struct lprog p = build("-g -O0");
	struct dl_table *t;
	struct dl_loc loc;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	cr_expect_eq(dl_lookup(t, 0x10, &loc), -MD_E_NOSYM);
	dl_table_free(t);
	free_lprog(&p);
}

Test(dwlines, cache_builds_a_table_once_per_file)
{
	struct lprog p = build("-g -O0");
	struct dl_cache *c = dl_cache_new(true);
	const struct dl_table *a, *b;

	cr_assert_eq(dl_cache_get(c, p.path, p.img, &a), 0);
	cr_assert_eq(dl_cache_get(c, p.path, p.img, &b), 0);
	cr_expect_eq(a, b);
	dl_cache_free(c);
	free_lprog(&p);
}

Test(dwlines, source_built_libmpi_lines_build_in_reasonable_time)
{
	const char *prefix = ef_ompi_g_prefix();
	char *lib;
	struct es_image *img;
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t v;

	if (!prefix)
		cr_skip_test("no source-built Open MPI (run "
			     "scripts/build-openmpi.sh)");
	lib = xasprintf("%s/lib/libmpi.so", prefix);
	cr_assert_eq(es_image_open(lib, &img), 0);
	/* The DWARF itself, not a memo of an earlier run. */
	cr_assert_eq(dl_table_open(lib, img, false, &t), 0);
	fprintf(stderr, "dwlines: libmpi line table opened: %u rows, %.3f s\n",
		dl_table_nrows(t), dl_table_build_ns(t) / 1e9);
	cr_assert_eq(es_lookup(img, "PMPI_Recv", &v), 0);
	cr_assert_eq(dl_lookup(t, v + 4, &loc), 0);
	fprintf(stderr, "dwlines: after one lookup: %u rows, %.3f s\n",
		dl_table_nrows(t), dl_table_build_ns(t) / 1e9);
	cr_expect_str_eq(loc.func, "PMPI_Recv");
	cr_expect_not_null(loc.file && strstr(loc.file, "recv.c"), "%s",
			   loc.file ? loc.file : "(no file)");
	dl_table_free(t);
	es_image_free(img);
	free(lib);
}

/* The same program in two files, linked together: where() and
 * caller_one() compiled by cc_a, caller_two() and main() by cc_b. */
static const char part_a[] =
	"#include <stdio.h>\n"
	"#define NO_TAIL_CALL __asm__ volatile(\"\" ::: \"memory\")\n"
	"__attribute__((noinline)) void where(int line)\n"
	"{\n"
	"	printf(\"ra %p %d\\n\", __builtin_return_address(0), line);\n"
	"}\n"
	"__attribute__((noinline)) void caller_one(void)\n"
	"{\n"
	"	where(__LINE__);\n"
	"	NO_TAIL_CALL;\n"
	"}\n";

static const char part_b[] =
	"#include <stdio.h>\n"
	"#define NO_TAIL_CALL __asm__ volatile(\"\" ::: \"memory\")\n"
	"void where(int line);\n"
	"void caller_one(void);\n"
	"__attribute__((noinline)) static void caller_two(int n)\n"
	"{\n"
	"	if (n > 1)\n"
	"		where(__LINE__);\n"
	"	else\n"
	"		where(__LINE__);\n"
	"	NO_TAIL_CALL;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"main %p\\n\", (void *)main);\n"
	"	caller_one();\n"
	"	caller_two(2);\n"
	"	caller_two(0);\n"
	"	return 0;\n"
	"}\n";

static struct lprog build_two(const char *cc_a, const char *cc_b)
{
	struct lprog p;
	unsigned long long main_rt;
	uint64_t main_file;
	char *a, *b;

	p.dir = ef_tmpdir();
	a = ef_write(p.dir, "alines.c", part_a);
	b = ef_write(p.dir, "blines.c", part_b);
	p.path = xasprintf("%s/lines", p.dir);
	cr_assert_eq(ef_sh("cd '%s' && %s -g -O0 -c alines.c && %s -g -O0 -c "
			   "blines.c && cc -o lines alines.o blines.o",
			   p.dir, cc_a, cc_b), 0);
	p.out = ef_output("'%s'", p.path);
	cr_assert_not_null(p.out);
	cr_assert_eq(sscanf(strstr(p.out, "main "), "main %llx", &main_rt), 1);
	cr_assert_eq(es_image_open(p.path, &p.img), 0);
	cr_assert_eq(es_lookup(p.img, "main", &main_file), 0);
	p.bias = main_rt - main_file;
	free(a);
	free(b);
	return p;
}

Test(dwlines, reads_only_the_compilation_units_that_lookups_need)
{
	struct lprog p = build_two("cc", "cc");
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t addr;
	unsigned after_one;
	int line;

	cr_assert_eq(dl_table_open(p.path, NULL, true, &t), 0);
	cr_expect_eq(dl_table_nrows(t), 0, "nothing is read before a lookup");
	call_site(&p, 0, &addr, &line);
	cr_assert_eq(dl_lookup(t, addr, &loc), 0);
	cr_expect_eq(loc.line, line);
	after_one = dl_table_nrows(t);
	cr_expect_gt(after_one, 0);
	expect_call_sites(t, &p);
	cr_expect_gt(dl_table_nrows(t), after_one,
		     "the second file's unit is read when it is asked for");
	dl_table_free(t);
	free_lprog(&p);
}

/* clang writes no .debug_aranges: its units are found by reading every
 * unit that the aranges do not list, also after units read by offset. */
Test(dwlines, units_without_aranges_are_found_after_units_with_them)
{
	struct lprog p;
	struct dl_table *t;

	if (ef_sh("command -v clang >/dev/null") != 0)
		cr_skip_test("no clang to build a unit without .debug_aranges");
	p = build_two("cc", "clang");
	cr_assert_eq(dl_table_open(p.path, NULL, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	free_lprog(&p);
}

Test(dwlines, a_file_without_any_aranges_still_gives_lines)
{
	struct lprog p;
	struct dl_table *t;

	if (ef_sh("command -v clang >/dev/null") != 0)
		cr_skip_test("no clang to build a unit without .debug_aranges");
	p = build_two("clang", "clang");
	cr_assert_eq(dl_table_open(p.path, NULL, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	free_lprog(&p);
}

/* ---- the memo of answers (dwlines_memo.h) ---- */

/* The program with over 1 MiB in its file, so that its lines get a memo,
 * in a cache directory of the test's own. */
static struct lprog build_memo(char **cache)
{
	char *src = xasprintf("%schar md_pad[1 << 20] = { 1 };\n", prog_src);
	struct lprog p = build_src(src, "-g -O0 -Wl,--build-id");

	free(src);
	*cache = xasprintf("%s/cache", p.dir);
	setenv("XDG_CACHE_HOME", *cache, 1);
	return p;
}

Test(dwlines, a_memo_answers_the_next_collection_without_the_dwarf)
{
	char *cache, *out;
	struct lprog p = build_memo(&cache);
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t addr;
	int line;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	cr_expect_eq(dl_lookup(t, 0x10, &loc), -MD_E_NOSYM);
	cr_expect_gt(dl_table_nrows(t), 0);
	dl_table_free(t);
	out = ef_output("cat '%s'/mpi-deadlock/lines/*", cache);
	cr_assert_not_null(out);
	cr_expect_not_null(strstr(out, "caller_two"), "%s", out);
	free(out);

	/* Every address asked before, and the one without an answer, come
	 * from the memo: no line of DWARF is read. */
	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	cr_expect_eq(dl_lookup(t, 0x10, &loc), -MD_E_NOSYM);
	cr_expect_eq(dl_table_nrows(t), 0);
	/* A new address opens the DWARF. */
	call_site(&p, 0, &addr, &line);
	cr_assert_eq(dl_lookup(t, addr - 1, &loc), 0);
	cr_expect_gt(dl_table_nrows(t), 0);
	dl_table_free(t);
	free(cache);
	free_lprog(&p);
}

/* MD_NO_LINE_MEMO (main/ turns it into memo false): the DWARF is read
 * although a memo would answer, and no memo is written. */
Test(dwlines, without_memo_the_dwarf_answers_and_no_memo_is_written)
{
	char *cache, *out;
	struct lprog p = build_memo(&cache);
	struct dl_cache *c = dl_cache_new(false);
	const struct dl_table *ct;
	struct dl_table *t;

	cr_assert_eq(dl_table_open(p.path, p.img, false, &t), 0);
	expect_call_sites(t, &p);
	cr_expect_gt(dl_table_nrows(t), 0);
	dl_table_free(t);
	out = ef_output("ls '%s'/mpi-deadlock/lines 2>/dev/null", cache);
	cr_expect(!out || !*out, "a memo was written: %s", out ? out : "");
	free(out);

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	cr_assert_eq(dl_cache_get(c, p.path, p.img, &ct), 0);
	expect_call_sites(ct, &p);
	cr_expect_gt(dl_table_nrows(ct), 0, "the cache's table read DWARF");
	dl_cache_free(c);
	free(cache);
	free_lprog(&p);
}

Test(dwlines, a_memo_of_other_dwarf_or_a_damaged_memo_is_not_used)
{
	char *cache, *memo;
	struct lprog p = build_memo(&cache);
	struct dl_table *t;
	struct dl_loc loc;
	uint64_t addr;
	int line;

	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	memo = ef_output("ls '%s'/mpi-deadlock/lines/*", cache);
	cr_assert_not_null(memo);
	memo[strcspn(memo, "\n")] = '\0';

	/* A memo of the same DWARF file would be believed, even a lying
	 * one: so once the file has changed, a lie must not be. */
	call_site(&p, 0, &addr, &line);
	cr_assert_eq(ef_sh("sed -i 's/caller_one/liar/' '%s' && touch -d "
			   "'2030-01-01 00:00:00' '%s'", memo, p.path), 0);
	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	cr_assert_eq(dl_lookup(t, addr, &loc), 0);
	cr_expect_str_eq(loc.func, "caller_one");
	cr_expect_gt(dl_table_nrows(t), 0, "the DWARF was read");
	dl_table_free(t);

	/* Garbage, a cut line and a memo others may write are ignored;
	 * the answers stay right. */
	cr_assert_eq(ef_sh("printf 'garbage\\n1\\tx\\n%%s' '1234\\t0' >> '%s'",
			   memo), 0);
	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	cr_assert_eq(ef_sh("chmod 666 '%s'", memo), 0);
	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	cr_expect_gt(dl_table_nrows(t), 0, "a world-writable memo is not read");
	dl_table_free(t);
	free(memo);
	free(cache);
	free_lprog(&p);
}

Test(dwlines, small_dwarf_or_no_build_id_gets_no_memo)
{
	char *cache, *out;
	struct lprog p = build("-g -O0");
	struct lprog q;
	struct dl_table *t;

	cache = xasprintf("%s/cache", p.dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	cr_assert_eq(dl_table_open(p.path, p.img, true, &t), 0);
	expect_call_sites(t, &p);
	dl_table_free(t);
	out = ef_output("ls -A '%s' 2>/dev/null; true", cache);
	cr_expect_str_eq(out ? out : "", "", "no memo for small DWARF");
	free(out);
	free_lprog(&p);
	free(cache);

	q = build_src(prog_src, "-g -O0 -Wl,--build-id=none");
	cache = xasprintf("%s/cache", q.dir);
	setenv("XDG_CACHE_HOME", cache, 1);
	cr_assert_eq(dl_table_open(q.path, q.img, true, &t), 0);
	expect_call_sites(t, &q);
	dl_table_free(t);
	out = ef_output("ls -A '%s' 2>/dev/null; true", cache);
	cr_expect_str_eq(out ? out : "", "", "no memo written");
	free(out);
	free(cache);
	free_lprog(&q);
}
