/*
 * snapread_rank.c - the snapshot reader's rank lines: tables of the
 * fields of a rank, its ops, threads, frames and libmdtrack.so records
 * (snapjson.h), in the order snapwrite.c writes them, and the checks
 * between fields.  A new field is one line here and one in snapwrite.c.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

_Static_assert(sizeof(enum snap_op_kind) == sizeof(int) &&
		       sizeof(enum snap_rank_state) == sizeof(int),
	       "SJ_ENUM stores an int");

/* Each [comm, local rank] pair must be a real place in the
 * communicator's group. */
static int read_members(struct snapread *r, const struct sj_field *f,
			const struct sj_node *a, void *base)
{
	struct snap_rank *k = base;
	const struct sj_node *e;
	int64_t ci, li;
	int i = 0;

	if (sj_check(r, a, f->key, SJV_ARR, r->ncomms))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	k->members = snap_alloc(r->mem, (size_t)a->n * sizeof(*k->members));
	k->nmembers = a->n;
	sj_each(e, a) {
		const struct snap_comm *c;

		if (e->type != SJV_ARR || e->n != 2)
			return sj_fail(r, e, "a \"members\" entry must be [comm, local rank]");
		if (sj_num(r, e + 1, "a \"members\" comm", 0, r->ncomms - 1,
			   &ci) ||
		    sj_num(r, e + 1 + e[1].skip, "a \"members\" local rank", 0,
			   INT_MAX, &li))
			return -MD_E_INPUT;
		c = &r->s->comms[ci];
		if (li >= c->size || (c->group && c->group[li] != k->rank))
			return sj_fail(r, e, "rank %d is not local rank %" PRId64
					     " of communicator %" PRId64,
				       k->rank, li, ci);
		k->members[i++] = (struct snap_member){ (int)ci, (int)li };
	}
	return 0;
}

static int read_queues(struct snapread *r, const struct sj_field *f,
		       const struct sj_node *v, void *base)
{
	struct snap_rank *k = base;
	const struct sj_node *none;

	(void)f;
	if (!v || (v->type == SJV_STR && strcmp(v->s, "ok") == 0))
		return 0;
	none = v->type == SJV_OBJ ? sj_get(v, "none") : NULL;
	if (!none || none->type != SJV_STR)
		return sj_fail(r, v, "\"queues\" must be \"ok\" or {\"none\":\"reason\"}");
	k->queues = SNAP_QUEUES_NONE;
	k->queues_reason = sj_intern(r, none);
	return 0;
}

static int read_extra(struct snapread *r, const struct sj_field *f,
		      const struct sj_node *a, void *base)
{
	struct snap_op *op = base;
	const struct sj_node *e;

	if (sj_check(r, a, f->key, SJV_ARR, 5))
		return -MD_E_INPUT;
	if (a)
		sj_each(e, a) {
			if (e->type != SJV_STR)
				return sj_fail(r, e, "an \"extra\" entry must be a string");
			op->extra[op->nextra++] = sj_intern(r, e);
		}
	return 0;
}

/* peer_global must be the peer's global rank, where the group is known
 * (the table checked peer against the communicator's size). */
static int check_op(struct snapread *r, const struct sj_field *f,
		    const struct sj_node *o, void *entry)
{
	struct snap_op *op = entry;
	int peer = snap_comm_peer(r->s, op->comm, op->peer_local);

	(void)f;
	if (peer < 0 || op->peer_global < 0 || peer == op->peer_global)
		return 0;
	return sj_fail(r, sj_get(o, "peer_global"),
		       "\"peer_global\" %d is not \"peer\" %d of communicator %d (global rank %d)",
		       op->peer_global, op->peer_local, op->comm, peer);
}

#define SJ_T struct snap_op
static const struct sj_field actual_fields[] = {
	SJ_INDEX("peer", actual_local, INT_MAX),
	SJ_INDEX("peer_global", actual_global, SJ_LAST_RANK),
	SJ_FIELD("tag", SJ_INT, actual_tag, .min = INT_MIN, .max = INT_MAX),
	SJ_FIELD("length", SJ_U64, actual_length),
	{ NULL },
};

