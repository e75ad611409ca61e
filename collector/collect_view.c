/*
 * collect_view.c - the loaded objects of a stopped rank (col_rank_view):
 * from /proc/PID/maps for the first rank, from ld.so's link_map list in
 * the rank's memory for the others.
 *
 * The kernel formats every line of the maps text (about 500 for an Open
 * MPI rank, ~1 us each in a VM) although only the load biases differ
 * between ranks of one program.  The list (r_debug.r_map) holds them:
 * a few pages of the rank's memory, read through the target's page
 * cache.  The image cache learns, from the first rank read both ways,
 * which file each name of the list is; a rank whose list has a name not
 * learnt, or lacks an object, is read from its maps as before.
 */
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "collect_int.h"
#include "md.h"

#define CV_MAX_LINKS 4096
#define CV_NAME_MAX 4096

static void links_free(struct es_link *l, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free((char *)l[i].name);
	free(l);
}

/*
 * The list of the r_debug at addr.  A list being changed (a dlopen
 * caught half way: r_state not RT_CONSISTENT) or longer than any real one
 * (a loop) is refused: -MD_E_NOSYM.
 */
static int read_links(struct tgt *t, uint64_t addr, struct es_link **out,
		      unsigned *nout)
{
	struct es_link *l = NULL;
	uint64_t hdr[4], node[4];	/* r_debug; l_addr, l_name, l_ld, l_next */
	unsigned n = 0;
	int rc;

	rc = tgt_read(t, addr, hdr, sizeof(hdr));
	if (rc < 0)
		return rc;
	/* r_version (int) then r_map; r_state (int) after r_brk. */
	if ((uint32_t)hdr[0] < 1 || (uint32_t)hdr[3] != RT_CONSISTENT)
		return -MD_E_NOSYM;
	for (uint64_t m = hdr[1]; m; m = node[3]) {
		char *name = NULL;

		if (n == CV_MAX_LINKS) {
			rc = -MD_E_NOSYM;
			break;
		}
		rc = tgt_read(t, m, node, sizeof(node));
		if (rc == 0)
			rc = node[1] ? tgt_read_str(t, node[1], CV_NAME_MAX,
						    &name)
				     : 0;
		if (rc < 0)
			break;
		if (n % 64 == 0)
			l = xrealloc(l, (n + 64) * sizeof(*l));
		l[n].name = name ? name : xstrdup("");
		l[n++].addr = node[0];
	}
	if (rc < 0) {
		links_free(l, n);
		return rc;
	}
	*out = l;
	*nout = n;
	return 0;
}

/* Where r_debug is in this rank: ld.so's load address and the offset
 * learnt from the first rank. */
static int links_of(struct col_rank *cr, struct es_link **l, unsigned *n)
{
	uint64_t base;
	int rc = tgt_auxv(cr->t, AT_BASE, &base);

	if (rc < 0)
		return rc;
	return read_links(cr->t, base + cr->c->rdebug_off, l, n);
}

/* Learn the names of the list from a rank whose view came from maps. */
static int learn(struct col_rank *cr)
{
	const struct es_object *obj = NULL;
	struct es_link *l;
	uint64_t base, addr;
	unsigned n;
	int rc;

	if (tgt_auxv(cr->t, AT_BASE, &base) < 0 ||
	    es_proc_lookup_obj(cr->view, "_r_debug", &addr, &obj) < 0 ||
	    !obj || obj->bias != base)
		return -MD_E_NOSYM;
	cr->c->rdebug_off = addr - base;
	rc = links_of(cr, &l, &n);
	if (rc < 0)
		return rc;
	rc = es_links_learn(cr->c->syms, l, n);
	links_free(l, n);
	return rc;
}

int col_rank_view(struct col_rank *cr)
{
	struct col *c = cr->c;
	struct es_link *l;
	const char *maps;
	unsigned n;
	int rc;

	if (c->links > 0 && links_of(cr, &l, &n) == 0) {
		rc = es_view_from_links(c->syms, l, n, &cr->view);
		links_free(l, n);
		if (rc == 0)
			return 0;
	}
	maps = tgt_maps_text(cr->t);
	if (!maps)
		return -MD_E_GONE;
	rc = es_view_from_maps(c->syms, maps, tgt_exe(cr->t), &cr->view);
	if (rc < 0)
		return rc;
	if (c->links == 0 && !c->o->no_links)
		c->links = learn(cr) == 0 ? 1 : -1;
	return 0;
}
