/*
 * mqd_mpich.c - MPICH's communicators as its DLL does not give them: the
 * context id behind the MPIR_Comm address, and the local-to-world rank
 * table (see mqd_mpich.h and doc/mpich.md).
 */
#include "mqd_mpich.h"

#include <stdlib.h>
#include <string.h>

#include "md.h"

static int offset_of(const struct mh_types_ops *t, void *ctx,
		     const char *type, const char *field)
{
	void *ty;

	if (t->find(ctx, type, &ty) < 0)
		return -1;
	return t->offset(ctx, ty, field);
}

static int size_of(const struct mh_types_ops *t, void *ctx, const char *type)
{
	void *ty;

	if (t->find(ctx, type, &ty) < 0)
		return -1;
	return t->size(ctx, ty);
}

int mm_layout_find(const struct mh_types_ops *t, void *ctx,
		   struct mm_layout *l)
{
	int dev = offset_of(t, ctx, "MPIR_Comm", "dev");
	int vcrt = offset_of(t, ctx, "MPIDI_CH3I_comm_t", "vcrt");

	l->comm_context_id = offset_of(t, ctx, "MPIR_Comm", "context_id");
	/* ch3 keeps the table in the device part of the communicator. */
	l->comm_vcrt = dev >= 0 && vcrt >= 0 ? dev + vcrt : -1;
	l->vcrt_table = offset_of(t, ctx, "MPIDI_VCRT_t", "vcr_table");
	l->vc_pg_rank = offset_of(t, ctx, "MPIDI_VC_t", "pg_rank");
	l->vc_pg = offset_of(t, ctx, "MPIDI_VC_t", "pg");
	l->comm_local_group = offset_of(t, ctx, "MPIR_Comm", "local_group");
	l->group_pmap = offset_of(t, ctx, "MPIR_Group", "lrank_to_lpid");
	l->pmap_size = size_of(t, ctx, "MPII_Group_pmap_t");
	l->pmap_lpid = offset_of(t, ctx, "MPII_Group_pmap_t", "lpid");
	l->comm_kind = offset_of(t, ctx, "MPIR_Comm", "comm_kind");
	l->comm_local_size = offset_of(t, ctx, "MPIR_Comm", "local_size");
	vcrt = offset_of(t, ctx, "MPIDI_CH3I_comm_t", "local_vcrt");
	l->comm_local_vcrt = dev >= 0 && vcrt >= 0 ? dev + vcrt : -1;
	return l->comm_context_id >= 0 ? 0 : -MD_E_NOTYPES;
}

static int read_ptr(const struct mh_proc_ops *p, void *ctx, uint64_t addr,
		    uint64_t *v)
{
	*v = 0;
	if (p->read(ctx, addr, v, sizeof(*v)) < 0)
		return -MD_E_FAULT;
	return *v ? 0 : -MD_E_FAULT;
}

static int read_i32(const struct mh_proc_ops *p, void *ctx, uint64_t addr,
		    int *v)
{
	int32_t x;

	if (p->read(ctx, addr, &x, sizeof(x)) < 0)
		return -MD_E_FAULT;
	*v = x;
	return 0;
}

/* ch3: comm->dev.vcrt->vcr_table[i]->pg_rank (at = comm_vcrt; the
 * local table of an intercommunicator at comm_local_vcrt), the rank in
 * the job's process group (MPI_COMM_WORLD for a job that spawns
 * nothing). */
static bool vcrt_ranks(const struct mm_layout *l, const struct mh_proc_ops *p,
		       void *ctx, uint64_t comm, int at, int size, int *group)
{
	uint64_t vcrt, vc;

	if (at < 0 || l->vcrt_table < 0 || l->vc_pg_rank < 0 ||
	    read_ptr(p, ctx, comm + (uint64_t)at, &vcrt) < 0)
		return false;
	for (int i = 0; i < size; i++)
		if (read_ptr(p, ctx, vcrt + (uint64_t)l->vcrt_table + 8u * (uint64_t)i,
			     &vc) < 0 ||
		    read_i32(p, ctx, vc + (uint64_t)l->vc_pg_rank, &group[i]) < 0)
			return false;
	return true;
}

static bool group_from_vcrt(const struct mm_layout *l,
			    const struct mh_proc_ops *p, void *ctx,
			    uint64_t comm, int size, int *group)
{
	return vcrt_ranks(l, p, ctx, comm, l->comm_vcrt, size, group);
}

