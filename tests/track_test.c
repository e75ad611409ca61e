/*
 * track_test.c - the collector's reader of libmdtrack.so's table
 * (collector/track.c, layout in include/mdtrack.h) on a fake target: a
 * table written here as the library writes it, at the address of the
 * md_track_table symbol of a small ELF built at test time, whose
 * functions give the call sites file and line.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/track.h"
#include "md.h"
#include "mdtrack.h"
#include "support/elf_fixture.h"

#define BIAS 0x7f1200000000ULL
#define COMM 0x5000
#define REQ_A 0x7f0000123400ULL
#define REQ_B 0x7f0000127800ULL
/* Where the fixture's program keeps its request variables. */
#define VARS 0x7ffd00001000ULL
#define NVARS 32

/* MPICH 4.0.2's communicator pools in part (mpich_handle.c reads these
 * fields by name), compiled both here and into the fixture. */
#define MPICH_TYPES                                                        \
	typedef struct MPIR_Comm {                                         \
		int handle;                                                \
		int ref_count;                                             \
		unsigned short context_id;                                 \
		char rest[54];                                             \
	} MPIR_Comm;                                                       \
	typedef struct MPIR_Object_alloc_t {                               \
		void *avail;                                               \
		int initialized;                                           \
		void **indirect;                                           \
		int indirect_size;                                         \
		int num_allocated;                                         \
		int num_avail;                                             \
		int kind;                                                  \
		int size;                                                  \
		void *direct;                                              \
		int direct_size;                                           \
		void *lock;                                                \
	} MPIR_Object_alloc_t;
#define STR2(x) #x
#define STR(x) STR2(x)
#define MPICH_DIRECT 0x10000ULL

MPICH_TYPES

/* Line 2 and 3 of the fixture: the call sites. */
static const char fixture_fmt[] =
	"char md_track_table[%zu] __attribute__((aligned(64)));\n"
	"int site_two(void) { return 2; }\n"
	"int site_three(void) { return 3; }\n"
	STR(MPICH_TYPES) "\n"
	"__attribute__((visibility(\"hidden\"))) MPIR_Comm MPIR_Comm_builtin[3];\n"
	"__attribute__((visibility(\"hidden\"))) MPIR_Object_alloc_t MPIR_Comm_mem;\n";

struct fx {
	char *dir, *lib;
	struct es_cache *ec;
	struct es_view *v;
	struct dl_cache *lines;
	struct snap *s;
	struct mdt_table *tb;
	uint64_t addr, site2, site3;	/* runtime addresses */
	struct snap_op ops[4];
	struct snap_rank r;
	bool noted;
	uint64_t vars[NVARS];	/* the rank's request variables at VARS */
	int nvars;
	/* An MPICH rank (fx_mpich): its library's types and pools. */
	struct dt_index *types;
	MPIR_Comm builtin[3], direct[8];
	MPIR_Object_alloc_t pool;
	struct snap_member members[2];
};

static void fx_init(struct fx *f)
{
	char src[sizeof(fixture_fmt) + 512];

	memset(f, 0, sizeof(*f));
	snprintf(src, sizeof(src), fixture_fmt, sizeof(struct mdt_table));
	f->dir = ef_tmpdir();
	f->lib = ef_cc(f->dir, "libsite.so", src, "-g -O0 -fPIC -shared",
		       NULL);
	cr_assert_not_null(f->lib, "cc builds the fixture");
	f->ec = es_cache_new();
	f->v = es_view_new(f->ec);
	cr_assert_eq(es_view_add(f->v, f->lib, BIAS), 0);
	cr_assert_eq(es_proc_lookup(f->v, MDT_SYMBOL, &f->addr), 0);
	cr_assert_eq(es_proc_lookup(f->v, "site_two", &f->site2), 0);
	cr_assert_eq(es_proc_lookup(f->v, "site_three", &f->site3), 0);
	/* A return address points after the call: the reader looks up
	 * ret - 1, still in the function. */
	f->site2 += 1;
	f->site3 += 1;
	f->lines = dl_cache_new(true);
	f->s = snap_new();
	f->tb = calloc(1, sizeof(*f->tb));
	*f->tb = (struct mdt_table){
		.magic = MDT_MAGIC, .version = MDT_VERSION,
		.size = sizeof(struct mdt_table),
		.post_size = sizeof(struct mdt_post),
		.rec_size = sizeof(struct mdt_rec),
		.coll_size = sizeof(struct mdt_coll),
		.nbuckets = MDT_NBUCKETS, .ways = MDT_WAYS,
		.ninits = MDT_NINITS, .ncolls = MDT_NCOLLS,
		.any_source = -1, .any_tag = -1, .proc_null = -2, .root = -4,
		.handle_size = 8,
	};
	f->r.ops = f->ops;
}

