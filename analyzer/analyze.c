/* analyze.c - the analysis entry points, names and the one-line verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anl_int.h"
#include "md.h"

struct anl_result *anl_analyze(const struct snap *s)
{
	struct anl_result *r = xcalloc(1, sizeof(*r));
	long long t0 = md_now_ns(), t1;

	r->s = s;
	anl_build(r);
	t1 = md_now_ns();
	anl_decide(r);
	md_info("analysis of %d ranks: graph %.3f s (%d nodes, %d edges), "
		"verdict %.3f s", s->nranks, (t1 - t0) / 1e9,
		wfg_nnodes(r->g), wfg_nedges(r->g), (md_now_ns() - t1) / 1e9);
	return r;
}

void anl_result_free(struct anl_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ncycles; i++) {
		free(r->cycles[i].ranks);
		free(r->cycles[i].edges);
	}
	free(r->cycles);
	free(r->ranks);
	free(r->ev);
	free(r->v);
	wfg_free(r->g);
	free(r);
}

enum anl_verdict anl_verdict(const struct anl_result *r)
{
	return r->verdict;
}

int anl_exit_code(const struct anl_result *r)
{
	switch (r->verdict) {
	case ANL_DEADLOCK:
		return MD_EXIT_DEADLOCK;
	case ANL_INCOMPLETE:
		return MD_EXIT_INCOMPLETE;
	case ANL_NO_DEADLOCK:
		break;
	}
	return MD_EXIT_NO_DEADLOCK;
}

void anl_report(const struct anl_result *r, const struct anl_opts *o,
		FILE *out)
{
	switch (o->format) {
	case ANL_FORMAT_JSON:
		anl_report_json(r, out);
		break;
	case ANL_FORMAT_DOT:
		anl_report_dot(r, out);
		break;
	case ANL_FORMAT_TEXT:
		anl_report_text(r, o, out);
		break;
	}
	if (o->github)
		anl_report_github(r, out);
}

const char *anl_role_name(enum anl_role role)
{
	static const char *const names[] = {
		"deadlocked", "behind", "active", "released", "gone", "unknown",
	};
	return names[role];
}

const char *anl_edge_kind_name(enum anl_edge_kind k)
{
	static const char *const names[] = {
		"receive", "send", "collective", "finalize",
		"neighbour collective", "probe", "wait",
	};
	return names[k];
}

const char *anl_cycle_kind_name(enum anl_ckind k)
{
	static const char *const names[] = {
		"cycle", "knot", "collective mismatch", "dead peer", "unread peer",
		"stuck collective",
	};
	return names[k];
}

const char *anl_verdict_name(enum anl_verdict v)
{
	static const char *const names[] = {
		"no deadlock", "deadlock", "incomplete",
	};
	return names[v];
}

const char *anl_comm_name(const struct anl_result *r, int comm)
{
	if (comm < 0 || comm >= r->s->ncomms)
		return r->world < 0 ? "all ranks" : "MPI_COMM_WORLD";
	if (!r->s->comms[comm].name || !r->s->comms[comm].name[0])
		return r->s->comms[comm].remote_size
			       ? "unnamed intercommunicator"
			       : "unnamed communicator";
	return r->s->comms[comm].name;
}

const struct anl_ev *anl_edge_ev(const struct anl_result *r, int e)
{
	int label = wfg_edge_label(r->g, e);

	return label >= 0 ? &r->ev[label] : NULL;
}

int anl_op_peer(const struct anl_result *r, const struct snap_op *op)
{
	const struct snap_comm *c = op->comm >= 0 && op->comm < r->s->ncomms ?
		&r->s->comms[op->comm] : NULL;

	if (op->peer_global >= 0)
		return op->peer_global;
	return c ? snap_comm_peer(r->s, op->comm, op->peer_local) : -1;
}

/* The communicator of rank's pending internal requests, -1 if none. */
static int internal_comm(const struct anl_result *r, int rank)
{
	const struct snap_rank *sr = &r->s->ranks[rank];

	for (int k = 0; k < sr->nops; k++)
		if (anl_op_internal(&sr->ops[k]) &&
		    sr->ops[k].status != SNAP_ST_COMPLETE &&
		    sr->ops[k].comm >= 0)
			return sr->ops[k].comm;
	return -1;
}

/*
 * "; its members are on different communicators of the same ranks: ranks
 * 0-1 on dup (id 3), ranks 2-3 on MPI_COMM_WORLD (id 0)" when their
 * internal requests say so (the stack does not tell a duplicate from
 * its original, so they share one node); "" otherwise.
 */
