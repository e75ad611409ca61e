/*
 * mqd_mpich_test.c - the DLL host against a fake of MPICH's DLL
 * (tests/fakedll/fakempich.c) and a fake process whose memory holds
 * MPICH ch3's communicator: each MPICH trap of doc/mpich.md that lives
 * in the host.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/mqd_mpich.h"
#include "../collector/mqdhost.h"
#include "md.h"
#include "snap.h"
#include "support/snapbuild.h"

/* The layout the fake types give (offsets within their types). */
enum {
	COMM_CONTEXT_ID = 0x20, COMM_DEV = 0x100, DEV_VCRT = 0x8,
	COMM_LOCAL_GROUP = 0x40, VCRT_TABLE = 0x10, VC_PG_RANK = 0x4,
	GROUP_PMAP = 0x18, PMAP_SIZE = 16, PMAP_LPID = 0,
	CONTEXT_ID = 4,
	VCRT = 0x9000, VC = 0xa000, GROUP = 0xb000, PMAP = 0xc000,
};

/* World rank of each local rank of the fake's communicator. */
static const int world_of[3] = { 1, 2, 0 };

struct fake_proc {
	int rank;
	bool no_vcrt;		/* ch3's table absent: the local group */
};

static uint64_t comm_addr(int rank)
{
	return 0x7000 + 0x100 * (uint64_t)rank;	/* as fakempich.c */
}

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_proc *fp = ctx;
	uint64_t comm = comm_addr(fp->rank), v;

	if (addr == comm + COMM_CONTEXT_ID && len == 2) {
		uint16_t id = CONTEXT_ID;

		memcpy(buf, &id, 2);
		return 0;
	}
	if (len == 8 && addr == comm + COMM_DEV + DEV_VCRT)
		v = fp->no_vcrt ? 0 : VCRT;
	else if (len == 8 && addr >= VCRT + VCRT_TABLE &&
		 addr < VCRT + VCRT_TABLE + 3 * 8)
		v = VC + 0x10 * ((addr - VCRT - VCRT_TABLE) / 8);
	else if (len == 4 && addr >= VC && addr < VC + 0x30 &&
		 (addr - VC) % 0x10 == VC_PG_RANK)
		v = (uint64_t)world_of[(addr - VC) / 0x10];
	else if (len == 8 && addr == comm + COMM_LOCAL_GROUP)
		v = GROUP;
	else if (len == 8 && addr == GROUP + GROUP_PMAP)
		v = PMAP;
	else if (len == 4 && addr >= PMAP && addr < PMAP + 3 * PMAP_SIZE)
		v = (uint64_t)world_of[(addr - PMAP) / PMAP_SIZE];
	else
		return -MD_E_FAULT;
	memcpy(buf, &v, len);
	return 0;
}

static int fake_lookup(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	(void)name;
	if (addr)
		*addr = 0x4000;
	return 0;
}

static const struct mh_proc_ops fake_proc_ops = {
	.read = fake_read,
	.lookup = fake_lookup,
};

static const char *const type_names[] = {
	"MPIR_Comm_list", "MPIR_Comm", "MPIR_Request", "MPIR_Sendq",
	"MPIDI_CH3I_comm_t", "MPIDI_VCRT_t", "MPIDI_VC_t", "MPIR_Group",
	"MPII_Group_pmap_t",
};
#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static int fake_find(void *ctx, const char *name, void **type)
{
	(void)ctx;
	for (size_t i = 0; i < NTYPES; i++)
		if (!strcmp(name, type_names[i])) {
			*type = (void *)(uintptr_t)(i + 1);
			return 0;
		}
	return -MD_E_NOTYPES;
}

static int fake_size(void *ctx, void *type)
{
	(void)ctx;
	return !strcmp(type_names[(uintptr_t)type - 1], "MPII_Group_pmap_t")
		       ? PMAP_SIZE : 64;
}

static int fake_offset(void *ctx, void *type, const char *field)
{
	const char *t = type_names[(uintptr_t)type - 1];
	static const struct {
		const char *type, *field;
		int off;
	} f[] = {
		{ "MPIR_Comm", "context_id", COMM_CONTEXT_ID },
		{ "MPIR_Comm", "dev", COMM_DEV },
		{ "MPIR_Comm", "local_group", COMM_LOCAL_GROUP },
		{ "MPIDI_CH3I_comm_t", "vcrt", DEV_VCRT },
		{ "MPIDI_VCRT_t", "vcr_table", VCRT_TABLE },
		{ "MPIDI_VC_t", "pg_rank", VC_PG_RANK },
		{ "MPIR_Group", "lrank_to_lpid", GROUP_PMAP },
		{ "MPII_Group_pmap_t", "lpid", PMAP_LPID },
		{ "MPIR_Comm_list", "context_id", 0 },
		{ "MPIR_Request", "context_id", 0 },
		{ "MPIR_Sendq", "context_id", 0 },
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(t, f[i].type) && !strcmp(field, f[i].field))
			return f[i].off;
	return -1;
}

