/*
 * snapread_rank.c - the snapshot reader's rank lines: each field of the
 * parsed line (snapjson.h) is checked and converted into a
 * struct snap_rank.  A new field is one getter call here and one line in
 * snapwrite.c.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

/* Adapters: the name functions take enums. */
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
static int read_origin(struct snapjs *j, const struct snapjs_node *o,
		       struct snap_op *op)
{
	int src;

	if (snapjs_enum(j, o, "source", source_name, 2, 0, &src) ||
	    snapjs_str(j, o, "type", &op->req_type) ||
	    snapjs_str(j, o, "datatype", &op->datatype) ||
	    snapjs_u64(j, o, "count", &op->count) ||
	    snapjs_u64(j, o, "seq", &op->sequence))
		return -MD_E_INPUT;
	op->source = src;
	return 0;
}

static int read_site(struct snapjs *j, const struct snapjs_node *o,
		     struct snap_rank *k)
{
	const struct snapjs_node *site;

	if (snapjs_object(j, o, "site", &site))
		return -MD_E_INPUT;
	if (!site)
		return 0;
	if (snapjs_str(j, site, "func", &k->call_func) ||
	    snapjs_str(j, site, "file", &k->call_file) ||
	    snapjs_int(j, site, "line", 0, INT_MAX, 0, &k->call_line))
		return -MD_E_INPUT;
	return 0;
}

/* Each [comm, local rank] pair must be a real place in the
 * communicator's group. */
static int read_member(struct snapread *r, const struct snapjs_node *e,
		       struct snap_rank *k, struct snap_member *m)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *c = snapjs_first(j, e), *l;
	const struct snap_comm *comm;
	int64_t ci, li;

	if (e->type != SNAPJS_ARR || e->n != 2)
		return snapjs_fail(j, snapjs_col(j, e),
				   "a \"members\" entry must be [comm, local "
				   "rank]");
	l = snapjs_next(j, c);
	if (snapjs_int_node(j, c, "a \"members\" comm", 0, r->ncomms - 1,
			    &ci) ||
	    snapjs_int_node(j, l, "a \"members\" local rank", 0, INT_MAX,
			    &li))
		return -MD_E_INPUT;
	comm = &j->s->comms[ci];
	if (li >= comm->size || (comm->group && comm->group[li] != k->rank))
		return snapjs_fail(j, snapjs_col(j, e),
				   "rank %d is not local rank %" PRId64
				   " of communicator %" PRId64,
				   k->rank, li, ci);
	m->comm = (int)ci;
	m->local_rank = (int)li;
	return 0;
}

static int read_members(struct snapread *r, const struct snapjs_node *o,
			struct snap_rank *k)
{
	const struct snapjs_node *a, *e;
	int i = 0;

	if (snapjs_array(&r->j, o, "members", r->ncomms, &a))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	k->members = snap_alloc(r->j.mem, (size_t)a->n * sizeof(*k->members));
	k->nmembers = a->n;
	for (e = snapjs_first(&r->j, a); e; e = snapjs_next(&r->j, e))
		if (read_member(r, e, k, &k->members[i++]))
			return -MD_E_INPUT;
	return 0;
}

static int read_queues(struct snapjs *j, const struct snapjs_node *o,
		       struct snap_rank *k)
{
	const struct snapjs_node *v = snapjs_get(j, o, "queues"), *none;

	if (snapjs_bool(j, o, "unexpected", &k->unexpected_available) ||
	    snapjs_bool(j, o, "ob1", &k->ob1))
		return -MD_E_INPUT;
	if (!v || (v->type == SNAPJS_STR && strcmp(v->s, "ok") == 0))
		return 0;
	none = v->type == SNAPJS_OBJ ? snapjs_get(j, v, "none") : NULL;
	if (!none || none->type != SNAPJS_STR)
		return snapjs_fail(j, snapjs_col(j, v),
				   "\"queues\" must be \"ok\" or "
				   "{\"none\":\"reason\"}");
	k->queues = SNAP_QUEUES_NONE;
	k->queues_reason = snapjs_intern(j, none);
	return 0;
}

