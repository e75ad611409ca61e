/*
 * build.c - from a snapshot to the wait-for graph (DESIGN.md, "Wait-for
 * semantics").  Collectives and wildcard receives go through virtual
 * nodes so that a collective on a million ranks costs a million edges,
 * not a million squared.
 */
#include <stdlib.h>
#include <string.h>

#include "build_int.h"
#include "md.h"

static int find_world(const struct snap *s)
{
	for (int c = 0; c < s->ncomms; c++)
		if (s->comms[c].name && !strcmp(s->comms[c].name, "MPI_COMM_WORLD"))
			return c;
	for (int c = 0; c < s->ncomms; c++)
		if (s->comms[c].size == s->nranks && s->comms[c].group)
			return c;
	return -1;
}

static uint64_t group_hash(const struct snap_comm *c)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)c->size;

	for (int i = 0; c->group && i < c->size; i++)
		h = (h ^ (uint64_t)c->group[i]) * 1099511628211ULL;
	return h;
}

static bool same_ranks(const int *a, int na, const int *b, int nb)
{
	return a && b && na == nb && !memcmp(a, b, (size_t)na * sizeof(int));
}

static bool same_group(const struct snap_comm *a, const struct snap_comm *b)
{
	if (a->size != b->size || !a->group || !b->group)
		return a == b;
	/* An intercommunicator is not an intracommunicator of its local
	 * group. */
	if (!a->remote != !b->remote || a->remote_size != b->remote_size)
		return false;
	if (a->remote && !same_ranks(a->remote, a->remote_size, b->remote,
				     b->remote_size))
		return false;
	return same_ranks(a->group, a->size, b->group, b->size);
}

/* The two sides of one intercommunicator: each one's remote group is the
 * other's local group. */
static bool other_side(const struct snap_comm *a, const struct snap_comm *b)
{
	return a->remote && b->remote && a->id == b->id &&
	       same_ranks(a->group, a->size, b->remote, b->remote_size) &&
	       same_ranks(a->remote, a->remote_size, b->group, b->size);
}

/* Communicators with the same group are one for collectives (a dup of
 * MPI_COMM_WORLD is not another choice).  Hashes first, so the group
 * arrays are compared only on a hash match. */
static int *comm_reps(const struct snap *s, int world)
{
	int n = s->ncomms;
	int *rep = xmalloc((size_t)n * sizeof(int) + 1);
	uint64_t *h = xmalloc((size_t)n * sizeof(uint64_t) + 1);

	for (int c = 0; c < n; c++)
		h[c] = group_hash(&s->comms[c]);
	for (int c = 0; c < n; c++) {
		rep[c] = c;
		if (world >= 0 && h[c] == h[world] &&
		    same_group(&s->comms[c], &s->comms[world])) {
			rep[c] = world;
			continue;
		}
		for (int d = 0; d < c; d++) {
			if (rep[d] == d &&
			    ((h[d] == h[c] &&
			      same_group(&s->comms[c], &s->comms[d])) ||
			     other_side(&s->comms[c], &s->comms[d]))) {
				rep[c] = d;
				break;
			}
		}
	}
	free(h);
	return rep;
}

int anl_add_ev(struct anl_result *r, const struct anl_ev *ev)
{
	if (r->nev == r->evcap) {
		r->evcap = r->evcap ? 2 * r->evcap : 256;
		r->ev = xrealloc(r->ev, (size_t)r->evcap * sizeof(*r->ev));
	}
	r->ev[r->nev] = *ev;
	return r->nev++;
}

int anl_add_vnode(struct anl_result *r, const struct anl_vnode *v,
		  enum wfg_cond cond)
{
	int node = wfg_add_node(r->g, WFG_BLOCKED, cond, v->inferred);

	if (r->nv == r->vcap) {
		r->vcap = r->vcap ? 2 * r->vcap : 16;
		r->v = xrealloc(r->v, (size_t)r->vcap * sizeof(*r->v));
	}
	r->v[r->nv++] = *v;
	return node;
}

