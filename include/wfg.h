/*
 * wfg.h - the wait-for graph: nodes that wait on other nodes, each with an
 * AND or OR condition, and the release fixpoint that tells which nodes can
 * never go on.  The analyzer maps ranks (and virtual nodes for
 * collectives and wildcards) onto it; the graph knows nothing of MPI.
 *
 * Life cycle: wfg_new, wfg_add_node / wfg_add_edge, wfg_freeze, then the
 * queries.  Everything is linear in nodes + edges.
 */
#ifndef MD_WFG_H
#define MD_WFG_H

#include <stdbool.h>
#include <stdint.h>

enum wfg_state {
	WFG_ACTIVE,	/* can go on: releases what waits on it */
	WFG_BLOCKED,	/* released when its condition over its edges holds */
	WFG_GONE,	/* never releases anyone */
	WFG_UNKNOWN,	/* releases or not, depending on the assumption */
};

enum wfg_cond {
	WFG_AND,	/* needs every node it waits on */
	WFG_OR,		/* needs one of them */
};

/* How to treat what is not known, for wfg_release. */
enum wfg_assume {
	WFG_OPTIMISTIC,	 /* unknown nodes release; guessed nodes as given */
	WFG_PESSIMISTIC, /* unknown nodes and guessed nodes never release */
};

struct wfg;

/* A new empty graph; hint is the expected number of nodes (may be 0). */
struct wfg *wfg_new(int hint);
/* Frees g; wfg_free(NULL) does nothing. */
void wfg_free(struct wfg *g);

/*
 * Add a node and return its id (0, 1, 2, ... in order of addition).
 * guessed: its wait condition is an inference from missing data.  A
 * blocked node with no edges and an AND condition is released at once;
 * with OR it never is.
 */
int wfg_add_node(struct wfg *g, enum wfg_state st, enum wfg_cond cond,
		 bool guessed);
/* Change a node's state or condition (before wfg_freeze). */
void wfg_set_node(struct wfg *g, int v, enum wfg_state st, enum wfg_cond cond,
		  bool guessed);
/* from waits on to; label is the caller's (evidence index, or -1). */
void wfg_add_edge(struct wfg *g, int from, int to, int label);
/* Build the adjacency; no more nodes or edges after this. */
void wfg_freeze(struct wfg *g);

int wfg_nnodes(const struct wfg *g);
int wfg_nedges(const struct wfg *g);
enum wfg_state wfg_state(const struct wfg *g, int v);
enum wfg_cond wfg_cond(const struct wfg *g, int v);
bool wfg_guessed(const struct wfg *g, int v);
/* Out-edges of v (frozen graph): edge ids *first .. *first + return - 1. */
int wfg_out(const struct wfg *g, int v, int *first);
int wfg_edge_to(const struct wfg *g, int e);
int wfg_edge_from(const struct wfg *g, int e);
int wfg_edge_label(const struct wfg *g, int e);

/*
 * The release fixpoint: released[v] = 1 for every node that can go on
 * under the assumption, 0 for the rest (released has wfg_nnodes entries).
 * Linear in nodes + edges.
 */
void wfg_release(const struct wfg *g, enum wfg_assume a, uint8_t *released);

/*
 * Strongly connected components of the subgraph induced by the nodes
 * with keep[v] != 0 (Tarjan's, linear).  comp[v] gets the component
 * number, -1 for nodes not kept; cyclic[c] (allocated, *ncomp entries,
 * caller frees) says whether component c contains a cycle (more than one
 * node, or a self-loop).  Components are numbered in order of their
 * smallest node.  Returns 0.
 */
int wfg_scc(const struct wfg *g, const uint8_t *keep, int *comp, int *ncomp,
	    uint8_t **cyclic);

/*
 * A shortest cycle through start inside start's component (BFS).  Writes
 * the edge ids in order into path (room for the component's size) and
 * returns their number, 0 if there is none.
 */
int wfg_cycle(const struct wfg *g, const int *comp, int start, int *path);

#endif /* MD_WFG_H */
