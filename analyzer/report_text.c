/* report_text.c - the report for a person: verdict, chains, groups. */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "anl_int.h"
#include "md.h"

/* Cycles longer than this many steps are shortened without --all-ranks. */
#define TEXT_MAX_STEPS 12
#define TEXT_MAX_ALTERNATIVES 4

char *anl_site(const struct anl_result *r, int rank)
{
	const struct snap_rank *sr = &r->s->ranks[rank];
	const char *call = sr->mpi_call ? sr->mpi_call : "not in MPI";

	if (sr->call_file && sr->call_line > 0)
		return xasprintf("%s at %s:%d", call, sr->call_file,
				 sr->call_line);
	if (sr->call_func)
		return xasprintf("%s in %s", call, sr->call_func);
	return xstrdup(call);
}

static int local_rank(const struct anl_result *r, int rank, int comm)
{
	const struct snap_rank *sr = &r->s->ranks[rank];

	for (int i = 0; comm >= 0 && i < sr->nmembers; i++)
		if (sr->members[i].comm == comm)
			return sr->members[i].local_rank;
	return -1;
}

/* "rank 3 (local 1 in "row", MPI_Recv at x.c:5)"; site only if asked. */
static void put_rank(const struct anl_result *r, int rank, int comm,
		     bool site, FILE *out)
{
	int local = local_rank(r, rank, comm);
	bool show_local = local >= 0 && local != rank;
	enum wfg_state st = r->ranks[rank].state;
	/* A rank that exited or was not read has no site: "not in MPI"
	 * would mislead. */
	char *s = site && r->s->ranks[rank].state == SNAP_RANK_COLLECTED
			  ? anl_site(r, rank)
			  : NULL;

	fprintf(out, "rank %d", rank);
	if (show_local)
		fprintf(out, " (local %d in \"%s\"%s", local,
			anl_comm_name(r, comm), s ? ", " : ")");
	else if (s)
		fputs(" (", out);
	if (s)
		fprintf(out, "%s)", s);
	if (st == WFG_GONE)
		fputs(r->s->ranks[rank].finalized ? " (finalized)" : " (exited)",
		      out);
	else if (st == WFG_UNKNOWN &&
		 (r->ranks[rank].miss & ANL_MISS_OUTSIDE))
		fputs(" (waiting on processes outside the job)", out);
	else if (st == WFG_UNKNOWN)
		fputs(" (not read)", out);
	free(s);
}

static void put_comm(const struct anl_result *r, int comm, FILE *out)
{
	if (comm >= 0 && comm < r->s->ncomms)
		fprintf(out, "%s (id %llu)", anl_comm_name(r, comm),
			(unsigned long long)r->s->comms[comm].id);
	else
		fputs(anl_comm_name(r, comm), out);
}

/*
 * The DLL's extra_text lines of op, on one line, quoted as the DLL wrote
 * them: they are its words, not the report's (Open MPI's says "Data: 4
 * instances of MPI datatype").  Open MPI's also gives the datatype's
 * name cut after 4 characters ("MPI_" for MPI_INT): where the line above
 * names the datatype whole, that piece is left out (--dump and JSON keep
 * it).
 */
static void put_extra(const struct snap_op *op, FILE *out)
{
	const char *sep = "      message queue DLL: ";
	bool any = false;

	for (int i = 0; i < op->nextra && i < 5; i++) {
		if (!op->extra[i] || !op->extra[i][0])
			continue;
		if (op->datatype && strlen(op->extra[i]) < strlen(op->datatype) &&
		    !strncmp(op->datatype, op->extra[i], strlen(op->extra[i])))
			continue;
		fprintf(out, "%s\"%s\"", sep, op->extra[i]);
		sep = ", ";
		any = true;
	}
	if (any)
		fputc('\n', out);
}

