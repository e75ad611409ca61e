/* analyze_test.c - wait-for semantics case by case, on built snapshots. */
#include <criterion/criterion.h>
#include "support/jtree.h"
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "support/invariant.h"
#include "support/snapbuild.h"

/* The JSON report of s, parsed (caller puts it). */
static yajl_val report(const struct snap *s, enum anl_verdict *v)
{
	struct anl_result *r = anl_analyze(s);
	struct anl_opts o = { .format = ANL_FORMAT_JSON };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	yajl_val j;

	inv_check(s, "analyze test");
	anl_report(r, &o, f);
	fclose(f);
	*v = anl_verdict(r);
	anl_result_free(r);
	j = jt_parse(text);
	cr_assert_not_null(j, "report is not JSON:\n%s", text);
	free(text);
	return j;
}

/* A JSON array of ints as "0,1,2". */
static char *ints(yajl_val j, const char *key)
{
	yajl_val a = jt_get(j, key);
	static char buf[4096];
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; a && i < jt_len(a); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d",
				      i ? "," : "",
				      jt_int(
					      jt_at(a, i)));
	return buf;
}

static const char *first_cycle_kind(yajl_val j)
{
	yajl_val c = jt_get(j, "cycles");

	if (!c || !jt_len(c))
		return "";
	return jt_str(jt_get(
		jt_at(c, 0), "kind"));
}

#define EXPECT(s, verdict, dead)                                          \
	do {                                                               \
		enum anl_verdict v_;                                       \
		yajl_val j_ = report(s, &v_);                          \
		cr_expect_eq(v_, verdict, "verdict %d", v_);               \
		cr_expect_str_eq(ints(j_, "deadlocked"), dead);            \
		jt_free(j_);                                       \
	} while (0)

Test(analyze, ring_of_three_is_a_deadlock_cycle)
{
	struct snap *s = sb_ring(3);
	enum anl_verdict v;
	yajl_val j = report(s, &v);

	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "0,1,2");
	cr_expect_str_eq(first_cycle_kind(j), "cycle");
	jt_free(j);
	snap_free(s);
}

Test(analyze, ring_of_64_is_one_cycle)
{
	struct snap *s = sb_ring(64);
	enum anl_verdict v;
	yajl_val j = report(s, &v);
	yajl_val c = jt_get(j, "cycles");

	cr_expect_eq(v, ANL_DEADLOCK);
	cr_assert_eq(jt_len(c), 1);
	cr_expect_eq(jt_len(jt_get(
			     jt_at(c, 0), "edges")), 64);
	jt_free(j);
	snap_free(s);
}

Test(analyze, head_to_head_sends_deadlock)
{
	struct snap *s = sb_new(2);

	sb_send(s, 0, 1, 1, "h2h.c", 10);
	sb_send(s, 1, 0, 1, "h2h.c", 10);
	EXPECT(s, ANL_DEADLOCK, "0,1");
	snap_free(s);
}

Test(analyze, wildcard_receive_released_by_an_active_rank)
{
	struct snap *s = sb_new(3);

	sb_call(s, 0, "MPI_Recv", "wild.c", 5);
	sb_op(s, 0, SNAP_OP_RECV, 0, -1, -1, 8);
	sb_recv(s, 1, 0, 3, "wild.c", 9);
	/* rank 2 computes: it may still send to 0 */
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, wildcard_receive_nobody_can_satisfy_is_a_knot)
{
	struct snap *s = sb_new(3);
	enum anl_verdict v;
	yajl_val j;

	sb_call(s, 0, "MPI_Recv", "wild.c", 5);
	sb_op(s, 0, SNAP_OP_RECV, 0, -1, -1, 8);
	sb_recv(s, 1, 0, 3, "wild.c", 9);
	sb_recv(s, 2, 1, 3, "wild.c", 9);
	j = report(s, &v);
	cr_expect_eq(v, ANL_DEADLOCK);
	/* rank 2 is in the knot: a send from it would release rank 0 */
	cr_expect_str_eq(ints(j, "deadlocked"), "0,1,2");
	cr_expect_str_eq(first_cycle_kind(j), "knot");
	jt_free(j);
	snap_free(s);
}

static struct snap *waits(const char *call)
{
	struct snap *s = sb_new(4);

	/* rank 0 waits on receives from 1 and 2; 1 is stuck on 0, 2 runs */
	sb_call(s, 0, call, "wait.c", 20);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 0, 8);
	sb_op(s, 0, SNAP_OP_RECV, 0, 2, 0, 8);
	sb_recv(s, 1, 0, 0, "wait.c", 30);
	return s;
}

Test(analyze, waitall_with_one_peer_stuck_deadlocks)
{
	struct snap *s = waits("MPI_Waitall");

	EXPECT(s, ANL_DEADLOCK, "0,1");
	snap_free(s);
}

