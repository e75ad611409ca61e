/*
 * snapio_test.c - the snapshot file format: write, read back, and one
 * clear error line (file:line:column) for every kind of bad input.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "snap.h"

#define FIXTURES "tests/fixtures/snapshots/"

static struct snap *sample(void)
{
	struct snap *s = snap_new();
	int world[] = { 0, 1, 2 }, self[] = { 1 };
	struct snap_rank *r;
	struct snap_op *op;
	struct snap_thread *t;

	s->time = 1700000000;
	s->tool = snap_str(s, "mpi-deadlock " MD_VERSION);
	s->host = snap_str(s, "n\"ode\\1\n");	/* escaping is yajl's job */
	s->starter_pid = 77;
	s->looks = 2;
	s->interval_ms = 1000;
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", 3, world);
	snap_comm_intern(s, 1, "MPI_COMM_SELF", 1, self);
	snap_comm_intern(s, 9, "", 2, NULL);
	{
		/* a ring of 3: each rank's neighbours, one without any */
		static const int first[] = { 0, 2, 2, 4 }, nbr[] = { 2, 1, 0, 1 };

		snap_comm_set_topo(s, 0, SNAP_TOPO_CART, first, nbr);
	}
	snap_set_nranks(s, 3);
	r = &s->ranks[1];
	r->pid = 1234;
	r->host = snap_str(s, "h\xc3\xa9");
	r->state = SNAP_RANK_COLLECTED;
	r->progress = SNAP_PROGRESS_CHANGED;
	r->thread_level = SNAP_TL_FUNNELED;
	r->finalized = true;
	r->mpi_call = snap_str(s, "MPI_Waitall");
	r->call_func = snap_str(s, "main");
	r->call_file = snap_str(s, "a.c");
	r->call_line = 33;
	r->nmembers = 2;
	r->members = calloc(2, sizeof(*r->members));
	r->members[0] = (struct snap_member){ .comm = 0, .local_rank = 1 };
	r->members[1] = (struct snap_member){ .comm = 1, .local_rank = 0 };
	r->queues = SNAP_QUEUES_NONE;
	r->queues_reason = snap_str(s, "no queues");
	r->unexpected_available = true;
	r->ob1 = true;
	r->nops = 2;
	r->ops = op = calloc(2, sizeof(*op));
	op[0] = (struct snap_op){ .kind = SNAP_OP_SEND, .status = SNAP_ST_COMPLETE,
				  .comm = 0, .peer_local = 2, .peer_global = 2,
				  .tag = -5, .length = 1ULL << 40,
				  .buffer = 0xffffffffffffffffULL,
				  .system_buffer = true, .actual_local = 2,
				  .actual_global = 2, .actual_tag = 3,
				  .actual_length = 8, .request = 0x10,
				  .status_corrected = true, .nextra = 2,
				  .extra = { "Send: 0x10", "x" } };
	op[1] = (struct snap_op){ .kind = SNAP_OP_RECV, .comm = -1,
				  .peer_local = -1, .peer_global = -1,
				  .any_tag = true, .actual_local = -1,
				  .actual_global = -1, .source = SNAP_SRC_OB1,
				  .req_type = "probe" };
	r->nthreads = 1;
	r->threads = t = calloc(1, sizeof(*t));
	t->tid = 1235;
	t->mpi_call = r->mpi_call;
	t->mpi_frame = 0;
	t->user_frame = -1;
	t->progress_thread = true;
	t->nframes = 2;
	t->frames = calloc(2, sizeof(*t->frames));
	t->frames[0] = (struct snap_frame){ .pc = 0x401000, .func = "PMPI_Waitall",
					    .object = "/lib/libmpi.so" };
	t->frames[1] = (struct snap_frame){ .pc = 0x402000, .file = "a.c",
					    .line = 33 };
	s->ranks[2].state = SNAP_RANK_GONE;
	s->ranks[2].reason = snap_str(s, "exited");
	snap_note(s, "a note with \"quotes\"");
	return s;
}

static char *write_to_string(const struct snap *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	return buf;
}

static int read_string(const char *text, struct snap **out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	cr_assert_not_null(f);
	ret = snap_read(f, "t.jsonl", out);
	fclose(f);
	return ret;
}

static void assert_op_eq(const struct snap_op *a, const struct snap_op *b)
{
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->status, b->status);
	cr_assert_eq(a->comm, b->comm);
	cr_assert_eq(a->peer_local, b->peer_local);
	cr_assert_eq(a->peer_global, b->peer_global);
	cr_assert_eq(a->any_tag, b->any_tag);
	if (!a->any_tag)
		cr_assert_eq(a->tag, b->tag);
	cr_assert_eq(a->length, b->length);
	cr_assert_eq(a->buffer, b->buffer);
	cr_assert_eq(a->system_buffer, b->system_buffer);
	cr_assert_eq(a->actual_local, b->actual_local);
	cr_assert_eq(a->actual_global, b->actual_global);
	cr_assert_eq(a->actual_tag, b->actual_tag);
	cr_assert_eq(a->actual_length, b->actual_length);
	cr_assert_eq(a->request, b->request);
	cr_assert_eq(a->status_corrected, b->status_corrected);
	cr_assert_eq(a->source, b->source);
	cr_assert_eq(a->nextra, b->nextra);
	for (int i = 0; i < a->nextra; i++)
		cr_assert_str_eq(a->extra[i], b->extra[i]);
}

