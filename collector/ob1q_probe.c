/*
 * ob1q_probe.c - the MPI_Iprobe and MPI_Improbe calls a rank was stopped
 * in.  ob1 builds their request on its own stack
 * (ompi/mca/pml/ob1/pml_ob1_iprobe.c: OBJ_CONSTRUCT of a local
 * mca_pml_ob1_recv_request_t), starts it, and, with no match, progresses
 * once and destroys it: no queue ever holds it.  A polling loop
 * (`while (!flag) MPI_Iprobe(...)`) spends nearly all its time inside
 * that call, so the request is on the stack in most looks.
 */
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "ob1q_int.h"

#define OB1_PROBE_STACK (64 * 1024)	/* most stack scanned per call */

/* The frame of mca_pml_ob1_iprobe or mca_pml_ob1_improbe in th, -1 if
 * none (or no caller frame above it to bound the scan). */
static int probe_frame(const struct snap_thread *th)
{
	for (int f = 0; f + 1 < th->nframes; f++) {
		const char *fn = th->frames[f].func;

		if (fn && (!strcmp(fn, "mca_pml_ob1_iprobe") ||
			   !strcmp(fn, "mca_pml_ob1_improbe")))
			return f;
	}
	return -1;
}

/* Is the object at addr (its class pointer matched) a nonblocking probe's
 * request in progress?  Then append it. */
static void probe_at(struct ob1_walk *w, uint64_t addr)
{
	const struct ob1_layout *l = w->l;
	unsigned char b[OB1_REQ_MAX];
	uint32_t type;

	if (l->recv_len > sizeof(b) || ob1w_read(w, addr, b, l->recv_len) < 0)
		return;
	type = ob1_u32(b, l->v[L_RB_TYPE]);
	if (ob1_u32(b, l->v[L_RQ_TYPE]) != 0 /* OMPI_REQUEST_PML */ ||
	    ob1_u32(b, l->v[L_RB_PMLDONE]) != 0 ||
	    (type != RT_IPROBE && type != RT_IMPROBE))
		return;
	w->comm = ob1w_req_comm(w, b);
	if (w->comm >= 0)
		ob1w_probe_op(w, b, addr);
}

/* The stack of th between its stack pointer and the caller of frame f,
 * scanned for the class pointer cls. */
static void scan_thread(struct ob1_walk *w, const struct snap_thread *th,
			int f, uint64_t cls)
{
	uint64_t lo = th->frames[0].sp, hi = th->frames[f + 1].sp, *words;
	size_t n;

	if (!lo || hi <= lo || hi - lo > OB1_PROBE_STACK)
		return;
	lo &= ~(uint64_t)7;
	n = (size_t)(hi - lo) / 8;
	words = xmalloc(n * sizeof(*words));
	if (ob1w_read(w, lo, words, n * sizeof(*words)) == 0)
		for (size_t i = 0; i < n && !w->gone; i++)
			if (words[i] == cls) {
				int before = w->nops;

				probe_at(w, lo + i * 8);
				/* One probe per call. */
				if (w->nops > before)
					break;
			}
	free(words);
}

int ob1_collect_iprobes(const struct ob1_layout *l,
			const struct mh_proc_ops *proc, void *ctx,
			struct snap *s, struct snap_rank *r)
{
	struct ob1_walk w = { .l = l, .proc = proc, .ctx = ctx, .s = s, .r = r };
	uint64_t cls = 0;
	int n;

	for (int t = 0; t < r->nthreads && !w.gone; t++) {
		int f = probe_frame(&r->threads[t]);

		if (f < 0)
			continue;
		if (!cls && proc->lookup(ctx, "mca_pml_ob1_recv_request_t_class",
					 &cls) < 0)
			return 0;
		scan_thread(&w, &r->threads[t], f, cls);
	}
	n = w.nops;
	if (!w.gone)
		ob1w_append_ops(&w);
	free(w.ops);
	return w.gone ? -MD_E_GONE : n;
}