static const struct mh_types_ops fake_types = {
	.find = fake_find,
	.size = fake_size,
	.offset = fake_offset,
};

static struct mh_dll *open_dll(const char *name)
{
	const char *build = getenv("MD_BUILD");
	char *path = xasprintf("%s/tests/%s", build ? build : "build", name);
	struct mh_dll *dll = NULL;

	cr_assert_eq(mh_dll_open(path, &dll), 0, "cannot open %s", path);
	free(path);
	return dll;
}

/* Every rank of the fake's 3-rank job through one image. */
static struct snap *collect_job(bool no_vcrt)
{
	struct mh_dll *dll = open_dll("fakempich.so");
	struct snap *s = snap_new();
	struct fake_proc fp[3];
	struct mh_image *img = NULL;

	snap_set_nranks(s, 3);
	for (int r = 0; r < 3; r++)
		fp[r] = (struct fake_proc){ .rank = r, .no_vcrt = no_vcrt };
	cr_assert_eq(mh_image_new(dll, "app", &fake_types, NULL,
				  &fake_proc_ops, &fp[0], &img), 0);
	for (int r = 0; r < 3; r++)
		cr_assert_eq(mh_collect(img, &fake_proc_ops, &fp[r], r, s,
					&s->ranks[r]), 0);
	mh_image_free(img);
	mh_dll_free(dll);
	return s;
}

static const struct snap_op *op_of(const struct snap_rank *r,
				   enum snap_op_kind kind)
{
	for (int i = 0; i < r->nops; i++)
		if (r->ops[i].kind == kind)
			return &r->ops[i];
	cr_assert_fail("rank %d has no %s", r->rank, snap_op_kind_name(kind));
	return NULL;
}

Test(mqd_mpich, implementation_is_told_by_the_dll_version_and_file_name)
{
	struct mh_dll *dll = open_dll("fakempich.so");

	cr_expect_eq(mh_dll_impl(dll), MH_IMPL_MPICH);
	cr_expect_str_eq(mh_impl_name(MH_IMPL_MPICH), "MPICH");
	cr_expect_eq(mh_impl_guess("MPICH message queue support for MPICH "
				   "4.0.2 compiled on Nov 24 2026", "/x/y.so"),
		     MH_IMPL_MPICH);
	cr_expect_eq(mh_impl_guess("", "/opt/mpich/lib/libtvmpich.so.12"),
		     MH_IMPL_MPICH);
	cr_expect_eq(mh_impl_guess("Open MPI message queue support for "
				   "parallel debuggers compiled on", "/x.so"),
		     MH_IMPL_OMPI);
	cr_expect_eq(mh_impl_guess("", "/usr/lib/openmpi/libompi_dbg_msgq.so"),
		     MH_IMPL_OMPI);
	cr_expect_eq(mh_impl_guess("some DLL 1.0", "/x/libother.so"),
		     MH_IMPL_UNKNOWN);
	mh_dll_free(dll);
}

Test(mqd_mpich, type_sizes_fill_five_ints_and_not_the_field_after_them)
{
	struct snap *s = collect_job(false);

	/* The fake refuses the process (110) when its canary after the
	 * five ints was overwritten. */
	for (int r = 0; r < 3; r++)
		cr_expect_eq(s->ranks[r].queues, SNAP_QUEUES_OK,
			     "rank %d: %s", r, s->ranks[r].queues_reason ?
			     s->ranks[r].queues_reason : "");
	snap_free(s);
}

Test(mqd_mpich, communicator_is_named_by_context_id_not_its_address)
{
	struct snap *s = collect_job(false);

	/* Three ranks, three addresses, one communicator. */
	cr_assert_eq(s->ncomms, 1);
	cr_expect_eq(s->comms[0].id, CONTEXT_ID);
	cr_expect_str_eq(s->comms[0].name, "MPI_COMM_WORLD");
	snap_free(s);
}

/* MPICH's DLL names a communicator without a name "--unnamed--": the
 * report says "unnamed communicator", as for Open MPI. */