static void assert_str_eq_null(const char *a, const char *b)
{
	if (!a || !b)
		cr_assert_eq(a, b, "%s vs %s", a ? a : "NULL", b ? b : "NULL");
	else
		cr_assert_str_eq(a, b);
}

static void assert_thread_eq(const struct snap_thread *a,
			     const struct snap_thread *b)
{
	cr_assert_eq(a->tid, b->tid);
	assert_str_eq_null(a->mpi_call, b->mpi_call);
	cr_assert_eq(a->mpi_frame, b->mpi_frame);
	cr_assert_eq(a->user_frame, b->user_frame);
	cr_assert_eq(a->progress_thread, b->progress_thread);
	cr_assert_eq(a->nframes, b->nframes);
	for (int i = 0; i < a->nframes; i++) {
		cr_assert_eq(a->frames[i].pc, b->frames[i].pc);
		assert_str_eq_null(a->frames[i].func, b->frames[i].func);
		assert_str_eq_null(a->frames[i].object, b->frames[i].object);
		assert_str_eq_null(a->frames[i].file, b->frames[i].file);
		cr_assert_eq(a->frames[i].line, b->frames[i].line);
	}
}

static void assert_rank_eq(const struct snap_rank *a, const struct snap_rank *b)
{
	cr_assert_eq(a->rank, b->rank);
	cr_assert_eq(a->pid, b->pid);
	assert_str_eq_null(a->host, b->host);
	assert_str_eq_null(a->exe, b->exe);
	cr_assert_eq(a->state, b->state);
	assert_str_eq_null(a->reason, b->reason);
	cr_assert_eq(a->progress, b->progress);
	cr_assert_eq(a->thread_level, b->thread_level);
	cr_assert_eq(a->finalized, b->finalized);
	assert_str_eq_null(a->mpi_call, b->mpi_call);
	assert_str_eq_null(a->call_func, b->call_func);
	assert_str_eq_null(a->call_file, b->call_file);
	cr_assert_eq(a->call_line, b->call_line);
	cr_assert_eq(a->nmembers, b->nmembers);
	for (int i = 0; i < a->nmembers; i++) {
		cr_assert_eq(a->members[i].comm, b->members[i].comm);
		cr_assert_eq(a->members[i].local_rank, b->members[i].local_rank);
	}
	cr_assert_eq(a->queues, b->queues);
	assert_str_eq_null(a->queues_reason, b->queues_reason);
	cr_assert_eq(a->unexpected_available, b->unexpected_available);
	cr_assert_eq(a->ob1, b->ob1);
	cr_assert_eq(a->nops, b->nops);
	for (int i = 0; i < a->nops; i++)
		assert_op_eq(&a->ops[i], &b->ops[i]);
	cr_assert_eq(a->nthreads, b->nthreads);
	for (int i = 0; i < a->nthreads; i++)
		assert_thread_eq(&a->threads[i], &b->threads[i]);
}

static void assert_snap_eq(const struct snap *a, const struct snap *b)
{
	cr_assert_eq(a->version, b->version);
	cr_assert_eq(a->time, b->time);
	assert_str_eq_null(a->tool, b->tool);
	assert_str_eq_null(a->host, b->host);
	cr_assert_eq(a->starter_pid, b->starter_pid);
	assert_str_eq_null(a->mpi, b->mpi);
	cr_assert_eq(a->looks, b->looks);
	cr_assert_eq(a->interval_ms, b->interval_ms);
	cr_assert_eq(a->ncomms, b->ncomms);
	for (int i = 0; i < a->ncomms; i++) {
		cr_assert_eq(a->comms[i].id, b->comms[i].id);
		cr_assert_str_eq(a->comms[i].name, b->comms[i].name);
		cr_assert_eq(a->comms[i].size, b->comms[i].size);
		cr_assert_eq(!a->comms[i].group, !b->comms[i].group);
		for (int j = 0; a->comms[i].group && j < a->comms[i].size; j++)
			cr_assert_eq(a->comms[i].group[j], b->comms[i].group[j]);
		cr_assert_eq(a->comms[i].topo, b->comms[i].topo);
		cr_assert_eq(!a->comms[i].nbr_first, !b->comms[i].nbr_first);
		for (int j = 0; a->comms[i].nbr_first && j <= a->comms[i].size;
		     j++)
			cr_assert_eq(a->comms[i].nbr_first[j],
				     b->comms[i].nbr_first[j]);
		for (int j = 0; a->comms[i].nbr_first &&
				j < a->comms[i].nbr_first[a->comms[i].size];
		     j++)
			cr_assert_eq(a->comms[i].nbr[j], b->comms[i].nbr[j]);
	}
	cr_assert_eq(a->nranks, b->nranks);
	for (int i = 0; i < a->nranks; i++)
		assert_rank_eq(&a->ranks[i], &b->ranks[i]);
	cr_assert_eq(a->nnotes, b->nnotes);
	for (int i = 0; i < a->nnotes; i++)
		cr_assert_str_eq(a->notes[i], b->notes[i]);
}

