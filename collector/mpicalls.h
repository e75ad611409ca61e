/*
 * mpicalls.h - what a thread's stack says about MPI: the MPI call it is
 * in, the user's call site, whether it is a runtime helper thread.  Pure
 * functions over frame lists (function names and object paths), tuned on
 * the stacks of Debian's Open MPI 4.1.4.
 */
#ifndef MD_MPICALLS_H
#define MD_MPICALLS_H

#include <stdbool.h>
#include <stddef.h>

#include "snap.h"

#define MC_CALL_MAX 64

/*
 * The standard name of the MPI call that function func belongs to, in
 * buf (len bytes): "PMPI_Recv", "MPI_Recv", "mpi_recv_" and the Open MPI
 * internals that stand for a call when its entry is missing (a tail call
 * or a stripped entry: "ompi_mpi_finalize" -> "MPI_Finalize",
 * "mca_pml_ob1_recv" -> "MPI_Recv", "ompi_coll_base_barrier_intra_*" ->
 * "MPI_Barrier").  Returns true if it is one.
 */
bool mc_call_name(const char *func, char *buf, size_t len);

/* Whether the object at path belongs to the MPI runtime or the C
 * library (libmpi, libopen-pal, libopen-rte, mca_*.so, libpmix,
 * libevent, libhwloc, libc, libpthread, ld.so, [vdso]). */
bool mc_is_runtime_object(const char *path);

struct mc_class {
	char call[MC_CALL_MAX];	/* "" when not in MPI */
	int mpi_frame;		/* outermost MPI entry frame, -1 if none */
	/* The first frame outward of mpi_frame outside the MPI and C
	 * libraries: the user's call site.  Without an MPI call, the
	 * innermost such frame (where the thread computes).  -1 if none. */
	int user_frame;
	bool progress_thread;	/* an MPI runtime helper thread */
	/* The call whose callback into the caller's code the thread runs
	 * (call is then "", user_frame where it runs); "" if none. */
	char called_back_by[MC_CALL_MAX];
};

/* Classify one thread's frames (innermost first, n >= 0). */
void mc_classify(const struct snap_frame *frames, int n, struct mc_class *out);

/* Calls by standard name ("MPI_Recv"), by the table of MPI calls
 * (include/mpicall.h); unknown names give false. */
bool mc_is_blocking(const char *call);
bool mc_is_collective(const char *call);

#endif /* MD_MPICALLS_H */
