/* snapbuild.c - hand-built snapshots for the analyzer's tests. */
#include "support/snapbuild.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

static void add_member(struct snap_rank *r, int comm, int local)
{
	r->members = xrealloc(r->members, ((size_t)r->nmembers + 1) *
						  sizeof(*r->members));
	r->members[r->nmembers].comm = comm;
	r->members[r->nmembers].local_rank = local;
	r->nmembers++;
}

int sb_comm(struct snap *s, uint64_t id, const char *name, int size,
	    const int *group)
{
	int c = snap_comm_intern(s, id, name, size, group);

	for (int i = 0; i < size; i++)
		add_member(&s->ranks[group[i]], c, i);
	return c;
}

struct snap *sb_new(int n)
{
	struct snap *s = snap_new();
	int *world = xmalloc((size_t)n * sizeof(int));

	snap_set_nranks(s, n);
	s->looks = 2;
	s->interval_ms = 100;
	for (int i = 0; i < n; i++) {
		world[i] = i;
		s->ranks[i].state = SNAP_RANK_COLLECTED;
		s->ranks[i].progress = SNAP_PROGRESS_STABLE;
		s->ranks[i].queues = SNAP_QUEUES_OK;
		s->ranks[i].pid = 1000 + i;
		s->ranks[i].host = snap_str(s, "node1");
	}
	sb_comm(s, 0, "MPI_COMM_WORLD", n, world);
	free(world);
	return s;
}

void sb_call(struct snap *s, int rank, const char *call, const char *file,
	     int line)
{
	struct snap_rank *r = &s->ranks[rank];

	r->mpi_call = snap_str(s, call);
	r->call_func = call ? snap_str(s, "main") : NULL;
	r->call_file = call ? snap_str(s, file) : NULL;
	r->call_line = call ? line : 0;
}

struct snap_op *sb_op(struct snap *s, int rank, enum snap_op_kind kind,
		      int comm, int peer_local, int tag, uint64_t len)
{
	struct snap_rank *r = &s->ranks[rank];
	struct snap_op *op;
	char extra[64];

	r->ops = xrealloc(r->ops, ((size_t)r->nops + 1) * sizeof(*r->ops));
	op = &r->ops[r->nops++];
	*op = (struct snap_op){ 0 };
	op->kind = kind;
	op->status = SNAP_ST_PENDING;
	op->comm = comm;
	op->peer_local = peer_local;
	op->peer_global = snap_comm_peer(s, comm, peer_local);
	op->any_tag = tag < 0;
	op->tag = tag;
	op->length = len;
	op->actual_local = op->actual_global = -1;
	op->request = 0x1000 + 0x100 * (uint64_t)r->nops;
	snprintf(extra, sizeof(extra), "%s: 0x%llx",
		 kind == SNAP_OP_SEND ? "Send" : "Receive",
		 (unsigned long long)op->request);
	op->extra[0] = snap_str(s, extra);
	op->nextra = 1;
	return op;
}

void sb_recv(struct snap *s, int rank, int peer, int tag, const char *file,
	     int line)
{
	sb_call(s, rank, "MPI_Recv", file, line);
	sb_op(s, rank, SNAP_OP_RECV, 0, peer, tag, 4096);
}

void sb_send(struct snap *s, int rank, int peer, int tag, const char *file,
	     int line)
{
	sb_call(s, rank, "MPI_Ssend", file, line);
	sb_op(s, rank, SNAP_OP_SEND, 0, peer, tag, 4096);
}

void sb_state(struct snap *s, int rank, enum snap_rank_state st,
	      const char *reason)
{
	s->ranks[rank].state = st;
	s->ranks[rank].reason = snap_str(s, reason);
	if (st != SNAP_RANK_COLLECTED) {
		s->ranks[rank].progress = SNAP_PROGRESS_UNKNOWN;
		sb_call(s, rank, NULL, NULL, 0);
		s->ranks[rank].nops = 0;
	}
}

struct snap *sb_ring(int n)
{
	struct snap *s = sb_new(n);

	for (int i = 0; i < n; i++)
		sb_recv(s, i, (i + 1) % n, 7, "ring.c", 14);
	return s;
}

struct snap_op *sb_ob1_op(struct snap *s, int rank, enum snap_op_kind kind,
			  int comm, int peer_local, int tag, bool probe)
{
	struct snap_op *op = sb_op(s, rank, kind, comm, peer_local, tag, 8);

	op->any_tag = probe && tag == -1;
	op->req_type = snap_str(s, probe ? "probe" :
				kind == SNAP_OP_RECV ? "recv" : "send");
	op->source = SNAP_SRC_OB1;
	op->nextra = 0;
	s->ranks[rank].ob1 = true;
	return op;
}

void sb_topo(struct snap *s, int comm, enum snap_topo kind,
	     const int *const *nbrs)
{
	int size = s->comms[comm].size, n = 0;
	int *first = xmalloc(((size_t)size + 1) * sizeof(int));
	int *nbr = xmalloc(((size_t)size * size + 1) * sizeof(int));

	for (int i = 0; i < size; i++) {
		first[i] = n;
		for (int k = 0; nbrs[i][k] >= 0; k++)
			nbr[n++] = nbrs[i][k];
	}
	first[size] = n;
	snap_comm_set_topo(s, comm, kind, first, nbr);
	free(first);
	free(nbr);
}

struct snap *sb_round_trip(const struct snap *s)
{
	struct snap *back = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (snap_write(s, f) == 0 && fclose(f) == 0) {
		f = fmemopen(text, len, "r");
		if (f && snap_read(f, "round trip", &back) != 0)
			back = NULL;
		if (f)
			fclose(f);
	}
	free(text);
	return back;
}

struct snap *sb_read_text(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct snap *s = NULL;

	cr_assert_not_null(f);
	cr_assert_eq(snap_read(f, "test", &s), 0);
	fclose(f);
	return s;
}

char *sb_render(const struct snap *s, const struct anl_opts *o)
{
	struct anl_result *r = anl_analyze(s);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	anl_report(r, o, f);
	fclose(f);
	anl_result_free(r);
	return text;
}
