/* scc.c - explaining what stays blocked: components (igraph) and cycles. */
#include "wfg.h"

#include <igraph.h>
#include <stdlib.h>

#include "md.h"
#include "wfg_int.h"

/* The kept nodes, renumbered 0..k-1 so igraph sees only the stuck part. */
static int compact_ids(const struct wfg *g, const uint8_t *keep, int *id)
{
	int k = 0;

	for (int v = 0; v < g->nnodes; v++)
		id[v] = keep[v] ? k++ : -1;
	return k;
}

static int build_igraph(const struct wfg *g, const int *id, int k,
			igraph_t *ig)
{
	igraph_vector_int_t edges;
	igraph_integer_t m = 0;
	int rc;

	for (int e = 0; e < g->nedges; e++)
		m += id[g->efrom[e]] >= 0 && id[g->eto[e]] >= 0;
	if (igraph_vector_int_init(&edges, 2 * m))
		return -MD_E_SYS;
	m = 0;
	for (int e = 0; e < g->nedges; e++) {
		if (id[g->efrom[e]] < 0 || id[g->eto[e]] < 0)
			continue;
		VECTOR(edges)[m++] = id[g->efrom[e]];
		VECTOR(edges)[m++] = id[g->eto[e]];
	}
	rc = igraph_create(ig, &edges, k, IGRAPH_DIRECTED);
	igraph_vector_int_destroy(&edges);
	return rc ? -MD_E_SYS : 0;
}

/* igraph numbers components in its own order; renumber them by their
 * smallest node so that reports come out the same every time. */
static int number_components(const struct wfg *g, const int *id,
			     const igraph_vector_int_t *memb, int *comp)
{
	igraph_integer_t n = igraph_vector_int_size(memb);
	int *map = xmalloc((size_t)n * sizeof(int) + 1);
	int next = 0;

	for (igraph_integer_t i = 0; i < n; i++)
		map[i] = -1;
	for (int v = 0; v < g->nnodes; v++) {
		int c;

		if (id[v] < 0) {
			comp[v] = -1;
			continue;
		}
		c = (int)VECTOR(*memb)[id[v]];
		if (map[c] < 0)
			map[c] = next++;
		comp[v] = map[c];
	}
	free(map);
	return next;
}

static uint8_t *mark_cyclic(const struct wfg *g, const int *comp, int ncomp)
{
	uint8_t *cyclic = xcalloc((size_t)ncomp + 1, 1);
	int *size = xcalloc((size_t)ncomp + 1, sizeof(int));

	for (int v = 0; v < g->nnodes; v++)
		if (comp[v] >= 0)
			size[comp[v]]++;
	for (int e = 0; e < g->nedges; e++) {
		int c = comp[g->efrom[e]];

		if (c >= 0 && c == comp[g->eto[e]] &&
		    (size[c] > 1 || g->efrom[e] == g->eto[e]))
			cyclic[c] = 1;
	}
	free(size);
	return cyclic;
}

int wfg_scc(const struct wfg *g, const uint8_t *keep, int *comp, int *ncomp,
	    uint8_t **cyclic)
{
	int *id = xmalloc((size_t)g->nnodes * sizeof(int) + 1);
	igraph_vector_int_t memb;
	igraph_integer_t no;
	igraph_t ig;
	int k = compact_ids(g, keep, id), rc = -MD_E_SYS;

	if (build_igraph(g, id, k, &ig)) {
		md_error("igraph_create(%d nodes): failed", k);
		goto out;
	}
	if (igraph_vector_int_init(&memb, 0)) {
		md_error("igraph_vector_int_init: failed");
		goto out_graph;
	}
	if (igraph_connected_components(&ig, &memb, NULL, &no, IGRAPH_STRONG)) {
		md_error("igraph_connected_components(%d nodes): failed", k);
		goto out_memb;
	}
	*ncomp = number_components(g, id, &memb, comp);
	*cyclic = mark_cyclic(g, comp, *ncomp);
	rc = 0;
out_memb:
	igraph_vector_int_destroy(&memb);
out_graph:
	igraph_destroy(&ig);
out:
	free(id);
	return rc;
}

static int trace_back(const struct wfg *g, const int *parent, int last,
		      int *path)
{
	int len = 0;

	for (int e = last; e >= 0; e = parent[g->efrom[e]])
		path[len++] = e;
	for (int i = 0; i < len / 2; i++) {
		int t = path[i];

		path[i] = path[len - 1 - i];
		path[len - 1 - i] = t;
	}
	return len;
}

/* BFS from start inside its component: the first edge that leads back
 * to start closes a shortest cycle through start.  parent[] holds the
 * edge by which each node was reached (-1: start, -2: not yet). */
int wfg_cycle(const struct wfg *g, const int *comp, int start, int *path)
{
	int n = g->nnodes, head = 0, tail = 0, len = 0, c = comp[start];
	int *parent = xmalloc((size_t)n * sizeof(int) + 1);
	int *queue = xmalloc((size_t)n * sizeof(int) + 1);

	for (int v = 0; v < n; v++)
		parent[v] = -2;
	parent[start] = -1;
	queue[tail++] = start;
	while (head < tail && !len) {
		int v = queue[head++];

		for (int e = g->off[v]; e < g->off[v + 1]; e++) {
			int w = g->eto[e];

			if (w == start) {
				len = trace_back(g, parent, e, path);
				break;
			}
			if (comp[w] != c || parent[w] != -2)
				continue;
			parent[w] = e;
			queue[tail++] = w;
		}
	}
	free(parent);
	free(queue);
	return len;
}
