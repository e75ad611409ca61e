/*
 * mdtrack.h - the memory layout of the call-site table kept by the
 * interposition library (track/mdtrack.c, libmdtrack.so) in each rank.
 *
 * The library writes the table; nothing else does.  The collector finds
 * it through the symbol MDT_SYMBOL in a stopped rank, reads it like any
 * other memory, and refuses it unless magic, version and the sizes below
 * match.  Only fixed-width fields: the layout is the same for any
 * compiler on x86-64 and aarch64.  Change anything here and bump
 * MDT_VERSION.
 *
 * Three parts:
 *  - posts: a ring of the calls that created or started a request
 *    (nonblocking point-to-point and collectives, MPI_Start/Startall),
 *  - inits: a ring of persistent request creations (MPI_Send_init, ...),
 *    kept apart so that a busy message loop does not push them out,
 *  - colls: per communicator handle, the last collective call.
 * A ring slot i holds the record with ticket t where t % n == i; its
 * stamp is t + 1, written last.  A ticket is taken (head advanced)
 * before its slot is written, so a slot being written still shows the
 * stamp of an earlier turn, which the reader sees as stale (stamp <=
 * head - n).  Threads take tickets in blocks of MDT_BLOCK: a thread's
 * records are in order, records of different threads in block order.
 * A colls slot is updated in place: stamp 0 while it is written.
 * The rings overwrite the oldest entry: head - n records were dropped.
 */
#ifndef MD_MDTRACK_H
#define MD_MDTRACK_H

#include <stdint.h>

#define MDT_SYMBOL "md_track_table"
#define MDT_MAGIC 0x316b636172746d64ULL	/* "mdtrack1" little-endian */
#define MDT_VERSION 1

#define MDT_NPOSTS 4096	/* powers of two */
#define MDT_NINITS 1024
#define MDT_NCOLLS 256
#define MDT_PROBE 8	/* colls slots searched from a handle's hash */
#define MDT_BLOCK 64	/* posts tickets a thread takes at once */

/* The MPI library's special values, made portable (the same numbers as
 * SNAP_TRACK_* in snap.h). */
#define MDT_NONE (-0x7fffffff)	/* no peer, root or tag */
#define MDT_ANY (-0x7ffffffe)	/* MPI_ANY_SOURCE, MPI_ANY_TAG */
#define MDT_PROC_NULL (-0x7ffffffd)
#define MDT_ROOT (-0x7ffffffc)

/*
 * The recorded calls.  X(name, kind): kind is 's' send, 'r' receive,
 * 'c' collective, 'p' start of a persistent request.
 */
#define MDT_CALLS(X)                                                        \
	X(MPI_Isend, 's') X(MPI_Ibsend, 's') X(MPI_Issend, 's')             \
	X(MPI_Irsend, 's') X(MPI_Irecv, 'r') X(MPI_Send_init, 's')          \
	X(MPI_Bsend_init, 's') X(MPI_Ssend_init, 's')                       \
	X(MPI_Rsend_init, 's') X(MPI_Recv_init, 'r') X(MPI_Start, 'p')      \
	X(MPI_Startall, 'p') X(MPI_Barrier, 'c') X(MPI_Bcast, 'c')          \
	X(MPI_Gather, 'c') X(MPI_Gatherv, 'c') X(MPI_Scatter, 'c')          \
	X(MPI_Scatterv, 'c') X(MPI_Allgather, 'c') X(MPI_Allgatherv, 'c')   \
	X(MPI_Alltoall, 'c') X(MPI_Alltoallv, 'c') X(MPI_Alltoallw, 'c')    \
	X(MPI_Reduce, 'c') X(MPI_Allreduce, 'c') X(MPI_Reduce_scatter, 'c') \
	X(MPI_Reduce_scatter_block, 'c') X(MPI_Scan, 'c')                   \
	X(MPI_Exscan, 'c') X(MPI_Ibarrier, 'c') X(MPI_Ibcast, 'c')          \
	X(MPI_Igather, 'c') X(MPI_Igatherv, 'c') X(MPI_Iscatter, 'c')       \
	X(MPI_Iscatterv, 'c') X(MPI_Iallgather, 'c')                        \
	X(MPI_Iallgatherv, 'c') X(MPI_Ialltoall, 'c')                       \
	X(MPI_Ialltoallv, 'c') X(MPI_Ialltoallw, 'c') X(MPI_Ireduce, 'c')   \
	X(MPI_Iallreduce, 'c') X(MPI_Ireduce_scatter, 'c')                  \
	X(MPI_Ireduce_scatter_block, 'c') X(MPI_Iscan, 'c')                 \
	X(MPI_Iexscan, 'c')

enum mdt_call {
	MDT_CALL_NONE,
#define MDT_ENUM(name, kind) MDT_##name,
	MDT_CALLS(MDT_ENUM)
#undef MDT_ENUM
	MDT_NCALLS
};

/* One call that created or started a request (64 bytes). */
struct mdt_rec {
	uint64_t stamp;		/* ticket + 1; 0 while written or never */
	uint64_t request;	/* the MPI_Request handle's value */
	uint64_t comm;		/* MPI_Comm handle */
	uint64_t datatype;	/* MPI_Datatype handle (send type) */
	uint64_t op;		/* MPI_Op handle, 0 if none */
	uint64_t ret;		/* return address of the call */
	int32_t call;		/* enum mdt_call */
	int32_t peer;		/* dest/source (local rank), root, MDT_NONE */
	int32_t tag;		/* MDT_NONE for collectives */
	int32_t count;		/* count (send count for collectives) */
};

/* The last collective call on one communicator (64 bytes). */
struct mdt_coll {
	uint64_t stamp;		/* coll ticket + 1; 0 while written */
	uint64_t comm;		/* the key: MPI_Comm handle, 0 = free */
	uint64_t datatype;
	uint64_t op;
	uint64_t ret;
	uint64_t ncalls;	/* collectives this rank called on comm */
	int32_t call;
	int32_t root;		/* MDT_NONE without a root */
	int32_t count;
	int32_t pad;
};

struct __attribute__((aligned(64))) mdt_table {
	uint64_t magic;		/* MDT_MAGIC */
	uint32_t version;	/* MDT_VERSION */
	uint32_t size;		/* sizeof(struct mdt_table) */
	uint32_t rec_size;	/* sizeof(struct mdt_rec) */
	uint32_t coll_size;	/* sizeof(struct mdt_coll) */
	uint32_t nposts, ninits, ncolls;
	uint32_t pad0;
	uint64_t coll_dropped;	/* collectives that found no colls slot */
	/* The MPI library's special values: posts and inits hold peer and
	 * tag as passed (no work on the hot path), colls MDT_* values. */
	int32_t any_source, any_tag, proc_null, root;
	/* Counters on their own cache lines: written by every call. */
	uint64_t posts_head;	/* tickets taken */
	uint64_t pad2[7];
	uint64_t inits_head;
	uint64_t pad3[7];
	uint64_t colls_head;
	uint64_t pad4[7];
	/* At byte 256: every record on a cache line of its own. */
	struct mdt_rec posts[MDT_NPOSTS];
	struct mdt_rec inits[MDT_NINITS];
	struct mdt_coll colls[MDT_NCOLLS];
};

_Static_assert(sizeof(struct mdt_rec) == 64, "mdt_rec is one cache line");
_Static_assert(sizeof(struct mdt_coll) == 64, "mdt_coll is one cache line");
_Static_assert(__builtin_offsetof(struct mdt_table, posts) == 256,
	       "records start on a cache line");

#endif /* MD_MDTRACK_H */
