/*
 * tracee.h - test helpers: a forked child process to attach to, and
 * capture of stderr around a call.  Prefix tr_.
 *
 * The child dies with its parent (PR_SET_PDEATHSIG), so a failed
 * assertion that ends the Criterion worker never leaves it behind; tests
 * still end it with tr_child_end().
 */
#ifndef MD_TESTS_TRACEE_H
#define MD_TESTS_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct mj_job;

#define TR_MAGIC 0x6d70692d646c6b21ULL	/* "mpi-dlk!" */

struct tr_child {
	pid_t pid;
	int cmd;		/* write end: commands to the child */
	int reply;		/* read end: the child's replies */
	uint64_t magic_addr;	/* address of a uint64_t holding TR_MAGIC */
};

/*
 * Fork a child with nthreads extra threads (sleeping) whose main thread
 * sits in tr_known_wait(), blocked in read() on the command pipe.
 * Returns 0, or -1 (errno) if fork or pipe failed.
 */
int tr_child_start(struct tr_child *c, int nthreads);

/*
 * Ask the child whether it runs: it answers with the number of SIGUSR1
 * it has handled so far.  Returns that number, or -1 if no answer came
 * within timeout_ms.
 */
int tr_child_ping(struct tr_child *c, int timeout_ms);

/* SIGKILL the child and reap it; safe to call twice. */
void tr_child_end(struct tr_child *c);

/* The function the child's main thread is blocked in (for stacks). */
void tr_known_wait(int fd, char *byte);

/* Run stderr into a temporary file until tr_stderr_end(), which returns
 * what was written (heap string, the caller's). */
struct tr_capture {
	int saved;
	FILE *file;
};
void tr_stderr_begin(struct tr_capture *cap);
char *tr_stderr_end(struct tr_capture *cap);

/*
 * A small real Open MPI job for the e2e suites: the sample src (a path
 * under samples/, built with mpicc -g into a temporary directory) under
 * Debian's mpirun with np ranks, started and ended by mpijob.c (mj_start,
 * mj_end).
 */
#define TR_MAX_RANKS 8
struct tr_job {
	struct mj_job *job;
	pid_t mpirun;
	int nranks;
	pid_t ranks[TR_MAX_RANKS];	/* mpirun's children, in pid order */
	char dir[256];
	char exe[512];
};

/*
 * Build and start the job and wait up to 30 s until every rank printed
 * "MD-READY" and a little more (so they sit in the call).  Returns 0,
 * or a reason (static string) why the test cannot run here (no mpicc,
 * build failed, job did not start); the job is ended in that case.
 */
const char *tr_job_start(struct tr_job *j, const char *src, int np);

/*
 * End the job: SIGTERM to mpirun, wait up to 5 s, then SIGKILL the rank
 * pids still alive and mpirun; reap mpirun; remove the directory.  Safe
 * to call twice and on a job that never started.
 */
void tr_job_end(struct tr_job *j);

/* Line number (1-based) of the first line of path containing text, or 0. */
int tr_line_of(const char *path, const char *text);

/* The state letter of pid in /proc/PID/stat ('R', 'S', 't', ...), or 0. */
char tr_proc_state(pid_t pid);

#endif /* MD_TESTS_TRACEE_H */
