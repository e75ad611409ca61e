/*
 * report_test.c - the reports, byte for byte against
 * tests/expected/reports/.  To regenerate after a deliberate change to
 * the output, from the repository root:
 *   MD_REGEN=1 build/md-tests --filter "report/ *"   (without the space)
 * then review the diff.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "md.h"
#include "support/invariant.h"
#include "support/snapbuild.h"
#include "support/mpijob.h"

#define EXPECTED_DIR "tests/expected/reports/"

static char *render(const struct snap *s, const struct anl_opts *o)
{
	inv_check(s, "report test");
	return sb_render(s, o);
}

static void compare(const struct snap *s, const struct anl_opts *o,
		    const char *name)
{
	char path[256], *got = render(s, o), *want;

	snprintf(path, sizeof(path), EXPECTED_DIR "%s", name);
	if (getenv("MD_REGEN")) {
		FILE *f = fopen(path, "w");

		cr_assert_not_null(f, "cannot write %s", path);
		fputs(got, f);
		fclose(f);
	}
	want = mj_slurp(path);
	/* A missing expected file is a failure, never a skip: a test that
	 * compares against nothing would pass unseen. */
	cr_assert_not_null(want, "%s is missing: run from the repository "
			   "root, or write it with MD_REGEN=1 and review it",
			   path);
	cr_expect_str_eq(got, want, "%s differs; got:\n%s", name, got);
	free(got);
	free(want);
}

static const struct anl_opts text = { .format = ANL_FORMAT_TEXT };
static const struct anl_opts json = { .format = ANL_FORMAT_JSON };
static const struct anl_opts dot = { .format = ANL_FORMAT_DOT };
static const struct anl_opts github = { .format = ANL_FORMAT_TEXT,
					.github = true };

Test(report, ring_of_three_text_names_every_edge)
{
	struct snap *s = sb_ring(3);

	compare(s, &text, "ring3.txt");
	compare(s, &json, "ring3.json");
	snap_free(s);
}

Test(report, ring_of_64_text_is_shortened_to_ranges)
{
	struct snap *s = sb_ring(64);

	compare(s, &text, "ring64.txt");
	snap_free(s);
}

Test(report, collective_with_missing_member_groups_the_barrier)
{
	struct snap *s = sb_new(6);

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Barrier", "coll.c", 20);
	sb_recv(s, 3, 0, 5, "coll.c", 18);
	compare(s, &text, "coll_missing.txt");
	snap_free(s);
}

Test(report, finalize_and_wrong_tag_text)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	sb_recv(s, 1, 0, 2, "tag.c", 22);
	compare(s, &text, "finalize_tag.txt");
	compare(s, &json, "finalize_tag.json");
	snap_free(s);
}

/* The shortest cycle (0 -> 1 -> 0) leaves rank 2 out; it is in the
 * cycle too, and the report says what it waits for. */
Test(report, ranks_of_a_cycle_off_its_shortest_path_are_named)
{
	struct snap *s = sb_new(3);

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	sb_recv(s, 1, 0, 2, "tag.c", 22);
	sb_recv(s, 2, 0, 2, "tag.c", 22);
	compare(s, &text, "finalize_tag3.txt");
	snap_free(s);
}

/* Many of them: the first 6, then a count (--all-ranks shows all). */
Test(report, ranks_off_the_chain_are_shortened)
{
	struct snap *s = sb_new(20);

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	for (int i = 1; i < 20; i++)
		sb_recv(s, i, 0, 2, "tag.c", 22);
	compare(s, &text, "finalize_tag20.txt");
	snap_free(s);
}

/* Blocked on an exited rank two ways: the collective's members are the
 * chain, the receive from it is named too; the exited rank has no site
 * and one "exited". */
Test(report, every_rank_blocked_on_an_exited_rank_is_named)
{
	struct snap *s = sb_new(4);

	sb_state(s, 0, SNAP_RANK_GONE, "exited before collection");
	sb_call(s, 1, "MPI_Bcast", "early.c", 20);
	sb_call(s, 2, "MPI_Bcast", "early.c", 20);
	sb_recv(s, 3, 0, 0, "early.c", 18);
	compare(s, &text, "dead_peer_rest.txt");
	compare(s, &json, "dead_peer_rest.json");
	snap_free(s);
}

/* MPI_Waitany on two receives: the chain takes one, the other is named
 * as the alternative that would release it too. */
Test(report, or_wait_names_its_other_requests)
{
	struct snap *s = sb_new(3);

	sb_call(s, 0, "MPI_Waitany", "any.c", 16);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 5, 4);
	sb_op(s, 0, SNAP_OP_RECV, 0, 2, 5, 4);
	sb_call(s, 1, "MPI_Finalize", "any.c", 30);
	sb_call(s, 2, "MPI_Finalize", "any.c", 30);
	compare(s, &text, "waitany_alternatives.txt");
	compare(s, &json, "waitany_alternatives.json");
	snap_free(s);
}

/* A rank outside MPI is shown where it is, which is what the ranks that
 * wait for it wait on. */
Test(report, running_rank_is_shown_where_it_is)
{
	struct snap *s = sb_new(2);
	struct anl_result *r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	sb_recv(s, 0, 1, 3, "slow.c", 20);
	s->ranks[1].call_func = snap_str(s, "compute");
	s->ranks[1].call_file = snap_str(s, "slow.c");
	s->ranks[1].call_line = 9;
	r = anl_analyze(s);
	anl_report(r, &text, f);
	fclose(f);
	cr_expect_not_null(strstr(out, "  rank 1: running (not in MPI at "
				       "slow.c:9)\n"), "%s", out);
	anl_result_free(r);
	free(out);
	snap_free(s);
}

