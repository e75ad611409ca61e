/*
 * track.c - read libmdtrack.so's table from a stopped rank.  The rank
 * is stopped, so the table does not move under us; a record that a
 * thread was writing when it stopped reads as empty (posts: site 0 or a
 * check byte that does not match; inits and colls: a stale stamp or 0)
 * and is skipped.
 */
#include "track.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "mdtrack.h"
#include "mpicall.h"
#include "mpich_handle.h"

static const char *const call_names[MDT_NCALLS] = {
	[MDT_CALL_NONE] = NULL,
#define MDT_NAME(name, kind) [MDT_##name] = #name,
	MDT_CALLS(MDT_NAME)
#undef MDT_NAME
};

/*
 * Predefined handles by name.  Open MPI's handles are the addresses of
 * its objects, named by the rule below; MPICH's are constants.
 */
static const char *const dt_names[] = {
	"MPI_CHAR", "MPI_SIGNED_CHAR", "MPI_UNSIGNED_CHAR", "MPI_BYTE",
	"MPI_SHORT", "MPI_UNSIGNED_SHORT", "MPI_INT", "MPI_UNSIGNED",
	"MPI_LONG", "MPI_UNSIGNED_LONG", "MPI_LONG_LONG_INT",
	"MPI_UNSIGNED_LONG_LONG", "MPI_FLOAT", "MPI_DOUBLE",
	"MPI_LONG_DOUBLE", "MPI_WCHAR", "MPI_C_BOOL", "MPI_INT8_T",
	"MPI_INT16_T", "MPI_INT32_T", "MPI_INT64_T", "MPI_UINT8_T",
	"MPI_UINT16_T", "MPI_UINT32_T", "MPI_UINT64_T", "MPI_AINT",
	"MPI_COUNT", "MPI_OFFSET", "MPI_C_FLOAT_COMPLEX",
	"MPI_C_DOUBLE_COMPLEX", "MPI_FLOAT_INT", "MPI_DOUBLE_INT",
	"MPI_LONG_INT", "MPI_2INT", "MPI_SHORT_INT", "MPI_LONG_DOUBLE_INT",
	"MPI_PACKED", NULL,
};
static const char *const op_names[] = {
	"MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND",
	"MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC",
	"MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP", NULL,
};
static const char *const comm_names[] = {
	"MPI_COMM_WORLD", "MPI_COMM_SELF", NULL,
};
/* The same names' handles in MPICH's mpi.h (MPICH 3.1 on keep them: the
 * MPICH ABI, also Intel MPI's and Cray MPICH's; the sizes in bits 8-15
 * are x86-64's), where handles are ints (mdt_table.handle_size 4). */
static const uint32_t mpich_dt[] = {
	0x4c000101, 0x4c000118, 0x4c000102, 0x4c00010d, 0x4c000203,
	0x4c000204, 0x4c000405, 0x4c000406, 0x4c000807, 0x4c000808,
	0x4c000809, 0x4c000819, 0x4c00040a, 0x4c00080b, 0x4c00100c,
	0x4c00040e, 0x4c00013f, 0x4c000137, 0x4c000238, 0x4c000439,
	0x4c00083a, 0x4c00013b, 0x4c00023c, 0x4c00043d, 0x4c00083e,
	0x4c000843, 0x4c000845, 0x4c000844, 0x4c000840, 0x4c001041,
	0x8c000000, 0x8c000001, 0x8c000002, 0x4c000816, 0x8c000003,
	0x8c000004, 0x4c00010f,
};
static const uint32_t mpich_op[] = {
	0x58000001, 0x58000002, 0x58000003, 0x58000004, 0x58000005,
	0x58000006, 0x58000007, 0x58000008, 0x58000009, 0x5800000a,
	0x5800000c, 0x5800000b, 0x5800000d, 0x5800000e,
};
_Static_assert(sizeof(mpich_dt) / sizeof(mpich_dt[0]) + 1 ==
			       sizeof(dt_names) / sizeof(dt_names[0]) &&
		       sizeof(mpich_op) / sizeof(mpich_op[0]) + 1 ==
			       sizeof(op_names) / sizeof(op_names[0]),
	       "one MPICH handle per name");