static int read_actual(struct snapread *r, const struct snapjs_node *o,
		       struct snap_op *op)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *a;

	op->actual_local = op->actual_global = -1;
	if (snapjs_object(j, o, "actual", &a))
		return -MD_E_INPUT;
	if (!a)
		return 0;
	if (snapjs_int(j, a, "peer", -1, INT_MAX, -1, &op->actual_local) ||
	    snapjs_int(j, a, "peer_global", -1, r->nranks - 1, -1,
		       &op->actual_global) ||
	    snapjs_int(j, a, "tag", INT_MIN, INT_MAX, 0, &op->actual_tag) ||
	    snapjs_u64(j, a, "length", &op->actual_length))
		return -MD_E_INPUT;
	return 0;
}

static int read_extra(struct snapjs *j, const struct snapjs_node *o,
		      struct snap_op *op)
{
	const struct snapjs_node *a, *e;

	if (snapjs_array(j, o, "extra", 5, &a))
		return -MD_E_INPUT;
	for (e = a ? snapjs_first(j, a) : NULL; e; e = snapjs_next(j, e)) {
		if (e->type != SNAPJS_STR)
			return snapjs_fail(j, snapjs_col(j, e),
					   "an \"extra\" entry must be a "
					   "string");
		op->extra[op->nextra++] = snapjs_intern(j, e);
	}
	return 0;
}

/* The peer's range depends on the communicator. */
static int read_peer(struct snapread *r, const struct snapjs_node *o,
		     struct snap_op *op)
{
	struct snapjs *j = &r->j;
	const struct snap_comm *c;

	if (snapjs_int(j, o, "comm", -1, r->ncomms - 1, -1, &op->comm))
		return -MD_E_INPUT;
	c = op->comm >= 0 ? &j->s->comms[op->comm] : NULL;
	if (snapjs_int(j, o, "peer", -1, c ? c->size - 1 : INT_MAX, -1,
		       &op->peer_local) ||
	    snapjs_int(j, o, "peer_global", -1, r->nranks - 1, -1,
		       &op->peer_global))
		return -MD_E_INPUT;
	if (c && c->group && op->peer_local >= 0 && op->peer_global >= 0 &&
	    c->group[op->peer_local] != op->peer_global) {
		const struct snapjs_node *pg = snapjs_get(j, o, "peer_global");

		return snapjs_fail(j, snapjs_col(j, pg),
				   "\"peer_global\" %d is not \"peer\" %d of "
				   "communicator %d (global rank %d)",
				   op->peer_global, op->peer_local, op->comm,
				   c->group[op->peer_local]);
	}
	return 0;
}

static int read_op(struct snapread *r, const struct snapjs_node *o,
		   struct snap_op *op)
{
	struct snapjs *j = &r->j;
	int kind, status;

	if (o->type != SNAPJS_OBJ)
		return snapjs_fail(j, snapjs_col(j, o),
				   "an \"ops\" entry must be an object");
	if (!snapjs_get(j, o, "kind"))
		return snapjs_fail(j, snapjs_col(j, o),
				   "an \"ops\" entry needs a \"kind\"");
	if (snapjs_enum(j, o, "kind", kind_name, 3, 0, &kind) ||
	    snapjs_enum(j, o, "status", status_name, 3, 0, &status) ||
	    read_peer(r, o, op) ||
	    snapjs_int(j, o, "tag", INT_MIN, INT_MAX, 0, &op->tag) ||
	    snapjs_bool(j, o, "any_tag", &op->any_tag) ||
	    snapjs_u64(j, o, "length", &op->length) ||
	    snapjs_addr(j, o, "buffer", &op->buffer) ||
	    snapjs_bool(j, o, "system_buffer", &op->system_buffer) ||
	    read_actual(r, o, op) ||
	    snapjs_addr(j, o, "request", &op->request) ||
	    snapjs_bool(j, o, "corrected", &op->status_corrected) ||
	    read_extra(j, o, op) || read_origin(j, o, op))
		return -MD_E_INPUT;
	op->kind = kind;
	op->status = status;
	return 0;
}

