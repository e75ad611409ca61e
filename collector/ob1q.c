/*
 * ob1q.c - walk Open MPI ob1's matching queues in a stopped rank (see
 * ob1q.h).  Layouts are resolved once per library into a table of
 * offsets; a walk reads each structure in one block and picks the fields
 * out of it.
 */
#include "ob1q.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/*
 * Every size and offset the walk uses: X(id, type, member) an offset,
 * S(id, type) a sizeof.  The *_0 entries are members the walk takes to be at
 * offset 0 (a request or fragment is its own list item); the layout is
 * refused when one is not.
 */
#define OB1_LAYOUT(X, S)                                                     \
	X(PA_ADDR, "opal_pointer_array_t", "addr")                        \
	X(PA_SIZE, "opal_pointer_array_t", "size")                        \
	X(CM_CID, "ompi_communicator_t", "c_contextid")                   \
	X(CM_PML, "ompi_communicator_t", "c_pml_comm")                    \
	X(PC_WILD, "mca_pml_ob1_comm_t", "wild_receives")                 \
	X(PC_PROCS, "mca_pml_ob1_comm_t", "procs")                        \
	X(PC_NPROCS, "mca_pml_ob1_comm_t", "num_procs")                   \
	S(PC_SIZE, "mca_pml_ob1_comm_t")                            \
	X(PP_EXPSEQ, "mca_pml_ob1_comm_proc_t", "expected_sequence")      \
	X(PP_CANT, "mca_pml_ob1_comm_proc_t", "frags_cant_match")         \
	X(PP_SPEC, "mca_pml_ob1_comm_proc_t", "specific_receives")        \
	X(PP_UNEX, "mca_pml_ob1_comm_proc_t", "unexpected_frags")         \
	S(PP_SIZE, "mca_pml_ob1_comm_proc_t")                       \
	X(LS_SENT, "opal_list_t", "opal_list_sentinel")                   \
	X(LI_NEXT, "opal_list_item_t", "opal_list_next")                  \
	X(FI_SUPER_0, "opal_free_list_item_t", "super")                   \
	X(RQ_SUPER_0, "ompi_request_t", "super")                          \
	X(RB_OMPI_0, "mca_pml_base_request_t", "req_ompi")                \
	X(RB_TYPE, "mca_pml_base_request_t", "req_type")                  \
	X(RB_COMM, "mca_pml_base_request_t", "req_comm")                  \
	X(RB_DTYPE, "mca_pml_base_request_t", "req_datatype")             \
	X(RB_COUNT, "mca_pml_base_request_t", "req_count")                \
	X(RB_PEER, "mca_pml_base_request_t", "req_peer")                  \
	X(RB_TAG, "mca_pml_base_request_t", "req_tag")                    \
	X(RB_SEQ, "mca_pml_base_request_t", "req_sequence")               \
	X(BR_BASE_0, "mca_pml_base_recv_request_t", "req_base")           \
	X(BS_BASE_0, "mca_pml_base_send_request_t", "req_base")           \
	X(RR_RECV_0, "mca_pml_ob1_recv_request_t", "req_recv")            \
	X(RR_BYTES, "mca_pml_ob1_recv_request_t", "req_bytes_received")   \
	X(FR_SUPER_0, "mca_pml_ob1_recv_frag_t", "super")                 \
	X(FR_HDR, "mca_pml_ob1_recv_frag_t", "hdr")                       \
	X(HU_MATCH_0, "mca_pml_ob1_hdr_t", "hdr_match")                   \
	X(HU_RNDV_0, "mca_pml_ob1_hdr_t", "hdr_rndv")                     \
	X(MH_COMMON_0, "mca_pml_ob1_match_hdr_t", "hdr_common")           \
	X(MH_CTX, "mca_pml_ob1_match_hdr_t", "hdr_ctx")                   \
	X(MH_SRC, "mca_pml_ob1_match_hdr_t", "hdr_src")                   \
	X(MH_TAG, "mca_pml_ob1_match_hdr_t", "hdr_tag")                   \
	X(MH_SEQ, "mca_pml_ob1_match_hdr_t", "hdr_seq")                   \
	X(CH_TYPE, "mca_pml_ob1_common_hdr_t", "hdr_type")                \
	X(RV_LEN, "mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length")       \
	X(FL_ALLOCS, "opal_free_list_t", "fl_allocations")                \
	X(FL_FRAGSZ, "opal_free_list_t", "fl_frag_size")                  \
	X(FL_ALIGN, "opal_free_list_t", "fl_frag_alignment")              \
	X(FL_PERALLOC, "opal_free_list_t", "fl_num_per_alloc")            \
	X(FL_NALLOC, "opal_free_list_t", "fl_num_allocated")              \
	S(FI_SIZE, "opal_free_list_item_t")                               \
	X(RQ_TYPE, "ompi_request_t", "req_type")                          \
	X(RQ_STATE, "ompi_request_t", "req_state")                        \
	X(RB_PMLDONE, "mca_pml_base_request_t", "req_pml_complete")       \
	X(SR_SEND_0, "mca_pml_ob1_send_request_t", "req_send")            \
	X(SR_DELIVERED, "mca_pml_ob1_send_request_t", "req_bytes_delivered") \
	X(DT_SUPER, "ompi_datatype_t", "super")                           \
	X(DT_NAME, "ompi_datatype_t", "name")                             \
	X(OD_SIZE, "opal_datatype_t", "size")

