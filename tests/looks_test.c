/*
 * looks_test.c - lk_compare over two looks of one rank, built by hand:
 * a spin loop caught between two MPI_Test calls, a loop that computes
 * between its tests, a rank that left the loop, requests that moved.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/looks.h"

#define OUTER 3

/* A rank with one application thread: innermost frames inner[], then
 * the user function at pc fpc, then OUTER frames out to _start at the
 * same return addresses (base + k) in every look.  call: the MPI call
 * (its frame is inner[0]) or NULL. */
static void look(struct snap_rank *r, const char *call, const char *const *inner,
		 int ninner, const char *user, uint64_t fpc, uint64_t base)
{
	static const char *const outer[OUTER] = { "__libc_start_call_main",
						  "__libc_start_main", "_start" };
	struct snap_thread *th = calloc(1, sizeof(*th));
	int n = ninner + 1 + OUTER;

	th->nframes = n;
	th->frames = calloc((size_t)n, sizeof(*th->frames));
	for (int i = 0; i < ninner; i++) {
		th->frames[i].func = inner[i];
		th->frames[i].pc = 0x7f0000001000 + (uint64_t)i * 0x40;
	}
	th->frames[ninner] = (struct snap_frame){ fpc, user, "/job/a.out",
						  "spin.c", 17, 0 };
	for (int k = 0; k < OUTER; k++)
		th->frames[ninner + 1 + k] = (struct snap_frame){
			base + (uint64_t)k, outer[k], "/lib/libc.so.6", NULL, 0, 0 };
	th->mpi_call = call;
	th->mpi_frame = call ? 0 : -1;
	th->user_frame = call ? ninner : 0;
	r->nthreads = 1;
	r->threads = th;
	r->mpi_call = call;
	r->call_func = user;
	r->call_file = "spin.c";
	r->call_line = call ? 17 : 16;
}

static void one_recv(struct snap_rank *r, uint64_t seq)
{
	r->nops = 1;
	r->ops = calloc(1, sizeof(*r->ops));
	r->ops[0] = (struct snap_op){ .kind = SNAP_OP_RECV, .peer_local = 1,
				      .peer_global = 1, .tag = 2, .length = 4,
				      .request = 0x5000, .sequence = seq };
}

static const char *const in_test[] = { "PMPI_Test" };
static const char *const in_spin[] = { "compute_step" };

