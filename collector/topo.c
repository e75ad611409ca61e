/*
 * topo.c - communicator topologies from Open MPI's own structures (see
 * topo.h).  Every read is bounded: a rank is consistent while stopped,
 * but a corrupt pointer must give "no topology", never a huge loop.
 */
#include "topo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

#define TOPO_MAX_COMMS 65536	/* entries of ompi_mpi_communicators read */
#define TOPO_MAX_DIMS 64
#define TOPO_MAX_DEGREE 65536

/* mca_topo_base_module_t.type holds the communicator flags
 * (communicator.h: OMPI_COMM_CART ...), not mpi.h's MPI_CART. */
enum { OMPI_CART = 0x100, OMPI_GRAPH = 0x200, OMPI_DIST_GRAPH = 0x400 };

/* Offsets of the fields read, from the library's types. */
struct layout {
	int arr_addr, arr_size;		/* opal_pointer_array_t */
	int cid, my_rank, topo;		/* ompi_communicator_t */
	int type, mtc;			/* mca_topo_base_module_t */
	int c_ndims, c_dims, c_periods;	/* ..._cart_2_2_0_t */
	int g_nnodes, g_index, g_edges;	/* ..._graph_2_2_0_t */
	int d_in, d_out, d_indeg, d_outdeg; /* ..._dist_graph_2_2_0_t */
};

struct rd {
	const struct mh_proc_ops *proc;
	void *ctx;
	struct layout l;
};

struct acc_comm {
	int comm;
	int size;
	int **rows;		/* size rows, NULL until known */
	int *len;
	int known;
};

struct topo_acc {
	struct acc_comm *c;
	int n;
};

static int off(struct dt_index *t, const char *type, const char *field)
{
	const struct dt_type *ty;

	if (dt_find_type(t, type, &ty) < 0)
		return -1;
	return dt_field_offset(ty, field);
}

static bool get_layout(struct dt_index *t, struct layout *l)
{
	static const char cart[] = "mca_topo_base_comm_cart_2_2_0_t";
	static const char graph[] = "mca_topo_base_comm_graph_2_2_0_t";
	static const char dist[] = "mca_topo_base_comm_dist_graph_2_2_0_t";

	l->arr_addr = off(t, "opal_pointer_array_t", "addr");
	l->arr_size = off(t, "opal_pointer_array_t", "size");
	l->cid = off(t, "ompi_communicator_t", "c_contextid");
	l->my_rank = off(t, "ompi_communicator_t", "c_my_rank");
	l->topo = off(t, "ompi_communicator_t", "c_topo");
	l->type = off(t, "mca_topo_base_module_t", "type");
	l->mtc = off(t, "mca_topo_base_module_t", "mtc");
	l->c_ndims = off(t, cart, "ndims");
	l->c_dims = off(t, cart, "dims");
	l->c_periods = off(t, cart, "periods");
	l->g_nnodes = off(t, graph, "nnodes");
	l->g_index = off(t, graph, "index");
	l->g_edges = off(t, graph, "edges");
	l->d_in = off(t, dist, "in");
	l->d_out = off(t, dist, "out");
	l->d_indeg = off(t, dist, "indegree");
	l->d_outdeg = off(t, dist, "outdegree");
	for (const int *p = &l->arr_addr; p <= &l->d_outdeg; p++)
		if (*p < 0)
			return false;
	return true;
}

static bool rd_u64(struct rd *rd, uint64_t addr, uint64_t *v)
{
	return addr && rd->proc->read(rd->ctx, addr, v, sizeof(*v)) == 0;
}

static bool rd_int(struct rd *rd, uint64_t addr, int *v)
{
	return addr && rd->proc->read(rd->ctx, addr, v, sizeof(*v)) == 0;
}

/* n ints at the pointer stored at addr (malloc'ed, NULL on failure). */
static int *rd_ints(struct rd *rd, uint64_t addr, int n)
{
	uint64_t p;
	int *v;

	if (n < 0 || n > TOPO_MAX_DEGREE || !rd_u64(rd, addr, &p) || (n && !p))
		return NULL;
	v = xmalloc((size_t)n * sizeof(int) + 1);
	if (n && rd->proc->read(rd->ctx, p, v, (size_t)n * sizeof(int))) {
		free(v);
		return NULL;
	}
	return v;
}

/* The slots of ompi_mpi_communicators (an opal_pointer_array_t whose
 * addr and size fields are at the offsets given): their number, at most
 * TOPO_MAX_COMMS, and *addr; 0 when the array cannot be read. */