Test(snapio, round_trip_keeps_every_field)
{
	struct snap *s = sample(), *back = NULL;
	size_t len;
	char *text = write_to_string(s, &len);

	/* The sample's unset ranks need the defaults the reader applies. */
	for (int i = 0; i < s->nranks; i++)
		for (int t = 0; t < s->ranks[i].nthreads; t++)
			if (!s->ranks[i].threads[t].nframes)
				s->ranks[i].threads[t].mpi_frame = -1;
	cr_assert_eq(read_string(text, &back), 0, "%s", text);
	assert_snap_eq(s, back);
	free(text);
	snap_free(s);
	snap_free(back);
}

/* Strings read from a rank may be bytes of another encoding; the file
 * must stay UTF-8 (its reader checks), each stray byte written as
 * U+FFFD, well-formed sequences kept. */
Test(snapio, bytes_that_are_not_utf8_are_written_as_replacement_characters)
{
	struct snap *s = snap_new(), *back = NULL;
	size_t len;
	char *text;

	s->host = snap_str(s, "jos\xe9-h\xc3\xa9");
	s->starter = snap_str(s, "/x/\xff\xc0\xaf/\xed\xa0\x80/\xf0\x9f\x98");
	text = write_to_string(s, &len);
	cr_assert_eq(read_string(text, &back), 0, "%s", text);
	cr_expect_str_eq(back->host, "jos\xef\xbf\xbd-h\xc3\xa9");
	/* 0xc0 0xaf is an overlong '/', 0xed 0xa0 0x80 a surrogate, and
	 * the last sequence ends early: a U+FFFD for each of their bytes. */
	cr_expect_str_eq(back->starter,
			 "/x/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd/"
			 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd/"
			 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(text);
	snap_free(s);
	snap_free(back);
}

Test(snapio, written_file_is_one_json_object_per_line)
{
	struct snap *s = sample();
	size_t len, lines = 0;
	char *text = write_to_string(s, &len);

	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		lines++;
		cr_assert(i + 1 == len || text[i + 1] == '{');
	}
	/* header + 3 comms + 3 ranks + 1 note */
	cr_assert_eq(lines, 8);
	cr_assert(strncmp(text, "{\"format\":\"mpi-deadlock-snapshot\","
			  "\"version\":1,", 43) == 0, "%.60s", text);
	free(text);
	snap_free(s);
}

Test(snapio, omits_defaults_and_writes_long_groups_as_ranges)
{
	struct snap *s = snap_new();
	int g[100];
	size_t len;
	char *text;

	for (int i = 0; i < 100; i++)
		g[i] = i < 50 ? i : i + 10;
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", 100, g);
	snap_set_nranks(s, 110);
	text = write_to_string(s, &len);
	cr_assert(strstr(text, "\"group\":\"0-49,60-109\""), "%.300s", text);
	cr_assert(strstr(text, "\n{\"rank\":5}\n"), "default rank not bare");
	free(text);
	snap_free(s);
}

static void read_fixture(const char *name, struct snap **out)
{
	FILE *f = fopen(name, "r");

	cr_assert_not_null(f, "%s (run from the repository root)", name);
	cr_assert_eq(snap_read(f, name, out), 0);
	fclose(f);
}

Test(snapio, reads_hand_written_ring_fixture)
{
	struct snap *s;
	const struct snap_op *op;

	read_fixture(FIXTURES "ring3.jsonl", &s);
	cr_assert_eq(s->nranks, 3);
	cr_assert_eq(s->ncomms, 2);
	cr_assert_str_eq(s->comms[0].name, "MPI_COMM_WORLD");
	op = &s->ranks[0].ops[0];
	cr_assert_eq(op->kind, SNAP_OP_RECV);
	cr_assert_eq(op->peer_global, 2);
	cr_assert_eq(op->tag, 7);
	cr_assert_eq(op->buffer, 0x7ffd1000);
	cr_assert_str_eq(op->extra[1], "Data: 4096 * 0x4 (4 bytes)");
	cr_assert_eq(s->ranks[1].ops[0].status_corrected, true);
	cr_assert_eq(s->ranks[1].ops[0].actual_global, 2);
	cr_assert_eq(s->ranks[2].ops[0].peer_local, -1);
	cr_assert(s->ranks[2].ops[0].any_tag);
	cr_assert_eq(s->ranks[2].unexpected_available, true);
	cr_assert_eq(s->ranks[0].threads[1].progress_thread, true);
	cr_assert_eq(s->ranks[0].threads[1].mpi_frame, -1);
	cr_assert_eq(s->ranks[2].threads[0].user_frame, -1);
	cr_assert_eq(s->ranks[0].call_line, 14);
	cr_assert_eq(s->ranks[0].call_file, s->ranks[2].call_file, "interned");
	cr_assert_eq(s->nnotes, 1);
	snap_free(s);
}