/* A pending receive of request req. */
static void fx_pending(struct fx *f, uint64_t req)
{
	struct snap_op *op = &f->ops[f->r.nops++];

	op->kind = SNAP_OP_RECV;
	op->status = SNAP_ST_PENDING;
	op->request = req;
}

static int fx_read(struct fx *f)
{
	struct tgt *t = tgt_fake_new(4242);
	struct trk_ctx x = { t, f->v, f->lines, f->types, f->s, 0, &f->noted };
	uint64_t at;
	int rc;

	tgt_fake_add_region(t, f->addr, f->tb, sizeof(*f->tb));
	tgt_fake_add_region(t, VARS, f->vars, sizeof(f->vars));
	if (f->types) {
		cr_assert_eq(es_proc_lookup(f->v, "MPIR_Comm_builtin", &at), 0);
		tgt_fake_add_region(t, at, f->builtin, sizeof(f->builtin));
		cr_assert_eq(es_proc_lookup(f->v, "MPIR_Comm_mem", &at), 0);
		tgt_fake_add_region(t, at, &f->pool, sizeof(f->pool));
		tgt_fake_add_region(t, MPICH_DIRECT, f->direct,
				    sizeof(f->direct));
	}
	rc = trk_read(&x, &f->r);
	tgt_free(t);
	return rc;
}

static void fx_fini(struct fx *f)
{
	free(f->r.track);
	free(f->tb);
	dt_index_free(f->types);
	snap_free(f->s);
	dl_cache_free(f->lines);
	es_view_free(f->v);
	es_cache_free(f->ec);
	free(f->lib);
	ef_rmtree(f->dir);
}

/* As the library writes a posts record (its way chosen here) for a post
 * through a new request variable, which then holds req. */
static struct mdt_post *put_post(struct fx *f, int way, uint64_t req,
				 int call, uint64_t comm, int peer, int tag,
				 uint64_t ret)
{
	uint64_t loc = VARS + 8 * (uint64_t)f->nvars;
	unsigned hsize = f->tb->handle_size;
	struct mdt_post *p = &f->tb->posts[mdt_var_bucket(loc, hsize)][way];

	cr_assert_lt(f->nvars, NVARS);
	f->vars[f->nvars++] = req;
	*p = (struct mdt_post){ loc, comm, peer, tag,
				mdt_var_site(loc, hsize, ret, call) };
	return p;
}

