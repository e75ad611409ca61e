/*
 * ob1q_free.c - the internal requests of collectives in progress, from
 * the request free lists (mca_pml_base_{recv,send}_requests), which the
 * DLL walks too but filters by tag.
 */
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "ob1q_int.h"

/* OMPI_REQUEST_PML and OMPI_REQUEST_ACTIVE. */
enum { RQ_PML = 0, RQ_ACTIVE = 2 };
#define OB1_MAX_FREE (1 << 16)	/* requests allocated in one free list */

static bool have_request(const struct ob1_walk *w, uint64_t req)
{
	for (int k = 0; k < w->nops; k++)
		if (w->ops[k].request == req)
			return true;
	return ob1w_dll_has(w->r, req);
}

/*
 * One request of mca_pml_base_{send,recv}_requests.  The DLL shows these
 * but skips negative tags, the internal messages of collectives: only
 * those are taken here.  A receive found here and not in the posted
 * queues is matched: its data is moving (req_bytes_received grows
 * between looks, so a collective that moves data is not judged stuck).
 */
static void free_item(struct ob1_walk *w, uint64_t req, bool send)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_REQ_MAX];
	size_t len = send ? l->send_len : l->recv_len;
	struct snap_op *op;
	const struct ob1_dtname *d;
	int32_t tag, peer;

	if (len > sizeof(b) || ob1w_read(w, req, b, len) < 0)
		return;
	if (ob1_u32(b, l->v[L_RQ_TYPE]) != RQ_PML ||
	    ob1_u32(b, l->v[L_RQ_STATE]) != RQ_ACTIVE ||
	    ob1_u32(b, l->v[L_RB_PMLDONE]) != 0 ||
	    ob1_u32(b, l->v[L_RB_TYPE]) != (send ? RT_SEND : RT_RECV))
		return;
	tag = (int32_t)ob1_u32(b, l->v[L_RB_TAG]);
	if (tag >= -1 || have_request(w, req))
		return;
	w->comm = ob1w_req_comm(w, b);
	if (w->comm == -2)
		return;
	peer = (int32_t)ob1_u32(b, l->v[L_RB_PEER]);
	d = ob1w_datatype(w, ob1_u64(b, l->v[L_RB_DTYPE]));
	op = ob1w_new_op(w);
	op->kind = send ? SNAP_OP_SEND : SNAP_OP_RECV;
	op->status = send ? SNAP_ST_PENDING : SNAP_ST_MATCHED;
	op->req_type = send ? "send" : "recv";
	op->peer_local = peer < 0 ? -1 : peer;
	op->peer_global = ob1w_global_of(w, op->peer_local);
	op->tag = tag;
	op->request = req;
	op->sequence = ob1_u64(b, l->v[L_RB_SEQ]);
	op->count = ob1_u64(b, l->v[L_RB_COUNT]);
	op->datatype = d->name;
	op->length = op->count * d->size;
	op->actual_local = op->peer_local;
	op->actual_global = op->peer_global;
	op->actual_tag = tag;
	op->actual_length = ob1_u64(b, l->v[send ? L_SR_DELIVERED
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
void ob1w_walk_free_list(struct ob1_walk *w, const char *sym, bool send)
{
	const struct ob1_layout *l = w->l;
	uint64_t fl, v[4], sent, chunk, head, left, align;
	int nchunks = 0;

	if (w->proc->lookup(w->ctx, sym, &fl) < 0)
		return;
	if (ob1w_read(w, fl + l->v[L_FL_FRAGSZ], &v[0], 8) < 0 ||
	    ob1w_read(w, fl + l->v[L_FL_ALIGN], &v[1], 8) < 0 ||
	    ob1w_read(w, fl + l->v[L_FL_PERALLOC], &v[2], 8) < 0 ||
	    ob1w_read(w, fl + l->v[L_FL_NALLOC], &v[3], 8) < 0) {
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
	if (ob1w_read(w, sent + l->v[L_LI_NEXT], &chunk, 8) < 0)
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
		if (ob1w_read(w, chunk + l->v[L_LI_NEXT], &chunk, 8) < 0) {
			w->st.torn++;
			return;
		}
	}
}
