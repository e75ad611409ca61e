/*
 * report_unexpected_test.c - a receive explained by the message that sits
 * unmatched in the waiting rank's unexpected queue (tag or communicator
 * mismatch), and full datatype names, against
 * tests/expected/reports/unexpected_*.  To regenerate after a deliberate
 * change, from the repository root:
 *   MD_REGEN=1 build/md-tests --filter "report_unexpected/ *" (no space)
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/anl_int.h"
#include "analyze.h"
#include "md.h"
#include "support/mpijob.h"
#include "support/snapbuild.h"

#define EXPECTED_DIR "tests/expected/reports/"

static char *render(const struct snap *s, enum anl_format fmt)
{
	struct anl_opts o = { .format = fmt };

	return sb_render(s, &o);
}

static void compare(const struct snap *s, enum anl_format fmt,
		    const char *name)
{
	char path[256], *got = render(s, fmt), *want;
	FILE *f;

	snprintf(path, sizeof(path), EXPECTED_DIR "%s", name);
	if (getenv("MD_REGEN")) {
		f = fopen(path, "w");
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

/* An arrived, unmatched message on rank's queue, as ob1's walk gives it. */
static struct snap_op *unexpected(struct snap *s, int rank, int comm,
				  int from_local, int tag)
{
	struct snap_op *o = sb_op(s, rank, SNAP_OP_UNEXPECTED, comm,
				  from_local, tag, 0);

	o->source = SNAP_SRC_OB1;
	o->any_tag = false;
	o->req_type = snap_str(s, "unexpected");
	o->nextra = 0;
	o->actual_local = from_local;
	o->actual_tag = tag;
	s->ranks[rank].unexpected_available = true;
	return o;
}

Test(report_unexpected, tag_mismatch_names_the_unmatched_message)
{
	struct snap *s = sb_new(2);

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	sb_recv(s, 1, 0, 2, "tag.c", 22);
	unexpected(s, 1, 0, 0, 1);
	compare(s, ANL_FORMAT_TEXT, "unexpected_tag.txt");
	compare(s, ANL_FORMAT_JSON, "unexpected_tag.json");
	snap_free(s);
}

/* Several unmatched messages: the first three after the first are named
 * with their senders and tags, the rest counted. */
Test(report_unexpected, further_unmatched_messages_are_named_then_counted)
{
	struct snap *s = sb_new(2);
	struct anl_result *r;
	char *text;

	sb_call(s, 0, "MPI_Finalize", "tag.c", 30);
	sb_recv(s, 1, 0, 2, "tag.c", 22);
	for (int tag = 3; tag < 8; tag++)
		unexpected(s, 1, 0, 0, tag);
	r = anl_analyze(s);
	text = anl_unexpected_text(r, 1, 0);
	cr_assert_not_null(text);
	cr_expect_not_null(strstr(text, "a message from rank 0 with tag 3 "
					"arrived and is unmatched; also "
					"unmatched: rank 0's with tag 4, rank "
					"0's with tag 5, rank 0's with tag 6 "
					"and 1 more message"), "%s", text);
	free(text);
	anl_result_free(r);
	snap_free(s);
}

Test(report_unexpected, communicator_mismatch_names_both_communicators)
{
	struct snap *s = sb_new(2);
	int g[2] = { 0, 1 };
	int dup = sb_comm(s, 3, "dup", 2, g);

	sb_call(s, 0, "MPI_Finalize", "comm.c", 30);
	sb_call(s, 1, "MPI_Recv", "comm.c", 22);
	sb_op(s, 1, SNAP_OP_RECV, dup, 0, 2, 4);
	unexpected(s, 1, 0, 0, 2);
	compare(s, ANL_FORMAT_TEXT, "unexpected_comm.txt");
	snap_free(s);
}

Test(report_unexpected, sender_still_in_its_send_gives_where_it_was_sent)
{
	struct snap *s = sb_new(2);
	char *got;

	sb_send(s, 0, 1, 1, "y.c", 9);
	sb_recv(s, 1, 0, 2, "x.c", 12);
	unexpected(s, 1, 0, 0, 1)->length = 1 << 20;
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(got, "rank 1 waits for tag 2 from rank 0 (MPI_Recv "
			      "at x.c:12); a message from rank 0 with tag 1 "
			      "arrived and is unmatched (sent at y.c:9)"),
		  "%s", got);
	free(got);
	snap_free(s);
}

