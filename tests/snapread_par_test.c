/*
 * snapread_par_test.c - the snapshot reader with its rank lines cut
 * between threads (snapshot/snapread_par.c) must give what one thread
 * gives: the same snapshot, equal strings pointer-equal, and on a bad
 * file the same one error line (the first fault in file order).  Small
 * inputs are cut into many parts by asking for a split of a few bytes.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../snapshot/snapjson.h"
#include "md.h"
#include "snap.h"
#include "support/snapbuild.h"

static char *to_text(const struct snap *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	return buf;
}

/* Read text with threads threads cut every split bytes. */
static int read_text(const char *text, int threads, size_t split,
		     struct snap **out)
{
	return snaprd_read_buf(text, strlen(text), "t.jsonl",
			       (long long)strlen(text), threads, split, false,
			       out);
}

/* A job of n ranks with hosts, calls and ops that vary from rank to
 * rank, a sub-communicator and notes. */
static struct snap *varied(int n)
{
	struct snap *s = sb_new(n);
	int half[2] = {0, 1};

	sb_comm(s, 5, "pair", 2, half);
	for (int i = 0; i < n; i++) {
		char host[16];

		snprintf(host, sizeof(host), "node%d", i / 7);
		s->ranks[i].host = snap_str(s, host);
		if (i % 5 == 4)
			sb_call(s, i, "MPI_Barrier", "coll.c", 30 + i % 3);
		else if (i % 11 == 3)
			sb_state(s, i, SNAP_RANK_GONE, "exited with 1");
		else
			sb_recv(s, i, (i + 1) % n, i % 4, "ring.c", 14);
	}
	snap_note(s, "first note");
	snap_note(s, "second note");
	return s;
}

Test(snapread_par, threads_read_the_same_snapshot_as_one_thread)
{
	struct snap *orig = varied(300), *one, *many;
	char *text = to_text(orig), *t1, *tn;

	cr_assert_eq(read_text(text, 1, 1, &one), 0);
	for (int threads = 2; threads <= 5; threads++) {
		cr_assert_eq(read_text(text, threads, 16, &many), 0);
		t1 = to_text(one);
		tn = to_text(many);
		cr_assert_str_eq(tn, t1, "%d threads", threads);
		cr_assert_eq(many->nnotes, 2);
		cr_assert_str_eq(many->notes[1], "second note");
		free(t1);
		free(tn);
		snap_free(many);
	}
	snap_free(one);
	snap_free(orig);
	free(text);
}

Test(snapread_par, equal_strings_from_different_parts_are_one_pointer)
{
	struct snap *orig = varied(400), *s;
	char *text = to_text(orig);

	cr_assert_eq(read_text(text, 4, 64, &s), 0);
	for (int i = 1; i < s->nranks; i++) {
		const struct snap_rank *a = &s->ranks[0], *b = &s->ranks[i];

		cr_assert_eq(a->exe, b->exe, "rank %d", i);
		if (b->call_file && strcmp(b->call_file, "ring.c") == 0)
			cr_assert_eq(b->call_file, s->ranks[0].call_file,
				     "rank %d", i);
		if (b->mpi_call && a->mpi_call &&
		    strcmp(a->mpi_call, b->mpi_call) == 0)
			cr_assert_eq(a->mpi_call, b->mpi_call, "rank %d", i);
	}
	cr_assert_eq(s->ranks[7].host, s->ranks[13].host);
	cr_assert_eq(s->ranks[385].host, s->ranks[388].host);
	snap_free(s);
	snap_free(orig);
	free(text);
}

/* Notes between rank lines land in several parts: file order. */
Test(snapread_par, notes_between_rank_lines_keep_the_file_order)
{
	struct snap *orig = sb_new(60), *s;
	char *text = to_text(orig), *with = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&with, &len);
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		fprintf(f, "%s\n", line);
		if (n > 2 && n % 10 == 0)
			fprintf(f, "{\"note\":\"after line %d\"}\n", n);
	}
	fclose(f);
	cr_assert_eq(read_text(with, 3, 32, &s), 0);
	cr_assert_eq(s->nnotes, 6);
	for (int i = 0; i < s->nnotes; i++) {
		char want[32];

		snprintf(want, sizeof(want), "after line %d", 10 * (i + 1));
		cr_assert_str_eq(s->notes[i], want);
	}
	snap_free(s);
	snap_free(orig);
	free(text);
	free(with);
}