static void put_detail(const struct anl_result *r, const struct anl_ev *ev,
		       FILE *out)
{
	const struct snap_op *op =
		ev->op >= 0 ? &r->s->ranks[ev->rank].ops[ev->op] : NULL;

	if (ev->kind == ANL_EK_COLL || ev->kind == ANL_EK_FINALIZE) {
		fprintf(out, "%s on ", anl_edge_kind_name(ev->kind));
		put_comm(r, ev->comm, out);
	} else if (ev->kind == ANL_EK_NEIGHBOR) {
		fputs("neighbour collective on ", out);
		put_comm(r, ev->comm, out);
	} else {
		const struct snap_track_rec *nbc =
			op ? anl_op_nbc(&r->s->ranks[ev->rank], op) : NULL;

		/* Without an operation the peer is not known, not "any". */
		fprintf(out, "%s%s%s", op && anl_op_internal(op) ?
			"internal " : "", anl_edge_kind_name(ev->kind),
			!ev->any_source ? "" : op ? " from any source" :
			" from a source not known (no operation visible)");
		if (nbc) {
			char *site = anl_track_site(nbc);

			fprintf(out, " of the %s posted at %s", nbc->call,
				site);
			free(site);
		}
		if (op && op->any_tag)
			fputs(", any tag", out);
		else if (op)
			fprintf(out, ", tag %d", op->tag);
		fputs(", ", out);
		put_comm(r, ev->comm, out);
		if (op && !anl_op_probe(op) && !op->length && op->count &&
		    !op->datatype)
			fprintf(out, ", %llu element%s",
				(unsigned long long)op->count,
				op->count == 1 ? "" : "s");
		else if (op && !anl_op_probe(op))
			fprintf(out, ", %llu bytes",
				(unsigned long long)op->length);
		if (op && op->datatype)
			fprintf(out, " (%llu x %s)",
				(unsigned long long)op->count, op->datatype);
		/* A derived datatype has no name unless the program gave
		 * it one (MPI_Type_set_name). */
		else if (op && !anl_op_probe(op) && op->length && op->count)
			fprintf(out, " (%llu x unnamed datatype)",
				(unsigned long long)op->count);
	}
	fprintf(out, "%s\n", ev->inferred ? " [inferred]" : "");
	if (op)
		put_extra(op, out);
	if (op) {
		char *why = anl_unexpected_text(r, ev->rank, ev->op);

		if (why)
			fprintf(out, "      %s\n", why);
		free(why);
	}
}

/* Members of a collective node, as "ranks 0-2". */
static char *coll_members(const struct anl_result *r, int node, int *n)
{
	struct anl_ranges rs;
	char *text;

	anl_ranges_init(&rs);
	for (int i = 0; i < r->nranks; i++)
		if (r->ranks[i].vcoll == node)
			anl_ranges_add(&rs, i);
	*n = rs.count;
	text = xstrdup(anl_ranges_str(&rs));
	anl_ranges_free(&rs);
	return text;
}

/* The other waits of an OR-waiter (MPI_Waitany, MPI_Waitsome, a receive
 * with several candidates) whose edge e a chain shows: any of them would
 * release it, and each is held too. */
static void put_alternatives(const struct anl_result *r, int e, FILE *out)
{
	int from = wfg_edge_from(r->g, e), first;
	int n = wfg_out(r->g, from, &first), shown = 0;

	for (int k = first; k < first + n; k++) {
		const struct anl_ev *ev = anl_edge_ev(r, k);
		int to = wfg_edge_to(r->g, k);

		if (k == e || !ev)
			continue;
		if (shown == TEXT_MAX_ALTERNATIVES) {
			fprintf(out, "      ... or %d more\n",
				n - 1 - shown);
			return;
		}
		if (to < r->nranks)
			fprintf(out, "      or for rank %d: ", to);
		else
			fputs("      or for any rank: ", out);
		put_detail(r, ev, out);
		shown++;
	}
}

/* One step of a chain: an edge between ranks, or rank -> virtual ->
 * rank shown as one line.  Returns the number of edges used. */
