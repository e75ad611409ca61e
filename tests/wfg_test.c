/* wfg_test.c - the wait-for graph: fixpoint, components, cycles. */
#include <criterion/criterion.h>
#include <igraph.h>
#include <stdlib.h>

#include "wfg.h"

static struct wfg *ring(int n, enum wfg_cond cond)
{
	struct wfg *g = wfg_new(n);

	for (int i = 0; i < n; i++)
		wfg_add_node(g, WFG_BLOCKED, cond, false);
	for (int i = 0; i < n; i++)
		wfg_add_edge(g, i, (i + 1) % n, i);
	return g;
}

Test(wfg, finds_cycle_in_ring_of_three)
{
	struct wfg *g = ring(3, WFG_AND);
	uint8_t rel[3], keep[3], *cyclic = NULL;
	int comp[3], ncomp, path[3];

	wfg_freeze(g);
	wfg_release(g, WFG_OPTIMISTIC, rel);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(rel[i], 0, "node %d released", i);
		keep[i] = 1;
	}
	cr_assert_eq(wfg_scc(g, keep, comp, &ncomp, &cyclic), 0);
	cr_expect_eq(ncomp, 1);
	cr_expect(cyclic[0]);
	cr_assert_eq(wfg_cycle(g, comp, 0, path), 3);
	cr_expect_eq(wfg_edge_from(g, path[0]), 0);
	cr_expect_eq(wfg_edge_to(g, path[2]), 0);
	free(cyclic);
	wfg_free(g);
}

Test(wfg, active_node_releases_the_ring_behind_it)
{
	struct wfg *g = ring(4, WFG_AND);
	uint8_t rel[4];

	wfg_set_node(g, 2, WFG_ACTIVE, WFG_AND, false);
	wfg_freeze(g);
	wfg_release(g, WFG_OPTIMISTIC, rel);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(rel[i], 1, "node %d not released", i);
	wfg_free(g);
}

Test(wfg, and_needs_all_or_needs_one)
{
	struct wfg *g = wfg_new(0);
	uint8_t rel[4];

	wfg_add_node(g, WFG_BLOCKED, WFG_AND, false);	/* 0: 2 and 3 */
	wfg_add_node(g, WFG_BLOCKED, WFG_OR, false);	/* 1: 2 or 3 */
	wfg_add_node(g, WFG_ACTIVE, WFG_AND, false);
	wfg_add_node(g, WFG_GONE, WFG_AND, false);
	wfg_add_edge(g, 0, 2, -1);
	wfg_add_edge(g, 0, 3, -1);
	wfg_add_edge(g, 1, 2, -1);
	wfg_add_edge(g, 1, 3, -1);
	wfg_freeze(g);
	wfg_release(g, WFG_OPTIMISTIC, rel);
	cr_expect_eq(rel[0], 0);
	cr_expect_eq(rel[1], 1);
	cr_expect_eq(rel[3], 0, "a gone node must never release");
	wfg_free(g);
}

Test(wfg, unknown_node_releases_only_when_optimistic)
{
	struct wfg *g = wfg_new(0);
	uint8_t opt[3], pes[3];

	wfg_add_node(g, WFG_BLOCKED, WFG_AND, false);
	wfg_add_node(g, WFG_UNKNOWN, WFG_AND, false);
	wfg_add_node(g, WFG_BLOCKED, WFG_OR, true);
	wfg_add_edge(g, 0, 1, -1);
	wfg_add_edge(g, 2, 0, -1);
	wfg_freeze(g);
	wfg_release(g, WFG_OPTIMISTIC, opt);
	wfg_release(g, WFG_PESSIMISTIC, pes);
	cr_expect(opt[0] && opt[2]);
	cr_expect(!pes[0] && !pes[2]);
	wfg_free(g);
}

Test(wfg, self_loop_is_a_cyclic_component)
{
	struct wfg *g = wfg_new(0);
	uint8_t keep[2] = { 1, 1 }, *cyclic = NULL;
	int comp[2], ncomp;

	wfg_add_node(g, WFG_BLOCKED, WFG_AND, false);
	wfg_add_node(g, WFG_BLOCKED, WFG_AND, false);
	wfg_add_edge(g, 1, 1, -1);
	wfg_add_edge(g, 0, 1, -1);
	wfg_freeze(g);
	cr_assert_eq(wfg_scc(g, keep, comp, &ncomp, &cyclic), 0);
	cr_expect_eq(ncomp, 2);
	cr_expect(!cyclic[comp[0]]);
	cr_expect(cyclic[comp[1]]);
	cr_expect_eq(comp[0], 0, "components numbered by smallest node");
	free(cyclic);
	wfg_free(g);
}