Test(snapio, reads_ranges_states_and_blank_lines)
{
	struct snap *s;

	read_fixture(FIXTURES "gone4.jsonl", &s);
	cr_assert_eq(s->comms[0].group[3], 3);
	cr_assert_eq(s->comms[1].size, 2);
	cr_assert_eq(s->comms[1].group[1], 2);
	cr_assert_str_eq(s->comms[1].name, "");
	cr_assert_eq(s->ranks[1].state, SNAP_RANK_REMOTE);
	cr_assert_eq(s->ranks[2].state, SNAP_RANK_UNREAD);
	cr_assert_eq(s->ranks[3].state, SNAP_RANK_GONE);
	cr_assert_str_eq(s->ranks[3].reason, "exited with status 1");
	cr_assert_eq(s->ranks[0].progress, SNAP_PROGRESS_UNKNOWN);
	snap_free(s);
}

Test(snapio, fixtures_survive_write_and_read_back)
{
	const char *names[] = { FIXTURES "ring3.jsonl", FIXTURES "gone4.jsonl" };

	for (size_t i = 0; i < 2; i++) {
		struct snap *s, *back;
		size_t len;
		char *text;

		read_fixture(names[i], &s);
		text = write_to_string(s, &len);
		cr_assert_eq(read_string(text, &back), 0);
		assert_snap_eq(s, back);
		free(text);
		snap_free(s);
		snap_free(back);
	}
}

Test(snapio, accepts_last_line_without_newline)
{
	const char *text =
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"nranks\":1,\"ncomms\":0}\n{\"rank\":0,\"pid\":3}";
	struct snap *s;

	cr_assert_eq(read_string(text, &s), 0);
	cr_assert_eq(s->ranks[0].pid, 3);
	snap_free(s);
}

/*
 * Bad input: each case is read from a regular file (so the reader knows
 * its size) and must give exactly one error line and -MD_E_INPUT.
 */
struct bad_case {
	const char *what;
	const char *text;
	const char *error;
};

