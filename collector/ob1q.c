/*
 * ob1q.c - walk Open MPI ob1's matching queues in a stopped rank (see
 * ob1q.h).  The layout (ob1q_layout.c) is a table of offsets; the walk
 * reads each structure in one block and picks the fields out of it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "ob1q_int.h"

int ob1w_read(struct ob1_walk *w, uint64_t addr, void *buf, size_t len)
{
	int rc;

	if (!addr)
		return -MD_E_FAULT;
	rc = w->proc->read(w->ctx, addr, buf, len);
	if (rc == -MD_E_GONE)
		w->gone = true;
	return rc;
}

const struct ob1_dtname *ob1w_datatype(struct ob1_walk *w, uint64_t addr)
{
	const struct ob1_layout *l = w->l;
	char name[DT_NAME_MAX + 1];
	struct ob1_dtname *d;
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
	if (ob1w_read(w, addr + l->v[L_DT_NAME], name, DT_NAME_MAX) == 0) {
		name[DT_NAME_MAX] = '\0';
		if (name[0])
			d->name = snap_str(w->s, name);
	}
	if (ob1w_read(w, addr + l->v[L_DT_SUPER] + l->v[L_OD_SIZE], &d->size,
	       sizeof(d->size)) < 0)
		d->size = 0;
	return d;
}

struct snap_op *ob1w_new_op(struct ob1_walk *w)
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

/* A peer is a rank of the remote group on an intercommunicator. */
int ob1w_global_of(const struct ob1_walk *w, int local)
{
	return snap_comm_peer(w->s, w->comm, local);
}

bool ob1w_dll_has(const struct snap_rank *r, uint64_t req)
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

struct snap_op *ob1w_probe_op(struct ob1_walk *w, const unsigned char *b,
			      uint64_t req)
{
	const struct ob1_layout *l = w->l;
	int32_t peer = (int32_t)ob1_u32(b, l->v[L_RB_PEER]);
	int32_t tag = (int32_t)ob1_u32(b, l->v[L_RB_TAG]);
	struct snap_op *op = ob1w_new_op(w);

	op->kind = SNAP_OP_RECV;
	op->status = SNAP_ST_PENDING;
	op->req_type = type_name(ob1_u32(b, l->v[L_RB_TYPE]));
	op->peer_local = peer < 0 ? -1 : peer;
	op->peer_global = ob1w_global_of(w, op->peer_local);
	op->any_tag = tag == -1;	/* MPI_ANY_TAG */
	op->tag = tag;
	op->request = req;
	return op;
}

int ob1w_req_comm(struct ob1_walk *w, const unsigned char *b)
{
	uint32_t cid;

	if (ob1w_read(w, ob1_u64(b, w->l->v[L_RB_COMM]) + w->l->v[L_CM_CID],
		      &cid, sizeof(cid)) < 0)
		return -2;
	return ob1w_comm_of(w, cid);
}

/* A posted receive or probe at req.  false: the list cannot be trusted
 * beyond it (counted as torn). */
static bool posted(struct ob1_walk *w, uint64_t req)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_REQ_MAX];
	struct snap_op *op;
	uint32_t type;

	if (l->req_len > sizeof(b) || ob1w_read(w, req, b, l->req_len) < 0) {
		w->st.torn++;
		return false;
	}
	w->st.posted++;
	type = ob1_u32(b, l->v[L_RB_TYPE]);
	/* Only receives and probes are posted: anything else is a request
	 * freed and reused while the list was read. */
	if (type < RT_RECV || type > RT_MPROBE) {
		w->st.torn++;
		return false;
	}
	if (ob1w_dll_has(w->r, req))
		return true;
	op = ob1w_probe_op(w, b, req);
	op->sequence = ob1_u64(b, l->v[L_RB_SEQ]);
	op->actual_length = ob1_u64(b, l->v[L_RR_BYTES]);
	if (type == RT_RECV) {
		const struct ob1_dtname *d =
			ob1w_datatype(w, ob1_u64(b, l->v[L_RB_DTYPE]));

		op->count = ob1_u64(b, l->v[L_RB_COUNT]);
		op->datatype = d->name;
		op->length = op->count * d->size;
	}
	return true;
}