static char *comms_text(const struct anl_result *r, const struct anl_cycle *c)
{
	int *comm = xmalloc(((size_t)c->nranks + 1) * sizeof(int));
	bool differ = false;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	for (int i = 0; i < c->nranks; i++) {
		comm[i] = internal_comm(r, c->ranks[i]);
		if (comm[i] < 0) {
			free(comm);
			return xstrdup("");
		}
		differ |= comm[i] != comm[0];
	}
	if (!differ) {
		free(comm);
		return xstrdup("");
	}
	f = open_memstream(&out, &len);
	fputs("; its members are on different communicators of the same "
	      "ranks:", f);
	for (int i = 0, first = 1; i < c->nranks; i++) {
		struct anl_ranges rs;
		bool seen = false;

		for (int k = 0; k < i && !seen; k++)
			seen = comm[k] == comm[i];
		if (seen)
			continue;
		anl_ranges_init(&rs);
		for (int k = i; k < c->nranks; k++)
			if (comm[k] == comm[i])
				anl_ranges_add(&rs, c->ranks[k]);
		fprintf(f, "%s %s %s on %s (id %llu)", first ? "" : ",",
			rs.count == 1 ? "rank" : "ranks", anl_ranges_str(&rs),
			anl_comm_name(r, comm[i]),
			(unsigned long long)r->s->comms[comm[i]].id);
		anl_ranges_free(&rs);
		first = 0;
	}
	fclose(f);
	free(comm);
	return out;
}

char *anl_stuck_reason(const struct anl_result *r, const struct anl_cycle *c)
{
	const struct anl_vnode *v = &r->v[c->vnode];
	char *comms = comms_text(r, c), *text;

	/* Without the internal requests, a collective still moving data
	 * inside looks the same in every look: say both readings. */
	text = xasprintf("%scollective %s on %s does not complete: its "
			 "members disagree%s%s",
			 v->kind == ANL_V_NEIGHBOR ? "neighbour " : "",
			 v->call, anl_comm_name(r, v->comm), comms,
			 v->evidence ? "" : ", or it still moves data that "
			 "only its internal requests (not read) would show "
			 "[inferred]");
	free(comms);
	return text;
}

/* Whether an explained part rests on an inferred edge. */
static bool part_inferred(const struct anl_result *r,
			  const struct anl_cycle *c)
{
	for (int i = 0; i < c->nedges; i++) {
		const struct anl_ev *ev = anl_edge_ev(r, c->edges[i]);

		if (ev && ev->inferred)
			return true;
	}
	return false;
}

/* " [inferred]" when every explained part rests on an inferred edge:
 * the verdict is then a reading of what could not be seen. */
static const char *verdict_inferred(const struct anl_result *r)
{
	for (int i = 0; i < r->ncycles; i++)
		if (!part_inferred(r, &r->cycles[i]))
			return "";
	return r->ncycles ? " [inferred]" : "";
}

/* The communicator an explained part runs through (its first edge). */
static const char *cycle_comm(const struct anl_result *r,
			      const struct anl_cycle *c)
{
	if (c->kind == ANL_CK_STUCK)
		return anl_comm_name(r, r->v[c->vnode].comm);
	for (int i = 0; i < c->nedges; i++) {
		const struct anl_ev *ev = anl_edge_ev(r, c->edges[i]);

		if (ev)
			return anl_comm_name(r, ev->comm);
	}
	return anl_comm_name(r, r->world);
}

/* Of the ranks dead parts wait on: 1 all finalized, 0 all exited, -1
 * both. */
static int dead_finalized(const struct anl_result *r)
{
	int fin = 0, gone = 0;

	for (int i = 0; i < r->ncycles; i++) {
		const struct anl_cycle *c = &r->cycles[i];
		int sink = wfg_edge_to(r->g, c->edges[c->nedges - 1]);

		if (r->s->ranks[sink].finalized)
			fin++;
		else
			gone++;
	}
	return gone ? (fin ? -1 : 0) : 1;
}

static const char *part_phrase(const struct anl_result *r)
{
	static const char *const single[] = {
		"in a cycle", "in a knot", "in a collective mismatch",
		"blocked on an exited rank", "blocked on an unread rank",
		"in a stuck collective",
	};
	static const char *const dead[] = {
		"blocked on exited or finalized ranks",
		"blocked on exited ranks", "blocked on finalized ranks",
	};
	int k = r->cycles[0].kind, fin;

	for (int i = 1; i < r->ncycles; i++)
		if (r->cycles[i].kind != k)
			return "deadlocked in several groups";
	if (k == ANL_CK_DEAD) {
		fin = dead_finalized(r);
		if (r->ncycles > 1)
			return dead[fin + 1];
		return fin == 1 ? "blocked on a finalized rank" : single[k];
	}
	if (r->ncycles == 1)
		return single[k];
	return k == ANL_CK_KNOT ? "in several knots" :
	       k == ANL_CK_STUCK ? "in stuck collectives" : "in several cycles";
}

