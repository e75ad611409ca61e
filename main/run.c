/*
 * run.c - `mpi-deadlock run -- mpirun ...`.
 *
 * Process layout, and why: the job stays in OUR process group and we
 * track its pid.  mpirun reads standard input (it forwards it to rank 0);
 * in a process group of its own it would be a background group of the
 * terminal and stop with SIGTTIN on its first read.  tcsetpgrp() would
 * fix that but must be undone on every exit path, and Ctrl-C would then
 * no longer reach us.  In one group, Ctrl-C reaches both: mpirun ends its
 * ranks as it always does, and we make sure of it (SIGTERM, then
 * SIGKILL).  We make ourselves a child subreaper so that ranks orphaned
 * by a killed mpirun (Open MPI puts them in process groups of their own)
 * become our children: we can find them without guessing, and they
 * cannot be confused with a reused pid while we have not reaped them.
 */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "md.h"
#include "slurm.h"

#define RUN_POLL_MS 50
#define RUN_TERM_GRACE_MS 5000
#define RUN_REAP_MS 2000
/* A job whose ranks all exited while they were collected: how long its
 * launcher gets to end. */
#define RUN_END_WAIT_MS 5000

int run_proc_stat(int pid, int *ppid, unsigned long long *start)
{
	return col_proc_stat(pid, ppid, start);
}

static void run_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	/* A signal cuts it short: that is what we want. */
	nanosleep(&ts, NULL);
}

/* The exit code a shell would give for a wait status. */
static int run_status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return MD_EXIT_ERROR;
}

/*
 * Reap whatever has ended, without blocking: the job, and orphans
 * reparented to us.  Returns 1 and *status when the job was among them.
 */
static int run_reap(int job, int *status)
{
	int st, pid, found = 0;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == job) {
			*status = st;
			found = 1;
		}
	}
	return found;
}

/* Our live children right now (the job and orphans), at most max. */
static int run_children(int *pids, int max)
{
	int *kids = NULL, n = 0;

	if (col_proc_children(getpid(), &kids, &n) < 0)
		return 0;
	if (n > max)
		n = max;
	memcpy(pids, kids, (size_t)n * sizeof(int));
	free(kids);
	return n;
}

/* SIGKILL every child left (orphaned ranks) and reap them. */
static void run_kill_orphans(void)
{
	long long end = md_now_ns() + RUN_REAP_MS * 1000000LL;
	int pids[256], n, i, st;

	do {
		n = run_children(pids, 256);
		for (i = 0; i < n; i++) {
			md_info("killing pid %d, left over from the job", pids[i]);
			kill(pids[i], SIGKILL);
		}
		for (i = 0; i < n; i++)
			waitpid(pids[i], &st, 0);
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
	} while (n && md_now_ns() < end);
}

/*
 * End the job: SIGTERM lets mpirun end its ranks; SIGKILL if it has not
 * gone after the grace time; then whatever it left behind.
 */
static void run_end(int job)
{
	long long end = md_now_ns() + RUN_TERM_GRACE_MS * 1000000LL;
	int st;

	kill(job, SIGTERM);
	while (!run_reap(job, &st)) {
		if (md_now_ns() >= end) {
			md_warn("job (pid %d) still there %d s after SIGTERM: sending SIGKILL",
				job, RUN_TERM_GRACE_MS / 1000);
			kill(job, SIGKILL);
			waitpid(job, &st, 0);
			break;
		}
		run_sleep_ms(RUN_POLL_MS);
	}
	run_kill_orphans();
}

