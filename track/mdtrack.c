/*
 * mdtrack.c - libmdtrack.so, the interposition library: loaded into a
 * rank (LD_PRELOAD), it wraps through the PMPI profiling interface every
 * call that creates or starts a request and every collective, and keeps
 * where each was called and with what arguments in md_track_table
 * (include/mdtrack.h).  mpi-deadlock reads that table while the rank is
 * stopped.
 *
 * The hot path of a request is a hash of the address of the caller's
 * request variable, a 32-byte store into a cache line that the
 * variable's last post wrote, and a tail call into the MPI library: no
 * system call, lock, atomic read-modify-write or allocation, safe under
 * MPI_THREAD_MULTIPLE.  A collective's record is written in place, its
 * ticket taken without a locked instruction.  Nothing is written
 * anywhere and nothing talks to the tool.
 *
 * The PMPI entry points are weak references: the library is not linked
 * against libmpi and binds to whichever libmpi the rank loaded, and a
 * process without MPI (a wrapper script under mpirun) loads it harmlessly.
 * A libmpi dlopen()ed after start is found on the first call.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "mdtrack.h"

#define EXPORT __attribute__((visibility("default")))
/* A handle's value: a pointer, or an integer handle zero-extended. */
#define H(x)                                                                \
	(sizeof(x) == 4 ? (uint64_t)(uint32_t)(uintptr_t)(x)                \
			: (uint64_t)(uintptr_t)(x))
#define RET() H(__builtin_return_address(0))

EXPORT struct mdt_table md_track_table = {
	.magic = MDT_MAGIC,
	.version = MDT_VERSION,
	.size = sizeof(struct mdt_table),
	.post_size = sizeof(struct mdt_post),
	.rec_size = sizeof(struct mdt_rec),
	.coll_size = sizeof(struct mdt_coll),
	.nbuckets = MDT_NBUCKETS,
	.ways = MDT_WAYS,
	.ninits = MDT_NINITS,
	.ncolls = MDT_NCOLLS,
	.any_source = MPI_ANY_SOURCE,
	.any_tag = MPI_ANY_TAG,
	.proc_null = MPI_PROC_NULL,
	.root = MPI_ROOT,
	.handle_size = sizeof(MPI_Request),
#if defined(MPICH_VERSION)
	.comm_world = H(MPI_COMM_WORLD),
	.comm_self = H(MPI_COMM_SELF),
	.request_null = H(MPI_REQUEST_NULL),
#elif defined(OPEN_MPI)
	.request_null = (uint64_t)(uintptr_t)MPI_REQUEST_NULL,
#endif
};

/* Declared weak so that loading needs no libmpi (see the top). */
#define WEAK_LIST(X)                                                        \
	X(PMPI_Isend) X(PMPI_Ibsend) X(PMPI_Issend) X(PMPI_Irsend)          \
	X(PMPI_Irecv) X(PMPI_Send_init) X(PMPI_Bsend_init)                  \
	X(PMPI_Ssend_init) X(PMPI_Rsend_init) X(PMPI_Recv_init)             \
	X(PMPI_Start) X(PMPI_Startall) X(PMPI_Barrier) X(PMPI_Bcast)        \
	X(PMPI_Gather) X(PMPI_Gatherv) X(PMPI_Scatter) X(PMPI_Scatterv)     \
	X(PMPI_Allgather) X(PMPI_Allgatherv) X(PMPI_Alltoall)               \
	X(PMPI_Alltoallv) X(PMPI_Alltoallw) X(PMPI_Reduce)                  \
	X(PMPI_Allreduce) X(PMPI_Reduce_scatter)                            \
	X(PMPI_Reduce_scatter_block) X(PMPI_Scan) X(PMPI_Exscan)            \
	X(PMPI_Ibarrier) X(PMPI_Ibcast) X(PMPI_Igather) X(PMPI_Igatherv)    \
	X(PMPI_Iscatter) X(PMPI_Iscatterv) X(PMPI_Iallgather)               \
	X(PMPI_Iallgatherv) X(PMPI_Ialltoall) X(PMPI_Ialltoallv)            \
	X(PMPI_Ialltoallw) X(PMPI_Ireduce) X(PMPI_Iallreduce)               \
	X(PMPI_Ireduce_scatter) X(PMPI_Ireduce_scatter_block)               \
	X(PMPI_Iscan) X(PMPI_Iexscan) X(PMPI_Test) X(PMPI_Testany)          \
	X(PMPI_Testall) X(PMPI_Testsome) X(PMPI_Iprobe) X(PMPI_Improbe)
#define STR(x) #x
#define WEAK(name) _Pragma(STR(weak name))
WEAK_LIST(WEAK)
#if defined(OPEN_MPI)
/* MPI_REQUEST_NULL is the address of this object of libmpi's. */
#pragma weak ompi_request_null
#endif

/* A PMPI entry point that was not there when the library was loaded. */
__attribute__((noinline, cold, used, visibility("hidden"))) void *
md_track_late(const char *name);
void *md_track_late(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f) {
		fprintf(stderr, "libmdtrack: %s not found: the program "
				"calls MPI without an MPI library loaded "
				"globally; run it without libmdtrack.so\n",
			name);
		abort();
	}
	return f;
}

