/* report_json.c - the machine-readable report (doc/report-format.md). */
#include <stdlib.h>

#include <json-c/json.h>

#include "anl_int.h"
#include "md.h"

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *int_array(const int *v, int n)
{
	json_object *a = json_object_new_array_ext(n);

	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int(v[i]));
	return a;
}

static json_object *comm_obj(const struct anl_result *r, int comm)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name",
			       json_object_new_string(anl_comm_name(r, comm)));
	json_object_object_add(o, "id", comm >= 0 && comm < r->s->ncomms ?
		json_object_new_uint64(r->s->comms[comm].id) : NULL);
	return o;
}

static void add_op_fields(json_object *o, const struct snap_op *op)
{
	json_object *extra = json_object_new_array();

	json_object_object_add(o, "tag", op && !op->any_tag ?
			       json_object_new_int(op->tag) : NULL);
	json_object_object_add(o, "any_tag",
			       json_object_new_boolean(op && op->any_tag));
	json_object_object_add(o, "bytes", op && (op->length || !op->count ||
						  op->datatype) ?
			       json_object_new_uint64(op->length) : NULL);
	if (op && op->datatype)
		json_object_object_add(o, "datatype",
				       json_object_new_string(op->datatype));
	if (op && (op->datatype || op->count))
		json_object_object_add(o, "count",
				       json_object_new_uint64(op->count));
	for (int i = 0; op && i < op->nextra && i < 5; i++)
		if (op->extra[i])
			json_object_array_add(extra,
				json_object_new_string(op->extra[i]));
	json_object_object_add(o, "extra", extra);
}

/* The unexpected messages that explain a waiting receive (unexpected.c). */
static void add_unmatched(json_object *o, const struct anl_result *r,
			  int rank, int k)
{
	int idx[8], n = anl_unexpected_find(r->s, rank, k, idx, 8);
	json_object *a;
	char *text;

	if (!n)
		return;
	a = json_object_new_array_ext(n < 8 ? n : 8);
	for (int i = 0; i < n && i < 8; i++) {
		const struct snap_op *u = &r->s->ranks[rank].ops[idx[i]];
		json_object *m = json_object_new_object();

		json_object_object_add(m, "from",
				       json_object_new_int(u->peer_global));
		json_object_object_add(m, "tag", json_object_new_int(u->tag));
		json_object_object_add(m, "comm", comm_obj(r, u->comm));
		json_object_array_add(a, m);
	}
	json_object_object_add(o, "unmatched", a);
	text = anl_unexpected_text(r, rank, k);
	json_object_object_add(o, "unmatched_text", str_or_null(text));
	free(text);
}

/* One edge between ranks; an edge into a virtual node is followed by the
 * node's own edge and shown as one.  Returns edges used. */
static int edge_obj(const struct anl_result *r, const int *path, int left,
		    json_object *edges)
{
	const struct anl_ev *ev = anl_edge_ev(r, path[0]);
	int from = wfg_edge_from(r->g, path[0]), to = wfg_edge_to(r->g, path[0]);
	const struct snap_rank *sr = &r->s->ranks[from];
	json_object *o;
	int used = 1;

	if (to >= r->nranks && left > 1) {
		to = wfg_edge_to(r->g, path[1]);
		used = 2;
	}
	if (!ev || from >= r->nranks)
		return used;
	o = json_object_new_object();
	json_object_object_add(o, "from", json_object_new_int(from));
	json_object_object_add(o, "to", json_object_new_int(to));
	json_object_object_add(o, "kind",
			json_object_new_string(anl_edge_kind_name(ev->kind)));
	json_object_object_add(o, "comm", comm_obj(r, ev->comm));
	add_op_fields(o, ev->op >= 0 ? &sr->ops[ev->op] : NULL);
	if (ev->op >= 0)
		add_unmatched(o, r, from, ev->op);
	json_object_object_add(o, "any_source",
			       json_object_new_boolean(ev->any_source));
	json_object_object_add(o, "inferred",
			       json_object_new_boolean(ev->inferred));
	json_object_object_add(o, "from_call", str_or_null(sr->mpi_call));
	json_object_object_add(o, "from_file", str_or_null(sr->call_file));
	json_object_object_add(o, "from_line", json_object_new_int(sr->call_line));
	json_object_array_add(edges, o);
	return used;
}

static json_object *cycles_arr(const struct anl_result *r)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < r->ncycles; i++) {
		const struct anl_cycle *c = &r->cycles[i];
		json_object *o = json_object_new_object();
		json_object *edges = json_object_new_array();

		for (int k = 0; k < c->nedges;)
			k += edge_obj(r, c->edges + k, c->nedges - k, edges);
		json_object_object_add(o, "kind", json_object_new_string(
					       anl_cycle_kind_name(c->kind)));
		json_object_object_add(o, "ranks", int_array(c->ranks, c->nranks));
		json_object_object_add(o, "edges", edges);
		if (c->kind == ANL_CK_STUCK) {
			char *reason = anl_stuck_reason(r, c);

			json_object_object_add(o, "reason",
					       json_object_new_string(reason));
			json_object_object_add(o, "internal_requests_read",
				json_object_new_boolean(r->v[c->vnode].evidence));
			free(reason);
		}
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *rank_obj(const struct anl_result *r, int i)
{
	static const char *const states[] = {
		"active", "blocked", "gone", "unknown",
	};
	const struct snap_rank *sr = &r->s->ranks[i];
	json_object *o = json_object_new_object();

	json_object_object_add(o, "rank", json_object_new_int(i));
	json_object_object_add(o, "state",
			json_object_new_string(states[r->ranks[i].state]));
	json_object_object_add(o, "role",
			json_object_new_string(anl_role_name(r->ranks[i].role)));
	json_object_object_add(o, "call", str_or_null(sr->mpi_call));
	json_object_object_add(o, "func", str_or_null(sr->call_func));
	json_object_object_add(o, "file", str_or_null(sr->call_file));
	json_object_object_add(o, "line", json_object_new_int(sr->call_line));
	return o;
}

static json_object *role_arr(const struct anl_result *r, enum anl_role role)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < r->nranks; i++)
		if (r->ranks[i].role == role)
			json_object_array_add(a, json_object_new_int(i));
	return a;
}