bool anl_comm_known(const struct snap *s, int comm)
{
	return comm >= 0 && comm < s->ncomms && s->comms[comm].group;
}

/* "Any member of comm": an OR node over its group (all ranks when the
 * group is unknown, and then inferred); of an intercommunicator, over
 * its remote group, so each side has its own. */
static int any_node(struct bctx *b, int comm)
{
	bool own = comm >= 0 && comm < b->s->ncomms;
	int key = !own ? b->s->ncomms : b->s->comms[comm].remote ? comm
								 : b->rep[comm];
	struct anl_vnode v = { ANL_V_ANY, !anl_comm_known(b->s, comm), comm, NULL,
			       -1, false, false };

	if (b->any_v[key] < 0)
		b->any_v[key] = anl_add_vnode(b->r, &v, WFG_OR);
	return b->any_v[key];
}

static bool op_usable(const struct snap_op *op)
{
	/* A collective's internal request (negative tag, from ob1's queues)
	 * is usable: op_fits keeps it from the point-to-point calls and
	 * gives it to MPI_Wait and its kin, which may wait on a nonblocking
	 * collective. */
	return op->kind != SNAP_OP_UNEXPECTED && op->status != SNAP_ST_COMPLETE;
}

bool anl_op_probe(const struct snap_op *op)
{
	return op->req_type && strstr(op->req_type, "probe");
}

bool anl_op_internal(const struct snap_op *op)
{
	return op->kind != SNAP_OP_UNEXPECTED && !op->any_tag && op->tag < 0;
}

/* The operations a call of class cls can be held by.  A blocking
 * point-to-point call is not held by a collective's internal requests
 * (they belong to a nonblocking collective still running beside it);
 * MPI_Wait and its kin are, when the request waited on is that
 * collective's.  A probe is held by its probe request only. */
static bool op_fits(enum md_call_class cls, const struct snap_op *op)
{
	if (!op_usable(op))
		return false;
	switch (cls) {
	case MD_CALL_PROBE:
		return anl_op_probe(op);
	case MD_CALL_RECV:
		return op->kind == SNAP_OP_RECV && !anl_op_probe(op) &&
		       !anl_op_internal(op);
	case MD_CALL_SEND:
		return op->kind == SNAP_OP_SEND && !anl_op_internal(op);
	case MD_CALL_SENDRECV:
		return !anl_op_probe(op) && !anl_op_internal(op);
	case MD_CALL_RMA_SYNC:
		return false;
	default:
		return !anl_op_probe(op);
	}
}

/* The node an operation waits on: its peer, or "any member" for a
 * wildcard receive or a peer that cannot be placed (inferred). */
static int op_target(struct bctx *b, const struct snap_op *op,
		     struct anl_ev *ev)
{
	const struct snap *s = b->s;
	int peer = -1;

	if (op->status == SNAP_ST_MATCHED && op->actual_global >= 0)
		peer = op->actual_global;
	else if (op->peer_global >= 0)
		peer = op->peer_global;
	else if (anl_comm_known(s, op->comm))
		peer = snap_comm_peer(s, op->comm, op->peer_local);
	if (peer >= 0 && peer < s->nranks)
		return peer;
	ev->any_source = op->kind == SNAP_OP_RECV && op->peer_local < 0;
	/* A wildcard probe waits on any member as a wildcard receive. */
	if (!ev->any_source)
		ev->inferred = true;
	if (!anl_comm_known(s, op->comm))
		ev->inferred = true;
	return any_node(b, op->comm);
}

static void add_op_edge(struct bctx *b, int rank, int k)
{
	const struct snap_op *op = &b->s->ranks[rank].ops[k];
	struct anl_ev ev = { rank, k, op->comm,
			     anl_op_probe(op) ? ANL_EK_PROBE :
			     op->kind == SNAP_OP_SEND ? ANL_EK_SEND : ANL_EK_RECV,
			     (b->r->ranks[rank].miss & ANL_MISS_SPIN) != 0,
			     false };
	int to = op_target(b, op, &ev);

	wfg_add_edge(b->r->g, rank, to, anl_add_ev(b->r, &ev));
}

