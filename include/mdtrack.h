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
 * Four parts:
 *  - posts: per request variable (the MPI_Request * the caller passed),
 *    the last call that created or started a request through it
 *    (nonblocking point-to-point and collectives, MPI_Start/Startall),
 *    written before the call, so that the wrapper can end in a tail
 *    call; the collector reads the handle from the variable while the
 *    rank is stopped.  A hash table of MDT_NBUCKETS buckets
 *    (mdt_var_bucket() of the variable's address: neighbouring variables,
 *    as in an array of requests, get neighbouring buckets, so a loop
 *    over them writes few pages and cache sets), each one cache line of
 *    MDT_WAYS 32-byte records, the latest first.  A variable's new record
 *    replaces its old one in place; a variable not in its bucket goes
 *    first and pushes the other record to the second way, overwriting
 *    the older one (counted in posts_dropped when it held a record).
 *    Programs post through the same few variables (an array of
 *    requests, a local), so a loop writes the same few cache lines.  A
 *    request copied elsewhere (into a C++ vector, say) is kept too:
 *    a variable posted through again while it holds a handle other than
 *    MPI_REQUEST_NULL first copies its record to the bucket of that
 *    handle as a held record (site has MDT_SITE_HELD, loc is the handle,
 *    bucket and check byte are the handle's: mdt_bucket(), a
 *    multiplicative hash), pushing as a post does.  A record taken over
 *    by another variable, or a held one, is written site = 0 and loc
 *    first, then its fields, then site, which carries a check byte of
 *    the key: a record torn by a stop reads as empty, and so, mostly,
 *    does one torn by two threads racing on one bucket.  A variable's
 *    own record, posted through again by the same call at the same
 *    place with the same communicator, peer and tag (a loop), is left
 *    as it is, and what the variable holds is not read: a request still
 *    in it (copied out, or a helper's local returned) gets no held
 *    record, and the collector finds its posting by its arguments,
 *    which are the record's.  Posted through again with other
 *    arguments while the variable holds MPI_REQUEST_NULL, it gets its
 *    fields and then site: a stop in between leaves a record whose
 *    variable holds no request, which the collector skips.
 *  - inits: a ring of persistent request creations (MPI_Send_init, ...),
 *    kept apart so that a busy message loop does not push them out.
 *    Ring slot i holds the record with ticket t where t % n == i; its
 *    stamp is t + 1, written last.  A ticket is taken (head advanced,
 *    one atomic add per record) before its slot is written, so a slot
 *    being written still shows the stamp of an earlier turn, which the
 *    reader sees as stale (stamp <= head - n).  The ring overwrites the
 *    oldest entry: head - n records were dropped.
 *  - polls: a count of the polling calls (tests and probes) and the
 *    site of the last, on the colls_head line.
 *  - colls: per communicator handle, the last collective call (the
 *    details of a nonblocking collective are there too; its posts record
 *    names the call, communicator and root).  A colls slot is updated in
 *    place: stamp 0 while it is written, then its ticket + 1.  The
 *    ticket, colls_head, is advanced (by a plain load and store) only
 *    when a collective's communicator is not the last collective's
 *    (colls_last): a loop of collectives on one communicator writes its
 *    slot and nothing else, and the stamps still order the
 *    communicators' last collectives.  Two threads' collectives at one
 *    moment may share a ticket, and a stamp may exceed the head.
 * Handles are kept as their value: a pointer (Open MPI), or a 32-bit
 * integer handle (MPICH) zero-extended.
 */
#ifndef MD_MDTRACK_H
#define MD_MDTRACK_H

#include <stdint.h>

#define MDT_SYMBOL "md_track_table"
#define MDT_MAGIC 0x316b636172746d64ULL	/* "mdtrack1" little-endian */
#define MDT_VERSION 6

#define MDT_NBUCKETS 2048	/* powers of two */
#define MDT_BUCKET_BITS 11	/* log2(MDT_NBUCKETS) */
#define MDT_WAYS 2	/* records per bucket: one cache line */
#define MDT_POSTS_AT 192	/* offsetof(struct mdt_table, posts) */
#define MDT_REQUEST_NULL_AT 104	/* offsetof(..., request_null) */
#define MDT_NINITS 1024
#define MDT_NCOLLS 256
#define MDT_PROBE 8	/* colls slots searched from a handle's hash */

/* The MPI library's special values, made portable (the same numbers as
 * SNAP_TRACK_* in snap.h). */
#define MDT_NONE (-0x7fffffff)	/* no peer, root or tag */
#define MDT_ANY (-0x7ffffffe)	/* MPI_ANY_SOURCE, MPI_ANY_TAG */
#define MDT_PROC_NULL (-0x7ffffffd)
#define MDT_ROOT (-0x7ffffffc)

/*
 * The recorded calls.  X(name, kind): kind is 's' send, 'r' receive,
 * 'c' collective, 'p' start of a persistent request, 't' a test or probe
 * (the polling calls: polls and poll_site in the table).
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
	X(MPI_Iexscan, 'c') X(MPI_Test, 't') X(MPI_Testany, 't')           \
	X(MPI_Testall, 't') X(MPI_Testsome, 't') X(MPI_Iprobe, 't')         \
	X(MPI_Improbe, 't')

enum mdt_call {
	MDT_CALL_NONE,
#define MDT_ENUM(name, kind) MDT_##name,
	MDT_CALLS(MDT_ENUM)
#undef MDT_ENUM
	MDT_NCALLS
};
_Static_assert(MDT_NCALLS <= 0x80, "a call fits in site's bits 48-54");

/* The last call that created or started a request (32 bytes). */
struct mdt_post {
	uint64_t loc;		/* the caller's MPI_Request variable, 0 = none;
				 * held records: the handle */
	uint64_t comm;		/* MPI_Comm handle */
	int32_t peer;		/* dest/source (local rank) or root, as passed */
	int32_t tag;		/* as passed; MDT_NONE for collectives */
	uint64_t site;		/* mdt_var_site(), mdt_site(): written last */
};

/*
 * site: the return address of the call (bits 0-47: user space addresses
 * on x86-64 and aarch64), the call (bits 48-54), MDT_SITE_HELD (bit 55:
 * a held record, below), and a check byte of the key (bits 56-63): of
 * a variable's address, the 8 bits above those that pick its bucket
 * (mdt_var_check); of a held record's handle, the 8 bits of mdt_hash()
 * below those (mdt_check); so two records of one bucket seldom share it.
 * A site written for another variable than the record's (two threads
 * racing on one bucket) fails the check; the communicator, peer and tag
 * of such a race are not checked.
 */
#define MDT_RET_MASK ((1ULL << 48) - 1)
#define MDT_SITE_HELD (1ULL << 55)
#define MDT_SITE_RET(site) ((site) & MDT_RET_MASK)
#define MDT_SITE_CALL(site) ((int)((site) >> 48 & 0x7f))
#define MDT_SITE_CHECK(site) ((site) >> 56)

/* Macros as well, for code built for general registers only (the
 * inline functions below are not inlined there): a handle's hash, and
 * the bucket and check byte a hash gives (held records); a variable's
 * bucket and check byte (MDT_VAR_*: its address over the handle size,
 * folded: lo ^ hi of 2 x MDT_BUCKET_BITS bits, and 8 bits of hi). */
#define MDT_HASH(x) ((uint64_t)(x) * 0x9e3779b97f4a7c15ULL)
#define MDT_HASH_BUCKET(h) ((unsigned)((h) >> (64 - MDT_BUCKET_BITS)))
#define MDT_HASH_CHECK(h) ((uint64_t)(h) << MDT_BUCKET_BITS >> 56)
#define MDT_VAR_SHIFT(hsize) ((hsize) == 4 ? 2 : 3)
#define MDT_VAR_BUCKET(loc, sh)                                             \
	((unsigned)(((uint64_t)(loc) >> (sh) ^                              \
		     (uint64_t)(loc) >> ((sh) + MDT_BUCKET_BITS)) &         \
		    (MDT_NBUCKETS - 1)))
#define MDT_VAR_CHECK(loc, sh)                                              \
	((uint64_t)(loc) >> ((sh) + MDT_BUCKET_BITS) & 0xff)

static inline uint64_t mdt_hash(uint64_t req)
{
	return MDT_HASH(req);
}

/* The bucket of a held record's handle. */
static inline unsigned mdt_bucket(uint64_t req)
{
	return MDT_HASH_BUCKET(mdt_hash(req));
}

static inline uint64_t mdt_check(uint64_t req)
{
	return MDT_HASH_CHECK(mdt_hash(req));
}

/* A site: return address, call and check byte. */
static inline uint64_t mdt_site_of(uint64_t ret, int call, uint64_t check)
{
	return (ret & MDT_RET_MASK) | (uint64_t)call << 48 | check << 56;
}

/* A held record's site. */
static inline uint64_t mdt_site(uint64_t req, uint64_t ret, int call)
{
	return mdt_site_of(ret, call, mdt_check(req));
}

/* The bucket, check byte and site of a request variable at loc, for
 * handles of hsize bytes (mdt_table.handle_size). */
static inline unsigned mdt_var_bucket(uint64_t loc, unsigned hsize)
{
	return MDT_VAR_BUCKET(loc, MDT_VAR_SHIFT(hsize));
}

static inline uint64_t mdt_var_check(uint64_t loc, unsigned hsize)
{
	return MDT_VAR_CHECK(loc, MDT_VAR_SHIFT(hsize));
}

static inline uint64_t mdt_var_site(uint64_t loc, unsigned hsize,
				    uint64_t ret, int call)
{
	return mdt_site_of(ret, call, mdt_var_check(loc, hsize));
}

/* Does posts record p, found in bucket i, hold a whole record that
 * belongs there (not empty, not torn)? */
static inline int mdt_post_valid(const struct mdt_post *p, unsigned i,
				 unsigned hsize)
{
	if (!p->loc || !p->site)
		return 0;
	if (p->site & MDT_SITE_HELD)
		return mdt_bucket(p->loc) == i &&
		       MDT_SITE_CHECK(p->site) == mdt_check(p->loc);
	return mdt_var_bucket(p->loc, hsize) == i &&
	       MDT_SITE_CHECK(p->site) == mdt_var_check(p->loc, hsize);
}

/* A persistent request's creation (64 bytes). */
struct mdt_rec {
	uint64_t stamp;		/* ticket + 1; 0 while written or never */
	uint64_t request;	/* the MPI_Request handle's value */
	uint64_t comm;		/* MPI_Comm handle */
	uint64_t datatype;	/* MPI_Datatype handle */
	uint64_t op;		/* 0 */
	uint64_t ret;		/* return address of the call */
	int32_t call;		/* enum mdt_call */
	int32_t peer;		/* dest/source (local rank), as passed */
	int32_t tag;		/* as passed */
	int32_t count;
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
	uint32_t post_size;	/* sizeof(struct mdt_post) */
	uint32_t rec_size;	/* sizeof(struct mdt_rec) */
	uint32_t coll_size;	/* sizeof(struct mdt_coll) */
	uint32_t nbuckets, ways, ninits, ncolls;
	/* The MPI library's special values: posts and inits hold peer and
	 * tag as passed (no work on the hot path), colls MDT_* values. */
	int32_t any_source, any_tag, proc_null, root;
	uint32_t handle_size;	/* sizeof(MPI_Request): 8 or 4 bytes at loc */
	/* Counters off the first line; colls_head and colls_last, written
	 * when the collectives change communicator, on a line of their
	 * own with the polling calls'. */
	uint64_t inits_head;	/* tickets taken */
	uint64_t posts_dropped;	/* records of another variable overwritten */
	uint64_t coll_dropped;	/* collectives that found no colls slot */
	/* MPI_COMM_WORLD's and MPI_COMM_SELF's handles when they are
	 * integer constants (MPICH), else 0 (Open MPI's are the addresses
	 * of its symbols, named by those). */
	uint64_t comm_world, comm_self;
	/* MPI_REQUEST_NULL's value: what a variable holds once its request
	 * completed through it (0 in a process without MPI). */
	uint64_t request_null;
	uint64_t pad1[2];
	/* The collectives' ticket, advanced when a collective's
	 * communicator is not colls_last, the last one's. */
	uint64_t colls_head;
	uint64_t colls_last;
	/* The polling calls (MPI_Test, MPI_Testany, MPI_Testall,
	 * MPI_Testsome, MPI_Iprobe, MPI_Improbe) this rank made, and the
	 * site of the last (as a post's, without check byte: its return
	 * address and call), written before the call by plain stores: two
	 * threads polling at one moment may lose a count, never a site.
	 * A count that moves between two looks while the rank is found
	 * outside MPI with the same pending requests tells a polling loop
	 * that sleeps between its tests (collector/looks.c). */
	uint64_t polls;
	uint64_t poll_site;
	uint64_t pad2[4];
	/* At byte 192: one bucket per cache line. */
	struct mdt_post posts[MDT_NBUCKETS][MDT_WAYS];
	struct mdt_rec inits[MDT_NINITS];
	struct mdt_coll colls[MDT_NCOLLS];
};

_Static_assert(sizeof(struct mdt_post) * MDT_WAYS == 64,
	       "a posts bucket is one cache line");
_Static_assert(sizeof(struct mdt_rec) == 64, "mdt_rec is one cache line");
_Static_assert(sizeof(struct mdt_coll) == 64, "mdt_coll is one cache line");
_Static_assert(__builtin_offsetof(struct mdt_table, inits_head) == 64 &&
		       __builtin_offsetof(struct mdt_table, posts) ==
			       MDT_POSTS_AT,
	       "counters and buckets start on cache lines");
/* The offsets track/mdtrack.c's x86-64 wrappers use. */
_Static_assert(__builtin_offsetof(struct mdt_table, request_null) ==
			       MDT_REQUEST_NULL_AT &&
		       __builtin_offsetof(struct mdt_post, loc) == 0 &&
		       __builtin_offsetof(struct mdt_post, comm) == 8 &&
		       __builtin_offsetof(struct mdt_post, peer) == 16 &&
		       __builtin_offsetof(struct mdt_post, tag) == 20 &&
		       __builtin_offsetof(struct mdt_post, site) == 24,
	       "posts record layout");
_Static_assert(MDT_NBUCKETS == 1 << MDT_BUCKET_BITS, "MDT_BUCKET_BITS");

#endif /* MD_MDTRACK_H */
