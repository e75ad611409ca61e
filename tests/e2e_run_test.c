/*
 * e2e_run_test.c - `run`, mpirun's --get-stack-traces hook and the Slurm
 * recipe on real Open MPI jobs (suite e2e_run; needs mpicc and mpirun).
 *
 * The job is a two-rank ring of blocking receives, compiled here, that
 * writes each rank's pid to DIR/rank.N.pid: every test checks that no
 * rank is left, and kills the ones that are (by pid) before failing.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/run_proc.h"
#include "support/mpijob.h"

#define S(lit) ((char *)(lit))
#define MPIRUN S("mpirun"), S("--allow-run-as-root"), S("--oversubscribe"), \
	S("--mca"), S("pml"), S("ob1"), S("-np"), S("2")

struct e2e {
	char *dir;
	char prog[4096];
	char out[4096];
	char err[4096];
};

static void e2e_setup(struct e2e *e)
{
	if (!rp_bin())
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock");
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null"))
		cr_skip_test("mpicc or mpirun not installed");
	e->dir = mj_tmpdir("run-test");
	cr_assert(e->dir);
	snprintf(e->prog, sizeof(e->prog), "%s/ring", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/out", e->dir);
	snprintf(e->err, sizeof(e->err), "%s/err", e->dir);
	cr_assert_eq(rp_build_ring("mpicc", e->prog), 0, "mpicc failed");
	setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
}

/* Every rank of the job must be gone; kill survivors, then fail. */
static void e2e_no_rank_left(struct e2e *e)
{
	pid_t pids[2];
	int n = rp_rank_pids(e->dir, pids, 2);
	int alive = rp_wait_gone(pids, n, 10000);

	rp_kill_all(pids, n);
	/* assert, not expect: a later skip must not hide this failure. */
	cr_assert_eq(n, 2, "the ranks never started");
	cr_assert_eq(alive, 0, "%d rank(s) still alive", alive);
}

static void e2e_done(struct e2e *e)
{
	mj_rmdir(e->dir);
	free(e->dir);
}

static int wait_ranks(struct e2e *e)
{
	pid_t pids[2];
	int n = 0;

	for (int i = 0; i < 300 && n < 2; i++) {
		usleep(50000);
		n = rp_rank_pids(e->dir, pids, 2);
	}
	return n;
}

/* Run argv (mpi-deadlock run ... -- the job), then check that no rank is
 * left: its exit code, and what it wrote in *out and *err. */
static int run_job(struct e2e *e, char **argv, char **out, char **err)
{
	int code = rp_wait(rp_spawn(argv, NULL, e->out, e->err), 60000);

	*out = mj_slurp(e->out);
	*err = mj_slurp(e->err);
	e2e_no_rank_left(e);
	return code;
}

Test(e2e_run, run_reports_a_ring_deadlock_at_the_deadline_and_ends_the_job,
     .timeout = 90)
{
	struct e2e e;
	int code;
	char *out, *err;

	e2e_setup(&e);
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=4"), S("-q"),
			 S("--"), MPIRUN, e.prog, e.dir, NULL };
	code = run_job(&e, argv, &out, &err);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_expect(strstr(out, "0") && strstr(out, "1"),
		  "report does not name ranks 0 and 1: %s", out);
	free(out);
	free(err);
	e2e_done(&e);
}

/* A Fortran 2008 program's ranks wait in mpi_recv_f08_, which is
 * MPI_Recv: the ring is a deadlock, and its line is in the .f90. */
Test(e2e_run, fortran_2008_receive_is_mpi_recv, .timeout = 90)
{
	struct e2e e;
	int code;
	char *out, *err;

	e2e_setup(&e);
	if (system("command -v mpif90 >/dev/null"))
		cr_skip_test("mpif90 not installed");
	snprintf(e.prog, sizeof(e.prog), "%s/ringf", e.dir);
	cr_assert_eq(rp_build_ring_f08("mpif90", e.prog), 0, "mpif90 failed");
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=4"), S("-q"),
			 S("--"), MPIRUN, e.prog, e.dir, NULL };
	code = run_job(&e, argv, &out, &err);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stdout: %s; "
		     "stderr: %s", code, out, err);
	cr_expect(strstr(out, "MPI_Recv at ") && strstr(out, "ringf.f90:"),
		  "report does not name MPI_Recv in ringf.f90: %s", out);
	free(out);
	free(err);
	e2e_done(&e);
}

/* MPI_Comm_spawn: the parent waits for its child, which is no rank of
 * the job mpirun's table lists.  Not "rank 0 waits for rank 0": no
 * verdict (exit 2), and run ends parent and child alike. */
