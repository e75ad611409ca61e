/*
 * snapmerge.c - one snapshot out of several partial ones (a many-host
 * job: the front end's own and one per agent).  Ranks are copied in rank
 * order and their communicators interned in the order the rank refers to
 * them, which is the order a one-host collection interns them in: the
 * merged snapshot is the one a single collector would have written.
 */
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snap.h"

/* Where the communicators of one source land in dst: each source index
 * is interned once (a group of a million ranks is hashed once per part,
 * not once per rank that refers to it). */
struct snap_cmap {
	const struct snap *src;
	int *to;		/* src->ncomms entries, -2: not yet */
};

static int comm_map(struct snap *dst, struct snap_cmap *m, int ci)
{
	const struct snap *src = m->src;
	const struct snap_comm *c;
	int di;

	if (ci < 0 || ci >= src->ncomms)
		return -1;
	if (m->to[ci] != -2)
		return m->to[ci];
	c = &src->comms[ci];
	di = snap_comm_intern_shared(dst, c->id, c->name ? c->name : "",
				     c->size, c->group);
	/* The topology comes along (the first part that read it). */
	if (c->topo != SNAP_TOPO_NONE && dst->comms[di].topo == SNAP_TOPO_NONE)
		snap_comm_set_topo(dst, di, c->topo, c->nbr_first, c->nbr);
	/* So does an intercommunicator's remote group. */
	if ((c->remote && !dst->comms[di].remote) ||
	    (c->remote_size && !dst->comms[di].remote_size))
		snap_comm_set_remote(dst, di, c->remote_size, c->remote);
	m->to[ci] = di;
	return di;
}

static void cmap_init(struct snap_cmap *m, const struct snap *src)
{
	m->src = src;
	m->to = xmalloc(((size_t)src->ncomms + 1) * sizeof(*m->to));
	for (int i = 0; i < src->ncomms; i++)
		m->to[i] = -2;
}

/* Duplicate n entries of size each (NULL for none). */
static void *dup_array(const void *a, int n, size_t size)
{
	void *d = n ? xmalloc((size_t)n * size) : NULL;

	if (n)
		memcpy(d, a, (size_t)n * size);
	return d;
}

/* d's arrays are d's own (copied or moved from a source): intern their
 * strings in dst and renumber their communicators into dst's. */
static void relink(struct snap *dst, struct snap_cmap *m, struct snap_rank *d)
{
	d->host = snap_str(dst, d->host);
	d->exe = snap_str(dst, d->exe);
	d->collected_on = snap_str(dst, d->collected_on);
	d->reason = snap_str(dst, d->reason);
	d->mpi_call = snap_str(dst, d->mpi_call);
	d->call_func = snap_str(dst, d->call_func);
	d->call_file = snap_str(dst, d->call_file);
	d->queues_reason = snap_str(dst, d->queues_reason);
	for (int i = 0; i < d->nmembers; i++)
		d->members[i].comm = comm_map(dst, m, d->members[i].comm);
	for (int i = 0; i < d->nops; i++) {
		struct snap_op *o = &d->ops[i];

		o->comm = comm_map(dst, m, o->comm);
		for (int k = 0; k < o->nextra && k < 5; k++)
			o->extra[k] = snap_str(dst, o->extra[k]);
		o->req_type = snap_str(dst, o->req_type);
		o->datatype = snap_str(dst, o->datatype);
	}
	for (int t = 0; t < d->nthreads; t++) {
		struct snap_thread *th = &d->threads[t];

		th->mpi_call = snap_str(dst, th->mpi_call);
		th->called_back_by = snap_str(dst, th->called_back_by);
		for (int f = 0; f < th->nframes; f++) {
			th->frames[f].func = snap_str(dst, th->frames[f].func);
			th->frames[f].object = snap_str(dst,
							th->frames[f].object);
			th->frames[f].file = snap_str(dst, th->frames[f].file);
		}
	}
	for (int i = 0; i < d->ntrack; i++) {
		struct snap_track_rec *t = &d->track[i];

		t->comm = comm_map(dst, m, t->comm);
		t->call = snap_str(dst, t->call);
		t->comm_name = snap_str(dst, t->comm_name);
		t->datatype_name = snap_str(dst, t->datatype_name);
		t->op_name = snap_str(dst, t->op_name);
		t->func = snap_str(dst, t->func);
		t->file = snap_str(dst, t->file);
	}
}

/* Copy src's rank at index si into dst's rank di. */
static void copy_rank(struct snap *dst, int di, struct snap_cmap *src, int si)
{
	const struct snap_rank *r = &src->src->ranks[si];
	struct snap_rank *d = &dst->ranks[di];

	snap_rank_free_data(d);
	*d = *r;
	d->rank = di;
	d->pooled = false;	/* its arrays are copied below */
	d->members = dup_array(r->members, r->nmembers, sizeof(*r->members));
	d->ops = dup_array(r->ops, r->nops, sizeof(*r->ops));
	d->track = dup_array(r->track, r->ntrack, sizeof(*r->track));
	d->threads = dup_array(r->threads, r->nthreads, sizeof(*r->threads));
	for (int t = 0; t < r->nthreads; t++)
		d->threads[t].frames = dup_array(r->threads[t].frames,
						 r->threads[t].nframes,
						 sizeof(*r->threads[t].frames));
	relink(dst, src, d);
}

/* Move r's arrays (malloc'd, or in a pool that dst adopts) into dst's
 * rank di; r keeps none. */
static void move_rank(struct snap *dst, int di, struct snap_cmap *m,
		      struct snap_rank *r)
{
	struct snap_rank *d = &dst->ranks[di];

	snap_rank_free_data(d);
	*d = *r;
	d->rank = di;
	r->members = NULL;
	r->ops = NULL;
	r->threads = NULL;
	r->track = NULL;
	r->nmembers = r->nops = r->nthreads = r->ntrack = 0;
	relink(dst, m, d);
}

void snap_copy_rank(struct snap *dst, const struct snap *src, int rank)
{
	struct snap_cmap m;

	cmap_init(&m, src);
	copy_rank(dst, rank, &m, rank);
	free(m.to);
}

int snap_merge_part(struct snap *dst, struct snap *part)
{
	int job = part->job_nranks ? part->job_nranks : part->nranks;
	struct snap_cmap m;

	if (job != dst->nranks) {
		md_error("a partial snapshot of a job of %d ranks cannot be "
			 "merged into one of %d: collect them from the same "
			 "job",
			 job, dst->nranks);
		return -MD_E_INPUT;
	}
	cmap_init(&m, part);
	for (int i = 0; i < part->nranks; i++)
		if (part->job_nranks ||
		    part->ranks[i].state != SNAP_RANK_REMOTE)
			move_rank(dst, part->ranks[i].rank, &m,
				  &part->ranks[i]);
	free(m.to);
	for (int i = 0; i < part->nnotes; i++)
		snap_note(dst, "%s", part->notes[i]);
	/* The moved arrays that live in part's pool. */
	snap_adopt_pool(dst, part);
	return 0;
}