/* A libmdtrack.so record: the call, its arguments and its site. */
static json_object *track_obj(const struct anl_result *r,
			      const struct snap_track_rec *t)
{
	json_object *o = json_object_new_object();
	int g = anl_track_peer_global(r, t);
	char *comm = anl_track_comm(r, t);

	json_object_object_add(o, "call", json_object_new_string(t->call));
	json_object_object_add(o, "file", str_or_null(t->file));
	json_object_object_add(o, "line", t->line ?
			       json_object_new_int(t->line) : NULL);
	json_object_object_add(o, "func", str_or_null(t->func));
	json_object_object_add(o, "comm", json_object_new_string(comm));
	free(comm);
	json_object_object_add(o, "peer", t->peer >= 0 ?
			       json_object_new_int(t->peer) : NULL);
	json_object_object_add(o, "peer_global", g >= 0 ?
			       json_object_new_int(g) : NULL);
	json_object_object_add(o, "any_source", json_object_new_boolean(
				       t->peer == SNAP_TRACK_ANY));
	json_object_object_add(o, "tag", t->tag > SNAP_TRACK_ROOT ?
			       json_object_new_int(t->tag) : NULL);
	json_object_object_add(o, "any_tag", json_object_new_boolean(
				       t->tag == SNAP_TRACK_ANY));
	json_object_object_add(o, "count", json_object_new_int(t->count));
	json_object_object_add(o, "datatype", str_or_null(t->datatype_name));
	json_object_object_add(o, "op", str_or_null(t->op_name));
	return o;
}

static json_object *postings_arr(const struct anl_result *r)
{
	struct anl_posting *p;
	int n = anl_postings(r, &p);
	json_object *a = json_object_new_array_ext(n);

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		const struct snap_track_rec *made = p[i].init ? p[i].init
							      : p[i].post;
		char *text = anl_posting_text(r, &p[i]);
		char *req = xasprintf("0x%llx", (unsigned long long)r->s
				->ranks[p[i].rank].ops[p[i].op].request);

		json_object_object_add(o, "rank", json_object_new_int(p[i].rank));
		json_object_object_add(o, "request", json_object_new_string(req));
		free(req);
		json_object_object_add(o, "posted", track_obj(r, made));
		json_object_object_add(o, "started",
				       p[i].init && p[i].post ?
				       track_obj(r, p[i].post) : NULL);
		json_object_object_add(o, "text", json_object_new_string(text));
		free(text);
		json_object_array_add(a, o);
	}
	free(p);
	return a;
}

static json_object *disagreements_arr(const struct anl_result *r)
{
	static const char *const kinds[] = { "call", "root", "count",
					     "datatype", "op", "comm" };
	struct anl_disagree *d;
	int n = anl_disagreements(r, &d);
	json_object *a = json_object_new_array_ext(n);

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		json_object *diff = json_object_new_array();
		json_object *groups = json_object_new_array();
		char *text = anl_disagree_text(r, &d[i]);

		for (unsigned k = 0; k < 6; k++)
			if (d[i].differ & (1u << k))
				json_object_array_add(
					diff, json_object_new_string(kinds[k]));
		for (int g = 0; g < d[i].ngroups; g++) {
			json_object *go = track_obj(r, d[i].groups[g].rec);

			json_object_object_add(go, "ranks", int_array(
					d[i].groups[g].ranks,
					d[i].groups[g].nranks));
			json_object_array_add(groups, go);
		}
		json_object_object_add(o, "differ", diff);
		json_object_object_add(o, "groups", groups);
		json_object_object_add(o, "text", json_object_new_string(text));
		free(text);
		json_object_array_add(a, o);
	}
	anl_disagree_free(d, n);
	return a;
}

void anl_report_json(const struct anl_result *r, FILE *out)
{
	json_object *o = json_object_new_object(), *ranks, *miss;
	char *summary = anl_summary(r);
	char **lines;
	int n;

	json_object_object_add(o, "format",
			       json_object_new_string("mpi-deadlock-report"));
	json_object_object_add(o, "version", json_object_new_int(1));
	json_object_object_add(o, "verdict", json_object_new_string(
				       anl_verdict_name(r->verdict)));
	json_object_object_add(o, "summary", json_object_new_string(summary));
	json_object_object_add(o, "nranks", json_object_new_int(r->nranks));
	json_object_object_add(o, "deadlocked",
			       role_arr(r, ANL_ROLE_DEADLOCKED));
	json_object_object_add(o, "behind", role_arr(r, ANL_ROLE_BEHIND));
	json_object_object_add(o, "cycles", cycles_arr(r));
	ranks = json_object_new_array_ext(r->nranks);
	for (int i = 0; i < r->nranks; i++)
		json_object_array_add(ranks, rank_obj(r, i));
	json_object_object_add(o, "ranks", ranks);
	json_object_object_add(o, "postings", postings_arr(r));
	json_object_object_add(o, "disagreements", disagreements_arr(r));
	lines = anl_missing(r, &n);
	miss = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(miss, json_object_new_string(lines[i]));
	json_object_object_add(o, "missing", miss);
	anl_strv_free(lines, n);
	fprintf(out, "%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(summary);
}