Test(e2e_run, wait_on_a_spawned_child_gives_no_verdict, .timeout = 90)
{
	struct e2e e;
	int code;
	char *out, *err;

	e2e_setup(&e);
	snprintf(e.prog, sizeof(e.prog), "%s/spawn", e.dir);
	cr_assert_eq(rp_build_spawn("mpicc", e.prog), 0, "mpicc failed");
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=5"), S("--"),
			 S("mpirun"), S("--allow-run-as-root"),
			 S("--oversubscribe"), S("--mca"), S("pml"), S("ob1"),
			 S("-np"), S("1"), e.prog, e.dir, NULL };
	code = run_job(&e, argv, &out, &err);
	cr_expect_eq(code, 2, "exit %d, want 2 (incomplete); stdout: %s; "
		     "stderr: %s", code, out, err);
	cr_expect(strstr(out, "rank 0: MPI_Recv at ") &&
		  strstr(out, "waits on processes outside the job"),
		  "report does not say rank 0 waits outside the job: %s", out);
	cr_expect_null(strstr(out, "waits for rank 0"), "%s", out);
	free(out);
	free(err);
	e2e_done(&e);
}

/* --snapshot over an existing file replaces it whole: a reader that has
 * the old file open (mapped, as snapshot/snapread.c maps a regular file)
 * keeps all of it, and no temporary file is left. */
Test(e2e_run, snapshot_replaces_the_file_a_reader_holds, .timeout = 90)
{
	static const char old[] = "{\"old\":1}\n";
	char snap[4096], *text;
	struct dirent *de;
	struct stat st;
	DIR *dir;
	struct e2e e;
	int fd, code;
	FILE *f;

	e2e_setup(&e);
	snprintf(snap, sizeof(snap), "%s/snap.jsonl", e.dir);
	f = fopen(snap, "w");
	cr_assert_not_null(f);
	fputs(old, f);
	fclose(f);
	fd = open(snap, O_RDONLY);
	cr_assert_geq(fd, 0);
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=4"), S("-q"),
			 S("--snapshot"), snap, S("--"), MPIRUN, e.prog, e.dir,
			 NULL };
	code = rp_wait(rp_spawn(argv, NULL, e.out, e.err), 60000);
	e2e_no_rank_left(&e);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock)", code);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_expect_eq(st.st_size, (off_t)strlen(old),
		     "the file held open changed under its reader");
	close(fd);
	text = mj_slurp(snap);
	cr_expect(text && strstr(text, "mpi-deadlock-snapshot"),
		  "no new snapshot: %.200s", text ? text : "(none)");
	dir = opendir(e.dir);
	cr_assert_not_null(dir);
	while ((de = readdir(dir)))
		cr_expect_null(strstr(de->d_name, ".tmp"),
			       "temporary file left: %s", de->d_name);
	closedir(dir);
	free(text);
	e2e_done(&e);
}

/* The command after -- is a wrapper around mpirun (a script, sh -c):
 * run finds the starter among the job's descendants. */
Test(e2e_run, run_finds_mpirun_under_a_wrapper_script, .timeout = 90)
{
	struct e2e e;
	int code;
	char *out, *err;

	e2e_setup(&e);
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=4"), S("-q"),
			 S("--"), S("sh"), S("-c"),
			 S("mpirun --allow-run-as-root --oversubscribe --mca pml "
			   "ob1 -np 2 \"$0\" \"$1\"; echo wrapper done"),
			 e.prog, e.dir, NULL };
	code = run_job(&e, argv, &out, &err);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_expect(strstr(out, "DEADLOCK"), "no report: %s", out);
	free(out);
	free(err);
	e2e_done(&e);
}

/* A binary away from the source tree (built with make BUILD=DIR, or
 * installed) carries the type provider's sources: Debian's libmpi has no
 * DWARF and no debug file here, so the queues come from the provider,
 * built fresh into an empty cache. */
Test(e2e_run, binary_away_from_the_tree_builds_the_type_provider,
     .timeout = 120)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";
	char bin[4096], cache[4096], snap[4096], *out, *err, *text;
	struct e2e e;
	int code;

	if (access(lib, R_OK) != 0)
		cr_skip_test("Debian's %s is not installed", lib);
	e2e_setup(&e);
	snprintf(bin, sizeof(bin), "%s/mpi-deadlock", e.dir);
	snprintf(cache, sizeof(cache), "%s/cache", e.dir);
	snprintf(snap, sizeof(snap), "%s/snap.jsonl", e.dir);
	char *cp[] = { S("cp"), S(rp_bin()), bin, NULL };
	cr_assert_eq(rp_wait(rp_spawn(cp, NULL, NULL, NULL), 10000), 0);
	setenv("XDG_CACHE_HOME", cache, 1);
	char *argv[] = { bin, S("run"), S("--timeout=4"), S("-q"),
			 S("--snapshot"), snap, S("--"), MPIRUN, e.prog, e.dir,
			 NULL };
	code = rp_wait(rp_spawn(argv, NULL, e.out, e.err), 90000);
	unsetenv("XDG_CACHE_HOME");
	out = mj_slurp(e.out);
	err = mj_slurp(e.err);
	text = mj_slurp(snap);
	e2e_no_rank_left(&e);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_assert_not_null(text, "no snapshot; stderr: %s", err);
	if (!strstr(text, "separate debug file"))
		cr_expect(strstr(text, "\"types\":\"type provider compiled"),
			  "types not from the provider: %.400s", text);
	free(text);
	free(out);
	free(err);
	e2e_done(&e);
}

