/*
 * collect.h - the collector: from a starter (or rank) pid to a snapshot.
 */
#ifndef MD_COLLECT_H
#define MD_COLLECT_H

#include <signal.h>
#include <stdbool.h>

#include "snap.h"

/* Where the time went, for the benchmark (nanoseconds, all looks). */
struct col_stats {
	long long find_ns;	/* process table */
	long long attach_ns;	/* stopping every thread of every rank */
	long long setup_ns;	/* DLL, symbols and type index */
	long long queues_ns;	/* the DLL's queue walk (and ob1's) */
	long long ob1_ns;	/* of which ob1's own queues */
	long long stacks_ns;	/* unwinding and source lines */
	long long detach_ns;
	long long wait_ns;	/* sleeping between looks */
	int ranks_read;
};

struct col_opts {
	int pid;		/* mpirun's pid, or one rank's */
	const char *dll;	/* --dll: use this DLL, NULL: MPIR_dll_name */
	int looks;		/* looks to take, >= 1 (default 2) */
	int interval_ms;	/* between looks (default 1000) */
	bool progress;		/* show progress on stderr (a terminal) */
	bool no_ob1;		/* do not read ob1's queues (DLL only) */
	/* Set asynchronously by a SIGINT/SIGTERM handler; the collector
	 * checks it between steps, detaches everything and returns
	 * -MD_E_INTR. May be NULL. */
	const volatile sig_atomic_t *stop;
	struct col_stats *stats;	/* filled when not NULL */
};

/*
 * Collect a snapshot of the job.  Every process attached is detached and
 * running again before this returns, on every path.  Returns 0 and *out
 * (owned by the caller, snap_free) or a negated MD_E_* code after
 * reporting the reason once.  Ranks that could not be read are recorded
 * in the snapshot, not failed.
 */
int col_collect(const struct col_opts *o, struct snap **out);

/*
 * What the front end asks of local processes, so that only the
 * collector's target module reads /proc.
 */

/*
 * The parent pid and start time (clock ticks after boot; with the pid it
 * names a process for its whole life) of pid.  ppid and start may be
 * NULL.  Returns 0, or -MD_E_NOSUCH without reporting.
 */
int col_proc_stat(int pid, int *ppid, unsigned long long *start);

/* The child processes of pid, in a new heap array (*pids, the caller's).
 * Returns 0, or -MD_E_NOSUCH without reporting. */
int col_proc_children(int pid, int **pids, int *n);

/*
 * The MPI starter of a job started as pid: pid itself if it is a
 * launcher (mpirun, mpiexec, ...), else the nearest launcher among its
 * descendants (a wrapper script, sh -c, time), else pid.
 */
int col_find_starter(int pid);

#endif /* MD_COLLECT_H */
