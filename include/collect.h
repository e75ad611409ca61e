/*
 * collect.h - the collector: from a starter (or rank) pid to a snapshot.
 */
#ifndef MD_COLLECT_H
#define MD_COLLECT_H

#include <signal.h>
#include <stdbool.h>

#include "snap.h"

/* Where the time went, for the benchmark (nanoseconds, all looks). */
/* The ranks of the last look found outside MPI and not moving are looked
 * at again, up to COL_RELOOKS times, COL_RELOOK_PAUSE_MS apart: a rank
 * that polls is now and then caught between two calls. */
#define COL_RELOOKS 3
#define COL_RELOOK_PAUSE_MS 2

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
	int relooks;	/* extra looks at ranks found outside MPI */
};

/*
 * The phases of a collection, written once: the fault-injection hook is
 * called at the start of each, and the fault table of the tests has a
 * row for each.  A new phase adds a line here and calls col_phase() where
 * it starts.
 */
#define COL_PHASES(X)                                                     \
	X(ATTACH, "attach")                                               \
	X(SETUP, "DLL setup")                                             \
	X(QUEUES, "queue walk")                                           \
	X(OB1, "ob1 walk")                                                \
	X(STACKS, "stacks")                                               \
	X(TRACK, "track table")                                           \
	X(BETWEEN, "between looks")                                       \
	X(DETACH, "detach")

enum col_phase {
#define COL_PHASE_ENUM(name, text) COL_PHASE_##name,
	COL_PHASES(COL_PHASE_ENUM)
#undef COL_PHASE_ENUM
	COL_PHASE_COUNT
};

/* "attach", "queue walk", ... */
const char *col_phase_name(enum col_phase p);

/*
 * Fault injection for tests, inert unless set: called at the start of
 * phase for each rank it concerns (rank and pid; between looks, every
 * rank read so far).  It may
 * do anything to the job (kill or stop a process, raise a signal).  It
 * returns 0, or a negated MD_E_* code that every later memory read of
 * that rank answers, as if its memory could not be read.
 */
typedef int (*col_fault_fn)(void *ctx, enum col_phase phase, int rank,
			    int pid);

/*
 * Where the collector's processes come from, for tests on fake targets
 * (collector/target.h); NULL: the live processes of this system.  For
 * the starter (open: o->pid) and the ranks of the process table, it
 * opens pid for reads (attach false, as tgt_open) or starts stopping it
 * (attach true, as tgt_attach_start; the collector then calls
 * tgt_attach_wait).  Returns 0 and *out (the collector's, tgt_free), or
 * a negated MD_E_* code: -MD_E_GONE or -MD_E_NOSUCH for a process that
 * is gone (quietly), others reported.
 */
struct tgt;
typedef int (*col_target_fn)(void *ctx, int pid, bool attach,
			     struct tgt **out);

struct col_opts {
	int pid;		/* mpirun's pid, or one rank's */
	const char *dll;	/* --dll: use this DLL, NULL: MPIR_dll_name */
	int looks;		/* looks to take, >= 1 (default 2) */
	int interval_ms;	/* between looks (default 1000) */
	bool progress;		/* show progress on stderr (a terminal) */
	bool no_ob1;		/* do not read ob1's queues (DLL only) */
	bool no_links;		/* every rank's view from its maps */
	/* The type providers' Open MPI headers and sources (main/:
	 * MD_OMPI_INCDIR, MD_OMPI_SRCDIR); NULL: the default places. */
	const char *ompi_incdir;
	const char *ompi_srcdir;
	bool no_line_memo;	/* never a memo of source lines (main/:
				 * MD_NO_LINE_MEMO): read the DWARF */
	/* Set asynchronously by a SIGINT/SIGTERM handler; the collector
	 * checks it between steps, detaches everything and returns
	 * -MD_E_INTR. May be NULL. */
	const volatile sig_atomic_t *stop;
	struct col_stats *stats;	/* filled when not NULL */
	bool external_pace;	/* col_look does not sleep: the caller
				 * times the looks */
	col_fault_fn fault;		/* tests only; NULL: none */
	void *fault_ctx;
	col_target_fn target;		/* tests only; NULL: live */
	void *target_ctx;
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
 * The same in steps, for the front end of a many-host job (which takes
 * the looks of every host at the same moments) and for an agent.  A
 * collection opened with col_open (from o->pid's process table; ranks on
 * other hosts are in the snapshot as "remote") or col_open_pids (an
 * agent: only the given pids, the other ranks "remote") is a snapshot
 * plus the loaded DLL and images.  col_look takes look number look (0
 * first; col_open's collection sleeps o->interval_ms before every look
 * but the first, col_open_pids' leaves the pacing to its caller): every
 * rank is stopped, read and detached again before it returns 0, or
 * -MD_E_INTR when *o->stop was set (quietly; all detached).  col_snap
 * borrows the snapshot until col_close, which frees everything and hands
 * the snapshot to *out (or frees it when out is NULL).  col_close(NULL)
 * does nothing.  o must outlive the collection.
 */
struct col;

/* A rank an agent is told of: its global rank, pid there, executable. */
struct col_target {
	int rank;
	int pid;
	const char *exe;	/* the process table's name; a pid running
				 * another program is not stopped */
};

int col_open(const struct col_opts *o, struct col **out);
int col_open_pids(const struct col_opts *o, int nranks,
		  const struct col_target *t, int n, struct col **out);
int col_look(struct col *c, int look);
struct snap *col_snap(struct col *c);
void col_close(struct col *c, struct snap **out);

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

/* Whose launcher a name is (col_launcher_mpi). */
enum col_mpi {
	COL_MPI_NONE,		/* no MPI launcher (daemon) we know */
	COL_MPI_EITHER,		/* mpirun, mpiexec: Open MPI's or MPICH's */
	COL_MPI_OPENMPI,	/* orterun, prterun, ... */
	COL_MPI_HYDRA,		/* MPICH's Hydra: mpiexec.hydra */
};

/*
 * The MPI whose launcher name is (a command or a path, by its base
 * name), from the collector's one list of launchers; COL_MPI_NONE when
 * it is none of them.
 */
enum col_mpi col_launcher_mpi(const char *name);

#endif /* MD_COLLECT_H */