#if defined(__x86_64__)
/*
 * A C call on the hot path, even never taken, makes the compiler keep
 * every argument of the wrapper in saved registers across it.  A
 * trampoline saves what the C calling convention lets a call change, so
 * an asm call of it clobbers only rax: the argument comes in rax, the
 * answer goes out in it.  (Built with -mno-red-zone: the call writes
 * below the stack pointer.)
 */
#define TRAMPOLINE(name, fn)                                                \
	__asm__(".pushsection .text\n"                                      \
		".p2align 4\n"                                              \
		".type " #name ", @function\n"                              \
		#name ":\n"                                                 \
		"	push %rdi\n	push %rsi\n	push %rdx\n	push %rcx\n" \
		"	push %r8\n	push %r9\n	push %r10\n	push %r11\n" \
		"	push %rbp\n	mov %rsp, %rbp\n	and $-16, %rsp\n" \
		"	sub $256, %rsp\n"                                   \
		"	movdqa %xmm0, 0(%rsp)\n	movdqa %xmm1, 16(%rsp)\n"   \
		"	movdqa %xmm2, 32(%rsp)\n	movdqa %xmm3, 48(%rsp)\n"  \
		"	movdqa %xmm4, 64(%rsp)\n	movdqa %xmm5, 80(%rsp)\n"  \
		"	movdqa %xmm6, 96(%rsp)\n	movdqa %xmm7, 112(%rsp)\n" \
		"	movdqa %xmm8, 128(%rsp)\n	movdqa %xmm9, 144(%rsp)\n" \
		"	movdqa %xmm10, 160(%rsp)\n	movdqa %xmm11, 176(%rsp)\n" \
		"	movdqa %xmm12, 192(%rsp)\n	movdqa %xmm13, 208(%rsp)\n" \
		"	movdqa %xmm14, 224(%rsp)\n	movdqa %xmm15, 240(%rsp)\n" \
		"	mov %rax, %rdi\n	call " #fn "\n"                  \
		"	movdqa 0(%rsp), %xmm0\n	movdqa 16(%rsp), %xmm1\n"   \
		"	movdqa 32(%rsp), %xmm2\n	movdqa 48(%rsp), %xmm3\n"  \
		"	movdqa 64(%rsp), %xmm4\n	movdqa 80(%rsp), %xmm5\n"  \
		"	movdqa 96(%rsp), %xmm6\n	movdqa 112(%rsp), %xmm7\n" \
		"	movdqa 128(%rsp), %xmm8\n	movdqa 144(%rsp), %xmm9\n" \
		"	movdqa 160(%rsp), %xmm10\n	movdqa 176(%rsp), %xmm11\n" \
		"	movdqa 192(%rsp), %xmm12\n	movdqa 208(%rsp), %xmm13\n" \
		"	movdqa 224(%rsp), %xmm14\n	movdqa 240(%rsp), %xmm15\n" \
		"	mov %rbp, %rsp\n	pop %rbp\n"                         \
		"	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n"   \
		"	pop %rcx\n	pop %rdx\n	pop %rsi\n	pop %rdi\n"  \
		"	ret\n"                                              \
		".size " #name ", .-" #name "\n"                            \
		".popsection\n")
/* Calls a trampoline with x in rax; returns what it left there. */
#define VIA(name, x)                                                        \
	({                                                                  \
		void *v_ = (void *)(x);                                     \
		__asm__ volatile("call " #name                              \
				 : "+a"(v_)                                 \
				 :                                          \
				 : "memory", "cc");                         \
		v_;                                                         \
	})

TRAMPOLINE(md_track_late_x86, md_track_late);

static inline void *pmpi_entry(void *f, const char *name)
{
	return __builtin_expect(!f, 0) ? VIA(md_track_late_x86, name) : f;
}
#else
static inline void *pmpi_entry(void *f, const char *name)
{
	return f ? f : md_track_late(name);
}
#endif

#define PMPI(name) ((__typeof__(&name))pmpi_entry((void *)name, #name))

/* Inside the library the table is reached directly, not through the GOT
 * (md_track_table is exported, hence interposable). */
extern struct mdt_table md_track_self
	__attribute__((alias("md_track_table"), visibility("hidden")));
static struct mdt_table *const T = &md_track_self;

/* A ring record: mark it unwritten, fill it, then stamp it. */
static inline void rec_put(struct mdt_rec *r, uint64_t t, int call,
			   uint64_t req, uint64_t comm, uint64_t dt,
			   int peer, int tag, int count, uint64_t ret)
{
	/* No "unwritten" mark first: the ticket is taken, so the slot's old
	 * stamp is already stale to the reader until this one lands. */
	r->request = req;
	r->comm = comm;
	r->datatype = dt;
	r->op = 0;
	r->ret = ret;
	r->call = call;
	r->peer = peer;
	r->tag = tag;
	r->count = count;
	__atomic_store_n(&r->stamp, t + 1, __ATOMIC_RELEASE);
}

/* A post's site without its check byte. */
#define SITE(call, ret) (((ret) & MDT_RET_MASK) | (uint64_t)(call) << 48)

#define POST_FN(name) name
#include "mdtrack_post.h"
#undef POST_FN

/*
 * The wrappers' rare paths, md_track_slow and md_track_slot, are out of
 * line.  On x86-64 they save every register they use and use no SSE
 * register (built for general registers only, with their own copies of
 * the writers): a stub passes the argument from rax and leaves the
 * answer there, so a wrapper's call of them clobbers nothing else.  A C
 * call there, even never taken, made the compiler keep the wrapper's
 * arguments in saved registers on every call, and cost the tail call its
 * point.
 */
