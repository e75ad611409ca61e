/*
 * mpich_handle.c - MPICH's MPIR_Comm_get_ptr done from outside the rank
 * (see mpich_handle.h).  Verified against MPICH 4.0.2's
 * src/include/mpir_objects.h and mpir_handlemem.h: HANDLE_GET_KIND,
 * HANDLE_GET_MPI_KIND, HANDLE_INDEX, HANDLE_BLOCK, HANDLE_BLOCK_INDEX and
 * MPIR_Handle_get_ptr_indirect.
 */
#include "mpich_handle.h"

#include <string.h>

#include "md.h"

void mph_decode(uint64_t h, struct mph_handle *out)
{
	uint32_t v = (uint32_t)h;

	out->kind = (enum mph_kind)(v >> 30);
	out->obj = (int)((v & 0x3c000000u) >> 26);
	if (out->kind == MPH_INDIRECT) {
		out->block = (int)((v & 0x03fff000u) >> 12);
		out->index = (int)(v & 0x00000fffu);
	} else {
		out->block = 0;
		out->index = (int)(v & 0x03ffffffu);
	}
}

/* The fields of MPIR_Comm_mem (an MPIR_Object_alloc_t) the lookup
 * needs. */
struct pool {
	uint64_t direct, indirect;
	int32_t direct_size, indirect_size, size;
};

static int field(const struct dt_type *ty, const char *name, int *off)
{
	*off = dt_field_offset(ty, name);
	return *off < 0 ? -MD_E_NOTYPES : 0;
}

/* Read a member of the object at base whose offset is off; len bytes. */
static int member(struct tgt *t, uint64_t base, int off, void *out, size_t len)
{
	return tgt_read(t, base + (uint64_t)off, out, len);
}

static int read_pool(struct tgt *t, struct dt_index *types, uint64_t at,
		     struct pool *p)
{
	const struct dt_type *ty;
	int od, oi, ods, ois, osz, rc;

	if (dt_find_type(types, "MPIR_Object_alloc_t", &ty) < 0)
		return -MD_E_NOTYPES;
	if ((rc = field(ty, "direct", &od)) < 0 ||
	    (rc = field(ty, "indirect", &oi)) < 0 ||
	    (rc = field(ty, "direct_size", &ods)) < 0 ||
	    (rc = field(ty, "indirect_size", &ois)) < 0 ||
	    (rc = field(ty, "size", &osz)) < 0)
		return rc;
	memset(p, 0, sizeof(*p));
	if ((rc = member(t, at, od, &p->direct, 8)) < 0 ||
	    (rc = member(t, at, oi, &p->indirect, 8)) < 0 ||
	    (rc = member(t, at, ods, &p->direct_size, 4)) < 0 ||
	    (rc = member(t, at, ois, &p->indirect_size, 4)) < 0 ||
	    (rc = member(t, at, osz, &p->size, 4)) < 0)
		return rc;
	/* A pool not set up, or memory that is not one. */
	if (p->size <= 0 || p->size > (1 << 20))
		return -MD_E_INPUT;
	return 0;
}

int mph_comm_addr(struct tgt *t, const struct es_view *v,
		  struct dt_index *types, uint64_t h, uint64_t *addr)
{
	struct mph_handle d;
	struct pool p;
	uint64_t at, block;
	int rc;

	if (!types)
		return -MD_E_NOTYPES;
	if (es_proc_lookup(v, "MPIR_Comm_mem", &at) < 0)
		return -MD_E_NOSYM;
	mph_decode(h, &d);
	if (d.obj != MPH_OBJ_COMM || h >> 32)
		return -MD_E_INPUT;
	rc = read_pool(t, types, at, &p);
	if (rc < 0)
		return rc;
	switch (d.kind) {
	case MPH_BUILTIN:
		/* MPI_COMM_WORLD, MPI_COMM_SELF and the internal
		 * MPIR_ICOMM_WORLD: MPIR_COMM_N_BUILTIN is 3 in 4.0. */
		if (d.index >= 3)
			return -MD_E_INPUT;
		if (es_proc_lookup(v, "MPIR_Comm_builtin", &at) < 0)
			return -MD_E_NOSYM;
		*addr = at + (uint64_t)d.index * (uint64_t)p.size;
		return 0;
	case MPH_DIRECT:
		if (!p.direct || d.index >= p.direct_size)
			return -MD_E_INPUT;
		*addr = p.direct + (uint64_t)d.index * (uint64_t)p.size;
		return 0;
	case MPH_INDIRECT:
		/* The blocks hold HANDLE_NUM_INDICES objects each. */
		if (!p.indirect || d.block >= p.indirect_size)
			return -MD_E_INPUT;
		rc = tgt_read(t, p.indirect + 8u * (uint64_t)d.block, &block,
			      8);
		if (rc < 0)
			return rc;
		if (!block)
			return -MD_E_INPUT;
		*addr = block + (uint64_t)d.index * (uint64_t)p.size;
		return 0;
	case MPH_INVALID:
		break;
	}
	return -MD_E_INPUT;
}

int mph_comm_context_id(struct tgt *t, const struct es_view *v,
			struct dt_index *types, uint64_t h, uint32_t *cid)
{
	const struct dt_type *ty;
	uint64_t addr;
	uint16_t id;
	int off, rc;

	if (!types || dt_find_type(types, "MPIR_Comm", &ty) < 0)
		return -MD_E_NOTYPES;
	off = dt_field_offset(ty, "context_id");
	if (off < 0)
		return -MD_E_NOTYPES;
	rc = mph_comm_addr(t, v, types, h, &addr);
	if (rc < 0)
		return rc;
	/* MPIR_Context_id_t is a uint16_t (mqd_mpich.c reads it so). */
	rc = tgt_read(t, addr + (uint64_t)off, &id, sizeof(id));
	if (rc < 0)
		return rc;
	*cid = id;
	return 0;
}
