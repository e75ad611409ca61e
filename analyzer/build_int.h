/*
 * build_int.h - shared by the graph builder's files (build.c: ranks and
 * point-to-point waits; build_coll.c: collectives, neighbour collectives
 * and the instances every member is in).  Private to the analyzer.
 */
#ifndef MD_BUILD_INT_H
#define MD_BUILD_INT_H

#include <stdbool.h>

#include "anl_int.h"
#include "calls.h"

struct coll_key {
	int comm;		/* comm rep (ANL_V_COLL) or comm (_NEIGHBOR) */
	const char *call;
	int kind;		/* enum anl_vkind */
	int node;
};

struct bctx {
	struct anl_result *r;
	const struct snap *s;
	int *rep;		/* per comm: first comm with the same group */
	int *any_v;		/* per comm rep (+1 for "all ranks"): node */
	struct coll_key *coll;
	int ncoll, collcap;
};

int anl_add_ev(struct anl_result *r, const struct anl_ev *ev);
int anl_add_vnode(struct anl_result *r, const struct anl_vnode *v,
		  enum wfg_cond cond);
bool anl_comm_known(const struct snap *s, int comm);

/* Rank (blocked in call, a collective of class cls) waits on the others
 * of its collective; guessed is set when the communicator was guessed. */
/* Returns true, and links nothing, when the collective's communicator
 * reaches processes outside the job (ANL_MISS_OUTSIDE). */
bool anl_link_coll(struct bctx *b, int rank, const char *call,
		   enum md_call_class cls, bool *guessed);
/* The virtual node's own edges, once every rank is linked. */
void anl_link_vnode(struct bctx *b, int i);
/* Instances every member is in: stuck (a self-loop holds them), moving
 * data (members go on), all in MPI_Finalize (finishing), or seen in one
 * look only (guessed). */
void anl_settle_instances(struct bctx *b);

#endif /* MD_BUILD_INT_H */
