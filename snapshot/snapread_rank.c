/*
 * snapread_rank.c - the snapshot reader's rank lines: tables of the
 * fields of a rank, its ops, threads, frames and libmdtrack.so records
 * (snapjson.h), in the order snapwrite.c writes them, and the checks
 * between fields.  A new field is one line here and one in snapwrite.c.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

_Static_assert(sizeof(enum snap_op_kind) == sizeof(int) &&
		       sizeof(enum snap_rank_state) == sizeof(int),
	       "SJ_ENUM stores an int");

/* A key's value v, as read, checked again against a range that depends
 * on other keys of the object; the key is looked up again only to name
 * it in the error (absent, it had its default: fine). */
static int recheck(struct snapjs *j, const struct snapjs_node *o,
		   const char *key, int v, int64_t min, int64_t max)
{
	const struct snapjs_node *n;
	int64_t out;

	if (v >= min && v <= max)
		return 0;
	n = snapjs_get(j, o, key);
	return n ? snapjs_num(j, n, key, NULL, min, max, &out) : 0;
}

/* Each [comm, local rank] pair must be a real place in the
 * communicator's group. */
static int read_member(struct snapread *r, const struct snapjs_node *e,
		       struct snap_rank *k, struct snap_member *m)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *c = snapjs_first(j, e);
	const struct snap_comm *comm;
	int64_t ci, li;

	if (e->type != SNAPJS_ARR || e->n != 2)
		return snapjs_fail(j, snapjs_col(j, e),
				   "a \"members\" entry must be [comm, local "
				   "rank]");
	if (snapjs_num(j, c, NULL, "a \"members\" comm", 0, r->ncomms - 1,
		       &ci) ||
	    snapjs_num(j, snapjs_next(j, c), NULL, "a \"members\" local rank",
		       0, INT_MAX, &li))
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