#if defined(__x86_64__)
#define SAVES_ALL no_caller_saved_registers
#define GPR_STUB(name, fn)                                                  \
	__asm__(".pushsection .text\n"                                      \
		".p2align 4\n"                                              \
		".type " #name ", @function\n"                              \
		#name ":\n"                                                 \
		"	push %rdi\n	mov %rax, %rdi\n	call " #fn "\n"    \
		"	pop %rdi\n	ret\n"                                    \
		".size " #name ", .-" #name "\n"                            \
		".popsection\n")
#define GPR_BEGIN                                                           \
	_Pragma("GCC push_options")                                         \
	_Pragma("GCC target(\"general-regs-only\")")
#define GPR_END _Pragma("GCC pop_options")
#define GPR(name) gpr_##name
GPR_BEGIN
#define POST_FN(name) gpr_##name
#include "mdtrack_post.h"
#undef POST_FN
GPR_END
#else
#define SAVES_ALL
#define GPR_BEGIN
#define GPR_END
#define GPR(name) name
#endif

/* Handles are this many bytes: variables' buckets (mdtrack.h). */
#define VAR_SHIFT MDT_VAR_SHIFT(sizeof(MPI_Request))

/*
 * The rare path of a post through the variable at loc: its bucket's
 * first record is another variable's (it goes to the second way), or
 * the variable still holds a request (its record is kept as a held
 * one).  The first record is then left as the variable's with site 0,
 * for the post to fill.
 */
GPR_BEGIN
__attribute__((noinline, cold, used, visibility("hidden"), SAVES_ALL)) void
md_track_slow(uint64_t loc);
void md_track_slow(uint64_t loc)
{
	struct mdt_post *b = T->posts[MDT_VAR_BUCKET(loc, VAR_SHIFT)];

	if (b[0].loc == loc)
		GPR(post_held)(b, GPR(held_at)(loc));
	/* The handle's bucket may be the variable's. */
	if (b[0].loc != loc)
		GPR(post_push)(b, loc);
	__atomic_store_n(&b[0].site, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	b[0].loc = loc;
}
GPR_END
#if defined(__x86_64__)
GPR_STUB(md_track_slow_x86, md_track_slow);
#define SLOW(loc) ((void)VIA(md_track_slow_x86, (uintptr_t)(loc)))
#else
#define SLOW(loc) md_track_slow(loc)
#endif

/*
 * A post through the request variable at loc.  A loop posts through
 * the same variables with the same arguments: the record is the
 * variable's already and says so, and nothing is written or read from
 * the variable.  Otherwise, the variable holding MPI_REQUEST_NULL, only
 * what changed is written, site last (see mdtrack.h).  The x86-64
 * wrappers of Open MPI's point-to-point posts below do the same in
 * assembly.
 */
static inline __attribute__((always_inline)) void
post(uint64_t loc, uint64_t comm, int peer, int tag, uint64_t site)
{
	struct mdt_post *b = T->posts[MDT_VAR_BUCKET(loc, VAR_SHIFT)];

	site |= MDT_VAR_CHECK(loc, VAR_SHIFT) << 56;
	if (__builtin_expect(b[0].loc == loc, 1) &&
	    __atomic_load_n(&b[0].site, __ATOMIC_RELAXED) == site &&
	    b[0].comm == comm && b[0].peer == peer && b[0].tag == tag)
		return;
	if (__builtin_expect(b[0].loc != loc ||
				     held_at(loc) != H(MPI_REQUEST_NULL),
			     0))
		SLOW(loc);
	b[0].comm = comm;
	b[0].peer = peer;
	b[0].tag = tag;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&b[0].site, site, __ATOMIC_RELEASE);
}

static inline int peer_of(int p)
{
	return p == MPI_ANY_SOURCE ? MDT_ANY : p == MPI_PROC_NULL ? MDT_PROC_NULL
		: p == MPI_ROOT ? MDT_ROOT : p;
}

static inline void init(int call, MPI_Request req, MPI_Comm comm,
			MPI_Datatype dt, int peer, int tag, int count,
			uint64_t ret)
{
	/* Rare: a ticket of its own each. */
	uint64_t t = __atomic_fetch_add(&T->inits_head, 1, __ATOMIC_RELAXED);

	rec_put(&T->inits[t & (MDT_NINITS - 1)], t, call, H(req), H(comm),
		H(dt), peer, tag, count, ret);
}

#define COLL_HASH(comm) ((unsigned)(MDT_HASH((comm) >> 4) >> 40))

/* The colls slot of a communicator: its own, a free one, or, with all
 * MDT_PROBE taken by others, the first one (counted as dropped).  Out of
 * line for the wrappers as md_track_slow is (a communicator's first
 * collective, or one whose slot is not the first probed). */
GPR_BEGIN
__attribute__((noinline, cold, used, visibility("hidden"), SAVES_ALL))
struct mdt_coll *md_track_slot(uint64_t comm);
struct mdt_coll *md_track_slot(uint64_t comm)
{
	unsigned h = COLL_HASH(comm);
	struct mdt_coll *c;