/* A rank outside MPI in every look with a request pending: without
 * libmdtrack.so a loop that sleeps between its tests cannot be told from
 * work; the report says what would tell. */
Test(report, untracked_rank_outside_mpi_with_requests_gets_the_hint)
{
	struct snap *s = sb_new(2);
	struct anl_result *r;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	sb_recv(s, 0, 1, 3, "poll.c", 20);
	sb_op(s, 1, SNAP_OP_RECV, 0, 0, 4, 4);
	s->ranks[1].mpi_call = NULL;
	s->ranks[1].call_func = snap_str(s, "main");
	s->ranks[1].call_file = snap_str(s, "poll.c");
	s->ranks[1].call_line = 21;
	s->ranks[1].progress = SNAP_PROGRESS_STABLE;
	r = anl_analyze(s);
	f = open_memstream(&out, &len);
	anl_report(r, &text, f);
	fclose(f);
	cr_expect_not_null(strstr(out, "  rank 1: running (not in MPI at "
				       "poll.c:21)\n      outside MPI in every "
				       "look with 1 operation pending: a loop "
				       "that sleeps"), "%s", out);
	anl_result_free(r);
	free(out);
	out = NULL;
	/* With the library there, no poll was counted: it is not polling. */
	s->ranks[1].tracked = true;
	r = anl_analyze(s);
	f = open_memstream(&out, &len);
	anl_report(r, &text, f);
	fclose(f);
	cr_expect_null(strstr(out, "a loop that sleeps"), "%s", out);
	anl_result_free(r);
	free(out);
	snap_free(s);
}

/* A thread of the rank's in (1: a helper) MPI_Recv at thr.c:line. */
static void thread_in_recv(struct snap *s, int rank, int i, int tid, int line)
{
	struct snap_thread *th = &s->ranks[rank].threads[i];

	th->tid = tid;
	th->nframes = 2;
	th->frames = xcalloc(2, sizeof(*th->frames));
	th->frames[0].func = snap_str(s, "MPI_Recv");
	th->frames[1].func = snap_str(s, "main");
	th->frames[1].file = snap_str(s, "thr.c");
	th->frames[1].line = line;
	th->mpi_call = snap_str(s, "MPI_Recv");
	th->mpi_frame = 0;
	th->user_frame = 1;
}

/* Two threads of a rank in MPI_Recv at two lines: the rank's line shows
 * one, the other thread is named under it. */
Test(report, other_threads_in_mpi_are_named)
{
	struct snap *s = sb_new(2);
	char *out;

	for (int i = 0; i < 2; i++) {
		sb_recv(s, i, 1 - i, 5, "thr.c", 27);
		s->ranks[i].threads = xcalloc(2, sizeof(struct snap_thread));
		s->ranks[i].nthreads = 2;
		thread_in_recv(s, i, 0, 100 + i, 27);
		thread_in_recv(s, i, 1, 200 + i, 12);
	}
	out = render(s, &text);
	cr_expect(strstr(out, "  ranks 0-1: MPI_Recv at thr.c:27, deadlocked\n"
			      "      rank 0's thread 200 also in MPI_Recv at "
			      "thr.c:12\n"), "%s", out);
	free(out);
	s->ranks[1].call_line = 28;	/* apart: one rank a line */
	out = render(s, &text);
	cr_expect(strstr(out, "  rank 1: MPI_Recv at thr.c:28, deadlocked\n"
			      "      thread 101 also in MPI_Recv at thr.c:27\n"
			      "      thread 201 also in MPI_Recv at thr.c:12\n"),
		  "%s", out);
	free(out);
	snap_free(s);
}

/* A knot through an any-source receive: the finalizing ranks, which the
 * chain does not show, are named with what they wait for. */
Test(report, ranks_of_a_knot_off_its_chain_are_named)
{
	struct snap *s = sb_new(3);

	sb_recv(s, 0, -1, 0, "any.c", 14);
	sb_call(s, 1, "MPI_Finalize", "any.c", 17);
	sb_call(s, 2, "MPI_Finalize", "any.c", 17);
	compare(s, &text, "anysource_knot.txt");
	compare(s, &json, "anysource_knot.json");
	snap_free(s);
}

Test(report, partial_deadlock_lists_the_rest_as_ranges)
{
	struct snap *s = sb_new(8);
	struct anl_opts gh = { .format = ANL_FORMAT_TEXT, .github = true };

	sb_send(s, 3, 5, 1, "part.c", 40);
	sb_send(s, 5, 3, 1, "part.c", 40);
	for (int i = 0; i < 8; i++)
		if (i != 3 && i != 5)
			sb_call(s, i, i < 4 ? "MPI_Barrier" : NULL, "part.c", 50);
	compare(s, &gh, "partial.txt");
	snap_free(s);
}

Test(report, sub_communicator_shows_local_and_global_ranks)
{
	struct snap *s = sb_new(4);
	int row[2] = { 3, 1 };
	int c = sb_comm(s, 5, "row", 2, row);

	sb_call(s, 3, "MPI_Recv", "row.c", 3);
	sb_op(s, 3, SNAP_OP_RECV, c, 1, 2, 16);
	sb_call(s, 1, "MPI_Recv", "row.c", 3);
	sb_op(s, 1, SNAP_OP_RECV, c, 0, -1, 16);
	compare(s, &text, "subcomm.txt");
	snap_free(s);
}