static int read_ops(struct snapread *r, const struct snapjs_node *o,
		    struct snap_rank *k)
{
	const struct snapjs_node *a, *e;

	if (snapjs_array(&r->j, o, "ops", 1 << 24, &a))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	k->ops = snap_alloc(r->j.mem, (size_t)a->n * sizeof(*k->ops));
	k->nops = a->n;
	for (e = snapjs_first(&r->j, a); e; e = snapjs_next(&r->j, e)) {
		if (read_op(r, e, &k->ops[++r->j.at_op]))
			return -MD_E_INPUT;
	}
	r->j.at_op = -1;
	return 0;
}

static int read_frame(struct snapjs *j, const struct snapjs_node *o,
		      struct snap_frame *f)
{
	if (o->type != SNAPJS_OBJ)
		return snapjs_fail(j, snapjs_col(j, o),
				   "a \"frames\" entry must be an object");
	if (snapjs_addr(j, o, "pc", &f->pc) ||
	    snapjs_str(j, o, "func", &f->func) ||
	    snapjs_str(j, o, "object", &f->object) ||
	    snapjs_str(j, o, "file", &f->file) ||
	    snapjs_int(j, o, "line", 0, INT_MAX, 0, &f->line))
		return -MD_E_INPUT;
	return 0;
}

static int read_thread(struct snapjs *j, const struct snapjs_node *o,
		       struct snap_thread *t)
{
	const struct snapjs_node *a, *e;
	int n, i = 0;

	t->mpi_frame = t->user_frame = -1;
	if (o->type != SNAPJS_OBJ)
		return snapjs_fail(j, snapjs_col(j, o),
				   "a \"threads\" entry must be an object");
	if (snapjs_int(j, o, "tid", 0, INT_MAX, 0, &t->tid) ||
	    snapjs_str(j, o, "call", &t->mpi_call) ||
	    snapjs_bool(j, o, "progress_thread", &t->progress_thread) ||
	    snapjs_array(j, o, "frames", 1 << 20, &a))
		return -MD_E_INPUT;
	n = a ? a->n : 0;
	if (snapjs_int(j, o, "mpi_frame", -1, n - 1, -1, &t->mpi_frame) ||
	    snapjs_int(j, o, "user_frame", -1, n - 1, -1, &t->user_frame))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	t->frames = snap_alloc(j->mem, (size_t)n * sizeof(*t->frames));
	t->nframes = n;
	for (e = snapjs_first(j, a); e; e = snapjs_next(j, e))
		if (read_frame(j, e, &t->frames[i++]))
			return -MD_E_INPUT;
	return 0;
}

static int read_threads(struct snapjs *j, const struct snapjs_node *o,
			struct snap_rank *k)
{
	const struct snapjs_node *a, *e;
	int i = 0;

	if (snapjs_array(j, o, "threads", 1 << 20, &a))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	k->threads = snap_alloc(j->mem, (size_t)a->n * sizeof(*k->threads));
	k->nthreads = a->n;
	for (e = snapjs_first(j, a); e; e = snapjs_next(j, e))
		if (read_thread(j, e, &k->threads[i++]))
			return -MD_E_INPUT;
	return 0;
}