static int read_members(struct snapread *r, const struct snapjs_field *f,
			const struct snapjs_node *a, void *base)
{
	struct snap_rank *k = base;
	const struct snapjs_node *e;
	int i = 0;

	if (snapjs_check(&r->j, a, f->key, SNAPJS_ARR, r->ncomms))
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

static int read_queues(struct snapread *r, const struct snapjs_field *f,
		       const struct snapjs_node *v, void *base)
{
	struct snap_rank *k = base;
	const struct snapjs_node *none;

	(void)f;
	if (!v || (v->type == SNAPJS_STR && strcmp(v->s, "ok") == 0))
		return 0;
	none = v->type == SNAPJS_OBJ ? snapjs_get(&r->j, v, "none") : NULL;
	if (!none || none->type != SNAPJS_STR)
		return snapjs_fail(&r->j, snapjs_col(&r->j, v),
				   "\"queues\" must be \"ok\" or "
				   "{\"none\":\"reason\"}");
	k->queues = SNAP_QUEUES_NONE;
	k->queues_reason = snapjs_intern(&r->j, none);
	return 0;
}

static int read_extra(struct snapread *r, const struct snapjs_field *f,
		      const struct snapjs_node *a, void *base)
{
	struct snap_op *op = base;
	const struct snapjs_node *e;

	if (snapjs_check(&r->j, a, f->key, SNAPJS_ARR, 5))
		return -MD_E_INPUT;
	for (e = a ? snapjs_first(&r->j, a) : NULL; e;
	     e = snapjs_next(&r->j, e)) {
		if (e->type != SNAPJS_STR)
			return snapjs_fail(&r->j, snapjs_col(&r->j, e),
					   "an \"extra\" entry must be a "
					   "string");
		op->extra[op->nextra++] = snapjs_intern(&r->j, e);
	}
	return 0;
}

/* The peer's range depends on the communicator. */
static int check_op(struct snapread *r, const struct snapjs_node *o,
		    void *entry)
{
	struct snap_op *op = entry;
	const struct snap_comm *c =
		op->comm >= 0 ? &r->j.s->comms[op->comm] : NULL;
	int peer;

	if (!c)
		return 0;
	/* An intercommunicator's peer is a rank of its remote group. */
	if (recheck(&r->j, o, "peer", op->peer_local, -1,
		    (c->remote ? c->remote_size : c->size) - 1))
		return -MD_E_INPUT;
	peer = snap_comm_peer(r->j.s, op->comm, op->peer_local);
	if ((c->group || c->remote) && op->peer_local >= 0 &&
	    op->peer_global >= 0 && peer != op->peer_global)
		return snapjs_fail(&r->j,
				   snapjs_col(&r->j,
					      snapjs_get(&r->j, o,
							 "peer_global")),
				   "\"peer_global\" %d is not \"peer\" %d of "
				   "communicator %d (global rank %d)",
				   op->peer_global, op->peer_local, op->comm,
				   peer);
	return 0;
}

#define OP(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct snap_op, field, __VA_ARGS__)

static const struct snapjs_field actual_fields[] = {
	OP("peer", SJ_INT, actual_local, .min = -1, .max = INT_MAX, .def = -1),
	OP("peer_global", SJ_INT, actual_global, .min = -1,
	   .max = SJ_LAST_RANK, .def = -1),
	OP("tag", SJ_INT, actual_tag, .min = INT_MIN, .max = INT_MAX),
	OP("length", SJ_U64, actual_length),
	{ NULL },
};
SJ_TABLE_FITS(actual_fields);

static const struct snapjs_field op_fields[] = {
	OP("kind", SJ_ENUM, kind, .sub = snap_op_kind_names),
	OP("status", SJ_ENUM, status, .sub = snap_status_names),
	OP("comm", SJ_INT, comm, .min = -1, .max = SJ_LAST_COMM, .def = -1),
	OP("peer", SJ_INT, peer_local, .min = -1, .max = INT_MAX, .def = -1),
	OP("peer_global", SJ_INT, peer_global, .min = -1,
	   .max = SJ_LAST_RANK, .def = -1),
	OP("tag", SJ_INT, tag, .min = INT_MIN, .max = INT_MAX),
	OP("any_tag", SJ_BOOL, any_tag),
	OP("length", SJ_U64, length),
	OP("buffer", SJ_ADDR, buffer),
	OP("system_buffer", SJ_BOOL, system_buffer),
	SJ_SUB("actual", actual_fields),
	OP("request", SJ_ADDR, request),
	OP("corrected", SJ_BOOL, status_corrected),
	SJ_CALL("extra", read_extra),
	OP("source", SJ_ENUM, source, .sub = snap_source_names),
	OP("type", SJ_STR, req_type),
	OP("datatype", SJ_STR, datatype),
	OP("count", SJ_U64, count),
	OP("seq", SJ_U64, sequence),
	{ NULL },
};
SJ_TABLE_FITS(op_fields);

static const struct snapjs_list op_list = {
	op_fields, sizeof(struct snap_op), 1 << 24, "an \"ops\" entry", "kind",
	true, check_op,
};

/* Frame numbers are indexes into the frames. */
static int check_thread(struct snapread *r, const struct snapjs_node *o,
			void *entry)
{
	const struct snap_thread *t = entry;

	return recheck(&r->j, o, "mpi_frame", t->mpi_frame, -1,
		       t->nframes - 1) ||
		       recheck(&r->j, o, "user_frame", t->user_frame, -1,
			       t->nframes - 1)
		       ? -MD_E_INPUT
		       : 0;
}

#define FR(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct snap_frame, field, __VA_ARGS__)

static const struct snapjs_field frame_fields[] = {
	FR("pc", SJ_ADDR, pc),
	FR("func", SJ_STR, func),
	FR("object", SJ_STR, object),
	FR("file", SJ_STR, file),
	FR("line", SJ_INT, line, .max = INT_MAX),
	{ NULL },
};
SJ_TABLE_FITS(frame_fields);

static const struct snapjs_list frame_list = {
	frame_fields, sizeof(struct snap_frame), 1 << 20,
	"a \"frames\" entry", NULL, false, NULL,
};

#define TH(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct snap_thread, field, __VA_ARGS__)

static const struct snapjs_field thread_fields[] = {
	TH("tid", SJ_INT, tid, .max = INT_MAX),
	TH("call", SJ_STR, mpi_call),
	TH("progress_thread", SJ_BOOL, progress_thread),
	TH("frames", SJ_LIST, frames, .sub = &frame_list,
	   .count = offsetof(struct snap_thread, nframes)),
	TH("mpi_frame", SJ_INT, mpi_frame, .min = -1, .max = INT_MAX,
	   .def = -1),
	TH("user_frame", SJ_INT, user_frame, .min = -1, .max = INT_MAX,
	   .def = -1),
	{ NULL },
};
SJ_TABLE_FITS(thread_fields);

static const struct snapjs_list thread_list = {
	thread_fields, sizeof(struct snap_thread), 1 << 20,
	"a \"threads\" entry", NULL, false, check_thread,
};

/* A peer or tag of a track record: an int, or the names snapwrite.c
 * gives the special values (SNAP_TRACK_ANY and the two after it). */
static int track_num(struct snapread *r, const struct snapjs_field *f,
		     const struct snapjs_node *n, void *base)
{
	static const char *const names[] = { "any", "proc_null", "root" };
	int *p = (int *)((char *)base + f->off);
	int64_t v = SNAP_TRACK_NONE;

	for (int i = 0; n && n->type == SNAPJS_STR && i < 3; i++)
		if (!strcmp(n->s, names[i])) {
			*p = SNAP_TRACK_ANY + i;
			return 0;
		}
	if (n && n->type == SNAPJS_STR)
		return snapjs_fail(&r->j, snapjs_col(&r->j, n),
				   "\"%s\" must be an integer, \"any\", "
				   "\"proc_null\" or \"root\"",
				   f->key);
	if (n && snapjs_num(&r->j, n, f->key, NULL, -1000, INT_MAX, &v))
		return -MD_E_INPUT;
	*p = (int)v;
	return 0;
}

#define TR(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct snap_track_rec, field, __VA_ARGS__)

static const struct snapjs_field rec_fields[] = {
	TR("kind", SJ_ENUM, kind, .sub = snap_track_kind_names,
	   .def = SNAP_TRACK_POST),
	TR("call", SJ_STR, call),
	TR("comm", SJ_INT, comm, .min = -1, .max = SJ_LAST_COMM, .def = -1),
	TR("peer", SJ_FN, peer, .fn = track_num),
	TR("tag", SJ_FN, tag, .fn = track_num),
	TR("count", SJ_INT, count, .min = INT_MIN, .max = INT_MAX),
	TR("line", SJ_INT, line, .max = INT_MAX),
	TR("seq", SJ_U64, seq),
	TR("ncalls", SJ_U64, ncalls),
	TR("request", SJ_ADDR, request),
	TR("comm_handle", SJ_ADDR, comm_handle),
	TR("datatype", SJ_ADDR, datatype),
	TR("op", SJ_ADDR, op),
	TR("ret", SJ_ADDR, ret),
	TR("comm_name", SJ_STR, comm_name),
	TR("datatype_name", SJ_STR, datatype_name),
	TR("op_name", SJ_STR, op_name),
	TR("func", SJ_STR, func),
	TR("file", SJ_STR, file),
	{ NULL },
};
SJ_TABLE_FITS(rec_fields);

static const struct snapjs_list rec_list = {
	rec_fields, sizeof(struct snap_track_rec), 1 << 20,
	"a \"track\" record", "call", false, NULL,
};

#define RK(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct snap_rank, field, __VA_ARGS__)

static const struct snapjs_field track_fields[] = {
	RK("dropped", SJ_U64, track_dropped),
	RK("recs", SJ_LIST, track, .sub = &rec_list,
	   .count = offsetof(struct snap_rank, ntrack)),
	{ NULL },
};
SJ_TABLE_FITS(track_fields);

/* libmdtrack.so's records (doc/snapshot-format.md). */
static int read_track(struct snapread *r, const struct snapjs_field *f,
		      const struct snapjs_node *t, void *base)
{
	struct snap_rank *k = base;

	if (snapjs_check(&r->j, t, f->key, SNAPJS_OBJ, 0))
		return -MD_E_INPUT;
	k->tracked = t != NULL;
	return t ? snapjs_fields(r, t, track_fields, k) : 0;
}

static const struct snapjs_field site_fields[] = {
	RK("func", SJ_STR, call_func),
	RK("file", SJ_STR, call_file),
	RK("line", SJ_INT, call_line, .max = INT_MAX),
	{ NULL },
};
SJ_TABLE_FITS(site_fields);

static const struct snapjs_field rank_fields[] = {
	RK("pid", SJ_INT, pid, .max = INT_MAX),
	RK("host", SJ_STR, host),
	RK("exe", SJ_STR, exe),
	RK("collected_on", SJ_STR, collected_on),
	RK("state", SJ_ENUM, state, .sub = snap_state_names),
	RK("progress", SJ_ENUM, progress, .sub = snap_progress_names),
	RK("call", SJ_STR, mpi_call),
	SJ_SUB("site", site_fields),
	SJ_CALL("members", read_members),
	RK("unexpected", SJ_BOOL, unexpected_available),
	RK("ob1", SJ_BOOL, ob1),
	SJ_CALL("queues", read_queues),
	RK("ops", SJ_LIST, ops, .sub = &op_list,
	   .count = offsetof(struct snap_rank, nops)),
	RK("threads", SJ_LIST, threads, .sub = &thread_list,
	   .count = offsetof(struct snap_rank, nthreads)),
	SJ_CALL("track", read_track),
	RK("reason", SJ_STR, reason),
	{ NULL },
};
SJ_TABLE_FITS(rank_fields);

/* The rank's number: the next one, after all communicators. */
static int rank_number(struct snapread *r, const struct snapjs_node *o,
		       int *idx)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *n = snapjs_get(j, o, "rank");
	int64_t v;

	if (snapjs_num(j, n, "rank", NULL, 0, INT_MAX, &v))
		return -MD_E_INPUT;
	*idx = (int)v;
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
	int most = r->held >= 0 ? r->held : r->nranks;
	long long cap = r->held >= 0 || r->size >= 0 ? most : r->ranks_cap;

	if (idx < r->ranks_cap)
		return;
	while (cap <= idx)
		cap = cap ? 2 * cap : 64;
	if (cap > most)
		cap = most;
	s->ranks = xrealloc(s->ranks, (size_t)cap * sizeof(*s->ranks));
	r->ranks_cap = (int)cap;
}

int snapread_rank(struct snapread *r, const struct snapjs_node *o)
{
	struct snapjs *j = &r->j;
	struct snap_rank *k;
	int idx;

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
	if (snapjs_fields(r, o, rank_fields, k))
		return -MD_E_INPUT;
	r->ranks_read++;
	return 0;
}
