/*
 * mdtrack_post.h - the posts table's writers of libmdtrack.so, included
 * by track/mdtrack.c twice: once for the wrappers, and once with
 * POST_FN prefixing their names, under "general-regs-only", for
 * md_track_slow, which must touch no SSE register (see there).  No
 * include guard, on purpose.  Needs T, H() and MPI_Request.
 */

/* A posts record: site 0 while the fields change (see mdtrack.h). */
static inline void POST_FN(post_put)(struct mdt_post *p, uint64_t loc,
				     uint64_t comm, int32_t peer, int32_t tag,
				     uint64_t site)
{
	__atomic_store_n(&p->site, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	p->loc = loc;
	p->comm = comm;
	p->peer = peer;
	p->tag = tag;
	__atomic_store_n(&p->site, site, __ATOMIC_RELEASE);
}

/* The second way gets the first way's record, overwriting the older
 * one (a location's first use, or its record was in the second way: then
 * nothing is lost, and nothing is counted, which matters for speed too:
 * two live locations of one bucket take turns here in a message loop).
 * Inline: a call here would make every wrapper keep its arguments in
 * saved registers. */
static inline __attribute__((always_inline)) void
POST_FN(post_push)(struct mdt_post *b, uint64_t loc)
{
	if (__builtin_expect(__atomic_load_n(&b[1].site, __ATOMIC_RELAXED) &&
			     b[1].loc != loc, 0))
		__atomic_fetch_add(&T->posts_dropped, 1, __ATOMIC_RELAXED);
	POST_FN(post_put)(&b[1], b[0].loc, b[0].comm, b[0].peer, b[0].tag,
			  __atomic_load_n(&b[0].site, __ATOMIC_RELAXED));
}

/*
 * A variable posted through again while it still holds a request (the
 * request was copied out, as into a C++ vector, and may be pending):
 * the variable's record is kept as a held record, keyed by that handle
 * in the handle's own bucket, before the new post replaces it.
 */
static inline __attribute__((always_inline)) void
POST_FN(post_held)(struct mdt_post *b, uint64_t held)
{
	uint64_t site = __atomic_load_n(&b[0].site, __ATOMIC_RELAXED);
	uint64_t comm = b[0].comm, hh = MDT_HASH(held);
	int32_t peer = b[0].peer, tag = b[0].tag;
	struct mdt_post *hb = T->posts[MDT_HASH_BUCKET(hh)];

	/* 0: a variable zeroed by the program holds no request. */
	if (!site || !held)
		return;
	if (hb[0].loc != held)
		POST_FN(post_push)(hb, held);
	POST_FN(post_put)(&hb[0], held, comm, peer, tag,
			  (site & ~(0xffULL << 56)) | MDT_SITE_HELD |
				  MDT_HASH_CHECK(hh) << 56);
}

/* What the variable at loc holds: a handle, zero-extended. */
static inline uint64_t POST_FN(held_at)(uint64_t loc)
{
	MPI_Request r;

	__builtin_memcpy(&r, (const void *)(uintptr_t)loc, sizeof(r));
	return H(r);
}