static int comm_slots(struct rd *rd, int addr_off, int size_off,
		      uint64_t *addr)
{
	uint64_t arr;
	int size;

	if (rd->proc->lookup(rd->ctx, "ompi_mpi_communicators", &arr) < 0 ||
	    !rd_u64(rd, arr + (uint64_t)addr_off, addr) ||
	    !rd_int(rd, arr + (uint64_t)size_off, &size) || size < 0)
		return 0;
	return size > TOPO_MAX_COMMS ? TOPO_MAX_COMMS : size;
}

/* Add v to a row unless it is there or out of range (MPI_PROC_NULL). */
static void row_add(int *row, int *len, int v, int size)
{
	if (v < 0 || v >= size)
		return;
	for (int i = 0; i < *len; i++)
		if (row[i] == v)
			return;
	row[(*len)++] = v;
}

/* Every rank's neighbours on a cartesian grid: one step either way in
 * each dimension, wrapped where periodic (Open MPI's cart_shift). */
static bool cart_rows(struct rd *rd, uint64_t t, int size, int *first,
		      int **nbr)
{
	int nd, *dims, *per, n = 0, ok = 0, total = 1;

	if (!rd_int(rd, t + (uint64_t)rd->l.c_ndims, &nd) || nd < 0 ||
	    nd > TOPO_MAX_DIMS)
		return false;
	dims = rd_ints(rd, t + (uint64_t)rd->l.c_dims, nd);
	per = rd_ints(rd, t + (uint64_t)rd->l.c_periods, nd);
	for (int d = 0; dims && d < nd; d++)
		total = dims[d] > 0 && total <= size ? total * dims[d] : size + 1;
	if (dims && per && total == size) {
		*nbr = xmalloc(((size_t)size * 2 * (size_t)nd + 1) * sizeof(int));
		for (int r = 0; r < size; r++) {
			int stride = 1;

			first[r] = n;
			for (int d = nd - 1; d >= 0; d--) {
				int c = r / stride % dims[d];

				for (int step = -1; step <= 1; step += 2) {
					int x = c + step;

					if (per[d])
						x = (x + dims[d]) % dims[d];
					if (x >= 0 && x < dims[d] && x != c) {
						int len = n - first[r];

						row_add(*nbr + first[r], &len,
							r + (x - c) * stride, size);
						n = first[r] + len;
					}
				}
				stride *= dims[d];
			}
		}
		first[size] = n;
		ok = 1;
	}
	free(dims);
	free(per);
	return ok;
}

/* A graph topology: index[] is cumulative degrees, edges[] the lists. */
static bool graph_rows(struct rd *rd, uint64_t t, int size, int *first,
		       int **nbr)
{
	int nn, *index, *edges = NULL, ok = 0;

	if (!rd_int(rd, t + (uint64_t)rd->l.g_nnodes, &nn) || nn != size)
		return false;
	index = rd_ints(rd, t + (uint64_t)rd->l.g_index, nn);
	if (index && nn && index[nn - 1] >= 0 && index[nn - 1] <= TOPO_MAX_DEGREE)
		edges = rd_ints(rd, t + (uint64_t)rd->l.g_edges, index[nn - 1]);
	if (edges || (index && !nn)) {
		int n = 0, prev = 0;

		*nbr = xmalloc(((size_t)(nn ? index[nn - 1] : 0) + 1) * sizeof(int));
		for (int r = 0; r < nn; r++) {
			int len = 0;

			first[r] = n;
			for (int k = prev; k < index[r] && k >= 0 &&
					   k < index[nn - 1]; k++)
				row_add(*nbr + first[r], &len, edges[k], size);
			n += len;
			prev = index[r];
		}
		first[size] = n;
		ok = 1;
	}
	free(index);
	free(edges);
	return ok;
}

static struct acc_comm *acc_get(struct topo_acc *acc, int comm, int size)
{
	for (int i = 0; i < acc->n; i++)
		if (acc->c[i].comm == comm)
			return &acc->c[i];
	acc->c = xrealloc(acc->c, ((size_t)acc->n + 1) * sizeof(*acc->c));
	acc->c[acc->n] = (struct acc_comm){ comm, size,
		xcalloc((size_t)size + 1, sizeof(int *)),
		xcalloc((size_t)size + 1, sizeof(int)), 0 };
	return &acc->c[acc->n++];
}

/* A distributed graph: this rank's sources and destinations only. */
static bool dist_row(struct rd *rd, uint64_t t, int size, int me,
		     struct topo_acc *acc, int comm)
{
	int indeg, outdeg, *in, *out, *row, len = 0;
	struct acc_comm *a;

