/*
 * run_test.c - `mpi-deadlock run` with plain commands as the job: exit
 * status passed through, stdio untouched, the job and what it leaves
 * behind ended on Ctrl-C, SIGTERM and at the deadline.  No MPI needed.
 */
#include <criterion/criterion.h>
#include <pty.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "md.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

/* -Wwrite-strings: argv entries are char *, literals are not. */
#define S(lit) ((char *)(lit))

static const char *need_bin(void)
{
	const char *b = rp_bin();

	if (!b)
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock (run through make unit)");
	return b;
}

/* `mpi-deadlock run [opt] -- sh -c script` */
static void run_sh(struct rp_result *r, const char *opt, const char *script,
		   const char *in_path)
{
	char *argv[] = { (char *)need_bin(), S("run"), (char *)opt, S("--"),
			 S("sh"), S("-c"), (char *)script, NULL };

	if (!opt)
		memmove(&argv[2], &argv[3], 5 * sizeof(argv[0]));
	rp_run(argv, in_path, 20000, r);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until dir/rank.0.pid and rank.1.pid exist (the job's pids). */
static int wait_pids(const char *dir, pid_t *pids, int want)
{
	int n = 0;

	for (int i = 0; i < 250 && n < want; i++) {
		sleep_ms(20);
		n = rp_rank_pids(dir, pids, want);
	}
	return n;
}

Test(run, passes_exit_status_3_through_and_prints_nothing)
{
	struct rp_result r;

	run_sh(&r, NULL, "exit 3", NULL);
	cr_expect_eq(r.code, 3, "exit %d: %s", r.code, r.err);
	cr_expect_str_empty(r.out);
	cr_expect_str_empty(r.err);
	rp_result_free(&r);
}

Test(run, passes_exit_status_0_through)
{
	struct rp_result r;

	run_sh(&r, "--timeout=30", "exit 0", NULL);
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect_str_empty(r.err);
	rp_result_free(&r);
}

Test(run, job_killed_by_signal_gives_128_plus_signal)
{
	struct rp_result r;

	run_sh(&r, NULL, "kill -KILL $$", NULL);
	cr_expect_eq(r.code, 128 + SIGKILL, "exit %d: %s", r.code, r.err);
	cr_expect_str_empty(r.out);
	rp_result_free(&r);
}

Test(run, command_not_found_gives_127)
{
	char *argv[] = { (char *)need_bin(), S("run"), S("--"),
			 S("/nonexistent/mpirun"), NULL };
	struct rp_result r;

	rp_run(argv, NULL, 10000, &r);
	cr_expect_eq(r.code, 127, "exit %d", r.code);
	cr_expect(strstr(r.err, "/nonexistent/mpirun"), "%s", r.err);
	rp_result_free(&r);
}

Test(run, job_reads_standard_input_and_writes_a_lot)
{
	char *dir = mj_tmpdir("run-test"), in[4096];
	struct rp_result r;
	FILE *f;

	snprintf(in, sizeof(in), "%s/in", dir);
	f = fopen(in, "w");
	fputs("hello from stdin\n", f);
	fclose(f);
	run_sh(&r, NULL, "read x; echo \"got $x\"; seq 1 200000", in);
	cr_expect_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	cr_expect(strncmp(r.out, "got hello from stdin\n1\n", 23) == 0,
		  "%.60s", r.out);
	cr_expect(strstr(r.out, "\n200000\n"), "output cut short");
	rp_result_free(&r);
	mj_rmdir(dir);
	free(dir);
}

/*
 * The job: a shell that starts a background sleep (orphaned when the
 * shell dies) and then waits; both write their pids.
 */
static pid_t start_job(const char *dir, const char *opt, const char *opt2,
		       const char *extra, pid_t *pids)
{
	char *script = NULL, out[4096], err[4096], *argv[9];
	pid_t pid;
	int n = 0;

	if (asprintf(&script,
		     "%s sleep 60 & echo $! > %s/rank.1.pid; echo $$ > %s/rank.0.pid; exec sleep 60",
		     extra, dir, dir) < 0)
		cr_assert_fail("asprintf");
	argv[n++] = (char *)need_bin();
	argv[n++] = S("run");
	argv[n++] = (char *)opt;
	if (opt2)
		argv[n++] = (char *)opt2;
	argv[n++] = S("--");
	argv[n++] = S("sh");
	argv[n++] = S("-c");
	argv[n++] = script;
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	pid = rp_spawn(argv, NULL, out, err);
	cr_assert_gt(pid, 0);
	free(script);
	cr_assert_eq(wait_pids(dir, pids, 2), 2, "job did not start");
	return pid;
}

static void expect_job_ended(pid_t run, const char *dir, int sig, int want,
			     int max_ms)
{
	pid_t pids[2];
	int n = rp_rank_pids(dir, pids, 2), code;

	kill(run, sig);
	code = rp_wait(run, max_ms);
	for (int i = 0; i < n; i++)
		cr_expect(!rp_alive(pids[i]), "job pid %d still alive",
			  (int)pids[i]);
	rp_kill_all(pids, n);
	cr_expect_eq(code, want, "exit %d, want %d", code, want);
}

Test(run, sigint_ends_the_job_and_its_orphans_with_130)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=0", NULL, "", pids);

	expect_job_ended(run, dir, SIGINT, 128 + SIGINT, 10000);
	mj_rmdir(dir);
	free(dir);
}

Test(run, sigterm_ends_the_job_with_143)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=0", NULL, "", pids);

	expect_job_ended(run, dir, SIGTERM, 128 + SIGTERM, 10000);
	mj_rmdir(dir);
	free(dir);
}

