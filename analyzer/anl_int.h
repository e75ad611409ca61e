/*
 * anl_int.h - the analysis result, shared by the analyzer's own files
 * (build, verdict, reports); not part of the public interface.
 *
 * Node ids of the wait-for graph: rank r is node r; virtual nodes (a
 * collective instance, or "any member of a communicator") follow, node
 * nranks + i is vnodes[i].  Virtual nodes are never shown as ranks.
 */
#ifndef MD_ANL_INT_H
#define MD_ANL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze.h"
#include "snap.h"
#include "wfg.h"

enum anl_role {
	ANL_ROLE_DEADLOCKED,
	ANL_ROLE_BEHIND,
	ANL_ROLE_ACTIVE,
	ANL_ROLE_RELEASED,
	ANL_ROLE_GONE,
	ANL_ROLE_UNKNOWN,
};

enum anl_edge_kind {
	ANL_EK_RECV,
	ANL_EK_SEND,
	ANL_EK_COLL,
	ANL_EK_FINALIZE,
	ANL_EK_NEIGHBOR,	/* a neighbour collective, to one neighbour */
	ANL_EK_PROBE,		/* a probe's request (ob1) */
	ANL_EK_UNKNOWN,		/* blocked, what on is not known */
};

/* What was missing for a rank (bits of anl_rank.miss). */
enum {
	ANL_MISS_UNREAD = 1,	/* rank not read (state, reason) */
	ANL_MISS_QUEUES = 2,	/* the DLL had no queue information */
	ANL_MISS_ONELOOK = 4,	/* blocked, but seen once only */
	ANL_MISS_NOOP = 8,	/* blocked in p2p with no usable op visible */
	ANL_MISS_COLLCOMM = 16,	/* collective's communicator guessed */
	ANL_MISS_SEVERAL = 32,	/* several candidate ops: taken as OR */
	ANL_MISS_MAYBE = 64,	/* stuck only if the missing data is bad */
	ANL_MISS_SPIN = 128,	/* polls in a loop that does not move:
				 * taken as blocked (inferred) */
	ANL_MISS_NOTOPO = 256,	/* neighbour collective without topology:
				 * waits on every member (inferred) */
	ANL_MISS_INTERNAL = 512, /* in a stuck collective whose internal
				  * requests were not read */
	ANL_MISS_OUTSIDE = 1024, /* read, but waits on processes outside
				  * the job (spawned, connected): unknown */
};

/* The evidence of an edge from a rank. */
struct anl_ev {
	int rank;		/* the waiting rank */
	int op;			/* index in its ops, -1 if none */
	int comm;		/* snap comm index, -1 if unknown */
	uint8_t kind;		/* enum anl_edge_kind */
	bool inferred;
	bool any_source;
};

enum anl_vkind { ANL_V_ANY, ANL_V_COLL, ANL_V_NEIGHBOR };

struct anl_vnode {
	uint8_t kind;		/* enum anl_vkind */
	bool inferred;
	int comm;		/* snap comm index, -1: all ranks */
	const char *call;	/* the collective (ANL_V_COLL, _NEIGHBOR) */
	int gone_edge;		/* an edge to a gone/unknown node, -1 */
	/* Every member is in it, none moved between the looks and nothing
	 * is in transfer: it does not complete (a self-loop holds it). */
	bool stuck;
	bool evidence;		/* the members' internal requests were read */
};

struct anl_rank {
	uint8_t state;		/* enum wfg_state */
	uint8_t role;		/* enum anl_role */
	uint16_t miss;		/* ANL_MISS_* */
	uint8_t transfer;	/* active only because a matched message is
				 * in transfer */
	uint8_t finishing;	/* active: every rank is in MPI_Finalize */
	int vcoll;		/* node of the collective it is in, -1 */
	int computing;		/* active only because this thread (an index
				 * in its threads) runs the program's own
				 * code outside MPI and may yet send; -1 */
	uint8_t computing_how;	/* enum anl_going, with computing */
	/* Its wait condition is guessed only from its point-to-point
	 * operations (none visible, or several that could block it). */
	uint8_t guess_only;
};

/* How a thread outside MPI may yet go on. */
enum anl_going {
	ANL_GOING_NO,
	ANL_GOING_RUNS,		/* computes */
	ANL_GOING_SLEEPS,	/* sleeps, or waits with a time-out or for
				 * input */
};

