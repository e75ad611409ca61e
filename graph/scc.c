/* scc.c - explaining what stays blocked: components and cycles. */
#include "wfg.h"

#include <stdlib.h>

#include "md.h"
#include "wfg_int.h"

/*
 * Tarjan's algorithm, iterative (a million-node cycle would overflow a
 * recursive one), on the frozen graph's own out-edge ranges: linear,
 * 20 bytes a node and no copy of the graph.  igraph's strong components
 * built an adjacency list of a vector per node, most of the analysis of
 * a million ranks; tests/wfg_test.c checks the two agree.
 *
 * comp[v] is first Tarjan's component number (components come out in
 * reverse topological order); number_components renumbers them.
 */
struct tarjan {
	int *index;	/* discovery order + 1, 0: not yet */
	int *low;
	int *stack, sp;	/* nodes of open components */
	int *call, *edge, cp;	/* the DFS: node and its next out-edge */
	int next, ncomp;
};

static void strong_from(const struct wfg *g, const uint8_t *keep,
			struct tarjan *t, int *comp, int root)
{
	t->call[0] = root;
	t->edge[0] = g->off[root];
	t->cp = 1;
	t->index[root] = t->low[root] = ++t->next;
	t->stack[t->sp++] = root;
	while (t->cp) {
		int v = t->call[t->cp - 1], e = t->edge[t->cp - 1];

		if (e < g->off[v + 1]) {
			int w = g->eto[e];

			t->edge[t->cp - 1]++;
			if (!keep[w])
				continue;
			if (!t->index[w]) {
				t->index[w] = t->low[w] = ++t->next;
				t->stack[t->sp++] = w;
				t->call[t->cp] = w;
				t->edge[t->cp++] = g->off[w];
			} else if (comp[w] < 0 && t->index[w] < t->low[v]) {
				t->low[v] = t->index[w];	/* on the stack */
			}
			continue;
		}
		t->cp--;
		if (t->low[v] == t->index[v]) {
			int w;

			do {
				w = t->stack[--t->sp];
				comp[w] = t->ncomp;
			} while (w != v);
			t->ncomp++;
		}
		if (t->cp) {
			int u = t->call[t->cp - 1];

			if (t->low[v] < t->low[u])
				t->low[u] = t->low[v];
		}
	}
}

/* Components numbered in order of their smallest node, so that reports
 * come out the same every time; -1 stays -1. */
static int number_components(const struct wfg *g, int *comp, int n)
{
	int *map = xmalloc((size_t)n * sizeof(int) + 1);
	int next = 0;

	for (int i = 0; i < n; i++)
		map[i] = -1;
	for (int v = 0; v < g->nnodes; v++) {
		if (comp[v] < 0)
			continue;
		if (map[comp[v]] < 0)
			map[comp[v]] = next++;
		comp[v] = map[comp[v]];
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
	size_t n = (size_t)g->nnodes + 1;
	struct tarjan t = {
		.index = xcalloc(n, sizeof(int)),
		.low = xmalloc(n * sizeof(int)),
		.stack = xmalloc(n * sizeof(int)),
		.call = xmalloc(n * sizeof(int)),
		.edge = xmalloc(n * sizeof(int)),
	};

	for (int v = 0; v < g->nnodes; v++)
		comp[v] = -1;
	for (int v = 0; v < g->nnodes; v++)
		if (keep[v] && !t.index[v])
			strong_from(g, keep, &t, comp, v);
	free(t.index);
	free(t.low);
	free(t.stack);
	free(t.call);
	free(t.edge);
	*ncomp = number_components(g, comp, t.ncomp);
	*cyclic = mark_cyclic(g, comp, *ncomp);
	return 0;
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
