/*
 * snapread_rank.c - the snapshot reader's rank lines: the values the
 * parse captured (snapjson.h) are checked and converted into a
 * struct snap_rank.  The checks run in the order of the json-c reader
 * this replaced, whatever the order of the keys in the line, so a line
 * with several faults still names the same one.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

/* Adapters: the enum name functions take enums. */
static const char *state_name(int i)
{
	return snap_state_name(i);
}
static const char *progress_name(int i)
{
	return snap_progress_name(i);
}
static const char *kind_name(int i)
{
	return snap_op_kind_name(i);
}
static const char *status_name(int i)
{
	return snap_status_name(i);
}

static const char *source_name(int i)
{
	return snap_source_name(i);
}

/* Where the op came from and what ob1 adds (type, datatype, seq). */
static int read_origin(struct snaprd *r, struct snap_op *op,
		       const struct snaprd_op *o)
{
	const struct snaprd_val *v = o->v;
	int src;

	if (snaprd_enum(r, &v[RDO_SOURCE], "source", source_name, 2, 0,
			&src) ||
	    snaprd_str(r, &v[RDO_TYPE], "type", &op->req_type) ||
	    snaprd_str(r, &v[RDO_DATATYPE], "datatype", &op->datatype) ||
	    snaprd_u64(r, &v[RDO_DTCOUNT], "count", &op->count) ||
	    snaprd_u64(r, &v[RDO_SEQ], "seq", &op->sequence))
		return -MD_E_INPUT;
	op->source = src;
	return 0;
}

static int read_site(struct snaprd *r, struct snap_rank *k)
{
	bool site;

	if (snaprd_object(r, &r->top[RDL_SITE], "site", &site))
		return -MD_E_INPUT;
	if (!site)
		return 0;
	if (snaprd_str(r, &r->site[RDS_FUNC], "func", &k->call_func) ||
	    snaprd_str(r, &r->site[RDS_FILE], "file", &k->call_file) ||
	    snaprd_int(r, &r->site[RDS_LINE], "line", 0, INT_MAX, 0,
		       &k->call_line))
		return -MD_E_INPUT;
	return 0;
}