enum {
#define OB1_ENUM(id, type, member) L_##id,
#define OB1_SENUM(id, type) L_##id,
	OB1_LAYOUT(OB1_ENUM, OB1_SENUM)
#undef OB1_ENUM
#undef OB1_SENUM
	L_COUNT
};

static const struct {
	const char *type, *member, *name;
} fields[L_COUNT] = {
#define OB1_FIELD(id, type, member) { type, member, type "." member },
#define OB1_SIZE(id, type) { type, NULL, "sizeof " type },
	OB1_LAYOUT(OB1_FIELD, OB1_SIZE)
#undef OB1_FIELD
#undef OB1_SIZE
};

struct ob1_layout {
	long v[L_COUNT];
	/* Bytes to read of a request (posted, and from the free lists: a
	 * receive, a send) and of a fragment: up to the last member used. */
	size_t req_len, recv_len, send_len, frag_len;
};

/* MPI request types (mca_pml_base_request_type_t) and header types. */
enum { RT_SEND = 1, RT_RECV, RT_IPROBE, RT_PROBE, RT_IMPROBE, RT_MPROBE };
enum { HT_MATCH = 0x41, HT_RNDV = 0x42, HT_RGET = 0x43 };
#define DT_NAME_MAX 64		/* ompi_datatype_t.name is char[64] */

int ob1_layout_count(void)
{
	return L_COUNT;
}

const char *ob1_layout_name(int i)
{
	return i >= 0 && i < L_COUNT ? fields[i].name : NULL;
}

long ob1_layout_value(const struct ob1_layout *l, int i)
{
	return i >= 0 && i < L_COUNT ? l->v[i] : -1;
}

static bool must_be_zero(int i)
{
	switch (i) {
	case L_FI_SUPER_0: case L_RQ_SUPER_0: case L_RB_OMPI_0:
	case L_BR_BASE_0: case L_BS_BASE_0: case L_RR_RECV_0:
	case L_FR_SUPER_0: case L_HU_MATCH_0: case L_HU_RNDV_0:
	case L_MH_COMMON_0: case L_SR_SEND_0:
		return true;
	default:
		return false;
	}
}

static size_t max_end(const struct ob1_layout *l, const int *ids, int n)
{
	size_t end = 0;

	for (int i = 0; i < n; i++)
		if ((size_t)l->v[ids[i]] + 8 > end)
			end = (size_t)l->v[ids[i]] + 8;
	return end;
}

int ob1_layout_new(const struct mh_types_ops *types, void *ctx,
		   struct ob1_layout **out, char **missing)
{
	struct ob1_layout *l = xcalloc(1, sizeof(*l));
	static const int req_ids[] = { L_RB_TYPE, L_RB_COMM, L_RB_DTYPE,
				       L_RB_COUNT, L_RB_PEER, L_RB_TAG,
				       L_RB_SEQ, L_RR_BYTES };
	int i;