Test(report, unreadable_rank_is_listed_as_missing)
{
	struct snap *s = sb_new(3);

	sb_state(s, 2, SNAP_RANK_UNREAD, "ptrace: Operation not permitted");
	sb_recv(s, 0, 2, 1, "u.c", 5);
	sb_recv(s, 1, 0, 1, "u.c", 6);
	compare(s, &text, "unread.txt");
	snap_free(s);
}

Test(report, no_deadlock_summary_counts_computing_and_waiting)
{
	struct snap *s = sb_new(8);

	for (int i = 2; i < 8; i++)
		sb_recv(s, i, i % 2, 0, "ok.c", 9);
	compare(s, &text, "nodeadlock.txt");
	snap_free(s);
}

Test(report, dot_shows_the_deadlocked_part)
{
	struct snap *s = sb_ring(3);

	compare(s, &dot, "ring3.dot");
	snap_free(s);
}

Test(report, junit_failure_carries_the_verdict)
{
	struct snap *s = sb_ring(2);
	struct anl_result *r = anl_analyze(s);
	char path[] = "/tmp/md-junit-XXXXXX", *xml;
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(anl_write_junit(r, "job <1>", path), 0);
	xml = mj_slurp(path);
	unlink(path);
	cr_assert_not_null(xml);
	cr_expect(strstr(xml, "<testcase name=\"job &lt;1&gt;\""), "%s", xml);
	cr_expect(strstr(xml, "<failure message=\"DEADLOCK: 2 of 2 ranks are "
			      "in a cycle (MPI_COMM_WORLD)\">"), "%s", xml);
	free(xml);
	anl_result_free(r);
	snap_free(s);
}

/* MPI_Reduce with two roots: the reason, and each rank's internal
 * receive from the other as ob1 shows it. */
Test(report, stuck_collective_names_the_reason_and_internal_requests)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Reduce", "root.c", 12);
	sb_call(s, 1, "MPI_Reduce", "root.c", 14);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -21, false);
	sb_ob1_op(s, 1, SNAP_OP_RECV, 0, 0, -21, false);
	compare(s, &text, "stuck_reduce.txt");
	compare(s, &json, "stuck_reduce.json");
	snap_free(s);
}

/* MPI_Barrier on a duplicate of MPI_COMM_WORLD in ranks 0-1 and on
 * MPI_COMM_WORLD in ranks 2-3: one node (the stacks cannot tell them
 * apart), and their internal requests say which is which. */
Test(report, stuck_collective_on_a_duplicate_and_its_original_says_so)
{
	struct snap *s = sb_new(4);
	int world[] = { 0, 1, 2, 3 }, dup = sb_comm(s, 3, "dup", 4, world);
	char *out;

	for (int i = 0; i < 4; i++) {
		sb_call(s, i, "MPI_Barrier", "dup.c", i < 2 ? 12 : 14);
		sb_ob1_op(s, i, SNAP_OP_RECV, i < 2 ? dup : 0, (i + 1) % 4, -16,
			  false);
	}
	out = render(s, &text);
	cr_expect(strstr(out, "collective MPI_Barrier on dup does not "
			      "complete: its members disagree; its members "
			      "are on different communicators of the same "
			      "ranks: ranks 0-1 on dup (id 3), ranks 2-3 on "
			      "MPI_COMM_WORLD (id 0)\n"), "%s", out);
	free(out);
	snap_free(s);
}

/* The DOT graph says what the text says: the collective as a node with
 * its reason, the members in it, each internal receive to its peer. */
Test(report, dot_shows_stuck_collective_with_reason_and_internal_requests)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Reduce", "root.c", 12);
	sb_call(s, 1, "MPI_Reduce", "root.c", 14);
	sb_ob1_op(s, 0, SNAP_OP_RECV, 0, 1, -21, false);
	sb_ob1_op(s, 1, SNAP_OP_RECV, 0, 0, -21, false);
	compare(s, &dot, "stuck_reduce.dot");
	snap_free(s);
}

Test(report, dot_marks_stuck_collective_without_ob1_inferred)
{
	struct snap *s = sb_new(3);

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Gather", "cnt.c", 20);
	compare(s, &dot, "stuck_noev.dot");
	snap_free(s);
}

Test(report, stuck_collective_without_ob1_says_what_could_not_be_seen)
{
	struct snap *s = sb_new(3);

	for (int i = 0; i < 3; i++)
		sb_call(s, i, "MPI_Gather", "cnt.c", 20);
	compare(s, &text, "stuck_noev.txt");
	snap_free(s);
}

Test(report, spin_wait_edge_is_inferred)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Test", "spin.c", 17);
	sb_op(s, 0, SNAP_OP_RECV, 0, 1, 2, 8);
	sb_recv(s, 1, 0, 3, "spin.c", 24);
	compare(s, &text, "spin.txt");
	snap_free(s);
}

/* Snapshots of real jobs (tests/fixtures/analyze/README says how they
 * were made), with ob1's queues read. */
static void compare_fixture(const char *fixture, const char *expected)
{
	char path[256];
	FILE *f;
	struct snap *s = NULL;

	snprintf(path, sizeof(path), "tests/fixtures/analyze/%s", fixture);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s is missing: run from the repository root",
			   path);
	cr_assert_eq(snap_read(f, path, &s), 0);
	fclose(f);
	compare(s, &text, expected);
	snap_free(s);
}

Test(report, reduce_with_two_roots_shows_each_root_waiting_for_the_other)
{
	compare_fixture("rootmismatch.jsonl", "fixture_rootmismatch.txt");
}

Test(report, probes_wait_on_their_sources_from_ob1)
{
	compare_fixture("probedeadlock.jsonl", "fixture_probedeadlock.txt");
}

