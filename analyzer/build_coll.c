/*
 * build_coll.c - collectives in the wait-for graph: one virtual node per
 * instance (communicator, call) that waits on the members not in it;
 * neighbour collectives, whose members wait on their topology
 * neighbours; and instances every member is in, which either complete,
 * move data, or are stuck because their members disagree (DESIGN.md,
 * "Wait-for semantics").
 */
#include <string.h>

#include "build_int.h"
#include "md.h"

static int find_node(struct bctx *b, int key, const char *call, int kind)
{
	for (int i = 0; i < b->ncoll; i++)
		if (b->coll[i].comm == key && b->coll[i].kind == kind &&
		    !strcmp(b->coll[i].call, call))
			return b->coll[i].node;
	return -1;
}

static int new_node(struct bctx *b, int key, const char *call,
		    const struct anl_vnode *v)
{
	if (b->ncoll == b->collcap) {
		b->collcap = b->collcap ? 2 * b->collcap : 8;
		b->coll = xrealloc(b->coll, (size_t)b->collcap * sizeof(*b->coll));
	}
	b->coll[b->ncoll] = (struct coll_key){ key, call, v->kind, 0 };
	b->coll[b->ncoll].node = anl_add_vnode(b->r, v, WFG_AND);
	return b->coll[b->ncoll++].node;
}

/* Communicators with one group are one for collectives: the call on
 * the stack does not say which of them it runs on. */
static int coll_node(struct bctx *b, int comm, const char *call, bool inferred)
{
	struct anl_vnode v = { ANL_V_COLL, inferred || !anl_comm_known(b->s, comm),
			       comm, call, -1, false, false };
	int key = comm >= 0 ? b->rep[comm] : -1;
	int node = find_node(b, key, call, ANL_V_COLL);

	return node >= 0 ? node : new_node(b, key, call, &v);
}

/* The communicator of the rank's pending internal requests (ob1), when
 * they agree on one group; -1 if there are none or they do not. */
static int internal_comm(struct bctx *b, const struct snap_rank *sr)
{
	int found = -1;

	for (int k = 0; k < sr->nops; k++) {
		const struct snap_op *op = &sr->ops[k];

		if (!anl_op_internal(op) || op->status == SNAP_ST_COMPLETE ||
		    op->comm < 0 || op->comm >= b->s->ncomms)
			continue;
		if (found >= 0 && b->rep[op->comm] != b->rep[found])
			return -1;
		if (found < 0)
			found = op->comm;
	}
	return found;
}

/* The collective's communicator is not on the stack: it is that of the
 * rank's internal requests when ob1 shows them, else the one
 * libmdtrack.so recorded for the call (MPICH shows no internal
 * requests), else known when every communicator the rank is in (size >
 * 1) has one group. */
static int coll_comm(struct bctx *b, const struct snap_rank *sr, bool *inferred)
{
	int found = internal_comm(b, sr);

	*inferred = false;
	/* The communicator itself, for its name: nodes are keyed by the
	 * group's representative (coll_node). */
	if (found >= 0)
		return found;
	found = anl_track_coll_comm(sr);
	if (found >= 0 && anl_comm_known(b->s, found))
		return found;
	found = -1;
	for (int i = 0; i < sr->nmembers; i++) {
		int c = sr->members[i].comm;

		if (c < 0 || c >= b->s->ncomms || b->s->comms[c].size <= 1)
			continue;
		if (found >= 0 && b->rep[c] != found) {
			*inferred = true;
			return b->r->world;
		}
		found = b->rep[c];
	}
	if (found < 0) {
		*inferred = true;
		return b->r->world;
	}
	return found;
}

/*
 * A neighbour collective runs on a communicator with a topology: the one
 * the rank is in (the first of several, inferred).  Returns false when
 * the rank is in none with topology data.
 */