	*out = NULL;
	*missing = NULL;
	for (i = 0; i < L_COUNT; i++) {
		void *t;
		long v = -1;

		if (types->find(ctx, fields[i].type, &t) == 0)
			v = fields[i].member
				? types->offset(ctx, t, fields[i].member)
				: types->size(ctx, t);
		if (v < 0 || (must_be_zero(i) && v != 0)) {
			*missing = v < 0 ? xstrdup(fields[i].name)
					 : xasprintf("%s at offset %ld, not 0",
						     fields[i].name, v);
			free(l);
			return -MD_E_NOTYPES;
		}
		l->v[i] = v;
	}
	l->req_len = max_end(l, req_ids, 8);
	l->recv_len = max_end(l, (const int[]){ L_RQ_TYPE, L_RQ_STATE,
						L_RB_PMLDONE }, 3);
	if (l->recv_len < l->req_len)
		l->recv_len = l->req_len;
	l->send_len = max_end(l, (const int[]){ L_RQ_TYPE, L_RQ_STATE,
						L_RB_PMLDONE, L_SR_DELIVERED,
						L_RB_TYPE, L_RB_COMM,
						L_RB_DTYPE, L_RB_COUNT,
						L_RB_PEER, L_RB_TAG,
						L_RB_SEQ }, 11);
	l->frag_len = (size_t)l->v[L_FR_HDR] +
		      max_end(l, (const int[]){ L_MH_CTX, L_MH_SRC, L_MH_TAG,
						L_MH_SEQ, L_CH_TYPE,
						L_RV_LEN }, 6);
	*out = l;
	return 0;
}

void ob1_layout_free(struct ob1_layout *l)
{
	free(l);
}

/* ---- the walk ---- */

/* A datatype seen in this walk: most requests share a few. */
struct dtname {
	uint64_t addr;
	const char *name;	/* interned; NULL: unreadable */
	uint64_t size;
};

struct walk {
	const struct ob1_layout *l;
	const struct mh_proc_ops *proc;
	void *ctx;
	struct snap *s;
	struct snap_rank *r;
	struct ob1_stats st;
	struct snap_op *ops;	/* new ops, appended to r at the end */
	int nops, cap;
	struct dtname dt[16];
	int ndt;
	bool gone;
	/* The communicator being walked. */
	uint32_t cid;
	int comm;		/* snapshot index, -1 unknown */
};

static int rd(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	int rc;

	if (!addr)
		return -MD_E_FAULT;
	rc = w->proc->read(w->ctx, addr, buf, len);
	if (rc == -MD_E_GONE)
		w->gone = true;
	return rc;
}