static void put_init(struct mdt_table *tb, uint64_t ticket, uint64_t req,
		     int call, int peer, int tag, uint64_t ret)
{
	tb->inits[ticket % MDT_NINITS] = (struct mdt_rec){
		.stamp = ticket + 1, .request = req, .comm = COMM,
		.datatype = 0x7000, .ret = ret, .call = call, .peer = peer,
		.tag = tag, .count = 4,
	};
	if (tb->inits_head < ticket + 1)
		tb->inits_head = ticket + 1;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = s ? strlen(s) : 0, m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

Test(track, site_word_keeps_return_address_and_call)
{
	uint64_t ret = 0x7fffdeadbeefULL;
	uint64_t site = mdt_site(REQ_A, ret, MDT_MPI_Irecv);

	cr_expect_eq(MDT_SITE_RET(site), ret);
	cr_expect_eq(MDT_SITE_CALL(site), MDT_MPI_Irecv);
	cr_expect_eq(MDT_SITE_CHECK(site), mdt_check(REQ_A));
	cr_expect_neq(mdt_check(REQ_A), mdt_check(REQ_B));
	cr_expect_neq(site, 0);
	cr_expect_lt(mdt_bucket(REQ_A), MDT_NBUCKETS);
	cr_expect_lt(mdt_bucket(~0ULL), MDT_NBUCKETS);
}

/* An array of requests gets neighbouring buckets, one each (a loop
 * over it writes few cache lines and pages); a variable's check byte
 * tells apart variables that share a bucket. */
Test(track, variables_of_an_array_get_neighbouring_buckets)
{
	uint64_t base = 0x7ffd12345000ULL, lo = ~0ULL, hi = 0;
	bool seen[MDT_NBUCKETS] = { false };

	for (int k = 0; k < 64; k++) {
		unsigned b = mdt_var_bucket(base + 8 * (uint64_t)k, 8);

		cr_expect_not(seen[b], "variable %d shares bucket %u", k, b);
		seen[b] = true;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	cr_expect_lt(hi - lo, 64);
	/* 4-byte handles (MPICH): 4 bytes apart, still one bucket each. */
	cr_expect_neq(mdt_var_bucket(base, 4), mdt_var_bucket(base + 4, 4));
	/* 16 KiB apart: the same low bits, another bucket or check byte. */
	for (uint64_t d = 1; d < 64; d++) {
		uint64_t other = base + (d << 14);

		cr_expect(mdt_var_bucket(other, 8) != mdt_var_bucket(base, 8) ||
				  mdt_var_check(other, 8) !=
					  mdt_var_check(base, 8),
			  "%#llx and %#llx", (unsigned long long)base,
			  (unsigned long long)other);
	}
}

Test(track, pending_request_is_joined_to_the_call_that_posted_it)
{
	struct fx f;
	const struct snap_track_rec *t;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	fx_pending(&f, REQ_A);
	f.ops[0].datatype = "MPI_INT";
	f.ops[0].count = 6;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect(f.r.tracked);
	cr_assert_eq(f.r.ntrack, 1);
	t = &f.r.track[0];
	cr_expect_eq(t->kind, SNAP_TRACK_POST);
	cr_expect_str_eq(t->call, "MPI_Irecv");
	cr_expect_eq(t->request, REQ_A);
	cr_expect_eq(t->comm_handle, COMM);
	cr_expect_null(t->comm_name);
	cr_expect_eq(t->peer, 0);
	cr_expect_eq(t->tag, 1);
	cr_expect_eq(t->ret, f.site2);
	cr_expect_eq(t->line, 2);
	cr_expect(ends_with(t->file, ".c"), "file %s", t->file);
	cr_expect_str_eq(t->func, "site_two");
	/* Not in the post: the pending operation's, read from the request. */
	cr_expect_eq(t->count, 6);
	cr_expect_str_eq(t->datatype_name, "MPI_INT");
	cr_expect_eq(f.r.track_dropped, 0);
	fx_fini(&f);
}

Test(track, post_in_the_second_way_of_its_bucket_is_found)
{
	struct fx f;

	fx_init(&f);
	put_post(&f, 0, REQ_A ^ 0x10, MDT_MPI_Isend, COMM, 1, 5, f.site2);
	put_post(&f, 1, REQ_A, MDT_MPI_Isend, COMM, 2, 7, f.site3);
	fx_pending(&f, REQ_A);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].request, REQ_A);
	cr_expect_eq(f.r.track[0].peer, 2);
	cr_expect_eq(f.r.track[0].line, 3);
	fx_fini(&f);
}

Test(track, post_being_written_or_torn_reads_as_absent)
{
	struct fx f;
	struct mdt_post *p;

	fx_init(&f);
	/* Stopped between its fields: site still 0. */
	p = put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	p->site = 0;
	/* Two threads racing on one bucket: the site of the other call. */
	p = put_post(&f, 0, REQ_B, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	p->site = mdt_var_site(p->loc ^ 0x100000, 8, f.site3, MDT_MPI_Isend);
	fx_pending(&f, REQ_A);
	fx_pending(&f, REQ_B);
	cr_assert_eq(fx_read(&f), 0);
	cr_expect(f.r.tracked);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);
}

Test(track, start_brings_the_latest_creation_of_its_request)
{
	struct fx f;
	const struct snap_track_rec *t;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Start, 0, MDT_NONE, MDT_NONE,
		 f.site3);
	put_init(f.tb, 0, REQ_A, MDT_MPI_Recv_init, 1, 10, f.site2);
	put_init(f.tb, 1, REQ_B, MDT_MPI_Send_init, 1, 11, f.site2);
	put_init(f.tb, 2, REQ_A, MDT_MPI_Send_init, 3, 12, f.site2);
	fx_pending(&f, REQ_A);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	t = &f.r.track[0];
	cr_expect_eq(t->kind, SNAP_TRACK_POST);
	cr_expect_str_eq(t->call, "MPI_Start");
	cr_expect_eq(t->peer, SNAP_TRACK_NONE);
	cr_expect_eq(t->tag, SNAP_TRACK_NONE);
	cr_expect_eq(t->line, 3);
	t = &f.r.track[1];
	cr_expect_eq(t->kind, SNAP_TRACK_INIT);
	cr_expect_str_eq(t->call, "MPI_Send_init");
	cr_expect_eq(t->tag, 12);
	cr_expect_eq(t->peer, 3);
	cr_expect_eq(t->count, 4);
	cr_expect_eq(t->seq, 3);
	fx_fini(&f);
}