Test(analyze, waitany_with_one_peer_stuck_goes_on)
{
	struct snap *s = waits("MPI_Waitany");

	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, collective_with_a_missing_member_deadlocks)
{
	struct snap *s = sb_new(4);

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Barrier", "coll.c", 20);
	sb_recv(s, 3, 0, 5, "coll.c", 18);
	EXPECT(s, ANL_DEADLOCK, "0,1,2,3");
	snap_free(s);
}

/* Every member in the same collective and nothing moved between the
 * looks: the members disagree (roots, counts) and it never completes. */
Test(analyze, collective_every_member_is_in_unmoved_is_a_stuck_collective)
{
	struct snap *s = sb_new(4);
	enum anl_verdict v;
	yajl_val j;

	for (int i = 0; i < 4; i++)
		sb_call(s, i, "MPI_Allreduce", "coll.c", 20);
	j = report(s, &v);
	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "0,1,2,3");
	cr_expect_str_eq(first_cycle_kind(j), "stuck collective");
	jt_free(j);
	snap_free(s);
}

Test(analyze, two_collectives_on_one_communicator_are_a_mismatch)
{
	struct snap *s = sb_new(4);
	enum anl_verdict v;
	yajl_val j;

	sb_call(s, 0, "MPI_Barrier", "mm.c", 10);
	sb_call(s, 1, "MPI_Barrier", "mm.c", 10);
	sb_call(s, 2, "MPI_Bcast", "mm.c", 12);
	sb_call(s, 3, "MPI_Bcast", "mm.c", 12);
	j = report(s, &v);
	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "0,1,2,3");
	cr_expect_str_eq(first_cycle_kind(j), "collective mismatch");
	jt_free(j);
	snap_free(s);
}

static struct snap *partial(const char *others)
{
	struct snap *s = sb_new(8);

	sb_send(s, 3, 5, 1, "part.c", 40);
	sb_send(s, 5, 3, 1, "part.c", 40);
	for (int i = 0; i < 8; i++)
		if (i != 3 && i != 5)
			sb_call(s, i, others, "part.c", 50);
	return s;
}

Test(analyze, partial_deadlock_with_the_others_active)
{
	struct snap *s = partial(NULL);
	enum anl_verdict v;
	yajl_val j = report(s, &v);

	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "3,5");
	cr_expect_str_eq(ints(j, "behind"), "");
	jt_free(j);
	snap_free(s);
}

Test(analyze, partial_deadlock_with_the_others_behind_in_a_barrier)
{
	struct snap *s = partial("MPI_Barrier");
	enum anl_verdict v;
	yajl_val j = report(s, &v);

	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "3,5");
	cr_expect_str_eq(ints(j, "behind"), "0,1,2,4,6,7");
	jt_free(j);
	snap_free(s);
}

Test(analyze, receive_from_an_exited_peer_deadlocks)
{
	struct snap *s = sb_new(3);
	enum anl_verdict v;
	yajl_val j;

	sb_state(s, 0, SNAP_RANK_GONE, "exited with status 1");
	sb_recv(s, 1, 0, 4, "gone.c", 7);
	j = report(s, &v);
	cr_expect_eq(v, ANL_DEADLOCK);
	cr_expect_str_eq(ints(j, "deadlocked"), "1");
	cr_expect_str_eq(first_cycle_kind(j), "dead peer");
	jt_free(j);
	snap_free(s);
}

Test(analyze, sub_communicator_peers_are_translated_to_global_ranks)
{
	struct snap *s = sb_new(4);
	int row[2] = { 3, 1 };
	int c = sb_comm(s, 5, "row", 2, row);

	/* local 0 (global 3) and local 1 (global 1) receive from each other */
	sb_call(s, 3, "MPI_Recv", "row.c", 3);
	sb_op(s, 3, SNAP_OP_RECV, c, 1, 2, 16);
	sb_call(s, 1, "MPI_Recv", "row.c", 3);
	sb_op(s, 1, SNAP_OP_RECV, c, 0, 2, 16);
	EXPECT(s, ANL_DEADLOCK, "1,3");
	snap_free(s);
}

Test(analyze, unreadable_rank_that_could_release_makes_it_incomplete)
{
	struct snap *s = sb_new(3);

	sb_state(s, 2, SNAP_RANK_UNREAD, "ptrace: Operation not permitted");
	sb_recv(s, 0, 2, 1, "u.c", 5);
	sb_recv(s, 1, 0, 1, "u.c", 6);
	EXPECT(s, ANL_INCOMPLETE, "0");
	snap_free(s);
}

Test(analyze, unreadable_rank_outside_the_cycle_still_deadlock)
{
	struct snap *s = sb_ring(3);

	snap_set_nranks(s, 4);
	sb_state(s, 3, SNAP_RANK_REMOTE, "on host node2");
	EXPECT(s, ANL_DEADLOCK, "0,1,2");
	snap_free(s);
}

Test(analyze, wrong_tag_receive_against_finalize_deadlocks)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	sb_recv(s, 1, 0, 2, "tag.c", 22);
	EXPECT(s, ANL_DEADLOCK, "0,1");
	snap_free(s);
}