Test(report_unexpected, messages_from_others_or_of_collectives_explain_nothing)
{
	struct snap *s = sb_new(3);
	char *got;

	sb_call(s, 0, "MPI_Finalize", "t.c", 30);
	sb_call(s, 2, "MPI_Finalize", "t.c", 30);
	sb_recv(s, 1, 0, 2, "t.c", 22);
	unexpected(s, 1, 0, 2, 1);	/* from rank 2 */
	unexpected(s, 1, 0, 0, -12);	/* a collective's, from rank 0 */
	unexpected(s, 1, 0, 0, 2)->comm = 0;	/* would match: a race */
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(!strstr(got, "unmatched"), "%s", got);
	cr_expect(!strstr(got, "unexpected queue, which"),
		  "the queue was read, yet called hidden:\n%s", got);
	free(got);
	snap_free(s);
}

/* Rank 1 receives tag 2 from rank 0; rank 2's message with tag 2 sits
 * unmatched: the receive may name the wrong source, and the report
 * shows that message. */
Test(report_unexpected, message_of_another_source_with_the_tag_is_named)
{
	struct snap *s = sb_new(3);
	char *got;

	sb_call(s, 0, "MPI_Finalize", "t.c", 30);
	sb_call(s, 2, "MPI_Finalize", "t.c", 30);
	sb_recv(s, 1, 0, 2, "t.c", 22);
	unexpected(s, 1, 0, 2, 2);
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(got, "rank 1 waits for tag 2 from rank 0 (MPI_Recv at "
			      "t.c:22); a message from rank 2 with tag 2 "
			      "arrived and is unmatched"), "%s", got);
	free(got);
	snap_free(s);
}

/* The sender polls its MPI_Issend with MPI_Test elsewhere: where it
 * stands is not where it sent. */
Test(report_unexpected, sender_that_is_not_in_a_send_gives_no_sent_at)
{
	struct snap *s = sb_new(2);
	char *got;

	sb_call(s, 0, "MPI_Test", "t.c", 20);
	sb_op(s, 0, SNAP_OP_SEND, 0, 1, 1, 4);
	sb_recv(s, 1, 0, 2, "t.c", 27);
	unexpected(s, 1, 0, 0, 1);
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(got, "a message from rank 0 with tag 1 arrived and "
			      "is unmatched"), "%s", got);
	cr_expect(!strstr(got, "sent at"), "%s", got);
	free(got);
	snap_free(s);
}

Test(report_unexpected, full_datatype_name_follows_the_bytes)
{
	struct snap *s = sb_new(2);
	struct snap_op *o;
	char *got;

	sb_call(s, 0, "MPI_Finalize", "d.c", 30);
	sb_recv(s, 1, 0, 2, "d.c", 22);
	o = &s->ranks[1].ops[0];
	o->length = 64;
	o->datatype = snap_str(s, "MPI_DOUBLE");
	o->count = 8;
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(strstr(got, "64 bytes (8 x MPI_DOUBLE)"), "%s", got);
	free(got);
	got = render(s, ANL_FORMAT_JSON);
	cr_expect(strstr(got, "\"datatype\": \"MPI_DOUBLE\"") ||
		  strstr(got, "\"datatype\":\"MPI_DOUBLE\""), "%s", got);
	free(got);
	snap_free(s);
}

Test(report_unexpected, internal_request_of_a_collective_is_no_point_to_point_wait)
{
	struct snap *s = sb_new(2);
	struct snap_op *o;
	char *got;

	sb_call(s, 0, "MPI_Finalize", "i.c", 30);
	sb_recv(s, 1, 0, 2, "i.c", 22);
	/* A nonblocking collective's receive, matched and moving: it must
	 * not make rank 1's MPI_Recv look as if data were on its way. */
	o = sb_op(s, 1, SNAP_OP_RECV, 0, 0, -12, 64);
	o->source = SNAP_SRC_OB1;
	o->any_tag = false;
	o->status = SNAP_ST_MATCHED;
	o->actual_global = 0;
	o->nextra = 0;
	got = render(s, ANL_FORMAT_TEXT);
	cr_expect(!strncmp(got, "DEADLOCK", 8), "%s", got);
	free(got);
	snap_free(s);
}
