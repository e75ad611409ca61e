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
	di = snap_comm_intern(dst, c->id, c->name ? c->name : "", c->size,
			      c->group);
	/* The topology comes along (the first part that read it). */
	if (c->topo != SNAP_TOPO_NONE && dst->comms[di].topo == SNAP_TOPO_NONE)
		snap_comm_set_topo(dst, di, c->topo, c->nbr_first, c->nbr);
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

static void copy_ops(struct snap *dst, struct snap_cmap *src,
		     struct snap_rank *d, const struct snap_rank *r)
{
	d->ops = r->nops ? xmalloc((size_t)r->nops * sizeof(*d->ops)) : NULL;
	for (int i = 0; i < r->nops; i++) {
		struct snap_op *o = &d->ops[i];

		*o = r->ops[i];
		o->comm = comm_map(dst, src, r->ops[i].comm);
		for (int k = 0; k < o->nextra && k < 5; k++)
			o->extra[k] = snap_str(dst, r->ops[i].extra[k]);
		o->req_type = snap_str(dst, r->ops[i].req_type);
		o->datatype = snap_str(dst, r->ops[i].datatype);
	}
}

static void copy_track(struct snap *dst, struct snap_cmap *src,
		       struct snap_rank *d, const struct snap_rank *r)
{
	d->track = r->ntrack ? xmalloc((size_t)r->ntrack * sizeof(*d->track))
			     : NULL;
	for (int i = 0; i < r->ntrack; i++) {
		struct snap_track_rec *t = &d->track[i];

		*t = r->track[i];
		t->comm = comm_map(dst, src, r->track[i].comm);
		t->call = snap_str(dst, t->call);
		t->comm_name = snap_str(dst, t->comm_name);
		t->datatype_name = snap_str(dst, t->datatype_name);
		t->op_name = snap_str(dst, t->op_name);
		t->func = snap_str(dst, t->func);
		t->file = snap_str(dst, t->file);
	}
}

static void copy_threads(struct snap *dst, struct snap_rank *d,
			 const struct snap_rank *r)
{
	d->threads = r->nthreads ? xmalloc((size_t)r->nthreads *
					   sizeof(*d->threads)) : NULL;
	for (int t = 0; t < r->nthreads; t++) {
		const struct snap_thread *st = &r->threads[t];
		struct snap_thread *dt = &d->threads[t];

		*dt = *st;
		dt->mpi_call = snap_str(dst, st->mpi_call);
		dt->frames = st->nframes ? xmalloc((size_t)st->nframes *
						   sizeof(*dt->frames)) : NULL;
		for (int f = 0; f < st->nframes; f++) {
			dt->frames[f] = st->frames[f];
			dt->frames[f].func = snap_str(dst, st->frames[f].func);
			dt->frames[f].object = snap_str(dst,
							st->frames[f].object);
			dt->frames[f].file = snap_str(dst, st->frames[f].file);
		}
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
	d->host = snap_str(dst, r->host);
	d->exe = snap_str(dst, r->exe);
	d->collected_on = snap_str(dst, r->collected_on);
	d->reason = snap_str(dst, r->reason);
	d->mpi_call = snap_str(dst, r->mpi_call);
	d->call_func = snap_str(dst, r->call_func);
	d->call_file = snap_str(dst, r->call_file);
	d->queues_reason = snap_str(dst, r->queues_reason);
	d->members = r->nmembers ? xmalloc((size_t)r->nmembers *
					   sizeof(*d->members)) : NULL;
	for (int i = 0; i < r->nmembers; i++) {
		d->members[i].comm = comm_map(dst, src, r->members[i].comm);
		d->members[i].local_rank = r->members[i].local_rank;
	}
	copy_ops(dst, src, d, r);
	copy_threads(dst, d, r);
	copy_track(dst, src, d, r);
}

void snap_copy_rank(struct snap *dst, const struct snap *src, int rank)
{
	struct snap_cmap m;

	cmap_init(&m, src);
	copy_rank(dst, rank, &m, rank);
	free(m.to);
}

int snap_merge_part(struct snap *dst, const struct snap *part)
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
			copy_rank(dst, part->ranks[i].rank, &m, i);
	free(m.to);
	for (int i = 0; i < part->nnotes; i++)
		snap_note(dst, "%s", part->notes[i]);
	return 0;
}
