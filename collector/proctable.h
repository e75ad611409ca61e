/*
 * proctable.h - MPIR process acquisition: from a pid (mpirun's, or one
 * rank's) to the job's ranks, read from the starter's MPIR_proctable.
 *
 * Open MPI 4.1.4 facts this relies on: the MPIR symbols live in
 * libopen-rte.so, which every rank loads too with its own EMPTY copy, so
 * a process that merely has the symbol is not the starter; the table is
 * filled (MPIR_debug_state 1) once all ranks are past MPI_Init; entries
 * are {char *host_name; char *executable_name; int pid;}, 24 bytes on
 * x86-64.  Memory reads only: mpirun is never stopped.
 */
#ifndef MD_PROCTABLE_H
#define MD_PROCTABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "collect.h"
#include "target.h"

/*
 * Symbol lookup in the process behind t: 0 and the runtime address in
 * *addr, or -MD_E_NOSYM without a message.  ctx is the caller's.
 */
typedef int (*pt_lookup_fn)(void *ctx, struct tgt *t, const char *name,
			    uint64_t *addr);

/*
 * A pt_lookup_fn over elfsym: ctx is a struct es_cache * (borrowed); the
 * process view is built from tgt_maps_text(t) and tgt_exe(t) per call
 * (a handful of calls per process).
 */
int pt_elfsym_lookup(void *ctx, struct tgt *t, const char *name,
		     uint64_t *addr);

struct pt_proc {
	int rank;		/* index in MPIR_proctable */
	int pid;
	char *host;		/* as the table says */
	char *exe;		/* /proc/PID/exe when local and readable,
				 * else the table's executable_name */
	bool local;		/* host is this machine */
};

/* The job: owned by the caller, pt_job_free. */
struct pt_job {
	int starter_pid;
	char *starter_exe;	/* NULL if unknown */
	int given_pid;		/* the pid the search started from */
	int given_rank;		/* its rank if it was a rank, else -1 */
	int nranks;
	struct pt_proc *procs;	/* nranks entries, index == rank */
	char *note;		/* how the ranks were found, when not by the
				 * table: for the snapshot's notes; NULL */
};

void pt_job_free(struct pt_job *j);

/*
 * Read the MPIR table of t, which must be the starter (opened with
 * tgt_open).  Returns 0 and *out, or (each reported in one line naming
 * the fix): -MD_E_NOSYM (no MPIR_proctable: not an Open MPI 4 starter),
 * -MD_E_NOTREADY (MPIR_debug_state != 1 or size 0: "ranks not yet past
 * MPI_Init: try again in a moment"), -MD_E_INPUT (absurd size),
 * -MD_E_FAULT / -MD_E_GONE / -MD_E_PERM from the reads.
 */
int pt_read_table(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		  struct pt_job **out);

/*
 * From any pid of the job to its table: pid itself if it is the starter,
 * else up its parent chain (/proc/PID/stat) to the first process with a
 * filled table.  Returns 0 and *out, or, reported in one line:
 * -MD_E_NOSUCH ("no process with pid N"), -MD_E_NOTMPI (neither starter
 * nor rank: names the pid and its comm and how to find mpirun; or a rank
 * with no MPIR starter above it: Open MPI 5 / PMIx launchers),
 * -MD_E_NOTREADY, and the codes of pt_read_table.
 */
int pt_acquire(int pid, pt_lookup_fn lookup, void *ctx, struct pt_job **out);

/*
 * pt_acquire from an opened target (borrowed), walking up through
 * tgt_stat and tgt_open_other, so the walk runs on fake targets too.
 * Same returns as pt_acquire.
 */
int pt_acquire_from(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		    struct pt_job **out);

/*
 * The job of a Hydra mpiexec without an MPIR table (Debian's MPICH,
 * proctable_hydra.c), from t (borrowed): mpiexec itself, one of its
 * hydra_pmi_proxy children, or a rank under one.  The ranks are the
 * proxies' children, placed by their PMI_RANK (of PMI_SIZE); all must be
 * on this host.  Returns 0 and *out; 1 (quietly) when t is not part of
 * a Hydra job; reported: -MD_E_NOTREADY (no rank started yet),
 * -MD_E_NOTMPI (ranks on other hosts, which only the table would name).
 */
int pt_hydra_job(struct tgt *t, struct pt_job **out);

/*
 * Place the children of parent (borrowed) into j by the rank and size
 * their environment gives in rank_var and size_var (Hydra's proxies:
 * PMI_RANK, PMI_SIZE; Open MPI's mpirun or orted: OMPI_COMM_WORLD_RANK,
 * OMPI_COMM_WORLD_SIZE), as processes of host; j->procs is made at the
 * first child's size.  Children without them are skipped.
 */
void pt_add_children(struct tgt *parent, struct pt_job *j, const char *host,
		     const char *rank_var, const char *size_var);

/*
 * The MPI whose launcher (mpirun, mpiexec, orterun, ...) name is: a comm,
 * or a path by its base name (NULL: none).  COL_MPI_NONE when it names
 * none.  pt_is_launcher: whether it names one.
 */
enum col_mpi pt_launcher_mpi(const char *name);
bool pt_is_launcher(const char *name);

/* MPICH's Hydra starts one proxy of this name per host. */
#define PT_HYDRA_PROXY "hydra_pmi_proxy"

/*
 * The MPI whose launcher's daemon (orted, prted: Open MPI's; Hydra's
 * proxy) name is, as pt_launcher_mpi; COL_MPI_NONE when none.
 */
enum col_mpi pt_daemon_mpi(const char *name);

/*
 * The job's MPI starter: job itself when it is a launcher, else, when
 * it is a wrapper (a script, sh -c, time), the first launcher among its
 * descendants (tgt_children), searched level by level, at most 6 deep.
 * Returns its pid, or job's pid when none is found.
 */
int pt_find_starter(struct tgt *job);

/*
 * Whether host (from the table) names this machine, whose name is ours
 * (gethostname): equal, "localhost", or equal up to the first '.'.
 */
bool pt_host_is_local(const char *host, const char *ours);

#endif /* MD_PROCTABLE_H */