static int put_step(const struct anl_result *r, const int *path, int left,
		    FILE *out)
{
	const struct anl_ev *ev = anl_edge_ev(r, path[0]);
	int from = wfg_edge_from(r->g, path[0]), to = wfg_edge_to(r->g, path[0]);
	int used = 1, n;
	bool any = false;

	if (to >= r->nranks && left > 1) {
		any = r->v[to - r->nranks].kind == ANL_V_ANY;
		to = wfg_edge_to(r->g, path[1]);
		used = 2;
	}
	fputs("  ", out);
	if (ev && ev->kind == ANL_EK_COLL && r->ranks[from].vcoll >= 0) {
		char *m = coll_members(r, r->ranks[from].vcoll, &n);
		char *site = anl_site(r, from);

		fprintf(out, "%s %s (%s) %s for ", n == 1 ? "rank" : "ranks",
			m, site, n == 1 ? "waits" : "wait");
		free(m);
		free(site);
		put_rank(r, to, -1, true, out);
	} else {
		put_rank(r, from, ev ? ev->comm : -1, true, out);
		/* An "any" wait goes through one node shared by the whole
		 * communicator, so the cycle may come straight back to the
		 * waiter: name the choice, not the member the search took. */
		if (any && ev && ev->op < 0 && !ev->any_source) {
			/* A send (or a wait) with no operation to name its
			 * peer: not a choice of any rank, a rank unknown. */
			fputs(" waits for a rank not known", out);
		} else if (any) {
			fputs(" waits for any rank", out);
		} else {
			fputs(" waits for ", out);
			put_rank(r, to, ev ? ev->comm : -1,
				 ev && (ev->kind == ANL_EK_COLL ||
					ev->kind == ANL_EK_FINALIZE ||
					ev->kind == ANL_EK_NEIGHBOR), out);
		}
	}
	fputs(": ", out);
	if (ev)
		put_detail(r, ev, out);
	else
		fputs("waits\n", out);
	if (from < r->nranks && wfg_cond(r->g, from) == WFG_OR)
		put_alternatives(r, path[0], out);
	return used;
}

static void put_chain(const struct anl_result *r, const struct anl_cycle *c,
		      const struct anl_opts *o, FILE *out)
{
	int k = 0, step = 0, skipped = 0;

	while (k < c->nedges) {
		bool hide = !o->all_ranks && step >= TEXT_MAX_STEPS / 2 &&
			    c->nedges - k > TEXT_MAX_STEPS / 2;

		if (hide) {
			k += wfg_edge_to(r->g, c->edges[k]) >= r->nranks ? 2 : 1;
			skipped++;
			continue;
		}
		if (skipped) {
			fprintf(out, "  ... %d more steps (--all-ranks shows "
				     "them)\n", skipped);
			skipped = 0;
		}
		k += put_step(r, c->edges + k, c->nedges - k, out);
		step++;
	}
}

/* The ranks of a part its chain does not name, each with what it waits
 * for (anl_cycle_rest). */
static void put_rest(const struct anl_result *r, const struct anl_cycle *c,
		     const struct anl_opts *o, FILE *out)
{
	struct anl_rest *rest;
	int n = anl_cycle_rest(r, c, &rest), shown = 0;

	for (int i = 0; i < n; i++) {
		if (!o->all_ranks && shown >= TEXT_MAX_STEPS / 2)
			break;
		if (!shown++)
			fputs("  also in it:\n", out);
		if (rest[i].n) {
			put_step(r, rest[i].path, rest[i].n, out);
		} else {
			char *site = anl_site(r, rest[i].rank);

			fprintf(out, "  rank %d (%s)\n", rest[i].rank, site);
			free(site);
		}
	}
	if (shown < n)
		fprintf(out, "  ... %d more ranks (--all-ranks shows them)\n",
			n - shown);
	free(rest);
}

/* A stuck collective: its reason, then what each member's internal
 * requests wait for (ob1's queues), or why nothing more can be said. */
static void put_stuck(const struct anl_result *r, const struct anl_cycle *c,
		      const struct anl_opts *o, FILE *out)
{
	char *reason = anl_stuck_reason(r, c), *m, *site;
	int shown = 0, more = 0;

	fprintf(out, "  %s\n", reason);
	free(reason);
	for (int i = 0; i < c->nranks; i++) {
		int rank = c->ranks[i];
		const struct snap_rank *sr = &r->s->ranks[rank];

		for (int k = 0; k < sr->nops; k++) {
			const struct snap_op *op = &sr->ops[k];
			struct anl_ev ev = { rank, k, op->comm,
					     op->kind == SNAP_OP_SEND ?
						     ANL_EK_SEND : ANL_EK_RECV,
					     false, op->peer_local < 0 };
			int peer = anl_op_peer(r, op);

			if (!anl_op_internal(op) || op->status == SNAP_ST_COMPLETE)
				continue;
			if (!o->all_ranks && shown >= TEXT_MAX_STEPS) {
				more++;
				continue;
			}
			fputs("  ", out);
			put_rank(r, rank, op->comm, true, out);
			if (peer < 0 || peer >= r->nranks) {
				fputs(" waits for any rank: ", out);
			} else {
				fputs(" waits for ", out);
				put_rank(r, peer, op->comm, false, out);
				fputs(": ", out);
			}
			put_detail(r, &ev, out);
			shown++;
		}
	}
	if (more)
		fprintf(out, "  ... %d more internal requests (--all-ranks shows "
			     "them)\n", more);
	if (shown || more)
		return;
	m = anl_ranks_text(c->ranks, c->nranks);
	site = anl_site(r, c->ranks[0]);
	fprintf(out, "  %s (%s) %s in it and none moved between the looks; %s\n",
		m, site, c->nranks == 1 ? "is" : "are all",
		r->v[c->vnode].evidence ?
			"none has an internal request pending" :
			"their internal requests were not read [inferred]");
	free(m);
	free(site);
}