Test(track, init_slot_of_an_earlier_turn_is_stale)
{
	struct fx f;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Start, 0, MDT_NONE, MDT_NONE,
		 f.site3);
	/* Ticket 5 of the turn before: its slot's ticket of this turn was
	 * taken (head) but not yet written. */
	put_init(f.tb, 5, REQ_A, MDT_MPI_Send_init, 1, 10, f.site2);
	f.tb->inits_head = MDT_NINITS + 6;
	fx_pending(&f, REQ_A);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Start");
	fx_fini(&f);
}

Test(track, special_peer_and_tag_values_are_made_portable)
{
	struct fx f;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, -1, -1, f.site2);
	put_post(&f, 0, REQ_B, MDT_MPI_Isend, COMM, -2, 4, f.site2);
	fx_pending(&f, REQ_A);
	fx_pending(&f, REQ_B);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	cr_expect_eq(f.r.track[0].peer, SNAP_TRACK_ANY);
	cr_expect_eq(f.r.track[0].tag, SNAP_TRACK_ANY);
	cr_expect_eq(f.r.track[1].peer, SNAP_TRACK_PROC_NULL);
	cr_expect_eq(f.r.track[1].tag, 4);
	fx_fini(&f);
}

Test(track, nonblocking_collective_post_and_last_collective_are_read)
{
	struct fx f;
	struct mdt_coll *c;
	int post = -1, coll = -1;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Ireduce, COMM, 1, MDT_NONE,
		 f.site2);
	c = &f.tb->colls[17];
	*c = (struct mdt_coll){ .stamp = 4, .comm = COMM, .datatype = 0x7000,
				.op = 0x8000, .ret = f.site2, .ncalls = 9,
				.call = MDT_MPI_Ireduce, .root = 1,
				.count = 3 };
	f.tb->colls_head = 4;
	fx_pending(&f, REQ_A);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	for (int i = 0; i < 2; i++)
		*(f.r.track[i].kind == SNAP_TRACK_POST ? &post : &coll) = i;
	cr_assert(post >= 0 && coll >= 0);
	cr_expect_str_eq(f.r.track[post].call, "MPI_Ireduce");
	cr_expect_eq(f.r.track[post].peer, 1);
	cr_expect_eq(f.r.track[post].tag, SNAP_TRACK_NONE);
	cr_expect_eq(f.r.track[coll].peer, 1);
	cr_expect_eq(f.r.track[coll].count, 3);
	cr_expect_eq(f.r.track[coll].op, 0x8000);
	cr_expect_eq(f.r.track[coll].ncalls, 9);
	cr_expect_eq(f.r.track[coll].line, 2);
	fx_fini(&f);
}

Test(track, dropped_counts_every_part)
{
	struct fx f;

	fx_init(&f);
	f.tb->posts_dropped = 5;
	f.tb->inits_head = MDT_NINITS + 2;
	f.tb->coll_dropped = 1;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect(f.r.tracked);
	cr_expect_eq(f.r.track_dropped, 8);
	fx_fini(&f);
}

Test(track, table_of_another_version_is_left_unread_with_one_note)
{
	struct fx f;

	fx_init(&f);
	f.tb->version = 1;
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	fx_pending(&f, REQ_A);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_not(f.r.tracked);
	cr_expect_eq(f.r.ntrack, 0);
	cr_assert_eq(f.s->nnotes, 1);
	cr_expect(strstr(f.s->notes[0], "version 1"), "%s", f.s->notes[0]);
	fx_fini(&f);
}

Test(track, rank_without_the_library_stays_untracked)
{
	struct fx f;
	struct es_view *empty;
	struct tgt *t = tgt_fake_new(4243);
	struct trk_ctx x;

	fx_init(&f);
	empty = es_view_new(f.ec);
	x = (struct trk_ctx){ t, empty, f.lines, NULL, f.s, 0, &f.noted };
	fx_pending(&f, REQ_A);
	cr_assert_eq(trk_read(&x, &f.r), 0);
	cr_expect_not(f.r.tracked);
	cr_expect_eq(f.s->nnotes, 0);
	tgt_free(t);
	es_view_free(empty);
	fx_fini(&f);
}