enum anl_ckind {
	ANL_CK_CYCLE,
	ANL_CK_KNOT,
	ANL_CK_MISMATCH,
	ANL_CK_DEAD,		/* waits on an exited rank */
	ANL_CK_UNREAD,		/* waits on a rank not read (worst reading) */
	ANL_CK_STUCK,		/* a collective every member is in, stuck */
};

/* One explained part of the deadlock. */
struct anl_cycle {
	uint8_t kind;		/* enum anl_ckind */
	int nranks;
	int *ranks;		/* sorted global ranks of the part */
	int nedges;
	int *edges;		/* wfg edge ids, a path (cycle: closed) */
	int vnode;		/* ANL_CK_STUCK: index in anl_result.v */
};

struct anl_result {
	const struct snap *s;
	struct wfg *g;
	int nranks;
	int world;		/* comm index of MPI_COMM_WORLD, -1 */
	struct anl_rank *ranks;
	int nev, evcap;
	struct anl_ev *ev;
	int nv, vcap;
	struct anl_vnode *v;
	enum anl_verdict verdict;
	int ndead, nbehind, nmaybe;
	int ncycles;
	struct anl_cycle *cycles;
};

/* build.c: the graph of s into r (r->s set, everything else zero). */
void anl_build(struct anl_result *r);
/* verdict.c: fixpoints, roles, explanation. */
void anl_decide(struct anl_result *r);

/* Whether op is a probe's request (ob1: MPI_Probe, MPI_Iprobe,
 * MPI_Mprobe, MPI_Improbe): it waits for a message and takes none. */
bool anl_op_probe(const struct snap_op *op);
/* Whether op is an internal request of a collective (negative tag). */
bool anl_op_internal(const struct snap_op *op);
/* The global rank an operation's peer is (its communicator's group
 * maps a local rank), -1 for any or unknown. */
int anl_op_peer(const struct anl_result *r, const struct snap_op *op);
/* The reason a stuck collective gives, "collective MPI_Reduce on
 * MPI_COMM_WORLD does not complete: its members disagree" (malloc'ed). */
char *anl_stuck_reason(const struct anl_result *r, const struct anl_cycle *c);

/* A rank of a part that its chain does not name, and the wait (n edges:
 * rank -> rank, or rank -> node -> rank; 0 if none is found) that keeps
 * it in the part. */
struct anl_rest {
	int rank;
	int n;
	int path[2];
};

/*
 * The ranks of cycle, knot or dead/unread-peer part c that its chain
 * (c->edges, a shortest cycle or the one wait edge) does not name, in
 * rank order, into *out (allocated; free it).  A collective's line names
 * all its members, so they are not counted.  Returns their number.
 */
int anl_cycle_rest(const struct anl_result *r, const struct anl_cycle *c,
		   struct anl_rest **out);

/* "MPI_Recv at ring.c:14" for a rank (malloc'ed). */
char *anl_site(const struct anl_result *r, int rank);
/* The one-line verdict (malloc'ed). */
char *anl_summary(const struct anl_result *r);
const char *anl_role_name(enum anl_role role);
/* "SIGSTOP" (a static buffer of the thread's). */
const char *anl_signal_name(int sig);
const char *anl_edge_kind_name(enum anl_edge_kind k);
const char *anl_cycle_kind_name(enum anl_ckind k);
const char *anl_verdict_name(enum anl_verdict v);
const char *anl_comm_name(const struct anl_result *r, int comm);
/* The evidence of edge e, NULL for an edge out of a virtual node. */
const struct anl_ev *anl_edge_ev(const struct anl_result *r, int e);

/* unexpected.c: the unexpected messages of rank that explain why its
 * receive op k waits (same peer, another tag or communicator): their op
 * indices (up to max into out); returns how many there are. */
int anl_unexpected_find(const struct snap *s, int rank, int k, int *out,
			int max);
/* That as one sentence: "rank 1 waits for tag 2 from rank 0 (MPI_Recv at
 * x.c:12); a message from rank 0 with tag 1 arrived and is unmatched",
 * with the sender's call site when its stack shows the send; NULL when
 * there is none (malloc'ed). */
char *anl_unexpected_text(const struct anl_result *r, int rank, int k);

