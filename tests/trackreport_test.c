/*
 * trackreport_test.c - the report with libmdtrack.so's records: where a
 * stuck request was posted (a persistent one: also where it was
 * started), and how the members of a collective disagree; ranks on
 * different communicators are not compared; without records nothing is
 * added.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "support/jtree.h"

#include "analyze.h"
#include "snap.h"
#include "support/snapbuild.h"

static char *render(const struct snap *s, enum anl_format fmt)
{
	struct anl_opts o = { .format = fmt };

	return sb_render(s, &o);
}

/* The JSON report's value at a path of keys and array indexes
 * ("postings", "0", "posted", "line"), as JSON text (malloc'ed). */
static char *json_at(const struct snap *s, const char *const *path)
{
	char *text = render(s, ANL_FORMAT_JSON), *out;
	yajl_val root = jt_parse(text), v = root;

	cr_assert_not_null(root, "%s", text);
	for (int i = 0; path[i] && v; i++) {
		if (jt_is_array(v))
			v = jt_at(v, (size_t)atoi(path[i]));
		else
			v = jt_get(v, path[i]);
	}
	out = v ? jt_text(v) : strdup("(none)");
	jt_free(root);
	free(text);
	return out;
}

static void expect_json(const struct snap *s, const char *const *path,
			const char *want)
{
	char *got = json_at(s, path);

	cr_expect_str_eq(got, want, "%s", path[0]);
	free(got);
}

#define P(...) ((const char *const[]){ __VA_ARGS__, NULL })

static struct snap_track_rec *rec(struct snap *s, int rank,
				  enum snap_track_kind kind, const char *call,
				  const char *file, int line)
{
	struct snap_rank *r = &s->ranks[rank];
	struct snap_track_rec *t;

	r->tracked = true;
	r->track = realloc(r->track, (size_t)(r->ntrack + 1) * sizeof(*t));
	t = &r->track[r->ntrack++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->call = snap_str(s, call);
	t->seq = (uint64_t)r->ntrack;
	t->comm = 0;
	t->peer = SNAP_TRACK_NONE;
	t->tag = SNAP_TRACK_NONE;
	t->file = snap_str(s, file);
	t->line = line;
	return t;
}

/* Rank 0 waits in MPI_Wait for a receive from 1, tag 1; rank 1 waits in
 * MPI_Recv from 0. */
static struct snap *wait_pair(void)
{
	struct snap *s = sb_new(2);
	struct snap_op *op;

	sb_call(s, 0, "MPI_Wait", "a.c", 63);
	op = sb_op(s, 0, SNAP_OP_RECV, 0, 1, 1, 4);
	op->request = 0x1000;
	sb_recv(s, 1, 0, 2, "a.c", 70);
	return s;
}

Test(trackreport, names_the_irecv_a_wait_is_for)
{
	struct snap *s = wait_pair();
	struct snap_track_rec *t = rec(s, 0, SNAP_TRACK_POST, "MPI_Irecv",
				       "a.c", 61);
	char *out;

	t->request = 0x1000;
	t->peer = 1;
	t->tag = 1;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "\nposted:\n  rank 0 waits in MPI_Wait at a.c:63 "
			      "for the MPI_Irecv posted at a.c:61, tag 1 from "
			      "rank 1\n"), "%s", out);
	free(out);
	expect_json(s, P("postings", "0", "request"), "\"0x1000\"");
	expect_json(s, P("postings", "0", "posted", "call"), "\"MPI_Irecv\"");
	expect_json(s, P("postings", "0", "posted", "line"), "61");
	expect_json(s, P("postings", "0", "posted", "tag"), "1");
	expect_json(s, P("postings", "0", "posted", "peer_global"), "1");
	snap_free(s);
}

/* Rank 0 posted an MPI_Irecv from rank 1 (which runs) and then blocks in
 * MPI_Recv from rank 2, which waits for rank 0: MPI_Recv waits for its
 * own receive only, so 0 and 2 are deadlocked whatever rank 1 does, and
 * the report does not say MPI_Recv waits for the Irecv.  Without the
 * record either receive could end the call: no verdict of a cycle, but
 * no clean bill either (rank 2 waits behind the guess): INCOMPLETE. */