Test(wfg, shortest_cycle_skips_the_long_way_round)
{
	struct wfg *g = ring(6, WFG_AND);
	uint8_t keep[6] = { 1, 1, 1, 1, 1, 1 }, *cyclic = NULL;
	int comp[6], ncomp, path[6];

	wfg_add_edge(g, 2, 0, -1);	/* 0 -> 1 -> 2 -> 0 */
	wfg_freeze(g);
	cr_assert_eq(wfg_scc(g, keep, comp, &ncomp, &cyclic), 0);
	cr_expect_eq(wfg_cycle(g, comp, 0, path), 3);
	free(cyclic);
	wfg_free(g);
}

/* igraph's strong components of the kept nodes, as comp (numbered by
 * smallest node, -1 where not kept): the oracle for wfg_scc. */
static void igraph_components(const struct wfg *g, const uint8_t *keep,
			      int *comp)
{
	int n = wfg_nnodes(g), m = wfg_nedges(g), k = 0;
	int *id = malloc(sizeof(int) * (size_t)n), *map;
	igraph_vector_int_t edges, memb;
	igraph_integer_t no;
	igraph_t ig;

	for (int v = 0; v < n; v++)
		id[v] = keep[v] ? k++ : -1;
	igraph_vector_int_init(&edges, 0);
	for (int e = 0; e < m; e++)
		if (keep[wfg_edge_from(g, e)] && keep[wfg_edge_to(g, e)]) {
			igraph_vector_int_push_back(&edges,
						    id[wfg_edge_from(g, e)]);
			igraph_vector_int_push_back(&edges,
						    id[wfg_edge_to(g, e)]);
		}
	cr_assert_eq(igraph_create(&ig, &edges, k, IGRAPH_DIRECTED), 0);
	igraph_vector_int_init(&memb, 0);
	cr_assert_eq(igraph_connected_components(&ig, &memb, NULL, &no,
						 IGRAPH_STRONG), 0);
	map = malloc(sizeof(int) * ((size_t)no + 1));
	for (int c = 0; c < no; c++)
		map[c] = -1;
	k = 0;
	for (int v = 0, next = 0; v < n; v++) {
		int c;

		comp[v] = -1;
		if (id[v] < 0)
			continue;
		c = (int)VECTOR(memb)[id[v]];
		if (map[c] < 0)
			map[c] = next++;
		comp[v] = map[c];
	}
	free(map);
	free(id);
	igraph_vector_int_destroy(&memb);
	igraph_vector_int_destroy(&edges);
	igraph_destroy(&ig);
}

/* Random graphs (sparse and dense, self-loops, some nodes not kept):
 * the same components as igraph's, numbered the same way, and a
 * component is cyclic exactly when it has two nodes or a self-loop. */
Test(wfg, components_agree_with_igraph_on_random_graphs)
{
	srand(12345);
	for (int round = 0; round < 200; round++) {
		int n = 1 + rand() % 300, deg = 1 + round % 4, ncomp;
		struct wfg *g = wfg_new(0);
		uint8_t *keep = malloc((size_t)n), *cyclic = NULL;
		int *comp = malloc(sizeof(int) * (size_t)n);
		int *want = malloc(sizeof(int) * (size_t)n);

		for (int v = 0; v < n; v++) {
			wfg_add_node(g, WFG_BLOCKED, WFG_AND, false);
			keep[v] = rand() % 8 != 0;
		}
		for (int v = 0; v < n; v++)
			for (int d = rand() % (deg + 1); d > 0; d--)
				wfg_add_edge(g, v, rand() % n, -1);
		wfg_freeze(g);
		cr_assert_eq(wfg_scc(g, keep, comp, &ncomp, &cyclic), 0);
		igraph_components(g, keep, want);
		for (int v = 0; v < n; v++)
			cr_assert_eq(comp[v], want[v], "round %d node %d", round,
				     v);
		for (int c = 0; c < ncomp; c++) {
			int size = 0;
			bool loop = false;

			for (int v = 0; v < n; v++)
				size += comp[v] == c;
			for (int e = 0; e < wfg_nedges(g); e++)
				loop |= comp[wfg_edge_from(g, e)] == c &&
					wfg_edge_from(g, e) == wfg_edge_to(g, e);
			cr_assert_eq(cyclic[c], size > 1 || loop,
				     "round %d component %d", round, c);
		}
		free(cyclic);
		free(comp);
		free(want);
		free(keep);
		wfg_free(g);
	}
}

/* A million-node cycle: the walk is iterative, no recursion to
 * overflow the stack. */
Test(wfg, one_component_of_a_million_node_ring)
{
	int n = 1 << 20, ncomp;
	struct wfg *g = ring(n, WFG_AND);
	uint8_t *keep = malloc((size_t)n), *cyclic = NULL;
	int *comp = malloc(sizeof(int) * (size_t)n);

	for (int v = 0; v < n; v++)
		keep[v] = 1;
	wfg_freeze(g);
	cr_assert_eq(wfg_scc(g, keep, comp, &ncomp, &cyclic), 0);
	cr_expect_eq(ncomp, 1);
	cr_expect(cyclic[0]);
	cr_expect_eq(comp[n - 1], 0);
	free(cyclic);
	free(comp);
	free(keep);
	wfg_free(g);
}