static struct bad_case bad_cases[] = {
	{ "neighbors",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"c\",\"size\":2,\"group\":[0,1],\"topo\":\"cart\",\"neighbors\":\"1;2\"}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:66: communicator 0: \"neighbors\" must be 2 lists of local ranks below 2, one per local rank (\"1,3;0,2\")\n" },
	{ "addr",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"buffer\":1234}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: \"buffer\" must be a hex string \"0x...\"\n" },
	{ "array",
	  "[1,2]",
	  "mpi-deadlock: t.jsonl:1:1: the line is not a JSON object\n" },
	{ "commafter",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "{\"comm\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:4:2: a communicator line comes after the rank lines\n" },
	{ "commorder",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":2}\n"
	  "{\"comm\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:2: communicator 1 comes where communicator 0 was expected\n" },
	{ "dup",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "{\"rank\":0}\n"
	  "",
	  "mpi-deadlock: t.jsonl:4:2: rank 0 comes where rank 1 was expected: ranks must be in order, each once\n" },
	{ "dupcomm",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":2}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:2: communicator 0 comes where communicator 1 was expected\n" },
	{ "empty",
	  "",
	  "mpi-deadlock: t.jsonl:1:1: empty file: no snapshot header\n" },
	{ "extra",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"extra\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"]}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: \"extra\" has 6 entries, at most 5 are allowed\n" },
	{ "format",
	  "{\"format\":\"other\",\"version\":1}",
	  "mpi-deadlock: t.jsonl:1:2: not an mpi-deadlock snapshot: the first line must say \"format\":\"mpi-deadlock-snapshot\"\n" },
	{ "groupdup",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":2,\"group\":\"1,1\"}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:20: communicator 0: \"group\" lists global rank 1 twice\n" },
	{ "grouphuge",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":2,\"group\":\"0-99999999999999\"}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:20: communicator 0: \"group\" range 0-99999999999999 is out of range (2 ranks)\n" },
	{ "grouplong",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":1,\"group\":\"0-1\"}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:20: communicator 0: \"group\" has more than \"size\" 1 entries\n" },
	{ "grouprange",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":2,\"group\":[0,7]}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:31: communicator 0: a \"group\" entry 7 is out of range (0..1)\n" },
	{ "groupsyntax",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":2,\"group\":\"0-1,\"}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:20: communicator 0: \"group\" \"0-1,\" is not a list of rank ranges like \"0-3,8\" (at \",\")\n" },
	{ "heldmore",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":4,\"ncomms\":0,\"held\":1}\n"
	  "{\"rank\":0}\n"
	  "{\"rank\":2}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:2: rank 2 is one more than the 1 the header says the part holds\n" },
	{ "heldorder",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":4,\"ncomms\":0,\"held\":2}\n"
	  "{\"rank\":2}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:2: rank 1 comes where rank 3 or a later one was expected: ranks must be in order, each once\n" },
	{ "hexdigit",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"threads\":[{\"tid\":1,\"frames\":[{\"pc\":\"0x4g\"}]}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:42: rank 0: \"pc\" \"0x4g\" is not a hex address \"0x...\" of up to 16 digits\n" },
	{ "hexlong",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"request\":\"0x1FfFfFfFfFfFfFfFf\"}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: \"request\" \"0x1FfFfFfFfFfFfFfFf\" is not a hex address \"0x...\" of up to 16 digits\n" },
	{ "hexprefix",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"request\":\"0X10\"}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: \"request\" \"0X10\" is not a hex address \"0x...\" of up to 16 digits\n" },
	{ "hugeranks",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2000000,\"ncomms\":0}",
	  "mpi-deadlock: t.jsonl:1:47: 2000000 ranks and 0 communicators cannot fit in the 74 bytes of the file: truncated or inconsistent\n" },
	{ "kind",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"put\"}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:19: rank 0: op 0: \"kind\" \"put\" is not a known value\n" },
	{ "members",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"members\":[[0,1]]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:22: rank 0: rank 0 is not local rank 1 of communicator 0\n" },
	{ "members2",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"members\":[0]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:22: rank 0: a \"members\" entry must be [comm, local rank]\n" },
	{ "mpiframe",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"threads\":[{\"tid\":1,\"mpi_frame\":3,\"frames\":[{\"pc\":\"0x1\"}]}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:31: rank 0: \"mpi_frame\" 3 is out of range (-1..0)\n" },
	{ "neglen",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"length\":-1}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: \"length\" -1 is out of range (0..18446744073709551615)\n" },
	{ "negranks",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":-4,\"ncomms\":0}",
	  "mpi-deadlock: t.jsonl:1:47: \"nranks\" -4 is out of range (0..67108864)\n" },
	{ "negsize",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"size\":-2}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:11: communicator 0: \"size\" -2 is out of range (0..2)\n" },
	{ "noformat",
	  "{\"version\":1,\"nranks\":1}",
	  "mpi-deadlock: t.jsonl:1:1: not an mpi-deadlock snapshot: the first line must say \"format\":\"mpi-deadlock-snapshot\"\n" },
	{ "nokind",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"comm\":0}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:18: rank 0: op 0: each \"ops\" entry needs a \"kind\"\n" },
	{ "nonranks",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"ncomms\":0}",
	  "mpi-deadlock: t.jsonl:1:1: the header has no \"nranks\"\n" },
	{ "notjson",
	  "hello",
	  "mpi-deadlock: t.jsonl:1:1: invalid JSON: lexical error: invalid char in json text.\n" },
	{ "number",
	  "42",
	  "mpi-deadlock: t.jsonl:1:1: the line is not a JSON object\n" },
	{ "opcomm",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "{\"rank\":1,\"ops\":[{\"kind\":\"recv\",\"comm\":0,\"peer\":0},{\"kind\":\"send\",\"comm\":9,\"peer\":0}]}\n"
	  "",
	  "mpi-deadlock: t.jsonl:4:67: rank 1: op 1: \"comm\" 9 is out of range (-1..0)\n" },
	{ "order",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:2: rank 1 comes where rank 0 was expected: ranks must be in order, each once\n" },
	{ "peerglobal",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"comm\":0,\"peer\":1,\"peer_global\":0}]}\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:51: rank 0: op 0: \"peer_global\" 0 is not \"peer\" 1 of communicator 0 (global rank 1)\n" },
	{ "rankbeforecomm",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"rank\":0}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:2: rank 0 comes after 0 communicator lines, the header says 1\n" },
	{ "rankrange",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "{\"rank\":5}\n"
	  "",
	  "mpi-deadlock: t.jsonl:4:2: \"rank\" 5 is out of range (0..1)\n" },
	/* A second value cut at the end of its line: yajl held its start
	 * and went on reading it into the next line (the fuzzer's parallel
	 * read found the error at another line). */
	{ "cutsecond",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\"x\n"
	  "{\"rank\":1}\n",
	  "mpi-deadlock: t.jsonl:3:11: a second JSON value on the line\n" },
	{ "second",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:1: a second header line\n" },
	{ "state",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0,\"state\":7}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:11: rank 0: \"state\" must be a string\n" },
	{ "trailing",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0} x\n"
	  "{\"rank\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:3:12: invalid JSON: lexical error: invalid char in json text.\n" },
	{ "truncline",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "{\"rank\":1,\"pid\":",
	  "mpi-deadlock: t.jsonl:4:17: the line ends inside a JSON value: truncated\n" },
	{ "truncranks",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"comm\":0,\"id\":0,\"name\":\"MPI_COMM_WORLD\",\"size\":2,\"group\":[0,1]}\n"
	  "{\"rank\":0}\n"
	  "",
	  "mpi-deadlock: t.jsonl:4:1: truncated: 1 of 2 rank lines\n" },
	{ "unknown",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":2,\"ncomms\":1}\n"
	  "{\"what\":1}\n"
	  "",
	  "mpi-deadlock: t.jsonl:2:1: the line is neither a communicator, a rank nor a note\n" },
	{ "version",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":2,\"nranks\":1,\"ncomms\":0}",
	  "mpi-deadlock: t.jsonl:1:35: snapshot version 2 is not supported: this mpi-deadlock reads version 1\n" },

	{ "badutf8",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"host\":\"\xff\xfe\","
	  "\"nranks\":0,\"ncomms\":0}",
	  "mpi-deadlock: t.jsonl:1:55: invalid JSON: lexical error: invalid bytes in UTF8 string.\n" },
	{ "deep",
	  "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":0,"
	  "\"ncomms\":0}\n{\"note\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}\n",
	  "mpi-deadlock: t.jsonl:2:24: nesting deeper than 16 levels\n" },
};

