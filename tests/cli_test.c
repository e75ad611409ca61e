/*
 * cli_test.c - the command line, black box: the built binary (MD_BIN)
 * is run with arguments and its exit code and output are checked.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/run_proc.h"
#include "support/mpijob.h"

static const char *need_bin(void)
{
	const char *b = rp_bin();

	if (!b)
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock (run through make unit)");
	return b;
}

/* Run the binary with up to 6 arguments. */
static void md(struct rp_result *r, const char *a1, const char *a2,
	       const char *a3, const char *a4)
{
	char *argv[] = { (char *)need_bin(), (char *)a1, (char *)a2,
			 (char *)a3, (char *)a4, NULL };

	rp_run(argv, NULL, 10000, r);
}

static void expect_usage(const char *a1, const char *a2, const char *a3,
			 const char *reason)
{
	struct rp_result r;

	md(&r, a1, a2, a3, NULL);
	cr_expect_eq(r.code, 64, "%s %s %s: exit %d, want 64", a1,
		     a2 ? a2 : "", a3 ? a3 : "", r.code);
	cr_expect(strstr(r.err, reason), "stderr lacks '%s': %s", reason,
		  r.err);
	cr_expect(strstr(r.err, "Try 'mpi-deadlock --help'"),
		  "no hint in: %s", r.err);
	cr_expect_str_empty(r.out);
	rp_result_free(&r);
}

Test(cli, version_prints_name_and_version_and_exits_0)
{
	struct rp_result r;

	md(&r, "--version", NULL, NULL, NULL);
	cr_expect_eq(r.code, 0);
	cr_expect(strncmp(r.out, "mpi-deadlock ", 13) == 0, "%s", r.out);
	cr_expect(strchr(r.out, '.'), "no version number: %s", r.out);
	rp_result_free(&r);
}

Test(cli, help_documents_every_exit_code_and_option)
{
	static const char *const want[] = {
		"--attach", "analyze", "run", "gstack", "--snapshot",
		"--dump", "--format", "--all-ranks", "--junit", "--github",
		"--dll", "--interval", "--looks", "--timeout",
		"--keep-running", "--verbose", "--quiet", "--help",
		"--version", "GITHUB_ACTIONS", "\n  0 ", "\n  1 ",
		"\n  2 ", "\n  3 ", "\n  64 ", "\n  124 ", "130", "143",
	};
	struct rp_result r;
	size_t i;

	md(&r, "--help", NULL, NULL, NULL);
	cr_expect_eq(r.code, 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(r.out, want[i]), "--help lacks '%s'", want[i]);
	rp_result_free(&r);
}

Test(cli, help_wins_over_other_options_of_a_subcommand)
{
	struct rp_result r;

	md(&r, "run", "--timeout", "5", "--help");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect(strstr(r.out, "Exit codes"));
	rp_result_free(&r);
}

Test(cli, no_arguments_is_a_usage_error)
{
	expect_usage(NULL, NULL, NULL, "nothing to do");
}

Test(cli, unknown_long_option_is_a_usage_error)
{
	expect_usage("--frobnicate", NULL, NULL, "'--frobnicate'");
}

Test(cli, unknown_short_option_is_a_usage_error)
{
	expect_usage("-x", NULL, NULL, "'-x'");
}

Test(cli, attach_without_pid_is_a_usage_error)
{
	expect_usage("--attach", NULL, NULL, "needs a value");
}

Test(cli, attach_with_non_numeric_pid_is_a_usage_error)
{
	expect_usage("--attach", "12abc", NULL, "'12abc' is not a number");
}

Test(cli, unknown_format_is_a_usage_error)
{
	expect_usage("--attach", "1", "--format=xml", "'xml'");
}

Test(cli, looks_of_zero_is_a_usage_error)
{
	expect_usage("--attach", "1", "--looks=0", "--looks");
}

Test(cli, timeout_outside_run_is_a_usage_error)
{
	expect_usage("analyze", "--timeout=5", "f", "'--timeout' does not apply to analyze");
}

Test(cli, unknown_subcommand_is_a_usage_error)
{
	expect_usage("frob", NULL, NULL, "unknown subcommand 'frob'");
}

