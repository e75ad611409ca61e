/*
 * collect_int.h - the collector's state shared by collect.c (the looks,
 * attach and detach) and collect_rank.c (reading one stopped rank).
 */
#ifndef MD_COLLECT_INT_H
#define MD_COLLECT_INT_H

#include <signal.h>

#include "collect.h"
#include "dwlines.h"
#include "dwtypes.h"
#include "elfsym.h"
#include "mqdhost.h"
#include "ob1q.h"
#include "snap.h"
#include "target.h"
#include "topo.h"

/* One DLL, loaded once per distinct path. */
struct col_dll {
	char *path;
	struct mh_dll *dll;	/* NULL: could not be used (reported) */
	struct col_dll *next;
};

/* One MPI library image: its types and the DLL's image state. */
struct col_image {
	char *libmpi;		/* path of libmpi in the ranks */
	struct col_dll *dll;
	struct dt_index *types;	/* NULL: no types (reported) */
	struct mh_image *img;	/* NULL: the DLL refused the image */
	int err;		/* why img is NULL */
	/* ob1's matching queues: layouts from mca_pml_ob1.so's DWARF or
	 * the type provider; NULL when they could not be had (said once). */
	bool ob1_tried;
	struct dt_index *ob1_types;	/* NULL: the layouts use types */
	struct ob1_layout *ob1;
	struct col_image *next;
};

struct col {
	const struct col_opts *o;
	struct snap *s;
	struct es_cache *syms;
	struct dl_cache *lines;
	struct col_dll *dlls;
	struct col_image *images;
	struct col_stats st;
	struct tgt **tgts;	/* per rank, attached during a look */
	struct topo_acc *topo;	/* distributed graphs' rows, gathered */
	struct tgt **linger;	/* detached but for threads not stopped */
	int *read_fault;	/* per rank, injected by a test (col_phase) */
	int nlinger;
	bool dll_reported;
	bool external_pace;	/* the caller times the looks (agent) */
	sigset_t saved_mask;	/* while ranks are stopped */
	bool track_noted;	/* a libmdtrack.so version note was made */
	/* Views from ld.so's link_map list (collect_view.c): 0 not tried,
	 * 1 learnt (r_debug at AT_BASE + rdebug_off), -1 maps only. */
	int links;
	uint64_t rdebug_off;
	bool prepared;		/* col_prepare done (first look) */
	bool starter_gone;	/* noted: the starter exited */
};

/* A rank while it is stopped. */
struct col_rank {
	struct col *c;
	struct tgt *t;
	struct es_view *view;
	struct dt_index *types;	/* the MPI library's types, NULL if none */
	/* Its image (the DLL's and ob1's setup), NULL until the queues were
	 * read. */
	struct col_image *im;
	int rank;
};

/*
 * The view of the stopped rank cr (cr->view, the caller's): from its
 * link_map list once the image cache has learnt the list's names from
 * an earlier rank, else from /proc/PID/maps (learning from it).  The
 * view is the one es_view_from_maps gives.  Returns 0, -MD_E_GONE (no
 * maps) or -MD_E_INPUT.
 */
int col_rank_view(struct col_rank *cr);

/*
 * Read the stopped rank cr into r (a fresh rank record: queues, members,
 * ops, threads, call site).  Returns 0, or -MD_E_GONE when the rank went
 * away while being read; other problems are recorded in r.
 */
int col_read_rank(struct col_rank *cr, struct snap_rank *r);

/*
 * The start of phase p for rank (-1: the whole job): calls the options'
 * fault-injection hook, if any, and applies the read fault it returns to
 * the rank from then on.
 */
void col_phase(struct col *c, enum col_phase p, int rank);

/*
 * Open process pid for reads (attach false) or start stopping it (attach
 * true) through the options' target factory, or live: 0 and *out, or
 * -MD_E_GONE / -MD_E_NOSUCH for a process that is gone, other codes
 * reported.
 */
int col_target(struct col *c, int pid, bool attach, struct tgt **out);

/*
 * Load the DLL, the MPI library's types and the DLL's image state from
 * the running rank (index into the snapshot's ranks), before any rank is stopped, so that a look only
 * reads (the type provider may have to be compiled the first time).
 * What fails is reported here, once (the caches remember it), and
 * recorded per rank in the look.
 */
void col_prepare(struct col *c, int rank);

/*
 * ob1's queues (collect_ob1.c): find the layouts for image im once (the
 * first rank of it, running or stopped), then walk a stopped rank's
 * queues into r after the DLL's walk.  What cannot be had is said once
 * and the DLL's view stays all there is.
 */
void col_ob1_prepare(struct col_rank *cr, struct col_image *im);
void col_ob1_read(struct col_rank *cr, struct col_image *im,
		  struct snap_rank *r);
/* After the stacks (they say where to look): the MPI_Iprobe and
 * MPI_Improbe calls r's threads are in, where ob1's queues were read
 * whole.  Returns 0 or -MD_E_GONE. */
int col_ob1_iprobes(struct col_rank *cr, struct snap_rank *r);
/* The types ops over a dt_index (collect_rank.c). */
extern const struct mh_types_ops col_types_ops;
/* The process ops over a struct col_rank (collect_rank.c). */
extern const struct mh_proc_ops col_proc_ops;

/* Free the DLL and image caches of c. */
void col_images_free(struct col *c);

#endif /* MD_COLLECT_INT_H */