static const struct sj_field op_fields[] = {
	SJ_FIELD("kind", SJ_ENUM, kind, .sub = snap_op_kind_names),
	SJ_FIELD("status", SJ_ENUM, status, .sub = snap_status_names),
	SJ_INDEX("comm", comm, SJ_LAST_COMM),
	SJ_INDEX("peer", peer_local, SJ_LAST_PEER),
	SJ_INDEX("peer_global", peer_global, SJ_LAST_RANK),
	SJ_FIELD("tag", SJ_INT, tag, .min = INT_MIN, .max = INT_MAX),
	SJ_FIELD("any_tag", SJ_BOOL, any_tag),
	SJ_FIELD("length", SJ_U64, length),
	SJ_FIELD("buffer", SJ_ADDR, buffer),
	SJ_FIELD("system_buffer", SJ_BOOL, system_buffer),
	SJ_OBJ("actual", actual_fields),
	SJ_FIELD("request", SJ_ADDR, request),
	SJ_FIELD("corrected", SJ_BOOL, status_corrected),
	SJ_CALL("extra", read_extra),
	SJ_FIELD("source", SJ_ENUM, source, .sub = snap_source_names),
	SJ_FIELD("type", SJ_STR, req_type),
	SJ_FIELD("datatype", SJ_STR, datatype),
	SJ_FIELD("count", SJ_U64, count),
	SJ_FIELD("seq", SJ_U64, sequence),
	{ NULL },
};
#undef SJ_T

#define SJ_T struct snap_frame
static const struct sj_field frame_fields[] = {
	SJ_FIELD("pc", SJ_ADDR, pc),
	SJ_FIELD("func", SJ_STR, func),
	SJ_FIELD("object", SJ_STR, object),
	SJ_FIELD("file", SJ_STR, file),
	SJ_FIELD("line", SJ_INT, line, .max = INT_MAX),
	{ NULL },
};
#undef SJ_T

/* Frame numbers are indexes into the frames, read before them. */
#define SJ_T struct snap_thread
static const struct sj_field thread_fields[] = {
	SJ_FIELD("tid", SJ_INT, tid, .max = INT_MAX),
	SJ_FIELD("call", SJ_STR, mpi_call),
	SJ_FIELD("progress_thread", SJ_BOOL, progress_thread),
	SJ_FIELD("frames", SJ_LIST, frames, .sub = frame_fields, .max = 1 << 20,
		 .size = sizeof(struct snap_frame),
		 .count = offsetof(SJ_T, nframes)),
	SJ_INDEX("mpi_frame", mpi_frame, SJ_LAST_FRAME),
	SJ_INDEX("user_frame", user_frame, SJ_LAST_FRAME),
	{ NULL },
};
#undef SJ_T

/* A peer or tag of a track record: an int, or the names snapwrite.c
 * gives the special values (SNAP_TRACK_ANY and the two after it). */
static int track_num(struct snapread *r, const struct sj_field *f,
		     const struct sj_node *n, void *base)
{
	static const char *const names[] = { "any", "proc_null", "root" };
	int *p = (int *)((char *)base + f->off);
	int64_t v = SNAP_TRACK_NONE;

	for (int i = 0; n && n->type == SJV_STR && i < 3; i++)
		if (!strcmp(n->s, names[i])) {
			*p = SNAP_TRACK_ANY + i;
			return 0;
		}
	if (n && n->type == SJV_STR)
		return sj_fail(r, n, "%s must be an integer, \"any\", \"proc_null\" or \"root\"",
			       f->name);
	if (n && sj_num(r, n, f->name, -1000, INT_MAX, &v))
		return -MD_E_INPUT;
	*p = (int)v;
	return 0;
}

#define SJ_T struct snap_track_rec
static const struct sj_field rec_fields[] = {
	SJ_FIELD("kind", SJ_ENUM, kind, .sub = snap_track_kind_names,
		 .def = SNAP_TRACK_POST),
	SJ_FIELD("call", SJ_STR, call),
	SJ_INDEX("comm", comm, SJ_LAST_COMM),
	SJ_FIELD("peer", SJ_FN, peer, .fn = track_num),
	SJ_FIELD("tag", SJ_FN, tag, .fn = track_num),
	SJ_FIELD("count", SJ_INT, count, .min = INT_MIN, .max = INT_MAX),
	SJ_FIELD("line", SJ_INT, line, .max = INT_MAX),
	SJ_FIELD("seq", SJ_U64, seq),
	SJ_FIELD("ncalls", SJ_U64, ncalls),
	SJ_FIELD("request", SJ_ADDR, request),
	SJ_FIELD("comm_handle", SJ_ADDR, comm_handle),
	SJ_FIELD("datatype", SJ_ADDR, datatype),
	SJ_FIELD("op", SJ_ADDR, op),
	SJ_FIELD("ret", SJ_ADDR, ret),
	SJ_FIELD("comm_name", SJ_STR, comm_name),
	SJ_FIELD("datatype_name", SJ_STR, datatype_name),
	SJ_FIELD("op_name", SJ_STR, op_name),
	SJ_FIELD("func", SJ_STR, func),
	SJ_FIELD("file", SJ_STR, file),
	{ NULL },
};
#undef SJ_T

