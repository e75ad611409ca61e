/*
 * mqdhost_test.c - the DLL host against a fake DLL (tests/fakedll) and a
 * fake process: every Open MPI trap of notes/openmpi-mqd.md that lives in
 * the host.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../collector/mqdhost.h"
#include "md.h"
#include "snap.h"
#include "support/tracee.h"

enum { REQ_COMPLETE_OFF = 40, REQ_SEQ_OFF = 96 };

struct fake_proc {
	bool gone;
	/* What the receive's req_complete holds (0: a wait's sync object). */
	uint64_t recv_complete;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_proc *fp = ctx;
	uint64_t v;

	if (fp->gone)
		return -MD_E_GONE;
	if (len != 8)
		return -MD_E_FAULT;
	if (addr == 0x1000 + REQ_COMPLETE_OFF)
		v = 1;			/* really complete */
	else if (addr == 0x2000 + REQ_COMPLETE_OFF)
		v = fp->recv_complete ? fp->recv_complete
				      : 0x7ffd12345678; /* a wait's sync */
	else if (addr == 0x1000 + REQ_SEQ_OFF)
		v = 11;
	else if (addr == 0x2000 + REQ_SEQ_OFF)
		v = 12;
	else if (addr == 0x4000)
		v = 0x5000;		/* ompi_mpi_communicators */
	else
		return -MD_E_FAULT;
	memcpy(buf, &v, 8);
	return 0;
}

static int fake_lookup(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	if (!strcmp(name, "MPIR_Ignore_queues"))
		return -MD_E_NOSYM;
	if (addr)
		*addr = 0x4000;
	return 0;
}

static const struct mh_proc_ops fake_proc_ops = {
	.read = fake_read,
	.lookup = fake_lookup,
};

static int fake_find(void *ctx, const char *name, void **type)
{
	(void)ctx;
	if (!strcmp(name, "ompi_request_t"))
		*type = (void *)1;
	else if (!strcmp(name, "mca_pml_base_request_t"))
		*type = (void *)2;
	else
		return -MD_E_NOTYPES;
	return 0;
}

static int fake_size(void *ctx, void *type)
{
	(void)ctx;
	return type == (void *)1 ? 88 : 160;
}

static int fake_offset(void *ctx, void *type, const char *field)
{
	(void)ctx;
	if (type == (void *)1 && !strcmp(field, "req_complete"))
		return REQ_COMPLETE_OFF;
	if (type == (void *)2 && !strcmp(field, "req_sequence"))
		return REQ_SEQ_OFF;
	return -1;
}

static const struct mh_types_ops fake_types = {
	.find = fake_find,
	.size = fake_size,
	.offset = fake_offset,
};

static char *fake_dll_path(const char *name)
{
	const char *build = getenv("MD_BUILD");

	return xasprintf("%s/tests/%s", build ? build : "build", name);
}

static struct mh_dll *open_fake(void)
{
	char *path = fake_dll_path("fakedll.so");
	struct mh_dll *dll = NULL;

	cr_assert_eq(mh_dll_open(path, &dll), 0, "cannot open %s", path);
	free(path);
	return dll;
}

static void collect_once(struct snap *s, int rank, struct fake_proc *fp)
{
	struct mh_dll *dll = open_fake();
	struct mh_image *img = NULL;

	cr_assert_eq(mh_image_new(dll, "app", &fake_types, NULL,
				  &fake_proc_ops, fp, &img), 0);
	cr_assert_eq(mh_collect(img, &fake_proc_ops, fp, rank, s,
				&s->ranks[rank]), 0);
	mh_image_free(img);
	mh_dll_free(dll);
}

Test(mqdhost, reads_wildcards_as_signed_any_source_and_any_tag)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };
	struct snap_op *recv;

	snap_set_nranks(s, 2);
	collect_once(s, 0, &fp);
	cr_assert_eq(s->ranks[0].nops, 2);
	recv = &s->ranks[0].ops[1];
	cr_assert_eq(recv->kind, SNAP_OP_RECV);
	cr_assert_eq(recv->peer_local, -1);
	cr_assert_eq(recv->peer_global, -1);
	cr_assert(recv->any_tag);
	snap_free(s);
}

Test(mqdhost, zeroes_operation_before_each_call_so_receives_have_no_stale_actuals)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };
	struct snap_op *send, *recv;

	snap_set_nranks(s, 2);
	collect_once(s, 0, &fp);
	send = &s->ranks[0].ops[0];
	recv = &s->ranks[0].ops[1];
	cr_assert_eq(send->actual_tag, 7);
	cr_assert_eq(recv->actual_tag, 0, "stale actual_tag %d", recv->actual_tag);
	cr_assert_eq(recv->actual_length, 0);
	cr_assert_eq(recv->nextra, 1, "extra lines %d", recv->nextra);
	snap_free(s);
}