/* MPICH's DLL gives a count of elements without a datatype or bytes. */
Test(report, element_counts_without_bytes_are_counted_in_words)
{
	struct snap *s = sb_ring(3);
	char *got;

	for (int r = 0; r < 3; r++)
		for (int i = 0; i < s->ranks[r].nops; i++) {
			s->ranks[r].ops[i].length = 0;
			s->ranks[r].ops[i].count = r ? 5 : 1;
		}
	got = render(s, &text);
	cr_expect(strstr(got, ", 1 element\n") || strstr(got, ", 1 element "),
		  "%s", got);
	cr_expect(strstr(got, ", 5 elements"), "%s", got);
	cr_expect_null(strstr(got, "1 elements"), "%s", got);
	free(got);
	snap_free(s);
}

/* --github: a rank that waits for itself says so (not "rank -1"), and a
 * file name's ',' ':' '%' are escaped as the runner reads them back. */
Test(report, github_annotation_names_a_self_wait_and_escapes_the_file)
{
	struct snap *s = sb_new(2);
	char *got, *line;

	sb_recv(s, 0, 0, 1, "a,b:c%d.c", 10);
	sb_recv(s, 1, 0, 2, "ring.c", 20);
	got = render(s, &github);
	line = strstr(got, "::error file=a%2Cb%3Ac%25d.c,line=10::");
	cr_expect_not_null(line, "%s", got);
	cr_expect(line && !strncmp(strchr(line + 2, ':') + 2,
				   "rank 0 waits for itself in MPI_Recv",
				   strlen("rank 0 waits for itself")),
		  "%s", got);
	cr_expect_null(strstr(got, "rank -1"), "%s", got);
	free(got);
	snap_free(s);
}

/* Blocking sends whose operations no DLL shows (MPICH without its send
 * queue): the peer is not known, and neither report invents one. */
Test(report, send_without_an_operation_waits_for_a_rank_not_known)
{
	struct snap *s = sb_new(2);
	char *got;

	sb_call(s, 0, "MPI_Send", "send.c", 10);
	sb_call(s, 1, "MPI_Send", "send.c", 10);
	got = render(s, &text);
	cr_expect_not_null(strstr(got, "waits for a rank not known: send"),
			   "%s", got);
	*strstr(got, "\nranks:") = '\0';	/* the knot's lines */
	cr_expect_null(strstr(got, "any rank"), "%s", got);
	free(got);
	got = render(s, &json);
	cr_expect_not_null(strstr(got, "\"to\": null"), "%s", got);
	cr_expect_null(strstr(got, "\"to\": 0"), "%s", got);
	cr_expect_null(strstr(got, "\"to\": 1"), "%s", got);
	free(got);
	snap_free(s);
}

/* A thread of the program outside MPI: computing in the program's own
 * code it may yet send (not a deadlock); sleeping in libc, or running in
 * another library (an OpenMP pool), it does not keep the rank going. */
static void thread_outside(struct snap *s, int rank, int i, int tid,
			   const char *inner_object)
{
	struct snap_thread *th = &s->ranks[rank].threads[i];

	th->tid = tid;
	th->nframes = 2;
	th->frames = xcalloc(2, sizeof(*th->frames));
	th->frames[0].func = snap_str(s, "worker");
	th->frames[0].object = snap_str(s, inner_object);
	th->frames[1].func = snap_str(s, "start_thread");
	th->frames[1].object = snap_str(s, "/lib/libc.so.6");
	th->mpi_frame = -1;
	th->user_frame = strcmp(inner_object, "/app") ? 1 : 0;
	if (th->user_frame == 0) {
		th->frames[0].file = snap_str(s, "thr.c");
		th->frames[0].line = 9;
	}
}

Test(report, thread_computing_in_the_programs_code_keeps_the_rank_going)
{
	static const char *const inner[] = { "/app", "/lib/libc.so.6",
					     "/lib/libgomp.so.1" };

	for (int k = 0; k < 3; k++) {
		struct snap *s = sb_new(2);
		char *out;

		for (int i = 0; i < 2; i++) {
			sb_recv(s, i, 1 - i, 5, "thr.c", 21);
			s->ranks[i].progress = SNAP_PROGRESS_STABLE;
			s->ranks[i].threads = xcalloc(2,
						      sizeof(struct snap_thread));
			s->ranks[i].nthreads = 2;
			thread_in_recv(s, i, 0, 100 + i, 21);
			s->ranks[i].threads[0].frames[1].object =
				snap_str(s, "/app");
			thread_outside(s, i, 1, 200 + i, inner[k]);
		}
		out = render(s, &text);
		if (k == 0) {
			char *js = render(s, &json);

			cr_expect(strstr(js, "\"tid\": 200") &&
				  strstr(js, "\"keeps_rank_going\": true"),
				  "%s", js);
			free(js);
		}
		if (k == 0)
			cr_expect(strstr(out, "NO DEADLOCK") &&
				  strstr(out, "waiting, while another thread "
					      "runs the program's code") &&
				  strstr(out, "thread 200 runs at thr.c:9 in "
					      "worker"), "%s", out);
		else
			cr_expect(!strncmp(out, "DEADLOCK", 8), "%s: %s",
				  inner[k], out);
		free(out);
		snap_free(s);
	}
}

/* A thread the program put to sleep for a time wakes up by itself and
 * may yet send (not a deadlock), as a rank of one thread in sleep() is
 * running; one that joins the others or waits for a signal does not. */