static uint64_t u64at(const unsigned char *b, long off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t u32at(const unsigned char *b, long off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint16_t u16at(const unsigned char *b, long off)
{
	uint16_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static const struct dtname *datatype(struct walk *w, uint64_t addr)
{
	const struct ob1_layout *l = w->l;
	char name[DT_NAME_MAX + 1];
	struct dtname *d;
	int i;

	for (i = 0; i < w->ndt; i++)
		if (w->dt[i].addr == addr)
			return &w->dt[i];
	/* A full cache starts over: a rank with many derived types. */
	if (w->ndt == (int)(sizeof(w->dt) / sizeof(w->dt[0])))
		w->ndt = 0;
	d = &w->dt[w->ndt++];
	memset(d, 0, sizeof(*d));
	d->addr = addr;
	if (rd(w, addr + l->v[L_DT_NAME], name, DT_NAME_MAX) == 0) {
		name[DT_NAME_MAX] = '\0';
		if (name[0])
			d->name = snap_str(w->s, name);
	}
	if (rd(w, addr + l->v[L_DT_SUPER] + l->v[L_OD_SIZE], &d->size,
	       sizeof(d->size)) < 0)
		d->size = 0;
	return d;
}

static struct snap_op *new_op(struct walk *w)
{
	struct snap_op *op;

	if (w->nops == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->ops = xrealloc(w->ops, (size_t)w->cap * sizeof(*w->ops));
	}
	op = &w->ops[w->nops++];
	memset(op, 0, sizeof(*op));
	op->source = SNAP_SRC_OB1;
	op->comm = w->comm;
	op->peer_global = op->actual_global = op->actual_local = -1;
	return op;
}

static int global_of(const struct walk *w, int local)
{
	const struct snap_comm *c;

	if (w->comm < 0 || local < 0)
		return -1;
	c = &w->s->comms[w->comm];
	if (!c->group || local >= c->size)
		return -1;
	return c->group[local];
}

static bool dll_has(const struct snap_rank *r, uint64_t req)
{
	for (int k = 0; k < r->nops; k++)
		if (r->ops[k].request == req && r->ops[k].source == SNAP_SRC_DLL)
			return true;
	return false;
}

static const char *type_name(uint32_t t)
{
	static const char *const names[] = { NULL, "send", "recv", "iprobe",
					     "probe", "improbe", "mprobe" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : NULL;
}

/* A posted receive or probe at req.  false: the list cannot be trusted
 * beyond it (counted as torn). */
static bool posted(struct walk *w, uint64_t req)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[1024];
	struct snap_op *op;
	uint32_t type;
	int32_t peer, tag;

	if (l->req_len > sizeof(b) || rd(w, req, b, l->req_len) < 0) {
		w->st.torn++;
		return false;
	}
	w->st.posted++;
	type = u32at(b, l->v[L_RB_TYPE]);
	/* Only receives and probes are posted: anything else is a request
	 * freed and reused while the list was read. */
	if (type < RT_RECV || type > RT_MPROBE) {
		w->st.torn++;
		return false;
	}
	if (dll_has(w->r, req))
		return true;
	peer = (int32_t)u32at(b, l->v[L_RB_PEER]);
	tag = (int32_t)u32at(b, l->v[L_RB_TAG]);
	op = new_op(w);
	op->kind = SNAP_OP_RECV;
	op->status = SNAP_ST_PENDING;
	op->req_type = type_name(type);
	op->peer_local = peer < 0 ? -1 : peer;
	op->peer_global = global_of(w, op->peer_local);
	op->any_tag = tag == -1;	/* MPI_ANY_TAG */
	op->tag = tag;
	op->request = req;
	op->sequence = u64at(b, l->v[L_RB_SEQ]);
	op->actual_length = u64at(b, l->v[L_RR_BYTES]);
	if (type == RT_RECV) {
		const struct dtname *d =
			datatype(w, u64at(b, l->v[L_RB_DTYPE]));

		op->count = u64at(b, l->v[L_RB_COUNT]);
		op->datatype = d->name;
		op->length = op->count * d->size;
	}
	return true;
}

/* An arrived fragment not yet matched; false as for posted(). */
static bool fragment(struct walk *w, uint64_t frag, const char *what)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[256];
	const unsigned char *h = b + l->v[L_FR_HDR];
	struct snap_op *op;
	unsigned htype;

	if (l->frag_len > sizeof(b) || rd(w, frag, b, l->frag_len) < 0) {
		w->st.torn++;
		return false;
	}
	htype = h[l->v[L_CH_TYPE]];
	if ((htype != HT_MATCH && htype != HT_RNDV && htype != HT_RGET) ||
	    u16at(h, l->v[L_MH_CTX]) != (uint16_t)w->cid) {
		w->st.torn++;
		return false;
	}
	w->st.frags++;
	op = new_op(w);
	op->kind = SNAP_OP_UNEXPECTED;
	op->status = SNAP_ST_PENDING;
	op->req_type = what;
	op->peer_local = op->actual_local =
		(int32_t)u32at(h, l->v[L_MH_SRC]);
	op->peer_global = op->actual_global = global_of(w, op->peer_local);
	op->tag = op->actual_tag = (int32_t)u32at(h, l->v[L_MH_TAG]);
	op->sequence = u16at(h, l->v[L_MH_SEQ]);
	/* A rendezvous leaves only its header here: the length is in it.
	 * An eager fragment's length is the sender's business. */
	if (htype != HT_MATCH)
		op->length = op->actual_length = u64at(h, l->v[L_RV_LEN]);
	return true;
}

/* Walk the opal_list_t at list, calling fn on each item, bounded. */
static void walk_list(struct walk *w, uint64_t list,
		      bool (*fn)(struct walk *, uint64_t, const char *),
		      const char *what)
{
	const struct ob1_layout *l = w->l;
	uint64_t sent = list + l->v[L_LS_SENT], next;
	int n = 0;

	if (rd(w, sent + l->v[L_LI_NEXT], &next, sizeof(next)) < 0) {
		w->st.torn++;
		return;
	}
	while (next != sent) {
		if (!next || ++n > OB1_MAX_ITEMS || w->gone) {
			w->st.torn++;
			return;
		}
		if (!fn(w, next, what))
			return;
		if (rd(w, next + l->v[L_LI_NEXT], &next, sizeof(next)) < 0) {
			w->st.torn++;
			return;
		}
	}
}

static bool posted_item(struct walk *w, uint64_t item, const char *what)
{
	(void)what;
	return posted(w, item);
}

/* frags_cant_match: a ring of fragments without a sentinel, ordered by
 * sequence.  (Each entry's "range" of consecutive fragments is not
 * walked: their headers repeat the first one's source and tag.) */
static void walk_cant_match(struct walk *w, uint64_t head)
{
	uint64_t f = head;
	int n = 0;

	while (f) {
		if (++n > OB1_MAX_ITEMS || w->gone) {
			w->st.torn++;
			return;
		}
		if (!fragment(w, f, "cant_match"))
			return;
		if (rd(w, f + w->l->v[L_LI_NEXT], &f, sizeof(f)) < 0) {
			w->st.torn++;
			return;
		}
		if (f == head)
			return;
	}
}

static void walk_proc(struct walk *w, uint64_t proc)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[512];

	if ((size_t)l->v[L_PP_SIZE] > sizeof(b) ||
	    rd(w, proc, b, (size_t)l->v[L_PP_SIZE]) < 0) {
		w->st.torn++;
		return;
	}
	walk_list(w, proc + l->v[L_PP_SPEC], posted_item, NULL);
	walk_list(w, proc + l->v[L_PP_UNEX], fragment, "unexpected");
	walk_cant_match(w, u64at(b, l->v[L_PP_CANT]));
}

/* The snapshot's communicator for context id cid among r's. */
static int comm_of(const struct walk *w, uint32_t cid)
{
	for (int i = 0; i < w->r->nmembers; i++) {
		int c = w->r->members[i].comm;

		if (c >= 0 && c < w->s->ncomms && w->s->comms[c].id == cid)
			return c;
	}
	return -1;
}

static void walk_comm(struct walk *w, uint64_t comm)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[512];
	uint64_t pml, procs, *pp;
	size_t nprocs;

	if (rd(w, comm + l->v[L_CM_CID], &w->cid, sizeof(w->cid)) < 0 ||
	    rd(w, comm + l->v[L_CM_PML], &pml, sizeof(pml)) < 0) {
		w->st.torn++;
		return;
	}
	/* MPI_COMM_NULL and communicators being set up have no ob1 state. */
	if (!pml)
		return;
	if ((size_t)l->v[L_PC_SIZE] > sizeof(b) ||
	    rd(w, pml, b, (size_t)l->v[L_PC_SIZE]) < 0) {
		w->st.torn++;
		return;
	}
	w->st.comms++;
	w->comm = comm_of(w, w->cid);
	walk_list(w, pml + l->v[L_PC_WILD], posted_item, NULL);
	procs = u64at(b, l->v[L_PC_PROCS]);
	nprocs = u64at(b, l->v[L_PC_NPROCS]);
	if (!procs || !nprocs)
		return;
	if (nprocs > OB1_MAX_PROCS) {
		w->st.torn++;
		return;
	}
	pp = xmalloc(nprocs * sizeof(*pp));
	if (rd(w, procs, pp, nprocs * sizeof(*pp)) < 0)
		w->st.torn++;
	else
		/* A NULL entry: no message with that peer yet. */
		for (size_t i = 0; i < nprocs && !w->gone; i++)
			if (pp[i])
				walk_proc(w, pp[i]);
	free(pp);
}

