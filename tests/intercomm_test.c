/*
 * intercomm_test.c - intercommunicators: a point-to-point peer is a rank
 * of the remote group, "any source" is any rank of it, a collective has
 * both groups; the snapshot keeps the remote group.  The job: 4 ranks,
 * group A = {0,1} and B = {2,3} joined by one intercommunicator (context
 * id 5), seen from each side as a communicator of its own.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "support/invariant.h"
#include "support/snapbuild.h"

static const int side_a[] = { 0, 1 }, side_b[] = { 2, 3 };

/* The intercommunicator's two sides: *a (ranks 0-1), *b (ranks 2-3). */
static struct snap *job(int *a, int *b)
{
	struct snap *s = sb_new(4);

	*a = sb_comm(s, 5, "", 2, side_a);
	snap_comm_set_remote(s, *a, 2, side_b);
	*b = sb_comm(s, 5, "", 2, side_b);
	snap_comm_set_remote(s, *b, 2, side_a);
	return s;
}

/* rank in MPI_Recv on comm from the remote group's rank peer (-1: any
 * source), tag 5; line 17. */
static void recv_on(struct snap *s, int rank, int comm, int peer)
{
	sb_call(s, rank, "MPI_Recv", "inter.c", 17);
	sb_op(s, rank, SNAP_OP_RECV, comm, peer, 5, 4);
}

static enum anl_verdict verdict_of(const struct snap *s, char **text)
{
	struct anl_result *r = anl_analyze(s);
	struct anl_opts o = { .format = ANL_FORMAT_TEXT };
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	enum anl_verdict v;

	inv_check(s, "intercomm test");
	anl_report(r, &o, f);
	fclose(f);
	v = anl_verdict(r);
	anl_result_free(r);
	return v;
}

/* World 0 waits for remote 1 (world 3), world 3 for remote 0 (world 0):
 * a cycle, though both peers' local numbers name ranks of the other
 * side that compute (translated through the local group, 0 would wait
 * for 1 and 3 for 2). */
Test(intercomm, receives_across_it_wait_on_the_remote_group)
{
	int a, b;
	struct snap *s = job(&a, &b);
	char *text = NULL;

	recv_on(s, 0, a, 1);
	recv_on(s, 3, b, 0);
	sb_call(s, 1, NULL, "inter.c", 21);
	sb_call(s, 2, NULL, "inter.c", 21);
	cr_expect_eq(s->ranks[0].ops[0].peer_global, 3);
	cr_expect_eq(s->ranks[3].ops[0].peer_global, 0);
	cr_expect_eq(verdict_of(s, &text), ANL_DEADLOCK, "%s", text);
	cr_expect_not_null(strstr(text, "rank 0 (MPI_Recv at inter.c:17) "
					"waits for rank 3"), "%s", text);
	cr_expect_not_null(strstr(text, "unnamed intercommunicator"), "%s",
			   text);
	free(text);
	snap_free(s);
}

/* World 0 waits for remote 0 (world 2) and world 3 for remote 1 (world
 * 1), both computing: no deadlock (through the local groups 0 would wait
 * for itself, 3 for 3). */
Test(intercomm, receive_from_a_computing_remote_rank_is_no_deadlock)
{
	int a, b;
	struct snap *s = job(&a, &b);
	char *text = NULL;

	recv_on(s, 0, a, 0);
	sb_call(s, 1, NULL, "inter.c", 21);
	sb_call(s, 2, NULL, "inter.c", 21);
	recv_on(s, 3, b, 1);
	cr_expect_eq(verdict_of(s, &text), ANL_NO_DEADLOCK, "%s", text);
	free(text);
	snap_free(s);
}

/* Any source on side A is any rank of B: with B computing, no deadlock;
 * with B in MPI_Finalize waiting for A, a knot. */