Test(report, thread_sleeping_in_the_programs_code_keeps_the_rank_going)
{
	static const char *const waits[] = { "__GI___clock_nanosleep",
					     "usleep", "pthread_join",
					     "pause" };

	for (int k = 0; k < 5; k++) {
		struct snap *s = sb_new(2);
		char *out;

		for (int i = 0; i < 2; i++) {
			struct snap_thread *th;

			/* k 4: a sleeping thread at MPI_THREAD_FUNNELED,
			 * which may not call MPI while another waits in it. */
			s->ranks[i].thread_level = k == 4 ? SNAP_TL_FUNNELED
							  : SNAP_TL_MULTIPLE;

			sb_recv(s, i, 1 - i, 5, "thr.c", 21);
			s->ranks[i].progress = SNAP_PROGRESS_STABLE;
			s->ranks[i].threads = xcalloc(2,
						      sizeof(struct snap_thread));
			s->ranks[i].nthreads = 2;
			thread_in_recv(s, i, 0, 100 + i, 21);
			s->ranks[i].threads[0].frames[1].object =
				snap_str(s, "/app");
			th = &s->ranks[i].threads[1];
			th->tid = 200 + i;
			th->nframes = 3;
			th->frames = xcalloc(3, sizeof(*th->frames));
			th->frames[0].func = snap_str(s, waits[k % 4]);
			th->frames[0].object = snap_str(s, "/lib/libc.so.6");
			/* Only the name under test says it sleeps. */
			th->frames[1].func = snap_str(s, "do_wait");
			th->frames[1].object = snap_str(s, "/lib/libc.so.6");
			th->frames[2].func = snap_str(s, "main");
			th->frames[2].object = snap_str(s, "/app");
			th->frames[2].file = snap_str(s, "thr.c");
			th->frames[2].line = 30;
			th->mpi_frame = -1;
			th->user_frame = 2;
		}
		out = render(s, &text);
		if (k < 2) {
			char *js = render(s, &json);

			cr_expect(strstr(out, "NO DEADLOCK") &&
				  strstr(out, "thread 200 sleeps at thr.c:30 "
					      "in main"), "%s: %s", waits[k],
				  out);
			cr_expect(strstr(js, "\"keeps_rank_going\": true") &&
				  strstr(js, "\"sleeps\": true"), "%s", js);
			free(js);
		}
		else
			cr_expect(!strncmp(out, "DEADLOCK", 8), "%s: %s",
				  waits[k % 4], out);
		free(out);
		snap_free(s);
	}
}

/* --github on a wildcard receive says "any rank", as the text does, not
 * the member the graph goes on to; a rank stopped in an earlier look
 * that has since exited is no stopped rank. */
Test(report, github_any_source_and_an_exited_rank_once_stopped)
{
	struct snap *s = sb_new(3);
	char *got;

	sb_recv(s, 0, -1, 1, "any.c", 10);
	sb_recv(s, 1, 0, 1, "any.c", 20);
	sb_recv(s, 2, 0, 1, "any.c", 20);
	for (int r = 0; r < 3; r++)
		s->ranks[r].progress = SNAP_PROGRESS_STABLE;
	got = render(s, &github);
	cr_expect_not_null(strstr(got, "::rank 0 waits for any rank in "
				  "MPI_Recv"), "%s", got);
	free(got);
	snap_free(s);

	s = sb_ring(3);
	s->ranks[1].stopped_by = SIGSTOP;
	sb_state(s, 1, SNAP_RANK_GONE, "exited during collection");
	got = render(s, &text);
	cr_expect_null(strstr(got, "stopped"), "%s", got);
	free(got);
	got = render(s, &json);
	cr_expect_null(strstr(got, "stopped_by"), "%s", got);
	free(got);
	snap_free(s);
}

/* Singletons started by another MPI's launcher: each process is rank 0
 * of a world of one, which the report says. */
Test(report, processes_that_are_not_one_mpi_job_are_named)
{
	struct snap *s = sb_ring(3);
	char *got;

	got = render(s, &text);
	cr_expect_null(strstr(got, "not one MPI job"), "%s", got);
	free(got);
	s->comms[0].size = 1;
	got = render(s, &text);
	cr_expect_not_null(strstr(got, "MPI_COMM_WORLD has 1 rank, but the "
				  "launcher started 3 processes: they are not "
				  "one MPI job"), "%s", got);
	free(got);
	snap_free(s);
}

/* A rank running a user MPI_Op that MPI_Allreduce called: running, where,
 * and called back by what; the snapshot keeps it. */
Test(report, rank_in_a_callback_of_an_mpi_call_says_which)
{
	struct snap *s = sb_new(2), *back;
	struct snap_thread *th;
	char *got;

	sb_call(s, 0, "MPI_Allreduce", "op.c", 17);
	sb_call(s, 1, NULL, "op.c", 7);
	s->ranks[1].call_func = snap_str(s, "slow_sum");
	s->ranks[1].call_file = snap_str(s, "op.c");
	s->ranks[1].call_line = 7;
	s->ranks[1].threads = th = xcalloc(1, sizeof(*th));
	s->ranks[1].nthreads = 1;
	th->tid = 11;
	th->nframes = 1;
	th->frames = xcalloc(1, sizeof(*th->frames));
	th->frames[0].func = s->ranks[1].call_func;
	th->frames[0].file = s->ranks[1].call_file;
	th->frames[0].line = 7;
	th->mpi_frame = -1;
	th->user_frame = 0;
	th->called_back_by = snap_str(s, "MPI_Allreduce");
	back = sb_round_trip(s);
	cr_assert_not_null(back);
	got = render(back, &text);
	cr_expect_not_null(strstr(got, "rank 1: running (slow_sum at op.c:7, "
				  "called back by MPI_Allreduce)"), "%s", got);
	cr_expect(!strncmp(got, "NO DEADLOCK", 11), "%s", got);
	free(got);
	snap_free(back);
	snap_free(s);
}