/* MPI_Recv (or Send, Wait) with several candidate ops: which one blocks
 * is not known, so any of them completing is taken to release the rank
 * (the conservative reading: it never invents a deadlock). */
static enum wfg_cond p2p_cond(enum md_call_class cls, int nrecv, int nsend,
			      uint16_t *miss)
{
	int n = nrecv + nsend;

	switch (cls) {
	case MD_CALL_WAITALL:
		return WFG_AND;
	case MD_CALL_WAITANY:
		return WFG_OR;
	case MD_CALL_SENDRECV:
		if (nrecv <= 1 && nsend <= 1)
			return WFG_AND;
		break;
	default:
		if (n <= 1)
			return WFG_AND;
		break;
	}
	*miss |= ANL_MISS_SEVERAL;
	return WFG_OR;
}

/* No op to go by: the rank waits on someone we cannot name, so any rank
 * of MPI_COMM_WORLD that goes on is taken to release it.  That reading
 * never invents a deadlock, but it can hide one: a rank in MPI_Win_lock
 * whose lock holder waits for it, while an unrelated rank computes.  So
 * the rank's node is also marked guessed (the caller's *guessed): the
 * pessimistic reading, where it never releases, then makes the verdict
 * INCOMPLETE when other ranks are stuck behind it (anl_decide). */
static void add_guess(struct bctx *b, int rank, enum md_call_class cls)
{
	struct anl_ev ev = { rank, -1, b->r->world,
			     cls == MD_CALL_SEND ? ANL_EK_SEND :
			     cls == MD_CALL_PROBE ? ANL_EK_PROBE :
			     cls == MD_CALL_RMA_SYNC ? ANL_EK_UNKNOWN :
			     ANL_EK_RECV,
			     true, cls != MD_CALL_SEND };

	b->r->ranks[rank].miss |= ANL_MISS_NOOP;
	wfg_add_edge(b->r->g, rank, any_node(b, b->r->world),
		     anl_add_ev(b->r, &ev));
}

/* A send whose receive at the peer is already matched to it. */
static bool send_matched_at_peer(const struct snap *s, int rank,
				 const struct snap_op *op)
{
	const struct snap_rank *dr;

	if (op->peer_global < 0 || op->peer_global >= s->nranks)
		return false;
	dr = &s->ranks[op->peer_global];
	for (int k = 0; k < dr->nops; k++) {
		const struct snap_op *o = &dr->ops[k];

		if (o->kind == SNAP_OP_RECV && o->status == SNAP_ST_MATCHED &&
		    o->comm == op->comm && o->actual_global == rank &&
		    o->actual_tag == op->tag)
			return true;
	}
	return false;
}

/*
 * A matched operation is a message in transfer: the data moves through
 * the progress engine, which runs in whatever MPI call either side is in,
 * so it completes without the peer's application doing anything more.
 * Treating it as a wait would call a large, slow transfer a deadlock.
 */
static bool in_transfer(const struct snap *s, int rank,
			const struct snap_op *op)
{
	if (op->status == SNAP_ST_MATCHED)
		return true;
	return op->kind == SNAP_OP_SEND && send_matched_at_peer(s, rank, op);
}

/*
 * A blocking call (MPI_Recv, MPI_Send, MPI_Sendrecv, MPI_Probe) waits for
 * its own request only, not for the requests the program posted before
 * it (an MPI_Irecv, a started persistent request): those that
 * libmdtrack.so recorded are left out, when that leaves the call's own.
 */
/* A record of the same request and the same arguments: the MPI library
 * reuses a freed request's memory (a record of an earlier post may name
 * the blocking call's own request), so the address alone is not enough. */