/* MPICH's DLL gives no request: a pending receive with its arguments. */
static struct snap_op *fx_pending_args(struct fx *f, enum snap_op_kind kind,
				       int peer, int tag)
{
	struct snap_op *op = &f->ops[f->r.nops++];

	op->kind = kind;
	op->status = SNAP_ST_PENDING;
	op->peer_local = peer;
	op->tag = tag;
	op->any_tag = tag < 0;
	return op;
}

Test(track, operation_without_request_is_joined_to_the_one_post_of_its_arguments)
{
	struct fx f;
	struct snap_op *recv, *send;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 1, 1, f.site2);
	put_post(&f, 0, REQ_B, MDT_MPI_Issend, COMM, 1, 1, f.site3);
	recv = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	send = fx_pending_args(&f, SNAP_OP_SEND, 1, 1);
	f.r.mpi_call = "MPI_Waitall";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(recv->request, REQ_A);
	cr_expect_eq(send->request, REQ_B);
	cr_assert_eq(f.r.ntrack, 2);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Irecv");
	cr_expect_eq(f.r.track[0].line, 2);
	cr_expect_str_eq(f.r.track[1].call, "MPI_Issend");
	fx_fini(&f);
}

Test(track, operation_without_request_stays_unjoined_when_posts_are_ambiguous)
{
	struct fx f;
	struct snap_op *a, *b, *c;

	fx_init(&f);
	/* Two receives from rank 1 with tag 1 (two handles). */
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 1, 1, f.site2);
	put_post(&f, 0, REQ_B, MDT_MPI_Irecv, COMM, 1, 1, f.site3);
	/* Any source and any tag are not a given source or tag. */
	put_post(&f, 0, REQ_A ^ 0x40, MDT_MPI_Irecv, COMM, -1, -1,
		 f.site2);
	a = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	b = fx_pending_args(&f, SNAP_OP_RECV, 2, -1);
	c = fx_pending_args(&f, SNAP_OP_RECV, -1, -1);
	f.r.mpi_call = "MPI_Wait";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(a->request, 0);
	cr_expect_eq(b->request, 0);
	cr_expect_eq(c->request, REQ_A ^ 0x40);
	cr_expect_eq(f.r.ntrack, 1);
	fx_fini(&f);
}

/* A variable whose request completed through it holds
 * MPI_REQUEST_NULL: its record is no post of anything pending, even of
 * an operation with its arguments (a loop's last turn, its receive now
 * posted by an untracked call). */
Test(track, variable_holding_request_null_joins_nothing)
{
	struct fx f;
	struct snap_op *a;

	fx_init(&f);
	f.tb->request_null = 0x2c000000;
	f.tb->handle_size = 4;
	put_post(&f, 0, 0x2c000000, MDT_MPI_Irecv, COMM, 1, 1, f.site2);
	a = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	f.r.mpi_call = "MPI_Wait";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(a->request, 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);
}

/* MPICH's handles are ints: its predefined datatypes and operations are
 * named by its constants, an unknown one (a derived datatype) not. */
Test(track, mpich_predefined_datatype_and_operation_are_named)
{
	struct fx f;
	const struct snap_track_rec *t;

	fx_init(&f);
	f.tb->handle_size = 4;
	f.tb->colls[3] = (struct mdt_coll){ .stamp = 1, .comm = 0x44000000,
					    .datatype = 0x4c00080b,
					    .op = 0x58000003, .ret = f.site2,
					    .ncalls = 1,
					    .call = MDT_MPI_Allreduce,
					    .count = 2 };
	f.tb->colls[4] = (struct mdt_coll){ .stamp = 2, .comm = 0x84000002,
					    .datatype = 0xcc000001,
					    .op = 0x5800000c, .ret = f.site2,
					    .ncalls = 1, .call = MDT_MPI_Reduce,
					    .count = 1 };
	f.tb->colls_head = 2;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	t = &f.r.track[0];
	if (strcmp(t->call, "MPI_Allreduce"))
		t = &f.r.track[1];
	cr_expect_str_eq(t->datatype_name, "MPI_DOUBLE");
	cr_expect_str_eq(t->op_name, "MPI_SUM");
	t = t == &f.r.track[0] ? &f.r.track[1] : &f.r.track[0];
	cr_expect_null(t->datatype_name);
	cr_expect_str_eq(t->op_name, "MPI_MAXLOC");
	fx_fini(&f);
}