/* Open MPI's DLL cuts the datatype's name to "MPI_": the text leaves the
 * piece out where it names the datatype whole, and quotes the rest; JSON
 * keeps every line the DLL gave. */
Test(report, the_dlls_cut_datatype_name_is_left_out_of_the_text)
{
	for (int named = 0; named < 2; named++) {
		struct snap *s = sb_ring(2);
		char *out;

		for (int r = 0; r < 2; r++) {
			struct snap_op *op = &s->ranks[r].ops[0];

			op->nextra = 3;
			op->extra[0] = snap_str(s, "Receive: 0x1000");
			op->extra[1] = snap_str(s, "Data: 4 instances of MPI datatype");
			op->extra[2] = snap_str(s, "MPI_");
			op->datatype = named ? snap_str(s, "MPI_INT") : NULL;
			op->count = 1;
		}
		out = render(s, &text);
		cr_expect(strstr(out, "message queue DLL: \"Receive: 0x1000\", "
				      "\"Data: 4 instances of MPI datatype\""),
			  "%s", out);
		cr_expect((strstr(out, "\"MPI_\"") == NULL) == (named == 1), "%s",
			  out);
		free(out);
		out = render(s, &json);
		cr_expect(strstr(out, "\"MPI_\""), "%s", out);
		free(out);
		snap_free(s);
	}
}

/* A service thread polls MPI_Iprobe while the main thread waits in a
 * receive ring: with nothing of the rank moved between the looks the
 * poll is as held as a probe (any rank's message would do), so the ring
 * is a deadlock when no rank goes on; a rank that moved is going on. */
Test(report, a_polling_service_thread_beside_a_blocked_one_is_held)
{
	for (int moved = 0; moved < 2; moved++) {
		struct snap *s = sb_new(2);
		char *out;

		for (int i = 0; i < 2; i++) {
			struct snap_thread *th;

			sb_recv(s, i, 1 - i, 5, "thr.c", 21);
			s->ranks[i].progress = moved && i ?
				SNAP_PROGRESS_CHANGED : SNAP_PROGRESS_STABLE;
			s->ranks[i].threads = xcalloc(2,
						      sizeof(struct snap_thread));
			s->ranks[i].nthreads = 2;
			thread_in_recv(s, i, 0, 100 + i, 21);
			thread_in_recv(s, i, 1, 200 + i, 9);
			th = &s->ranks[i].threads[1];
			th->mpi_call = snap_str(s, "MPI_Iprobe");
			th->frames[0].func = snap_str(s, "MPI_Iprobe");
		}
		out = render(s, &text);
		if (moved)
			cr_expect(!strncmp(out, "NO DEADLOCK", 11), "%s", out);
		else
			cr_expect(!strncmp(out, "DEADLOCK", 8) &&
				  strstr(out, "probe"), "%s", out);
		free(out);
		snap_free(s);
	}
}

/* Every "rank N" the text names is a rank of the job. */
static void assert_ranks_below(const char *got, int nranks)
{
	for (const char *p = got; (p = strstr(p, "rank ")); p += 5)
		if (p[5] >= '0' && p[5] <= '9')
			cr_assert_lt(atoi(p + 5), nranks, "the report names "
				     "a rank past the job:\n%s", got);
}

/* A rank that waits on an unread rank both directly (a thread's
 * receive) and through a collective whose missing member is that rank:
 * its chain is one of the two ways, whole.  Found by the fuzzer: the
 * path was taken from the last such edge and its length from the
 * first, and the chain went on from the collective's node ("rank 4" of
 * a 4-rank job); the unread rank was "not in MPI". */
Test(report, unread_peer_reached_two_ways_names_ranks_of_the_job)
{
	static const char snapshot[] =
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"time\":1,\"starter_pid\":1,\"looks\":2,"
		"\"interval_ms\":1000,\"nranks\":4,\"ncomms\":1}\n"
		"{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\","
		"\"size\":4,\"group\":\"0-3\"}\n"
		"{\"rank\":0,\"members\":[[0,0]]}\n"
		"{\"rank\":1,\"members\":[[0,1]]}\n"
		"{\"rank\":2,\"progress\":\"stable\","
		"\"thread_level\":\"multiple\",\"call\":\"MPI_Comm_dup\","
		"\"site\":{\"func\":\"main\",\"file\":\"a.c\",\"line\":34},"
		"\"members\":[[0,2]],\"ops\":[{\"kind\":\"recv\","
		"\"comm\":0,\"peer\":3,\"peer_global\":3,\"tag\":0,"
		"\"length\":12}],\"threads\":["
		"{\"tid\":200,\"call\":\"MPI_Comm_dup\",\"frames\":["
		"{\"func\":\"PMPI_Comm_dup\",\"object\":\"libmpi.so.40\"},"
		"{\"func\":\"main\",\"object\":\"/app\",\"file\":\"a.c\","
		"\"line\":34}],\"mpi_frame\":0,\"user_frame\":1},"
		"{\"tid\":201,\"call\":\"MPI_Recv\",\"frames\":["
		"{\"func\":\"PMPI_Recv\",\"object\":\"libmpi.so.40\"},"
		"{\"func\":\"worker\",\"object\":\"/app\",\"file\":\"a.c\","
		"\"line\":15}],\"mpi_frame\":0,\"user_frame\":1}]}\n"
		"{\"rank\":3,\"state\":\"unread\",\"reason\":\"ptrace: "
		"Operation not permitted\",\"members\":[[0,3]]}\n";
	struct snap *s = sb_read_text(snapshot);
	char *got;

	got = render(s, &text);
	cr_assert(strstr(got, "unread peer 1: rank 2\n"), "%s", got);
	cr_assert(strstr(got, "rank 3 (not read)"), "%s", got);
	cr_assert_null(strstr(got, "not in MPI) (not read)"), "%s", got);
	assert_ranks_below(got, 4);
	free(got);
	snap_free(s);
}

