/*
 * verdict.c - what stays blocked, and why.  Two release fixpoints: one
 * with unread ranks releasing and guessed conditions as built
 * (optimistic), one with neither releasing (pessimistic).  What is stuck
 * even optimistically is a deadlock; what is stuck only pessimistically
 * depends on the missing data.
 */
#include <stdlib.h>
#include <string.h>

#include "anl_int.h"
#include "md.h"

static int count_stuck(const struct anl_result *r, const uint8_t *rel)
{
	int n = 0;

	for (int i = 0; i < r->nranks; i++)
		n += r->ranks[i].state == WFG_BLOCKED && !rel[i];
	return n;
}

/* The one rank stuck under the pessimistic reading is stuck only by its
 * own guessed wait (no operation visible, or several that could block
 * its call), with nobody behind it: a rank that waits on something not
 * known while the others go on is no sign of a deadlock (a slow peer
 * looks the same), so it alone does not make the verdict INCOMPLETE. */
static bool lone_guess(const struct anl_result *r, const uint8_t *pes)
{
	int stuck = -1;

	for (int i = 0; i < r->nranks; i++) {
		if (r->ranks[i].state != WFG_BLOCKED || pes[i])
			continue;
		if (stuck >= 0)
			return false;
		stuck = i;
	}
	return stuck >= 0 && r->ranks[stuck].guess_only;
}

static int count_unknown(const struct anl_result *r)
{
	int n = 0;

	for (int i = 0; i < r->nranks; i++)
		n += r->ranks[i].state == WFG_UNKNOWN;
	return n;
}

/* A node that will never release: exited, or unread when the basis
 * assumes the worst. */
static bool is_sink(const struct anl_result *r, const uint8_t *rel, int v)
{
	return v < r->nranks && !rel[v] &&
	       (r->ranks[v].state == WFG_GONE ||
		r->ranks[v].state == WFG_UNKNOWN);
}

static void find_vnode_sinks(struct anl_result *r, const uint8_t *rel)
{
	for (int i = 0; i < r->nv; i++) {
		int first, n = wfg_out(r->g, r->nranks + i, &first);

		r->v[i].gone_edge = -1;
		if (r->v[i].kind != ANL_V_COLL)
			continue;
		for (int e = first; e < first + n; e++) {
			if (is_sink(r, rel, wfg_edge_to(r->g, e))) {
				r->v[i].gone_edge = e;
				break;
			}
		}
	}
}

/* The edge by which a stuck rank waits on a sink, and the sink: an AND
 * waiter needs only one such edge, an OR waiter must have nothing else. */
static int dead_edge(const struct anl_result *r, const uint8_t *rel, int v,
		     int *path)
{
	int first, n = wfg_out(r->g, v, &first), found = 0, sinks = 0;

	for (int e = first; e < first + n; e++) {
		int t = wfg_edge_to(r->g, e), len = 0;

		if (is_sink(r, rel, t))
			len = 1;
		else if (t >= r->nranks && r->v[t - r->nranks].gone_edge >= 0)
			len = 2;
		sinks += len > 0;
		/* The first such edge is the path: a later one must not
		 * overwrite it (it did, and a 1-edge path then started at
		 * the other edge's collective node). */
		if (len && !found) {
			found = len;
			path[0] = e;
			if (len == 2)
				path[1] = r->v[t - r->nranks].gone_edge;
		}
	}
	if (wfg_cond(r->g, v) == WFG_OR && n > 1 && sinks < n)
		return 0;
	return found;
}

static struct anl_cycle *new_cycle(struct anl_result *r, int kind)
{
	r->cycles = xrealloc(r->cycles,
			     ((size_t)r->ncycles + 1) * sizeof(*r->cycles));
	memset(&r->cycles[r->ncycles], 0, sizeof(*r->cycles));
	r->cycles[r->ncycles].kind = (uint8_t)kind;
	r->cycles[r->ncycles].vnode = -1;
	return &r->cycles[r->ncycles++];
}

static void cycle_add_rank(struct anl_cycle *c, int rank)
{
	if (!(c->nranks & (c->nranks - 1)) || !c->ranks)
		c->ranks = xrealloc(c->ranks, ((size_t)c->nranks * 2 + 1) *
						      sizeof(int));
	c->ranks[c->nranks++] = rank;
}