Test(mqd_mpich, the_dlls_unnamed_placeholder_is_no_name)
{
	struct snap *s;

	setenv("FAKE_MPICH_COMM_NAME", "--unnamed--", 1);
	s = collect_job(false);
	unsetenv("FAKE_MPICH_COMM_NAME");
	cr_assert_eq(s->ncomms, 1);
	cr_expect_str_eq(s->comms[0].name, "");
	snap_free(s);
}

Test(mqd_mpich, group_is_read_from_ch3_connection_table)
{
	struct snap *s = collect_job(false);

	cr_assert_eq(s->ncomms, 1);
	cr_assert_not_null(s->comms[0].group);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(s->comms[0].group[i], world_of[i]);
	snap_free(s);
}

Test(mqd_mpich, group_falls_back_to_local_group_without_ch3_table)
{
	struct snap *s = collect_job(true);

	cr_assert_eq(s->ncomms, 1);
	cr_assert_not_null(s->comms[0].group);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(s->comms[0].group[i], world_of[i]);
	snap_free(s);
}

Test(mqd_mpich, local_peer_is_placed_in_world_though_dll_says_minus_one)
{
	struct snap *s = collect_job(false);

	for (int r = 0; r < 3; r++) {
		const struct snap_op *recv = op_of(&s->ranks[r], SNAP_OP_RECV);
		const struct snap_op *send = op_of(&s->ranks[r], SNAP_OP_SEND);

		cr_expect_eq(recv->peer_local, (r + 2) % 3);
		cr_expect_eq(recv->peer_global, world_of[(r + 2) % 3]);
		cr_expect_eq(recv->tag, 7);
		cr_expect_eq(send->peer_global, world_of[(r + 1) % 3]);
		cr_expect_eq(send->actual_global, world_of[(r + 1) % 3]);
	}
	snap_free(s);
}

/* The snapshot holds what its reader takes: "any source" is -1. */
Test(mqd_mpich, any_source_receive_is_written_as_a_snapshot_that_reads_back)
{
	struct snap *s, *back;

	setenv("FAKE_MPICH_ANY_SOURCE", "1", 1);
	s = collect_job(false);
	unsetenv("FAKE_MPICH_ANY_SOURCE");
	for (int r = 0; r < 3; r++) {
		const struct snap_op *recv = op_of(&s->ranks[r], SNAP_OP_RECV);

		cr_expect_eq(recv->peer_local, -1);
		cr_expect_eq(recv->peer_global, -1);
		cr_expect_eq(recv->actual_local, -1);
		cr_expect_eq(recv->actual_global, -1);
	}
	back = sb_round_trip(s);
	cr_expect_not_null(back);
	snap_free(back);
	snap_free(s);
}

Test(mqd_mpich, lengths_are_element_counts_not_bytes)
{
	struct snap *s = collect_job(false);
	const struct snap_op *recv = op_of(&s->ranks[0], SNAP_OP_RECV);
	const struct snap_op *send = op_of(&s->ranks[0], SNAP_OP_SEND);

	cr_expect_eq(recv->length, 0);
	cr_expect_eq(recv->count, 5);
	cr_expect_null(recv->datatype);
	cr_expect_eq(recv->actual_length, 0, "-1 (unknown) is not a length");
	cr_expect_eq(send->count, 3);
	snap_free(s);
}

Test(mqd_mpich, extra_text_and_unexpected_queue_are_kept)
{
	struct snap *s = collect_job(false);
	const struct snap_op *send = op_of(&s->ranks[1], SNAP_OP_SEND);
	const struct snap_op *unx = op_of(&s->ranks[1], SNAP_OP_UNEXPECTED);

	cr_assert_eq(send->nextra, 1);
	cr_expect_str_eq(send->extra[0], "Non-blocking send");
	cr_expect(s->ranks[1].unexpected_available);
	cr_expect_eq(unx->peer_global, world_of[2]);
	cr_expect_eq(unx->tag, 1);
	snap_free(s);
}

Test(mqd_mpich, image_is_refused_when_a_type_is_missing_though_dll_says_ok)
{
	struct mh_dll *dll = open_dll("fakempich_notype.so");
	struct fake_proc fp = { 0 };
	struct mh_image *img = NULL;

	cr_expect_eq(mh_image_new(dll, "app", &fake_types, NULL,
				  &fake_proc_ops, &fp, &img), -MD_E_NOTYPES);
	cr_expect_null(img);
	mh_dll_free(dll);
}

Test(mqd_mpich, layout_needs_only_the_context_id)
{
	struct mm_layout l;

	cr_expect_eq(mm_layout_find(&fake_types, NULL, &l), 0);
	cr_expect_eq(l.comm_vcrt, COMM_DEV + DEV_VCRT);
	cr_expect_eq(l.pmap_size, PMAP_SIZE);
}