/* Each member pair must be a real place in the communicator's group. */
static int read_members(struct snaprd *r, struct snap_rank *k)
{
	const struct snaprd_member *ms = r->members.a;
	int n;

	if (snaprd_array(r, &r->top[RDL_MEMBERS], "members",
			 (size_t)r->ncomms, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->members = xcalloc((size_t)n, sizeof(*k->members));
	k->nmembers = n;
	for (int i = 0; i < n; i++) {
		const struct snap_comm *comm;
		int64_t ci = ms[i].c, li = ms[i].l;

		if (!ms[i].pair)
			return snaprd_fail(r, "members",
					   "\"members\" entry %d must "
					   "be [comm, local rank]",
					   i);
		if (ci < 0 || ci >= r->ncomms)
			return snaprd_fail(r, "members",
					   "\"members\" entry %d: "
					   "comm %" PRId64
					   " is out of range (%d "
					   "communicators)",
					   i, ci, r->ncomms);
		comm = &r->s->comms[ci];
		if (li < 0 || li >= comm->size ||
		    (comm->group && comm->group[li] != k->rank))
			return snaprd_fail(r, "members",
					   "\"members\" entry %d: "
					   "rank %d is not local rank %" PRId64
					   " of communicator %" PRId64,
					   i, k->rank, li, ci);
		k->members[i].comm = (int)ci;
		k->members[i].local_rank = (int)li;
	}
	return 0;
}

static int read_queues(struct snaprd *r, struct snap_rank *k)
{
	const struct snaprd_val *v = &r->top[RDL_QUEUES];
	const struct snaprd_val *none = &r->queues[RDQ_NONE];

	if (snaprd_bool(r, &r->top[RDL_UNEXPECTED], "unexpected",
			&k->unexpected_available))
		return -MD_E_INPUT;
	if (v->type == SNAPRD_ABSENT || v->type == SNAPRD_NULL)
		return 0;
	if (v->type == SNAPRD_STRING && strcmp(v->s, "ok") == 0)
		return 0;
	if (v->type != SNAPRD_OBJECT || none->type != SNAPRD_STRING)
		return snaprd_fail(r, "queues",
				   "\"queues\" must be \"ok\" or "
				   "{\"none\":\"reason\"}");
	k->queues = SNAP_QUEUES_NONE;
	k->queues_reason = none->s;
	return 0;
}

static int read_actual(struct snaprd *r, struct snap_op *op,
		       const struct snaprd_op *o)
{
	const struct snaprd_val *a = o->actual;
	bool present;

	if (snaprd_object(r, &o->v[RDO_ACTUAL], "actual", &present))
		return -MD_E_INPUT;
	op->actual_local = op->actual_global = -1;
	if (!present)
		return 0;
	if (snaprd_int(r, &a[RDA_PEER], "peer", -1, INT_MAX, -1,
		       &op->actual_local) ||
	    snaprd_int(r, &a[RDA_PEER_GLOBAL], "peer_global", -1,
		       r->nranks - 1, -1, &op->actual_global) ||
	    snaprd_int(r, &a[RDA_TAG], "tag", INT_MIN, INT_MAX, 0,
		       &op->actual_tag) ||
	    snaprd_u64(r, &a[RDA_LENGTH], "length", &op->actual_length))
		return -MD_E_INPUT;
	return 0;
}

static int read_extra(struct snaprd *r, struct snap_op *op,
		      const struct snaprd_op *o)
{
	int n;

	if (snaprd_array(r, &o->v[RDO_EXTRA], "extra", 5, &n))
		return -MD_E_INPUT;
	for (int i = 0; i < n; i++) {
		if (o->extra[i].type != SNAPRD_STRING)
			return snaprd_fail(r, "extra",
					   "\"extra\" entry %d must be "
					   "a string",
					   i);
		op->extra[i] = o->extra[i].s;
		op->nextra = i + 1;
	}
	return 0;
}

static int op_peer(struct snaprd *r, struct snap_op *op,
		   const struct snaprd_op *o)
{
	const struct snap_comm *c;

	if (snaprd_int(r, &o->v[RDO_COMM], "comm", -1, INT_MAX, -1,
		       &op->comm))
		return -MD_E_INPUT;
	if (op->comm >= r->ncomms)
		return snaprd_fail(r, "comm",
				   "\"comm\" %d is out of range "
				   "(%d communicators)",
				   op->comm, r->ncomms);
	c = op->comm >= 0 ? &r->s->comms[op->comm] : NULL;
	if (snaprd_int(r, &o->v[RDO_PEER], "peer", -1,
		       c ? c->size - 1 : INT_MAX, -1, &op->peer_local) ||
	    snaprd_int(r, &o->v[RDO_PEER_GLOBAL], "peer_global", -1,
		       r->nranks - 1, -1, &op->peer_global))
		return -MD_E_INPUT;
	if (c && c->group && op->peer_local >= 0 && op->peer_global >= 0 &&
	    c->group[op->peer_local] != op->peer_global)
		return snaprd_fail(
			r, "peer_global",
			"\"peer_global\" %d is not "
			"\"peer\" %d of communicator %d (global rank "
			"%d)",
			op->peer_global, op->peer_local, op->comm,
			c->group[op->peer_local]);
	return 0;
}

static int read_op(struct snaprd *r, struct snap_op *op,
		   const struct snaprd_op *o)
{
	const struct snaprd_val *v = o->v;
	int kind, status;

	if (!o->object)
		return snaprd_fail(r, "ops",
				   "an entry of \"ops\" is not an object");
	/* Present, even as null (json-c's get_ex said so). */
	if (v[RDO_KIND].type == SNAPRD_ABSENT)
		return snaprd_fail(r, "ops",
				   "an entry of \"ops\" has no \"kind\"");
	if (snaprd_enum(r, &v[RDO_KIND], "kind", kind_name, 3, 0, &kind) ||
	    snaprd_enum(r, &v[RDO_STATUS], "status", status_name, 3, 0,
			&status) ||
	    op_peer(r, op, o) ||
	    snaprd_int(r, &v[RDO_TAG], "tag", INT_MIN, INT_MAX, 0, &op->tag) ||
	    snaprd_bool(r, &v[RDO_ANY_TAG], "any_tag", &op->any_tag) ||
	    snaprd_u64(r, &v[RDO_LENGTH], "length", &op->length) ||
	    snaprd_addr(r, &v[RDO_BUFFER], "buffer", &op->buffer) ||
	    snaprd_bool(r, &v[RDO_SYSTEM_BUFFER], "system_buffer",
			&op->system_buffer) ||
	    read_actual(r, op, o) ||
	    snaprd_addr(r, &v[RDO_REQUEST], "request", &op->request) ||
	    snaprd_bool(r, &v[RDO_CORRECTED], "corrected",
			&op->status_corrected) ||
	    read_extra(r, op, o) || read_origin(r, op, o))
		return -MD_E_INPUT;
	op->kind = kind;
	op->status = status;
	return 0;
}

static int read_ops(struct snaprd *r, struct snap_rank *k)
{
	const struct snaprd_op *ops = r->ops.a;
	int n;

	if (snaprd_array(r, &r->top[RDL_OPS], "ops", 1 << 24, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->ops = xcalloc((size_t)n, sizeof(*k->ops));
	k->nops = n;
	for (int i = 0; i < n; i++) {
		r->at_op = i;
		if (read_op(r, &k->ops[i], &ops[i]))
			return -MD_E_INPUT;
	}
	r->at_op = -1;
	return 0;
}

static int read_frame(struct snaprd *r, struct snap_frame *f,
		      const struct snaprd_frame *o)
{
	const struct snaprd_val *v = o->v;

	if (!o->object)
		return snaprd_fail(r, "frames",
				   "an entry of \"frames\" is not an "
				   "object");
	if (snaprd_addr(r, &v[RDF_PC], "pc", &f->pc) ||
	    snaprd_str(r, &v[RDF_FUNC], "func", &f->func) ||
	    snaprd_str(r, &v[RDF_OBJECT], "object", &f->object) ||
	    snaprd_str(r, &v[RDF_FILE], "file", &f->file) ||
	    snaprd_int(r, &v[RDF_LINE], "line", 0, INT_MAX, 0, &f->line))
		return -MD_E_INPUT;
	return 0;
}

static int read_thread(struct snaprd *r, struct snap_thread *t,
		       const struct snaprd_thread *o)
{
	const struct snaprd_frame *frames = r->frames.a;
	const struct snaprd_val *v = o->v;
	int n;

	t->mpi_frame = t->user_frame = -1;
	if (!o->object)
		return snaprd_fail(r, "threads",
				   "an entry of \"threads\" is not "
				   "an object");
	if (snaprd_int(r, &v[RDT_TID], "tid", 0, INT_MAX, 0, &t->tid) ||
	    snaprd_str(r, &v[RDT_CALL], "call", &t->mpi_call) ||
	    snaprd_bool(r, &v[RDT_PROGRESS], "progress_thread",
			&t->progress_thread) ||
	    snaprd_array(r, &v[RDT_FRAMES], "frames", 1 << 20, &n))
		return -MD_E_INPUT;
	if (snaprd_int(r, &v[RDT_MPI_FRAME], "mpi_frame", -1, n - 1, -1,
		       &t->mpi_frame) ||
	    snaprd_int(r, &v[RDT_USER_FRAME], "user_frame", -1, n - 1, -1,
		       &t->user_frame))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	t->frames = xmalloc((size_t)n * sizeof(*t->frames));
	t->nframes = n;
	for (int i = 0; i < n; i++)
		if (read_frame(r, &t->frames[i], &frames[o->frame0 + i]))
			return -MD_E_INPUT;
	return 0;
}

static int read_threads(struct snaprd *r, struct snap_rank *k)
{
	const struct snaprd_thread *threads = r->threads.a;
	int n;

	if (snaprd_array(r, &r->top[RDL_THREADS], "threads", 1 << 20, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->threads = xcalloc((size_t)n, sizeof(*k->threads));
	k->nthreads = n;
	for (int i = 0; i < n; i++)
		if (read_thread(r, &k->threads[i], &threads[i]))
			return -MD_E_INPUT;
	return 0;
}

/* Room for rank idx; grows by doubling so a header that lies about
 * nranks on a pipe costs nothing until the rank lines are there. */
static void ranks_reserve(struct snaprd *r, int idx)
{
	long long cap = r->ranks_cap;

	if (idx < r->ranks_cap)
		return;
	while (cap <= idx)
		cap = cap ? 2 * cap : 4096;
	if (cap > r->nranks)
		cap = r->nranks;
	r->s->ranks = xrealloc(r->s->ranks, (size_t)cap * sizeof(*r->s->ranks));
	r->ranks_cap = (int)cap;
}

static int rank_number(struct snaprd *r, int *idx)
{
	if (snaprd_int(r, &r->top[RDL_RANK], "rank", 0, INT_MAX, 0, idx))
		return -MD_E_INPUT;
	if (r->comms_read != r->ncomms)
		return snaprd_fail(r, NULL,
				   "rank %d comes after %d communicator "
				   "lines, the header says %d",
				   *idx, r->comms_read, r->ncomms);
	if (*idx >= r->nranks)
		return snaprd_fail(r, "rank",
				   "rank %d is out of range (%d ranks "
				   "in the header)",
				   *idx, r->nranks);
	/* A part read beside others starts where its first line says;
	 * whether that is where the part before it ended is checked when
	 * both are done (snapread_par.c). */
	if (r->par && r->rank0 < 0)
		r->rank0 = r->ranks_read = *idx;
	if (*idx < r->ranks_read)
		return snaprd_fail(r, "rank", "rank %d appears twice", *idx);
	if (*idx > r->ranks_read)
		return snaprd_fail(r, "rank",
				   "rank %d comes where rank %d was "
				   "expected: ranks must be in order, none "
				   "missing",
				   *idx, r->ranks_read);
	return 0;
}

int snaprd_rank(struct snaprd *r)
{
	const struct snaprd_val *v = r->top;
	struct snap_rank *k;
	int idx, state, progress;

	if (rank_number(r, &idx))
		return -MD_E_INPUT;
	/* Two parts that claim one rank must not both write it. */
	if (r->claimed &&
	    __atomic_exchange_n(&r->claimed[idx], 1, __ATOMIC_RELAXED))
		return -MD_E_INPUT;
	ranks_reserve(r, idx);
	k = &r->s->ranks[idx];
	memset(k, 0, sizeof(*k));
	k->rank = idx;
	/* Counted now so that a half-read rank is released: by snap_free,
	 * or by the parallel read for its part. */
	if (r->par)
		r->hi = idx + 1;
	else
		r->s->nranks = idx + 1;
	r->at_rank = idx;
	if (snaprd_int(r, &v[RDL_PID], "pid", 0, INT_MAX, 0, &k->pid) ||
	    snaprd_str(r, &v[RDL_HOST], "host", &k->host) ||
	    snaprd_str(r, &v[RDL_EXE], "exe", &k->exe) ||
	    snaprd_str(r, &v[RDL_COLLECTED_ON], "collected_on",
		       &k->collected_on) ||
	    snaprd_enum(r, &v[RDL_STATE], "state", state_name, 4, 0, &state) ||
	    snaprd_enum(r, &v[RDL_PROGRESS], "progress", progress_name, 3, 0,
			&progress) ||
	    snaprd_str(r, &v[RDL_CALL], "call", &k->mpi_call) ||
	    read_site(r, k) || read_members(r, k) || read_queues(r, k) ||
	    read_ops(r, k) || read_threads(r, k) || snaprd_track(r, k) ||
	    snaprd_str(r, &v[RDL_REASON], "reason", &k->reason))
		return -MD_E_INPUT;
	k->state = state;
	k->progress = progress;
	r->ranks_read++;
	return 0;
}
