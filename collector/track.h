/*
 * track.h - the collector's reader of libmdtrack.so's table
 * (include/mdtrack.h) in a stopped rank: the calls that posted the
 * rank's pending requests and the last collective on each communicator,
 * with their call sites and the names of predefined handles.
 */
#ifndef MD_TRACK_H
#define MD_TRACK_H

#include <stdbool.h>

#include "dwlines.h"
#include "dwtypes.h"
#include "elfsym.h"
#include "snap.h"
#include "target.h"

/* What the reader borrows from the collector for one rank. */
struct trk_ctx {
	struct tgt *t;
	const struct es_view *view;
	struct dl_cache *lines;
	struct dt_index *types;	/* the MPI library's types, may be NULL */
	struct snap *s;
	int rank;
	bool *noted;	/* a version note was made (one per snapshot) */
};

/*
 * Read the table of the rank into r (whose ops are read already): sets
 * r->tracked, r->track_dropped and the records of r's pending requests
 * (joined by request handle; a start brings its persistent request's
 * creation) and collectives.  A rank without the library is left
 * untracked; a table of another version or layout gives a note in s.
 * Returns 0, or -MD_E_GONE when the rank went away.
 */
int trk_read(const struct trk_ctx *x, struct snap_rank *r);

#endif /* MD_TRACK_H */