	if (!rd_int(rd, t + (uint64_t)rd->l.d_indeg, &indeg) ||
	    !rd_int(rd, t + (uint64_t)rd->l.d_outdeg, &outdeg) ||
	    me < 0 || me >= size)
		return false;
	in = rd_ints(rd, t + (uint64_t)rd->l.d_in, indeg);
	out = rd_ints(rd, t + (uint64_t)rd->l.d_out, outdeg);
	if (!in || !out) {
		free(in);
		free(out);
		return false;
	}
	row = xmalloc(((size_t)indeg + (size_t)outdeg + 1) * sizeof(int));
	for (int i = 0; i < indeg; i++)
		row_add(row, &len, in[i], size);
	for (int i = 0; i < outdeg; i++)
		row_add(row, &len, out[i], size);
	free(in);
	free(out);
	a = acc_get(acc, comm, size);
	if (!a->rows[me])
		a->known++;
	free(a->rows[me]);
	a->rows[me] = row;
	a->len[me] = len;
	return true;
}

/* The snapshot communicator of rank r with context id cid and size. */
static int snap_comm_of(const struct snap *s, const struct snap_rank *r,
			uint32_t cid, int me, int *size)
{
	for (int i = 0; i < r->nmembers; i++) {
		const struct snap_comm *c = &s->comms[r->members[i].comm];

		if (c->id == cid && r->members[i].local_rank == me &&
		    c->size > 1) {
			*size = c->size;
			return r->members[i].comm;
		}
	}
	return -1;
}

static int read_comm(struct rd *rd, uint64_t cp, struct snap *s,
		     const struct snap_rank *r, struct topo_acc *acc)
{
	uint64_t tp, mtc;
	uint32_t cid;
	int me, type, comm, size, *first, *nbr = NULL, ok;

	if (!rd_u64(rd, cp + (uint64_t)rd->l.topo, &tp) || !tp ||
	    rd->proc->read(rd->ctx, cp + (uint64_t)rd->l.cid, &cid,
			   sizeof(cid)) ||
	    !rd_int(rd, cp + (uint64_t)rd->l.my_rank, &me))
		return 0;
	comm = snap_comm_of(s, r, cid, me, &size);
	if (comm < 0 || s->comms[comm].topo != SNAP_TOPO_NONE ||
	    !rd_int(rd, tp + (uint64_t)rd->l.type, &type) ||
	    !rd_u64(rd, tp + (uint64_t)rd->l.mtc, &mtc) || !mtc)
		return 0;
	if (type == OMPI_DIST_GRAPH)
		return acc && dist_row(rd, mtc, size, me, acc, comm);
	first = xmalloc(((size_t)size + 1) * sizeof(int));
	ok = type == OMPI_CART ? cart_rows(rd, mtc, size, first, &nbr) :
	     type == OMPI_GRAPH ? graph_rows(rd, mtc, size, first, &nbr) : 0;
	if (ok)
		snap_comm_set_topo(s, comm, type == OMPI_CART ? SNAP_TOPO_CART :
					     SNAP_TOPO_GRAPH, first, nbr);
	free(first);
	free(nbr);
	return ok;
}

int topo_read(const struct mh_proc_ops *proc, void *ctx,
	      struct dt_index *types, struct snap *s,
	      const struct snap_rank *r, struct topo_acc *acc)
{
	struct rd rd = { proc, ctx, { 0 } };
	uint64_t addr;
	int size, n = 0;

	if (!types || !r->nmembers || !get_layout(types, &rd.l))
		return 0;
	size = comm_slots(&rd, rd.l.arr_addr, rd.l.arr_size, &addr);
	for (int i = 0; i < size && addr; i++) {
		uint64_t cp;

		if (rd_u64(&rd, addr + 8 * (uint64_t)i, &cp) && cp)
			n += read_comm(&rd, cp, s, r, acc);
	}
	return n;
}

/* The group of a communicator from Open MPI's own structures. */

#define GROUP_MAX (1 << 26)
#define OMPI_COMM_INTER 0x1	/* ompi_communicator_t.c_flags */

struct glayout {
	int arr_addr, arr_size;		/* opal_pointer_array_t */
	int cid, my_rank, group;	/* ompi_communicator_t */
	int count, procs;		/* ompi_group_t */
	int name, jobid, vpid;		/* ompi_proc_t.super.proc_name */
	int flags, remote;		/* ompi_communicator_t */
};

