/*
 * e2e_mpich_test.c - the ways in on a real MPICH job (the -g MPICH of
 * scripts/build-mpich.sh, Hydra's mpiexec; suite e2e_mpich_in):
 * `run -- mpiexec ...`, and `--attach` on a rank's pid, which walks up
 * through hydra_pmi_proxy to mpiexec; and Debian's own MPICH (suite
 * e2e_mpich_debian), which has neither DLL nor MPIR table.  The samples
 * themselves run in e2e_mpich (e2e_test.c).
 *
 * The job is a 3-rank ring of blocking receives, compiled here, that
 * writes each rank's pid to DIR/rank.N.pid: every test checks that no
 * rank is left and kills the ones that are (by pid) before failing.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/mpijob.h"
#include "support/run_proc.h"

#define S(lit) ((char *)(lit))
#define MPICH_G "/var/cache/mpi-deadlock/mpich-4.0.2-g"
#define NP 3

struct e2e {
	char *dir;
	char prog[4096];
	char out[4096];
	char err[4096];
	struct mj_job *job;	/* mpiexec, when the test started it */
};

static struct e2e cur;

/* Writes the ring and compiles it with mpicc (skips if there is none). */
static void build_ring(struct e2e *e, const char *mpicc)
{
	e->dir = mj_tmpdir("mpich");
	cr_assert(e->dir);
	snprintf(e->prog, sizeof(e->prog), "%s/ring", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/out", e->dir);
	snprintf(e->err, sizeof(e->err), "%s/err", e->dir);
	cr_assert_eq(rp_build_ring(mpicc, e->prog), 0, "%s failed", mpicc);
}

static void setup_job(struct e2e *e)
{
	memset(e, 0, sizeof(*e));
	if (!rp_bin())
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock");
	if (access(MPICH_G "/.mpi-deadlock-built", F_OK))
		cr_skip_test("no -g MPICH in " MPICH_G
			     " (scripts/build-mpich.sh)");
	build_ring(e, MPICH_G "/bin/mpicc");
}

/* Ends what the test started, by pid, whatever happened. */
static void fini(void)
{
	pid_t pids[NP];
	int n;

	if (!cur.dir)
		return;
	n = rp_rank_pids(cur.dir, pids, NP);
	mj_end(cur.job);
	cur.job = NULL;
	rp_wait_gone(pids, n, 2000);
	rp_kill_all(pids, n);
	mj_tmpdir_end(&cur.dir);
}

static int wait_ranks(struct e2e *e, pid_t *pids)
{
	int n = 0;

	for (int i = 0; i < 600 && n < NP; i++) {
		usleep(50000);
		n = rp_rank_pids(e->dir, pids, NP);
	}
	return n;
}

/* The report names the ring and its source, and says MPICH. */
static void expect_ring_report(const char *out)
{
	cr_expect(strstr(out, "MPI implementation: MPICH"),
		  "report does not say MPICH:\n%s", out);
	cr_expect(strstr(out, "ring.c"), "report does not name ring.c:\n%s",
		  out);
	cr_expect(!strstr(out, "any rank"),
		  "a receive from a given rank reads as any rank:\n%s", out);
}

Test(e2e_mpich_in, run_reports_a_ring_deadlock_under_hydra_mpiexec,
     .timeout = 150, .fini = fini)
{
	char *out, *err;
	int code;

	setup_job(&cur);
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=6"), S("--"),
			 S(MPICH_G "/bin/mpiexec"), S("-np"), S("3"), cur.prog,
			 cur.dir, NULL };
	code = rp_wait(rp_spawn(argv, NULL, cur.out, cur.err), 120000);
	out = mj_slurp(cur.out);
	err = mj_slurp(cur.err);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	expect_ring_report(out ? out : "");
	/* run ends the job: no rank is left. */
	{
		pid_t pids[NP];
		int n = rp_rank_pids(cur.dir, pids, NP);
		int alive = rp_wait_gone(pids, n, 5000);

		cr_expect_eq(n, NP, "the ranks never started");
		cr_expect_eq(alive, 0, "%d rank(s) left after run", alive);
	}
	free(out);
	free(err);
}

