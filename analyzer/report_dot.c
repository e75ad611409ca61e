/*
 * report_dot.c - the deadlocked part as a Graphviz graph: ranks, the
 * waits between them, and each stuck collective as a node of its own
 * that its members are in, with its reason and the internal requests
 * (what the text report says of it).  Dotted edges are inferred, dashed
 * ones alternatives (OR).
 */
#include <stdlib.h>

#include "anl_int.h"
#include "md.h"

/* Text inside a double-quoted DOT string. */
static void put_escaped(const char *text, FILE *out)
{
	for (const char *p = text; *p; p++)
		fprintf(out, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
}

static void put_node(const struct anl_result *r, int i, FILE *out)
{
	char *site = anl_site(r, i);
	const char *style = r->ranks[i].role == ANL_ROLE_BEHIND ?
		", style=filled, fillcolor=grey85, fontcolor=grey40" : "";

	fprintf(out, "  r%d [label=\"rank %d\\n", i, i);
	put_escaped(site, out);
	fprintf(out, "\"%s];\n", style);
	free(site);
}

static bool shown(const struct anl_result *r, int v)
{
	return v < r->nranks && (r->ranks[v].role == ANL_ROLE_DEADLOCKED ||
				 r->ranks[v].role == ANL_ROLE_BEHIND ||
				 r->ranks[v].state == WFG_GONE);
}

/* Edges between shown ranks, through virtual nodes expanded (bounded:
 * each rank's out-edges, and a virtual node's only once per rank). */
static void put_edges(const struct anl_result *r, int v, FILE *out)
{
	int first, n = wfg_out(r->g, v, &first);
	bool dashed = wfg_cond(r->g, v) == WFG_OR && n > 1;

	for (int e = first; e < first + n; e++) {
		const struct anl_ev *ev = anl_edge_ev(r, e);
		int t = wfg_edge_to(r->g, e), vf, vn;
		const struct snap_op *op = ev && ev->op >= 0 ?
			&r->s->ranks[v].ops[ev->op] : NULL;
		char label[64] = "";

		if (op && !op->any_tag)
			snprintf(label, sizeof(label), "tag %d", op->tag);
		else if (ev)
			snprintf(label, sizeof(label), "%s",
				 anl_edge_kind_name(ev->kind));
		if (t < r->nranks) {
			if (shown(r, t))
				fprintf(out, "  r%d -> r%d [label=\"%s\"%s];\n",
					v, t, label, dashed ? ", style=dashed" : "");
			continue;
		}
		vn = wfg_out(r->g, t, &vf);
		for (int k = vf; k < vf + vn; k++)
			if (shown(r, wfg_edge_to(r->g, k)) &&
			    wfg_edge_to(r->g, k) != v)
				fprintf(out, "  r%d -> r%d [label=\"%s\"%s];\n", v,
					wfg_edge_to(r->g, k), label,
					wfg_cond(r->g, t) == WFG_OR ?
					", style=dashed" : "");
	}
}

/* The internal requests of a stuck collective's member rank: to the
 * member it waits for, or to the collective for any rank. */
static void put_internal(const struct anl_result *r, int rank, int node,
			 FILE *out)
{
	const struct snap_rank *sr = &r->s->ranks[rank];

	for (int k = 0; k < sr->nops; k++) {
		const struct snap_op *op = &sr->ops[k];
		int peer = anl_op_peer(r, op);

		if (!anl_op_internal(op) || op->status == SNAP_ST_COMPLETE)
			continue;
		if (peer >= 0 && peer < r->nranks)
			fprintf(out, "  r%d -> r%d", rank, peer);
		else
			fprintf(out, "  r%d -> c%d", rank, node);
		fprintf(out, " [label=\"internal %s%s, tag %d\"];\n",
			op->kind == SNAP_OP_SEND ? "send" : "receive",
			peer >= 0 && peer < r->nranks ? "" : " from any rank",
			op->tag);
	}
}

/* Stuck collective i + 1 (as numbered in the text report): a node with
 * the reason, its members in it, their internal requests. */
static void put_stuck(const struct anl_result *r, int i, FILE *out)
{
	const struct anl_cycle *c = &r->cycles[i];
	const struct anl_vnode *v = &r->v[c->vnode];
	char *reason = anl_stuck_reason(r, c);

	fprintf(out, "  c%d [shape=ellipse, label=\"stuck collective %d\\n",
		i + 1, i + 1);
	put_escaped(reason, out);
	fputs("\"];\n", out);
	free(reason);
	for (int k = 0; k < c->nranks; k++)
		fprintf(out, "  r%d -> c%d [label=\"in %s\"%s];\n",
			c->ranks[k], i + 1, v->call,
			v->evidence && !v->inferred ? "" : ", style=dotted");
	for (int k = 0; k < c->nranks; k++)
		put_internal(r, c->ranks[k], i + 1, out);
}

void anl_report_dot(const struct anl_result *r, FILE *out)
{
	fputs("digraph deadlock {\n  node [shape=box];\n", out);
	for (int i = 0; i < r->nranks; i++)
		if (shown(r, i))
			put_node(r, i, out);
	for (int i = 0; i < r->nranks; i++)
		if (shown(r, i) && r->ranks[i].state == WFG_BLOCKED)
			put_edges(r, i, out);
	for (int i = 0; i < r->ncycles; i++)
		if (r->cycles[i].kind == ANL_CK_STUCK)
			put_stuck(r, i, out);
	fputs("}\n", out);
}