static bool get_glayout(struct dt_index *t, struct glayout *l)
{
	int super = off(t, "ompi_proc_t", "super");
	int pname = off(t, "opal_proc_t", "proc_name");

	l->arr_addr = off(t, "opal_pointer_array_t", "addr");
	l->arr_size = off(t, "opal_pointer_array_t", "size");
	l->cid = off(t, "ompi_communicator_t", "c_contextid");
	l->my_rank = off(t, "ompi_communicator_t", "c_my_rank");
	l->group = off(t, "ompi_communicator_t", "c_local_group");
	l->flags = off(t, "ompi_communicator_t", "c_flags");
	l->remote = off(t, "ompi_communicator_t", "c_remote_group");
	l->count = off(t, "ompi_group_t", "grp_proc_count");
	l->procs = off(t, "ompi_group_t", "grp_proc_pointers");
	l->jobid = off(t, "opal_process_name_t", "jobid");
	l->vpid = off(t, "opal_process_name_t", "vpid");
	l->name = super < 0 || pname < 0 ? -1 : super + pname;
	/* flags and remote: only topo_comm_remote needs them. */
	for (const int *p = &l->arr_addr; p <= &l->vpid; p++)
		if (*p < 0)
			return false;
	return true;
}

/*
 * One member's (jobid, vpid).  A group holds a pointer to the member's
 * ompi_proc_t, or, for a process this rank has not talked to yet, a
 * sentinel (proc.h: bit 0 set, bits 1-31 the jobid's local id and
 * family, bits 32-63 the vpid).  Both sides compare jobids in the
 * sentinel's 31 bits.
 */
static bool member(struct rd *rd, const struct glayout *l, uint64_t proc,
		   uint32_t *job, uint32_t *vpid)
{
	uint32_t jobid;

	if (proc & 1) {
		*job = (uint32_t)proc >> 1;
		*vpid = (uint32_t)(proc >> 32);
		return true;
	}
	if (!proc ||
	    rd->proc->read(rd->ctx, proc + (uint64_t)(l->name + l->jobid),
			   &jobid, sizeof(jobid)) ||
	    rd->proc->read(rd->ctx, proc + (uint64_t)(l->name + l->vpid),
			   vpid, sizeof(*vpid)))
		return false;
	/* The sentinel's encoding of the same jobid (local 15 bits, family
	 * 16 bits): ompi_proc_name_to_sentinel. */
	*job = (jobid & 0x7fff) | ((jobid >> 16) & 0xffff) << 15;
	return true;
}

/*
 * The members of the group at gp (*n of them; a size given in *n must
 * match) as ranks of the job of own (with own_at >= 0: of that member,
 * whose job is put in *own) into group (*n entries, or allocated when
 * *group is NULL).  A member of another job (MPI_Comm_spawn, connect) is
 * no rank of this one: false.
 */
static bool group_members(struct rd *rd, const struct glayout *l,
			  uint64_t gp, int own_at, uint32_t *own, int *n,
			  int **group)
{
	uint64_t procs, *v;
	uint32_t job = 0, vpid;
	int count;
	bool ok;

	if (!rd_int(rd, gp + (uint64_t)l->count, &count) || count <= 0 ||
	    count > GROUP_MAX || (*n && count != *n) || own_at >= count ||
	    !rd_u64(rd, gp + (uint64_t)l->procs, &procs) || !procs)
		return false;
	v = xmalloc((size_t)count * sizeof(*v));
	ok = !rd->proc->read(rd->ctx, procs, v, (size_t)count * sizeof(*v)) &&
	     (own_at < 0 || member(rd, l, v[own_at], own, &vpid));
	if (ok && !*group)
		*group = xmalloc((size_t)count * sizeof(int));
	for (int i = 0; ok && i < count; i++) {
		ok = member(rd, l, v[i], &job, &vpid) && job == *own &&
		     vpid < (uint32_t)GROUP_MAX;
		(*group)[i] = (int)vpid;
	}
	free(v);
	*n = count;
	return ok;
}

/* A group whose members are all of a job other than own: *n of them. */
static bool other_job(struct rd *rd, const struct glayout *l, uint64_t gp,
		      uint32_t own, int *n)
{
	uint64_t procs, proc;
	uint32_t job, vpid;
	int count;

	if (!rd_int(rd, gp + (uint64_t)l->count, &count) || count <= 0 ||
	    count > GROUP_MAX ||
	    !rd_u64(rd, gp + (uint64_t)l->procs, &procs) || !procs)
		return false;
	for (int i = 0; i < count; i++)
		if (!rd_u64(rd, procs + 8 * (uint64_t)i, &proc) ||
		    !member(rd, l, proc, &job, &vpid) || job == own)
			return false;
	*n = count;
	return true;
}

