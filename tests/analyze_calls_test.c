/*
 * analyze_calls_test.c - wait-for semantics of the calls the DLL alone
 * does not explain (issue 8): collectives every member is in, neighbour
 * collectives, probes, spin-waits and nonblocking collectives, with and
 * without the evidence of ob1's queues.  Snapshots built in C.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include "support/jtree.h"
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "support/invariant.h"
#include "support/snapbuild.h"

struct got {
	enum anl_verdict v;
	char dead[256];		/* "0,1" */
	char kind[64];		/* of the first part */
	char summary[256];
	char missing[2048];	/* the missing lines, '|' between */
	char reason[256];	/* of the first part, if stuck */
	int inferred;		/* edges marked inferred in the parts */
};

static void analyse(const struct snap *s, struct got *g)
{
	struct anl_result *r = anl_analyze(s);
	struct anl_opts o = { .format = ANL_FORMAT_JSON };
	char *text = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);
	yajl_val j, a, c;

	inv_check(s, "analyze_calls test");
	memset(g, 0, sizeof(*g));
	anl_report(r, &o, f);
	fclose(f);
	g->v = anl_verdict(r);
	anl_result_free(r);
	j = jt_parse(text);
	cr_assert_not_null(j);
	a = jt_get(j, "deadlocked");
	for (size_t i = 0; i < jt_len(a); i++)
		n += (size_t)snprintf(g->dead + n, sizeof(g->dead) - n, "%s%d",
				      i ? "," : "",
				      jt_int(
					      jt_at(a, i)));
	snprintf(g->summary, sizeof(g->summary), "%s",
		 jt_str(jt_get(j, "summary")));
	c = jt_get(j, "cycles");
	if (jt_len(c)) {
		yajl_val c0 = jt_at(c, 0);

		snprintf(g->kind, sizeof(g->kind), "%s",
			 jt_str(jt_get(c0, "kind")));
		if (jt_get(c0, "reason"))
			snprintf(g->reason, sizeof(g->reason), "%s",
				 jt_str(jt_get(
					 c0, "reason")));
	}
	for (size_t i = 0; i < jt_len(c); i++) {
		yajl_val e = jt_get(
			jt_at(c, i), "edges");

		for (size_t k = 0; k < jt_len(e); k++)
			g->inferred += jt_bool(
				jt_get(
					jt_at(e, k),
					"inferred"));
	}
	a = jt_get(j, "missing");
	n = 0;
	for (size_t i = 0; i < jt_len(a); i++)
		n += (size_t)snprintf(g->missing + n, sizeof(g->missing) - n,
				      "%s|", jt_str(
					      jt_at(a, i)));
	jt_free(j);
	free(text);
}

/* ---- collectives every member is in ---- */

/* MPI_Reduce with two roots: each rank, as root, waits for the other
 * (ob1 shows each one's internal receive). */
static struct snap *reduce_two_roots(bool ob1)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Reduce", "root.c", 12);
	sb_call(s, 1, "MPI_Reduce", "root.c", 14);
	if (ob1) {
		sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -21, false);
		sb_ob1_op(s, 1, SNAP_OP_RECV, 0, 0, -21, false);
	}
	return s;
}

Test(analyze_calls, stuck_collective_with_internal_requests_is_a_deadlock)
{
	struct snap *s = reduce_two_roots(true);
	struct got g;

	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	cr_expect_str_eq(g.kind, "stuck collective");
	cr_expect_str_eq(g.reason, "collective MPI_Reduce on MPI_COMM_WORLD "
				   "does not complete: its members disagree");
	cr_expect_null(strstr(g.missing, "internal requests"), "%s", g.missing);
	snap_free(s);
}

Test(analyze_calls, stuck_collective_without_ob1_says_what_it_could_not_see)
{
	struct snap *s = reduce_two_roots(false);
	struct got g;

	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	cr_expect_str_eq(g.kind, "stuck collective");
	cr_expect_not_null(strstr(g.missing, "internal requests (ob1's "
					     "queues) were not read"),
			   "%s", g.missing);
	snap_free(s);
}

/* A matched transfer the DLL shows has no byte count to compare between
 * the looks: it may be moving. */