	for (unsigned i = 0; i < MDT_PROBE; i++) {
		uint64_t k, zero = 0;

		c = &T->colls[(h + i) & (MDT_NCOLLS - 1)];
		k = __atomic_load_n(&c->comm, __ATOMIC_RELAXED);
		if (k == comm)
			return c;
		if (k == 0 &&
		    (__atomic_compare_exchange_n(&c->comm, &zero, comm, 0,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED) ||
		     zero == comm))
			return c;
	}
	__atomic_fetch_add(&T->coll_dropped, 1, __ATOMIC_RELAXED);
	c = &T->colls[h & (MDT_NCOLLS - 1)];
	__atomic_store_n(&c->comm, comm, __ATOMIC_RELAXED);
	c->ncalls = 0;
	return c;
}
GPR_END
#if defined(__x86_64__)
GPR_STUB(md_track_slot_x86, md_track_slot);
#define SLOT(comm) ((struct mdt_coll *)VIA(md_track_slot_x86, (comm)))
#else
#define SLOT(comm) md_track_slot(comm)
#endif

static inline struct mdt_coll *coll_slot(uint64_t comm)
{
	struct mdt_coll *c = &T->colls[COLL_HASH(comm) & (MDT_NCOLLS - 1)];

	if (__builtin_expect(__atomic_load_n(&c->comm, __ATOMIC_RELAXED) ==
				     comm, 1))
		return c;
	return SLOT(comm);
}