/* The rank's number: the next one, after all communicators. */
static int rank_number(struct snapread *r, const struct snapjs_node *o,
		       int *idx)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *n = snapjs_get(j, o, "rank");

	if (snapjs_int(j, o, "rank", 0, INT_MAX, 0, idx))
		return -MD_E_INPUT;
	if (r->comms_read != r->ncomms)
		return snapjs_fail(j, snapjs_col(j, n),
				   "rank %d comes after %d communicator "
				   "lines, the header says %d",
				   *idx, r->comms_read, r->ncomms);
	if (*idx >= r->nranks)
		return snapjs_fail(j, snapjs_col(j, n),
				   "rank %d is out of range (%d ranks in the "
				   "header)",
				   *idx, r->nranks);
	if (r->held >= 0) {
		/* A partial snapshot: the ranks it holds, in order. */
		if (r->ranks_read >= r->held)
			return snapjs_fail(j, snapjs_col(j, n),
					   "rank %d is one more than the %d "
					   "the header says the part holds",
					   *idx, r->held);
		if (*idx <= r->last_rank)
			return snapjs_fail(j, snapjs_col(j, n),
					   "rank %d comes after rank %d: ranks "
					   "must be in order, each once",
					   *idx, r->last_rank);
		r->last_rank = *idx;
		return 0;
	}
	if (r->ranks_read < 0)	/* a worker's first rank */
		r->first_rank = r->ranks_read = *idx;
	if (*idx != r->ranks_read)
		return snapjs_fail(j, snapjs_col(j, n),
				   "rank %d comes where rank %d was expected: "
				   "ranks must be in order, each once",
				   *idx, r->ranks_read);
	return 0;
}

/* Room for rank idx: all at once from a file, whose size bounded the
 * header's nranks; from a pipe it grows by doubling, so a header that
 * lies costs nothing until the rank lines are there. */
void snapread_reserve(struct snapread *r, int idx)
{
	struct snap *s = r->j.s;
	/* A partial snapshot says how many it holds; a file's size
	 * bounds nranks (header_counts); else grow. */
	long long cap = r->held >= 0   ? r->held
			: r->size >= 0 ? r->nranks
				       : r->ranks_cap;

	if (idx < r->ranks_cap)
		return;
	while (cap <= idx)
		cap = cap ? 2 * cap : 64;
	if (cap > (r->held >= 0 ? r->held : r->nranks))
		cap = r->held >= 0 ? r->held : r->nranks;
	s->ranks = xrealloc(s->ranks, (size_t)cap * sizeof(*s->ranks));
	r->ranks_cap = (int)cap;
}

int snapread_rank(struct snapread *r, const struct snapjs_node *o)
{
	struct snapjs *j = &r->j;
	struct snap_rank *k;
	int idx, state, progress;

	if (rank_number(r, o, &idx))
		return -MD_E_INPUT;
	snapread_reserve(r, r->ranks_read);
	k = &j->s->ranks[r->ranks_read];
	memset(k, 0, sizeof(*k));
	k->rank = idx;
	k->pooled = true;
	/* Counted now so that snap_free releases a half-read rank. */
	if (!r->worker)
		j->s->nranks = r->ranks_read + 1;
	j->at_rank = idx;
	if (snapjs_int(j, o, "pid", 0, INT_MAX, 0, &k->pid) ||
	    snapjs_str(j, o, "host", &k->host) ||
	    snapjs_str(j, o, "exe", &k->exe) ||
	    snapjs_str(j, o, "collected_on", &k->collected_on) ||
	    snapjs_enum(j, o, "state", state_name, 4, 0, &state) ||
	    snapjs_enum(j, o, "progress", progress_name, 3, 0, &progress) ||
	    snapjs_str(j, o, "call", &k->mpi_call) || read_site(j, o, k) ||
	    read_members(r, o, k) || read_queues(j, o, k) ||
	    read_ops(r, o, k) || read_threads(j, o, k) ||
	    snapread_track(r, o, k) || snapjs_str(j, o, "reason", &k->reason))
		return -MD_E_INPUT;
	k->state = state;
	k->progress = progress;
	r->ranks_read++;
	return 0;
}
