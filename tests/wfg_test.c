/* wfg_test.c - the wait-for graph: fixpoint, components, cycles. */
#include <criterion/criterion.h>
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