#define NBAD ((int)(sizeof(bad_cases) / sizeof(bad_cases[0])))

/* Indexes, not the cases: Criterion runs each test in a new process of
 * a position-independent binary, where the parent's pointers are wrong. */
ParameterizedTestParameters(snapio, rejects_bad_input_with_one_located_error)
{
	static int idx[NBAD];

	for (int i = 0; i < NBAD; i++)
		idx[i] = i;
	return cr_make_param_array(int, idx, NBAD);
}

ParameterizedTest(int *i, snapio, rejects_bad_input_with_one_located_error,
		  .init = cr_redirect_stderr)
{
	const struct bad_case *c = &bad_cases[*i];
	FILE *f = tmpfile();
	struct snap *s = (struct snap *)1;

	cr_assert_not_null(f);
	fputs(c->text, f);
	rewind(f);
	cr_assert_eq(snap_read(f, "t.jsonl", &s), -MD_E_INPUT, "%s", c->what);
	cr_assert_null(s, "%s: no snapshot on error", c->what);
	fclose(f);
	fflush(stderr);
	cr_assert_stderr_eq_str(c->error, "%s", c->what);
}

/* What is not a regular file (read_string: a memory stream) is read
 * whole into a mapping of 1 MiB that grows: lines longer than that and
 * a last line without '\n' read; an empty input is refused. */
Test(snapio, reads_lines_longer_than_its_buffer_and_a_last_line_without_newline,
     .init = cr_redirect_stderr)
{
	size_t big = 1536 * 1024;
	char *note = xmalloc(big + 1), *text;
	struct snap *s = NULL;
	FILE *f;

	memset(note, 'n', big);
	note[big] = '\0';
	text = xasprintf("{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
			 "\"nranks\":1,\"ncomms\":0}\n{\"note\":\"%s\"}\n"
			 "{\"note\":\"%s\"}\n{\"rank\":0,\"pid\":7}", note,
			 note + 1000);
	cr_assert_eq(read_string(text, &s), 0);
	cr_assert_eq(s->nranks, 1);
	cr_assert_eq(s->ranks[0].pid, 7);
	cr_assert_eq(s->nnotes, 2);
	cr_assert_eq(strlen(s->notes[0]), big);
	cr_assert_eq(strlen(s->notes[1]), big - 1000);
	snap_free(s);
	free(text);
	free(note);
	f = fopen("/dev/null", "r");
	cr_assert_not_null(f);
	cr_assert_eq(snap_read(f, "t.jsonl", &s), -MD_E_INPUT);
	fclose(f);
	fflush(stderr);
	cr_assert_stderr_eq_str("mpi-deadlock: t.jsonl:1:1: empty file: no "
				"snapshot header\n");
}

/* A pipe is read whole before its lines: its size bounds the header's
 * counts too. */
Test(snapio, header_count_larger_than_a_pipe_is_refused_before_allocating,
     .init = cr_redirect_stderr)
{
	struct snap *s;

	cr_assert_eq(read_string("{\"format\":\"mpi-deadlock-snapshot\","
				 "\"version\":1,\"nranks\":60000000,"
				 "\"ncomms\":0}\n{\"rank\":0}\n", &s),
		     -MD_E_INPUT);
	fflush(stderr);
	cr_assert_stderr_eq_str("mpi-deadlock: t.jsonl:1:47: 60000000 ranks "
				"and 0 communicators cannot fit in the 87 "
				"bytes of the file: truncated or "
				"inconsistent\n");
}

/*
 * A line is parsed whole before it is read: what a line is and the
 * checks that depend on other keys do not depend on the keys' order.
 */
#define HDR2 "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1," \
	     "\"nranks\":2,\"ncomms\":1}\n" \
	     "{\"comm\":0,\"size\":2,\"group\":\"0-1\"}\n"