/* The DLL's own ops: the full datatype name behind its "MPI_". */
static void name_dll_ops(struct walk *w)
{
	const struct ob1_layout *l = w->l;
	struct snap_rank *r = w->r;

	for (int k = 0; k < r->nops && !w->gone; k++) {
		struct snap_op *op = &r->ops[k];
		uint64_t dt, count;

		if (op->source != SNAP_SRC_DLL || !op->request ||
		    op->kind == SNAP_OP_UNEXPECTED)
			continue;
		if (rd(w, op->request + l->v[L_RB_DTYPE], &dt, sizeof(dt)) <
			    0 ||
		    rd(w, op->request + l->v[L_RB_COUNT], &count,
		       sizeof(count)) < 0 || !dt)
			continue;
		op->datatype = datatype(w, dt)->name;
		op->count = count;
		w->st.named += op->datatype != NULL;
	}
}

/* ---- the request free lists: internal requests in progress ---- */

/* OMPI_REQUEST_PML and OMPI_REQUEST_ACTIVE. */
enum { RQ_PML = 0, RQ_ACTIVE = 2 };
#define OB1_MAX_FREE (1 << 16)	/* requests allocated in one free list */

static bool have_request(const struct walk *w, uint64_t req)
{
	for (int k = 0; k < w->nops; k++)
		if (w->ops[k].request == req)
			return true;
	return dll_has(w->r, req);
}