/* "MPI_INT" -> "ompi_mpi_int", "MPI_SUM" -> "ompi_mpi_op_sum". */
static const char *handle_name(const struct es_view *v, uint64_t h,
			       const char *const *names, const char *infix)
{
	char sym[64];
	uint64_t addr;

	if (!h)
		return NULL;
	for (int i = 0; names[i]; i++) {
		size_t n = (size_t)snprintf(sym, sizeof(sym), "ompi_mpi_%s%s",
					    infix, names[i] + 4);

		for (size_t k = 9; k < n && k < sizeof(sym); k++)
			sym[k] = (char)tolower((unsigned char)sym[k]);
		if (es_proc_lookup(v, sym, &addr) == 0 && addr == h)
			return names[i];
	}
	return NULL;
}

/*
 * The context id of the communicator of handle h: Open MPI's handle is
 * the address of its ompi_communicator_t, MPICH's an int that names an
 * MPIR_Comm in its pools (mpich_handle.h).  Both DLLs' communicators
 * are named by that id (MPICH's through the host: mqd_mpich.h).
 */
static int comm_context_id(const struct trk_ctx *x, uint64_t h,
			   uint32_t *cid)
{
	const struct dt_type *ty;
	int off;

	if (dt_find_type(x->types, "ompi_communicator_t", &ty) < 0)
		return mph_comm_context_id(x->t, x->view, x->types, h, cid);
	off = dt_field_offset(ty, "c_contextid");
	if (off < 0)
		return -MD_E_NOTYPES;
	return tgt_read(x->t, h + (uint64_t)off, cid, 4);
}

/* The rank's communicator (the DLL's) of handle h, or -1. */
static int comm_index(const struct trk_ctx *x, const struct snap_rank *r,
		      uint64_t h)
{
	uint32_t cid;

	if (!x->types || !h || comm_context_id(x, h, &cid) < 0)
		return -1;
	for (int i = 0; i < r->nmembers; i++)
		if (x->s->comms[r->members[i].comm].id == cid)
			return r->members[i].comm;
	return -1;
}

/* May a record of communicator handle h be the operation op's?  The
 * handle is read only where it can rule the record out (op's
 * communicator is known); a handle that names none of the rank's
 * communicators rules nothing out. */
static bool comm_may_be(const struct trk_ctx *x, const struct snap_rank *r,
			const struct snap_op *op, uint64_t h)
{
	int c;

	return op->comm < 0 || (c = comm_index(x, r, h)) < 0 || c == op->comm;
}

static void site(const struct trk_ctx *x, uint64_t ret,
		 struct snap_track_rec *t)
{
	const struct es_object *obj = ret ? es_proc_object_at(x->view, ret - 1)
					  : NULL;
	const struct dl_table *tbl;
	struct dl_loc loc;

	if (!obj)
		return;
	/* ret - 1: the line of the call, not of what follows it. */
	if (dl_cache_get(x->lines, obj->path, obj->img, &tbl) == 0 &&
	    dl_lookup(tbl, ret - 1 - obj->bias, &loc) == 0) {
		t->func = snap_str(x->s, loc.func);
		t->file = snap_str(x->s, loc.file);
		t->line = loc.line;
	}
	if (!t->func && obj->img &&
	    es_addr_to_name(obj->img, ret - 1 - obj->bias, &t->func, NULL) == 0)
		t->func = snap_str(x->s, t->func);
}

/* A predefined datatype's or operation's name: by MPICH's constants
 * where handles are ints, else by Open MPI's symbols. */
static const char *dt_op_name(const struct trk_ctx *x,
			      const struct mdt_table *tb, uint64_t h, bool op)
{
	const char *const *names = op ? op_names : dt_names;
	const uint32_t *mpich = op ? mpich_op : mpich_dt;

	if (tb->handle_size != 4)
		return handle_name(x->view, h, names, op ? "op_" : "");
	for (int i = 0; h && names[i]; i++)
		if (mpich[i] == h)
			return names[i];
	return NULL;
}

/* The predefined communicators by their handles in the table (MPICH's
 * constants), else by Open MPI's symbols. */
static const char *comm_name(const struct trk_ctx *x,
			     const struct mdt_table *tb, uint64_t h)
{
	if (h && h == tb->comm_world)
		return "MPI_COMM_WORLD";
	if (h && h == tb->comm_self)
		return "MPI_COMM_SELF";
	return handle_name(x->view, h, comm_names, "");
}