static bool same_post(const struct snap_track_rec *t, const struct snap_op *op)
{
	return (t->kind == SNAP_TRACK_POST || t->kind == SNAP_TRACK_INIT) &&
	       t->request == op->request && t->call &&
	       anl_call_sends(t->call) == (op->kind == SNAP_OP_SEND) &&
	       (t->peer == SNAP_TRACK_ANY ? op->peer_local < 0
					  : t->peer == op->peer_local) &&
	       (t->tag == SNAP_TRACK_ANY ? op->any_tag
					 : !op->any_tag && t->tag == op->tag) &&
	       (t->comm < 0 || op->comm < 0 || t->comm == op->comm);
}

static bool posted(const struct snap_rank *sr, const struct snap_op *op)
{
	for (int i = 0; op->request && i < sr->ntrack; i++)
		if (same_post(&sr->track[i], op))
			return true;
	return false;
}

static bool own_ops_only(const struct snap_rank *sr, enum md_call_class cls)
{
	if (!sr->ntrack || (cls != MD_CALL_RECV && cls != MD_CALL_SEND &&
			    cls != MD_CALL_SENDRECV && cls != MD_CALL_PROBE))
		return false;
	for (int k = 0; k < sr->nops; k++)
		if (op_fits(cls, &sr->ops[k]) && !posted(sr, &sr->ops[k]))
			return true;
	return false;
}

/* Returns the rank's condition; transfer when a message in transfer is
 * enough to release the rank. */
static enum wfg_cond link_p2p(struct bctx *b, int rank,
			      enum md_call_class cls, bool *transfer,
			      bool *guessed)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	int nrecv = 0, nsend = 0, nmoving = 0;
	bool own = own_ops_only(sr, cls);
	enum wfg_cond cond;

	for (int k = 0; k < sr->nops; k++) {
		if (!op_fits(cls, &sr->ops[k]) ||
		    (own && posted(sr, &sr->ops[k])))
			continue;
		nrecv += sr->ops[k].kind == SNAP_OP_RECV;
		nsend += sr->ops[k].kind == SNAP_OP_SEND;
		nmoving += in_transfer(b->s, rank, &sr->ops[k]);
	}
	if (!(nrecv + nsend)) {
		add_guess(b, rank, cls);
		*guessed = true;
		return WFG_OR;
	}
	cond = p2p_cond(cls, nrecv, nsend, &b->r->ranks[rank].miss);
	/* Which of several operations a blocking call waits for is not
	 * known: any one releasing it is a guess too. */
	if (b->r->ranks[rank].miss & ANL_MISS_SEVERAL)
		*guessed = true;
	if (nmoving && (cond == WFG_OR || nmoving == nrecv + nsend)) {
		*transfer = true;
		return cond;
	}
	for (int k = 0; k < sr->nops; k++)
		if (op_fits(cls, &sr->ops[k]) &&
		    !(own && posted(sr, &sr->ops[k])) &&
		    !in_transfer(b->s, rank, &sr->ops[k]))
			add_op_edge(b, rank, k);
	return cond;
}

/*
 * A rank that polls (MPI_Test, MPI_Iprobe in a loop) is as stuck as one
 * in the blocking call it polls for, when nothing moved: the same call
 * at the same site and the same pending requests in every look.  A
 * probe loop needs no request to hold it (it posts none that stays).
 * A rank that computes between its tests is caught outside MPI in some
 * look and counts as moving.  Returns the class to link the rank by.
 */
static enum md_call_class spin_class(struct bctx *b, int rank)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	enum md_call_class cls = anl_call_class(sr->mpi_call), as;

	if (cls != MD_CALL_POLL || sr->state != SNAP_RANK_COLLECTED ||
	    sr->progress != SNAP_PROGRESS_STABLE)
		return cls;
	as = anl_poll_class(sr->mpi_call);
	if (as == MD_CALL_PROBE || as == MD_CALL_RMA_SYNC) {
		b->r->ranks[rank].miss |= ANL_MISS_SPIN;
		return as;
	}
	for (int k = 0; k < sr->nops; k++) {
		if (op_fits(as, &sr->ops[k])) {
			b->r->ranks[rank].miss |= ANL_MISS_SPIN;
			return as;
		}
	}
	return MD_CALL_POLL;
}

