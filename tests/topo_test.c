/*
 * topo_test.c - communicator topologies read through the library's types
 * (collector/topo.c).  The "target" is this test's own memory, laid out
 * with structs that carry Open MPI's type and field names, and the types
 * come from this test binary's own DWARF (it is built with -g).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collector/topo.h"
#include "md.h"

/* The fields topo.c reads, under Open MPI's names (nothing else in the
 * test binary defines them). */
typedef struct {
	int lowest_free, number_free;
	int size;
	void **addr;
} opal_pointer_array_t;
typedef struct {
	uint32_t jobid, vpid;
} opal_process_name_t;
typedef struct {
	char super[16];
	opal_process_name_t proc_name;
} opal_proc_t;
typedef struct {
	opal_proc_t super;
	void *proc_endpoints[2];
} ompi_proc_t;
typedef struct {
	char pad[8];
	int grp_proc_count;
	int grp_my_rank;
	ompi_proc_t **grp_proc_pointers;
} ompi_group_t;
typedef struct {
	char pad[8];
	uint32_t c_contextid;
	int c_my_rank;
	uint32_t c_flags;
	ompi_group_t *c_local_group;
	ompi_group_t *c_remote_group;
	void *c_topo;
} ompi_communicator_t;
typedef union {
	void *graph, *cart, *dist_graph;
} mca_topo_base_comm_cgd_union_t;
typedef struct {
	char pad[16];
	uint32_t type;
	mca_topo_base_comm_cgd_union_t mtc;
} mca_topo_base_module_t;
typedef struct {
	char super[16];
	int ndims;
	int *dims, *periods, *coords;
} mca_topo_base_comm_cart_2_2_0_t;
typedef struct {
	char super[16];
	int nnodes;
	int *index, *edges;
} mca_topo_base_comm_graph_2_2_0_t;
typedef struct {
	char super[16];
	int *in, *inw, *out, *outw;
	int indegree, outdegree;
	_Bool weighted;
} mca_topo_base_comm_dist_graph_2_2_0_t;

static opal_pointer_array_t ompi_mpi_communicators;

static int self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static int self_lookup(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	if (strcmp(name, "ompi_mpi_communicators"))
		return -MD_E_NOSYM;
	*addr = (uint64_t)(uintptr_t)&ompi_mpi_communicators;
	return 0;
}

static const struct mh_proc_ops self_ops = { self_read, self_lookup, NULL,
						 NULL };

static struct dt_index *self_types(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct dt_index *idx = NULL;
	const char *src;

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	cr_assert_eq(dt_index_open(exe, &idx, &src), 0,
		     "the test binary has no DWARF (build with -g)");
	return idx;
}

/* A snapshot of n ranks, all in world (id 0) and in a communicator with
 * context id 5; returns the latter's index. */
static int setup(struct snap **out, int n)
{
	struct snap *s = snap_new();
	int *g = malloc((size_t)n * sizeof(int)), c;

	for (int i = 0; i < n; i++)
		g[i] = i;
	snap_set_nranks(s, n);
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", n, g);
	c = snap_comm_intern(s, 5, "topo", n, g);
	for (int i = 0; i < n; i++) {
		s->ranks[i].nmembers = 2;
		s->ranks[i].members = calloc(2, sizeof(struct snap_member));
		s->ranks[i].members[0] = (struct snap_member){ 0, i };
		s->ranks[i].members[1] = (struct snap_member){ c, i };
	}
	free(g);
	*out = s;
	return c;
}

static char *rows(const struct snap_comm *c)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; c->nbr_first && i < c->size; i++)
		for (int k = c->nbr_first[i]; k < c->nbr_first[i + 1]; k++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d",
					      k > c->nbr_first[i] ? "," :
					      i ? ";" : "", c->nbr[k]);
	return buf;
}

/* Rank me's process: one communicator (cid 5) with topology module m. */
static ompi_communicator_t comm;
static mca_topo_base_module_t module;
static void *slots[3];

static void expose(int me, uint32_t type, void *data)
{
	memset(&comm, 0, sizeof(comm));
	comm.c_contextid = 5;
	comm.c_my_rank = me;
	comm.c_topo = &module;
	module.type = type;
	module.mtc.cart = data;
	slots[0] = NULL;	/* a freed communicator */
	slots[1] = &comm;
	ompi_mpi_communicators.addr = slots;
	ompi_mpi_communicators.size = 2;
}

