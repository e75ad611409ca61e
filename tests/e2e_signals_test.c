/*
 * e2e_signals_test.c - job-control signals sent to mpi-deadlock while it
 * holds a real job's ranks stopped must not leave the job stopped.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "support/tracee.h"

static struct tr_job job;

static void job_fini(void)
{
	tr_job_end(&job);
}

/* Is any thread of pid stopped (ptrace 't' or job-control 'T')? */
static bool any_thread_stopped(pid_t pid)
{
	char path[64], line[512];
	int tid;
	FILE *p;
	bool stopped = false;

	snprintf(path, sizeof(path), "ls /proc/%d/task", (int)pid);
	p = popen(path, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		tid = atoi(line);
		if (tid > 0) {
			char st = tr_proc_state(tid);

			stopped |= st == 't' || st == 'T';
		}
	}
	pclose(p);
	return stopped;
}

/* A field of /proc/PID/status as a number (base 16 for masks). */
static unsigned long long status_field(pid_t pid, const char *key, int base)
{
	char path[64], line[256];
	unsigned long long v = 0;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, base);
	fclose(f);
	return v;
}

/*
 * Ctrl-Z while the tool holds the ranks stopped would stop it with the
 * whole job stopped under it.  The kernel only stops a process for
 * SIGTSTP/SIGTTIN/SIGTTOU when they are not blocked, so: while the tool
 * traces a rank, the three must be blocked (and pending ones are then
 * delivered after the detach).
 */
Test(e2e_signals, job_control_stops_wait_while_ranks_are_held,
     .fini = job_fini, .timeout = 240)
{
	const unsigned long long jobctl = (1ULL << (SIGTSTP - 1)) |
					  (1ULL << (SIGTTIN - 1)) |
					  (1ULL << (SIGTTOU - 1));
	const char *bin = getenv("MD_BIN");
	const char *skip = tr_job_start(&job, "samples/ring.c", 4);
	unsigned long long blocked = 0;
	char pidarg[32];
	bool seen = false;
	pid_t tool;
	int i, k, status;

	if (skip)
		cr_skip_test("%s", skip);
	if (!bin)
		cr_skip_test("MD_BIN is not set (run through make)");
	snprintf(pidarg, sizeof(pidarg), "%d", (int)job.mpirun);
	tool = fork();
	cr_assert_geq(tool, 0);
	if (tool == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execl(bin, bin, "--attach", pidarg, "--looks", "20",
		      "--interval", "0", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 20000 && !seen; i++) {
		for (k = 0; k < job.nranks && !seen; k++)
			if ((pid_t)status_field(job.ranks[k], "TracerPid", 10) ==
			    tool) {
				blocked = status_field(tool, "SigBlk", 16);
				seen = true;
			}
		if (!seen)
			usleep(1000);
	}
	waitpid(tool, &status, 0);
	cr_assert(seen, "never saw the tool tracing a rank");
	cr_expect_eq(blocked & jobctl, jobctl,
		     "SigBlk %llx while tracing: job-control stops not held "
		     "back", blocked);
	for (i = 0; i < job.nranks; i++)
		cr_expect_not(any_thread_stopped(job.ranks[i]),
			      "rank %d left stopped after the tool ended", i);
}