/* gstack is a copy of scripts/gstack in PREFIX/libexec/mpi-deadlock,
 * next to PREFIX/bin/mpi-deadlock, as make install lays them out. */
static void e2e_install_gstack(struct e2e *e)
{
	char *cmd = NULL, *path = NULL;

	if (asprintf(&cmd,
		     "mkdir -p %1$s/bin %1$s/libexec/mpi-deadlock && ln -s %2$s %1$s/bin/mpi-deadlock && cp scripts/gstack %1$s/libexec/mpi-deadlock/gstack",
		     e->dir, rp_bin()) < 0 ||
	    system(cmd))
		cr_assert_fail("installing gstack into %s failed (run from the source tree)",
			       e->dir);
	if (asprintf(&path, "%s/libexec/mpi-deadlock:%s", e->dir,
		     getenv("PATH")) < 0)
		cr_assert_fail("asprintf");
	setenv("PATH", path, 1);
	setenv("XDG_RUNTIME_DIR", e->dir, 1);
	unsetenv("MPI_DEADLOCK");
	free(cmd);
	free(path);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

Test(e2e_run, get_stack_traces_hook_reports_once_per_job, .timeout = 120)
{
	struct e2e e;
	char *all, *out, *err;
	int code;

	e2e_setup(&e);
	char *argv[] = { MPIRUN, S("--timeout"), S("3"),
			 S("--get-stack-traces"), e.prog, e.dir, NULL };
	e2e_install_gstack(&e);
	code = rp_wait(rp_spawn(argv, NULL, e.out, e.err), 80000);
	out = mj_slurp(e.out);
	err = mj_slurp(e.err);
	e2e_no_rank_left(&e);
	cr_assert_neq(code, -1, "mpirun did not end in 80 s");
	if (asprintf(&all, "%s%s", out, err) < 0)
		cr_assert_fail("asprintf");
	cr_expect_eq(count(all, "STACK TRACE FOR PROC"), 2,
		     "gstack not run once per rank: %s", all);
	cr_expect_eq(count(all, "see the report above"), 1,
		     "want one pointer line (the second rank): %s", all);
	/* The hook is what this test is about; the pid -> rank line needs
	 * the first call's snapshot. */
	cr_expect(strstr(all, "rank 0 (pid") || strstr(all, "rank 1 (pid"),
		  "second call did not name its rank: %s", all);
	free(all);
	free(out);
	free(err);
	e2e_done(&e);
}

Test(e2e_run, slurm_recipe_reports_on_usr1_and_ends_the_job, .timeout = 120)
{
	struct e2e e;
	char junit[4200], *err;
	pid_t shell;
	int code;

	e2e_setup(&e);
	char *argv[] = { S("bash"), S("tests/support/slurm-recipe.sh"),
			 S("-np"), S("2"), e.prog, e.dir, NULL };
	cr_assert(access(argv[1], R_OK) == 0, "run from the source tree");
	setenv("MPI_DEADLOCK", rp_bin(), 1);
	setenv("MPIRUN", "mpirun --allow-run-as-root --mca pml ob1", 1);
	setenv("REPORT_DIR", e.dir, 1);
	setenv("SLURM_JOB_ID", "42", 1);
	shell = rp_spawn(argv, NULL, e.out, e.err);
	cr_assert_eq(wait_ranks(&e), 2, "the job did not start");
	sleep(1);
	kill(shell, SIGUSR1);
	code = rp_wait(shell, 60000);
	err = mj_slurp(e.err);
	e2e_no_rank_left(&e);
	cr_expect_neq(code, -1, "the batch shell did not end");
	cr_expect(strstr(err, "mpi-deadlock exit "), "trap did not run: %s",
		  err);
	cr_expect(strstr(err, "mpi-deadlock exit 1"),
		  "want a deadlock verdict: %s", err);
	snprintf(junit, sizeof(junit), "%s/deadlock-42.xml", e.dir);
	cr_expect(access(junit, R_OK) == 0, "no JUnit file %s", junit);
	free(err);
	e2e_done(&e);
}