Test(analyze, every_rank_in_finalize_is_not_a_deadlock)
{
	struct snap *s = sb_new(3);

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Finalize", "fin.c", 30);
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, rank_whose_progress_changed_is_not_blocked)
{
	struct snap *s = sb_ring(3);

	s->ranks[1].progress = SNAP_PROGRESS_CHANGED;
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, recv_with_no_visible_op_is_inferred_deadlock_when_all_blocked)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Recv", "n.c", 3);
	s->ranks[0].queues = SNAP_QUEUES_NONE;
	s->ranks[0].queues_reason = snap_str(s, "no information");
	sb_recv(s, 1, 0, 1, "n.c", 4);
	EXPECT(s, ANL_DEADLOCK, "0,1");
	snap_free(s);
}

/* Its wait is unknown, but a rank that goes on can still send it: the
 * unknown cannot change the verdict. */
Test(analyze, recv_with_no_visible_op_is_released_by_a_rank_going_on)
{
	struct snap *s = sb_new(3);

	sb_call(s, 0, "MPI_Recv", "n.c", 3);
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, two_threads_blocked_release_on_either)
{
	struct snap *s = sb_new(3);
	struct snap_rank *r = &s->ranks[0];

	sb_call(s, 0, "MPI_Recv", "mt.c", 3);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 0, 8);
	sb_op(s, 0, SNAP_OP_RECV, 0, 2, 0, 8);
	r->nthreads = 2;
	r->threads = calloc(2, sizeof(*r->threads));
	r->threads[0].mpi_call = snap_str(s, "MPI_Recv");
	r->threads[1].mpi_call = snap_str(s, "MPI_Recv");
	sb_recv(s, 1, 0, 0, "mt.c", 9);
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, exit_code_follows_the_verdict)
{
	struct snap *s = sb_ring(2);
	struct anl_result *r = anl_analyze(s);

	cr_expect_eq(anl_exit_code(r), 1);
	anl_result_free(r);
	s->ranks[0].progress = SNAP_PROGRESS_CHANGED;
	r = anl_analyze(s);
	cr_expect_eq(anl_exit_code(r), 0);
	anl_result_free(r);
	snap_free(s);
}

/* A large message in transfer: the receive is matched and the sender is
 * in MPI_Send.  Both look the same in two looks, yet the job is moving. */
Test(analyze, matched_message_in_transfer_is_not_a_deadlock)
{
	FILE *f = fopen("tests/fixtures/analyze/slow-transfer.jsonl", "r");
	struct snap *s = NULL;

	cr_assert_not_null(f, "run from the repository root");
	cr_assert_eq(snap_read(f, "slow-transfer.jsonl", &s), 0);
	fclose(f);
	EXPECT(s, ANL_NO_DEADLOCK, "");
	snap_free(s);
}

Test(analyze, matched_receive_releases_only_its_own_wait)
{
	struct snap *s = sb_new(3);

	/* Rank 0 waits for all of two receives: one from 1 is matched and in
	 * transfer, the one from 2 never comes (rank 2 waits for rank 0). */
	sb_call(s, 0, "MPI_Waitall", "w.c", 5);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 0, 8);
	sb_op(s, 0, SNAP_OP_RECV, 0, 2, 0, 8);
	s->ranks[0].ops[0].status = SNAP_ST_MATCHED;
	s->ranks[0].ops[0].actual_global = 1;
	sb_recv(s, 2, 0, 0, "w.c", 9);
	EXPECT(s, ANL_DEADLOCK, "0,2");
	snap_free(s);
}

/* Issue 10: a ring spread over other hosts, collected before agents
 * existed: no rank read, and that was called a clean bill. */
Test(analyze, no_rank_read_is_incomplete_never_no_deadlock)
{
	FILE *f = fopen("tests/fixtures/analyze/remote-ring.jsonl", "r");
	struct snap *s = NULL;
	struct anl_result *r;
	struct anl_opts o = { .format = ANL_FORMAT_TEXT };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	cr_assert_not_null(f, "run from the repository root");
	cr_assert_eq(snap_read(f, "remote-ring.jsonl", &s), 0);
	fclose(f);
	r = anl_analyze(s);
	cr_expect_eq(anl_verdict(r), ANL_INCOMPLETE);
	cr_expect_eq(anl_exit_code(r), 2);
	out = open_memstream(&text, &len);
	anl_report(r, &o, out);
	fclose(out);
	cr_expect(!strncmp(text, "INCOMPLETE: none of the 4 ranks could be "
				 "read, no verdict\n", 52), "%s", text);
	free(text);
	anl_result_free(r);
	snap_free(s);
}

Test(analyze, ranks_not_read_beside_ranks_going_on_are_incomplete)
{
	struct snap *s = sb_new(4);

	sb_state(s, 2, SNAP_RANK_REMOTE, "host node2 unreachable");
	sb_state(s, 3, SNAP_RANK_REMOTE, "host node2 unreachable");
	EXPECT(s, ANL_INCOMPLETE, "");
	snap_free(s);
}
