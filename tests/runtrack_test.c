/*
 * runtrack_test.c - `run` loads libmdtrack.so into the ranks: the
 * launcher's own option inserted into an Open MPI mpirun command line,
 * LD_PRELOAD for a wrapper command, nothing with --no-track.  A fake
 * mpirun (a script named orterun, as Open MPI installs it) prints its
 * arguments.  No MPI needed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define S(lit) ((char *)(lit))

static char *dir;
static char lib[4096];

/* dir/orterun prints its arguments; dir/mpirun -> orterun. */
static void setup(void)
{
	const char *bin = rp_bin();
	char *p;
	FILE *f;

	if (!bin)
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock (run through make unit)");
	dir = mj_tmpdir("run-test");
	p = xasprintf("%s/orterun", dir);
	f = fopen(p, "w");
	cr_assert(f);
	fputs("#!/bin/sh\necho \"args: $*\"\necho \"env: [$LD_PRELOAD]\"\n", f);
	fclose(f);
	chmod(p, 0755);
	free(p);
	p = xasprintf("%s/mpirun", dir);
	cr_assert_eq(symlink("orterun", p), 0);
	free(p);
	/* A real library: the wrapper's sh loads it. */
	snprintf(lib, sizeof(lib), "%s/lib/mpi-deadlock/libmdtrack.so",
		 getenv("MD_BUILD") ? getenv("MD_BUILD") : "build");
	if (access(lib, R_OK) != 0)
		cr_skip_test("%s not built (no mpicc when it was built)", lib);
	setenv("MD_TRACK_LIB", lib, 1);
	unsetenv("LD_PRELOAD");
}

static void teardown(void)
{
	unsetenv("MD_TRACK_LIB");
	if (dir)
		mj_rmdir(dir);
	free(dir);
	dir = NULL;
}

static void run(struct rp_result *r, const char *opt, const char *cmd,
		const char *arg)
{
	char *argv[] = { (char *)rp_bin(), S("run"), (char *)opt, S("--"),
			 (char *)cmd, S("-np"), S("2"), (char *)arg, NULL };

	if (!opt)
		memmove(&argv[2], &argv[3], 6 * sizeof(argv[0]));
	rp_run(argv, NULL, 20000, r);
}

TestSuite(runtrack, .init = setup, .fini = teardown);

Test(runtrack, inserts_x_ld_preload_after_open_mpi_mpirun)
{
	struct rp_result r;
	char *cmd = xasprintf("%s/mpirun", dir);
	char *want = xasprintf("args: -x LD_PRELOAD=%s -np 2 ./app\n"
			       "env: []\n", lib);

	run(&r, NULL, cmd, "./app");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, want);
	cr_expect_str_empty(r.err);
	rp_result_free(&r);
	free(want);
	free(cmd);
}

Test(runtrack, keeps_the_ld_preload_already_set_after_its_own)
{
	struct rp_result r;
	char *cmd = xasprintf("%s/mpirun", dir);
	char *want = xasprintf("args: -x LD_PRELOAD=%s:libother.so -np 2 "
			       "./app\nenv: [libother.so]\n", lib);

	setenv("LD_PRELOAD", "libother.so", 1);
	run(&r, NULL, cmd, "./app");
	unsetenv("LD_PRELOAD");
	cr_expect_str_eq(r.out, want);
	rp_result_free(&r);
	free(want);
	free(cmd);
}

Test(runtrack, no_track_leaves_the_command_line_alone)
{
	struct rp_result r;
	char *cmd = xasprintf("%s/mpirun", dir);

	run(&r, "--no-track", cmd, "./app");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, "args: -np 2 ./app\nenv: []\n");
	rp_result_free(&r);
	free(cmd);
}

Test(runtrack, a_wrapper_command_gets_ld_preload_in_its_environment)
{
	struct rp_result r;
	char *script = xasprintf("%s/mpirun -np 1 ./app", dir);
	char *argv[] = { (char *)rp_bin(), S("run"), S("--"), S("sh"), S("-c"),
			 script, NULL };
	char *want = xasprintf("args: -np 1 ./app\nenv: [%s]\n", lib);

	rp_run(argv, NULL, 20000, &r);
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, want);
	cr_expect_str_empty(r.err);
	rp_result_free(&r);
	free(want);
	free(script);
}

Test(runtrack, a_missing_library_is_said_once_and_the_job_runs_as_given)
{
	struct rp_result r;
	char *cmd = xasprintf("%s/mpirun", dir);

	setenv("MD_TRACK_LIB", "/nonexistent/libmdtrack.so", 1);
	run(&r, NULL, cmd, "./app");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, "args: -np 2 ./app\nenv: []\n");
	cr_expect(strstr(r.err, "libmdtrack.so not found"), "stderr: %s",
		  r.err);
	rp_result_free(&r);
	free(cmd);
}

/* dir/mpiexec.hydra prints its arguments, as dir/orterun. */
static char *fake_hydra(void)
{
	char *src = xasprintf("%s/orterun", dir);
	char *p = xasprintf("%s/mpiexec.hydra", dir);

	cr_assert_eq(link(src, p), 0);
	free(src);
	return p;
}

Test(runtrack, hydra_gets_genv_with_the_build_against_mpich)
{
	struct rp_result r;
	char *cmd = fake_hydra();
	char *want = xasprintf("args: -genv LD_PRELOAD %s -np 2 ./app\n"
			       "env: []\n", dir);

	/* Any readable file stands for the MPICH build: not loaded here. */
	setenv("MD_TRACK_LIB_MPICH", dir, 1);
	run(&r, NULL, cmd, "./app");
	unsetenv("MD_TRACK_LIB_MPICH");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, want);
	cr_expect_str_empty(r.err);
	rp_result_free(&r);
	free(want);
	free(cmd);
}

Test(runtrack, hydra_never_gets_the_build_against_open_mpi)
{
	struct rp_result r;
	char *cmd = fake_hydra();

	setenv("MD_TRACK_LIB_MPICH", "/nonexistent/libmdtrack.so", 1);
	run(&r, NULL, cmd, "./app");
	unsetenv("MD_TRACK_LIB_MPICH");
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_eq(r.out, "args: -np 2 ./app\nenv: []\n");
	cr_expect(strstr(r.err, "libmdtrack.so for MPICH not found"),
		  "stderr: %s", r.err);
	rp_result_free(&r);
	free(cmd);
}