Test(analyze_calls, collective_with_a_matched_transfer_is_not_stuck)
{
	struct snap *s = reduce_two_roots(false);
	struct snap_op *op = sb_op(s, 1, SNAP_OP_RECV, 0, 0, 5, 1 << 30);
	struct got g;

	op->status = SNAP_ST_MATCHED;
	op->actual_global = 0;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.summary, "NO DEADLOCK: 2 ranks going on, none "
				    "waiting");
	snap_free(s);
}

/* ob1's internal receive is matched, but its bytes did not move between
 * the looks (the rank is "stable"): nothing flows. */
Test(analyze_calls, collective_with_an_unmoved_matched_internal_request_is_stuck)
{
	struct snap *s = reduce_two_roots(true);
	struct got g;

	s->ranks[1].ops[0].status = SNAP_ST_MATCHED;
	s->ranks[1].ops[0].actual_global = 0;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.kind, "stuck collective");
	snap_free(s);
}

Test(analyze_calls, collective_whose_member_moved_between_looks_is_not_stuck)
{
	struct snap *s = reduce_two_roots(true);
	struct got g;

	s->ranks[0].progress = SNAP_PROGRESS_CHANGED;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, collective_seen_in_one_look_only_is_incomplete)
{
	struct snap *s = reduce_two_roots(true);
	struct got g;

	s->ranks[0].progress = s->ranks[1].progress = SNAP_PROGRESS_UNKNOWN;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_INCOMPLETE, "%s", g.summary);
	snap_free(s);
}

/* Gather with mismatched counts on a sub-communicator while the other
 * ranks compute: stuck on its own, the others are not needed. */
Test(analyze_calls, stuck_collective_on_a_sub_communicator_beside_active_ranks)
{
	struct snap *s = sb_new(4);
	int row[2] = { 1, 3 };
	int c = sb_comm(s, 4, "row", 2, row);
	struct got g;

	sb_call(s, 1, "MPI_Gather", "cnt.c", 20);
	sb_call(s, 3, "MPI_Gather", "cnt.c", 20);
	sb_ob1_op(s, 1, SNAP_OP_RECV, c, 1, -13, false);
	sb_ob1_op(s, 3, SNAP_OP_SEND, c, 0, -13, false);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "1,3");
	cr_expect_str_eq(g.reason, "collective MPI_Gather on row does not "
				   "complete: its members disagree");
	snap_free(s);
}

/* MPI_Barrier on MPI_COMM_WORLD at rank 0 and on a dup of it at rank 1:
 * one group, so one instance as far as the stacks tell; ob1 shows the
 * internal requests on different communicators. */
Test(analyze_calls, same_collective_on_two_communicators_of_one_group_is_stuck)
{
	struct snap *s = sb_new(2);
	int world[2] = { 0, 1 };
	int dup = sb_comm(s, 3, "dup", 2, world);
	struct got g;

	sb_call(s, 0, "MPI_Barrier", "dup.c", 8);
	sb_call(s, 1, "MPI_Barrier", "dup.c", 10);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -16, false);
	sb_ob1_op(s, 1, SNAP_OP_RECV, dup, 0, -16, false);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	cr_expect_str_eq(g.kind, "stuck collective");
	snap_free(s);
}

Test(analyze_calls, every_rank_in_finalize_is_finishing_not_waiting)
{
	struct snap *s = sb_new(3);
	struct got g;

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Finalize", "fin.c", 30);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK);
	cr_expect_str_eq(g.summary, "NO DEADLOCK: 3 ranks going on, none "
				    "waiting");
	snap_free(s);
}

/* MPI_Ibarrier then MPI_Wait at rank 0, while rank 1 waits in MPI_Recv
 * for a message rank 0 sends after the barrier. */
Test(analyze_calls, wait_on_a_nonblocking_collective_waits_on_its_internal_requests)
{
	struct snap *s = sb_new(3);
	struct got g;

	sb_call(s, 0, "MPI_Wait", "nbc.c", 11);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -28, false);
	sb_recv(s, 1, 0, 5, "nbc.c", 15);
	/* rank 2 computes: without the internal request it could release
	 * rank 0 */
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	snap_free(s);
}

Test(analyze_calls, blocking_recv_is_not_held_by_a_collective_internal_request)
{
	struct snap *s = sb_new(2);
	struct got g;

	/* rank 0 in MPI_Recv from 1 with an Ibarrier's internal receive
	 * from 1 still posted; rank 1 computes */
	sb_recv(s, 0, 1, 4, "mix.c", 9);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -28, false);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	cr_expect_null(strstr(g.missing, "several"), "%s", g.missing);
	snap_free(s);
}