/* A rank whose wait shows no operation (MPI_Win_lock: RMA is not in the
 * queues) with a rank stuck behind it, while an unrelated rank computes:
 * the guess that any rank going on releases it could hide a deadlock,
 * so the verdict is INCOMPLETE, never a clean bill (QA: was NO DEADLOCK,
 * "1 rank going on, 2 ranks waiting on it").  Alone, with nobody behind
 * it, such a rank is no sign of a deadlock: NO DEADLOCK. */
Test(report, a_guessed_wait_with_a_rank_behind_it_is_no_clean_bill)
{
	struct snap *s = sb_new(3);
	char *got;

	sb_call(s, 0, "MPI_Win_lock", "lock.c", 18);
	sb_recv(s, 1, 0, 5, "lock.c", 25);
	got = render(s, &text);
	cr_expect(!strncmp(got, "INCOMPLETE: 2 of 3 ranks may be deadlocked",
			   42), "%s", got);
	free(got);
	snap_free(s);

	s = sb_new(3);
	sb_call(s, 0, "MPI_Win_lock", "lock.c", 18);
	got = render(s, &text);
	cr_expect(!strncmp(got, "NO DEADLOCK", 11), "%s", got);
	free(got);
	snap_free(s);
}

/* MPI_Recv with two candidate receives (attach without libmdtrack.so: an
 * older MPI_Irecv to a computing rank, the blocking receive from a rank
 * that waits for it): which one blocks is not known, and the reading that
 * either releases it hid a 2-rank cycle (QA: NO DEADLOCK, exit 0). */
Test(report, several_candidate_receives_with_a_rank_behind_are_no_clean_bill)
{
	struct snap *s = sb_new(3);
	char *got;

	sb_recv(s, 0, 1, 1, "ir.c", 14);
	sb_op(s, 0, SNAP_OP_RECV, 0, 2, 9, 4);
	sb_recv(s, 1, 0, 1, "ir.c", 20);
	got = render(s, &text);
	cr_expect(!strncmp(got, "INCOMPLETE: ", 12), "%s", got);
	free(got);
	snap_free(s);
}

/* What a thread of the program outside MPI is doing, innermost first:
 * a timed or input wait (a time-out wakes it), computing in a C library
 * function or in a library of the program's keeps the rank going; an
 * untimed wait for another thread, or a helper thread of a library with
 * no frame of the program, does not (QA: a worker in
 * pthread_cond_timedwait, poll, memcpy or its own library made a healthy
 * job a DEADLOCK, and `run` ended it). */
Test(report, thread_of_the_program_that_waits_with_a_time_out_or_computes)
{
	static const struct {
		const char *func, *object, *caller;
		const char *says;	/* NULL: DEADLOCK */
	} c[] = {
		{ "___pthread_cond_timedwait64", "/lib/libc.so.6", "/app",
		  "sleeps" },
		{ "__GI___poll", "/lib/libc.so.6", "/app", "sleeps" },
		{ "epoll_wait", "/lib/libc.so.6", "/app", "sleeps" },
		{ "__memmove_avx_unaligned_erms", "/lib/libc.so.6", "/app",
		  "runs" },
		{ "work_step", "/usr/lib/libwork.so", "/app", "runs" },
		{ "___pthread_cond_wait", "/lib/libc.so.6", "/app", NULL },
		{ "__lll_lock_wait", "/lib/libc.so.6", "/app", NULL },
		{ "epoll_wait", "/lib/libc.so.6", "/usr/lib/libucs.so.0",
		  NULL },
		/* An OpenMP worker at a barrier: main._omp_fn.0 below. */
		{ "gomp_team_barrier_wait_end", "/lib/libgomp.so.1", "/app",
		  NULL },
		/* A function of the program named like libc's is not. */
		{ "memo_wait", "/lib/libfoo.so", "/lib/libc.so.6", NULL },
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct snap *s = sb_new(2);
		char *out, want[64];

		for (int i = 0; i < 2; i++) {
			struct snap_thread *th;
			bool lib = strcmp(c[k].object, "/lib/libc.so.6") != 0;

			s->ranks[i].thread_level = SNAP_TL_MULTIPLE;
			s->ranks[i].exe = snap_str(s, "/app");
			sb_recv(s, i, 1 - i, 5, "thr.c", 21);
			s->ranks[i].progress = SNAP_PROGRESS_STABLE;
			s->ranks[i].threads =
				xcalloc(2, sizeof(struct snap_thread));
			s->ranks[i].nthreads = 2;
			thread_in_recv(s, i, 0, 100 + i, 21);
			s->ranks[i].threads[0].frames[1].object =
				snap_str(s, "/app");
			th = &s->ranks[i].threads[1];
			th->tid = 200 + i;
			th->nframes = 3;
			th->frames = xcalloc(3, sizeof(*th->frames));
			th->frames[0].func = snap_str(s, c[k].func);
			th->frames[0].object = snap_str(s, c[k].object);
			th->frames[1].func = snap_str(s, "worker");
			th->frames[1].object = snap_str(s, c[k].caller);
			th->frames[1].file = snap_str(s, "thr.c");
			th->frames[1].line = 30;
			th->frames[2].func = snap_str(s, "start_thread");
			th->frames[2].object = snap_str(s, "/lib/libc.so.6");
			th->mpi_frame = -1;
			th->user_frame = lib ? 0 : 1;
		}
		out = render(s, &text);
		snprintf(want, sizeof(want), "thread 200 %s at thr.c:30",
			 c[k].says ? c[k].says : "");
		if (!strcmp(c[k].object, "/usr/lib/libwork.so"))
			snprintf(want, sizeof(want), "thread 200 runs");
		if (c[k].says)
			cr_expect(!strncmp(out, "NO DEADLOCK", 11) &&
				  strstr(out, want), "%s in %s: %s", c[k].func,
				  c[k].caller, out);
		else
			cr_expect(!strncmp(out, "DEADLOCK", 8), "%s in %s: %s",
				  c[k].func, c[k].caller, out);
		free(out);
		snap_free(s);
	}
}

