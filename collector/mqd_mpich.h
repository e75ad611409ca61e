/*
 * mqd_mpich.h - what MPICH's message-queue DLL (libtvmpich.so, MPICH
 * 4.0.x, device ch3) leaves out and the host reads itself, through the
 * library's DWARF types: a communicator's context id (the DLL's
 * unique_id is the MPIR_Comm's address, different in every rank) and
 * its group (the DLL translates no rank to MPI_COMM_WORLD and exports no
 * mqs_get_comm_group).  See doc/mpich.md.
 */
#ifndef MD_MQD_MPICH_H
#define MD_MQD_MPICH_H

#include <stdbool.h>
#include <stdint.h>

#include "mqdhost.h"

/* Offsets from MPICH's DWARF; -1 where a type or field is missing. */
struct mm_layout {
	int comm_context_id;	/* MPIR_Comm.context_id (uint16) */
	int comm_vcrt;		/* MPIR_Comm.dev + MPIDI_CH3I_comm_t.vcrt */
	int vcrt_table;		/* MPIDI_VCRT_t.vcr_table */
	int vc_pg_rank;		/* MPIDI_VC_t.pg_rank */
	int vc_pg;		/* MPIDI_VC_t.pg: its process group */
	int comm_local_group;	/* MPIR_Comm.local_group */
	int group_pmap;		/* MPIR_Group.lrank_to_lpid */
	int pmap_size;		/* sizeof(MPII_Group_pmap_t) */
	int pmap_lpid;		/* MPII_Group_pmap_t.lpid */
	int comm_kind;		/* MPIR_Comm.comm_kind */
	int comm_local_size;	/* MPIR_Comm.local_size */
	int comm_local_vcrt;	/* MPIR_Comm.dev + MPIDI_CH3I_comm_t.local_vcrt */
};

/*
 * Find the layout in the types t (ctx).  Returns 0 when at least the
 * context id can be read, else -MD_E_NOTYPES (no message).
 */
int mm_layout_find(const struct mh_types_ops *t, void *ctx,
		   struct mm_layout *out);

/*
 * Read the communicator at address comm (the DLL's unique_id) of size
 * members: *context_id, and group[0..size) the MPI_COMM_WORLD rank of
 * each local rank (ch3's virtual connection table, else the local
 * group).  *have_group is false when neither could be read.  Returns 0,
 * or a negative code when the context id could not be read.
 */
int mm_comm_read(const struct mm_layout *l, const struct mh_proc_ops *p,
		 void *ctx, uint64_t comm, int size, uint64_t *context_id,
		 int *group, bool *have_group);

/*
 * Whether the communicator at comm is an intercommunicator (its kind is
 * MPIR_COMM_KIND__INTERCOMM), and then its local group: *local_size and
 * *local (allocated) the MPI_COMM_WORLD ranks of its local ranks (ch3's
 * local table).  MPICH's DLL gives an intercommunicator's remote size as
 * its size (remote_size), and mm_comm_read's group is then the remote
 * group.  Returns 1, 2 when the remote group's processes are of another
 * process group (MPI_Comm_spawn's children, MPI_Comm_connect's peers:
 * their pg_rank is no rank of this job), 0 (an intracommunicator) or a
 * negative code.
 */
int mm_comm_local(const struct mm_layout *l, const struct mh_proc_ops *p,
		  void *ctx, uint64_t comm, int remote_size, int *local_size,
		  int **local);

#endif /* MD_MQD_MPICH_H */