static int run_spawn(char **argv, const char *preload, int *out)
{
	int pid, err;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		md_error("fork() for '%s': %s", argv[0], strerror(errno));
		return -MD_E_SYS;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		execvp(argv[0], argv);
		err = errno;
		md_error("execvp(%s): %s", argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	*out = pid;
	return 0;
}

/*
 * Wait for the job.  Returns 0 (ended, *status), 1 (deadline passed) or
 * -MD_E_INTR (*stop set).  deadline 0: none.
 */
static int run_wait(int job, long long deadline,
		    const volatile sig_atomic_t *stop, int *status)
{
	for (;;) {
		if (run_reap(job, status))
			return 0;
		if (*stop)
			return -MD_E_INTR;
		if (deadline && md_now_ns() >= deadline)
			return 1;
		run_sleep_ms(RUN_POLL_MS);
	}
}

/* Every rank of the snapshot exited while it was collected. */
static bool all_gone(const struct snap *s)
{
	for (int i = 0; i < s->nranks; i++)
		if (s->ranks[i].state != SNAP_RANK_GONE)
			return false;
	return s->nranks > 0;
}

/*
 * The job ended by itself while it was being collected (it was finishing
 * at the deadline): *ended, and the job's own status is the exit code,
 * with no report, as when it ends before the deadline.
 */
static bool ended_meanwhile(int job, const struct snap *s,
			    const volatile sig_atomic_t *stop, int *code)
{
	int status;

	if (s && !all_gone(s))
		return false;
	if (run_wait(job, md_now_ns() + RUN_END_WAIT_MS * 1000000LL, stop,
		     &status) != 0)
		return false;
	if (WIFSIGNALED(status))
		run_kill_orphans();
	*code = run_status_code(status);
	return true;
}

/* The deadline passed: report on the job; returns the exit code (*ended:
 * the job ended by itself meanwhile, and is reaped). */
static int run_timed_out(const struct cli *c, int job,
			 const volatile sig_atomic_t *stop, bool *ended)
{
	struct snap *s = NULL;
	char *name;
	int rc, code;

	/* Progress, on a terminal only: in a log the report says it all. */
	if (!c->quiet && isatty(STDERR_FILENO))
		md_warn("job (pid %d) still running after %d s: looking for a deadlock",
			job, c->timeout_s);
	rc = cli_collect(c, col_find_starter(job), stop, &s);
	if (rc == -MD_E_INTR && *stop)
		return 128 + *stop;
	if ((rc || all_gone(s)) && (*ended = ended_meanwhile(job, s, stop,
							     &code))) {
		snap_free(s);
		return code;
	}
	if (rc)
		return MD_EXIT_ERROR;
	name = xasprintf("%s (timeout %d s)", c->job_argv[0], c->timeout_s);
	code = cli_emit(c, s, name, stdout);
	free(name);
	snap_free(s);
	return code == MD_EXIT_NO_DEADLOCK ? RUN_EXIT_TIMEOUT : code;
}

/* Start the job, with the interposition library unless --no-track. */
static int run_start(const struct cli *c, int *job)
{
	char *lib = c->no_track ? NULL : rt_library(c->job_argv[0]);
	char *preload = NULL;
	char **argv;
	int rc;

	if (!lib) {
		if (!c->no_track && !c->quiet)
			md_warn("%s", rt_launcher_of(c->job_argv[0]) == RT_HYDRA
				? "libmdtrack.so for MPICH not found (build "
				  "with MPICH's mpicc: make MPICH_CC=..., or "
				  "set MD_TRACK_LIB_MPICH): the report will "
				  "not name where requests were posted"
				: "libmdtrack.so not found (set MD_TRACK_LIB): "
				  "the report will not name where requests "
				  "were posted");
		return run_spawn(c->job_argv, NULL, job);
	}
	argv = rt_job_argv(c->job_argv, lib, &preload);
	if (preload && sl_is_srun(c->job_argv[0]))
		md_info("srun: LD_PRELOAD=%s in its environment, which it "
			"exports to every task", lib);
	else if (preload)
		md_info("%s is not a launcher run knows: LD_PRELOAD=%s for "
			"the ranks of this host only", c->job_argv[0], lib);
	rc = run_spawn(argv, preload, job);
	rt_argv_free(argv);
	free(preload);
	free(lib);
	return rc;
}

int run_job(const struct cli *c, const volatile sig_atomic_t *stop)
{
	long long deadline = 0;
	int job, status, rc, code;
	bool ended = false;

	/* Not fatal: without it we still end mpirun, only its orphans
	 * would escape us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		md_warn("prctl(PR_SET_CHILD_SUBREAPER): %s; ranks orphaned by a killed mpirun will not be ended",
			strerror(errno));
	if (run_start(c, &job))
		return MD_EXIT_ERROR;
	if (c->timeout_s)
		deadline = md_now_ns() + c->timeout_s * 1000000000LL;
	if (c->timeout_s && !c->quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "mpi-deadlock: watching job (pid %d): a report "
				"in %d s if it is still running\n", job,
			c->timeout_s);
	rc = run_wait(job, deadline, stop, &status);
	if (rc == 0) {
		if (WIFSIGNALED(status))
			run_kill_orphans();
		return run_status_code(status);
	}
	if (rc == 1)
		code = run_timed_out(c, job, stop, &ended);
	else
		code = 128 + *stop;
	if (ended)
		return code;
	if (c->keep_running && rc == 1 && !*stop) {
		if (!c->quiet)
			md_warn("job (pid %d) left running (--keep-running)", job);
		return code;
	}
	run_end(job);
	if (!c->quiet)
		fprintf(stderr, "mpi-deadlock: job (pid %d) ended%s\n", job,
			rc == 1 && !*stop && code != MD_EXIT_ERROR ?
				" after the report (--keep-running keeps it)" :
				"");
	return code;
}
