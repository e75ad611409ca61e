/*
 * collect_ob1.c - the collector's side of ob1's matching queues: where
 * the layouts come from (the DWARF of the mca_pml_ob1.so plug-in the rank
 * loaded, else the type provider built from the sources of that Open
 * MPI), and the walk of each stopped rank after the DLL's.
 */
#include <stdlib.h>
#include <string.h>

#include "collect_int.h"
#include "md.h"

/* Types looked up in the plug-in's index, then in libmpi's: the
 * plug-in's DWARF has every type its own code uses, libmpi's the rest. */
struct two_idx {
	struct dt_index *first, *second;
};

static int two_find(void *ctx, const char *name, void **type)
{
	struct two_idx *t = ctx;
	int rc = -MD_E_NOTYPES;

	if (t->first)
		rc = col_types_ops.find(t->first, name, type);
	if (rc < 0 && t->second)
		rc = col_types_ops.find(t->second, name, type);
	return rc;
}

static const struct mh_types_ops two_ops = {
	.find = two_find,
};

static int layout_from(struct dt_index *first, struct dt_index *second,
		       struct ob1_layout **out, char **missing)
{
	struct two_idx t = { first, second };
	struct mh_types_ops ops = two_ops;

	ops.size = col_types_ops.size;
	ops.offset = col_types_ops.offset;
	return ob1_layout_new(&ops, &t, out, missing);
}

static const char *ob1_plugin(const struct es_view *v)
{
	for (unsigned i = 0; i < es_view_count(v); i++) {
		const char *p = es_view_object(v, i)->path;
		const char *base = strrchr(p, '/');

		base = base ? base + 1 : p;
		if (!strncmp(base, "mca_pml_ob1.so", 14))
			return p;
	}
	return NULL;
}

/* Said once per collection: the walk is an addition, its absence is
 * not an error. */
static void without_ob1(struct col *c, const char *why)
{
	md_info("ob1's matching queues not read: %s; the message-queue DLL's "
		"view only (no internal requests of collectives, probes or "
		"unexpected messages)", why);
	snap_note(c->s, "ob1's matching queues not read: %s", why);
}

void col_ob1_prepare(struct col_rank *cr, struct col_image *im)
{
	struct col *c = cr->c;
	const char *plugin, *src = NULL;
	char *missing = NULL, *why = NULL;
	int rc;

	if (!im || im->ob1_tried || c->o->no_ob1 || !im->types)
		return;
	im->ob1_tried = true;
	/* ob1 is Open MPI's: another MPI has nothing to miss here. */
	if (im->dll && im->dll->dll &&
	    mh_dll_impl(im->dll->dll) == MH_IMPL_MPICH)
		return;
	plugin = ob1_plugin(cr->view);
	if (!plugin) {
		without_ob1(c, "the ranks do not use Open MPI's ob1 PML "
			       "(mca_pml_ob1.so is not loaded)");
		return;
	}
	rc = dt_index_open_ob1(plugin, NULL, c->o->ompi_incdir,
			       c->o->ompi_srcdir, &im->ob1_types, &why);
	if (rc < 0) {
		char *msg = xasprintf("no type information for %s: %s", plugin,
				      why ? why : "its DWARF is unreadable");

		without_ob1(c, msg);
		free(msg);
		free(why);
		return;
	}
	src = dt_index_source(im->ob1_types);
	rc = layout_from(im->ob1_types, im->types, &im->ob1, &missing);
	if (rc < 0) {
		why = xasprintf("the types of %s (%s) lack %s", plugin, src,
				missing);
		without_ob1(c, why);
		free(why);
		free(missing);
		return;
	}
	md_info("ob1's matching queues: layouts from %s", src);
}

int col_ob1_iprobes(struct col_rank *cr, struct snap_rank *r)
{
	long long t0 = md_now_ns();
	int n;

	if (!cr->im || !cr->im->ob1 || cr->c->o->no_ob1 || !r->ob1)
		return 0;
	n = ob1_collect_iprobes(cr->im->ob1, &col_proc_ops, cr, cr->c->s, r);
	cr->c->st.ob1_ns += md_now_ns() - t0;
	return n == -MD_E_GONE ? n : 0;
}

void col_ob1_read(struct col_rank *cr, struct col_image *im,
		  struct snap_rank *r)
{
	struct col *c = cr->c;
	struct ob1_stats st;
	long long t0 = md_now_ns();

	if (c->o->no_ob1)
		return;
	col_ob1_prepare(cr, im);
	if (!im->ob1)
		return;
	if (ob1_collect(im->ob1, &col_proc_ops, cr, c->s, r, &st) == 0) {
		/* Whole walks only: then a request ob1 does not list is not
		 * pending, which the analyzer takes as evidence. */
		r->ob1 = !st.torn;
		if (st.torn)
			md_info("rank %d: %d walks of ob1's queues cut short (a "
				"list changed, or a bound was reached)",
				cr->rank, st.torn);
	}
	c->st.ob1_ns += md_now_ns() - t0;
}