Test(snapio, reads_keys_in_any_order_and_skips_unknown_values)
{
	const char *text =
		HDR2
		"{\"future\":{\"a\":[1,{\"b\":[2,\"x\"]}],\"c\":null},"
		"\"threads\":[{\"frames\":[{\"pc\":\"0x10\"},{\"line\":4}],"
		"\"user_frame\":1,\"tid\":9}],"
		"\"ops\":[{\"peer\":1,\"comm\":0,\"kind\":\"recv\","
		"\"actual\":{\"tag\":3},\"extra\":[\"e\"]}],"
		"\"members\":[[0,0]],\"rank\":0}\n"
		/* keys with escapes: decoded, then matched */
		"{\"p\\u0069d\":7,\"\\u0072ank\":1,\"h\\\"ost\":\"x\"}\n";
	struct snap *s;

	cr_assert_eq(read_string(text, &s), 0);
	cr_assert_eq(s->ranks[0].nthreads, 1);
	cr_assert_eq(s->ranks[0].threads[0].tid, 9);
	cr_assert_eq(s->ranks[0].threads[0].nframes, 2);
	cr_assert_eq(s->ranks[0].threads[0].user_frame, 1);
	cr_assert_eq(s->ranks[0].threads[0].frames[0].pc, 0x10);
	cr_assert_eq(s->ranks[0].threads[0].frames[1].line, 4);
	cr_assert_eq(s->ranks[0].ops[0].kind, SNAP_OP_RECV);
	cr_assert_eq(s->ranks[0].ops[0].peer_local, 1);
	cr_assert_eq(s->ranks[0].ops[0].actual_tag, 3);
	cr_assert_eq(s->ranks[0].ops[0].actual_local, -1);
	cr_assert_str_eq(s->ranks[0].ops[0].extra[0], "e");
	cr_assert_eq(s->ranks[0].members[0].local_rank, 0);
	cr_assert_eq(s->ranks[1].pid, 7);
	snap_free(s);
}

/* Hex addresses: either case, up to all 16 digits. */
Test(snapio, reads_hex_addresses_in_either_case)
{
	struct snap *s = NULL;

	cr_assert_eq(read_string(
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,\"nranks\":1,\"ncomms\":1}\n"
		"{\"comm\":0,\"size\":1,\"group\":[0]}\n"
		"{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"request\":\"0xFfFfFfFfFfFfFfFe\","
		"\"buffer\":\"0x0\"}],\"threads\":[{\"tid\":1,\"frames\":"
		"[{\"pc\":\"0xA0b1c2D3\"}]}]}\n", &s), 0);
	cr_assert_eq(s->ranks[0].ops[0].request, 0xfffffffffffffffeULL);
	cr_assert_eq(s->ranks[0].ops[0].buffer, 0);
	cr_assert_eq(s->ranks[0].threads[0].frames[0].pc, 0xa0b1c2d3ULL);
	snap_free(s);
}

Test(snapio, last_of_duplicate_keys_wins)
{
	const char *text = HDR2
		"{\"rank\":0,\"pid\":1,\"ops\":[{\"kind\":\"send\"}],"
		"\"pid\":2,\"ops\":[{\"kind\":\"recv\"},{\"kind\":\"recv\"}]}\n"
		"{\"rank\":1}\n";
	struct snap *s;

	cr_assert_eq(read_string(text, &s), 0);
	cr_assert_eq(s->ranks[0].pid, 2);
	cr_assert_eq(s->ranks[0].nops, 2);
	cr_assert_eq(s->ranks[0].ops[0].kind, SNAP_OP_RECV);
	snap_free(s);
}

static void assert_read_error(const char *text, const char *error)
{
	struct snap *s = (struct snap *)1;

	cr_assert_eq(read_string(text, &s), -MD_E_INPUT);
	cr_assert_null(s);
	fflush(stderr);
	cr_assert_stderr_eq_str(error);
}

Test(snapio, rejects_array_where_an_integer_belongs,
     .init = cr_redirect_stderr)
{
	assert_read_error(HDR2 "{\"rank\":0,\"pid\":[1]}\n{\"rank\":1}\n",
			  "mpi-deadlock: t.jsonl:3:11: rank 0: \"pid\" must "
			  "be an integer\n");
}

/* A peer past its communicator's group (an intercommunicator whose
 * remote group the collector could not read) is read, and has no global
 * rank; a peer_global it does not have is refused whatever the order of
 * the keys. */
Test(snapio, a_peer_past_the_group_is_read_without_a_global_rank,
     .init = cr_redirect_stderr)
{
	struct snap *s = NULL;

	cr_assert_eq(read_string(HDR2 "{\"rank\":0,\"ops\":[{\"kind\":"
				 "\"recv\",\"peer\":5,\"comm\":0}]}\n"
				 "{\"rank\":1}\n", &s), 0);
	cr_expect_eq(s->ranks[0].ops[0].peer_local, 5);
	cr_expect_eq(snap_comm_peer(s, 0, 5), -1);
	snap_free(s);
	assert_read_error(HDR2 "{\"rank\":0,\"ops\":[{\"kind\":\"recv\","
			  "\"peer_global\":0,\"peer\":1,\"comm\":0}]}\n"
			  "{\"rank\":1}\n",
			  "mpi-deadlock: t.jsonl:3:33: rank 0: op 0: "
			  "\"peer_global\" 0 is not \"peer\" 1 of communicator "
			  "0 (global rank 1)\n");
}