/* Any device: comm->local_group->lrank_to_lpid[i].lpid (often NULL for
 * MPI_COMM_WORLD, whose group is made only when asked for).  lpid is a
 * 64-bit value in 4.0, an int before: its low 32 bits either way. */
static bool group_from_local_group(const struct mm_layout *l,
				   const struct mh_proc_ops *p, void *ctx,
				   uint64_t comm, int size, int *group)
{
	uint64_t g, pmap;

	if (l->comm_local_group < 0 || l->group_pmap < 0 || l->pmap_size <= 0 ||
	    l->pmap_lpid < 0 ||
	    read_ptr(p, ctx, comm + (uint64_t)l->comm_local_group, &g) < 0 ||
	    read_ptr(p, ctx, g + (uint64_t)l->group_pmap, &pmap) < 0)
		return false;
	for (int i = 0; i < size; i++)
		if (read_i32(p, ctx, pmap + (uint64_t)i * (uint64_t)l->pmap_size +
				     (uint64_t)l->pmap_lpid, &group[i]) < 0)
			return false;
	return true;
}

int mm_comm_read(const struct mm_layout *l, const struct mh_proc_ops *p,
		 void *ctx, uint64_t comm, int size, uint64_t *context_id,
		 int *group, bool *have_group)
{
	uint16_t id;

	*have_group = false;
	if (l->comm_context_id < 0 ||
	    p->read(ctx, comm + (uint64_t)l->comm_context_id, &id,
		    sizeof(id)) < 0)
		return -MD_E_FAULT;
	*context_id = id;
	if (size > 0)
		*have_group = group_from_vcrt(l, p, ctx, comm, size, group) ||
			      group_from_local_group(l, p, ctx, comm, size,
						     group);
	return 0;
}

/* The process group of VC i of the table vcrt, 0 if it cannot be
 * read. */
static uint64_t vc_pg(const struct mm_layout *l, const struct mh_proc_ops *p,
		      void *ctx, uint64_t vcrt, int i)
{
	uint64_t vc, pg;

	if (read_ptr(p, ctx, vcrt + (uint64_t)l->vcrt_table + 8u * (uint64_t)i,
		     &vc) < 0 ||
	    read_ptr(p, ctx, vc + (uint64_t)l->vc_pg, &pg) < 0)
		return 0;
	return pg;
}

/* Are the remote group's processes (size of them) of another process
 * group than the local one's: MPI_Comm_spawn's children, or the peers
 * of MPI_Comm_connect, whose pg_rank is a rank of their own job? */
static bool remote_outside(const struct mm_layout *l,
			   const struct mh_proc_ops *p, void *ctx,
			   uint64_t comm, int size)
{
	uint64_t local, remote, own;

	if (l->comm_local_vcrt < 0 || l->comm_vcrt < 0 || l->vcrt_table < 0 ||
	    l->vc_pg < 0 ||
	    read_ptr(p, ctx, comm + (uint64_t)l->comm_local_vcrt, &local) < 0 ||
	    read_ptr(p, ctx, comm + (uint64_t)l->comm_vcrt, &remote) < 0 ||
	    !(own = vc_pg(l, p, ctx, local, 0)))
		return false;
	for (int i = 0; i < size; i++) {
		uint64_t pg = vc_pg(l, p, ctx, remote, i);

		if (pg && pg != own)
			return true;
	}
	return false;
}

int mm_comm_local(const struct mm_layout *l, const struct mh_proc_ops *p,
		  void *ctx, uint64_t comm, int remote_size, int *local_size,
		  int **local)
{
	int kind, n;

	*local = NULL;
	*local_size = 0;
	if (l->comm_kind < 0 || l->comm_local_size < 0 ||
	    read_i32(p, ctx, comm + (uint64_t)l->comm_kind, &kind) < 0)
		return -MD_E_NOTYPES;
	if (kind != 1)		/* MPIR_COMM_KIND__INTERCOMM */
		return 0;
	if (read_i32(p, ctx, comm + (uint64_t)l->comm_local_size, &n) < 0 ||
	    n <= 0 || n > (1 << 26))
		return -MD_E_FAULT;
	*local = xmalloc((size_t)n * sizeof(int));
	if (!vcrt_ranks(l, p, ctx, comm, l->comm_local_vcrt, n, *local)) {
		free(*local);
		*local = NULL;
		return -MD_E_FAULT;
	}
	*local_size = n;
	return remote_outside(l, p, ctx, comm, remote_size) ? 2 : 1;
}