/* func without glibc's decorations ("__GI___nanosleep" is "nanosleep",
 * "__memmove_avx_unaligned_erms" is "memmove_avx_unaligned_erms"). */
static const char *bare(const char *func)
{
	if (!strncmp(func, "__GI_", 5))
		func += 5;
	return func + strspn(func, "_");
}

/* func (or an object's file name) is one of names, or (prefix) starts
 * with one; glibc's 64-bit time variants ("___pthread_cond_timedwait64")
 * are their function. */
static bool named(const char *func, const char *const *names, bool prefix)
{
	if (!func)
		return false;
	func = bare(func);
	for (int i = 0; names[i]; i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(func, names[i], n) &&
		    (prefix || !func[n] || !strcmp(func + n, "64") ||
		     !strcmp(func + n, "_time64")))
			return true;
	}
	return false;
}

/* A call that puts a thread to sleep for a time, or that waits with a
 * time-out or for input (a file, a socket, a pipe): it wakes up by
 * itself or from outside the job, not only from another thread. */
static bool is_sleep(const char *func)
{
	static const char *const names[] = {
		"clock_nanosleep", "nanosleep",
		"usleep", "sleep", "thrd_sleep", "poll", "ppoll", "select",
		"pselect", "pselect6", "epoll_wait", "epoll_pwait",
		"epoll_pwait2", "pthread_cond_timedwait",
		"pthread_cond_clockwait", "sem_timedwait", "sem_clockwait",
		"pthread_mutex_timedlock", "pthread_mutex_clocklock", NULL,
	};

	return named(func, names, false);
}

/* The file name of an object's path (NULL stays NULL). */
static const char *object_name(const char *object)
{
	const char *slash = object ? strrchr(object, '/') : NULL;

	return slash ? slash + 1 : object;
}

/* A C library function that computes (copies, compares, sorts): a
 * thread innermost in it runs. */
static bool is_libc_work(const struct snap_frame *f)
{
	static const char *const libc[] = { "libc.so", "libc-", NULL };
	static const char *const names[] = {
		"mem", "str", "wmem", "wcs", "qsort", "msort", "bsearch",
		NULL,
	};

	return named(object_name(f->object), libc, true) &&
	       named(f->func, names, true);
}

/* Libraries whose threads wait inside them (a barrier's spin then futex
 * in libgomp, a stream sync in libcuda): innermost there, a thread of
 * the program waits, it does not compute. */
static bool is_waiting_library(const char *object)
{
	static const char *const libs[] = {
		"libgomp.so", "libomp.so", "libiomp5.so", "libtbb", "libcuda",
		"libnccl", "libucs.so", "libucp.so", "libuct.so",
		"libfabric.so", "libpsm", "libzmq.so", "libstdc++.so",
		NULL,
	};

	return named(object_name(object), libs, true);
}

/* How a thread of the program outside MPI may yet go on
 * (computing_thread): it runs innermost in the program's code or a
 * library of its own, or in libc's mem* / str*; or it sleeps or waits
 * with a time-out below the program's frame. */
static enum anl_going going(const struct snap_thread *th)
{
	if (!th->nframes)
		return ANL_GOING_NO;
	if ((th->user_frame == 0 &&
	     !is_waiting_library(th->frames[0].object)) ||
	    is_libc_work(&th->frames[0]))
		return ANL_GOING_RUNS;
	for (int f = 0; f < th->user_frame; f++)
		if (is_sleep(th->frames[f].func))
			return ANL_GOING_SLEEPS;
	return ANL_GOING_NO;
}

/* Does th run the program's code somewhere on its stack: a frame in the
 * executable, or in obj (the object the rank's MPI calls come from)? */