Test(mqdhost, corrects_false_complete_of_request_being_waited_on)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };
	struct snap_op *send, *recv;

	snap_set_nranks(s, 2);
	collect_once(s, 0, &fp);
	send = &s->ranks[0].ops[0];
	recv = &s->ranks[0].ops[1];
	cr_assert_eq(send->request, 0x1000);
	cr_assert_eq(send->status, SNAP_ST_COMPLETE, "really complete send");
	cr_assert_not(send->status_corrected);
	cr_assert_eq(recv->request, 0x2000);
	cr_assert_eq(recv->status, SNAP_ST_PENDING);
	cr_assert(recv->status_corrected);
	cr_assert_eq(send->sequence, 11);
	cr_assert_eq(recv->sequence, 12);
	snap_free(s);
}

/* Open MPI's DLL calls a receive "matched" once its status has a tag,
 * also when its message has all arrived and nobody waited for it yet (an
 * MPI_Irecv before a blocking call): complete, not in transfer.  One
 * still receiving (req_complete 0, REQUEST_PENDING) or being waited on
 * (a sync object) stays matched. */
Test(mqdhost, a_matched_receive_that_completed_is_complete)
{
	static const uint64_t words[] = { 1, 2, 0x7ffd12345678 };
	static const int want[] = { SNAP_ST_COMPLETE, SNAP_ST_MATCHED,
				    SNAP_ST_MATCHED };

	setenv("FAKE_MATCHED_RECV", "1", 1);
	for (int i = 0; i < 3; i++) {
		struct snap *s = snap_new();
		struct fake_proc fp = { .recv_complete = words[i] };
		struct snap_op *recv;

		snap_set_nranks(s, 2);
		collect_once(s, 0, &fp);
		recv = &s->ranks[0].ops[1];
		cr_expect_eq(recv->status, want[i], "req_complete %#llx: %d",
			     (unsigned long long)words[i], recv->status);
		cr_expect_not(recv->status_corrected);
		cr_expect_eq(recv->actual_tag, 3);
		snap_free(s);
	}
	unsetenv("FAKE_MATCHED_RECV");
}

Test(mqdhost, answers_null_out_pointer_lookups_and_not_found_for_ignore_queues)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };

	/* The fake DLL passes NULL out-pointers as Open MPI's does and gives
	 * up unless MPIR_Ignore_queues is "not found". */
	snap_set_nranks(s, 1);
	collect_once(s, 0, &fp);
	cr_assert_eq(s->ranks[0].queues, SNAP_QUEUES_OK);
	snap_free(s);
}

Test(mqdhost, refreshes_communicator_list_and_skips_comm_null)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };
	struct snap_comm *c;

	snap_set_nranks(s, 2);
	collect_once(s, 1, &fp);
	cr_assert_eq(s->ranks[1].nmembers, 1, "members %d",
		     s->ranks[1].nmembers);
	c = &s->comms[s->ranks[1].members[0].comm];
	cr_assert_str_eq(c->name, "MPI_COMM_WORLD");
	cr_assert_eq(c->size, 2);
	cr_assert_not_null(c->group);
	cr_assert_eq(c->group[1], 1);
	cr_assert_not(s->ranks[1].unexpected_available);
	snap_free(s);
}

Test(mqdhost, sets_up_process_afresh_for_each_collection)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { 0 };
	struct mh_dll *dll = open_fake();
	struct mh_image *img = NULL;

	snap_set_nranks(s, 2);
	cr_assert_eq(mh_image_new(dll, "app", &fake_types, NULL,
				  &fake_proc_ops, &fp, &img), 0);
	/* The fake DLL takes the rank at process setup: a host that reused
	 * the first look's process info would report rank 0 twice. */
	cr_assert_eq(mh_collect(img, &fake_proc_ops, &fp, 0, s, &s->ranks[0]), 0);
	cr_assert_eq(mh_collect(img, &fake_proc_ops, &fp, 1, s, &s->ranks[1]), 0);
	cr_assert_eq(s->ranks[0].members[0].local_rank, 0);
	cr_assert_eq(s->ranks[1].members[0].local_rank, 1);
	cr_assert_eq(s->ncomms, 1, "world merged across ranks");
	mh_image_free(img);
	mh_dll_free(dll);
	snap_free(s);
}

Test(mqdhost, reports_gone_when_process_vanishes_mid_walk)
{
	struct snap *s = snap_new();
	struct fake_proc fp = { .gone = true };
	struct mh_dll *dll = open_fake();
	struct mh_image *img = NULL;
	struct fake_proc live = { 0 };

	snap_set_nranks(s, 1);
	cr_assert_eq(mh_image_new(dll, "app", &fake_types, NULL,
				  &fake_proc_ops, &live, &img), 0);
	cr_assert_eq(mh_collect(img, &fake_proc_ops, &fp, 0, s, &s->ranks[0]),
		     -MD_E_GONE);
	mh_image_free(img);
	mh_dll_free(dll);
	snap_free(s);
}

Test(mqdhost, refuses_dll_of_incompatible_interface_version)
{
	char *path = fake_dll_path("fakedll_v9.so");
	struct mh_dll *dll = NULL;

	cr_assert_eq(mh_dll_open(path, &dll), -MD_E_DLL);
	free(path);
}

