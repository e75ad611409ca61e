/*
 * looks.h - did a rank's MPI state change between two looks?  Pure
 * functions over two snapshot records of one rank (interned in one
 * snapshot), used by the collector to judge progress.
 */
#ifndef MD_LOOKS_H
#define MD_LOOKS_H

#include "snap.h"

enum lk_same {
	LK_CHANGED,		/* it moved between the looks */
	LK_SAME,		/* the same call, site and operations */
	/*
	 * A polling loop (MPI_Test, MPI_Iprobe, ... in a loop) that did not
	 * move: the same pending operations, one look in the polling call
	 * and the other caught outside MPI with the loop's frame still on
	 * its stack (between two calls of it).  LK_POLL_KEEP: the older
	 * look is the one in the call; LK_POLL_NEW: the newer one.
	 */
	LK_POLL_KEEP,
	LK_POLL_NEW,
	/*
	 * A polling loop that sleeps (or computes) between its tests, seen
	 * by libmdtrack.so: both looks outside MPI (or in a call that does
	 * not block, the loop's MPI_Wtime) with the same pending
	 * requests (at least one), the count of polling calls moved in
	 * between, and the function that made the last one is on the
	 * newer look's stack.  Stable; lk_poll_site gives its call.
	 */
	LK_POLL_SLEEP,
	/* The same, but the newer look's stacks gave no site at all (the
	 * unwinder lost the thread): keep the older look. */
	LK_SAME_KEEP,
};

/* Did r's stacks give no site at all: no MPI call, no user frame? */
bool lk_no_site(const struct snap_rank *r);

/*
 * Compare the look kept so far of a rank (old) with a newer one (cur).
 * A rank whose pending operations, or (with libmdtrack.so) whose count
 * of collective calls, or whose library's count of completed requests
 * or moved messages (snap_rank.completions) differ has moved.
 * A look outside MPI
 * stands in the polling loop when one of its threads has the frame of
 * the user function that called the polling call (the same function,
 * called from the same return addresses all the way out) and the
 * pending operations are the same: a spinning rank is stopped between
 * two calls now and then, and a rank that computes between its tests
 * shows the same (whether its peer goes on decides the verdict).
 */
enum lk_same lk_compare(const struct snap_rank *old,
			const struct snap_rank *cur);

/*
 * For LK_POLL_SLEEP: the newer look r takes the last polling call as its
 * call and that call's line as its site; a thread of the loop caught in
 * a call that does not block (its MPI_Wtime) takes the polling call, its
 * frames stay as read.
 */
void lk_poll_site(struct snap_rank *r);

/*
 * What moved, for a pair lk_compare called LK_CHANGED: a phrase for the
 * -v log ("its operations changed: 2 then 3", "messages moved: ob1
 * sequences 57 then 58"), written into buf.  Returns buf.
 */
const char *lk_why(const struct snap_rank *old, const struct snap_rank *cur,
		   char *buf, size_t size);

/*
 * The MPI_Iprobe/MPI_Improbe requests a rank was caught in (ops of
 * req_type "iprobe", "improbe") live only while the call runs, so one
 * look has them and the next, stopped elsewhere in the same call or
 * loop, may not; lk_compare does not count them.  When cur, judged the
 * same as old, has none, it gets copies of old's: the probe the loop
 * repeats.  cur->ops must be its own (malloc'ed).
 */
void lk_keep_probes(struct snap_rank *cur, const struct snap_rank *old);

/*
 * Is r in MPI_Iprobe or MPI_Improbe with ob1 read, and no look caught
 * its probe request (it lives only inside ob1's call, not between two
 * calls of the loop)?  Then a look more may catch it.
 */
bool lk_probe_unseen(const struct snap_rank *r);

#endif /* MD_LOOKS_H */