static bool link_neighbor(struct bctx *b, int rank, const char *call)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	int comm = -1, ntopo = 0, node;
	struct anl_vnode v = { ANL_V_NEIGHBOR, false, -1, call, -1, false,
			       false };
	struct anl_ev ev = { rank, -1, -1, ANL_EK_NEIGHBOR, false, false };

	for (int i = 0; i < sr->nmembers; i++) {
		int c = sr->members[i].comm;

		if (c < 0 || c >= b->s->ncomms || !b->s->comms[c].nbr_first ||
		    !anl_comm_known(b->s, c))
			continue;
		if (comm < 0)
			comm = c;
		ntopo++;
	}
	if (comm < 0)
		return false;
	v.comm = ev.comm = comm;
	v.inferred = ev.inferred = ntopo > 1;
	node = find_node(b, comm, call, ANL_V_NEIGHBOR);
	if (node < 0)
		node = new_node(b, comm, call, &v);
	if (ntopo > 1)
		b->r->ranks[rank].miss |= ANL_MISS_COLLCOMM;
	b->r->ranks[rank].vcoll = node;
	wfg_add_edge(b->r->g, rank, node, anl_add_ev(b->r, &ev));
	return true;
}

bool anl_link_coll(struct bctx *b, int rank, const char *call,
		   enum md_call_class cls, bool *guessed)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	bool fin = cls == MD_CALL_FINALIZE, inferred = false;
	int comm, node;
	struct anl_ev ev;

	if (cls == MD_CALL_NEIGHBOR && link_neighbor(b, rank, call))
		return false;
	comm = fin ? b->r->world : coll_comm(b, sr, &inferred);
	if (comm >= 0 && comm < b->s->ncomms && b->s->comms[comm].remote_size &&
	    !b->s->comms[comm].remote) {
		b->r->ranks[rank].miss |= ANL_MISS_OUTSIDE;
		return true;
	}
	node = coll_node(b, comm, call, inferred);
	ev = (struct anl_ev){ rank, -1, comm,
			      fin ? ANL_EK_FINALIZE : ANL_EK_COLL,
			      inferred || !anl_comm_known(b->s, comm), false };
	if (ev.inferred && !fin)
		b->r->ranks[rank].miss |= ANL_MISS_COLLCOMM;
	*guessed |= ev.inferred && !fin;
	/* Without the topology, every member stands for the neighbours: a
	 * stricter wait, shown as inferred but not a guess about the
	 * verdict's basis. */
	if (cls == MD_CALL_NEIGHBOR) {
		b->r->ranks[rank].miss |= ANL_MISS_NOTOPO;
		ev.inferred = true;
	}
	b->r->ranks[rank].vcoll = node;
	wfg_add_edge(b->r->g, rank, node, anl_add_ev(b->r, &ev));
	return false;
}

/* Each member of a neighbour collective waits on its neighbours that are
 * not in it (AND, edges of the member). */
static void link_neighbors(struct bctx *b, int i)
{
	const struct anl_vnode *v = &b->r->v[i];
	const struct snap_comm *c = &b->s->comms[v->comm];
	int node = b->r->nranks + i;

	for (int l = 0; l < c->size; l++) {
		int m = c->group[l];

		if (m < 0 || m >= b->s->nranks || b->r->ranks[m].vcoll != node)
			continue;
		for (int k = c->nbr_first[l]; k < c->nbr_first[l + 1]; k++) {
			int n = c->nbr[k] < c->size ? c->group[c->nbr[k]] : -1;
			struct anl_ev ev = { m, -1, v->comm, ANL_EK_NEIGHBOR,
					     v->inferred, false };

			if (n < 0 || n >= b->s->nranks || n == m ||
			    b->r->ranks[n].vcoll == node)
				continue;
			wfg_add_edge(b->r->g, m, n, anl_add_ev(b->r, &ev));
		}
	}
}

/*
 * The members a virtual node waits on: its communicator's group (every
 * rank when it is not known); of an intercommunicator, a receive's
 * source is in the remote group, and a collective has both groups.
 * vnode_member gives the k-th of vnode_members of them.
 */
static int vnode_members(const struct snap *s, const struct anl_vnode *v)
{
	const struct snap_comm *c;

	if (!anl_comm_known(s, v->comm))
		return s->nranks;
	c = &s->comms[v->comm];
	if (c->remote && v->kind == ANL_V_ANY)
		return c->remote_size;
	return c->size + (c->remote ? c->remote_size : 0);
}