Test(cli, a_global_option_may_come_before_the_subcommand)
{
	/* "-v run ..." is "run -v ...": the subcommand is the first
	 * operand, and its own checks still apply. */
	expect_usage("-v", "run", "--timeout=1", "needs a command");
	expect_usage("-q", "analyze", NULL, "one snapshot FILE");
}

Test(cli, an_option_before_the_subcommand_is_checked_against_it)
{
	expect_usage("--timeout=5", "analyze", "f",
		     "'--timeout' does not apply to analyze");
}

Test(cli, a_word_after_attach_is_an_argument_not_a_subcommand)
{
	expect_usage("--attach", "1", "frob", "unexpected argument 'frob'");
}

Test(cli, analyze_without_file_is_a_usage_error)
{
	expect_usage("analyze", NULL, NULL, "one snapshot FILE");
}

Test(cli, run_without_command_is_a_usage_error)
{
	expect_usage("run", "--timeout=1", NULL, "needs a command");
}

Test(cli, gstack_with_non_numeric_pid_is_a_usage_error)
{
	expect_usage("gstack", "me", NULL, "'me' is not a number");
}

Test(cli, verbose_and_quiet_together_is_a_usage_error)
{
	expect_usage("--attach", "1", "-vq", "contradict");
}

Test(cli, analyze_of_missing_file_exits_3_naming_the_file)
{
	struct rp_result r;

	md(&r, "analyze", "/nonexistent/snap.json", NULL, NULL);
	cr_expect_eq(r.code, 3, "exit %d: %s", r.code, r.err);
	cr_expect(strstr(r.err, "/nonexistent/snap.json"), "%s", r.err);
	rp_result_free(&r);
}

Test(cli, attach_to_a_pid_that_does_not_exist_exits_3)
{
	struct rp_result r;

	/* Above the default pid_max of 4194304: cannot exist. */
	md(&r, "--attach", "2147483000", "-q", NULL);
	cr_expect_eq(r.code, 3, "exit %d: %s", r.code, r.err);
	cr_expect_str_empty(r.out);
	rp_result_free(&r);
}

#define RING3 "tests/fixtures/snapshots/ring3.jsonl"

static void need_fixture(void)
{
	need_bin();
	if (access(RING3, R_OK))
		cr_assert_fail(RING3 " is missing: run from the source tree");
}

Test(cli, analyze_of_a_deadlocked_snapshot_exits_1_and_writes_junit)
{
	char junit[] = "/tmp/md-cli-junit.XXXXXX", *xml;
	struct rp_result r;
	int fd = mkstemp(junit);

	need_fixture();
	close(fd);
	md(&r, "analyze", RING3, "--junit", junit);
	cr_expect_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_expect(strstr(r.out, "DEADLOCK"), "%s", r.out);
	xml = mj_slurp(junit);
	cr_assert_not_null(xml, "%s was not written", junit);
	cr_expect(strstr(xml, "<testsuite"), "junit: %s", xml);
	free(xml);
	unlink(junit);
	rp_result_free(&r);
}

Test(cli, analyze_format_json_reads_the_snapshot_from_stdin)
{
	char *argv[] = { (char *)need_bin(), (char *)"analyze", (char *)"-",
			 (char *)"--format=json", NULL };
	struct rp_result r;

	need_fixture();
	rp_run(argv, RING3, 10000, &r);
	cr_expect_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_expect(strstr(r.out, "\"verdict\": \"deadlock\""), "%s", r.out);
	rp_result_free(&r);
}

Test(cli, no_github_turns_off_annotations_set_by_the_environment)
{
	struct rp_result r;

	need_fixture();
	setenv("GITHUB_ACTIONS", "true", 1);
	md(&r, "analyze", RING3, NULL, NULL);
	cr_expect(strstr(r.out, "::error file="), "no annotations: %s", r.out);
	rp_result_free(&r);
	md(&r, "analyze", RING3, "--no-github", NULL);
	cr_expect(!strstr(r.out, "::error"), "annotations: %s", r.out);
	rp_result_free(&r);
}