/* Replace the first occurrence of from after the n-th line with to. */
static char *edit(const char *text, int line, const char *from,
		  const char *to)
{
	const char *p = text, *at;
	char *out;

	for (int i = 1; i < line; i++)
		p = strchr(p, '\n') + 1;
	at = strstr(p, from);
	cr_assert_not_null(at);
	cr_assert(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to,
			   at + strlen(from)) > 0);
	return out;
}

/* Two faults, far apart: whatever part finds which, the error is the
 * first one at its line and column, as one thread words it.  Both reads
 * write to the redirected stderr: the two lines must be equal and name
 * line want_line. */
static void same_error(const char *text, int want_line)
{
	struct snap *s = (struct snap *)1;
	char one[512] = "", many[512] = "", at[32];
	FILE *err;

	cr_assert_eq(read_text(text, 1, 48, &s), -MD_E_INPUT);
	cr_assert_eq(read_text(text, 4, 48, &s), -MD_E_INPUT);
	cr_assert_null(s);
	fflush(stderr);
	err = cr_get_redirected_stderr();
	cr_assert_not_null(fgets(one, sizeof(one), err));
	cr_assert_not_null(fgets(many, sizeof(many), err));
	cr_assert_str_eq(many, one);
	snprintf(at, sizeof(at), "t.jsonl:%d:", want_line);
	cr_assert(strstr(one, at), "%s does not name %s", one, at);
}

static char *ring_text(int n)
{
	struct snap *orig = sb_ring(n);
	char *text = to_text(orig);

	snap_free(orig);
	return text;
}

Test(snapread_par, first_fault_in_file_order_wins_over_a_later_part,
     .init = cr_redirect_stderr)
{
	char *text = ring_text(100);
	char *a = edit(text, 12, "\"pid\":", "\"pid\":\"x\",\"p\":");
	char *b = edit(a, 90, "\"tag\":7", "\"tag\":\"7\"");

	same_error(b, 12);
	free(text);
	free(a);
	free(b);
}

Test(snapread_par, a_rank_in_two_parts_is_reported_as_one_thread_does,
     .init = cr_redirect_stderr)
{
	char *text = ring_text(100);
	char *a = edit(text, 80, "\"rank\":77", "\"rank\":20");

	same_error(a, 80);
	free(text);
	free(a);
}

Test(snapread_par, a_missing_last_rank_is_truncated_at_the_end,
     .init = cr_redirect_stderr)
{
	char *text = ring_text(100);

	strstr(text, "\n{\"rank\":99,")[1] = '\0';
	same_error(text, 102);
	free(text);
}

Test(snapread_par, verbose_says_how_many_threads_read_the_ranks,
     .init = cr_redirect_stderr)
{
	char *text = ring_text(100);
	struct snap *s;

	md_set_verbose(1);
	cr_assert_eq(read_text(text, 3, 64, &s), 0);
	md_set_verbose(0);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"mpi-deadlock: t.jsonl: rank lines read by 3 threads\n");
	snap_free(s);
	free(text);
}

/* The real entry: a regular file is mapped and cut when the
 * environment asks for tiny parts. */
Test(snapread_par, snap_read_cuts_a_file_between_threads)
{
	struct snap *orig = varied(200), *s;
	char *text = to_text(orig), *back;
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	fputs(text, f);
	rewind(f);
	setenv("MD_READ_THREADS", "3", 1);
	setenv("MD_READ_SPLIT", "100", 1);
	cr_assert_eq(snap_read(f, "t.jsonl", &s), 0);
	back = to_text(s);
	cr_assert_str_eq(back, text);
	fclose(f);
	free(back);
	free(text);
	snap_free(s);
	snap_free(orig);
}