static void fill(const struct trk_ctx *x, const struct mdt_table *tb,
		 const struct snap_rank *r,
		 enum snap_track_kind kind, int call, uint64_t seq,
		 uint64_t req, uint64_t comm, int peer, int tag, int count,
		 uint64_t dt, uint64_t op, uint64_t ret,
		 struct snap_track_rec *t)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->call = call > 0 && call < MDT_NCALLS ? call_names[call] : "?";
	t->seq = seq;
	t->request = req;
	t->comm_handle = comm;
	t->comm_name = comm_name(x, tb, comm);
	t->comm = comm ? comm_index(x, r, comm) : -1;
	t->peer = peer;
	t->tag = tag;
	t->count = count;
	t->datatype = dt;
	t->datatype_name = dt_op_name(x, tb, dt, false);
	t->op = op;
	t->op_name = dt_op_name(x, tb, op, true);
	t->ret = ret;
	site(x, ret, t);
}

/* Is ring slot i's record one of the last n (not torn, not stale)? */
static bool valid(const struct mdt_rec *ring, unsigned n, uint64_t head,
		  unsigned i)
{
	uint64_t st = ring[i].stamp;

	return st && (st - 1) % n == i && st <= head &&
	       (head <= n || st > head - n);
}

/* The latest record in a ring with request req, or -1. */
static int latest(const struct mdt_rec *ring, unsigned n, uint64_t head,
		  uint64_t req)
{
	int best = -1;

	for (unsigned i = 0; i < n && i < head; i++)
		if (ring[i].request == req && valid(ring, n, head, i) &&
		    (best < 0 || ring[i].stamp > ring[best].stamp))
			best = (int)i;
	return best;
}

static struct snap_track_rec *add(struct snap_rank *r, int *cap)
{
	if (r->ntrack == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		r->track = xrealloc(r->track, (size_t)*cap * sizeof(*r->track));
	}
	return &r->track[r->ntrack++];
}

/* The library keeps peer and tag as passed: its MPI's values. */
static int norm_peer(const struct mdt_table *tb, int p)
{
	return p == tb->any_source ? SNAP_TRACK_ANY
	       : p == tb->proc_null ? SNAP_TRACK_PROC_NULL
	       : p == tb->root ? SNAP_TRACK_ROOT : p;
}

/* A call's peer or root as passed, or MDT_NONE. */
static int peer_or_none(const struct mdt_table *tb, int p)
{
	return p == MDT_NONE ? SNAP_TRACK_NONE : norm_peer(tb, p);
}

static int tag_of(const struct mdt_table *tb, int tag)
{
	return tag == MDT_NONE ? SNAP_TRACK_NONE
	       : tag == tb->any_tag ? SNAP_TRACK_ANY : tag;
}

static void add_init(const struct trk_ctx *x, const struct mdt_table *tb,
		     struct snap_rank *r, int *cap, const struct mdt_rec *m)
{
	fill(x, tb, r, SNAP_TRACK_INIT, m->call, m->stamp, m->request, m->comm,
	     peer_or_none(tb, m->peer), tag_of(tb, m->tag), m->count,
	     m->datatype, 0, m->ret, add(r, cap));
}

/* A post keeps no count, datatype or operation (a nonblocking
 * collective's are in its colls record): a point-to-point post takes the
 * count and datatype name of its pending operation, read from the
 * request as passed.  One post per request: seq 0. */
static void add_post(const struct trk_ctx *x, const struct mdt_table *tb,
		     struct snap_rank *r, int *cap, const struct mdt_post *p,
		     const struct snap_op *op, uint64_t req)
{
	struct snap_track_rec *t = add(r, cap);

	fill(x, tb, r, SNAP_TRACK_POST, MDT_SITE_CALL(p->site), 0, req,
	     p->comm, peer_or_none(tb, p->peer), tag_of(tb, p->tag), 0, 0, 0,
	     MDT_SITE_RET(p->site), t);
	if (p->tag != MDT_NONE && op->datatype) {
		t->count = op->count > INT_MAX ? INT_MAX : (int)op->count;
		t->datatype_name = op->datatype;
	}
}

static bool is_start(int call)
{
	return call == MDT_MPI_Start || call == MDT_MPI_Startall;
}

static bool kind_is(int call, char kind)
{
	switch (call) {
#define MDT_KIND(name, k)                                                   \
	case MDT_##name:                                                    \
		return k == kind;
		MDT_CALLS(MDT_KIND)
#undef MDT_KIND
	}
	return false;
}

static bool is_p2p(int call)
{
	return kind_is(call, 's') || kind_is(call, 'r');
}