static int comp_kind(const struct anl_result *r, const int *comp, int c)
{
	bool knot = false;

	for (int i = 0; i < r->nv; i++) {
		const struct anl_vnode *a = &r->v[i];

		if (comp[r->nranks + i] != c || a->kind != ANL_V_COLL)
			continue;
		for (int j = i + 1; j < r->nv; j++)
			if (comp[r->nranks + j] == c &&
			    r->v[j].kind == ANL_V_COLL &&
			    r->v[j].comm == a->comm &&
			    strcmp(r->v[j].call, a->call))
				return ANL_CK_MISMATCH;
	}
	for (int v = 0; v < wfg_nnodes(r->g) && !knot; v++) {
		int first;

		knot = comp[v] == c && wfg_cond(r->g, v) == WFG_OR &&
		       wfg_out(r->g, v, &first) > 1;
	}
	return knot ? ANL_CK_KNOT : ANL_CK_CYCLE;
}

/* The cyclic component a stuck rank belongs to: its own, or that of the
 * collective it sits in (all members of a stuck collective instance are
 * in the deadlock, not only the one the cycle passes through).  Members
 * of an instance stuck on its own are explained apart (explain_stuck). */
static int rank_comp(const struct anl_result *r, const int *comp,
		     const uint8_t *cyclic, int v)
{
	int vc = r->ranks[v].vcoll;

	if (r->ranks[v].role == ANL_ROLE_DEADLOCKED)
		return -1;
	if (comp[v] >= 0 && cyclic[comp[v]])
		return comp[v];
	if (comp[v] >= 0 && vc >= 0 && comp[vc] >= 0 && cyclic[comp[vc]] &&
	    !r->v[vc - r->nranks].stuck)
		return comp[vc];
	return -1;
}

/* A collective every member is in that does not complete: one part,
 * its members, held by the instance's own edge. */
static void explain_stuck(struct anl_result *r, const uint8_t *rel)
{
	for (int i = 0; i < r->nv; i++) {
		int node = r->nranks + i, first, n;
		struct anl_cycle *cy;

		if (!r->v[i].stuck || rel[node])
			continue;
		cy = new_cycle(r, ANL_CK_STUCK);
		cy->vnode = i;
		n = wfg_out(r->g, node, &first);
		for (int e = first; e < first + n; e++) {
			if (wfg_edge_to(r->g, e) == node) {
				cy->edges = xmalloc(sizeof(int));
				cy->edges[0] = e;
				cy->nedges = 1;
			}
		}
		for (int v = 0; v < r->nranks; v++) {
			if (r->ranks[v].vcoll != node)
				continue;
			cycle_add_rank(cy, v);
			r->ranks[v].role = ANL_ROLE_DEADLOCKED;
		}
	}
}

/* One entry per cyclic component, in order of its smallest rank, with a
 * shortest cycle through that rank. */
static void explain_cycles(struct anl_result *r, const int *comp, int ncomp,
			   const uint8_t *cyclic)
{
	int *entry = xmalloc((size_t)ncomp * sizeof(int) + 1);
	int *size = xcalloc((size_t)ncomp + 1, sizeof(int));

	for (int v = 0; v < wfg_nnodes(r->g); v++)
		if (comp[v] >= 0)
			size[comp[v]]++;
	for (int c = 0; c < ncomp; c++)
		entry[c] = -1;
	for (int v = 0; v < r->nranks; v++) {
		struct anl_cycle *cy;
		int c = comp[v];

		if (c < 0 || !cyclic[c] || entry[c] >= 0 ||
		    r->ranks[v].role == ANL_ROLE_DEADLOCKED)
			continue;
		entry[c] = r->ncycles;
		cy = new_cycle(r, comp_kind(r, comp, c));
		cy->edges = xmalloc((size_t)size[c] * sizeof(int));
		cy->nedges = wfg_cycle(r->g, comp, v, cy->edges);
	}
	for (int v = 0; v < r->nranks; v++) {
		int c = rank_comp(r, comp, cyclic, v);

		if (c < 0 || entry[c] < 0)
			continue;
		cycle_add_rank(&r->cycles[entry[c]], v);
		r->ranks[v].role = ANL_ROLE_DEADLOCKED;
	}
	free(entry);
	free(size);
}

/* Under the worst reading, a rank whose wait condition was guessed is
 * itself where the uncertainty sits: count it in, without a cycle. */
static void mark_guessed(struct anl_result *r, const uint8_t *rel)
{
	for (int v = 0; v < r->nranks; v++) {
		int vc = r->ranks[v].vcoll;

		if (r->ranks[v].state == WFG_BLOCKED && !rel[v] &&
		    (wfg_guessed(r->g, v) || (vc >= 0 && wfg_guessed(r->g, vc))))
			r->ranks[v].role = ANL_ROLE_DEADLOCKED;
	}
}