static bool programs_thread(const struct snap_thread *th, const char *exe,
			    const char *obj)
{
	for (int f = 0; f < th->nframes; f++) {
		const char *o = th->frames[f].object;

		if (o && ((exe && !strcmp(o, exe)) || (obj && !strcmp(o, obj))))
			return true;
	}
	return false;
}

/*
 * The thread of sr, outside MPI, that may yet send what the others wait
 * for, or -1: as a rank of one thread outside MPI is running, so is
 * this one.  It must be the program's own (a frame in the executable or
 * in the object that makes the rank's MPI calls: helper threads of UCX,
 * OpenMP pools, CUDA, that the collector did not recognise as progress
 * threads spin or sleep in their own libraries and would hide every
 * deadlock), and it must compute (innermost in the program's code, in a
 * library of the program's, or in a C library function that computes:
 * memcpy) or sleep for a time or wait with a time-out or for input
 * (sleep(), poll(), pthread_cond_timedwait()).  A thread that joins,
 * waits on a condition or a lock without a time-out waits for the other
 * threads, and does not count.  *how says which (ANL_GOING_*).
 */
static int computing_thread(const struct snap_rank *sr, uint8_t *how)
{
	const char *obj = NULL;

	/* Below MPI_THREAD_MULTIPLE no thread may call MPI while one waits
	 * in it (a heartbeat thread, OpenMP workers beside an MPI master). */
	if (sr->thread_level != SNAP_TL_UNKNOWN &&
	    sr->thread_level != SNAP_TL_MULTIPLE)
		return -1;

	for (int t = 0; t < sr->nthreads && !obj; t++) {
		const struct snap_thread *th = &sr->threads[t];

		if (th->mpi_call && !th->progress_thread &&
		    th->user_frame >= 0 && th->user_frame < th->nframes)
			obj = th->frames[th->user_frame].object;
	}
	for (int t = 0; obj && t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];

		if (th->mpi_call || th->progress_thread ||
		    th->user_frame < 0 || th->user_frame >= th->nframes ||
		    !programs_thread(th, sr->exe, obj))
			continue;
		*how = (uint8_t)going(th);
		if (*how != ANL_GOING_NO)
			return t;
	}
	return -1;
}

/* th is in the rank's own spinning call (spin_class). */
static bool spins(const struct snap_rank *sr, const struct snap_thread *th,
		  bool spin)
{
	return spin && sr->mpi_call && th->mpi_call &&
	       !strcmp(th->mpi_call, sr->mpi_call);
}

/* Threads of a rank: the blocking MPI calls of its application threads
 * (into calls, returns their number) and whether one of them sits in a
 * non-blocking MPI call (then the rank can go on).  A thread outside MPI
 * counts only when it computes (computing_thread).  The rank's own
 * spinning call counts as blocking (spin). */

static int app_calls(const struct snap_rank *sr, const char **calls,
		     bool spin, bool *free_thread)
{
	int n = 0, polls = 0;

	*free_thread = false;
	for (int t = 0; t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];
		enum md_call_class cls = anl_call_class(th->mpi_call);

		if (th->progress_thread || cls == MD_CALL_NONE)
			continue;
		if (md_call_blocks(cls) || spins(sr, th, spin))
			calls[n++] = th->mpi_call;
		else if (cls == MD_CALL_POLL)
			polls++;
		else
			*free_thread = true;
	}
	/* A thread polling (a service thread's MPI_Iprobe loop) beside a
	 * thread blocked in MPI, while nothing of the rank moved between
	 * the looks, is as held as the call it polls for (link_threads). */
	for (int t = 0; polls && t < sr->nthreads; t++) {
		const struct snap_thread *th = &sr->threads[t];

		/* A thread in the spinning call is counted above. */
		if (th->progress_thread ||
		    anl_call_class(th->mpi_call) != MD_CALL_POLL ||
		    spins(sr, th, spin))
			continue;
		if (n && sr->progress == SNAP_PROGRESS_STABLE)
			calls[n++] = th->mpi_call;
		else
			*free_thread = true;
	}
	return n;
}

