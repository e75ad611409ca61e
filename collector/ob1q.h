/*
 * ob1q.h - Open MPI ob1's matching state, read directly from a stopped
 * rank (notes/openmpi-ob1-queues.md): what the message-queue DLL hides.
 * For every communicator in ompi_mpi_communicators, its c_pml_comm (a
 * mca_pml_ob1_comm_t) gives the posted receives (wild_receives and each
 * peer's specific_receives: receives, probes, and the negative-tag
 * receives of collectives) and the arrived, unmatched fragments (each
 * peer's unexpected_frags and frags_cant_match).
 *
 * The layouts come from the types of the running library (the DWARF of
 * mca_pml_ob1.so, or a type provider), asked through the same
 * mh_types_ops the DLL's callbacks use; memory through mh_proc_ops.
 * Every list walk is bounded: a list read while a rank ran can be torn.
 */
#ifndef MD_OB1Q_H
#define MD_OB1Q_H

#include "mqdhost.h"
#include "snap.h"

struct ob1_layout;

/*
 * Resolve every size and offset the walk uses.  Returns 0 and *out
 * (ob1_layout_free), or -MD_E_NOTYPES without a message and *missing (a
 * heap string, the caller's) naming the first type or member not found,
 * e.g. "mca_pml_ob1_comm_proc_t.unexpected_frags".
 */
int ob1_layout_new(const struct mh_types_ops *types, void *ctx,
		   struct ob1_layout **out, char **missing);
void ob1_layout_free(struct ob1_layout *l);

/*
 * The layout's values one by one, for a test that compares two sources
 * of the same layout: ob1_layout_count() entries, each named
 * "type.member" (an offset) or "sizeof type".
 */
int ob1_layout_count(void);
const char *ob1_layout_name(int i);
long ob1_layout_value(const struct ob1_layout *l, int i);

/* What one walk saw. */
struct ob1_stats {
	int comms;		/* communicators with ob1 state walked */
	int posted;		/* posted requests read */
	int frags;		/* unexpected and out-of-order fragments */
	int added;		/* ops added (not already shown by the DLL) */
	int named;		/* DLL ops given their full datatype name */
	int internal;		/* internal requests in progress, from the
				 * request free lists */
	int torn;		/* walks cut short (a bound, a bad pointer,
				 * a list that changed under us) */
};

/* Bounds of a walk, against lists caught mid-update. */
#define OB1_MAX_COMMS (1 << 16)
#define OB1_MAX_PROCS (1 << 22)
#define OB1_MAX_ITEMS 4096	/* entries of one list */

/*
 * Read rank r's ob1 matching state and append to r->ops what the DLL did
 * not show (matched by request address): posted receives and probes
 * (source SNAP_SRC_OB1, req_type "recv", "probe", ...), unexpected
 * fragments ("unexpected", "cant_match"), and from the request free
 * lists (mca_pml_base_{recv,send}_requests) the internal requests of
 * collectives in progress, which the DLL skips (negative tags): matched
 * receives and pending sends with their byte counts, so that looks tell a
 * collective that moves data from a stuck one.  The DLL's own ops get their
 * full datatype name and count.  Communicators are placed by context id
 * among r's memberships (from the DLL); an op on a communicator the DLL
 * did not list gets comm -1.  r->unexpected_available becomes true.
 * Returns 0, or -MD_E_NOSYM when the process has no
 * ompi_mpi_communicators (quietly), -MD_E_GONE when it went away; other
 * read failures end that part of the walk and count as torn.  st may be
 * NULL.
 */
int ob1_collect(const struct ob1_layout *l, const struct mh_proc_ops *proc,
		void *ctx, struct snap *s, struct snap_rank *r,
		struct ob1_stats *st);

/*
 * The MPI_Iprobe and MPI_Improbe calls r's threads were stopped in (r's
 * threads read, with their frames' stack pointers): ob1 builds their
 * request on the stack of mca_pml_ob1_iprobe / mca_pml_ob1_improbe and
 * never posts it, so the queues do not have it.  Found between the
 * thread's stack pointer and its caller's frame by its class pointer
 * (mca_pml_ob1_recv_request_t_class) and checked by its types; appended
 * to r->ops as pending probes (req_type "iprobe", "improbe") with their
 * source, tag and communicator, without sequence (each call of a polling
 * loop takes a new one).  Returns the number appended, or -MD_E_GONE.
 */
int ob1_collect_iprobes(const struct ob1_layout *l,
			const struct mh_proc_ops *proc, void *ctx,
			struct snap *s, struct snap_rank *r);

#endif /* MD_OB1Q_H */
