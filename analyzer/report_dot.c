/* report_dot.c - the deadlocked part as a Graphviz graph. */
#include <stdlib.h>

#include "anl_int.h"
#include "md.h"

static void put_node(const struct anl_result *r, int i, FILE *out)
{
	char *site = anl_site(r, i);
	const char *style = r->ranks[i].role == ANL_ROLE_BEHIND ?
		", style=filled, fillcolor=grey85, fontcolor=grey40" : "";

	fprintf(out, "  r%d [label=\"rank %d\\n", i, i);
	for (const char *p = site; *p; p++)
		fprintf(out, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
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

void anl_report_dot(const struct anl_result *r, FILE *out)
{
	fputs("digraph deadlock {\n  node [shape=box];\n", out);
	for (int i = 0; i < r->nranks; i++)
		if (shown(r, i))
			put_node(r, i, out);
	for (int i = 0; i < r->nranks; i++)
		if (shown(r, i) && r->ranks[i].state == WFG_BLOCKED)
			put_edges(r, i, out);
	fputs("}\n", out);
}