Test(trackreport, a_blocking_receive_does_not_wait_for_an_irecv_posted_before)
{
	for (int tracked = 0; tracked < 2; tracked++) {
		struct snap *s = sb_new(3);
		struct snap_op *op;
		char *out;

		op = sb_op(s, 0, SNAP_OP_RECV, 0, 1, 0, 4);
		op->request = 0x1000;
		sb_recv(s, 0, 2, 1, "b.c", 8);
		s->ranks[0].ops[1].request = 0x2000;
		sb_call(s, 1, NULL, "b.c", 30);
		sb_recv(s, 2, 0, 2, "b.c", 10);
		for (int r = 0; r < 3; r++)
			s->ranks[r].progress = SNAP_PROGRESS_STABLE;
		if (tracked) {
			struct snap_track_rec *t = rec(s, 0, SNAP_TRACK_POST,
						       "MPI_Irecv", "b.c", 6);

			t->request = 0x1000;
			t->peer = 1;
			t->tag = 0;
		}
		out = render(s, ANL_FORMAT_TEXT);
		if (tracked)
			cr_expect(!strncmp(out, "DEADLOCK: 2 of 3 ranks", 22) &&
				  !strstr(out, "posted:"), "%s", out);
		else
			cr_expect(!strncmp(out, "INCOMPLETE: 2 of 3 ranks", 24),
				  "%s", out);
		free(out);
		snap_free(s);
	}
}

/* The MPI library reuses a freed request's memory: a record of an
 * earlier post (an MPI_Irecv from rank 1, tag 5) names the address of
 * the blocking MPI_Recv's own request (from rank 2, tag 1).  It is not
 * that receive's record; leaving the receive out would link rank 0 to
 * rank 1 only (its pending MPI_Irecv from rank 1 that libmdtrack.so did
 * not keep), a false cycle, while rank 2, which runs, may yet send what
 * the MPI_Recv waits for: which receive blocks is not known, and rank 1
 * waits behind the guess, so INCOMPLETE (not DEADLOCK, no clean bill). */
Test(trackreport, a_record_of_a_reused_request_address_is_not_the_calls_own)
{
	struct snap *s = sb_new(3);
	struct snap_track_rec *t;
	struct snap_op *op;
	char *out;

	op = sb_op(s, 0, SNAP_OP_RECV, 0, 1, 0, 4);
	op->request = 0x1000;
	sb_recv(s, 0, 2, 1, "b.c", 8);
	s->ranks[0].ops[1].request = 0x2000;
	sb_recv(s, 1, 0, 2, "b.c", 10);
	sb_call(s, 2, NULL, "b.c", 30);
	for (int r = 0; r < 3; r++)
		s->ranks[r].progress = SNAP_PROGRESS_STABLE;
	t = rec(s, 0, SNAP_TRACK_POST, "MPI_Irecv", "b.c", 6);
	t->request = 0x2000;
	t->peer = 1;
	t->tag = 5;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(!strncmp(out, "INCOMPLETE: 2 of 3 ranks", 24), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, a_started_persistent_request_names_init_and_start)
{
	struct snap *s = wait_pair();
	struct snap_track_rec *t;
	char *out;

	t = rec(s, 0, SNAP_TRACK_INIT, "MPI_Recv_init", "p.c", 20);
	t->request = 0x1000;
	t->peer = SNAP_TRACK_ANY;
	t->tag = 1;
	t = rec(s, 0, SNAP_TRACK_POST, "MPI_Start", "p.c", 25);
	t->request = 0x1000;
	t->comm = -1;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "for the MPI_Recv_init posted at p.c:20 (started "
			      "by MPI_Start at p.c:25), tag 1 from any "
			      "source\n"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, a_request_without_a_record_adds_nothing)
{
	struct snap *s = wait_pair();
	char *out;

	rec(s, 0, SNAP_TRACK_POST, "MPI_Irecv", "a.c", 61)->request = 0x2000;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect_null(strstr(out, "posted"), "%s", out);
	free(out);
	snap_free(s);
}

/* Rank 0 waits in MPI_Wait with two internal receives from rank 1 of a
 * collective on world pending (ob1 shows them, not the user's request);
 * rank 1 waits in MPI_Recv from 0.  Its collective records: an
 * MPI_Barrier, then the nonblocking collective call. */
static struct snap *nbc_wait(const char *call, int root)
{
	struct snap *s = sb_new(2);
	struct snap_track_rec *t;

	sb_call(s, 0, "MPI_Wait", "n.c", 16);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -27, false);
	sb_ob1_op(s, 0, SNAP_OP_SEND, 0, 1, -27, false);
	sb_recv(s, 1, 0, 1, "n.c", 19);
	rec(s, 0, SNAP_TRACK_COLL, "MPI_Barrier", "n.c", 12);
	t = rec(s, 0, SNAP_TRACK_COLL, call, "n.c", 15);
	t->peer = root;
	return s;
}