static enum wfg_state classify(struct bctx *b, int rank,
			       enum md_call_class cls, bool free_thread)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	struct anl_rank *ar = &b->r->ranks[rank];

	/* A finalized rank is as gone for MPI as one that exited: it
	 * releases nobody, though it runs on. */
	if (sr->state == SNAP_RANK_GONE || sr->finalized)
		return WFG_GONE;
	if (sr->state != SNAP_RANK_COLLECTED) {
		ar->miss |= ANL_MISS_UNREAD;
		return WFG_UNKNOWN;
	}
	/* Said even of a rank judged going on: a look whose queues could
	 * not be read differs from one whose could, and a rank whose
	 * memory could not be read shows no MPI call in its stack. */
	if (sr->queues == SNAP_QUEUES_NONE)
		ar->miss |= ANL_MISS_QUEUES;
	/* A rank whose MPI state moved between looks is slow, not stuck. */
	if (!md_call_blocks(cls) || sr->progress == SNAP_PROGRESS_CHANGED ||
	    free_thread)
		return WFG_ACTIVE;
	if (sr->progress == SNAP_PROGRESS_UNKNOWN)
		ar->miss |= ANL_MISS_ONELOOK;
	return WFG_BLOCKED;
}

/* Several application threads blocked in MPI (MPI_THREAD_MULTIPLE): the
 * DLL's ops are per rank, so the rank goes on when any op or any of the
 * threads' collectives can: OR over all of them. */
static void link_threads(struct bctx *b, int rank, const char **calls, int n,
			 bool *guessed, bool *p2p_guess)
{
	bool p2p = false;

	for (int i = 0; i < n; i++) {
		enum md_call_class cls = anl_call_class(calls[i]);

		if (md_call_collective(cls))
			anl_link_coll(b, rank, calls[i], cls, guessed);
		else if (cls == MD_CALL_POLL &&
			 anl_poll_class(calls[i]) == MD_CALL_PROBE) {
			/* A probe loop posts nothing that stays: any rank's
			 * message may be the one it waits for. */
			add_guess(b, rank, MD_CALL_PROBE);
			*p2p_guess = true;
		} else
			p2p = true;
	}
	if (p2p) {
		bool transfer = false, unused = false;

		/* Any thread's operation releasing the rank is the OR of
		 * its threads, not a guess. */
		link_p2p(b, rank, MD_CALL_WAITANY, &transfer, &unused);
		if (transfer)
			b->r->ranks[rank].transfer = 1;
	}
}

/* Does the blocked rank wait on processes outside the job (an operation
 * its call can be held by, on an intercommunicator whose remote group is
 * MPI_Comm_spawn's children or MPI_Comm_connect's peers)?  They are not
 * read: the rank may be released, or not. */
static bool waits_outside(const struct bctx *b, int rank,
			  enum md_call_class cls, int nthreads)
{
	const struct snap_rank *sr = &b->s->ranks[rank];

	/* A collective's own communicator decides (anl_link_coll). */
	if (nthreads < 2 && md_call_collective(cls))
		return false;
	for (int k = 0; k < sr->nops; k++) {
		const struct snap_op *op = &sr->ops[k];
		const struct snap_comm *c;

		if (op->comm < 0 || op->comm >= b->s->ncomms ||
		    !op_fits(nthreads >= 2 ? MD_CALL_WAITANY : cls, op))
			continue;
		c = &b->s->comms[op->comm];
		if (c->remote_size && !c->remote)
			return true;
	}
	return false;
}