/*
 * One request of mca_pml_base_{send,recv}_requests.  The DLL shows these
 * but skips negative tags, the internal messages of collectives: only
 * those are taken here.  A receive found here and not in the posted
 * queues is matched: its data is moving (req_bytes_received grows
 * between looks, so a collective that moves data is not judged stuck).
 */
static void free_item(struct walk *w, uint64_t req, bool send)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[1024];
	size_t len = send ? l->send_len : l->recv_len;
	struct snap_op *op;
	const struct dtname *d;
	uint32_t cid;
	int32_t tag, peer;

	if (len > sizeof(b) || rd(w, req, b, len) < 0)
		return;
	if (u32at(b, l->v[L_RQ_TYPE]) != RQ_PML ||
	    u32at(b, l->v[L_RQ_STATE]) != RQ_ACTIVE ||
	    u32at(b, l->v[L_RB_PMLDONE]) != 0 ||
	    u32at(b, l->v[L_RB_TYPE]) != (send ? RT_SEND : RT_RECV))
		return;
	tag = (int32_t)u32at(b, l->v[L_RB_TAG]);
	if (tag >= -1 || have_request(w, req))
		return;
	if (rd(w, u64at(b, l->v[L_RB_COMM]) + l->v[L_CM_CID], &cid,
	       sizeof(cid)) < 0)
		return;
	w->comm = comm_of(w, cid);
	peer = (int32_t)u32at(b, l->v[L_RB_PEER]);
	d = datatype(w, u64at(b, l->v[L_RB_DTYPE]));
	op = new_op(w);
	op->kind = send ? SNAP_OP_SEND : SNAP_OP_RECV;
	op->status = send ? SNAP_ST_PENDING : SNAP_ST_MATCHED;
	op->req_type = send ? "send" : "recv";
	op->peer_local = peer < 0 ? -1 : peer;
	op->peer_global = global_of(w, op->peer_local);
	op->tag = tag;
	op->request = req;
	op->sequence = u64at(b, l->v[L_RB_SEQ]);
	op->count = u64at(b, l->v[L_RB_COUNT]);
	op->datatype = d->name;
	op->length = op->count * d->size;
	op->actual_local = op->peer_local;
	op->actual_global = op->peer_global;
	op->actual_tag = tag;
	op->actual_length = u64at(b, l->v[send ? L_SR_DELIVERED
					       : L_RR_BYTES]);
	w->st.internal++;
}

/*
 * Items of an opal_free_list_t, as Open MPI's DLL finds them: each
 * allocation (an opal_free_list_item_t on fl_allocations) is followed,
 * aligned, by its items of fl_frag_size (aligned); the first allocation
 * holds what the others do not (fl_num_allocated modulo
 * fl_num_per_alloc).
 */
