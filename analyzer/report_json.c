/* report_json.c - the machine-readable report (doc/report-format.md),
 * written with yajl's generator: two-space indents, "key": value. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "anl_int.h"
#include "md.h"

typedef yajl_gen jg;

static void key(jg g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(jg g, const char *k, const char *v)
{
	key(g, k);
	if (v)
		yajl_gen_string(g, (const unsigned char *)v, strlen(v));
	else
		yajl_gen_null(g);
}

static void num(jg g, const char *k, long long v)
{
	key(g, k);
	yajl_gen_integer(g, v);
}

static void u64(jg g, const char *k, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);

	key(g, k);
	yajl_gen_number(g, buf, (size_t)n);
}

/* An integer, or null when !have. */
static void num_or_null(jg g, const char *k, bool have, long long v)
{
	key(g, k);
	if (have)
		yajl_gen_integer(g, v);
	else
		yajl_gen_null(g);
}

static void boolean(jg g, const char *k, bool v)
{
	key(g, k);
	yajl_gen_bool(g, v);
}

static void int_array(jg g, const char *k, const int *v, int n)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (int i = 0; i < n; i++)
		yajl_gen_integer(g, v[i]);
	yajl_gen_array_close(g);
}

static void comm_obj(jg g, const struct anl_result *r, int comm)
{
	key(g, "comm");
	yajl_gen_map_open(g);
	str(g, "name", anl_comm_name(r, comm));
	if (comm >= 0 && comm < r->s->ncomms)
		u64(g, "id", r->s->comms[comm].id);
	else
		str(g, "id", NULL);
	yajl_gen_map_close(g);
}

static void op_fields(jg g, const struct snap_op *op)
{
	num_or_null(g, "tag", op && !op->any_tag, op ? op->tag : 0);
	boolean(g, "any_tag", op && op->any_tag);
	/* MPICH's DLL gives counts, not bytes: bytes is null then. */
	if (op && (op->length || !op->count || op->datatype))
		u64(g, "bytes", op->length);
	else
		str(g, "bytes", NULL);
	if (op && op->datatype)
		str(g, "datatype", op->datatype);
	if (op && (op->datatype || op->count))
		u64(g, "count", op->count);
	key(g, "extra");
	yajl_gen_array_open(g);
	for (int i = 0; op && i < op->nextra && i < 5; i++)
		if (op->extra[i])
			yajl_gen_string(g, (const unsigned char *)op->extra[i],
					strlen(op->extra[i]));
	yajl_gen_array_close(g);
}