static void link_rank(struct bctx *b, int rank, const char **calls)
{
	const struct snap_rank *sr = &b->s->ranks[rank];
	/* guessed: a collective's communicator; p2p_guess: what a
	 * point-to-point wait waits for (anl_decide's lone_guess). */
	bool free_thread, guessed = false, p2p_guess = false;
	enum md_call_class cls = spin_class(b, rank);
	bool spin = (b->r->ranks[rank].miss & ANL_MISS_SPIN) != 0;
	int n = app_calls(sr, calls, spin, &free_thread);
	uint8_t how = ANL_GOING_NO;
	int computing = free_thread ? -1 : computing_thread(sr, &how);
	enum wfg_state st = classify(b, rank, cls,
				     free_thread || computing >= 0);
	enum wfg_cond cond = WFG_AND;

	if (st == WFG_BLOCKED && waits_outside(b, rank, cls, n)) {
		b->r->ranks[rank].miss |= ANL_MISS_OUTSIDE;
		st = WFG_UNKNOWN;
	}
	b->r->ranks[rank].state = (uint8_t)st;
	/* Only when nothing else made it active. */
	if (st == WFG_ACTIVE && computing >= 0 && md_call_blocks(cls) &&
	    sr->progress != SNAP_PROGRESS_CHANGED) {
		b->r->ranks[rank].computing = computing;
		b->r->ranks[rank].computing_how = how;
	}
	if (st != WFG_BLOCKED)
		b->r->ranks[rank].miss &= (uint16_t)~ANL_MISS_SPIN;
	if (st == WFG_UNKNOWN) {
		/* No edges: what it waits for is not in the graph. */
	} else if (st == WFG_BLOCKED && n >= 2) {
		link_threads(b, rank, calls, n, &guessed, &p2p_guess);
		cond = WFG_OR;
	} else if (st == WFG_BLOCKED && md_call_collective(cls)) {
		if (anl_link_coll(b, rank, sr->mpi_call, cls, &guessed)) {
			st = WFG_UNKNOWN;
			b->r->ranks[rank].state = (uint8_t)st;
		}
	} else if (st == WFG_BLOCKED) {
		bool transfer = false;

		cond = link_p2p(b, rank, cls, &transfer, &p2p_guess);
		if (transfer) {
			st = WFG_ACTIVE;
			b->r->ranks[rank].state = (uint8_t)st;
			b->r->ranks[rank].transfer = 1;
		}
	}
	if (st == WFG_BLOCKED && n >= 2 && b->r->ranks[rank].transfer) {
		st = WFG_ACTIVE;
		b->r->ranks[rank].state = (uint8_t)st;
	}
	b->r->ranks[rank].guess_only = p2p_guess && !guessed;
	wfg_set_node(b->r->g, rank, st, cond, guessed || p2p_guess);
}

void anl_build(struct anl_result *r)
{
	const struct snap *s = r->s;
	struct bctx b = { .r = r, .s = s };
	const char **calls = NULL;
	int maxthreads = 1;

	r->nranks = s->nranks;
	r->world = find_world(s);
	r->ranks = xcalloc((size_t)s->nranks + 1, sizeof(*r->ranks));
	r->g = wfg_new(s->nranks + 16);
	b.rep = comm_reps(s, r->world);
	b.any_v = xmalloc(((size_t)s->ncomms + 1) * sizeof(int));
	for (int c = 0; c <= s->ncomms; c++)
		b.any_v[c] = -1;
	for (int i = 0; i < s->nranks; i++) {
		r->ranks[i].vcoll = -1;
		r->ranks[i].computing = -1;
		wfg_add_node(r->g, WFG_ACTIVE, WFG_AND, false);
		if (s->ranks[i].nthreads > maxthreads)
			maxthreads = s->ranks[i].nthreads;
	}
	calls = xmalloc((size_t)maxthreads * sizeof(*calls));
	for (int i = 0; i < s->nranks; i++)
		link_rank(&b, i, calls);
	for (int i = 0; i < r->nv; i++)
		anl_link_vnode(&b, i);
	anl_settle_instances(&b);
	wfg_freeze(r->g);
	free(calls);
	free(b.rep);
	free(b.any_v);
	free(b.coll);
}