static inline void coll(int call, MPI_Comm comm, MPI_Datatype dt, MPI_Op op,
			int root, int count, uint64_t ret)
{
	struct mdt_coll *c = coll_slot(H(comm));
	/* A ticket without a locked add (it cost a collective more than
	 * the rest of its record), and a new one only when the
	 * communicator is not the last collective's: a loop on one
	 * communicator writes only its own slot (a store to the head's
	 * line cost a small MPI_Allreduce 0.6 %, doc/scale.md).  Threads
	 * calling collectives at the same moment may take one ticket
	 * twice, and only the order of those records, which MPI leaves
	 * open anyway, is lost. */
	uint64_t t = __atomic_load_n(&T->colls_head, __ATOMIC_RELAXED);

	if (__builtin_expect(__atomic_load_n(&T->colls_last, __ATOMIC_RELAXED) !=
				     H(comm),
			     0)) {
		__atomic_store_n(&T->colls_head, ++t, __ATOMIC_RELAXED);
		__atomic_store_n(&T->colls_last, H(comm), __ATOMIC_RELAXED);
	}

	__atomic_store_n(&c->stamp, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	c->datatype = H(dt);
	c->op = H(op);
	c->ret = ret;
	c->call = call;
	c->root = peer_of(root);
	c->count = count;
	/* MPI orders the collectives on one communicator: no race here. */
	c->ncalls++;
	__atomic_store_n(&c->stamp, t + 1, __ATOMIC_RELEASE);
}

#define NOOP ((MPI_Op)0)
#define NODT ((MPI_Datatype)0)

/*
 * Point-to-point and nonblocking collective posts are recorded before
 * the call, by where the caller keeps the request (the MPI_Request
 * variable it passes), and the wrapper ends in a tail call: no frame,
 * no saved registers, no copy of the seventh argument (about half of
 * what a wrapper that records after the call costs).  The collector
 * reads the handle from that variable while the rank is stopped.
 * Persistent creations are recorded after the call, by the handle it
 * gives: they are rare, and the handle lives until MPI_Request_free.
 */

/* The call succeeded (creations only). */
#define OK(rc) __builtin_expect((rc) == MPI_SUCCESS, 1)

#if defined(__x86_64__) && defined(OPEN_MPI)
/*
 * The point-to-point posts, Open MPI on x86-64: post() in assembly.  The
 * compiler's version keeps two arguments in saved registers (pushed and
 * popped) and writes the seventh back to the stack; this uses rax, r10
 * and r11 only, which the calling convention lets a call change, and
 * in a loop only loads and compares, with few branches (measured in the
 * message-rate loop of make bench: a store there waits behind MPI's own
 * stores to shared memory, and each compare-and-branch cost about 0.2
 * %, doc/scale.md).  Arguments: rdi buf, esi count,
 * rdx datatype, ecx peer, r8d tag, r9 comm, 8(%rsp) the request
 * variable; (%rsp) is the return address (below 2^48 in user space).
 * MPI_Isend's site bits: MPI_Isend_call.
 */
_Static_assert(sizeof(MPI_Request) == 8 && sizeof(MPI_Comm) == 8,
	       "Open MPI's handles are pointers");
#define XSTR(x) STR(x)
#define ASM_P2P(name)                                                       \
	static const uint64_t name##_call __attribute__((used)) =           \
		(uint64_t)MDT_##name << 48;                                 \
	static const char name##_pmpi[] __attribute__((used)) = "P" #name; \
	__asm__(".pushsection .text\n"                                      \
		".p2align 4\n"                                              \
		".globl " #name "\n"                                        \
		".weak P" #name "\n"                                        \
		".type " #name ", @function\n"                              \
		#name ":\n"                                                 \
		".cfi_startproc\n"                                          \
		/* r11 = the bucket of the variable, r10: its offset is   \
		 * (loc >> 3 ^ loc >> 14) % NBUCKETS * 64, computed as      \
		 * (loc << 3 ^ loc >> 8) & (NBUCKETS - 1) << 6 */           \
		"	mov 8(%rsp), %r10\n"                                 \
		"	mov %r10, %rax\n"                                    \
		"	mov %r10, %r11\n"                                    \
		"	shl $3, %rax\n"                                      \
		"	shr $(3 + " XSTR(MDT_BUCKET_BITS) " - 6), %r11\n"    \
		"	xor %r11, %rax\n"                                    \
		"	and $((" XSTR(MDT_NBUCKETS) " - 1) << 6), %eax\n"    \
		"	lea md_track_self+" XSTR(MDT_POSTS_AT) "(%rip), %r11\n" \
		"	add %rax, %r11\n"                                    \
		/* The variable's record, the same call at the same place   \
		 * with the same arguments (a loop): nothing to write; what \
		 * the variable holds is not read (see mdtrack.h) */        \
		"	cmp %r10, (%r11)\n"                                  \
		"	jne 3f\n"                                            \
		/* rax = site: check byte, call, return address */          \
		"	mov %r10, %rax\n"                                    \
		"	shr $(3 + " XSTR(MDT_BUCKET_BITS) "), %rax\n"        \
		"	shl $56, %rax\n"                                     \
		"	or (%rsp), %rax\n"                                   \
		"	or " #name "_call(%rip), %rax\n"                     \
		"	cmp %rax, 24(%r11)\n"                                \
		"	jne 5f\n"                                            \
		/* comm, peer and tag: one branch (rcx's upper half is      \
		 * not the int argument's) */                               \
		"	mov 8(%r11), %r10\n"                                 \
		"	xor %r9, %r10\n"                                     \
		"	mov %ecx, %ecx\n"                                    \
		"	mov %r8d, %eax\n"                                    \
		"	shl $32, %rax\n"                                     \
		"	or %rcx, %rax\n"                                     \
		"	xor 16(%r11), %rax\n"                                \
		"	or %rax, %r10\n"                                     \
		"	jnz 5f\n"                                            \
		"2:	jmp *" #name "_next(%rip)\n"                         \
		/* Something changed: written in place if the variable      \
		 * holds MPI_REQUEST_NULL, else the slow path first */      \
		"5:	mov 8(%rsp), %r10\n"                                 \
		"	mov md_track_self+" XSTR(MDT_REQUEST_NULL_AT) "(%rip), %rax\n" \
		"	cmp %rax, (%r10)\n"                                  \
		"	je 4f\n"                                             \
		"3:	mov %r10, %rax\n"                                    \
		"	call md_track_slow_x86\n"                            \
		"4:	mov 8(%rsp), %r10\n"                                 \
		"	mov %r10, %rax\n"                                    \
		"	shr $(3 + " XSTR(MDT_BUCKET_BITS) "), %rax\n"        \
		"	shl $56, %rax\n"                                     \
		"	or (%rsp), %rax\n"                                   \
		"	or " #name "_call(%rip), %rax\n"                     \
		/* peer and tag in one store: the next post's 8-byte load   \
		 * of them is then forwarded from it, not stalled */        \
		"	mov %ecx, %ecx\n"                                    \
		"	mov %r8d, %r10d\n"                                   \
		"	shl $32, %r10\n"                                     \
		"	or %rcx, %r10\n"                                     \
		"	mov %r9, 8(%r11)\n"                                  \
		"	mov %r10, 16(%r11)\n"                                \
		"	mov %rax, 24(%r11)\n"                                \
		"	jmp 2b\n"                                            \
		".cfi_endproc\n"                                            \
		".size " #name ", .-" #name "\n"                            \
		/* The PMPI entry found late: kept for the next calls. */   \
		".p2align 4\n"                                              \
		#name "_late:\n"                                            \
		".cfi_startproc\n"                                          \
		"	lea " #name "_pmpi(%rip), %rax\n"                    \
		"	call md_track_late_x86\n"                            \
		"	mov %rax, " #name "_next(%rip)\n"                    \
		"	jmp *%rax\n"                                         \
		".cfi_endproc\n"                                            \
		".popsection\n");                                          \
	void name##_late(void) __attribute__((visibility("hidden")));    \
	/* Where the wrapper goes on: the PMPI entry point, or, with no   \
	 * libmpi loaded at start (see pmpi_next), name##_late. */        \
	static void *name##_next __attribute__((used)) = (void *)P##name
/* The same contract as post(): checked by tests/mdtrack_test.c. */
_Static_assert(MDT_VAR_SHIFT(sizeof(MPI_Request)) == 3, "ASM_P2P's shift");
#define P2P_SEND(name) ASM_P2P(name);
#define P2P_RECV(name) ASM_P2P(name);
#else
#define P2P_SEND(name)                                                      \
	EXPORT int name(const void *buf, int count, MPI_Datatype dt,        \
			int dest, int tag, MPI_Comm comm, MPI_Request *req) \
	{                                                                   \
		post(H(req), H(comm), dest, tag, SITE(MDT_##name, RET()));  \
		return PMPI(P##name)(buf, count, dt, dest, tag, comm, req); \
	}
#define P2P_RECV(name)                                                      \
	EXPORT int name(void *buf, int count, MPI_Datatype dt, int source,  \
			int tag, MPI_Comm comm, MPI_Request *req)           \
	{                                                                   \
		post(H(req), H(comm), source, tag,                          \
		     SITE(MDT_##name, RET()));                              \
		return PMPI(P##name)(buf, count, dt, source, tag, comm,     \
				     req);                                  \
	}
#endif
#define INIT_SEND(name)                                                     \
	EXPORT int name(const void *buf, int count, MPI_Datatype dt,        \
			int dest, int tag, MPI_Comm comm, MPI_Request *req) \
	{                                                                   \
		uint64_t ret = RET();                                       \
		int rc = PMPI(P##name)(buf, count, dt, dest, tag, comm,     \
				       req);                                \
		if (OK(rc))                                                 \
			init(MDT_##name, *req, comm, dt, dest, tag, count,  \
			     ret);                                          \
		return rc;                                                  \
	}

P2P_SEND(MPI_Isend)
P2P_SEND(MPI_Ibsend)
P2P_SEND(MPI_Issend)
P2P_SEND(MPI_Irsend)
INIT_SEND(MPI_Send_init)
INIT_SEND(MPI_Bsend_init)
INIT_SEND(MPI_Ssend_init)
INIT_SEND(MPI_Rsend_init)

P2P_RECV(MPI_Irecv)

#if defined(__x86_64__) && defined(OPEN_MPI)
/* A libmpi not loaded at start (dlopen()ed later): the wrappers go on
 * through their late stubs, which look it up once. */
__attribute__((constructor)) static void pmpi_next(void)
{
#define NEXT(name)                                                          \
	if (!name##_next)                                                   \
		name##_next = (void *)name##_late;
	NEXT(MPI_Isend) NEXT(MPI_Ibsend) NEXT(MPI_Issend) NEXT(MPI_Irsend)
	NEXT(MPI_Irecv)
#undef NEXT
}
#endif

EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source,
			 int tag, MPI_Comm comm, MPI_Request *req)
{
	uint64_t ret = RET();
	int rc = PMPI(PMPI_Recv_init)(buf, count, dt, source, tag, comm, req);

	if (OK(rc))
		init(MDT_MPI_Recv_init, *req, comm, dt, source, tag, count,
		     ret);
	return rc;
}

/* A start names only the request: the collector joins it to its init. */
EXPORT int MPI_Start(MPI_Request *req)
{
	post(H(req), 0, MDT_NONE, MDT_NONE, SITE(MDT_MPI_Start, RET()));
	return PMPI(PMPI_Start)(req);
}

EXPORT int MPI_Startall(int count, MPI_Request reqs[])
{
	uint64_t site = SITE(MDT_MPI_Startall, RET());

	for (int i = 0; i < count; i++)
		post(H(&reqs[i]), 0, MDT_NONE, MDT_NONE, site);
	return PMPI(PMPI_Startall)(count, reqs);
}

/*
 * The polling calls: a count and the last one's site, before the call
 * and then a tail call, as posts.  Two plain stores on the colls_head
 * line; a test in a tight loop pays them on every call.
 */
static inline void poll_mark(uint64_t site)
{
	__atomic_store_n(&T->polls,
			 __atomic_load_n(&T->polls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&T->poll_site, site, __ATOMIC_RELAXED);
}

EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
	poll_mark(SITE(MDT_MPI_Test, RET()));
	return PMPI(PMPI_Test)(req, flag, st);
}

EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag,
		       MPI_Status *st)
{
	poll_mark(SITE(MDT_MPI_Testany, RET()));
	return PMPI(PMPI_Testany)(n, reqs, idx, flag, st);
}

EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag,
		       MPI_Status sts[])
{
	poll_mark(SITE(MDT_MPI_Testall, RET()));
	return PMPI(PMPI_Testall)(n, reqs, flag, sts);
}

EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *outcount,
			int idx[], MPI_Status sts[])
{
	poll_mark(SITE(MDT_MPI_Testsome, RET()));
	return PMPI(PMPI_Testsome)(n, reqs, outcount, idx, sts);
}

EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
		      MPI_Status *st)
{
	poll_mark(SITE(MDT_MPI_Iprobe, RET()));
	return PMPI(PMPI_Iprobe)(source, tag, comm, flag, st);
}

EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
		       MPI_Message *msg, MPI_Status *st)
{
	poll_mark(SITE(MDT_MPI_Improbe, RET()));
	return PMPI(PMPI_Improbe)(source, tag, comm, flag, msg, st);
}

/* Blocking collectives: record before the call, which may never return. */

EXPORT int MPI_Barrier(MPI_Comm comm)
{
	coll(MDT_MPI_Barrier, comm, NODT, NOOP, MDT_NONE, 0, RET());
	return PMPI(PMPI_Barrier)(comm);
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root,
		     MPI_Comm comm)
{
	coll(MDT_MPI_Bcast, comm, dt, NOOP, root, count, RET());
	return PMPI(PMPI_Bcast)(buf, count, dt, root, comm);
}

#define ROOTED(name, scnt, sdt, rcnt, rdt)                                  \
	EXPORT int name(const void *sb, int scnt, MPI_Datatype sdt,         \
			void *rb, int rcnt, MPI_Datatype rdt, int root,     \
			MPI_Comm comm)                                      \
	{                                                                   \
		coll(MDT_##name, comm, COLL_DT_##name, NOOP, root,          \
		     COLL_CNT_##name, RET());                               \
		return PMPI(P##name)(sb, scnt, sdt, rb, rcnt, rdt, root,    \
				     comm);                                 \
	}
/* The count and type a rank contributes: what members must agree on. */
#define COLL_DT_MPI_Gather sdt
#define COLL_CNT_MPI_Gather scnt
#define COLL_DT_MPI_Scatter rdt
#define COLL_CNT_MPI_Scatter rcnt
ROOTED(MPI_Gather, scnt, sdt, rcnt, rdt)
ROOTED(MPI_Scatter, scnt, sdt, rcnt, rdt)

EXPORT int MPI_Gatherv(const void *sb, int scnt, MPI_Datatype sdt, void *rb,
		       const int rcnts[], const int displs[],
		       MPI_Datatype rdt, int root, MPI_Comm comm)
{
	coll(MDT_MPI_Gatherv, comm, sdt, NOOP, root, scnt, RET());
	return PMPI(PMPI_Gatherv)(sb, scnt, sdt, rb, rcnts, displs, rdt, root,
				  comm);
}

EXPORT int MPI_Scatterv(const void *sb, const int scnts[], const int displs[],
			MPI_Datatype sdt, void *rb, int rcnt,
			MPI_Datatype rdt, int root, MPI_Comm comm)
{
	coll(MDT_MPI_Scatterv, comm, rdt, NOOP, root, rcnt, RET());
	return PMPI(PMPI_Scatterv)(sb, scnts, displs, sdt, rb, rcnt, rdt,
				   root, comm);
}

#define ALLTO(name)                                                         \
	EXPORT int name(const void *sb, int scnt, MPI_Datatype sdt,         \
			void *rb, int rcnt, MPI_Datatype rdt,               \
			MPI_Comm comm)                                      \
	{                                                                   \
		coll(MDT_##name, comm, sdt, NOOP, MDT_NONE, scnt, RET());   \
		return PMPI(P##name)(sb, scnt, sdt, rb, rcnt, rdt, comm);   \
	}
ALLTO(MPI_Allgather)
ALLTO(MPI_Alltoall)

EXPORT int MPI_Allgatherv(const void *sb, int scnt, MPI_Datatype sdt,
			  void *rb, const int rcnts[], const int displs[],
			  MPI_Datatype rdt, MPI_Comm comm)
{
	coll(MDT_MPI_Allgatherv, comm, sdt, NOOP, MDT_NONE, scnt, RET());
	return PMPI(PMPI_Allgatherv)(sb, scnt, sdt, rb, rcnts, displs, rdt,
				     comm);
}

EXPORT int MPI_Alltoallv(const void *sb, const int scnts[],
			 const int sdispls[], MPI_Datatype sdt, void *rb,
			 const int rcnts[], const int rdispls[],
			 MPI_Datatype rdt, MPI_Comm comm)
{
	coll(MDT_MPI_Alltoallv, comm, sdt, NOOP, MDT_NONE, 0, RET());
	return PMPI(PMPI_Alltoallv)(sb, scnts, sdispls, sdt, rb, rcnts,
				    rdispls, rdt, comm);
}

EXPORT int MPI_Alltoallw(const void *sb, const int scnts[],
			 const int sdispls[], const MPI_Datatype sdts[],
			 void *rb, const int rcnts[], const int rdispls[],
			 const MPI_Datatype rdts[], MPI_Comm comm)
{
	coll(MDT_MPI_Alltoallw, comm, NODT, NOOP, MDT_NONE, 0, RET());
	return PMPI(PMPI_Alltoallw)(sb, scnts, sdispls, sdts, rb, rcnts,
				    rdispls, rdts, comm);
}

EXPORT int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt,
		      MPI_Op op, int root, MPI_Comm comm)
{
	coll(MDT_MPI_Reduce, comm, dt, op, root, count, RET());
	return PMPI(PMPI_Reduce)(sb, rb, count, dt, op, root, comm);
}

#define REDUCE_ALL(name)                                                    \
	EXPORT int name(const void *sb, void *rb, int count,                \
			MPI_Datatype dt, MPI_Op op, MPI_Comm comm)          \
	{                                                                   \
		coll(MDT_##name, comm, dt, op, MDT_NONE, count, RET());     \
		return PMPI(P##name)(sb, rb, count, dt, op, comm);          \
	}
REDUCE_ALL(MPI_Allreduce)
REDUCE_ALL(MPI_Scan)
REDUCE_ALL(MPI_Exscan)

EXPORT int MPI_Reduce_scatter(const void *sb, void *rb, const int rcnts[],
			      MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	coll(MDT_MPI_Reduce_scatter, comm, dt, op, MDT_NONE, 0, RET());
	return PMPI(PMPI_Reduce_scatter)(sb, rb, rcnts, dt, op, comm);
}

EXPORT int MPI_Reduce_scatter_block(const void *sb, void *rb, int rcnt,
				    MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	coll(MDT_MPI_Reduce_scatter_block, comm, dt, op, MDT_NONE, rcnt,
	     RET());
	return PMPI(PMPI_Reduce_scatter_block)(sb, rb, rcnt, dt, op, comm);
}

/* Nonblocking collectives: a collective record (all the arguments) and
 * a request record (the call, communicator and root), before the call
 * as for point-to-point posts. */

#define ICOLL(call, dt, op, root, count)                                    \
	do {                                                                \
		uint64_t ret = RET();                                       \
		coll(call, comm, dt, op, root, count, ret);                 \
		post(H(req), H(comm), root, MDT_NONE, SITE(call, ret));     \
	} while (0)

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	ICOLL(MDT_MPI_Ibarrier, NODT, NOOP, MDT_NONE, 0);
	return PMPI(PMPI_Ibarrier)(comm, req);
}

EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root,
		      MPI_Comm comm, MPI_Request *req)
{
	ICOLL(MDT_MPI_Ibcast, dt, NOOP, root, count);
	return PMPI(PMPI_Ibcast)(buf, count, dt, root, comm, req);
}

#define IROOTED(name, dtv, cntv)                                            \
	EXPORT int name(const void *sb, int scnt, MPI_Datatype sdt,         \
			void *rb, int rcnt, MPI_Datatype rdt, int root,     \
			MPI_Comm comm, MPI_Request *req)                    \
	{                                                                   \
		ICOLL(MDT_##name, dtv, NOOP, root, cntv);                   \
		return PMPI(P##name)(sb, scnt, sdt, rb, rcnt, rdt, root,    \
				     comm, req);                            \
	}
IROOTED(MPI_Igather, sdt, scnt)
IROOTED(MPI_Iscatter, rdt, rcnt)

EXPORT int MPI_Igatherv(const void *sb, int scnt, MPI_Datatype sdt, void *rb,
			const int rcnts[], const int displs[],
			MPI_Datatype rdt, int root, MPI_Comm comm,
			MPI_Request *req)
{
	ICOLL(MDT_MPI_Igatherv, sdt, NOOP, root, scnt);
	return PMPI(PMPI_Igatherv)(sb, scnt, sdt, rb, rcnts, displs, rdt,
				   root, comm, req);
}

EXPORT int MPI_Iscatterv(const void *sb, const int scnts[],
			 const int displs[], MPI_Datatype sdt, void *rb,
			 int rcnt, MPI_Datatype rdt, int root, MPI_Comm comm,
			 MPI_Request *req)
{
	ICOLL(MDT_MPI_Iscatterv, rdt, NOOP, root, rcnt);
	return PMPI(PMPI_Iscatterv)(sb, scnts, displs, sdt, rb, rcnt, rdt,
				    root, comm, req);
}

#define IALLTO(name)                                                        \
	EXPORT int name(const void *sb, int scnt, MPI_Datatype sdt,         \
			void *rb, int rcnt, MPI_Datatype rdt,               \
			MPI_Comm comm, MPI_Request *req)                    \
	{                                                                   \
		ICOLL(MDT_##name, sdt, NOOP, MDT_NONE, scnt);               \
		return PMPI(P##name)(sb, scnt, sdt, rb, rcnt, rdt, comm,    \
				     req);                                  \
	}
IALLTO(MPI_Iallgather)
IALLTO(MPI_Ialltoall)

EXPORT int MPI_Iallgatherv(const void *sb, int scnt, MPI_Datatype sdt,
			   void *rb, const int rcnts[], const int displs[],
			   MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
	ICOLL(MDT_MPI_Iallgatherv, sdt, NOOP, MDT_NONE, scnt);
	return PMPI(PMPI_Iallgatherv)(sb, scnt, sdt, rb, rcnts, displs, rdt,
				      comm, req);
}

EXPORT int MPI_Ialltoallv(const void *sb, const int scnts[],
			  const int sdispls[], MPI_Datatype sdt, void *rb,
			  const int rcnts[], const int rdispls[],
			  MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
	ICOLL(MDT_MPI_Ialltoallv, sdt, NOOP, MDT_NONE, 0);
	return PMPI(PMPI_Ialltoallv)(sb, scnts, sdispls, sdt, rb, rcnts,
				     rdispls, rdt, comm, req);
}

EXPORT int MPI_Ialltoallw(const void *sb, const int scnts[],
			  const int sdispls[], const MPI_Datatype sdts[],
			  void *rb, const int rcnts[], const int rdispls[],
			  const MPI_Datatype rdts[], MPI_Comm comm,
			  MPI_Request *req)
{
	ICOLL(MDT_MPI_Ialltoallw, NODT, NOOP, MDT_NONE, 0);
	return PMPI(PMPI_Ialltoallw)(sb, scnts, sdispls, sdts, rb, rcnts,
				     rdispls, rdts, comm, req);
}

EXPORT int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype dt,
		       MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
	ICOLL(MDT_MPI_Ireduce, dt, op, root, count);
	return PMPI(PMPI_Ireduce)(sb, rb, count, dt, op, root, comm, req);
}

#define IREDUCE_ALL(name)                                                   \
	EXPORT int name(const void *sb, void *rb, int count,                \
			MPI_Datatype dt, MPI_Op op, MPI_Comm comm,          \
			MPI_Request *req)                                   \
	{                                                                   \
		ICOLL(MDT_##name, dt, op, MDT_NONE, count);                 \
		return PMPI(P##name)(sb, rb, count, dt, op, comm, req);     \
	}
IREDUCE_ALL(MPI_Iallreduce)
IREDUCE_ALL(MPI_Iscan)
IREDUCE_ALL(MPI_Iexscan)
IREDUCE_ALL(MPI_Ireduce_scatter_block)

EXPORT int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcnts[],
			       MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
			       MPI_Request *req)
{
	ICOLL(MDT_MPI_Ireduce_scatter, dt, op, MDT_NONE, 0);
	return PMPI(PMPI_Ireduce_scatter)(sb, rb, rcnts, dt, op, comm, req);
}