static char *deadlock_summary(const struct anl_result *r)
{
	char *head, *text;

	if (!r->ncycles)
		return xasprintf("DEADLOCK: %d of %d ranks cannot go on",
				 r->ndead + r->nbehind, r->nranks);
	head = xasprintf("DEADLOCK: %d of %d ranks %s %s (%s)", r->ndead,
			 r->nranks, r->ndead == 1 ? "is" : "are",
			 part_phrase(r),
			 cycle_comm(r, &r->cycles[0]));
	if (!r->nbehind) {
		text = xasprintf("%s%s", head, verdict_inferred(r));
		free(head);
		return text;
	}
	text = xasprintf("%s; %d more %s behind it%s", head, r->nbehind,
			 r->nbehind == 1 ? "waits" : "wait", verdict_inferred(r));
	free(head);
	return text;
}

static int count_role(const struct anl_result *r, enum anl_role role)
{
	int n = 0;

	for (int i = 0; i < r->nranks; i++)
		n += r->ranks[i].role == role;
	return n;
}

static int count_outside(const struct anl_result *r)
{
	int n = 0;

	for (int i = 0; i < r->nranks; i++)
		n += r->ranks[i].role == ANL_ROLE_UNKNOWN &&
		     (r->ranks[i].miss & ANL_MISS_OUTSIDE);
	return n;
}

/* Incomplete with nothing stuck among the ranks read: what is missing
 * decides. */
static char *unread_summary(const struct anl_result *r, int unread)
{
	int outside = count_outside(r);

	if (outside == unread)
		return xasprintf("INCOMPLETE: %d of %d %s on processes outside "
				 "the job (spawned or connected), which are "
				 "not read; no verdict for %s", outside,
				 r->nranks, outside == 1 ? "rank waits" :
				 "ranks wait", outside == 1 ? "it" : "them");
	if (outside)
		return xasprintf("INCOMPLETE: %d of %d ranks could not be read "
				 "or wait on processes outside the job; the %d "
				 "others are not deadlocked, but those may be",
				 unread, r->nranks, r->nranks - unread);
	if (unread == r->nranks)
		return xasprintf("INCOMPLETE: none of the %d ranks could be read, "
				 "no verdict", r->nranks);
	return xasprintf("INCOMPLETE: %d of %d ranks could not be read; the "
			 "%d read are not deadlocked, but those not read may be",
			 unread, r->nranks, r->nranks - unread);
}

static char *verdict_summary(const struct anl_result *r);