Test(run, job_that_ignores_sigterm_is_killed_after_the_grace_time,
     .timeout = 30)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=0", NULL,
				       "trap '' TERM;", pids);

	expect_job_ended(run, dir, SIGTERM, 128 + SIGTERM, 15000);
	mj_rmdir(dir);
	free(dir);
}

Test(run, job_killed_from_outside_leaves_no_orphans)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=0", NULL, "", pids);
	int code;

	kill(pids[0], SIGKILL);
	code = rp_wait(run, 10000);
	cr_expect_eq(code, 128 + SIGKILL, "exit %d", code);
	cr_expect(!rp_alive(pids[1]), "orphan %d still alive", (int)pids[1]);
	rp_kill_all(pids, 2);
	mj_rmdir(dir);
	free(dir);
}

/* The "job" is not MPI: collection fails (3), the job is still ended. */
Test(run, deadline_on_a_non_mpi_job_exits_3_and_ends_the_job, .timeout = 30)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=1", NULL, "", pids);
	int code = rp_wait(run, 20000);

	cr_expect_eq(code, 3, "exit %d", code);
	for (int i = 0; i < 2; i++)
		cr_expect(!rp_alive(pids[i]), "job pid %d still alive",
			  (int)pids[i]);
	rp_kill_all(pids, 2);
	mj_rmdir(dir);
	free(dir);
}

/* At the deadline with --keep-running: report (here: collection fails
 * on a non-MPI job, 3) and leave the job alone. */
Test(run, keep_running_leaves_the_job_alive_at_the_deadline, .timeout = 30)
{
	char *dir = mj_tmpdir("run-test");
	pid_t pids[2], run = start_job(dir, "--timeout=1", "--keep-running",
				       "", pids);
	int code = rp_wait(run, 20000);

	cr_expect_eq(code, 3, "exit %d", code);
	for (int i = 0; i < 2; i++)
		cr_expect(rp_alive(pids[i]), "job pid %d was ended",
			  (int)pids[i]);
	rp_kill_all(pids, 2);
	mj_rmdir(dir);
	free(dir);
}

/* Run argv with stderr (and stdout) on a new pseudo-terminal; returns
 * what the terminal showed, and the exit status in *code. */
static char *run_on_tty(char *const argv[], int *code)
{
	char *buf = xcalloc(1, 65536);
	size_t len = 0;
	int master, status;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);

	cr_assert_geq(pid, 0, "forkpty");
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	for (;;) {
		ssize_t n = read(master, buf + len, 65535 - len);

		if (n <= 0)	/* EIO once the child's side is closed */
			break;
		len += (size_t)n;
	}
	close(master);
	waitpid(pid, &status, 0);
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return buf;
}

Test(run, shows_progress_on_a_terminal_while_waiting, .timeout = 60)
{
	const char *bin = need_bin();
	char *argv[] = { (char *)bin, (char *)"run", (char *)"--timeout",
			 (char *)"1", (char *)"--", (char *)"/bin/sleep",
			 (char *)"20", NULL };
	int code;
	char *out = run_on_tty(argv, &code);

	/* sleep is no MPI job: the collection fails (3), after the
	 * progress lines a terminal gets. */
	cr_expect_eq(code, MD_EXIT_ERROR, "exit %d, output: %s", code, out);
	cr_expect(strstr(out, "watching job (pid "), "no progress: %s", out);
	cr_expect(strstr(out, "still running after 1 s"), "no notice: %s", out);
	free(out);
}

Test(run, prints_no_progress_when_stderr_is_not_a_terminal, .timeout = 60)
{
	struct rp_result r;

	run_sh(&r, "--timeout=1", "exec sleep 20", NULL);
	cr_expect_eq(r.code, MD_EXIT_ERROR);
	cr_expect_null(strstr(r.err, "watching job"), "stderr: %s", r.err);
	cr_expect_null(strstr(r.err, "still running"), "stderr: %s", r.err);
	rp_result_free(&r);
}
