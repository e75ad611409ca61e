/*
 * looks.c - did a rank's MPI state change between two looks (the
 * collector calls a rank whose state did not change "stable": it may be
 * blocked).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "looks.h"
#include "md.h"
#include "mpicall.h"

/* reposted: a receive posted again (a new request, the same peer, tag
 * and size) counts as the same. */
static bool same_op(const struct snap_op *a, const struct snap_op *b,
		    bool reposted)
{
	return a->kind == b->kind && a->status == b->status &&
	       a->comm == b->comm && a->peer_local == b->peer_local &&
	       a->tag == b->tag && a->length == b->length &&
	       a->actual_length == b->actual_length &&
	       ((a->request == b->request && a->sequence == b->sequence) ||
		(reposted && a->kind == SNAP_OP_RECV));
}

/* An MPI_Iprobe or MPI_Improbe the rank was stopped in (ob1q_probe.c):
 * a polling loop is caught in one in one look and between two in the
 * next, though nothing moved. */
static bool transient(const struct snap_op *op)
{
	return op->req_type && (!strcmp(op->req_type, "iprobe") ||
				!strcmp(op->req_type, "improbe"));
}

static bool same_ops(const struct snap_rank *a, const struct snap_rank *b,
		     bool reposted)
{
	int i = 0, j = 0;

	for (;;) {
		while (i < a->nops && transient(&a->ops[i]))
			i++;
		while (j < b->nops && transient(&b->ops[j]))
			j++;
		if (i == a->nops || j == b->nops)
			return i == a->nops && j == b->nops;
		if (!same_op(&a->ops[i++], &b->ops[j++], reposted))
			return false;
	}
}

/* The newest collective call libmdtrack.so recorded in the rank (its
 * stamps count every collective the rank calls), 0 if none. */
