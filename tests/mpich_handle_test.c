/*
 * mpich_handle_test.c - an MPICH communicator handle to its MPIR_Comm
 * and context id (collector/mpich_handle.c) on a fake target: the
 * symbols and types of a small library built at test time with MPICH
 * 4.0.2's names (MPIR_Comm_builtin, MPIR_Comm_mem, MPIR_Object_alloc_t
 * with its fields in MPICH's order), its pools written here.  The
 * handles are those a real MPICH 4.0.2 run gave (doc/mpich.md).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/mpich_handle.h"
#include "md.h"
#include "support/elf_fixture.h"

#define BIAS 0x7f3400000000ULL
#define DIRECT 0x10000ULL	/* the pool's direct block */
#define INDIRECT 0x20000ULL	/* its table of indirect blocks */
#define BLOCK1 0x30000ULL	/* indirect block 1 */

/* MPICH's layouts in part (the fields the lookup reads, in MPICH's
 * order), compiled both here and into the fixture. */
#define TYPES                                                              \
	typedef struct MPIR_Comm {                                         \
		int handle;                                                \
		int ref_count;                                             \
		char before[40];                                           \
		unsigned short context_id;                                 \
		unsigned short recvcontext_id;                             \
		char after[92];                                            \
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
		char pad[64];                                              \
	} MPIR_Object_alloc_t;
#define STR2(x) #x
#define STR(x) STR2(x)

TYPES

static const char fixture[] =
	STR(TYPES) "\n"
	"__attribute__((visibility(\"hidden\"))) MPIR_Comm MPIR_Comm_builtin[3];\n"
	"__attribute__((visibility(\"hidden\"))) MPIR_Object_alloc_t MPIR_Comm_mem;\n";

struct fx {
	char *dir, *lib;
	struct es_cache *ec;
	struct es_view *v;
	struct dt_index *types;
	struct tgt *t;
	MPIR_Comm builtin[3], direct[8], block1[4];
	MPIR_Object_alloc_t pool;
	uint64_t blocks[2];
};

static void fx_init(struct fx *f, bool with_pool)
{
	uint64_t builtin, mem;
	const char *src;

	memset(f, 0, sizeof(*f));
	f->dir = ef_tmpdir();
	f->lib = ef_cc(f->dir, "libmpi.so", with_pool ? fixture :
		       STR(TYPES) "\nMPIR_Comm c;\n", "-g -O0 -fPIC -shared",
		       NULL);
	cr_assert_not_null(f->lib, "cc builds the fixture");
	f->ec = es_cache_new();
	f->v = es_view_new(f->ec);
	cr_assert_eq(es_view_add(f->v, f->lib, BIAS), 0);
	cr_assert_eq(dt_index_open(f->lib, &f->types, &src), 0);
	f->t = tgt_fake_new(4242);
	/* As MPICH sets them up: world, self, the internal icomm_world;
	 * dups in the direct block, and past its 8 in indirect blocks. */
	f->builtin[0] = (MPIR_Comm){ .handle = 0x44000000, .context_id = 0 };
	f->builtin[1] = (MPIR_Comm){ .handle = 0x44000001, .context_id = 16 };
	f->builtin[2] = (MPIR_Comm){ .handle = 0x44000002, .context_id = 32 };
	f->direct[2] = (MPIR_Comm){ .handle = (int)0x84000002,
				    .context_id = 496 };
	f->block1[3] = (MPIR_Comm){ .handle = (int)0xc4001003,
				    .context_id = 1234 };
	f->blocks[1] = BLOCK1;
	f->pool = (MPIR_Object_alloc_t){
		.initialized = 1, .indirect = (void **)INDIRECT,
		.indirect_size = 2, .kind = 1, .size = sizeof(MPIR_Comm),
		.direct = (void *)DIRECT, .direct_size = 8,
	};
	if (!with_pool)
		return;
	cr_assert_eq(es_proc_lookup(f->v, "MPIR_Comm_builtin", &builtin), 0);
	cr_assert_eq(es_proc_lookup(f->v, "MPIR_Comm_mem", &mem), 0);
	tgt_fake_add_region(f->t, builtin, f->builtin, sizeof(f->builtin));
	tgt_fake_add_region(f->t, mem, &f->pool, sizeof(f->pool));
	tgt_fake_add_region(f->t, DIRECT, f->direct, sizeof(f->direct));
	tgt_fake_add_region(f->t, INDIRECT, f->blocks, sizeof(f->blocks));
	tgt_fake_add_region(f->t, BLOCK1, f->block1, sizeof(f->block1));
}