/* Do a call's arguments (peer and tag as passed) say it is the pending
 * operation op? */
static bool args_match(const struct mdt_table *tb, int call, int32_t peer,
		       int32_t tag, const struct snap_op *op)
{
	int np = norm_peer(tb, peer);

	if (!kind_is(call, op->kind == SNAP_OP_SEND ? 's' : 'r'))
		return false;
	if (op->peer_local < 0 ? np != SNAP_TRACK_ANY : np != op->peer_local)
		return false;
	return op->any_tag ? tag == tb->any_tag
			   : tag != tb->any_tag && tag == op->tag;
}

/* A whole posts record (site written, its check byte that of its
 * location) and the handle its request variable holds now. */
struct held {
	uint64_t handle;
	const struct mdt_post *p;
};

/* The table's whole posts records by the handles they hold, sorted;
 * and every whole record of a variable, whatever it holds. */
struct posts {
	struct held *v;
	int n;
	const struct mdt_post **var;
	int nvar;
};

static int by_handle(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	return (x->handle > y->handle) - (x->handle < y->handle);
}

/*
 * A posts record names where the caller kept the request; the handle
 * is read there now (a held record names it: the request was still in
 * its variable when that was posted through again).  A variable that no
 * longer holds its request reads as another handle (MPI_REQUEST_NULL
 * once the request completed through it) and joins nothing; one that
 * holds a request posted elsewhere is sorted out by the call's
 * arguments (post_of).
 */
static int read_posts(const struct trk_ctx *x, const struct mdt_table *tb,
		      struct posts *ps)
{
	ps->v = xmalloc(sizeof(*ps->v) * MDT_NBUCKETS * MDT_WAYS);
	ps->var = xmalloc(sizeof(*ps->var) * MDT_NBUCKETS * MDT_WAYS);
	ps->n = ps->nvar = 0;
	for (unsigned i = 0; i < MDT_NBUCKETS; i++)
		for (int w = 0; w < MDT_WAYS; w++) {
			const struct mdt_post *p = &tb->posts[i][w];
			uint64_t h = 0;
			int rc;

			if (!mdt_post_valid(p, i, tb->handle_size))
				continue;
			/* A held record names its handle. */
			if (p->site & MDT_SITE_HELD) {
				h = p->loc;
			} else {
				ps->var[ps->nvar++] = p;
				rc = tgt_read(x->t, p->loc, &h, tb->handle_size);
				if (rc == -MD_E_GONE)
					return rc;
				if (rc < 0)
					continue;
			}
			/* Its request completed through it (or a post
			 * through it is being written: see mdtrack.h). */
			if (!h || h == tb->request_null)
				continue;
			ps->v[ps->n++] = (struct held){ h, p };
		}
	qsort(ps->v, (size_t)ps->n, sizeof(*ps->v), by_handle);
	return 0;
}

/* The same call at the same place (a held record's flag and either
 * record's check byte aside). */
static bool same_site(uint64_t a, uint64_t b)
{
	return MDT_SITE_RET(a) == MDT_SITE_RET(b) &&
	       MDT_SITE_CALL(a) == MDT_SITE_CALL(b);
}

/*
 * The posts record of request req, or NULL.  Several records whose
 * variables hold req (a request copied to another variable before its
 * first one was posted through again, and recycled): the one whose call
 * arguments are the pending operation op's (when op is given), if just
 * one is or all that are share one call site; else none.
 */
static const struct mdt_post *post_of(const struct mdt_table *tb,
				      const struct posts *ps, uint64_t req,
				      const struct snap_op *op)
{
	struct held key = { req, NULL }, *h;
	const struct mdt_post *found = NULL;
	int lo, hi, nmatch = 0;

	h = bsearch(&key, ps->v, (size_t)ps->n, sizeof(*ps->v), by_handle);
	if (!h)
		return NULL;
	for (lo = (int)(h - ps->v); lo > 0 && ps->v[lo - 1].handle == req;)
		lo--;
	for (hi = (int)(h - ps->v);
	     hi + 1 < ps->n && ps->v[hi + 1].handle == req;)
		hi++;
	if (lo == hi)
		return ps->v[lo].p;
	for (int i = lo; i <= hi; i++) {
		const struct mdt_post *p = ps->v[i].p;

		if (op && is_p2p(MDT_SITE_CALL(p->site)) &&
		    !args_match(tb, MDT_SITE_CALL(p->site), p->peer, p->tag,
				op))
			continue;
		if (found && !same_site(found->site, p->site))
			return NULL;
		found = p;
		nmatch++;
	}
	return nmatch ? found : NULL;
}

