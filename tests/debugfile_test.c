/*
 * debugfile_test.c - separate debug files found by build-id and by
 * .gnu_debuglink, on programs compiled and split with objcopy here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/debugfile.h"
#include "md.h"
#include "support/elf_fixture.h"

static const char src[] = "int answer(void) { return 42; }\n"
			  "int main(void) { return answer() - 42; }\n";

struct split {
	char *dir, *prog, *dbg, *stripped;
};

/* prog with -g, its debug part in dbg and a stripped copy; link adds a
 * .gnu_debuglink naming dbg. */
static struct split make_split(int link)
{
	struct split s;

	s.dir = ef_tmpdir();
	s.prog = ef_cc(s.dir, "prog", src, "-g -Wl,--build-id", NULL);
	cr_assert_not_null(s.prog);
	s.dbg = xasprintf("%s/prog.debug", s.dir);
	s.stripped = xasprintf("%s/stripped", s.dir);
	cr_assert_eq(ef_sh("objcopy --only-keep-debug '%s' '%s'", s.prog,
			   s.dbg), 0);
	if (link)
		cr_assert_eq(ef_sh("objcopy --strip-debug "
				   "--add-gnu-debuglink='%s' '%s' '%s'",
				   s.dbg, s.prog, s.stripped), 0);
	else
		cr_assert_eq(ef_sh("objcopy --strip-debug '%s' '%s'", s.prog,
				   s.stripped), 0);
	return s;
}

static void free_split(struct split *s)
{
	free(s->prog);
	free(s->dbg);
	free(s->stripped);
	ef_rmtree(s->dir);
}

Test(debugfile, build_id_matches_readelf)
{
	struct split s = make_split(0);
	char *id, *want = ef_output("readelf -n '%s' | awk '/Build ID/ "
				    "{printf \"%%s\", $3}'", s.prog);

	cr_assert_not_null(want);
	cr_assert_gt(strlen(want), 8, "readelf shows no build-id");
	cr_assert_eq(df_build_id(s.stripped, &id), 0);
	cr_expect_str_eq(id, want);
	free(id);
	free(want);
	free_split(&s);
}

Test(debugfile, has_debug_info_only_before_stripping)
{
	struct split s = make_split(0);

	cr_expect_eq(df_has_debug_info(s.prog), 1);
	cr_expect_eq(df_has_debug_info(s.dbg), 1);
	cr_expect_eq(df_has_debug_info(s.stripped), 0);
	free_split(&s);
}

Test(debugfile, finds_debug_file_by_build_id_under_debug_root)
{
	struct split s = make_split(0);
	char *root = xasprintf("%s/root", s.dir), *id, *path, *how, *want;

	cr_assert_eq(df_build_id(s.prog, &id), 0);
	want = xasprintf("%s/.build-id/%.2s/%s.debug", root, id, id + 2);
	cr_assert_eq(ef_sh("mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'",
			   want, s.dbg, want), 0);
	cr_assert_eq(df_find(s.stripped, root, &path, &how), 0);
	cr_expect_str_eq(path, want);
	cr_expect_not_null(strstr(how, "build-id"), "how: %s", how);
	free(path);
	free(how);
	free(want);
	free(id);
	free(root);
	free_split(&s);
}

Test(debugfile, build_id_file_of_another_build_is_not_used)
{
	struct split s = make_split(0);
	struct split other = make_split(0);
	char *root = xasprintf("%s/root", s.dir), *id, *path, *how, *at;

	/* Another program's debug file at this program's build-id path. */
	cr_assert_eq(df_build_id(s.prog, &id), 0);
	at = xasprintf("%s/.build-id/%.2s/%s.debug", root, id, id + 2);
	cr_assert_eq(ef_sh("mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", at,
			   other.dbg, at), 0);
	cr_expect_eq(df_find(s.stripped, root, &path, &how), -MD_E_NOTYPES);
	free(at);
	free(id);
	free(root);
	free_split(&other);
	free_split(&s);
}

Test(debugfile, debuglink_crc_matches_zlib_crc32)
{
	struct split s = make_split(1);
	char *name, *want;
	uint32_t crc, file_crc;

	want = ef_output("python3 -c 'import sys, zlib; print(zlib.crc32("
			 "open(sys.argv[1], \"rb\").read()))' '%s' 2>/dev/null",
			 s.dbg);
	if (!want)
		cr_skip_test("python3 not available for a reference CRC32");
	cr_assert_eq(df_debuglink(s.stripped, &name, &crc), 0);
	cr_expect_str_eq(name, "prog.debug");
	cr_assert_eq(df_file_crc32(s.dbg, &file_crc), 0);
	cr_expect_eq(file_crc, (uint32_t)strtoul(want, NULL, 10));
	cr_expect_eq(crc, file_crc);
	free(name);
	free(want);
	free_split(&s);
}

Test(debugfile, finds_debuglink_beside_in_dot_debug_and_under_root)
{
	struct split s = make_split(1);
	char *root = xasprintf("%s/root", s.dir), *path, *how;
	char *dotdebug = xasprintf("%s/.debug/prog.debug", s.dir);
	char *under = xasprintf("%s%s/prog.debug", root, s.dir);

	cr_assert_eq(df_find(s.stripped, root, &path, &how), 0);
	cr_expect_str_eq(path, s.dbg);
	cr_expect_not_null(strstr(how, ".gnu_debuglink"), "how: %s", how);
	free(path);
	free(how);

	cr_assert_eq(ef_sh("mkdir -p '%s/.debug' && mv '%s' '%s'", s.dir,
			   s.dbg, dotdebug), 0);
	cr_assert_eq(df_find(s.stripped, root, &path, &how), 0);
	cr_expect_str_eq(path, dotdebug);
	free(path);
	free(how);

	cr_assert_eq(ef_sh("mkdir -p \"$(dirname '%s')\" && mv '%s' '%s'",
			   under, dotdebug, under), 0);
	cr_assert_eq(df_find(s.stripped, root, &path, &how), 0);
	cr_expect_str_eq(path, under);
	free(path);
	free(how);
	free(dotdebug);
	free(under);
	free(root);
	free_split(&s);
}

Test(debugfile, no_debug_file_answers_notypes_quietly)
{
	struct split s = make_split(0);
	char *path = (char *)1, *how = (char *)1;

	cr_expect_eq(df_find(s.stripped, s.dir, &path, &how), -MD_E_NOTYPES);
	cr_expect_null(path);
	cr_expect_null(how);
	free_split(&s);
}