static int vnode_member(const struct snap *s, const struct anl_vnode *v,
			int k)
{
	const struct snap_comm *c;

	if (!anl_comm_known(s, v->comm))
		return k;
	c = &s->comms[v->comm];
	if (c->remote && v->kind == ANL_V_ANY)
		return c->remote[k];
	return k < c->size ? c->group[k] : c->remote[k - c->size];
}

/*
 * What a collective instance knows of its members' order: the number
 * libmdtrack.so gave the instance on its communicator (0: not known),
 * and whether a member goes on outside any collective (running the
 * program, or a message of its in transfer): it may yet come to the
 * instance.
 */
struct order {
	uint64_t number;
	bool member_free;
};

static struct order instance_order(struct bctx *b, int i)
{
	const struct anl_vnode *v = &b->r->v[i];
	int node = b->r->nranks + i, n = vnode_members(b->s, v);
	struct order o = { 0, false };

	for (int k = 0; k < n; k++) {
		int m = vnode_member(b->s, v, k);
		const struct anl_rank *ar;

		if (m < 0 || m >= b->s->nranks)
			continue;
		ar = &b->r->ranks[m];
		if (ar->vcoll == node && !o.number && v->comm >= 0) {
			const struct snap_track_rec *t =
				anl_coll_last(&b->s->ranks[m], v->comm);

			o.number = t ? t->ncalls : 0;
		}
		o.member_free |= ar->vcoll < 0 && ar->state == WFG_ACTIVE;
	}
	return o;
}

/*
 * Did member m, in another collective on the instance's communicator, go
 * past the instance (a non-root of an eager MPI_Reduce or MPI_Gather is
 * done with it and goes on to the next collective) rather than call
 * another collective in its place (a mismatch)?  libmdtrack.so's
 * numbers tell.  Without them: taken as gone past while another member
 * goes on outside any collective, since the instance may then complete
 * once that one comes (a slow rank is not a deadlock); as a mismatch when
 * every member is held in one.
 */
static bool gone_past(struct bctx *b, const struct anl_vnode *v,
		      const struct order *o, int m)
{
	const struct snap_rank *sr = &b->s->ranks[m];
	const struct snap_track_rec *t;

	/* Nothing goes past MPI_Finalize. */
	if (b->r->ranks[m].vcoll < 0 || !strcmp(v->call, "MPI_Finalize"))
		return false;
	t = v->comm >= 0 ? anl_coll_last(sr, v->comm) : NULL;
	if (!o->number || !t || !t->ncalls)
		return o->member_free;
	if (t->ncalls != o->number)
		return t->ncalls > o->number;
	/* Its latest there is the instance's number: it is in it with
	 * another call (a mismatch), or it finished it and waits in a
	 * collective the library does not record (MPI_Finalize). */
	return !sr->mpi_call || strcmp(t->call, sr->mpi_call) != 0;
}

/* A virtual node waits on its communicator's members: "any" on all of
 * them (OR), a collective on those not in it (AND) that did not go past
 * it. */
void anl_link_vnode(struct bctx *b, int i)
{
	const struct anl_vnode *v = &b->r->v[i];
	const struct snap *s = b->s;
	int node = b->r->nranks + i, n = vnode_members(s, v);
	struct order o = { 0, false };

	if (v->kind == ANL_V_NEIGHBOR) {
		link_neighbors(b, i);
		return;
	}
	if (v->kind == ANL_V_COLL)
		o = instance_order(b, i);
	for (int k = 0; k < n; k++) {
		int m = vnode_member(s, v, k);

		if (m < 0 || m >= s->nranks)
			continue;
		if (v->kind == ANL_V_COLL && (b->r->ranks[m].vcoll == node ||
					      gone_past(b, v, &o, m)))
			continue;
		wfg_add_edge(b->r->g, node, m, -1);
	}
}

/* What the members of a complete instance show. */
struct inst {
	int first;		/* smallest member */
	bool one_look;		/* a member seen once only */
	bool moving;		/* a message in transfer at a member */
	bool evidence;		/* every member's internal requests read */
};