/* An arrived fragment not yet matched; false as for posted(). */
static bool fragment(struct ob1_walk *w, uint64_t frag, const char *what)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_FRAG_MAX];
	const unsigned char *h = b + l->v[L_FR_HDR];
	struct snap_op *op;
	unsigned htype;

	if (l->frag_len > sizeof(b) || ob1w_read(w, frag, b, l->frag_len) < 0) {
		w->st.torn++;
		return false;
	}
	htype = h[l->v[L_CH_TYPE]];
	if ((htype != HT_MATCH && htype != HT_RNDV && htype != HT_RGET) ||
	    ob1_u16(h, l->v[L_MH_CTX]) != (uint16_t)w->cid) {
		w->st.torn++;
		return false;
	}
	w->st.frags++;
	op = ob1w_new_op(w);
	op->kind = SNAP_OP_UNEXPECTED;
	op->status = SNAP_ST_PENDING;
	op->req_type = what;
	op->peer_local = op->actual_local =
		(int32_t)ob1_u32(h, l->v[L_MH_SRC]);
	op->peer_global = op->actual_global = ob1w_global_of(w, op->peer_local);
	op->tag = op->actual_tag = (int32_t)ob1_u32(h, l->v[L_MH_TAG]);
	op->sequence = ob1_u16(h, l->v[L_MH_SEQ]);
	/* A rendezvous leaves only its header here: the length is in it.
	 * An eager fragment's length is the sender's business. */
	if (htype != HT_MATCH)
		op->length = op->actual_length = ob1_u64(h, l->v[L_RV_LEN]);
	return true;
}

/* Walk the opal_list_t at list, calling fn on each item, bounded. */
static void walk_list(struct ob1_walk *w, uint64_t list,
		      bool (*fn)(struct ob1_walk *, uint64_t, const char *),
		      const char *what)
{
	const struct ob1_layout *l = w->l;
	uint64_t sent = list + l->v[L_LS_SENT], next;
	int n = 0;

	if (ob1w_read(w, sent + l->v[L_LI_NEXT], &next, sizeof(next)) < 0) {
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
		if (ob1w_read(w, next + l->v[L_LI_NEXT], &next, sizeof(next)) < 0) {
			w->st.torn++;
			return;
		}
	}
}

static bool posted_item(struct ob1_walk *w, uint64_t item, const char *what)
{
	(void)what;
	return posted(w, item);
}

/* frags_cant_match: a ring of fragments without a sentinel, ordered by
 * sequence.  (Each entry's "range" of consecutive fragments is not
 * walked: their headers repeat the first one's source and tag.) */
static void walk_cant_match(struct ob1_walk *w, uint64_t head)
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
		if (ob1w_read(w, f + w->l->v[L_LI_NEXT], &f, sizeof(f)) < 0) {
			w->st.torn++;
			return;
		}
		if (f == head)
			return;
	}
}

static void walk_proc(struct ob1_walk *w, uint64_t proc)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_STRUCT_MAX];

	if ((size_t)l->v[L_PP_SIZE] > sizeof(b) ||
	    ob1w_read(w, proc, b, (size_t)l->v[L_PP_SIZE]) < 0) {
		w->st.torn++;
		return;
	}
	w->moved += ob1_u32(b, l->v[L_PP_SENDSEQ]) +
		    ob1_u16(b, l->v[L_PP_EXPSEQ]);
	walk_list(w, proc + l->v[L_PP_SPEC], posted_item, NULL);
	walk_list(w, proc + l->v[L_PP_UNEX], fragment, "unexpected");
	walk_cant_match(w, ob1_u64(b, l->v[L_PP_CANT]));
}

/* The snapshot's communicator for context id cid among r's. */
int ob1w_comm_of(const struct ob1_walk *w, uint32_t cid)
{
	for (int i = 0; i < w->r->nmembers; i++) {
		int c = w->r->members[i].comm;

		if (c >= 0 && c < w->s->ncomms && w->s->comms[c].id == cid)
			return c;
	}
	return -1;
}