Test(trackreport, a_wait_for_a_nonblocking_collective_names_its_call)
{
	struct snap *s = nbc_wait("MPI_Ibcast", 1);
	char *out = render(s, ANL_FORMAT_TEXT);

	cr_expect(strstr(out, "\nposted:\n  rank 0 waits in MPI_Wait at n.c:16 "
			      "for the MPI_Ibcast posted at n.c:15, root 1\n"),
		  "%s", out);
	/* Once, though two of its internal requests are pending. */
	cr_expect_null(strstr(strstr(out, "n.c:15, root 1\n") + 1,
			      "MPI_Ibcast posted"), "%s", out);
	/* The cycle's line says whose internal receive it is. */
	cr_expect(strstr(out, "rank 0 (MPI_Wait at n.c:16) waits for rank 1: "
			      "internal receive of the MPI_Ibcast posted at "
			      "n.c:15, tag -27"), "%s", out);
	free(out);
	expect_json(s, P("postings", "0", "request"), "null");
	expect_json(s, P("postings", "0", "posted", "call"), "\"MPI_Ibcast\"");
	expect_json(s, P("postings", "0", "posted", "line"), "15");
	expect_json(s, P("postings", "1"), "(none)");
	snap_free(s);
}

Test(trackreport, internal_requests_of_a_blocking_collective_name_nothing)
{
	/* The latest collective on the communicator is a blocking one. */
	struct snap *s = nbc_wait("MPI_Bcast", 1);
	char *out = render(s, ANL_FORMAT_TEXT);

	cr_expect_null(strstr(out, "posted"), "%s", out);
	free(out);
	snap_free(s);
	/* A rank in a blocking call is not waiting on its requests. */
	s = nbc_wait("MPI_Ibarrier", SNAP_TRACK_NONE);
	sb_call(s, 0, "MPI_Barrier", "n.c", 16);
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect_null(strstr(out, "posted"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, reduce_with_two_roots_says_who_called_what)
{
	struct snap *s = sb_new(2);
	struct snap_track_rec *t;
	char *out;

	for (int i = 0; i < 2; i++) {
		sb_call(s, i, "MPI_Reduce", "a.c", 19 + 2 * i);
		t = rec(s, i, SNAP_TRACK_COLL, "MPI_Reduce", "a.c", 19 + 2 * i);
		t->peer = i;
		t->count = 1;
		t->datatype_name = snap_str(s, "MPI_INT");
		t->op_name = snap_str(s, "MPI_SUM");
	}
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "\ncollectives that disagree:\n  rank 0 called "
			      "MPI_Reduce with root 0 at a.c:19, rank 1 with "
			      "root 1 at a.c:21\n"), "%s", out);
	free(out);
	expect_json(s, P("disagreements", "0", "differ"), "[\"root\"]");
	expect_json(s, P("disagreements", "0", "groups", "1", "ranks"), "[1]");
	expect_json(s, P("disagreements", "0", "groups", "1", "peer"), "1");
	snap_free(s);
}

/* Rank 0 in its first collective on MPI_COMM_WORLD (MPI_Allreduce), rank
 * 1 in its second (MPI_Barrier): it went past the first with a call that
 * did not match (an eager MPI_Reduce), and the text says so. */