Test(track, predefined_communicators_are_named_by_the_handles_in_the_table)
{
	struct fx f;

	fx_init(&f);
	f.tb->comm_world = 0x44000000;
	f.tb->comm_self = 0x44000001;
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, 0x44000000, 1, 1, f.site2);
	put_post(&f, 0, REQ_B, MDT_MPI_Irecv, 0x44000001, 0, 1, f.site2);
	fx_pending(&f, REQ_A);
	fx_pending(&f, REQ_B);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	cr_expect_str_eq(f.r.track[0].comm_name, "MPI_COMM_WORLD");
	cr_expect_str_eq(f.r.track[1].comm_name, "MPI_COMM_SELF");
	fx_fini(&f);
}

/*
 * An MPICH rank (integer handles) in MPI_COMM_WORLD (context id 0) and a
 * duplicate of it (context id 496, direct handle 0x84000002 as in a real
 * MPICH 4.0.2 run), which the DLL gives as comm indexes 0 and 1.
 */
static int fx_mpich(struct fx *f)
{
	const char *src;
	int world[2] = { 0, 1 }, w, dup;

	cr_assert_eq(dt_index_open(f->lib, &f->types, &src), 0);
	f->tb->handle_size = 4;
	f->tb->comm_world = 0x44000000;
	f->tb->comm_self = 0x44000001;
	f->builtin[0] = (MPIR_Comm){ .handle = 0x44000000, .context_id = 0 };
	f->direct[2] = (MPIR_Comm){ .handle = (int)0x84000002,
				    .context_id = 496 };
	f->pool = (MPIR_Object_alloc_t){ .kind = 1, .size = sizeof(MPIR_Comm),
					 .direct = (void *)MPICH_DIRECT,
					 .direct_size = 8 };
	w = snap_comm_intern(f->s, 0, "MPI_COMM_WORLD", 2, world);
	dup = snap_comm_intern(f->s, 496, "dup", 2, world);
	f->members[0] = (struct snap_member){ w, 0 };
	f->members[1] = (struct snap_member){ dup, 0 };
	f->r.members = f->members;
	f->r.nmembers = 2;
	return dup;
}

Test(track, mpich_handle_names_the_communicator_of_a_post_and_a_collective)
{
	struct fx f;
	struct mdt_coll *c;
	int dup, post = -1, coll = -1;

	fx_init(&f);
	dup = fx_mpich(&f);
	put_post(&f, 0, 0xac000000, MDT_MPI_Irecv, 0x84000002, 1, 1, f.site2);
	c = &f.tb->colls[5];
	*c = (struct mdt_coll){ .stamp = 1, .comm = 0x84000002,
				.ret = f.site3, .ncalls = 1,
				.call = MDT_MPI_Barrier, .root = MDT_NONE };
	f.tb->colls_head = 1;
	fx_pending(&f, 0xac000000);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	for (int i = 0; i < 2; i++)
		*(f.r.track[i].kind == SNAP_TRACK_POST ? &post : &coll) = i;
	cr_assert(post >= 0 && coll >= 0);
	cr_expect_eq(f.r.track[post].comm, dup);
	cr_expect_null(f.r.track[post].comm_name);
	cr_expect_eq(f.r.track[coll].comm, dup);
	fx_fini(&f);
}

/* Two receives from rank 1 with tag 1, one on MPI_COMM_WORLD, one on
 * the duplicate: the pending one on the duplicate is joined to its own
 * (before, MPICH's handles named no communicator: ambiguous). */
Test(track, mpich_operation_without_request_is_joined_on_its_communicator)
{
	struct fx f;
	struct snap_op *op;
	int dup;

	fx_init(&f);
	dup = fx_mpich(&f);
	put_post(&f, 0, 0xac000000, MDT_MPI_Irecv, 0x44000000, 1, 1, f.site2);
	put_post(&f, 1, 0xac000001, MDT_MPI_Irecv, 0x84000002, 1, 1, f.site3);
	op = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	op->comm = dup;
	f.r.mpi_call = "MPI_Wait";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(op->request, 0xac000001);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].line, 3);
	cr_expect_eq(f.r.track[0].comm, dup);
	fx_fini(&f);
}