/* The communicator with context id id in which the process has local
 * rank me (its ompi_communicator_t), 0 if there is none. */
static uint64_t find_comm(struct rd *rd, const struct glayout *l, uint64_t id,
			  int me)
{
	uint64_t addr;
	int n = comm_slots(rd, l->arr_addr, l->arr_size, &addr);

	for (int i = 0; i < n && addr; i++) {
		uint64_t cp;
		uint32_t cid;
		int rank;

		if (rd_u64(rd, addr + 8 * (uint64_t)i, &cp) && cp &&
		    !rd->proc->read(rd->ctx, cp + (uint64_t)l->cid, &cid,
				    sizeof(cid)) &&
		    cid == id && rd_int(rd, cp + (uint64_t)l->my_rank, &rank) &&
		    rank == me)
			return cp;
	}
	return 0;
}

int topo_comm_group(const struct mh_proc_ops *proc, void *ctx,
		    struct dt_index *types, uint64_t id, int me, int size,
		    int *group)
{
	struct rd rd = { proc, ctx, { 0 } };
	struct glayout l;
	uint64_t cp, gp;
	uint32_t own = 0;
	int n = size;

	if (!types || me < 0 || me >= size || size > GROUP_MAX ||
	    !get_glayout(types, &l))
		return -MD_E_NOTYPES;
	cp = find_comm(&rd, &l, id, me);
	if (cp && rd_u64(&rd, cp + (uint64_t)l.group, &gp) &&
	    group_members(&rd, &l, gp, me, &own, &n, &group))
		return 0;
	return -MD_E_FAULT;
}

int topo_comm_remote(const struct mh_proc_ops *proc, void *ctx,
		     struct dt_index *types, uint64_t id, int me, int size,
		     int **remote, int *rsize)
{
	struct rd rd = { proc, ctx, { 0 } };
	struct glayout l;
	uint64_t cp, gp, rgp;
	uint32_t flags, own = 0;
	int *local = NULL, n = size;
	bool ok;

	*remote = NULL;
	*rsize = 0;
	if (!types || me < 0 || me >= size || size > GROUP_MAX ||
	    !get_glayout(types, &l) || l.flags < 0 || l.remote < 0)
		return -MD_E_NOTYPES;
	cp = find_comm(&rd, &l, id, me);
	if (!cp || proc->read(ctx, cp + (uint64_t)l.flags, &flags,
			      sizeof(flags)))
		return -MD_E_FAULT;
	if (!(flags & OMPI_COMM_INTER))
		return 0;
	/* The local group's own member names the job of the remote's. */
	ok = rd_u64(&rd, cp + (uint64_t)l.group, &gp) &&
	     group_members(&rd, &l, gp, me, &own, &n, &local) &&
	     rd_u64(&rd, cp + (uint64_t)l.remote, &rgp);
	free(local);
	if (ok && group_members(&rd, &l, rgp, -1, &own, rsize, remote))
		return 1;
	if (ok && other_job(&rd, &l, rgp, own, rsize)) {
		free(*remote);
		*remote = NULL;
		return 2;
	}
	free(*remote);
	*remote = NULL;
	*rsize = 0;
	return -MD_E_FAULT;
}

struct topo_acc *topo_acc_new(void)
{
	return xcalloc(1, sizeof(struct topo_acc));
}

void topo_acc_finish(struct topo_acc *acc, struct snap *s)
{
	if (!acc)
		return;
	for (int i = 0; i < acc->n; i++) {
		struct acc_comm *a = &acc->c[i];

		if (a->known == a->size &&
		    s->comms[a->comm].topo == SNAP_TOPO_NONE) {
			int *first = xmalloc(((size_t)a->size + 1) * sizeof(int));
			int *nbr, n = 0;

			for (int r = 0; r < a->size; r++)
				n += a->len[r];
			nbr = xmalloc((size_t)n * sizeof(int) + 1);
			n = 0;
			for (int r = 0; r < a->size; r++) {
				first[r] = n;
				memcpy(nbr + n, a->rows[r],
				       (size_t)a->len[r] * sizeof(int));
				n += a->len[r];
			}
			first[a->size] = n;
			snap_comm_set_topo(s, a->comm, SNAP_TOPO_DIST_GRAPH,
					   first, nbr);
			free(first);
			free(nbr);
		}
		for (int r = 0; r < a->size; r++)
			free(a->rows[r]);
		free(a->rows);
		free(a->len);
	}
	free(acc->c);
	free(acc);
}