static uint64_t last_coll(const struct snap_rank *r)
{
	uint64_t last = 0;

	for (int i = 0; i < r->ntrack; i++)
		if (r->track[i].kind == SNAP_TRACK_COLL &&
		    r->track[i].seq > last)
			last = r->track[i].seq;
	return last;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* An MPI call that can hold the thread (not NULL, not one that returns
 * at once: a polling loop's MPI_Wtime, MPI_Irecv, MPI_Cancel). */
static bool can_block(const char *call)
{
	return call && md_call_class(call) != MD_CALL_NONBLOCKING;
}

/* Is func on the stack of thread th? */
static bool has_func(const struct snap_thread *th, const char *func)
{
	for (int f = 0; f < th->nframes; f++)
		if (same_str(th->frames[f].func, func))
			return true;
	return false;
}

/* The thread of r in its polling call with a user frame; NULL if r is
 * not in a polling call. */
static const struct snap_thread *poll_thread(const struct snap_rank *r)
{
	if (md_call_class(r->mpi_call) != MD_CALL_POLL)
		return NULL;
	for (int t = 0; t < r->nthreads; t++) {
		const struct snap_thread *th = &r->threads[t];

		if (!th->progress_thread && same_str(th->mpi_call, r->mpi_call) &&
		    th->user_frame >= 0 && th->user_frame < th->nframes &&
		    th->frames[th->user_frame].func)
			return th;
	}
	return NULL;
}

/* Does thread th have the frame f of the polling thread p (the same
 * function, called from the same return addresses all the way out)? */
static bool has_frame(const struct snap_thread *th,
		      const struct snap_thread *p, int f)
{
	int outer = p->nframes - f, j = th->nframes - outer;

	if (j < 0 || !same_str(th->frames[j].func, p->frames[f].func) ||
	    !same_str(th->frames[j].object, p->frames[f].object))
		return false;
	for (int k = 1; k < outer; k++)
		if (th->frames[j + k].pc != p->frames[f + k].pc)
			return false;
	return true;
}

/* Is out (a look outside MPI, or in a call that does not block: the
 * loop's MPI_Wtime, MPI_Irecv or MPI_Cancel) in the polling loop of in? */
static bool in_loop(const struct snap_rank *in, const struct snap_rank *out)
{
	const struct snap_thread *p = poll_thread(in);

	if (!p || can_block(out->mpi_call))
		return false;
	for (int t = 0; t < out->nthreads; t++)
		if (!out->threads[t].progress_thread &&
		    has_frame(&out->threads[t], p, p->user_frame))
			return true;
	return false;
}

/* r's polling record (libmdtrack.so), NULL if none. */
static const struct snap_track_rec *poll_rec(const struct snap_rank *r)
{
	for (int i = 0; i < r->ntrack; i++)
		if (r->track[i].kind == SNAP_TRACK_POLL)
			return &r->track[i];
	return NULL;
}

/* No thread of r is in an MPI call that can block (a call lk_poll_site
 * gave r does not count; the loop's MPI_Wtime or MPI_Irecv does not
 * hold it). */
static bool outside(const struct snap_rank *r)
{
	for (int t = 0; t < r->nthreads; t++)
		if (!r->threads[t].progress_thread &&
		    can_block(r->threads[t].mpi_call))
			return false;
	return true;
}

static bool pending(const struct snap_rank *r)
{
	for (int i = 0; i < r->nops; i++)
		if (r->ops[i].kind != SNAP_OP_UNEXPECTED &&
		    !transient(&r->ops[i]))
			return true;
	return false;
}

/* Is func on the stack of one of r's threads? */
static bool on_stack(const struct snap_rank *r, const char *func)
{
	for (int t = 0; t < r->nthreads; t++)
		if (!r->threads[t].progress_thread &&
		    has_func(&r->threads[t], func))
			return true;
	return false;
}

/* LK_POLL_SLEEP (looks.h); ops already found the same. */
static bool sleeping_poll(const struct snap_rank *old,
			  const struct snap_rank *cur)
{
	const struct snap_track_rec *a = poll_rec(old), *b = poll_rec(cur);

	return a && b && a->seq != b->seq && b->func && outside(old) &&
	       outside(cur) && pending(cur) && on_stack(cur, b->func);
}

bool lk_no_site(const struct snap_rank *r)
{
	return !r->mpi_call && !r->call_func && !r->call_file;
}

void lk_poll_site(struct snap_rank *r)
{
	const struct snap_track_rec *p = poll_rec(r);

	if (!p)
		return;
	r->mpi_call = p->call;
	r->call_func = p->func;
	r->call_file = p->file;
	r->call_line = p->line;
	/* A thread of the loop caught in its MPI_Wtime or MPI_Irecv polls
	 * as well: it is in the loop's polling call, not free to send. */
	for (int t = 0; t < r->nthreads; t++) {
		struct snap_thread *th = &r->threads[t];

		if (!th->progress_thread && th->mpi_call &&
		    !can_block(th->mpi_call) && has_func(th, p->func))
			th->mpi_call = p->call;
	}
}

void lk_keep_probes(struct snap_rank *cur, const struct snap_rank *old)
{
	int n = 0;

	for (int i = 0; i < cur->nops; i++)
		if (transient(&cur->ops[i]))
			return;
	for (int i = 0; i < old->nops; i++)
		n += transient(&old->ops[i]);
	if (!n)
		return;
	cur->ops = xrealloc(cur->ops, (size_t)(cur->nops + n) *
					      sizeof(*cur->ops));
	for (int i = 0; i < old->nops; i++)
		if (transient(&old->ops[i]))
			cur->ops[cur->nops++] = old->ops[i];
}

bool lk_probe_unseen(const struct snap_rank *r)
{
	if (!r->ob1 || !r->mpi_call || (strcmp(r->mpi_call, "MPI_Iprobe") &&
					strcmp(r->mpi_call, "MPI_Improbe")))
		return false;
	for (int i = 0; i < r->nops; i++)
		if (transient(&r->ops[i]))
			return false;
	return true;
}

/* The looks differ only in receives posted again (a loop of MPI_Irecv,
 * MPI_Test for a while, MPI_Cancel), and the library's count says no
 * message moved in between: the rank went round its loop, nothing
 * arrived.  Without the count, a receive that completed and was posted
 * again for the next message cannot be told from it: that is movement. */
static bool reposted_only(const struct snap_rank *old,
			  const struct snap_rank *cur)
{
	return old->has_completions && cur->has_completions &&
	       old->completions == cur->completions &&
	       same_ops(old, cur, true);
}

/* What moved between the looks whatever the stacks say, for lk_compare
 * and lk_why. */
enum moved { MOVED_NOTHING, MOVED_OPS, MOVED_COLL, MOVED_COUNT };

static enum moved moved(const struct snap_rank *old,
			const struct snap_rank *cur)
{
	/* A look whose queues or libmdtrack.so's table could not be read
	 * (its memory reads failed) shows none: that is no movement, and
	 * the other look's are compared with nothing (was: such a look
	 * "moved", and a deadlocked rank read as going on). */
	if (old->queues == cur->queues && !same_ops(old, cur, false) &&
	    !reposted_only(old, cur))
		return MOVED_OPS;
	/* A rank that called another collective between the looks moved,
	 * though a long collective repeated at one site shows the same
	 * call, site and (without ob1's queues) no operation each time. */
	if (old->tracked == cur->tracked && last_coll(old) != last_coll(cur))
		return MOVED_COLL;
	/* Requests completed or messages moved in between: it moved (a
	 * collective repeated at one site whose internal requests the
	 * queues do not show, or show at neither look). */
	if (old->has_completions && cur->has_completions &&
	    old->completions != cur->completions)
		return MOVED_COUNT;
	return MOVED_NOTHING;
}

enum lk_same lk_compare(const struct snap_rank *old,
			const struct snap_rank *cur)
{
	if (moved(old, cur) != MOVED_NOTHING)
		return LK_CHANGED;
	/* A look whose stacks gave no site (the unwinder lost the thread,
	 * stopped where it has no unwind information) says nothing against
	 * the other: with the same operations and counts, nothing moved. */
	if (lk_no_site(old) && !lk_no_site(cur))
		return LK_SAME;
	if (lk_no_site(cur) && !lk_no_site(old))
		return LK_SAME_KEEP;
	if (sleeping_poll(old, cur))
		return LK_POLL_SLEEP;
	if (same_str(old->mpi_call, cur->mpi_call) &&
	    same_str(old->call_file, cur->call_file) &&
	    old->call_line == cur->call_line)
		return LK_SAME;
	if (in_loop(old, cur))
		return LK_POLL_KEEP;
	if (in_loop(cur, old))
		return LK_POLL_NEW;
	return LK_CHANGED;
}

const char *lk_why(const struct snap_rank *old, const struct snap_rank *cur,
		   char *buf, size_t size)
{
	enum moved m = moved(old, cur);

	if (m == MOVED_OPS)
		snprintf(buf, size, "its operations changed (%d, then %d)",
			 old->nops, cur->nops);
	else if (m == MOVED_COLL)
		snprintf(buf, size, "it called collective #%" PRIu64 " after "
			 "#%" PRIu64, last_coll(cur), last_coll(old));
	else if (m == MOVED_COUNT)
		snprintf(buf, size, "requests completed or messages moved "
			 "(count %" PRIu64 ", then %" PRIu64 ")",
			 old->completions, cur->completions);
	else
		snprintf(buf, size, "its call or site changed (%s at %s:%d, "
			 "then %s at %s:%d)",
			 old->mpi_call ? old->mpi_call : "not in MPI",
			 old->call_file ? old->call_file : "?", old->call_line,
			 cur->mpi_call ? cur->mpi_call : "not in MPI",
			 cur->call_file ? cur->call_file : "?", cur->call_line);
	return buf;
}
