/* wfg.c - the wait-for graph: storage, adjacency and the release fixpoint. */
#include "wfg.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "wfg_int.h"

struct wfg *wfg_new(int hint)
{
	struct wfg *g = xcalloc(1, sizeof(*g));

	if (hint > 0) {
		g->ncap = hint;
		g->node = xmalloc((size_t)hint * sizeof(*g->node));
	}
	return g;
}

void wfg_free(struct wfg *g)
{
	if (!g)
		return;
	free(g->node);
	free(g->efrom);
	free(g->eto);
	free(g->elabel);
	free(g->off);
	free(g->roff);
	free(g->redge);
	free(g);
}

int wfg_add_node(struct wfg *g, enum wfg_state st, enum wfg_cond cond,
		 bool guessed)
{
	if (g->nnodes == g->ncap) {
		g->ncap = g->ncap ? 2 * g->ncap : 64;
		g->node = xrealloc(g->node, (size_t)g->ncap * sizeof(*g->node));
	}
	wfg_set_node(g, g->nnodes, st, cond, guessed);
	return g->nnodes++;
}

void wfg_set_node(struct wfg *g, int v, enum wfg_state st, enum wfg_cond cond,
		  bool guessed)
{
	g->node[v] = (uint8_t)(st | cond << 2 | (guessed ? 8 : 0));
}

void wfg_add_edge(struct wfg *g, int from, int to, int label)
{
	if (g->nedges == g->ecap) {
		g->ecap = g->ecap ? 2 * g->ecap : 64;
		g->efrom = xrealloc(g->efrom, (size_t)g->ecap * sizeof(int));
		g->eto = xrealloc(g->eto, (size_t)g->ecap * sizeof(int));
		g->elabel = xrealloc(g->elabel, (size_t)g->ecap * sizeof(int));
	}
	g->efrom[g->nedges] = from;
	g->eto[g->nedges] = to;
	g->elabel[g->nedges] = label;
	g->nedges++;
}

/* Counting sort of the edges by source, so that out-edges are ranges and
 * edge ids stay in order of addition within a node (deterministic). */
static void sort_by_source(struct wfg *g)
{
	int n = g->nnodes, m = g->nedges;
	int *pos = xcalloc((size_t)n + 1, sizeof(int));
	int *from = xmalloc((size_t)m * sizeof(int) + 1);
	int *to = xmalloc((size_t)m * sizeof(int) + 1);
	int *label = xmalloc((size_t)m * sizeof(int) + 1);

	for (int e = 0; e < m; e++)
		pos[g->efrom[e] + 1]++;
	for (int v = 0; v < n; v++)
		pos[v + 1] += pos[v];
	memcpy(g->off, pos, ((size_t)n + 1) * sizeof(int));
	for (int e = 0; e < m; e++) {
		int k = pos[g->efrom[e]]++;

		from[k] = g->efrom[e];
		to[k] = g->eto[e];
		label[k] = g->elabel[e];
	}
	free(g->efrom);
	free(g->eto);
	free(g->elabel);
	g->efrom = from;
	g->eto = to;
	g->elabel = label;
	free(pos);
}

/* In-edges, for the fixpoint: who waits on v. */
static void build_reverse(struct wfg *g)
{
	int n = g->nnodes, m = g->nedges;
	int *pos = xcalloc((size_t)n + 1, sizeof(int));

	g->roff = xcalloc((size_t)n + 1, sizeof(int));
	g->redge = xmalloc((size_t)m * sizeof(int) + 1);
	for (int e = 0; e < m; e++)
		pos[g->eto[e] + 1]++;
	for (int v = 0; v < n; v++)
		pos[v + 1] += pos[v];
	memcpy(g->roff, pos, ((size_t)n + 1) * sizeof(int));
	for (int e = 0; e < m; e++)
		g->redge[pos[g->eto[e]]++] = e;
	free(pos);
}

void wfg_freeze(struct wfg *g)
{
	g->off = xcalloc((size_t)g->nnodes + 1, sizeof(int));
	sort_by_source(g);
	build_reverse(g);
	g->frozen = true;
}

int wfg_nnodes(const struct wfg *g)
{
	return g->nnodes;
}

int wfg_nedges(const struct wfg *g)
{
	return g->nedges;
}

enum wfg_state wfg_state(const struct wfg *g, int v)
{
	return (enum wfg_state)(g->node[v] & 3);
}

enum wfg_cond wfg_cond(const struct wfg *g, int v)
{
	return (enum wfg_cond)(g->node[v] >> 2 & 1);
}

bool wfg_guessed(const struct wfg *g, int v)
{
	return g->node[v] & 8;
}

int wfg_out(const struct wfg *g, int v, int *first)
{
	*first = g->off[v];
	return g->off[v + 1] - g->off[v];
}

int wfg_edge_to(const struct wfg *g, int e)
{
	return g->eto[e];
}

int wfg_edge_from(const struct wfg *g, int e)
{
	return g->efrom[e];
}

int wfg_edge_label(const struct wfg *g, int e)
{
	return g->elabel[e];
}

/* What a node still needs before it is released; INT_MAX: never. */
static int initial_need(const struct wfg *g, int v, enum wfg_assume a)
{
	int deg = g->off[v + 1] - g->off[v];

	switch (wfg_state(g, v)) {
	case WFG_ACTIVE:
		return 0;
	case WFG_GONE:
		return INT_MAX;
	case WFG_UNKNOWN:
		return a == WFG_OPTIMISTIC ? 0 : INT_MAX;
	case WFG_BLOCKED:
		break;
	}
	if (a == WFG_PESSIMISTIC && wfg_guessed(g, v))
		return INT_MAX;
	if (wfg_cond(g, v) == WFG_AND)
		return deg;
	return deg ? 1 : INT_MAX;
}

/* Worklist with per-node counters: each edge is looked at once, when its
 * target is released, so the whole run is linear. */
void wfg_release(const struct wfg *g, enum wfg_assume a, uint8_t *released)
{
	int n = g->nnodes, head = 0, tail = 0;
	int *need = xmalloc((size_t)n * sizeof(int) + 1);
	int *queue = xmalloc((size_t)n * sizeof(int) + 1);

	for (int v = 0; v < n; v++) {
		need[v] = initial_need(g, v, a);
		released[v] = need[v] == 0;
		if (released[v])
			queue[tail++] = v;
	}
	while (head < tail) {
		int v = queue[head++];

		for (int k = g->roff[v]; k < g->roff[v + 1]; k++) {
			int u = g->efrom[g->redge[k]];

			if (released[u] || need[u] == INT_MAX)
				continue;
			if (--need[u] == 0) {
				released[u] = 1;
				queue[tail++] = u;
			}
		}
	}
	free(need);
	free(queue);
}