/* ---- neighbour collectives ---- */

/* A ring of 4 as a cartesian communicator: i's neighbours are i-1, i+1.
 * Ranks 0-2 are in MPI_Neighbor_allgather, rank 3 went to MPI_Finalize. */
static struct snap *neighbor_ring(bool topo)
{
	static const int n0[] = { 3, 1, -1 }, n1[] = { 0, 2, -1 },
			 n2[] = { 1, 3, -1 }, n3[] = { 2, 0, -1 };
	static const int *const nbrs[] = { n0, n1, n2, n3 };
	struct snap *s = sb_new(4);
	int group[4] = { 0, 1, 2, 3 };
	int c = sb_comm(s, 5, "ring", 4, group);

	if (topo)
		sb_topo(s, c, SNAP_TOPO_CART, nbrs);
	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Neighbor_allgather", "nb.c", 25);
	sb_call(s, 3, "MPI_Finalize", "nb.c", 30);
	return s;
}

Test(analyze_calls, neighbor_collective_waits_on_its_neighbors_only)
{
	struct snap *s = neighbor_ring(true);
	struct got g;

	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	/* rank 1's neighbours are both in it: it is not held */
	cr_expect_str_eq(g.dead, "0,2,3");
	cr_expect_null(strstr(g.missing, "topology"), "%s", g.missing);
	snap_free(s);
}

Test(analyze_calls, neighbor_collective_without_topology_waits_on_every_member)
{
	struct snap *s = neighbor_ring(false);
	struct got g;

	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1,2,3");
	cr_expect_gt(g.inferred, 0);
	cr_expect_not_null(strstr(g.missing, "topology was not read"), "%s",
			   g.missing);
	snap_free(s);
}

Test(analyze_calls, neighbor_collective_with_its_missing_neighbor_computing_goes_on)
{
	struct snap *s = neighbor_ring(true);
	struct got g;

	sb_call(s, 3, NULL, NULL, 0);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, neighbor_collective_every_member_is_in_unmoved_is_stuck)
{
	struct snap *s = neighbor_ring(true);
	struct got g;

	sb_call(s, 3, "MPI_Neighbor_allgather", "nb.c", 25);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1,2,3");
	/* Without ob1's queues, one still moving data would look the
	 * same: the reason says both readings. */
	cr_expect_str_eq(g.reason, "neighbour collective "
				   "MPI_Neighbor_allgather on ring does not "
				   "complete: its members disagree, or it still "
				   "moves data that only its internal requests "
				   "(not read) would show [inferred]");
	snap_free(s);
}

/* ---- probes ---- */

Test(analyze_calls, probe_waiting_on_a_computing_peer_is_not_a_deadlock)
{
	struct snap *s = sb_new(2);
	struct got g;

	sb_call(s, 0, "MPI_Probe", "probe.c", 14);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

/* With ob1's probe request the probe waits on its source, not on
 * whoever goes on. */
Test(analyze_calls, probe_waits_on_its_source_from_ob1)
{
	struct snap *s = sb_new(3);
	struct got g;

	sb_call(s, 0, "MPI_Probe", "probe.c", 14);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, 3, true);
	sb_recv(s, 1, 0, 4, "probe.c", 20);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	cr_expect_str_eq(g.kind, "cycle");
	snap_free(s);
}

Test(analyze_calls, probe_for_any_source_is_released_by_any_member)
{
	struct snap *s = sb_new(3);
	struct got g;

	sb_call(s, 0, "MPI_Mprobe", "probe.c", 14);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, -1, -1, true);
	sb_recv(s, 1, 0, 4, "probe.c", 20);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, probe_without_evidence_and_nobody_going_on_deadlocks)
{
	struct snap *s = sb_new(2);
	struct got g;

	sb_call(s, 0, "MPI_Probe", "probe.c", 14);
	sb_recv(s, 1, 0, 4, "probe.c", 20);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	snap_free(s);
}

/* ---- spin-waits ---- */

/* while (!flag) MPI_Test(&req, ...) on a receive from rank 1, which
 * waits in MPI_Recv for rank 0. */
static struct snap *spin(void)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Test", "spin.c", 17);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 2, 8);
	sb_recv(s, 1, 0, 3, "spin.c", 24);
	return s;
}

