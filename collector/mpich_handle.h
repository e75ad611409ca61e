/*
 * mpich_handle.h - an MPICH communicator handle (an int such as
 * 0x84000002) to its MPIR_Comm in a stopped rank, as MPICH 4.0's
 * MPIR_Comm_get_ptr finds it (src/include/mpir_objects.h): the handle
 * says builtin, direct or indirect and an index; builtin objects are
 * MPIR_Comm_builtin[], direct ones MPIR_Comm_direct[] (the pool's
 * direct block), indirect ones a block of the MPIR_Comm_mem pool.  The
 * MPIR_Comm's context_id is the number the host names the DLL's
 * communicator by (mqd_mpich.h), so a record's handle names the
 * communicator.  See doc/mpich.md.
 */
#ifndef MD_MPICH_HANDLE_H
#define MD_MPICH_HANDLE_H

#include <stdint.h>

#include "dwtypes.h"
#include "elfsym.h"
#include "target.h"

enum mph_kind {
	MPH_INVALID,
	MPH_BUILTIN,
	MPH_DIRECT,
	MPH_INDIRECT,
};

/* MPII_Object_kind of a communicator (MPIR_COMM). */
#define MPH_OBJ_COMM 1

/* What a handle's bits say. */
struct mph_handle {
	enum mph_kind kind;	/* bits 31-30 */
	int obj;		/* bits 29-26: MPH_OBJ_COMM for a communicator */
	int index;		/* builtin/direct: bits 25-0; indirect: 11-0 */
	int block;		/* indirect: bits 25-12; else 0 */
};

/* Decode handle h (the low 32 bits: a handle is an int). */
void mph_decode(uint64_t h, struct mph_handle *out);

/*
 * The address of the MPIR_Comm of communicator handle h in the rank t
 * (its objects in v, the MPI library's types in types).  Returns 0 and
 * *addr; -MD_E_NOSYM or -MD_E_NOTYPES when the library is not an MPICH
 * with these symbols and types (no message: the caller may be reading
 * another MPI), -MD_E_INPUT when h is not a communicator handle or names
 * no object of the pool, or tgt_read's code.
 */
int mph_comm_addr(struct tgt *t, const struct es_view *v,
		  struct dt_index *types, uint64_t h, uint64_t *addr);

/*
 * The context id of communicator handle h (MPIR_Comm.context_id), as
 * mph_comm_addr returns.
 */
int mph_comm_context_id(struct tgt *t, const struct es_view *v,
			struct dt_index *types, uint64_t h, uint32_t *cid);

#endif /* MD_MPICH_HANDLE_H */