/* The unexpected messages that explain a waiting receive (unexpected.c). */
static void unmatched(jg g, const struct anl_result *r, int rank, int k)
{
	int idx[8], n = anl_unexpected_find(r->s, rank, k, idx, 8);
	char *text;

	if (!n)
		return;
	key(g, "unmatched");
	yajl_gen_array_open(g);
	for (int i = 0; i < n && i < 8; i++) {
		const struct snap_op *u = &r->s->ranks[rank].ops[idx[i]];

		yajl_gen_map_open(g);
		num(g, "from", u->peer_global);
		num(g, "tag", u->tag);
		comm_obj(g, r, u->comm);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	text = anl_unexpected_text(r, rank, k);
	str(g, "unmatched_text", text);
	free(text);
}

/* One edge between ranks; an edge into a virtual node is followed by the
 * node's own edge and shown as one.  Returns edges used. */
static void alternatives(jg g, const struct anl_result *r, int e);

/* What a wait of ev->rank is, to rank to (-1: null). */
static void wait_fields(jg g, const struct anl_result *r,
			const struct anl_ev *ev, int to)
{
	const struct snap_rank *sr = &r->s->ranks[ev->rank];

	num_or_null(g, "to", to >= 0, to);
	str(g, "kind", anl_edge_kind_name(ev->kind));
	comm_obj(g, r, ev->comm);
	op_fields(g, ev->op >= 0 ? &sr->ops[ev->op] : NULL);
	if (ev->op >= 0)
		unmatched(g, r, ev->rank, ev->op);
	boolean(g, "any_source", ev->any_source);
	boolean(g, "inferred", ev->inferred);
}

static int edge_obj(jg g, const struct anl_result *r, const int *path,
		    int left)
{
	const struct anl_ev *ev = anl_edge_ev(r, path[0]);
	int from = wfg_edge_from(r->g, path[0]), to = wfg_edge_to(r->g, path[0]);
	const struct snap_rank *sr = &r->s->ranks[from];
	int used = 1;
	bool any = false;

	if (to >= r->nranks && left > 1) {
		any = r->v[to - r->nranks].kind == ANL_V_ANY;
		to = wfg_edge_to(r->g, path[1]);
		used = 2;
	}
	if (!ev || from >= r->nranks)
		return used;
	yajl_gen_map_open(g);
	num(g, "from", from);
	/* "Any source", or a peer no operation names (a wait through the
	 * communicator's "any" node): the member the search went through
	 * is no answer. */
	wait_fields(g, r, ev, ev->any_source || any ? -1 : to);
	str(g, "from_call", sr->mpi_call);
	str(g, "from_file", sr->call_file);
	num(g, "from_line", sr->call_line);
	if (wfg_cond(r->g, from) == WFG_OR)
		alternatives(g, r, path[0]);
	yajl_gen_map_close(g);
	return used;
}

/* An OR-waiter's other waits ("or"), any of which would release it: the
 * same objects, without an "or" of their own. */
static void alternatives(jg g, const struct anl_result *r, int e)
{
	int from = wfg_edge_from(r->g, e), first;
	int n = wfg_out(r->g, from, &first);
	bool open = false;

	for (int k = first; k < first + n; k++) {
		const struct anl_ev *ev = anl_edge_ev(r, k);
		int to = wfg_edge_to(r->g, k);

		if (k == e || !ev)
			continue;
		if (!open) {
			key(g, "or");
			yajl_gen_array_open(g);
			open = true;
		}
		yajl_gen_map_open(g);
		wait_fields(g, r, ev, to < r->nranks ? to : -1);
		yajl_gen_map_close(g);
	}
	if (open)
		yajl_gen_array_close(g);
}

/* The part's ranks that the edges do not name, each with its wait into
 * the part (anl_cycle_rest). */
static void also_arr(jg g, const struct anl_result *r,
		     const struct anl_cycle *c)
{
	struct anl_rest *rest;
	int n = anl_cycle_rest(r, c, &rest);

	key(g, "also");
	yajl_gen_array_open(g);
	for (int i = 0; i < n; i++)
		if (rest[i].n)
			edge_obj(g, r, rest[i].path, rest[i].n);
	yajl_gen_array_close(g);
	free(rest);
}

/* A stuck collective's members' pending internal requests (ob1), as the
 * text report lists them. */
static void internal_arr(jg g, const struct anl_result *r,
			 const struct anl_cycle *c)
{
	key(g, "internal_requests");
	yajl_gen_array_open(g);
	for (int i = 0; i < c->nranks; i++) {
		const struct snap_rank *sr = &r->s->ranks[c->ranks[i]];

		for (int k = 0; k < sr->nops; k++) {
			const struct snap_op *op = &sr->ops[k];
			int peer = anl_op_peer(r, op);

			if (!anl_op_internal(op) || op->status == SNAP_ST_COMPLETE)
				continue;
			yajl_gen_map_open(g);
			num(g, "from", c->ranks[i]);
			num_or_null(g, "to", peer >= 0 && peer < r->nranks, peer);
			str(g, "kind", op->kind == SNAP_OP_SEND ? "send"
								 : "receive");
			comm_obj(g, r, op->comm);
			op_fields(g, op);
			yajl_gen_map_close(g);
		}
	}
	yajl_gen_array_close(g);
}

static void cycles_arr(jg g, const struct anl_result *r)
{
	key(g, "cycles");
	yajl_gen_array_open(g);
	for (int i = 0; i < r->ncycles; i++) {
		const struct anl_cycle *c = &r->cycles[i];

		yajl_gen_map_open(g);
		str(g, "kind", anl_cycle_kind_name(c->kind));
		int_array(g, "ranks", c->ranks, c->nranks);
		key(g, "edges");
		yajl_gen_array_open(g);
		for (int k = 0; k < c->nedges;)
			k += edge_obj(g, r, c->edges + k, c->nedges - k);
		yajl_gen_array_close(g);
		also_arr(g, r, c);
		if (c->kind == ANL_CK_STUCK) {
			char *reason = anl_stuck_reason(r, c);

			str(g, "reason", reason);
			boolean(g, "internal_requests_read",
				r->v[c->vnode].evidence);
			internal_arr(g, r, c);
			free(reason);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

/* A rank's application threads, when it has more than one: where each
 * is, and which one keeps a waiting rank going. */
static void threads_arr(jg g, const struct anl_result *r, int rank)
{
	const struct snap_rank *sr = &r->s->ranks[rank];
	int napp = 0;

	for (int t = 0; t < sr->nthreads; t++)
		napp += !sr->threads[t].progress_thread;
	if (napp < 2)
		return;
	key(g, "threads");
	yajl_gen_array_open(g);
	for (int t = 0; t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];
		const struct snap_frame *f =
			th->user_frame >= 0 && th->user_frame < th->nframes ?
				&th->frames[th->user_frame] : NULL;

		if (th->progress_thread)
			continue;
		yajl_gen_map_open(g);
		num(g, "tid", th->tid);
		str(g, "call", th->mpi_call);
		if (th->called_back_by)
			str(g, "called_back_by", th->called_back_by);
		str(g, "func", f ? f->func : NULL);
		str(g, "file", f ? f->file : NULL);
		num(g, "line", f ? f->line : 0);
		if (r->ranks[rank].computing == t)
			boolean(g, "keeps_rank_going", true);
		if (r->ranks[rank].computing == t &&
		    r->ranks[rank].computing_how == ANL_GOING_SLEEPS)
			boolean(g, "sleeps", true);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void ranks_arr(jg g, const struct anl_result *r)
{
	static const char *const states[] = {
		"active", "blocked", "gone", "unknown",
	};

	key(g, "ranks");
	yajl_gen_array_open(g);
	for (int i = 0; i < r->nranks; i++) {
		const struct snap_rank *sr = &r->s->ranks[i];

		yajl_gen_map_open(g);
		num(g, "rank", i);
		str(g, "state", states[r->ranks[i].state]);
		str(g, "role", anl_role_name(r->ranks[i].role));
		str(g, "call", sr->mpi_call);
		str(g, "func", sr->call_func);
		str(g, "file", sr->call_file);
		num(g, "line", sr->call_line);
		if (sr->stopped_by && sr->state == SNAP_RANK_COLLECTED)
			str(g, "stopped_by", anl_signal_name(sr->stopped_by));
		if (sr->finalized)
			boolean(g, "finalized", true);
		if (r->ranks[i].miss & ANL_MISS_OUTSIDE)
			boolean(g, "waits_outside_job", true);
		threads_arr(g, r, i);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void role_arr(jg g, const char *k, const struct anl_result *r,
		     enum anl_role role)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (int i = 0; i < r->nranks; i++)
		if (r->ranks[i].role == role)
			yajl_gen_integer(g, i);
	yajl_gen_array_close(g);
}

/* A libmdtrack.so record's fields: the call, its arguments, its site. */
static void track_fields(jg g, const struct anl_result *r,
			 const struct snap_track_rec *t)
{
	int peer = anl_track_peer_global(r, t);
	char *comm = anl_track_comm(r, t);

	str(g, "call", t->call);
	str(g, "file", t->file);
	num_or_null(g, "line", t->line, t->line);
	str(g, "func", t->func);
	str(g, "comm", comm);
	free(comm);
	num_or_null(g, "peer", t->peer >= 0, t->peer);
	num_or_null(g, "peer_global", peer >= 0, peer);
	boolean(g, "any_source", t->peer == SNAP_TRACK_ANY);
	num_or_null(g, "tag", t->tag > SNAP_TRACK_ROOT, t->tag);
	boolean(g, "any_tag", t->tag == SNAP_TRACK_ANY);
	num(g, "count", t->count);
	str(g, "datatype", t->datatype_name);
	str(g, "op", t->op_name);
}

static void track_obj(jg g, const char *k, const struct anl_result *r,
		      const struct snap_track_rec *t)
{
	if (!t) {
		str(g, k, NULL);
		return;
	}
	key(g, k);
	yajl_gen_map_open(g);
	track_fields(g, r, t);
	yajl_gen_map_close(g);
}

static void postings_arr(jg g, const struct anl_result *r)
{
	struct anl_posting *p;
	int n = anl_postings(r, &p);

	key(g, "postings");
	yajl_gen_array_open(g);
	for (int i = 0; i < n; i++) {
		char *text = anl_posting_text(r, &p[i]);
		/* A nonblocking collective's own request is not seen, only
		 * its internal ones. */
		bool nbc = p[i].post && p[i].post->kind == SNAP_TRACK_COLL;
		char *req = nbc ? NULL : xasprintf("0x%llx", (unsigned long long)r->s
				->ranks[p[i].rank].ops[p[i].op].request);

		yajl_gen_map_open(g);
		num(g, "rank", p[i].rank);
		str(g, "request", req);
		track_obj(g, "posted", r, p[i].init ? p[i].init : p[i].post);
		track_obj(g, "started", r, p[i].init ? p[i].post : NULL);
		str(g, "text", text);
		yajl_gen_map_close(g);
		free(req);
		free(text);
	}
	yajl_gen_array_close(g);
	free(p);
}

static void disagreements_arr(jg g, const struct anl_result *r)
{
	static const char *const kinds[] = { "call", "root", "count",
					     "datatype", "op", "comm" };
	struct anl_disagree *d;
	int n = anl_disagreements(r, &d);

	key(g, "disagreements");
	yajl_gen_array_open(g);
	for (int i = 0; i < n; i++) {
		char *text = anl_disagree_text(r, &d[i]);

		yajl_gen_map_open(g);
		key(g, "differ");
		yajl_gen_array_open(g);
		for (unsigned k = 0; k < 6; k++)
			if (d[i].differ & (1u << k))
				yajl_gen_string(g,
					(const unsigned char *)kinds[k],
					strlen(kinds[k]));
		yajl_gen_array_close(g);
		key(g, "groups");
		yajl_gen_array_open(g);
		for (int k = 0; k < d[i].ngroups; k++) {
			yajl_gen_map_open(g);
			track_fields(g, r, d[i].groups[k].rec);
			num_or_null(g, "ncalls", d[i].groups[k].rec->ncalls,
				    (long long)d[i].groups[k].rec->ncalls);
			int_array(g, "ranks", d[i].groups[k].ranks,
				  d[i].groups[k].nranks);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		str(g, "text", text);
		yajl_gen_map_close(g);
		free(text);
	}
	yajl_gen_array_close(g);
	anl_disagree_free(d, n);
}

static void missing_arr(jg g, const struct anl_result *r)
{
	int n;
	char **lines = anl_missing(r, &n);

	key(g, "missing");
	yajl_gen_array_open(g);
	for (int i = 0; i < n; i++)
		yajl_gen_string(g, (const unsigned char *)lines[i],
				strlen(lines[i]));
	yajl_gen_array_close(g);
	anl_strv_free(lines, n);
}

/* yajl prints an empty array as "[", "\n", "\n", indent, "]": the
 * second newline is dropped, so it reads "[\n  ]" like any closing
 * bracket on its own line. */
struct out {
	FILE *f;
	int opened;	/* 1 after "[" or "{", 2 after its newline */
};

static void print(void *ctx, const char *s, size_t len)
{
	struct out *o = ctx;
	bool nl = len == 1 && s[0] == '\n';

	if (nl && o->opened == 2) {
		o->opened = 0;
		return;
	}
	o->opened = len == 1 && (s[0] == '[' || s[0] == '{') ? 1
		    : nl && o->opened == 1		  ? 2
							  : 0;
	fwrite(s, 1, len, o->f);
}

void anl_report_json(const struct anl_result *r, FILE *out)
{
	jg g = yajl_gen_alloc(NULL);
	struct out o = { out, 0 };
	char *summary = anl_summary(r);

	if (!g) {
		md_error("yajl_gen_alloc: out of memory");
		abort();
	}
	/* Pretty: a value per line, the closing newline yajl's. */
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	yajl_gen_config(g, yajl_gen_print_callback, print, &o);
	yajl_gen_map_open(g);
	str(g, "format", "mpi-deadlock-report");
	num(g, "version", 1);
	str(g, "verdict", anl_verdict_name(r->verdict));
	str(g, "summary", summary);
	num(g, "nranks", r->nranks);
	role_arr(g, "deadlocked", r, ANL_ROLE_DEADLOCKED);
	role_arr(g, "behind", r, ANL_ROLE_BEHIND);
	cycles_arr(g, r);
	ranks_arr(g, r);
	postings_arr(g, r);
	disagreements_arr(g, r);
	missing_arr(g, r);
	yajl_gen_map_close(g);
	yajl_gen_free(g);
	free(summary);
}