/* "SIGSTOP" for the signal that holds a rank stopped. */
const char *anl_signal_name(int sig)
{
	static __thread char buf[32];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/*
 * The verdict, and the ranks stopped by someone else (SIGSTOP, ^Z): what
 * waits for them waits until they get SIGCONT, whatever the verdict.
 */
char *anl_summary(const struct anl_result *r)
{
	char *text = verdict_summary(r), *all;
	struct anl_ranges rs;
	int sig = 0;

	anl_ranges_init(&rs);
	for (int i = 0; i < r->nranks; i++) {
		if (!r->s->ranks[i].stopped_by ||
		    r->s->ranks[i].state != SNAP_RANK_COLLECTED)
			continue;
		anl_ranges_add(&rs, i);
		sig = sig && sig != r->s->ranks[i].stopped_by ? -1 :
		      r->s->ranks[i].stopped_by;
	}
	if (!rs.count) {
		anl_ranges_free(&rs);
		return text;
	}
	all = xasprintf("%s; %s %s %s stopped%s%s and run%s nothing until "
			"SIGCONT", text, rs.count == 1 ? "rank" : "ranks",
			anl_ranges_str(&rs), rs.count == 1 ? "is" : "are",
			sig > 0 ? " by " : "",
			sig > 0 ? anl_signal_name(sig) : "",
			rs.count == 1 ? "s" : "");
	anl_ranges_free(&rs);
	free(text);
	return all;
}

static char *verdict_summary(const struct anl_result *r)
{
	int active = count_role(r, ANL_ROLE_ACTIVE);
	int waiting = count_role(r, ANL_ROLE_RELEASED);
	int unread = count_role(r, ANL_ROLE_UNKNOWN);

	if (r->verdict == ANL_DEADLOCK)
		return deadlock_summary(r);
	if (r->verdict == ANL_INCOMPLETE && !r->ndead && !r->nbehind)
		return unread_summary(r, unread);
	if (r->verdict == ANL_INCOMPLETE)
		return xasprintf("INCOMPLETE: %d of %d ranks may be deadlocked, "
				 "depending on %s",
				 r->ndead + r->nbehind, r->nranks,
				 count_outside(r) ? "processes outside the "
						    "job or ranks not read" :
				 unread ? "ranks that could not be read" :
					  "guessed wait conditions");
	/* "Going on", not "computing": an active rank may as well be in
	 * MPI, moving data. */
	if (!waiting)
		return xasprintf("NO DEADLOCK: %d %s going on, none waiting",
				 active, active == 1 ? "rank" : "ranks");
	return xasprintf("NO DEADLOCK: %d %s going on, %d %s waiting on %s",
			 active, active == 1 ? "rank" : "ranks", waiting,
			 waiting == 1 ? "rank" : "ranks",
			 active == 1 ? "it" : "them");
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* c->ranks is sorted. */
static bool in_part(const struct anl_cycle *c, int rank)
{
	return c->nranks > 0 && bsearch(&rank, c->ranks, (size_t)c->nranks,
					sizeof(int), cmp_int);
}

/* Rank x's wait edges lead into the part: to one of its ranks or, for a
 * dead or unread peer, to a rank that exited or was not read. */
static bool leads_in(const struct anl_result *r, const struct anl_cycle *c,
		     int to)
{
	enum wfg_state st;

	if (to >= r->nranks)
		return false;
	if (in_part(c, to))
		return true;
	st = r->ranks[to].state;
	return (c->kind == ANL_CK_DEAD && st == WFG_GONE) ||
	       (c->kind == ANL_CK_UNREAD && st == WFG_UNKNOWN);
}

/* A wait of rank x into the part: an edge to a rank, or through a node of
 * its own (a collective, "any") to one.  Writes the edges into path;
 * returns their number, 0 if there is none. */
static int wait_into(const struct anl_result *r, const struct anl_cycle *c,
		     int x, int path[2])
{
	int first, n = wfg_out(r->g, x, &first);

	for (int e = first; e < first + n; e++) {
		int to = wfg_edge_to(r->g, e), vfirst, vn;

		if (to < r->nranks) {
			if (!leads_in(r, c, to))
				continue;
			path[0] = e;
			return 1;
		}
		vn = wfg_out(r->g, to, &vfirst);
		for (int f = vfirst; f < vfirst + vn; f++) {
			int y = wfg_edge_to(r->g, f);

			if (y != x && leads_in(r, c, y)) {
				path[0] = e;
				path[1] = f;
				return 2;
			}
		}
	}
	return 0;
}

/* The members of the collective rank x is in (its line names them all). */
static void name_coll(const struct anl_result *r, int x, uint8_t *named)
{
	if (r->ranks[x].vcoll < 0)
		return;
	for (int i = 0; i < r->nranks; i++)
		named[i] |= r->ranks[i].vcoll == r->ranks[x].vcoll;
}

static bool coll_step(const struct anl_result *r, int e)
{
	const struct anl_ev *ev = anl_edge_ev(r, e);

	return ev && ev->kind == ANL_EK_COLL;
}

int anl_cycle_rest(const struct anl_result *r, const struct anl_cycle *c,
		   struct anl_rest **out)
{
	uint8_t *named;
	int n = 0;

	*out = NULL;
	if (c->kind != ANL_CK_CYCLE && c->kind != ANL_CK_KNOT &&
	    c->kind != ANL_CK_DEAD && c->kind != ANL_CK_UNREAD)
		return 0;
	named = xcalloc((size_t)r->nranks + 1, 1);
	for (int k = 0; k < c->nedges; k++) {
		int from = wfg_edge_from(r->g, c->edges[k]);
		int to = wfg_edge_to(r->g, c->edges[k]);

		if (to < r->nranks)
			named[to] = 1;
		if (from >= r->nranks)
			continue;
		named[from] = 1;
		if (coll_step(r, c->edges[k]))
			name_coll(r, from, named);
	}
	*out = xmalloc(((size_t)c->nranks + 1) * sizeof(**out));
	for (int i = 0; i < c->nranks; i++) {
		struct anl_rest *x = &(*out)[n];

		if (named[c->ranks[i]])
			continue;
		x->rank = c->ranks[i];
		x->n = wait_into(r, c, x->rank, x->path);
		n++;
		if (x->n && coll_step(r, x->path[0]))
			name_coll(r, x->rank, named);
	}
	free(named);
	return n;
}
