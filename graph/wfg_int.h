/* wfg_int.h - the wait-for graph's storage, shared by the graph/ files only. */
#ifndef MD_WFG_INT_H
#define MD_WFG_INT_H

#include <stdbool.h>
#include <stdint.h>

struct wfg {
	int nnodes, ncap;
	uint8_t *node;		/* state | cond << 2 | guessed << 3 */
	int nedges, ecap;
	int *efrom, *eto, *elabel;	/* sorted by source after freeze */
	int *off;		/* out-edges of v: off[v] .. off[v + 1] - 1 */
	int *roff;		/* in-edges of v: redge[roff[v] .. roff[v + 1]) */
	int *redge;
	bool frozen;
};

#endif /* MD_WFG_INT_H */