/* ranges.c: a set of increasing ranks as text ("0-3,8,10-12"). */
struct anl_ranges {
	char *buf;
	size_t len, cap;
	int first, last, count;
};
void anl_ranges_init(struct anl_ranges *rs);
/* r must be greater than every rank added before. */
void anl_ranges_add(struct anl_ranges *rs, int r);
/* The text (owned by rs, valid until the next add or free). */
const char *anl_ranges_str(struct anl_ranges *rs);
void anl_ranges_free(struct anl_ranges *rs);
/* "rank 3" or "ranks 0-3,8" for a sorted array (malloc'ed). */
char *anl_ranks_text(const int *ranks, int n);

/* The missing-data lines (malloc'ed array of malloc'ed strings). */
char **anl_missing(const struct anl_result *r, int *n);
void anl_strv_free(char **v, int n);

/*
 * track.c: libmdtrack.so's records.  A pending request of a deadlocked
 * or behind rank joined to the call that posted it (post; for a started
 * persistent request also its creation, init).  Pointers borrow from
 * the snapshot.
 */
struct anl_posting {
	int rank;
	int op;				/* index in the rank's ops */
	/* NULL if not recorded; a collective record (SNAP_TRACK_COLL) when
	 * op is an internal request of the nonblocking collective it
	 * records. */
	const struct snap_track_rec *post;
	const struct snap_track_rec *init;	/* NULL if not persistent */
};
/* The nonblocking collective whose internal request op is (a pending
 * internal op of a rank waiting on requests: the rank's last collective
 * record on op's communicator, if an MPI_I* call), or NULL. */
const struct snap_track_rec *anl_op_nbc(const struct snap_rank *sr,
					const struct snap_op *op);
/*
 * The communicator (index in the snapshot) of the blocking collective
 * sr is in, from its latest collective record when that record is the
 * call on its stack (same call, same site where both are known) and
 * names one of the rank's communicators; -1 otherwise.  MPICH's queues
 * show no collective's internal requests: this names the collective's
 * communicator among several with one group.
 */
int anl_track_coll_comm(const struct snap_rank *sr);
/* A record's call sends ("MPI_Isend", "MPI_Send_init"). */
bool anl_call_sends(const char *call);
/* The rank's latest collective record on communicator comm (its ncalls
 * numbers it there: 1 for its first), or on any (ANL_ANY_COMM); NULL if
 * none. */
#define ANL_ANY_COMM (-2)
const struct snap_track_rec *anl_coll_last(const struct snap_rank *sr,
					   int comm);
/* All of them, in rank order (*out malloc'ed); returns the count. */
int anl_postings(const struct anl_result *r, struct anl_posting **out);
/* "rank 0 waits in MPI_Wait at a.c:63 for the MPI_Irecv posted at
 * a.c:61, tag 1 from rank 0" (malloc'ed). */
char *anl_posting_text(const struct anl_result *r, const struct anl_posting *p);

/* The members of stuck collectives that should meet, grouped by what
 * they called; differ has a bit per kind of disagreement. */
struct anl_coll_group {
	int nranks;
	int *ranks;			/* sorted */
	const struct snap_track_rec *rec;
};
struct anl_disagree {
	unsigned differ;
	int ngroups;
	struct anl_coll_group *groups;
};
/* Every set that disagrees (*out: anl_disagree_free); returns the count. */
int anl_disagreements(const struct anl_result *r, struct anl_disagree **out);
void anl_disagree_free(struct anl_disagree *v, int n);
/* "rank 0 called MPI_Reduce with root 0 at a.c:19, rank 1 with root 1 at
 * a.c:21" (malloc'ed). */
char *anl_disagree_text(const struct anl_result *r,
			const struct anl_disagree *d);
/* Pieces for the reports (malloc'ed): "a.c:61"; the communicator. */
char *anl_track_site(const struct snap_track_rec *t);
char *anl_track_comm(const struct anl_result *r, const struct snap_track_rec *t);
/* A record's peer or root as a global rank, -1 if unknown. */
int anl_track_peer_global(const struct anl_result *r,
			  const struct snap_track_rec *t);

void anl_report_text(const struct anl_result *r, const struct anl_opts *o,
		     FILE *out);
void anl_report_json(const struct anl_result *r, FILE *out);
void anl_report_dot(const struct anl_result *r, FILE *out);
void anl_report_github(const struct anl_result *r, FILE *out);

#endif /* MD_ANL_INT_H */