/* Is the persistent request of inits[i] started (its post an MPI_Start
 * or MPI_Startall) and inits[i] its latest creation? */
static bool started_init(const struct mdt_table *tb, const struct posts *ps,
			 unsigned i)
{
	const struct mdt_rec *c = &tb->inits[i];
	const struct mdt_post *p = post_of(tb, ps, c->request, NULL);

	return c->request && p && is_start(MDT_SITE_CALL(p->site)) &&
	       latest(tb->inits, MDT_NINITS, tb->inits_head, c->request) ==
		       (int)i;
}

/*
 * May a point-to-point operation of r be joined to a post by its
 * arguments?  Only for a rank that waits on requests (MPI_Wait*,
 * MPI_Test*) or is outside MPI: in a blocking receive or a collective, a
 * pending operation may be the call's own (a collective's internal
 * messages have small tags too) and an old post with the same arguments
 * is not its posting.
 */
static bool by_args(const struct snap_rank *r, const struct snap_op *op)
{
	/* Outside MPI every pending operation is one the program posted. */
	enum md_call_class cls = r->mpi_call ? md_call_class(r->mpi_call)
					     : MD_CALL_POLL;

	return (op->kind == SNAP_OP_SEND || op->kind == SNAP_OP_RECV) &&
	       md_call_on_requests(cls);
}

/*
 * The request of a pending operation the DLL gives none for (MPICH's
 * gives no request): the one post, or started persistent request (its
 * MPI_Start post and its creation's arguments), whose call, peer and tag
 * are the operation's, or 0 when none or requests of several handles
 * are (by_args says where), on the operation's communicator where the
 * record's handle names one (comm_may_be).
 */
static uint64_t request_by_args(const struct trk_ctx *x,
				const struct mdt_table *tb,
				const struct posts *ps,
				const struct snap_rank *r,
				const struct snap_op *op)
{
	uint64_t found = 0;

	if (!by_args(r, op))
		return 0;
	for (int i = 0; i < ps->n; i++) {
		const struct mdt_post *p = ps->v[i].p;

		if (!args_match(tb, MDT_SITE_CALL(p->site), p->peer, p->tag,
				op) ||
		    !comm_may_be(x, r, op, p->comm))
			continue;
		if (found && found != ps->v[i].handle)
			return 0;
		found = ps->v[i].handle;
	}
	/* A started persistent request: its arguments are its creation's. */
	for (unsigned i = 0; i < MDT_NINITS && i < tb->inits_head; i++) {
		const struct mdt_rec *c = &tb->inits[i];

		if (!started_init(tb, ps, i) ||
		    !args_match(tb, c->call, c->peer, c->tag, op) ||
		    !comm_may_be(x, r, op, c->comm))
			continue;
		if (found && found != c->request)
			return 0;
		found = c->request;
	}
	return found;
}

/*
 * The posting of a pending request no record names.  A post through a
 * variable that still holds an earlier request, by the call at the
 * place and with the arguments of the variable's record, writes nothing
 * (a loop: mdtrack.h), so the earlier request, copied out of the
 * variable, is named by no record: its posting is the variable's
 * record, with the operation's call, peer, tag and communicator.  Taken
 * when all such records are of one call site, for a rank that waits on
 * requests or is outside MPI (by_args), from a table that dropped no
 * record (a dropped one may have been the request's own).
 */
static const struct mdt_post *orphan_post(const struct trk_ctx *x,
					  const struct mdt_table *tb,
					  const struct posts *ps,
					  const struct snap_rank *r,
					  const struct snap_op *op)
{
	const struct mdt_post *found = NULL;

	if (!by_args(r, op) || tb->posts_dropped)
		return NULL;
	for (int i = 0; i < ps->nvar; i++) {
		const struct mdt_post *p = ps->var[i];
		int call = MDT_SITE_CALL(p->site);

		if (!is_p2p(call) || !args_match(tb, call, p->peer, p->tag, op) ||
		    !comm_may_be(x, r, op, p->comm))
			continue;
		if (found && !same_site(found->site, p->site))
			return NULL;
		found = p;
	}
	return found;
}

