/*
 * snapread_rank.c - the snapshot reader's rank lines: the rank's
 * number, the keys of their own shape (snapformat.h) and the checks
 * between fields.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

/* Each [comm, local rank] pair must be a real place in the
 * communicator's group. */
int sr_members(struct snapread *r, const struct sj_field *f,
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

int sr_queues(struct snapread *r, const struct sj_field *f,
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

int sr_extra(struct snapread *r, const struct sj_field *f,
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
 * (a peer past the group has none). */
int sr_check_op(struct snapread *r, const struct sj_field *f,
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

/* A peer or tag of a track record: an int, or the names snapwrite.c
 * gives the special values (SNAP_TRACK_ANY and the two after it). */
int sr_track_num(struct snapread *r, const struct sj_field *f,
		     const struct sj_node *n, void *base)
{
	int *p = (int *)((char *)base + f->off);
	int64_t v = SNAP_TRACK_NONE;

	for (int i = 0; n && n->type == SJV_STR && i < 3; i++)
		if (!strcmp(n->s, snap_track_specials[i])) {
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
	return sj_fields(r, o, snap_rank_fields, k);
}