Test(topo, cartesian_grid_gives_every_rank_its_neighbours)
{
	struct dt_index *t = self_types();
	struct snap *s;
	int c = setup(&s, 4);
	int dims[2] = { 2, 2 }, periods[2] = { 0, 0 };
	mca_topo_base_comm_cart_2_2_0_t cart = { .ndims = 2, .dims = dims,
						 .periods = periods };
	struct topo_acc *acc = topo_acc_new();

	expose(2, 0x100, &cart);
	cr_expect_eq(topo_read(&self_ops, NULL, t, s, &s->ranks[2], acc), 1);
	topo_acc_finish(acc, s);
	cr_expect_eq(s->comms[c].topo, SNAP_TOPO_CART);
	cr_expect_str_eq(rows(&s->comms[c]), "1,2;0,3;3,0;2,1");
	snap_free(s);
	dt_index_free(t);
}

Test(topo, periodic_ring_wraps_around)
{
	struct dt_index *t = self_types();
	struct snap *s;
	int c = setup(&s, 4);
	int dims[1] = { 4 }, periods[1] = { 1 };
	mca_topo_base_comm_cart_2_2_0_t cart = { .ndims = 1, .dims = dims,
						 .periods = periods };

	expose(0, 0x100, &cart);
	topo_read(&self_ops, NULL, t, s, &s->ranks[0], NULL);
	cr_expect_str_eq(rows(&s->comms[c]), "3,1;0,2;1,3;2,0");
	snap_free(s);
	dt_index_free(t);
}

Test(topo, graph_lists_come_from_index_and_edges)
{
	struct dt_index *t = self_types();
	struct snap *s;
	int c = setup(&s, 3);
	int index[3] = { 1, 3, 4 }, edges[4] = { 1, 0, 2, 1 };
	mca_topo_base_comm_graph_2_2_0_t g = { .nnodes = 3, .index = index,
					       .edges = edges };

	expose(1, 0x200, &g);
	topo_read(&self_ops, NULL, t, s, &s->ranks[1], NULL);
	cr_expect_eq(s->comms[c].topo, SNAP_TOPO_GRAPH);
	cr_expect_str_eq(rows(&s->comms[c]), "1;0,2;1");
	snap_free(s);
	dt_index_free(t);
}

/* A distributed graph is known row by row: set once every rank's row
 * was read, never from a part. */
Test(topo, dist_graph_is_set_only_when_every_row_is_known)
{
	struct dt_index *t = self_types();
	struct snap *s, *s2;
	int c = setup(&s, 2), c2 = setup(&s2, 2);
	int to1[1] = { 1 }, to0[1] = { 0 };
	mca_topo_base_comm_dist_graph_2_2_0_t d0 = { .out = to1, .outdegree = 1 };
	mca_topo_base_comm_dist_graph_2_2_0_t d1 = { .in = to0, .indegree = 1 };
	struct topo_acc *acc = topo_acc_new(), *acc2 = topo_acc_new();

	expose(0, 0x400, &d0);
	topo_read(&self_ops, NULL, t, s, &s->ranks[0], acc);
	topo_read(&self_ops, NULL, t, s2, &s2->ranks[0], acc2);
	expose(1, 0x400, &d1);
	topo_read(&self_ops, NULL, t, s, &s->ranks[1], acc);
	topo_acc_finish(acc, s);
	topo_acc_finish(acc2, s2);
	cr_expect_eq(s->comms[c].topo, SNAP_TOPO_DIST_GRAPH);
	cr_expect_str_eq(rows(&s->comms[c]), "1;0");
	cr_expect_eq(s2->comms[c2].topo, SNAP_TOPO_NONE, "half the rows");
	snap_free(s);
	snap_free(s2);
	dt_index_free(t);
}

Test(topo, module_without_its_data_gives_no_topology)
{
	struct dt_index *t = self_types();
	struct snap *s;
	int c = setup(&s, 2);

	expose(0, 0x100, NULL);
	cr_expect_eq(topo_read(&self_ops, NULL, t, s, &s->ranks[0], NULL), 0);
	cr_expect_eq(s->comms[c].topo, SNAP_TOPO_NONE);
	snap_free(s);
	dt_index_free(t);
}

/* Groups: Open MPI's jobid 0x12340001 (family 0x1234, local job 1), as a
 * sentinel (proc.h) for a process not yet talked to. */