static void put_cycles(const struct anl_result *r, const struct anl_opts *o,
		       FILE *out)
{
	for (int i = 0; i < r->ncycles; i++) {
		const struct anl_cycle *c = &r->cycles[i];
		char *ranks = anl_ranks_text(c->ranks, c->nranks);

		fprintf(out, "\n%s %d: %s\n", anl_cycle_kind_name(c->kind), i + 1,
			ranks);
		free(ranks);
		if (c->kind == ANL_CK_STUCK)
			put_stuck(r, c, o, out);
		else
			put_chain(r, c, o, out);
		put_rest(r, c, o, out);
	}
}

/* What a rank does, for grouping: ranks with equal keys share a line. */
struct gkey {
	int role;
	int what;		/* 0 plain, 1 moving, 2 non-blocking call,
				 * 3 message in transfer, 4 all finishing,
				 * 5 in MPI_Init, 6 computing, 7 waiting
				 * outside the job, 8 finalized */
	const char *call, *file, *func, *reason;
	int line;
	int stopped_by;		/* hashed as bytes: no implicit padding */
};

struct group {
	struct gkey key;
	int first;
	struct anl_ranges rs;
	UT_hash_handle hh;
};

static struct gkey rank_key(const struct anl_result *r, int i)
{
	const struct snap_rank *sr = &r->s->ranks[i];
	struct gkey k;

	memset(&k, 0, sizeof(k));
	k.role = r->ranks[i].role;
	k.stopped_by = sr->state == SNAP_RANK_COLLECTED ? sr->stopped_by : 0;
	/* Read, but waiting on processes outside the job: where. */
	if (k.role == ANL_ROLE_UNKNOWN &&
	    (r->ranks[i].miss & ANL_MISS_OUTSIDE))
		k.what = 7;
	else if (k.role == ANL_ROLE_GONE && sr->finalized)
		k.what = 8;	/* alive: where it runs */
	else if (k.role == ANL_ROLE_GONE || k.role == ANL_ROLE_UNKNOWN) {
		k.reason = sr->reason;
		return k;
	}
	k.call = sr->mpi_call;
	k.file = sr->call_file;
	k.func = sr->call_func;
	k.line = sr->call_line;
	if (k.role == ANL_ROLE_ACTIVE && sr->mpi_call)
		k.what = r->ranks[i].transfer ? 3 :
			 r->ranks[i].finishing ? 4 :
			 !strncmp(sr->mpi_call, "MPI_Init", 8) ? 5 :
			 sr->progress == SNAP_PROGRESS_CHANGED ? 1 :
			 r->ranks[i].computing >= 0 ? 6 : 2;
	return k;
}

static const char *group_text(const struct anl_result *r,
			      const struct gkey *k)
{
	bool maybe = r->verdict == ANL_INCOMPLETE;

	switch (k->role) {
	case ANL_ROLE_DEADLOCKED:
		return maybe ? "may be deadlocked" : "deadlocked";
	case ANL_ROLE_BEHIND:
		return maybe ? "waiting behind them" :
			       "waiting behind the deadlock";
	case ANL_ROLE_RELEASED:
		return "waiting on ranks that can go on";
	case ANL_ROLE_ACTIVE:
		return k->what == 1 ? "making progress" :
		       k->what == 2 ? "does not block" :
		       k->what == 3 ? "a matched message is in transfer" :
		       k->what == 4 ? "finishing (every rank is in it)" :
		       k->what == 5 ? "starting: MPI_Init waits for every "
				      "rank to call it" :
		       k->what == 6 ? "waiting, while another thread runs the "
				      "program's code and may yet send" : "";
	}
	return "";
}

/* The thread's frame in the user's code, NULL if none. */
static const struct snap_frame *user_frame(const struct snap_thread *th)
{
	return th->user_frame >= 0 && th->user_frame < th->nframes ?
		       &th->frames[th->user_frame] : NULL;
}