Test(trackreport, members_at_different_collectives_are_told_apart)
{
	struct snap *s = sb_new(2);
	struct snap_track_rec *t;
	char *out;

	sb_call(s, 0, "MPI_Allreduce", "a.c", 11);
	t = rec(s, 0, SNAP_TRACK_COLL, "MPI_Allreduce", "a.c", 11);
	t->ncalls = 1;
	sb_call(s, 1, "MPI_Barrier", "a.c", 15);
	t = rec(s, 1, SNAP_TRACK_COLL, "MPI_Barrier", "a.c", 15);
	t->ncalls = 2;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "rank 0 called MPI_Allreduce at a.c:11, rank 1 "
			      "called MPI_Barrier at a.c:15; rank 1 went past "
			      "collective #1 on MPI_COMM_WORLD, where rank 0 "
			      "still is (its MPI_Allreduce at a.c:11): they "
			      "parted there"), "%s", out);
	free(out);
	expect_json(s, P("disagreements", "0", "groups", "1", "ncalls"), "2");
	snap_free(s);
}

/* Rank 1 waits for its MPI_Iallreduce (#1 on MPI_COMM_WORLD); rank 0's
 * MPI_Ibcast there completed (it matched rank 1's messages) and rank 0
 * went on to MPI_Finalize: what each called at #1 is compared. */