/* JSON does not allow a raw control character in a string; the writer
 * always escapes them. */
Test(snapio, rejects_raw_control_character_in_a_string,
     .init = cr_redirect_stderr)
{
	assert_read_error(HDR2 "{\"rank\":0,\"host\":\"a\x01z\"}\n"
			  "{\"rank\":1}\n",
			  "mpi-deadlock: t.jsonl:3:19: invalid JSON: lexical "
			  "error: invalid character inside string.\n");
}

Test(snapio, reads_thousands_of_rank_lines_through_reused_handles)
{
	/* Many lines through the same parser handles: state must not leak
	 * from one line into the next. */
	size_t n = 5000, cap = 200 * n + 256, len = 0;
	char *text = xmalloc(cap);
	struct snap *s;

	len += (size_t)snprintf(text + len, cap - len,
				"{\"format\":\"mpi-deadlock-snapshot\","
				"\"version\":1,\"nranks\":%zu,\"ncomms\":1}\n"
				"{\"comm\":0,\"size\":%zu,\"group\":\"0-%zu\"}\n",
				n, n, n - 1);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"{\"rank\":%zu,\"host\":\"h\xc3\xa9%zu\","
					"\"members\":[[0,%zu]],\"ops\":[{\"kind\":"
					"\"send\",\"comm\":0,\"peer\":%zu}]}\n",
					i, i % 3, i, (i + 1) % n);
	cr_assert_eq(read_string(text, &s), 0);
	cr_assert_eq(s->nranks, (int)n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(s->ranks[i].ops[0].peer_local, (int)((i + 1) % n));
		cr_assert_eq(s->ranks[i].members[0].local_rank, (int)i);
	}
	cr_assert_str_eq(s->ranks[4].host, "h\xc3\xa9" "1");
	cr_assert_eq(s->ranks[1].host, s->ranks[4].host, "interned");
	snap_free(s);
	free(text);
}

/* nranks rank lines with strings, a note among them; bad >= 0: that
 * rank line carries a wrong type. */
static FILE *many_ranks(int n, int bad)
{
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	fprintf(f, "{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		   "\"nranks\":%d,\"ncomms\":1}\n"
		   "{\"comm\":0,\"size\":%d,\"group\":\"0-%d\"}\n",
		n, n, n - 1);
	for (int i = 0; i < n; i++) {
		fprintf(f, "{\"rank\":%d,\"pid\":%s,\"host\":\"h%d\","
			   "\"members\":[[0,%d]],\"ops\":[{\"kind\":\"recv\","
			   "\"comm\":0,\"peer\":%d}],\"threads\":[{\"tid\":%d,"
			   "\"frames\":[{\"pc\":\"0x10\",\"func\":\"f%d\"}]}]}\n",
			i, i == bad ? "\"x\"" : "7", i % 5, i, (i + 1) % n, i,
			i % 3);
		if (i == n / 2)
			fputs("{\"note\":\"in the middle\"}\n", f);
	}
	rewind(f);
	return f;
}

static char *read_with(FILE *f, int threads, int *ret, int *used)
{
	struct snap_read_opts o = {.threads = threads};
	struct snap *s = NULL;
	size_t len;
	char *text = NULL;

	rewind(f);
	*ret = snap_read_opts(f, "t.jsonl", &o, &s);
	*used = o.threads_used;
	if (!*ret) {
		cr_assert_eq(s->ranks[1].host, s->ranks[s->nranks - 4].host,
			     "strings interned across threads");
		text = write_to_string(s, &len);
	}
	snap_free(s);
	return text;
}

/* The parallel reader (a whole snapshot in a file, thousands of ranks)
 * gives what one thread gives, and on bad input the same one error line
 * (it reads again with one thread). */
Test(snapio, threads_read_what_one_thread_reads_and_report_its_errors,
     .init = cr_redirect_stderr)
{
	FILE *f = many_ranks(10000, -1);
	char *one, *three;
	int r1, r3, u1, u3;

	one = read_with(f, 1, &r1, &u1);
	three = read_with(f, 3, &r3, &u3);
	cr_assert_eq(r1, 0);
	cr_assert_eq(r3, 0);
	cr_expect_eq(u1, 1);
	cr_expect_eq(u3, 3, "the three threads read (none read again)");
	cr_assert_str_eq(three, one);
	cr_assert_not_null(strstr(one, "{\"note\":\"in the middle\"}"));
	free(one);
	free(three);
	fclose(f);
	f = many_ranks(10000, 9000);
	cr_assert_null(read_with(f, 3, &r3, &u3));
	cr_assert_eq(r3, -MD_E_INPUT);
	cr_expect_eq(u3, 1, "read again by one thread");
	fclose(f);
	fflush(stderr);
	cr_assert_stderr_eq_str("mpi-deadlock: t.jsonl:9004:14: rank 9000: "
				"\"pid\" must be an integer\n");
}