Test(intercomm, any_source_waits_on_the_remote_group)
{
	int a, b;
	struct snap *s = job(&a, &b);
	char *text = NULL;

	recv_on(s, 0, a, -1);
	sb_call(s, 1, "MPI_Finalize", "inter.c", 30);
	sb_call(s, 2, NULL, "inter.c", 21);
	sb_call(s, 3, NULL, "inter.c", 21);
	cr_expect_eq(verdict_of(s, &text), ANL_NO_DEADLOCK, "%s", text);
	free(text);
	sb_call(s, 2, "MPI_Finalize", "inter.c", 30);
	sb_call(s, 3, "MPI_Finalize", "inter.c", 30);
	cr_expect_eq(verdict_of(s, &text), ANL_DEADLOCK, "%s", text);
	free(text);
	snap_free(s);
}

/* A barrier on the intercommunicator that side A is in, its internal
 * requests on its side of it, while B computes: B is awaited, so
 * nothing is stuck (with A's group alone the collective would look
 * complete and stuck). */
Test(intercomm, collective_on_it_waits_for_both_groups)
{
	int a, b;
	struct snap *s = job(&a, &b);
	char *text = NULL;

	for (int i = 0; i < 2; i++) {
		sb_call(s, i, "MPI_Barrier", "inter.c", 40);
		sb_ob1_op(s, i, SNAP_OP_RECV, a, 0, -16, false);
	}
	sb_call(s, 2, NULL, "inter.c", 21);
	sb_call(s, 3, NULL, "inter.c", 21);
	cr_expect_eq(verdict_of(s, &text), ANL_NO_DEADLOCK, "%s", text);
	free(text);
	snap_free(s);
}

/* The remote group goes through the snapshot file and back. */
Test(intercomm, snapshot_keeps_the_remote_group)
{
	int a, b;
	struct snap *s = job(&a, &b), *back = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	cr_assert_not_null(strstr(buf, "\"remote_size\":2,\"remote\":\"2-3\""),
			   "%s", buf);
	f = fmemopen(buf, len, "r");
	cr_assert_eq(snap_read(f, "mem", &back), 0);
	fclose(f);
	cr_assert_eq(back->ncomms, s->ncomms);
	for (int c = 0; c < s->ncomms; c++) {
		cr_assert_eq(back->comms[c].remote_size, s->comms[c].remote_size);
		for (int i = 0; i < s->comms[c].remote_size; i++)
			cr_expect_eq(back->comms[c].remote[i],
				     s->comms[c].remote[i]);
	}
	cr_expect_null(back->comms[0].remote, "MPI_COMM_WORLD");
	snap_free(back);
	snap_free(s);
	free(buf);
}

/* MPI_Comm_spawn: world 0's intercommunicator has 3 children outside the
 * job, not read.  Its receive from child 0 is no wait on rank 0 (the
 * DLL's translation through the local group): no verdict for it, and
 * the snapshot keeps that the remote group is outside (remote_size
 * beyond the job's 2 ranks, no "remote"). */
Test(intercomm, remote_group_outside_the_job_gives_no_verdict)
{
	static const int parents[] = { 0, 1 };
	struct snap *s = sb_new(2), *back;
	char *text = NULL;
	int c = sb_comm(s, 9, "", 2, parents);

	snap_comm_set_remote(s, c, 3, NULL);
	cr_expect_eq(snap_comm_peer(s, c, 0), -1);
	recv_on(s, 0, c, 0);
	sb_recv(s, 1, 0, 7, "inter.c", 30);	/* behind rank 0 */
	cr_expect_eq(verdict_of(s, &text), ANL_INCOMPLETE, "%s", text);
	cr_expect_not_null(strstr(text, "rank 0: MPI_Recv at inter.c:17, "
				  "waits on processes outside the job"),
			   "%s", text);
	cr_expect_null(strstr(text, "inter.c:17) waits for rank 0"), "%s",
		       text);
	cr_expect_not_null(strstr(text, "waits for rank 0 (waiting on "
				  "processes outside the job)"), "%s", text);
	free(text);
	back = sb_round_trip(s);
	cr_assert_not_null(back);
	cr_expect_eq(back->comms[c].remote_size, 3);
	cr_expect_null(back->comms[c].remote);
	snap_free(back);
	snap_free(s);
}