/* A rank spinning in MPI_Test (its pending receive stable between the
 * looks) with a second thread polling MPI_Iprobe: each thread's call is
 * counted once (found by the fuzzer: the spinning thread was counted by
 * both passes of app_calls, past the end of the array of calls). */
Test(report, spinning_thread_beside_a_polling_one_is_counted_once)
{
	static const char snapshot[] =
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"time\":1,\"starter_pid\":1,\"looks\":2,"
		"\"interval_ms\":1000,\"nranks\":2,\"ncomms\":1}\n"
		"{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\","
		"\"size\":2,\"group\":\"0-1\"}\n"
		"{\"rank\":0,\"progress\":\"stable\",\"thread_level\":"
		"\"multiple\",\"call\":\"MPI_Test\",\"members\":[[0,0]],"
		"\"ops\":[{\"kind\":\"recv\",\"comm\":0,\"peer\":1,"
		"\"peer_global\":1,\"tag\":0,\"length\":4}],\"threads\":["
		"{\"tid\":1,\"call\":\"MPI_Test\",\"frames\":[{\"func\":"
		"\"PMPI_Test\",\"object\":\"libmpi.so.40\"},{\"func\":\"main\","
		"\"object\":\"/app\",\"file\":\"t.c\",\"line\":5}],"
		"\"mpi_frame\":0,\"user_frame\":1},"
		"{\"tid\":2,\"call\":\"MPI_Iprobe\",\"frames\":[{\"func\":"
		"\"PMPI_Iprobe\",\"object\":\"libmpi.so.40\"},{\"func\":"
		"\"service\",\"object\":\"/app\",\"file\":\"t.c\",\"line\":9}],"
		"\"mpi_frame\":0,\"user_frame\":1}]}\n"
		"{\"rank\":1,\"progress\":\"stable\",\"call\":\"MPI_Recv\","
		"\"members\":[[0,1]],\"ops\":[{\"kind\":\"recv\",\"comm\":0,"
		"\"peer\":0,\"peer_global\":0,\"tag\":0,\"length\":4}]}\n";
	struct snap *s = sb_read_text(snapshot);
	char *got;

	got = render(s, &text);
	cr_expect(!strncmp(got, "DEADLOCK", 8), "%s", got);
	free(got);
	snap_free(s);
}

/* A rank past MPI_Finalize (async finalize) that computes on: it sends
 * nothing more, so the ranks receiving from it are deadlocked on it,
 * as on a rank that exited; the report says it finalized and where it
 * runs. */
static struct snap *finalized_runner(void)
{
	struct snap *s = sb_new(3);

	sb_recv(s, 0, 2, 0, "fin.c", 17);
	sb_recv(s, 1, 2, 0, "fin.c", 17);
	s->ranks[2].finalized = true;
	s->ranks[2].call_func = snap_str(s, "post_process");
	s->ranks[2].call_file = snap_str(s, "fin.c");
	s->ranks[2].call_line = 12;
	return s;
}

Test(report, ranks_waiting_on_a_finalized_rank_are_deadlocked)
{
	struct snap *s = finalized_runner();

	compare(s, &text, "finalized_peer.txt");
	compare(s, &json, "finalized_peer.json");
	snap_free(s);
}

/* One rank exited, another finalized, each waited on: the headline
 * names both. */
Test(report, exited_and_finalized_peers_are_both_named)
{
	struct snap *s = sb_new(4);
	char *out;

	sb_state(s, 0, SNAP_RANK_GONE, "exited before collection");
	sb_recv(s, 1, 0, 0, "fin.c", 17);
	s->ranks[2].finalized = true;
	sb_recv(s, 3, 2, 0, "fin.c", 17);
	out = render(s, &text);
	cr_expect(!strncmp(out, "DEADLOCK: 2 of 4 ranks are blocked on exited "
			   "or finalized ranks", 60), "%s", out);
	free(out);
	snap_free(s);
}

/* Nobody waits on the finalized rank: no deadlock, and the rank is
 * still named as finalized. */
Test(report, a_finalized_rank_nobody_waits_on_is_no_deadlock)
{
	struct snap *s = sb_new(2);
	struct anl_result *r;
	char *out;

	s->ranks[0].finalized = true;
	s->ranks[1].call_func = snap_str(s, "compute");
	r = anl_analyze(s);
	cr_expect_eq(anl_verdict(r), ANL_NO_DEADLOCK);
	anl_result_free(r);
	out = render(s, &text);
	cr_expect(strstr(out, "  rank 0: finalized (MPI_Finalize returned)"),
		  "%s", out);
	free(out);
	snap_free(s);
}