/* Stuck ranks outside the cycles that wait on an exited (or, in the
 * worst reading, unread) rank: one entry per such rank waited on. */
static void explain_dead(struct anl_result *r, const uint8_t *rel)
{
	int *entry = xmalloc((size_t)r->nranks * sizeof(int) + 1);
	int path[2];

	for (int v = 0; v < r->nranks; v++)
		entry[v] = -1;
	find_vnode_sinks(r, rel);
	for (int v = 0; v < r->nranks; v++) {
		struct anl_cycle *cy;
		int len, sink;

		if (r->ranks[v].state != WFG_BLOCKED || rel[v] ||
		    r->ranks[v].role == ANL_ROLE_DEADLOCKED)
			continue;
		len = dead_edge(r, rel, v, path);
		if (!len)
			continue;
		sink = wfg_edge_to(r->g, path[len - 1]);
		if (entry[sink] < 0) {
			entry[sink] = r->ncycles;
			cy = new_cycle(r, r->ranks[sink].state == WFG_GONE ?
					      ANL_CK_DEAD : ANL_CK_UNREAD);
			cy->edges = xmalloc(2 * sizeof(int));
			memcpy(cy->edges, path, (size_t)len * sizeof(int));
			cy->nedges = len;
		}
		cycle_add_rank(&r->cycles[entry[sink]], v);
		r->ranks[v].role = ANL_ROLE_DEADLOCKED;
	}
	free(entry);
}

static void assign_roles(struct anl_result *r, const uint8_t *rel)
{
	static const uint8_t base[] = {
		[WFG_ACTIVE] = ANL_ROLE_ACTIVE,
		[WFG_BLOCKED] = ANL_ROLE_BEHIND,
		[WFG_GONE] = ANL_ROLE_GONE,
		[WFG_UNKNOWN] = ANL_ROLE_UNKNOWN,
	};

	for (int i = 0; i < r->nranks; i++) {
		struct anl_rank *ar = &r->ranks[i];

		if (ar->role == ANL_ROLE_DEADLOCKED)
			r->ndead++;
		else if (ar->state == WFG_BLOCKED && rel[i])
			ar->role = ANL_ROLE_RELEASED;
		else
			ar->role = base[ar->state];
		r->nbehind += ar->role == ANL_ROLE_BEHIND;
	}
}

static void explain(struct anl_result *r, const uint8_t *rel, bool worst)
{
	int n = wfg_nnodes(r->g), ncomp = 0;
	uint8_t *keep = xmalloc((size_t)n + 1), *cyclic = NULL;
	int *comp = xmalloc((size_t)n * sizeof(int) + 1);

	for (int v = 0; v < n; v++)
		keep[v] = !rel[v];
	explain_stuck(r, rel);
	if (!wfg_scc(r->g, keep, comp, &ncomp, &cyclic))
		explain_cycles(r, comp, ncomp, cyclic);
	explain_dead(r, rel);
	if (worst)
		mark_guessed(r, rel);
	free(cyclic);
	free(comp);
	free(keep);
}

void anl_decide(struct anl_result *r)
{
	int n = wfg_nnodes(r->g);
	uint8_t *opt = xmalloc((size_t)n + 1), *pes = xmalloc((size_t)n + 1);
	uint8_t *basis = opt;

	wfg_release(r->g, WFG_OPTIMISTIC, opt);
	wfg_release(r->g, WFG_PESSIMISTIC, pes);
	if (count_stuck(r, opt)) {
		r->verdict = ANL_DEADLOCK;
	} else if (count_stuck(r, pes) && !lone_guess(r, pes)) {
		r->verdict = ANL_INCOMPLETE;
		basis = pes;
	} else if (count_unknown(r)) {
		/* Nothing read is stuck, but a rank not read may be: blocked on
		 * itself, on another rank not read or on an exited one.  No
		 * rank read (all on other hosts) is never a clean bill. */
		r->verdict = ANL_INCOMPLETE;
	} else {
		r->verdict = ANL_NO_DEADLOCK;
	}
	for (int i = 0; i < r->nranks; i++) {
		r->ranks[i].role = ANL_ROLE_BEHIND;
		if (r->verdict == ANL_DEADLOCK &&
		    r->ranks[i].state == WFG_BLOCKED && opt[i] && !pes[i]) {
			r->ranks[i].miss |= ANL_MISS_MAYBE;
			r->nmaybe++;
		}
	}
	if (r->verdict != ANL_NO_DEADLOCK)
		explain(r, basis, basis == pes);
	assign_roles(r, basis);
	free(opt);
	free(pes);
}