Test(analyze_calls, spin_wait_on_a_request_that_cannot_complete_deadlocks)
{
	struct snap *s = spin();
	struct got g;

	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	cr_expect_gt(g.inferred, 0);
	cr_expect_not_null(strstr(g.missing, "taken as blocked"), "%s",
			   g.missing);
	snap_free(s);
}

Test(analyze_calls, polling_rank_whose_peer_computes_is_not_a_deadlock)
{
	struct snap *s = spin();
	struct got g;

	sb_call(s, 1, NULL, NULL, 0);
	s->ranks[1].nops = 0;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, polling_rank_that_moved_between_looks_goes_on)
{
	struct snap *s = spin();
	struct got g;

	/* caught computing between tests in one look */
	s->ranks[0].progress = SNAP_PROGRESS_CHANGED;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, polling_with_nothing_pending_is_not_blocked)
{
	struct snap *s = spin();
	struct got g;

	s->ranks[0].nops = 0;
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_NO_DEADLOCK, "%s", g.summary);
	snap_free(s);
}

Test(analyze_calls, iprobe_loop_with_nobody_going_on_deadlocks)
{
	struct snap *s = sb_new(2);
	struct got g;

	sb_call(s, 0, "MPI_Iprobe", "ip.c", 9);
	sb_recv(s, 1, 0, 3, "ip.c", 20);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1");
	snap_free(s);
}

/* ---- RMA and communicator creation ---- */

Test(analyze_calls, win_fence_with_a_member_missing_deadlocks)
{
	struct snap *s = sb_new(3);
	struct got g;

	sb_call(s, 0, "MPI_Win_fence", "fence.c", 18);
	sb_call(s, 1, "MPI_Win_fence", "fence.c", 18);
	sb_recv(s, 2, 0, 1, "fence.c", 22);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1,2");
	snap_free(s);
}

Test(analyze_calls, comm_split_with_a_member_missing_deadlocks)
{
	struct snap *s = sb_new(3);
	struct got g;

	sb_call(s, 0, "MPI_Comm_split", "split.c", 12);
	sb_call(s, 1, "MPI_Comm_split", "split.c", 12);
	sb_call(s, 2, "MPI_Finalize", "split.c", 30);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1,2");
	snap_free(s);
}

/* Two deadlocks that share nothing: a ring of 0-1 and a stuck
 * collective on 2-3. */
Test(analyze_calls, two_independent_deadlocks_are_two_parts)
{
	struct snap *s = sb_new(4);
	int pair[2] = { 2, 3 };
	int c = sb_comm(s, 6, "pair", 2, pair);
	struct got g;

	sb_recv(s, 0, 1, 1, "two.c", 10);
	sb_recv(s, 1, 0, 1, "two.c", 10);
	sb_call(s, 2, "MPI_Bcast", "two.c", 20);
	sb_call(s, 3, "MPI_Bcast", "two.c", 20);
	sb_ob1_op(s, 2, SNAP_OP_RECV, c, 1, -12, false);
	sb_ob1_op(s, 3, SNAP_OP_RECV, c, 0, -12, false);
	analyse(s, &g);
	cr_expect_eq(g.v, ANL_DEADLOCK, "%s", g.summary);
	cr_expect_str_eq(g.dead, "0,1,2,3");
	cr_expect_not_null(strstr(g.summary, "several groups"), "%s",
			   g.summary);
	snap_free(s);
}

/* ---- the invariant over every stored snapshot ---- */

Test(analyze_calls, invariant_holds_on_every_fixture)
{
	static const char *const pats[] = { "tests/fixtures/analyze/*.jsonl",
					    "tests/fixtures/snapshots/*.jsonl" };
	int n = 0;

	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		glob_t gl;

		/* No fixture is a failure: the test would check nothing. */
		cr_assert_eq(glob(pats[p], 0, NULL, &gl), 0, "no %s: run from "
			     "the repository root", pats[p]);
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			FILE *f = fopen(gl.gl_pathv[i], "r");
			struct snap *s = NULL;

			cr_assert_not_null(f, "%s", gl.gl_pathv[i]);
			cr_assert_eq(snap_read(f, gl.gl_pathv[i], &s), 0, "%s",
				     gl.gl_pathv[i]);
			fclose(f);
			inv_check(s, gl.gl_pathv[i]);
			snap_free(s);
			n++;
		}
		globfree(&gl);
	}
	cr_log_info("invariant checked on %d fixtures", n);
}