Test(track, operation_of_a_blocking_receive_is_not_joined_by_arguments)
{
	struct fx f;
	struct snap_op *op;

	fx_init(&f);
	/* An old MPI_Irecv with the arguments of the MPI_Recv now pending. */
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 1, 1, f.site2);
	op = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	f.r.mpi_call = "MPI_Recv";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(op->request, 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);
}

/* MPICH's DLL gives no request: a started persistent request is found
 * by its creation's arguments (its post is the argument-less MPI_Start),
 * and a creation that was never started is not it. */
Test(track, operation_without_request_is_joined_to_the_started_persistent_request)
{
	struct fx f;
	struct snap_op *recv;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Start, 0, MDT_NONE, MDT_NONE,
		 f.site3);
	put_init(f.tb, 0, REQ_A, MDT_MPI_Recv_init, 0, 5, f.site2);
	/* The same arguments, never started: not pending. */
	put_init(f.tb, 1, REQ_B, MDT_MPI_Recv_init, 0, 5, f.site2);
	recv = fx_pending_args(&f, SNAP_OP_RECV, 0, 5);
	f.r.mpi_call = "MPI_Wait";
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(recv->request, REQ_A);
	cr_assert_eq(f.r.ntrack, 2);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Start");
	cr_expect_str_eq(f.r.track[1].call, "MPI_Recv_init");
	cr_expect_eq(f.r.track[1].line, 2);
	fx_fini(&f);
}

/* A variable's record is its latest post; the request is read from the
 * variable, so one that was completed through it (MPI_REQUEST_NULL
 * there now) or posted through again joins nothing old. */
Test(track, variable_that_no_longer_holds_the_request_joins_nothing)
{
	struct fx f;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	put_post(&f, 0, REQ_B, MDT_MPI_Irecv, COMM, 0, 2, f.site3);
	f.vars[0] = 0x7f00000c0ffeULL;	/* MPI_REQUEST_NULL, say */
	fx_pending(&f, REQ_A);
	fx_pending(&f, REQ_B);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].request, REQ_B);
	cr_expect_eq(f.r.track[0].tag, 2);
	fx_fini(&f);
}

/* Two variables hold one handle (a request copied out of the first,
 * completed, and its object recycled for a post through the second):
 * the post whose arguments are the pending operation's; none when both
 * could be it and were posted at different places. */
Test(track, handle_in_two_variables_goes_to_the_post_of_its_arguments)
{
	struct fx f;
	struct snap_op *op;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 0, 1, f.site2);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 2, 7, f.site3);
	fx_pending(&f, REQ_A);
	op = &f.ops[0];
	op->peer_local = 2;
	op->tag = 7;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].line, 3);
	cr_expect_eq(f.r.track[0].peer, 2);
	fx_fini(&f);

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 2, 7, f.site2);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 2, 7, f.site3);
	fx_pending(&f, REQ_A);
	f.ops[0].peer_local = 2;
	f.ops[0].tag = 7;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);
}

/* MPICH's handles are 32-bit integers: 4 bytes at the variable. */
Test(track, integer_handle_is_read_at_its_own_size)
{
	struct fx f;

	fx_init(&f);
	f.tb->handle_size = 4;
	put_post(&f, 0, 0x2c000003, MDT_MPI_Isend, COMM, 1, 3, f.site2);
	/* The next 4 bytes are another variable's. */
	f.vars[0] |= 0xdeadbeefULL << 32;
	fx_pending(&f, 0x2c000003);
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].request, 0x2c000003);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Isend");
	fx_fini(&f);
}

/* A held record (its variable was posted through again while it still
 * held the request) names the handle itself: no variable is read. */
Test(track, held_record_joins_its_handle_without_a_variable)
{
	struct fx f;
	struct mdt_post *p;

	fx_init(&f);
	p = &f.tb->posts[mdt_bucket(REQ_B)][1];
	*p = (struct mdt_post){ REQ_B, COMM, 3, 9,
				mdt_site(REQ_B, f.site3, MDT_MPI_Irecv) |
					MDT_SITE_HELD };
	fx_pending(&f, REQ_B);
	f.ops[0].peer_local = 3;
	f.ops[0].tag = 9;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].request, REQ_B);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Irecv");
	cr_expect_eq(f.r.track[0].peer, 3);
	cr_expect_eq(f.r.track[0].line, 3);
	fx_fini(&f);
}

/* A held record and a variable's record of one call site hold one
 * handle (the loop's variable posted through again, the request
 * recycled): they agree, so the post is named. */