static void walk_comm(struct ob1_walk *w, uint64_t comm)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_STRUCT_MAX];
	uint64_t pml, procs, *pp;
	size_t nprocs;

	if (ob1w_read(w, comm + l->v[L_CM_CID], &w->cid, sizeof(w->cid)) < 0 ||
	    ob1w_read(w, comm + l->v[L_CM_PML], &pml, sizeof(pml)) < 0) {
		w->st.torn++;
		return;
	}
	/* MPI_COMM_NULL and communicators being set up have no ob1 state. */
	if (!pml)
		return;
	if ((size_t)l->v[L_PC_SIZE] > sizeof(b) ||
	    ob1w_read(w, pml, b, (size_t)l->v[L_PC_SIZE]) < 0) {
		w->st.torn++;
		return;
	}
	w->st.comms++;
	w->comm = ob1w_comm_of(w, w->cid);
	walk_list(w, pml + l->v[L_PC_WILD], posted_item, NULL);
	procs = ob1_u64(b, l->v[L_PC_PROCS]);
	nprocs = ob1_u64(b, l->v[L_PC_NPROCS]);
	if (!procs || !nprocs)
		return;
	if (nprocs > OB1_MAX_PROCS) {
		w->st.torn++;
		return;
	}
	pp = xmalloc(nprocs * sizeof(*pp));
	if (ob1w_read(w, procs, pp, nprocs * sizeof(*pp)) < 0)
		w->st.torn++;
	else
		/* A NULL entry: no message with that peer yet. */
		for (size_t i = 0; i < nprocs && !w->gone; i++)
			if (pp[i])
				walk_proc(w, pp[i]);
	free(pp);
}

/* The DLL's own ops: the full datatype name behind its "MPI_". */
static void name_dll_ops(struct ob1_walk *w)
{
	const struct ob1_layout *l = w->l;
	struct snap_rank *r = w->r;

	for (int k = 0; k < r->nops && !w->gone; k++) {
		struct snap_op *op = &r->ops[k];
		uint64_t dt, count;

		if (op->source != SNAP_SRC_DLL || !op->request ||
		    op->kind == SNAP_OP_UNEXPECTED)
			continue;
		if (ob1w_read(w, op->request + l->v[L_RB_DTYPE], &dt, sizeof(dt)) <
			    0 ||
		    ob1w_read(w, op->request + l->v[L_RB_COUNT], &count,
		       sizeof(count)) < 0 || !dt)
			continue;
		op->datatype = ob1w_datatype(w, dt)->name;
		op->count = count;
		w->st.named += op->datatype != NULL;
	}
}

void ob1w_append_ops(struct ob1_walk *w)
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
	struct ob1_walk w = { .l = l, .proc = proc, .ctx = ctx, .s = s, .r = r };
	uint64_t pa, addr, *comms = NULL;
	int32_t size;
	int rc;

	rc = proc->lookup(ctx, "ompi_mpi_communicators", &pa);
	if (rc < 0)
		return -MD_E_NOSYM;
	name_dll_ops(&w);
	if (ob1w_read(&w, pa + l->v[L_PA_ADDR], &addr, sizeof(addr)) < 0 ||
	    ob1w_read(&w, pa + l->v[L_PA_SIZE], &size, sizeof(size)) < 0 ||
	    size < 0 || size > OB1_MAX_COMMS) {
		w.st.torn++;
		goto out;
	}
	comms = xmalloc((size_t)size * sizeof(*comms) + 1);
	if (size && ob1w_read(&w, addr, comms, (size_t)size * sizeof(*comms)) < 0) {
		w.st.torn++;
		goto out;
	}
	for (int i = 0; i < size && !w.gone; i++)
		if (comms[i])
			walk_comm(&w, comms[i]);
	r->unexpected_available = !w.gone;
	/* Messages count as the library's completions do (looks.c): the
	 * probes a polling loop posts are left out, they move nothing. */
	if (!w.gone && !w.st.torn) {
		r->has_completions = true;
		r->completions = w.moved;
	}
	/* A receive missing from torn posted queues would pass for matched. */
	if (!w.st.torn)
		ob1w_walk_free_list(&w, "mca_pml_base_recv_requests", false);
	ob1w_walk_free_list(&w, "mca_pml_base_send_requests", true);
out:
	free(comms);
	if (!w.gone)
		ob1w_append_ops(&w);
	free(w.ops);
	if (st)
		*st = w.st;
	return w.gone ? -MD_E_GONE : 0;
}