static bool at_site(const struct snap_thread *th, const struct snap_rank *sr)
{
	const struct snap_frame *f = user_frame(th);

	return th->mpi_call == sr->mpi_call && f && f->file == sr->call_file &&
	       f->line == sr->call_line;
}

/* The rank's other threads in MPI (not the one its line shows, not the
 * MPI library's own): a multithreaded rank may wait in several calls,
 * and its operations do not say which thread posted them.  With several
 * ranks on the line, those of the first (SPMD: the others' alike). */
static void put_threads(const struct anl_result *r, int rank, bool several,
			FILE *out)
{
	const struct snap_rank *sr = &r->s->ranks[rank];
	bool skipped = false;

	for (int t = 0; t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];
		const struct snap_frame *f;

		if (th->progress_thread || !th->mpi_call)
			continue;
		if (!skipped && at_site(th, sr)) {
			skipped = true;
			continue;
		}
		f = user_frame(th);
		fputs("      ", out);
		if (several)
			fprintf(out, "rank %d's ", rank);
		fprintf(out, "thread %d also in %s", th->tid, th->mpi_call);
		if (f && f->file && f->line > 0)
			fprintf(out, " at %s:%d", f->file, f->line);
		else if (f && f->func)
			fprintf(out, " in %s", f->func);
		fputc('\n', out);
	}
}

/*
 * A rank outside MPI in every look with requests pending may be a loop
 * that sleeps between its tests, which only libmdtrack.so's count of
 * polling calls shows (collector/looks.c): say so when it was not there.
 */
static void put_sleep_hint(const struct snap_rank *sr, FILE *out)
{
	int n = 0;

	if (sr->tracked || sr->progress != SNAP_PROGRESS_STABLE)
		return;
	for (int i = 0; i < sr->nops; i++)
		n += sr->ops[i].kind != SNAP_OP_UNEXPECTED;
	if (n)
		fprintf(out, "      outside MPI in every look with %d operation%s "
			"pending: a loop that sleeps between its tests shows "
			"as polling only with libmdtrack.so in the ranks "
			"(mpi-deadlock run, or mpirun -x LD_PRELOAD=...; "
			"README)\n", n, n == 1 ? "" : "s");
}

/* The MPI call whose callback the rank runs where its line says (a user
 * MPI_Op inside MPI_Allreduce), NULL if none. */
static const char *called_back_by(const struct snap_rank *sr)
{
	for (int t = 0; t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];
		const struct snap_frame *f = user_frame(th);

		if (th->called_back_by && !th->progress_thread && f &&
		    f->file == sr->call_file && f->line == sr->call_line)
			return th->called_back_by;
	}
	return NULL;
}

/* The thread that keeps a waiting rank going (of the first rank). */
static void put_computing(const struct anl_result *r, const struct group *g,
			  FILE *out)
{
	int t = r->ranks[g->first].computing;
	const struct snap_thread *th;
	const struct snap_frame *f;

	if (g->key.what != 6 || t < 0)
		return;
	th = &r->s->ranks[g->first].threads[t];
	f = &th->frames[th->user_frame];
	fputs("      ", out);
	if (g->rs.count > 1)
		fprintf(out, "rank %d's ", g->first);
	fprintf(out, "thread %d %s", th->tid,
		r->ranks[g->first].computing_how == ANL_GOING_SLEEPS ? "sleeps"
								     : "runs");
	if (f->file && f->line > 0)
		fprintf(out, " at %s:%d", f->file, f->line);
	if (f->func)
		fprintf(out, " in %s", f->func);
	fputc('\n', out);
}

/* Ranks held stopped by someone else: nothing they owe comes. */
static void put_stopped(const struct group *g, FILE *out)
{
	if (g->key.stopped_by)
		fprintf(out, "      stopped by %s, not by mpi-deadlock: %s "
			"nothing until %s SIGCONT (kill -CONT)\n",
			anl_signal_name(g->key.stopped_by),
			g->rs.count == 1 ? "it runs" : "they run",
			g->rs.count == 1 ? "it gets" : "they get");
}