static void walk_free_list(struct walk *w, const char *sym, bool send)
{
	const struct ob1_layout *l = w->l;
	uint64_t fl, v[4], sent, chunk, head, left, align;
	int nchunks = 0;

	if (w->proc->lookup(w->ctx, sym, &fl) < 0)
		return;
	if (rd(w, fl + l->v[L_FL_FRAGSZ], &v[0], 8) < 0 ||
	    rd(w, fl + l->v[L_FL_ALIGN], &v[1], 8) < 0 ||
	    rd(w, fl + l->v[L_FL_PERALLOC], &v[2], 8) < 0 ||
	    rd(w, fl + l->v[L_FL_NALLOC], &v[3], 8) < 0) {
		w->st.torn++;
		return;
	}
	align = v[1] ? v[1] : 1;
	if (!v[0] || v[0] > (1 << 20) || align > 4096 || (align & (align - 1))
	    || !v[2] || v[3] > OB1_MAX_FREE) {
		w->st.torn++;
		return;
	}
	head = (v[0] + align - 1) & ~(align - 1);
	left = v[3];
	sent = fl + l->v[L_FL_ALLOCS] + l->v[L_LS_SENT];
	if (rd(w, sent + l->v[L_LI_NEXT], &chunk, 8) < 0)
		return;
	while (chunk != sent && left && !w->gone) {
		uint64_t n = nchunks ? v[2] : v[3] <= v[2] ? v[3]
				       : v[3] % v[2] ? v[3] % v[2] : v[2];
		uint64_t item = (chunk + (uint64_t)l->v[L_FI_SIZE] + align - 1) &
				~(align - 1);

		if (!chunk || ++nchunks > OB1_MAX_ITEMS) {
			w->st.torn++;
			return;
		}
		n = n < left ? n : left;
		for (uint64_t i = 0; i < n && !w->gone; i++)
			free_item(w, item + i * head, send);
		left -= n;
		if (rd(w, chunk + l->v[L_LI_NEXT], &chunk, 8) < 0) {
			w->st.torn++;
			return;
		}
	}
}

static void append_ops(struct walk *w)
{
	struct snap_rank *r = w->r;

	if (!w->nops)
		return;
	r->ops = xrealloc(r->ops,
			  ((size_t)r->nops + (size_t)w->nops) * sizeof(*r->ops));
	memcpy(r->ops + r->nops, w->ops, (size_t)w->nops * sizeof(*w->ops));
	r->nops += w->nops;
	w->st.added = w->nops;
}

int ob1_collect(const struct ob1_layout *l, const struct mh_proc_ops *proc,
		void *ctx, struct snap *s, struct snap_rank *r,
		struct ob1_stats *st)
{
	struct walk w = { .l = l, .proc = proc, .ctx = ctx, .s = s, .r = r };
	uint64_t pa, addr, *comms = NULL;
	int32_t size;
	int rc;

	rc = proc->lookup(ctx, "ompi_mpi_communicators", &pa);
	if (rc < 0)
		return -MD_E_NOSYM;
	name_dll_ops(&w);
	if (rd(&w, pa + l->v[L_PA_ADDR], &addr, sizeof(addr)) < 0 ||
	    rd(&w, pa + l->v[L_PA_SIZE], &size, sizeof(size)) < 0 ||
	    size < 0 || size > OB1_MAX_COMMS) {
		w.st.torn++;
		goto out;
	}
	comms = xmalloc((size_t)size * sizeof(*comms) + 1);
	if (size && rd(&w, addr, comms, (size_t)size * sizeof(*comms)) < 0) {
		w.st.torn++;
		goto out;
	}
	for (int i = 0; i < size && !w.gone; i++)
		if (comms[i])
			walk_comm(&w, comms[i]);
	r->unexpected_available = !w.gone;
	/* A receive missing from torn posted queues would pass for matched. */
	if (!w.st.torn)
		walk_free_list(&w, "mca_pml_base_recv_requests", false);
	walk_free_list(&w, "mca_pml_base_send_requests", true);
out:
	free(comms);
	if (!w.gone)
		append_ops(&w);
	free(w.ops);
	if (st)
		*st = w.st;
	return w.gone ? -MD_E_GONE : 0;
}