Test(mqdhost, refuses_file_that_is_not_a_dll)
{
	struct mh_dll *dll = NULL;
	char path[] = "/tmp/md-notdll-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "hello", 5), 5);
	close(fd);
	cr_assert_eq(mh_dll_open(path, &dll), -MD_E_DLL);
	unlink(path);
}

Test(mqdhost, refuses_missing_dll_with_reason)
{
	cr_assert_eq(mh_dll_check("/nonexistent/libompi_dbg_msgq.so", false),
		     -MD_E_DLL);
}

Test(mqdhost, refuses_dll_writable_by_others_unless_chosen_with_dll_option)
{
	char dir[] = "/tmp/md-dll-XXXXXX";
	char *path;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	path = xasprintf("%s/lib.so", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	chmod(path, 0666);
	cr_assert_eq(mh_dll_check(path, false), -MD_E_DLL);
	cr_assert_eq(mh_dll_check(path, true), 0);
	chmod(path, 0644);
	cr_assert_eq(mh_dll_check(path, false), 0);
	unlink(path);
	rmdir(dir);
	free(path);
}

Test(mqdhost, refuses_dll_owned_by_another_user)
{
	char dir[] = "/tmp/md-dll-XXXXXX";
	char *path;
	FILE *f;

	if (geteuid() != 0)
		cr_skip_test("needs root to give the file to another user");
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	path = xasprintf("%s/lib.so", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	chmod(path, 0644);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_assert_eq(mh_dll_check(path, false), -MD_E_DLL);
	unlink(path);
	rmdir(dir);
	free(path);
}

Test(mqdhost, refuses_relative_dll_name_from_the_job)
{
	cr_assert_eq(mh_dll_check("libompi_dbg_msgq.so", false), -MD_E_DLL);
}

/* ---- the DLL is opened once: the file checked is the file loaded ---- */

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	cr_assert(in && out, "copy %s to %s", from, to);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

struct swap {
	const char *path;	/* the DLL's path */
	const char *with;	/* what to put there */
	bool done;
};

/* Between the check and the load: another file takes the DLL's name. */
static void swap_dll(void *ctx)
{
	struct swap *sw = ctx;
	char *tmp = xasprintf("%s.new", sw->path);

	copy_file(sw->with, tmp);
	chmod(tmp, 0644);
	cr_assert_eq(rename(tmp, sw->path), 0);
	free(tmp);
	sw->done = true;
}

Test(mqdhost, dll_swapped_between_check_and_load_is_not_the_one_loaded)
{
	char dir[] = "/tmp/md-swap-XXXXXX";
	char *good = fake_dll_path("fakedll.so");
	char *bad = fake_dll_path("fakedll_v9.so");
	struct mh_dll *dll = NULL, *again = NULL;
	struct tr_capture cap;
	struct swap sw;
	struct mh_load_hooks hooks = { swap_dll, &sw };
	char *path, *err;
	int r;

	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	path = xasprintf("%s/libompi_dbg_msgq.so", dir);
	copy_file(good, path);
	chmod(path, 0644);
	/* The swapped-in file is a DLL of another interface version: had it
	 * been loaded, the load would fail with "interface version 9". */
	sw = (struct swap){ path, bad, false };
	tr_stderr_begin(&cap);
	r = mh_dll_load(path, false, &hooks, &dll);
	err = tr_stderr_end(&cap);
	cr_expect(sw.done, "the hook ran");
	cr_expect_eq(r, 0, "stderr: %s", err);
	cr_expect_str_empty(err);
	cr_expect_str_eq(mh_dll_version(dll), "Open MPI message queue support "
			 "for parallel debuggers (fake DLL 1.0)");
	free(err);
	/* Loading by the path now gets the swapped-in file, refused: the
	 * test would see the difference. */
	tr_stderr_begin(&cap);
	r = mh_dll_load(path, false, NULL, &again);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_DLL);
	cr_expect_not_null(strstr(err, "interface version 9"), "stderr: %s",
			   err);
	free(err);
	mh_dll_free(dll);
	unlink(path);
	rmdir(dir);
	free(path);
	free(good);
	free(bad);
}

Test(mqdhost, dll_load_refuses_a_file_owned_by_another_user)
{
	char dir[] = "/tmp/md-own-XXXXXX";
	char *good = fake_dll_path("fakedll.so"), *path;
	struct mh_dll *dll = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	if (geteuid() != 0)
		cr_skip_test("needs root to give the file to another user");
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	path = xasprintf("%s/lib.so", dir);
	copy_file(good, path);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	tr_stderr_begin(&cap);
	r = mh_dll_load(path, false, NULL, &dll);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_DLL);
	cr_expect_not_null(strstr(err, "owned by uid 65534"), "stderr: %s", err);
	free(err);
	unlink(path);
	rmdir(dir);
	free(path);
	free(good);
}