static void put_group(const struct anl_result *r, struct group *g, FILE *out)
{
	const char *ranks = anl_ranges_str(&g->rs);
	const char *who = g->rs.count == 1 ? "rank" : "ranks";
	char *site;

	/* "exited before collection", not "exited (exited before ...)". */
	if (g->key.role == ANL_ROLE_GONE && g->key.reason &&
	    !strncmp(g->key.reason, "exited", 6)) {
		fprintf(out, "  %s %s: %s\n", who, ranks, g->key.reason);
		return;
	}
	if (g->key.what == 7) {
		site = anl_site(r, g->first);
		fprintf(out, "  %s %s: %s, %s on processes outside the job "
			"(spawned or connected), which are not read\n", who,
			ranks, site, g->rs.count == 1 ? "waits" : "wait");
		free(site);
		put_stopped(g, out);
		return;
	}
	if (g->key.what == 8) {
		site = anl_site(r, g->first);
		fprintf(out, "  %s %s: finalized (MPI_Finalize returned), now "
			"%s: %s nothing more\n", who, ranks, site,
			g->rs.count == 1 ? "it sends and receives"
					 : "they send and receive");
		free(site);
		put_stopped(g, out);
		return;
	}
	if (g->key.role == ANL_ROLE_GONE || g->key.role == ANL_ROLE_UNKNOWN) {
		fprintf(out, "  %s %s: %s%s%s%s\n", who, ranks,
			g->key.role == ANL_ROLE_GONE ? "exited" : "not read",
			g->key.reason ? " (" : "",
			g->key.reason ? g->key.reason : "",
			g->key.reason ? ")" : "");
		return;
	}
	/* Where a rank outside MPI is: what holds up the ones that wait
	 * for it (ranks at other places are other groups). */
	if (!g->key.call) {
		const struct snap_rank *sr = &r->s->ranks[g->first];
		const char *by = called_back_by(sr);

		/* "slow_sum at op.c:7, called back by MPI_Allreduce": in
		 * MPI's call, but running the program's code. */
		if (by && sr->call_file && sr->call_line > 0)
			site = xasprintf("%s at %s:%d, called back by %s",
					 sr->call_func ? sr->call_func : "?",
					 sr->call_file, sr->call_line, by);
		else if (by)
			site = xasprintf("%s, called back by %s",
					 sr->call_func ? sr->call_func : "?",
					 by);
		else
			site = anl_site(r, g->first);
		fprintf(out, "  %s %s: %s (%s)\n", who, ranks,
			g->key.stopped_by ? "stopped" : "running", site);
		free(site);
		put_stopped(g, out);
		put_sleep_hint(&r->s->ranks[g->first], out);
		return;
	}
	site = anl_site(r, g->first);
	fprintf(out, "  %s %s: %s, %s\n", who, ranks, site, group_text(r, &g->key));
	free(site);
	put_stopped(g, out);
	put_computing(r, g, out);
	put_threads(r, g->first, g->rs.count > 1, out);
}

/* Groups in order of their first rank; with all_ranks one per rank. */
static void put_groups(const struct anl_result *r, const struct anl_opts *o,
		       FILE *out)
{
	struct group *table = NULL, **order = NULL, *g;
	int ng = 0, cap = 0;

	fputs("\nranks:\n", out);
	for (int i = 0; i < r->nranks; i++) {
		struct gkey k = rank_key(r, i);

		g = NULL;
		HASH_FIND(hh, table, &k, sizeof(k), g);
		if (!g || o->all_ranks) {
			if (ng == cap) {
				cap = cap ? 2 * cap : 16;
				order = xrealloc(order, (size_t)cap * sizeof(*order));
			}
			g = xcalloc(1, sizeof(*g));
			g->key = k;
			g->first = i;
			anl_ranges_init(&g->rs);
			order[ng++] = g;
			if (!o->all_ranks)
				HASH_ADD(hh, table, key, sizeof(k), g);
		}
		anl_ranges_add(&g->rs, i);
	}
	HASH_CLEAR(hh, table);
	for (int i = 0; i < ng; i++) {
		put_group(r, order[i], out);
		anl_ranges_free(&order[i]->rs);
		free(order[i]);
	}
	free(order);
}

static void put_missing(const struct anl_result *r, FILE *out)
{
	int n;
	char **lines = anl_missing(r, &n);

	if (n)
		fputs("\nmissing:\n", out);
	for (int i = 0; i < n; i++)
		fprintf(out, "  %s\n", lines[i]);
	anl_strv_free(lines, n);
	if (r->s->nnotes)
		fputs("\nnotes from the collector:\n", out);
	for (int i = 0; i < r->s->nnotes; i++)
		fprintf(out, "  %s\n", r->s->notes[i]);
}