/* A matched operation whose bytes the looks cannot compare: the DLL
 * gives no byte count of a transfer in progress.  ob1's requests carry
 * theirs, and the collector calls a rank whose bytes moved "changed":
 * one of them matched in an unmoved rank is not moving. */
static bool any_matched(const struct snap_rank *sr)
{
	for (int k = 0; k < sr->nops; k++)
		if (sr->ops[k].status == SNAP_ST_MATCHED &&
		    sr->ops[k].source != SNAP_SRC_OB1)
			return true;
	return false;
}

/* Whether every member of vnode i is in it (or went past it), and what
 * those in it show. */
static bool complete(struct bctx *b, int i, struct inst *in)
{
	const struct anl_vnode *v = &b->r->v[i];
	const struct snap *s = b->s;
	int n = vnode_members(s, v);
	struct order o = { 0, false };

	if (v->kind == ANL_V_COLL)
		o = instance_order(b, i);
	*in = (struct inst){ -1, false, false, true };
	for (int k = 0; k < n; k++) {
		int m = vnode_member(s, v, k);
		const struct snap_rank *sr;

		if (m < 0 || m >= s->nranks)
			continue;
		if (b->r->ranks[m].vcoll != b->r->nranks + i &&
		    v->kind == ANL_V_COLL && gone_past(b, v, &o, m))
			continue;
		if (b->r->ranks[m].vcoll != b->r->nranks + i)
			return false;
		sr = &s->ranks[m];
		if (in->first < 0 || m < in->first)
			in->first = m;
		in->one_look |= sr->progress != SNAP_PROGRESS_STABLE;
		in->moving |= b->r->ranks[m].transfer || any_matched(sr);
		in->evidence &= sr->ob1;
	}
	return in->first >= 0;
}

/* Members of vnode i go on (they are not waiting on anyone). */
static void release_members(struct bctx *b, int i, bool finishing)
{
	const struct snap *s = b->s;
	int node = b->r->nranks + i;

	for (int m = 0; m < s->nranks; m++) {
		struct anl_rank *ar = &b->r->ranks[m];

		if (ar->vcoll != node)
			continue;
		ar->state = WFG_ACTIVE;
		if (finishing)
			ar->finishing = 1;
		else
			ar->transfer = 1;
		wfg_set_node(b->r->g, m, WFG_ACTIVE, WFG_AND, false);
	}
}

static void mark_members(struct bctx *b, int i, uint16_t bit)
{
	for (int m = 0; m < b->s->nranks; m++)
		if (b->r->ranks[m].vcoll == b->r->nranks + i)
			b->r->ranks[m].miss |= bit;
}

void anl_settle_instances(struct bctx *b)
{
	for (int i = 0; i < b->r->nv; i++) {
		struct anl_vnode *v = &b->r->v[i];
		int node = b->r->nranks + i;
		struct anl_ev ev;
		struct inst in;

		if (v->kind == ANL_V_ANY || !complete(b, i, &in))
			continue;
		/* Every rank in MPI_Finalize: the job is ending. */
		if (!strcmp(v->call, "MPI_Finalize")) {
			release_members(b, i, true);
			continue;
		}
		if (in.moving) {
			release_members(b, i, false);
			continue;
		}
		/* Seen once: a collective that takes a while looks the same.
		 * Stuck only in the worst reading. */
		if (in.one_look) {
			wfg_set_node(b->r->g, node, WFG_BLOCKED, WFG_AND, true);
			continue;
		}
		v->stuck = true;
		v->evidence = in.evidence;
		if (!in.evidence)
			mark_members(b, i, ANL_MISS_INTERNAL);
		ev = (struct anl_ev){ in.first, -1, v->comm,
				      v->kind == ANL_V_NEIGHBOR ?
					      ANL_EK_NEIGHBOR : ANL_EK_COLL,
				      v->inferred || !in.evidence, false };
		wfg_add_edge(b->r->g, node, node, anl_add_ev(b->r, &ev));
	}
}