Test(looks, spin_loop_caught_between_two_tests_is_polling)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, NULL, 0, "main", 0x401220, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_POLL_KEEP);
	cr_expect_eq(lk_compare(&b, &a), LK_POLL_NEW);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, loop_that_computes_between_tests_is_polling)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, in_spin, 1, "main", 0x401228, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_POLL_KEEP);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, same_test_at_same_site_is_same)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, new_request_between_looks_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, NULL, 0, "main", 0x401220, 0x7f00000a000);
	one_recv(&b, 8);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, other_invocation_of_the_function_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	/* The same function called from elsewhere: other return addresses
	 * on the way out. */
	look(&a, "MPI_Test", in_test, 1, "poll_once", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, NULL, 0, "poll_once", 0x401220, 0x7f00000b000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, other_function_outside_mpi_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, NULL, 0, "solver", 0x401600, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, blocking_call_then_outside_mpi_is_changed)
{
	static const char *const in_wait[] = { "PMPI_Wait" };
	struct snap_rank a = { 0 }, b = { 0 };

	/* Only a polling call returns to its loop: a rank that left
	 * MPI_Wait has moved. */
	look(&a, "MPI_Wait", in_wait, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, NULL, NULL, 0, "main", 0x401220, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

Test(looks, another_mpi_call_between_tests_is_changed)
{
	static const char *const in_send[] = { "PMPI_Send" };
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	look(&b, "MPI_Send", in_send, 1, "main", 0x401240, 0x7f00000a000);
	one_recv(&b, 7);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* libmdtrack.so stamps every collective call: a long collective repeated
 * at one site (the same call, site and, without ob1, no operation) that
 * was called again between the looks has moved. */
Test(looks, collective_called_again_between_looks_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };
	static const char *const in_ar[] = { "PMPI_Allreduce" };

	look(&a, "MPI_Allreduce", in_ar, 1, "main", 0x401234, 0x7f00000a000);
	look(&b, "MPI_Allreduce", in_ar, 1, "main", 0x401234, 0x7f00000a000);
	a.ntrack = b.ntrack = 1;
	a.track = calloc(1, sizeof(*a.track));
	b.track = calloc(1, sizeof(*b.track));
	a.track[0] = (struct snap_track_rec){ .kind = SNAP_TRACK_COLL,
					      .call = "MPI_Allreduce", .seq = 41,
					      .ncalls = 41 };
	b.track[0] = a.track[0];
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	b.track[0].seq = 57;
	b.track[0].ncalls = 57;
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

static const char *const in_allreduce[] = { "PMPI_Allreduce" };

/* MPICH: a long collective repeated at one site shows no operation (its
 * internal requests are not in the queues the DLL walks); the library's
 * count of completed requests tells it moved. */
Test(looks, same_collective_with_more_completions_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Allreduce", in_allreduce, 1, "main", 0x401234,
	     0x7f00000a000);
	look(&b, "MPI_Allreduce", in_allreduce, 1, "main", 0x401234,
	     0x7f00000a000);
	a.has_completions = b.has_completions = true;
	a.completions = 41;
	b.completions = 41;
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	b.completions = 97;
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	/* Read in one look only: no evidence either way. */
	a.has_completions = false;
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* An MPI_Iprobe loop: its request lives only inside the call, so one
 * look has it (ob1q_probe.c) and the next, stopped between two calls or
 * early in one, does not. */
static void add_iprobe(struct snap_rank *r)
{
	r->ops = realloc(r->ops, (size_t)(r->nops + 1) * sizeof(*r->ops));
	r->ops[r->nops++] = (struct snap_op){ .kind = SNAP_OP_RECV,
					      .req_type = "iprobe",
					      .peer_local = 1, .tag = 9,
					      .request = 0x7ffd0000 };
}

static const char *const in_iprobe[] = { "PMPI_Iprobe" };

Test(looks, iprobe_request_in_one_look_only_is_not_a_change)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Iprobe", in_iprobe, 1, "main", 0x401234, 0x7f00000a000);
	add_iprobe(&a);
	look(&b, "MPI_Iprobe", in_iprobe, 1, "main", 0x401234, 0x7f00000a000);
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	cr_expect_eq(lk_compare(&b, &a), LK_SAME);
	/* The newer look keeps the probe the loop repeats. */
	lk_keep_probes(&b, &a);
	cr_assert_eq(b.nops, 1);
	cr_expect_str_eq(b.ops[0].req_type, "iprobe");
	cr_expect_eq(b.ops[0].tag, 9);
	/* A look that has its own probe keeps it alone. */
	lk_keep_probes(&b, &a);
	cr_expect_eq(b.nops, 1);
	/* Between two calls, outside MPI: still the polling loop. */
	snap_rank_free_data(&b);
	memset(&b, 0, sizeof(b));
	look(&b, NULL, NULL, 0, "main", 0x401220, 0x7f00000a000);
	cr_expect_eq(lk_compare(&a, &b), LK_POLL_KEEP);
	/* A real receive that appears is a change. */
	one_recv(&b, 3);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* A rank in MPI_Iprobe whose probe request no look caught is looked at
 * again (collect.c); one with its probe, outside ob1, or in another call
 * is not. */
Test(looks, probe_call_without_its_request_is_unseen)
{
	struct snap_rank r = { 0 };

	look(&r, "MPI_Iprobe", in_iprobe, 1, "main", 0x401234, 0x7f00000a000);
	r.ob1 = true;
	cr_expect(lk_probe_unseen(&r));
	r.ob1 = false;
	cr_expect_not(lk_probe_unseen(&r), "the DLL alone shows no probes");
	r.ob1 = true;
	add_iprobe(&r);
	cr_expect_not(lk_probe_unseen(&r));
	snap_rank_free_data(&r);
	memset(&r, 0, sizeof(r));
	look(&r, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	r.ob1 = true;
	cr_expect_not(lk_probe_unseen(&r));
	snap_rank_free_data(&r);
}

/* libmdtrack.so's count of polling calls: a loop that sleeps between its
 * tests is found in usleep in every look, never in MPI_Test. */
static void add_poll(struct snap_rank *r, uint64_t polls, const char *func)
{
	r->track = realloc(r->track, (size_t)(r->ntrack + 1) *
					     sizeof(*r->track));
	r->track[r->ntrack++] = (struct snap_track_rec){
		.kind = SNAP_TRACK_POLL, .call = "MPI_Test", .seq = polls,
		.func = func, .file = "spin.c", .line = 20 };
}

static const char *const in_sleep[] = { "__clock_nanosleep", "usleep" };

Test(looks, sleeping_poll_loop_whose_tests_moved_is_polling)
{
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, NULL, in_sleep, 2, "main", 0x401250, 0x7f00000a000);
	one_recv(&a, 7);
	add_poll(&a, 1400, "main");
	look(&b, NULL, in_sleep, 2, "main", 0x401250, 0x7f00000a000);
	one_recv(&b, 7);
	add_poll(&b, 2311, "main");
	cr_expect_eq(lk_compare(&a, &b), LK_POLL_SLEEP);
	lk_poll_site(&b);
	cr_expect_str_eq(b.mpi_call, "MPI_Test");
	cr_expect_eq(b.call_line, 20);
	/* A third look compares with the second, now shown in MPI_Test: its
	 * threads still say outside MPI. */
	struct snap_rank c = { 0 };

	look(&c, NULL, in_sleep, 2, "main", 0x401250, 0x7f00000a000);
	one_recv(&c, 7);
	add_poll(&c, 3200, "main");
	cr_expect_eq(lk_compare(&b, &c), LK_POLL_SLEEP);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
	snap_rank_free_data(&c);
}

Test(looks, sleeping_rank_is_not_polling_without_moved_tests_or_requests)
{
	struct snap_rank a = { 0 }, b = { 0 };

	/* No test between the looks: it sleeps, no more is known. */
	look(&a, NULL, in_sleep, 2, "main", 0x401250, 0x7f00000a000);
	one_recv(&a, 7);
	add_poll(&a, 1400, "main");
	look(&b, NULL, in_sleep, 2, "main", 0x401250, 0x7f00000a000);
	one_recv(&b, 7);
	add_poll(&b, 1400, "main");
	cr_expect_neq(lk_compare(&a, &b), LK_POLL_SLEEP);
	/* Tests moved, but the function that made them is not on the stack
	 * (the loop returned; it sleeps elsewhere). */
	b.track[0].seq = 2000;
	b.track[0].func = "exchange";
	cr_expect_neq(lk_compare(&a, &b), LK_POLL_SLEEP);
	/* Tests moved, but nothing is pending: MPI_Iprobe in a loop without
	 * a request says nothing of what it waits for. */
	b.track[0].func = "main";
	free(b.ops);
	b.ops = NULL;
	b.nops = 0;
	free(a.ops);
	a.ops = NULL;
	a.nops = 0;
	cr_expect_neq(lk_compare(&a, &b), LK_POLL_SLEEP);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* The unwinder lost the thread in one look (no MPI call, no user frame):
 * with the same operations that look is no evidence of a move. */
Test(looks, look_without_any_site_is_no_evidence_of_a_move)
{
	static const char *const in_recv[] = { "PMPI_Recv" };
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Recv", in_recv, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	b.nthreads = 1;
	b.threads = calloc(1, sizeof(*b.threads));
	b.threads[0].mpi_frame = b.threads[0].user_frame = -1;
	one_recv(&b, 7);
	cr_expect(lk_no_site(&b));
	cr_expect_eq(lk_compare(&a, &b), LK_SAME_KEEP);
	cr_expect_eq(lk_compare(&b, &a), LK_SAME);
	/* Not when the operations moved. */
	b.ops[0].sequence = 8;
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* A look whose queues could not be read (its memory reads failed) shows
 * no operations and no libmdtrack.so records: that is no movement, either
 * way round, while the call and site are the same (was: LK_CHANGED, and
 * a rank deadlocked in MPI_Recv read as going on: NO DEADLOCK). */
Test(looks, look_whose_queues_were_not_read_is_no_movement)
{
	static const char *const in_recv[] = { "PMPI_Recv" };
	struct snap_rank a = { 0 }, b = { 0 };

	look(&a, "MPI_Recv", in_recv, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(&a, 7);
	a.tracked = true;
	a.ntrack = 1;
	a.track = calloc(1, sizeof(*a.track));
	a.track[0] = (struct snap_track_rec){ .kind = SNAP_TRACK_COLL,
					      .seq = 3 };
	look(&b, "MPI_Recv", in_recv, 1, "main", 0x401234, 0x7f00000a000);
	b.queues = SNAP_QUEUES_NONE;
	b.queues_reason = "reading its memory failed";
	cr_expect_eq(lk_compare(&a, &b), LK_SAME);
	cr_expect_eq(lk_compare(&b, &a), LK_SAME);
	/* Both read: a lost operation is movement. */
	b.queues = SNAP_QUEUES_OK;
	b.tracked = true;
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* A loop of MPI_Irecv, MPI_Test for a while, MPI_Cancel: each round
 * posts a new request for the same message.  Caught in MPI_Test once and
 * in the loop's MPI_Wtime the next time, with the library's count of
 * moved messages the same, it went round its loop and nothing came. */
static void reposted(struct snap_rank *a, struct snap_rank *b,
		     uint64_t count_a, uint64_t count_b, bool counted)
{
	static const char *const in_wtime[] = { "PMPI_Wtime" };

	look(a, "MPI_Test", in_test, 1, "main", 0x401234, 0x7f00000a000);
	one_recv(a, 7);
	look(b, "MPI_Wtime", in_wtime, 1, "main", 0x401228, 0x7f00000a000);
	one_recv(b, 8);
	b->ops[0].request = 0x5200;
	a->has_completions = b->has_completions = counted;
	a->completions = count_a;
	b->completions = count_b;
}

Test(looks, receive_posted_again_while_no_message_moved_is_polling)
{
	struct snap_rank a = { 0 }, b = { 0 };

	reposted(&a, &b, 40, 40, true);
	cr_expect_eq(lk_compare(&a, &b), LK_POLL_KEEP);
	cr_expect_eq(lk_compare(&b, &a), LK_POLL_NEW);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* A message moved: the receive completed and the next was posted. */
Test(looks, receive_posted_again_after_a_message_moved_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	reposted(&a, &b, 40, 41, true);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* Without the library's count the two cannot be told apart: changed. */
Test(looks, receive_posted_again_without_a_count_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	reposted(&a, &b, 0, 0, false);
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}

/* Another receive (another tag) is another operation, count or not. */
Test(looks, receive_of_another_tag_is_changed)
{
	struct snap_rank a = { 0 }, b = { 0 };

	reposted(&a, &b, 40, 40, true);
	b.ops[0].tag = 3;
	cr_expect_eq(lk_compare(&a, &b), LK_CHANGED);
	snap_rank_free_data(&a);
	snap_rank_free_data(&b);
}