#define SJ_T struct snap_rank
/* libmdtrack.so's records (doc/snapshot-format.md). */
static const struct sj_field track_fields[] = {
	SJ_FIELD("dropped", SJ_U64, track_dropped),
	SJ_FIELD("recs", SJ_LIST, track, .sub = rec_fields, .max = 1 << 20,
		 .size = sizeof(struct snap_track_rec),
		 .count = offsetof(SJ_T, ntrack), .need = "call"),
	{ NULL },
};

static const struct sj_field site_fields[] = {
	SJ_FIELD("func", SJ_STR, call_func),
	SJ_FIELD("file", SJ_STR, call_file),
	SJ_FIELD("line", SJ_INT, call_line, .max = INT_MAX),
	{ NULL },
};

static const struct sj_field rank_fields[] = {
	SJ_FIELD("pid", SJ_INT, pid, .max = INT_MAX),
	SJ_FIELD("host", SJ_STR, host),
	SJ_FIELD("exe", SJ_STR, exe),
	SJ_FIELD("collected_on", SJ_STR, collected_on),
	SJ_FIELD("state", SJ_ENUM, state, .sub = snap_state_names),
	SJ_FIELD("progress", SJ_ENUM, progress, .sub = snap_progress_names),
	SJ_FIELD("call", SJ_STR, mpi_call),
	SJ_OBJ("site", site_fields),
	SJ_CALL("members", read_members),
	SJ_FIELD("unexpected", SJ_BOOL, unexpected_available),
	SJ_FIELD("ob1", SJ_BOOL, ob1),
	SJ_CALL("queues", read_queues),
	SJ_FIELD("ops", SJ_LIST, ops, .sub = op_fields, .max = 1 << 24,
		 .size = sizeof(struct snap_op), .count = offsetof(SJ_T, nops),
		 .need = "kind", .at_op = true, .fn = check_op),
	SJ_FIELD("threads", SJ_LIST, threads, .sub = thread_fields,
		 .max = 1 << 20, .size = sizeof(struct snap_thread),
		 .count = offsetof(SJ_T, nthreads)),
	SJ_OBJ("track", track_fields, .count = offsetof(SJ_T, tracked)),
	SJ_FIELD("reason", SJ_STR, reason),
	{ NULL },
};
#undef SJ_T

/* The rank's number: after all communicators, in order, each once (a
 * whole snapshot has them all). */
static int rank_number(struct snapread *r, const struct sj_node *n, int *idx)
{
	int64_t v;

	if (sj_num(r, n, "\"rank\"", 0, r->nranks - 1, &v))
		return -MD_E_INPUT;
	*idx = (int)v;
	if (r->comms_read != r->ncomms)
		return sj_fail(r, n, "rank %d comes after %d communicator lines, the header says %d",
			       *idx, r->comms_read, r->ncomms);
	if (r->next_rank < 0)
		r->next_rank = *idx;
	if (r->held < 0 ? *idx != r->next_rank : *idx < r->next_rank)
		return sj_fail(r, n, "rank %d comes where rank %d%s was expected: ranks must be in order, each once",
			       *idx, r->next_rank,
			       r->held < 0 ? "" : " or a later one");
	if (r->ranks_read == r->s->nranks)
		return sj_fail(r, n, "rank %d is one more than the %d the header says the part holds",
			       *idx, r->s->nranks);
	r->next_rank = *idx + 1;
	return 0;
}

int snapread_rank(struct snapread *r, const struct sj_node *o)
{
	struct snap_rank *k;
	int idx;

	if (rank_number(r, sj_get(o, "rank"), &idx))
		return -MD_E_INPUT;
	/* A partial snapshot's ranks are packed, a whole one's at their
	 * numbers (a worker's first is not its first line). */
	k = &r->s->ranks[r->held < 0 ? idx : r->ranks_read];
	k->rank = idx;
	k->pooled = true;
	r->ranks_read++;
	r->at_rank = idx;
	return sj_fields(r, o, rank_fields, k);
}