Test(trackreport, a_rank_that_went_past_the_stuck_collective_is_compared)
{
	struct snap *s = sb_new(2);
	struct snap_track_rec *t;
	char *out;

	sb_call(s, 0, "MPI_Finalize", "m.c", 6);
	t = rec(s, 0, SNAP_TRACK_COLL, "MPI_Ibcast", "m.c", 4);
	t->ncalls = 1;
	t->peer = 0;
	sb_call(s, 1, "MPI_Wait", "m.c", 5);
	sb_ob1_op(s, 1, SNAP_OP_RECV, 0, 0, -27, false);
	t = rec(s, 1, SNAP_TRACK_COLL, "MPI_Iallreduce", "m.c", 4);
	t->ncalls = 1;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "\ncollectives that disagree:\n  rank 0 called "
			      "MPI_Ibcast at m.c:4, rank 1 called "
			      "MPI_Iallreduce at m.c:4\n"), "%s", out);
	free(out);
	/* A rank whose latest collective is another number is not. */
	s->ranks[0].track[0].ncalls = 2;
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect_null(strstr(out, "disagree"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, counts_datatypes_and_operations_that_differ_are_named)
{
	struct snap *s = sb_new(3);
	struct snap_track_rec *t;
	char *out;

	for (int i = 0; i < 3; i++) {
		sb_call(s, i, "MPI_Allreduce", "b.c", 5 + i);
		t = rec(s, i, SNAP_TRACK_COLL, "MPI_Allreduce", "b.c", 5 + i);
		t->count = i == 2 ? 2 : 1;
		t->datatype_name = snap_str(s, i == 1 ? "MPI_DOUBLE" : "MPI_INT");
		t->op_name = snap_str(s, i == 0 ? "MPI_MAX" : "MPI_SUM");
	}
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "  rank 0 called MPI_Allreduce with count 1, "
			      "MPI_INT, MPI_MAX at b.c:5, rank 1 with count 1, "
			      "MPI_DOUBLE, MPI_SUM at b.c:6, rank 2 with count "
			      "2, MPI_INT, MPI_SUM at b.c:7\n"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, collectives_on_disjoint_communicators_are_not_compared)
{
	struct snap *s = sb_new(4);
	int a[] = { 0, 1 }, b[] = { 2, 3 };
	int ca = sb_comm(s, 5, "A", 2, a), cb = sb_comm(s, 6, "B", 2, b);
	struct snap_track_rec *t;
	char *out;

	for (int i = 0; i < 4; i++) {
		sb_call(s, i, i < 2 ? "MPI_Barrier" : "MPI_Bcast", "c.c", 9);
		t = rec(s, i, SNAP_TRACK_COLL,
			i < 2 ? "MPI_Barrier" : "MPI_Bcast", "c.c", 9);
		t->comm = i < 2 ? ca : cb;
	}
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect_null(strstr(out, "collectives that disagree"), "%s", out);
	/* Each named on the communicator its records name. */
	cr_expect(strstr(out, "collective MPI_Barrier on A does not complete"),
		  "%s", out);
	cr_expect(strstr(out, "collective MPI_Bcast on B does not complete"),
		  "%s", out);
	free(out);
	snap_free(s);
}

/* Rank 0 in MPI_Barrier on a duplicate of MPI_COMM_WORLD (its record
 * made at the call on its stack, or at another line), rank 1 in a
 * receive from it: MPICH shows no internal request to tell which of the
 * two communicators of one group the barrier is on. */
static struct snap *dup_barrier(int rec_line)
{
	struct snap *s = sb_new(2);
	int g[] = { 0, 1 }, dup = sb_comm(s, 496, "dup", 2, g);
	struct snap_track_rec *t;

	sb_call(s, 0, "MPI_Barrier", "d.c", 13);
	t = rec(s, 0, SNAP_TRACK_COLL, "MPI_Barrier", "d.c", rec_line);
	t->comm = dup;
	sb_recv(s, 1, 0, 5, "d.c", 16);
	return s;
}

Test(trackreport, blocking_collective_is_named_on_the_duplicate_its_record_names)
{
	struct snap *s = dup_barrier(13);
	char *out = render(s, ANL_FORMAT_TEXT);

	cr_expect(strstr(out, "rank 0 (MPI_Barrier at d.c:13) waits for rank 1 "
			      "(MPI_Recv at d.c:16): collective on dup (id "
			      "496)\n"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, collective_record_of_another_site_does_not_name_the_communicator)
{
	struct snap *s = dup_barrier(20);
	char *out = render(s, ANL_FORMAT_TEXT);

	/* The representative of the group, as without records. */
	cr_expect(strstr(out, "rank 0 (MPI_Barrier at d.c:13) waits for rank 1 "
			      "(MPI_Recv at d.c:16): collective on "
			      "MPI_COMM_WORLD (id 0)\n"), "%s", out);
	free(out);
	snap_free(s);
}

Test(trackreport, different_communicators_that_must_meet_are_named)
{
	struct snap *s = sb_new(2);
	int g[] = { 0, 1 };
	int dup = sb_comm(s, 5, "dup", 2, g);
	struct snap_track_rec *t;
	char *out;

	for (int i = 0; i < 2; i++) {
		sb_call(s, i, "MPI_Barrier", "d.c", 3 + i);
		t = rec(s, i, SNAP_TRACK_COLL, "MPI_Barrier", "d.c", 3 + i);
		t->comm = i ? dup : 0;
	}
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(out, "  rank 0 called MPI_Barrier on MPI_COMM_WORLD at "
			      "d.c:3, rank 1 on dup at d.c:4\n"), "%s", out);
	free(out);
	snap_free(s);
}

/* One slow rank and a rooted collective: ranks 0-1 wait in MPI_Reduce
 * for rank 3, which computes; rank 2, a leaf done with its part, went on
 * to MPI_Barrier.  Not a deadlock, with libmdtrack.so's numbers (rank 2
 * is at #2) or without them (a member goes on: the order is not known);
 * with every member held in a collective and no numbers, a mismatch. */
Test(trackreport, a_slow_rank_and_ranks_gone_past_a_reduce_are_no_deadlock)
{
	for (int k = 0; k < 3; k++) {
		struct snap *s = sb_new(4);
		char *out;

		for (int r = 0; r < 4; r++)
			s->ranks[r].progress = SNAP_PROGRESS_STABLE;
		sb_call(s, 0, "MPI_Reduce", "r.c", 7);
		sb_call(s, 1, "MPI_Reduce", "r.c", 7);
		sb_call(s, 2, "MPI_Barrier", "r.c", 8);
		sb_call(s, 3, k == 2 ? "MPI_Barrier" : NULL, "r.c", 8);
		if (k == 1)
			for (int r = 0; r < 3; r++) {
				struct snap_track_rec *t =
					rec(s, r, SNAP_TRACK_COLL,
					    r < 2 ? "MPI_Reduce" : "MPI_Barrier",
					    "r.c", r < 2 ? 7 : 8);

				t->ncalls = r < 2 ? 1 : 2;
			}
		out = render(s, ANL_FORMAT_TEXT);
		if (k < 2)
			cr_expect(!strncmp(out, "NO DEADLOCK", 11) &&
				  !strstr(out, "collectives that disagree"),
				  "%d: %s", k, out);
		else
			cr_expect(!strncmp(out, "DEADLOCK", 8), "%s", out);
		free(out);
		snap_free(s);
	}
}

/* Ranks 0-1 in MPI_Allreduce #1; rank 2 finished #1 (its record) and
 * waits in MPI_Finalize, which the library does not record: it went
 * past, and with rank 3 computing the instance waits for rank 3 only. */
Test(trackreport, a_rank_in_finalize_after_the_instance_went_past_it)
{
	struct snap *s = sb_new(4);
	char *out;

	for (int r = 0; r < 4; r++) {
		s->ranks[r].progress = SNAP_PROGRESS_STABLE;
		if (r < 3)
			rec(s, r, SNAP_TRACK_COLL, "MPI_Gather", "g.c", 7)
				->ncalls = 1;
	}
	sb_call(s, 0, "MPI_Gather", "g.c", 7);
	sb_call(s, 1, "MPI_Gather", "g.c", 7);
	sb_call(s, 2, "MPI_Finalize", "g.c", 8);
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(!strncmp(out, "NO DEADLOCK", 11), "%s", out);
	free(out);
	/* Rank 3 in MPI_Finalize too: the Gather cannot complete. */
	sb_call(s, 3, "MPI_Finalize", "g.c", 8);
	out = render(s, ANL_FORMAT_TEXT);
	cr_expect(!strncmp(out, "DEADLOCK", 8), "%s", out);
	free(out);
	snap_free(s);
}

/* Counts that may differ: per rank in MPI_Gatherv, and 4 MPI_INT
 * against 1 of a derived datatype (no name) in MPI_Bcast. */
Test(trackreport, counts_that_may_differ_are_no_disagreement)
{
	static const char *const calls[] = { "MPI_Gatherv", "MPI_Bcast" };

	for (int k = 0; k < 2; k++) {
		struct snap *s = sb_new(2);
		char *out;

		for (int i = 0; i < 2; i++) {
			struct snap_track_rec *t;

			sb_call(s, i, calls[k], "v.c", 5);
			t = rec(s, i, SNAP_TRACK_COLL, calls[k], "v.c", 5);
			t->count = k == 0 ? i + 1 : (i ? 1 : 4);
			t->peer = 0;
			if (k == 0 || i == 0)
				t->datatype_name = snap_str(s, "MPI_INT");
		}
		out = render(s, ANL_FORMAT_TEXT);
		cr_expect(!strstr(out, "collectives that disagree"), "%s: %s",
			  calls[k], out);
		free(out);
		snap_free(s);
	}
}

/* In a sub-communicator {0,2,4} ranks 0 and 4 disagree on MPI_Scatter's
 * root; rank 2 went past it to MPI_Barrier on MPI_COMM_WORLD, where
 * ranks 1, 3 and 5 (not members of the sub-communicator) wait too.  The
 * disagreement is told once, with the sub-communicator's members only:
 * world's waiting ranks agree among themselves, and the ranks missing
 * from its barrier are in the collective told above. */
Test(trackreport, disagreement_in_a_sub_communicator_lists_its_members_only)
{
	struct snap *s = sb_new(6);
	int g[] = { 0, 2, 4 }, sub = sb_comm(s, 3, "even", 3, g);
	char *out, *at;

	for (int i = 0; i < 6; i++) {
		bool even = i % 2 == 0 && i != 2;
		struct snap_track_rec *t;

		s->ranks[i].progress = SNAP_PROGRESS_STABLE;
		sb_call(s, i, even ? "MPI_Scatter" : "MPI_Barrier", "s.c",
			even ? 15 : 18);
		t = rec(s, i, SNAP_TRACK_COLL,
			even ? "MPI_Scatter" : "MPI_Barrier", "s.c",
			even ? 15 : 18);
		t->comm = even ? sub : 0;
		if (even)
			t->peer = i == 4 ? 1 : 0;
	}
	out = render(s, ANL_FORMAT_TEXT);
	at = strstr(out, "collectives that disagree:\n");
	cr_assert_not_null(at, "%s", out);
	cr_expect(!strncmp(at + 27, "  rank 0 called MPI_Scatter with root 0 "
			   "at s.c:15, rank 2 called MPI_Barrier at s.c:18, "
			   "rank 4 called MPI_Scatter with root 1 at s.c:15\n"
			   "\n", 137), "%s", out);
	free(out);
	snap_free(s);
}
