/*
 * snaptrack_test.c - libmdtrack.so's records in the snapshot file: they
 * survive write and read back, a rank without them stays untracked, and
 * a bad record is one clear error line.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snap.h"

static struct snap *sample(void)
{
	struct snap *s = snap_new();
	int world[] = { 0, 1 };
	struct snap_rank *r;
	struct snap_track_rec *t;

	snap_comm_intern(s, 0, "MPI_COMM_WORLD", 2, world);
	snap_set_nranks(s, 2);
	r = &s->ranks[0];
	r->tracked = true;
	r->track_dropped = 5000;
	r->ntrack = 3;
	r->track = t = calloc(3, sizeof(*t));
	t[0] = (struct snap_track_rec){
		.kind = SNAP_TRACK_POST, .call = snap_str(s, "MPI_Start"),
		.seq = 7, .request = 0x5000, .comm = -1,
		.peer = SNAP_TRACK_NONE, .tag = SNAP_TRACK_NONE,
		.ret = 0x401234, .func = snap_str(s, "main"),
		.file = snap_str(s, "p.c"), .line = 25 };
	t[1] = (struct snap_track_rec){
		.kind = SNAP_TRACK_INIT, .call = snap_str(s, "MPI_Recv_init"),
		.seq = 1, .request = 0x5000, .comm_handle = 0x6000, .comm = 0,
		.comm_name = snap_str(s, "MPI_COMM_WORLD"),
		.peer = SNAP_TRACK_ANY, .tag = SNAP_TRACK_ANY, .count = 4,
		.datatype = 0x7000, .datatype_name = snap_str(s, "MPI_INT"),
		.ret = 0x401200, .file = snap_str(s, "p.c"), .line = 20 };
	t[2] = (struct snap_track_rec){
		.kind = SNAP_TRACK_COLL, .call = snap_str(s, "MPI_Reduce"),
		.seq = 3, .comm_handle = 0x6000, .comm = 0, .peer = 1,
		.tag = SNAP_TRACK_NONE, .count = 2, .datatype = 0x7000,
		.op = 0x8000, .op_name = snap_str(s, "MPI_SUM"), .ncalls = 9,
		.ret = 0x401300, .line = 0 };
	return s;
}

static struct snap *round_trip(const struct snap *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct snap *back = NULL;

	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	f = fmemopen(buf, len, "r");
	cr_assert_eq(snap_read(f, "mem", &back), 0, "%s", buf);
	fclose(f);
	free(buf);
	return back;
}

static void str_eq(const char *a, const char *b)
{
	if (!a || !b)
		cr_expect_eq(a, b);
	else
		cr_expect_str_eq(a, b);
}

Test(snaptrack, records_survive_write_and_read_back)
{
	struct snap *s = sample(), *b = round_trip(s);

	cr_assert_eq(b->ranks[0].tracked, true);
	cr_expect_eq(b->ranks[0].track_dropped, 5000);
	cr_assert_eq(b->ranks[0].ntrack, 3);
	for (int i = 0; i < 3; i++) {
		const struct snap_track_rec *x = &s->ranks[0].track[i];
		const struct snap_track_rec *y = &b->ranks[0].track[i];

		cr_expect_eq(x->kind, y->kind, "rec %d", i);
		str_eq(x->call, y->call);
		cr_expect_eq(x->seq, y->seq);
		cr_expect_eq(x->request, y->request);
		cr_expect_eq(x->comm_handle, y->comm_handle);
		cr_expect_eq(x->comm, y->comm, "rec %d comm", i);
		str_eq(x->comm_name, y->comm_name);
		cr_expect_eq(x->peer, y->peer, "rec %d peer", i);
		cr_expect_eq(x->tag, y->tag, "rec %d tag", i);
		cr_expect_eq(x->count, y->count);
		cr_expect_eq(x->datatype, y->datatype);
		str_eq(x->datatype_name, y->datatype_name);
		cr_expect_eq(x->op, y->op);
		str_eq(x->op_name, y->op_name);
		cr_expect_eq(x->ncalls, y->ncalls);
		cr_expect_eq(x->ret, y->ret);
		str_eq(x->func, y->func);
		str_eq(x->file, y->file);
		cr_expect_eq(x->line, y->line);
	}
	cr_expect_eq(b->ranks[1].tracked, false);
	cr_expect_eq(b->ranks[1].ntrack, 0);
	snap_free(b);
	snap_free(s);
}

static void read_error(const char *text, const char *want)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct snap *s = NULL;
	char err[512] = "";
	FILE *e;

	cr_redirect_stderr();
	cr_assert_eq(snap_read(f, "t.snap", &s), -MD_E_INPUT);
	fclose(f);
	fflush(stderr);
	e = cr_get_redirected_stderr();
	if (!fgets(err, sizeof(err), e))
		err[0] = '\0';
	cr_expect(strstr(err, want), "error: %s (want %s)", err, want);
	cr_expect(strstr(err, "t.snap:2:"), "error: %s (want the line)", err);
}

#define HDR "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":1,\"ncomms\":0}\n"

Test(snaptrack, a_record_without_a_call_is_named)
{
	read_error(HDR "{\"rank\":0,\"track\":{\"recs\":[{\"kind\":\"post\"}]}}\n",
		   "needs a \"call\"");
}

Test(snaptrack, a_comm_outside_the_file_is_refused)
{
	read_error(HDR "{\"rank\":0,\"track\":{\"recs\":[{\"kind\":\"coll\","
		       "\"call\":\"MPI_Barrier\",\"comm\":3}]}}\n",
		   "\"comm\" 3 is out of range");
}

Test(snaptrack, track_that_is_not_an_object_is_refused)
{
	read_error(HDR "{\"rank\":0,\"track\":[1]}\n",
		   "\"track\" must be an object");
}