/* Where the evidence came from: the MPI library's DLL and its types. */
static void put_source(const struct anl_result *r, FILE *out)
{
	const struct snap *s = r->s;

	if (!s->dll && !s->types && !s->impl)
		return;
	fputs("\nsource:\n", out);
	if (s->impl)
		fprintf(out, "  MPI implementation: %s%s%s%s\n", s->impl,
			s->mpi ? " (" : "", s->mpi ? s->mpi : "",
			s->mpi ? ")" : "");
	if (s->dll)
		fprintf(out, "  message queues: %s\n", s->dll);
	if (s->types)
		fprintf(out, "  MPI library types: %s\n", s->types);
}

struct host_ranks {
	const char *host;	/* interned: equal names, one pointer */
	const char *via;	/* collected_on of its first rank read */
	struct anl_ranges rs;
	int order;
	UT_hash_handle hh;
};

static int by_order(const void *a, const void *b)
{
	return (*(struct host_ranks *const *)a)->order -
	       (*(struct host_ranks *const *)b)->order;
}

/* A job on several hosts: which ranks ran where and which collector read
 * them (the front end's host or an agent's).  Nothing for one host. */
static void put_hosts(const struct anl_result *r, FILE *out)
{
	struct host_ranks *table = NULL, *h, *tmp, **order;
	int n = 0;

	for (int i = 0; i < r->nranks; i++) {
		const struct snap_rank *sr = &r->s->ranks[i];
		const char *key = sr->host ? sr->host : "";

		HASH_FIND_PTR(table, &key, h);
		if (!h) {
			h = xcalloc(1, sizeof(*h));
			h->host = key;
			h->order = n++;
			anl_ranges_init(&h->rs);
			HASH_ADD_PTR(table, host, h);
		}
		if (!h->via && sr->state != SNAP_RANK_REMOTE)
			h->via = sr->collected_on;
		anl_ranges_add(&h->rs, i);
	}
	order = xmalloc((size_t)n * sizeof(*order) + 1);
	n = 0;
	HASH_ITER(hh, table, h, tmp)
		order[n++] = h;
	qsort(order, (size_t)n, sizeof(*order), by_order);
	if (n > 1)
		fputs("\nhosts:\n", out);
	for (int i = 0; i < n; i++) {
		h = order[i];
		if (n > 1)
			fprintf(out, "  %s: %s %s, %s%s\n",
				*h->host ? h->host : "(unknown)",
				h->rs.count == 1 ? "rank" : "ranks",
				anl_ranges_str(&h->rs),
				h->via ? "collected on " : "not collected",
				h->via ? h->via : "");
		HASH_DEL(table, h);
		anl_ranges_free(&h->rs);
		free(h);
	}
	free(order);
}

/* libmdtrack.so: where stuck requests were posted, collectives that
 * disagree (analyzer/track.c). */
static void put_track(const struct anl_result *r, const struct anl_opts *o,
		      FILE *out)
{
	struct anl_posting *p;
	struct anl_disagree *d;
	int n = anl_postings(r, &p), nd, shown;
	char *line;

	if (n)
		fputs("\nposted:\n", out);
	shown = o->all_ranks || n <= TEXT_MAX_STEPS ? n : TEXT_MAX_STEPS;
	for (int i = 0; i < shown; i++) {
		line = anl_posting_text(r, &p[i]);
		fprintf(out, "  %s\n", line);
		free(line);
	}
	if (shown < n)
		fprintf(out, "  ... %d more (--all-ranks shows them)\n",
			n - shown);
	free(p);
	nd = anl_disagreements(r, &d);
	if (nd)
		fputs("\ncollectives that disagree:\n", out);
	for (int i = 0; i < nd; i++) {
		line = anl_disagree_text(r, &d[i]);
		fprintf(out, "  %s\n", line);
		free(line);
	}
	anl_disagree_free(d, nd);
}

void anl_report_text(const struct anl_result *r, const struct anl_opts *o,
		     FILE *out)
{
	char *summary = anl_summary(r);

	fprintf(out, "%s\n", summary);
	free(summary);
	put_cycles(r, o, out);
	put_track(r, o, out);
	put_groups(r, o, out);
	put_hosts(r, out);
	put_missing(r, out);
	put_source(r, out);
}