/* Each pending request's posting (and a start's creation), once. */
static void join_ops(const struct trk_ctx *x, const struct mdt_table *tb,
		     const struct posts *ps, struct snap_rank *r, int *cap)
{
	for (int i = 0; i < r->nops; i++) {
		struct snap_op *op = &r->ops[i];
		const struct mdt_post *p;
		uint64_t req;
		int q, dup = 0;

		if (op->kind == SNAP_OP_UNEXPECTED)
			continue;
		if (!op->request && op->status == SNAP_ST_PENDING)
			op->request = request_by_args(x, tb, ps, r, op);
		req = op->request;
		if (!req)
			continue;
		for (int k = 0; k < r->ntrack; k++)
			dup |= r->track[k].request == req;
		if (dup)
			continue;
		p = post_of(tb, ps, req, op);
		q = latest(tb->inits, MDT_NINITS, tb->inits_head, req);
		if (!p && q < 0)
			p = orphan_post(x, tb, ps, r, op);
		if (p)
			add_post(x, tb, r, cap, p, op, req);
		if (p && !is_start(MDT_SITE_CALL(p->site)))
			continue;
		if (q >= 0)
			add_init(x, tb, r, cap, &tb->inits[q]);
	}
}

static void add_colls(const struct trk_ctx *x, const struct mdt_table *tb,
		      struct snap_rank *r, int *cap)
{
	for (unsigned i = 0; i < MDT_NCOLLS; i++) {
		const struct mdt_coll *c = &tb->colls[i];
		struct snap_track_rec *t;

		if (!c->comm || !c->stamp)
			continue;
		t = add(r, cap);
		fill(x, tb, r, SNAP_TRACK_COLL, c->call, c->stamp, 0, c->comm,
		     c->root, SNAP_TRACK_NONE, c->count, c->datatype, c->op,
		     c->ret, t);
		t->ncalls = c->ncalls;
	}
}

/* The polling calls' count and last site, if the rank made any. */
static void add_polls(const struct trk_ctx *x, const struct mdt_table *tb,
		      struct snap_rank *r, int *cap)
{
	if (!tb->polls || !tb->poll_site)
		return;
	fill(x, tb, r, SNAP_TRACK_POLL, MDT_SITE_CALL(tb->poll_site),
	     tb->polls, 0, 0, SNAP_TRACK_NONE, SNAP_TRACK_NONE, 0, 0, 0,
	     MDT_SITE_RET(tb->poll_site), add(r, cap));
}

int trk_read(const struct trk_ctx *x, struct snap_rank *r)
{
	struct mdt_table *tb;
	struct posts ps;
	uint64_t addr;
	int rc, cap = 0;

	if (es_proc_lookup(x->view, MDT_SYMBOL, &addr) < 0)
		return 0;
	tb = xmalloc(sizeof(*tb));
	rc = tgt_read(x->t, addr, tb, sizeof(*tb));
	if (rc < 0) {
		free(tb);
		return rc == -MD_E_GONE ? rc : 0;
	}
	if (tb->magic != MDT_MAGIC || tb->version != MDT_VERSION ||
	    tb->size != sizeof(*tb) ||
	    tb->post_size != sizeof(tb->posts[0][0]) ||
	    tb->rec_size != sizeof(tb->inits[0]) ||
	    tb->coll_size != sizeof(tb->colls[0]) ||
	    tb->nbuckets != MDT_NBUCKETS || tb->ways != MDT_WAYS ||
	    tb->ninits != MDT_NINITS || tb->ncolls != MDT_NCOLLS ||
	    (tb->handle_size != 4 && tb->handle_size != 8)) {
		if (!*x->noted)
			snap_note(x->s, "rank %d: libmdtrack.so table of version %u "
				  "(this mpi-deadlock reads version %d): not "
				  "read; use the library installed with this "
				  "mpi-deadlock",
				  x->rank, tb->version, MDT_VERSION);
		*x->noted = true;
		free(tb);
		return 0;
	}
	r->tracked = true;
	r->track_dropped = tb->posts_dropped +
			   (tb->inits_head > MDT_NINITS
				    ? tb->inits_head - MDT_NINITS : 0) +
			   tb->coll_dropped;
	rc = read_posts(x, tb, &ps);
	if (rc == 0) {
		join_ops(x, tb, &ps, r, &cap);
		add_colls(x, tb, r, &cap);
		add_polls(x, tb, r, &cap);
	}
	free(ps.v);
	free(ps.var);
	free(tb);
	return rc;
}