/*
 * Start cur.prog under mpiexec, wait for its ranks (pids), attach the
 * tool to the pid of target (a rank's index, or -1 for mpiexec) with
 * opt (NULL: none), and check it says deadlock (exit 1).  *out and *err
 * are the tool's output (the caller's).
 */
static void attach_job(const char *mpiexec, int target, const char *opt,
		       pid_t *pids, char **out, char **err)
{
	char pid[16];
	int code;

	char *job[] = { S(mpiexec), S("-np"), S("3"), cur.prog, cur.dir, NULL };
	cur.job = mj_start_argv(job, cur.dir, NULL);
	cr_assert_not_null(cur.job);
	cr_assert_eq(wait_ranks(&cur, pids), NP, "the ranks never started");
	sleep(1);
	snprintf(pid, sizeof(pid), "%d",
		 (int)(target < 0 ? cur.job->pid : pids[target]));
	char *argv[] = { S(rp_bin()), S("--attach"), pid, S(opt), NULL };
	code = rp_wait(rp_spawn(argv, NULL, cur.out, cur.err), 120000);
	*out = mj_slurp(cur.out);
	*err = mj_slurp(cur.err);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     *err);
}

Test(e2e_mpich_in, attach_to_a_rank_walks_up_through_the_hydra_proxy,
     .timeout = 150, .fini = fini)
{
	char *out, *err;
	pid_t pids[NP];

	setup_job(&cur);
	attach_job(MPICH_G "/bin/mpiexec", 1, "-v", pids, &out, &err);
	expect_ring_report(out ? out : "");
	cr_expect(err && strstr(err, "its starter is pid"),
		  "the rank's starter is not named: %s", err);
	/* The job goes on after the tool: every rank still there. */
	for (int k = 0; k < NP; k++)
		cr_expect(rp_alive(pids[k]), "rank %d is gone after the tool",
			  k);
	free(out);
	free(err);
}

/*
 * Debian's own MPICH (packages mpich, libmpich-dev): no message-queue DLL
 * and no MPIR table in its stripped mpiexec.hydra.  The ranks are found
 * under its hydra_pmi_proxy, the report comes from stacks alone, every
 * edge inferred, and one line says why and how to get the queues.
 */
#define DEB_MPICC "/usr/bin/mpicc.mpich"
#define DEB_MPIEXEC "/usr/bin/mpiexec.mpich"

static void attach_debian(const char *which)
{
	char *out, *err;
	pid_t pids[NP];

	memset(&cur, 0, sizeof(cur));
	if (!rp_bin())
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock");
	if (access(DEB_MPICC, X_OK) || access(DEB_MPIEXEC, X_OK))
		cr_skip_test("Debian's MPICH is not installed (packages mpich "
			     "libmpich-dev; scripts/setup.sh installs them)");
	build_ring(&cur, DEB_MPICC);
	attach_job(DEB_MPIEXEC, !strcmp(which, "rank") ? 2 : -1, NULL, pids,
		   &out, &err);
	cr_expect(out && strstr(out, "MPI implementation: MPICH"),
		  "report does not say MPICH:\n%s", out);
	cr_expect(out && strstr(out, "DEADLOCK: 3 of 3 ranks") &&
			  strstr(out, "[inferred]"),
		  "no inferred deadlock of the 3 ranks:\n%s", out);
	cr_expect(out && strstr(out, "ring.c:"),
		  "the stuck line is not named:\n%s", out);
	cr_expect(err && strstr(err, "built without --enable-debuginfo") &&
			  strstr(err, "use an MPICH configured with"),
		  "no line says why the queues are missing: %s", err);
	for (int k = 0; k < NP; k++)
		cr_expect(rp_alive(pids[k]), "rank %d is gone after the tool",
			  k);
	free(out);
	free(err);
}

Test(e2e_mpich_debian, attach_to_mpiexec_reports_from_stacks_alone,
     .timeout = 150, .fini = fini)
{
	attach_debian("mpiexec");
}

Test(e2e_mpich_debian, attach_to_a_rank_finds_the_others_through_the_proxy,
     .timeout = 150, .fini = fini)
{
	attach_debian("rank");
}