Test(track, held_and_variable_record_of_one_site_agree)
{
	struct fx f;
	struct mdt_post *p;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 3, 9, f.site3);
	p = &f.tb->posts[mdt_bucket(REQ_A)][1];
	*p = (struct mdt_post){ REQ_A, COMM, 3, 9,
				mdt_site(REQ_A, f.site3, MDT_MPI_Irecv) |
					MDT_SITE_HELD };
	fx_pending(&f, REQ_A);
	f.ops[0].peer_local = 3;
	f.ops[0].tag = 9;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].line, 3);
	fx_fini(&f);
}

/* The polling calls' count and the last one's site (a loop that sleeps
 * between its tests: collector/looks.c). */
Test(track, polling_count_and_last_poll_site_are_read)
{
	struct fx f;

	fx_init(&f);
	f.tb->polls = 1234;
	f.tb->poll_site = MDT_SITE_RET(f.site3) |
			  (uint64_t)MDT_MPI_Testsome << 48;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 1);
	cr_expect_eq(f.r.track[0].kind, SNAP_TRACK_POLL);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Testsome");
	cr_expect_eq(f.r.track[0].seq, 1234);
	cr_expect_eq(f.r.track[0].line, 3);
	fx_fini(&f);
}

/* Outside MPI every pending operation is the program's own: MPICH's
 * request-less operation is joined by its arguments there too. */
Test(track, operation_of_a_rank_outside_mpi_is_joined_by_arguments)
{
	struct fx f;
	struct snap_op *op;

	fx_init(&f);
	put_post(&f, 0, REQ_A, MDT_MPI_Irecv, COMM, 1, 1, f.site2);
	op = fx_pending_args(&f, SNAP_OP_RECV, 1, 1);
	f.r.mpi_call = NULL;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(op->request, REQ_A);
	fx_fini(&f);
}

/*
 * A request copied out of its variable before the same call at the same
 * place posted through the variable again with the same arguments: the
 * library wrote no held record (mdtrack.h), so no record names the
 * copied-out request; its posting is the variable's record, whose call,
 * peer and tag are its own.  Not taken where that could be wrong.
 */
static struct snap_op *fx_copied_out(struct fx *f, const char *call)
{
	put_post(f, 0, REQ_B, MDT_MPI_Irecv, COMM, 1, 4, f->site3);
	fx_pending(f, REQ_A);
	f->ops[0].peer_local = 1;
	f->ops[0].tag = 4;
	f->r.mpi_call = call;
	return &f->ops[0];
}

Test(track, request_copied_out_before_the_same_post_joins_its_variables_record)
{
	struct fx f;

	fx_init(&f);
	fx_copied_out(&f, "MPI_Waitall");
	fx_pending(&f, REQ_B);
	f.ops[1].peer_local = 1;
	f.ops[1].tag = 4;
	cr_assert_eq(fx_read(&f), 0);
	cr_assert_eq(f.r.ntrack, 2);
	cr_expect_eq(f.r.track[0].request, REQ_A);
	cr_expect_str_eq(f.r.track[0].call, "MPI_Irecv");
	cr_expect_eq(f.r.track[0].line, 3);
	cr_expect_eq(f.r.track[1].request, REQ_B);
	fx_fini(&f);
}

Test(track, request_no_record_names_is_not_joined_where_it_could_be_wrong)
{
	struct fx f;
	struct snap_op *op;

	/* Another tag: not the variable's post. */
	fx_init(&f);
	op = fx_copied_out(&f, "MPI_Waitall");
	op->tag = 5;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);

	/* A send is not a receive's post. */
	fx_init(&f);
	op = fx_copied_out(&f, "MPI_Waitall");
	op->kind = SNAP_OP_SEND;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);

	/* In a blocking receive the operation may be the call's own. */
	fx_init(&f);
	fx_copied_out(&f, "MPI_Recv");
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);

	/* A table that dropped records: the request's own may be gone. */
	fx_init(&f);
	fx_copied_out(&f, "MPI_Waitall");
	f.tb->posts_dropped = 1;
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);

	/* Two places post with these arguments: either could be it. */
	fx_init(&f);
	fx_copied_out(&f, "MPI_Waitall");
	put_post(&f, 0, REQ_B ^ 0x80, MDT_MPI_Irecv, COMM, 1, 4, f.site2);
	cr_assert_eq(fx_read(&f), 0);
	cr_expect_eq(f.r.ntrack, 0);
	fx_fini(&f);
}