#define JOBID 0x12340001u
static uintptr_t sentinel(uint32_t jobid, uint32_t vpid)
{
	return 1 | (uintptr_t)(jobid & 0x7fff) << 1 |
	       (uintptr_t)(jobid >> 16) << 16 | (uintptr_t)vpid << 32;
}

static ompi_proc_t procs[3];
static ompi_proc_t *members[3];
static ompi_group_t group;

static void expose_group(int me)
{
	expose(me, 0, NULL);
	comm.c_topo = NULL;
	comm.c_local_group = &group;
	group.grp_proc_count = 3;
	group.grp_proc_pointers = members;
	for (int i = 0; i < 3; i++) {
		procs[i].super.proc_name.jobid = JOBID;
		procs[i].super.proc_name.vpid = (uint32_t)(7 - 2 * i);
		members[i] = &procs[i];
	}
}

Test(topo, group_members_are_named_by_their_process_names)
{
	struct dt_index *t = self_types();
	int g[3] = { -1, -1, -1 };

	expose_group(1);
	/* Member 2 not talked to yet: a sentinel, vpid 9. */
	members[2] = (ompi_proc_t *)sentinel(JOBID, 9);
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 1, 3, g), 0);
	cr_expect(g[0] == 7 && g[1] == 5 && g[2] == 9, "%d %d %d", g[0],
		  g[1], g[2]);
	dt_index_free(t);
}

Test(topo, group_with_a_member_of_another_job_is_not_guessed)
{
	struct dt_index *t = self_types();
	int g[3];

	expose_group(0);
	members[1] = (ompi_proc_t *)sentinel(JOBID + 1, 0);
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 0, 3, g),
		     -MD_E_FAULT);
	expose_group(0);
	procs[2].super.proc_name.jobid = 0x43210001u;
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 0, 3, g),
		     -MD_E_FAULT);
	dt_index_free(t);
}

Test(topo, group_is_that_of_the_communicator_with_the_id_rank_and_size)
{
	struct dt_index *t = self_types();
	int g[3];

	expose_group(2);
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 6, 2, 3, g),
		     -MD_E_FAULT, "another context id");
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 1, 3, g),
		     -MD_E_FAULT, "another local rank");
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 2, 4, g),
		     -MD_E_FAULT, "another size");
	cr_expect_eq(topo_comm_group(&self_ops, NULL, t, 5, 2, 3, g), 0);
	dt_index_free(t);
}

/* An intercommunicator: its local group is the 3 above, its remote group
 * 2 ranks of the same job, one of them a sentinel. */
static ompi_proc_t rprocs[2];
static ompi_proc_t *rmembers[2];
static ompi_group_t rgroup;

static void expose_inter(int me)
{
	expose_group(me);
	comm.c_flags = 0x1;	/* OMPI_COMM_INTER */
	comm.c_remote_group = &rgroup;
	rgroup.grp_proc_count = 2;
	rgroup.grp_proc_pointers = rmembers;
	rprocs[0].super.proc_name.jobid = JOBID;
	rprocs[0].super.proc_name.vpid = 4;
	rmembers[0] = &rprocs[0];
	rmembers[1] = (ompi_proc_t *)sentinel(JOBID, 2);
}

Test(topo, intercommunicator_gives_its_remote_group)
{
	struct dt_index *t = self_types();
	int *r = NULL, n = -1;

	expose_inter(1);
	cr_assert_eq(topo_comm_remote(&self_ops, NULL, t, 5, 1, 3, &r, &n), 1);
	cr_assert_eq(n, 2);
	cr_expect(r[0] == 4 && r[1] == 2, "%d %d", r[0], r[1]);
	free(r);
	dt_index_free(t);
}

Test(topo, intracommunicator_has_no_remote_group)
{
	struct dt_index *t = self_types();
	int *r = NULL, n = -1;

	expose_group(1);
	cr_expect_eq(topo_comm_remote(&self_ops, NULL, t, 5, 1, 3, &r, &n), 0);
	cr_expect_null(r);
	cr_expect_eq(n, 0);
	dt_index_free(t);
}

Test(topo, remote_group_with_a_member_of_another_job_is_not_guessed)
{
	struct dt_index *t = self_types();
	int *r = NULL, n = -1;

	expose_inter(0);
	rmembers[1] = (ompi_proc_t *)sentinel(JOBID + 1, 0);
	cr_expect_eq(topo_comm_remote(&self_ops, NULL, t, 5, 0, 3, &r, &n),
		     -MD_E_FAULT);
	cr_expect_null(r);
	dt_index_free(t);
}