static void fx_fini(struct fx *f)
{
	tgt_free(f->t);
	dt_index_free(f->types);
	es_view_free(f->v);
	es_cache_free(f->ec);
	free(f->lib);
	ef_rmtree(f->dir);
}

static int cid_of(struct fx *f, uint64_t h, uint32_t *cid)
{
	*cid = 0xdead;
	return mph_comm_context_id(f->t, f->v, f->types, h, cid);
}

Test(mpich_handle, handle_bits_give_kind_object_and_index)
{
	struct mph_handle d;

	mph_decode(0x44000000, &d);	/* MPI_COMM_WORLD */
	cr_expect(d.kind == MPH_BUILTIN && d.obj == MPH_OBJ_COMM &&
		  d.index == 0 && d.block == 0);
	mph_decode(0x84000002, &d);	/* a dup, the third direct comm */
	cr_expect(d.kind == MPH_DIRECT && d.obj == MPH_OBJ_COMM &&
		  d.index == 2 && d.block == 0);
	mph_decode(0xc4001003, &d);	/* indirect block 1, index 3 */
	cr_expect(d.kind == MPH_INDIRECT && d.obj == MPH_OBJ_COMM &&
		  d.index == 3 && d.block == 1);
	mph_decode(0x4c000405, &d);	/* MPI_INT: a datatype */
	cr_expect(d.kind == MPH_BUILTIN && d.obj == 3);
	mph_decode(0, &d);
	cr_expect(d.kind == MPH_INVALID);
}

Test(mpich_handle, builtin_direct_and_indirect_handles_give_their_context_id)
{
	struct fx f;
	uint32_t cid;

	fx_init(&f, true);
	cr_expect_eq(cid_of(&f, 0x44000000, &cid), 0);
	cr_expect_eq(cid, 0);
	cr_expect_eq(cid_of(&f, 0x44000001, &cid), 0);
	cr_expect_eq(cid, 16);
	cr_expect_eq(cid_of(&f, 0x84000002, &cid), 0);
	cr_expect_eq(cid, 496);
	cr_expect_eq(cid_of(&f, 0xc4001003, &cid), 0);
	cr_expect_eq(cid, 1234);
	fx_fini(&f);
}

Test(mpich_handle, handle_of_no_communicator_in_the_pools_is_refused)
{
	struct fx f;
	uint32_t cid;

	fx_init(&f, true);
	/* A datatype, a builtin past the three, a direct index past the
	 * block, an indirect block past the table, an unset block. */
	cr_expect_eq(cid_of(&f, 0x4c000405, &cid), -MD_E_INPUT);
	cr_expect_eq(cid_of(&f, 0x44000003, &cid), -MD_E_INPUT);
	cr_expect_eq(cid_of(&f, 0x84000008, &cid), -MD_E_INPUT);
	cr_expect_eq(cid_of(&f, 0xc4002000, &cid), -MD_E_INPUT);
	cr_expect_eq(cid_of(&f, 0xc4000000, &cid), -MD_E_INPUT);
	/* Not an int: an Open MPI pointer. */
	cr_expect_eq(cid_of(&f, 0x7f0084000002ULL, &cid), -MD_E_INPUT);
	cr_expect_eq(cid, 0xdead);
	fx_fini(&f);
}

Test(mpich_handle, library_without_the_pool_symbol_is_not_mpich)
{
	struct fx f;
	uint32_t cid;

	fx_init(&f, false);
	cr_expect_eq(cid_of(&f, 0x84000002, &cid), -MD_E_NOSYM);
	cr_expect_eq(mph_comm_context_id(f.t, f.v, NULL, 0x84000002, &cid),
		     -MD_E_NOTYPES);
	fx_fini(&f);
}
