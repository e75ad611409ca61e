/*
 * topo.h - the virtual topologies of a rank's communicators (Open MPI:
 * ompi_communicator_t.c_topo), read from the stopped rank through the
 * MPI library's types, for the analyzer's neighbour collectives.
 *
 * Cartesian and graph topologies are whole in every member, so one rank
 * gives every member's neighbours.  A distributed graph holds only the
 * rank's own neighbours: the rows are gathered over the ranks of a look
 * (topo_acc) and the topology is set once every member's row is known.
 */
#ifndef MD_TOPO_H
#define MD_TOPO_H

#include "dwtypes.h"
#include "mqdhost.h"
#include "snap.h"

struct topo_acc;

struct topo_acc *topo_acc_new(void);
/* Set the topologies whose rows are all known in s; then free acc.
 * NULL does nothing. */
void topo_acc_finish(struct topo_acc *acc, struct snap *s);

/*
 * Read the topologies of the communicators of rank r (its members, as
 * the DLL gave them) from ompi_mpi_communicators in the process that
 * proc reads, with the layouts of types.  Communicators whose topology
 * is already in s are skipped.  Never fails the rank: a topology that
 * cannot be read is left out (the analyzer then waits on every member).
 * acc gathers distributed graphs' rows (NULL: they are skipped).
 * Returns the number of topologies read (set or gathered).
 */
int topo_read(const struct mh_proc_ops *proc, void *ctx,
	      struct dt_index *types, struct snap *s,
	      const struct snap_rank *r, struct topo_acc *acc);

/*
 * The group of the communicator with context id id in which the process
 * has local rank me and size members: their ranks in the job (vpids),
 * from the communicator's group in Open MPI's own structures, into group
 * (size entries).  For when the DLL's group is unusable: Open MPI's DLL
 * matches members by their ompi_proc_t pointers against
 * MPI_COMM_WORLD's, and leaves a member unset when one of the two holds
 * a sentinel (a process not yet talked to, common across hosts).
 * Returns 0, -MD_E_NOTYPES without the layouts, or -MD_E_FAULT when the
 * communicator or a member (one of another job) cannot be read.
 */
int topo_comm_group(const struct mh_proc_ops *proc, void *ctx,
		    struct dt_index *types, uint64_t id, int me, int size,
		    int *group);

/*
 * Whether that communicator is an intercommunicator (Open MPI's c_flags),
 * and then its remote group as ranks of the job: *remote (allocated,
 * *rsize entries).  Open MPI's DLL knows only the local group, and
 * translates a point-to-point peer, a rank of the remote group, through
 * it.  Returns 1 for an intercommunicator (its remote group read), 2 for
 * one whose remote group is processes of another job (MPI_Comm_spawn's
 * children, MPI_Comm_connect's peers: *remote NULL, *rsize of them), 0
 * for an intracommunicator, -MD_E_NOTYPES or -MD_E_FAULT.
 */
int topo_comm_remote(const struct mh_proc_ops *proc, void *ctx,
		     struct dt_index *types, uint64_t id, int me, int size,
		     int **remote, int *rsize);

#endif /* MD_TOPO_H */
