/*
 * collect_rank.c - read one stopped rank: its message queues through the
 * MPI library's DLL, and its threads' stacks.
 */
#include <stdlib.h>
#include <string.h>

#include "collect_int.h"
#include "md.h"
#include "stacks.h"
#include "track.h"

/* The DLL's view of the rank: memory and symbols of the live process. */

static int proc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct col_rank *cr = ctx;

	return tgt_read(cr->t, addr, buf, len);
}

static int proc_lookup(void *ctx, const char *name, uint64_t *addr)
{
	struct col_rank *cr = ctx;

	return es_proc_lookup(cr->view, name, addr);
}

static int proc_comm_group(void *ctx, uint64_t id, int me, int size,
			   int *group)
{
	struct col_rank *cr = ctx;

	return topo_comm_group(&col_proc_ops, cr, cr->types, id, me, size,
			       group);
}

static int proc_comm_remote(void *ctx, uint64_t id, int me, int size,
			    int **remote, int *rsize)
{
	struct col_rank *cr = ctx;

	return topo_comm_remote(&col_proc_ops, cr, cr->types, id, me, size,
				remote, rsize);
}

const struct mh_proc_ops col_proc_ops = {
	.read = proc_read,
	.lookup = proc_lookup,
	.comm_group = proc_comm_group,
	.comm_remote = proc_comm_remote,
};

/* The MPI library's types, from its DWARF index. */

static int types_find(void *ctx, const char *name, void **type)
{
	const struct dt_type *t;
	int rc = dt_find_type(ctx, name, &t);

	if (rc == 0)
		*type = (void *)t;
	return rc;
}

static int types_size(void *ctx, void *type)
{
	(void)ctx;
	return dt_sizeof(type);
}

static int types_offset(void *ctx, void *type, const char *field)
{
	(void)ctx;
	return dt_field_offset(type, field);
}

const struct mh_types_ops col_types_ops = {
	.find = types_find,
	.size = types_size,
	.offset = types_offset,
};

static const char *libmpi_of(const struct es_view *v)
{
	unsigned i;

	for (i = 0; i < es_view_count(v); i++) {
		const char *p = es_view_object(v, i)->path;
		const char *base = strrchr(p, '/');

		base = base ? base + 1 : p;
		/* Debian's MPICH is libmpich.so.12. */
		if (!strncmp(base, "libmpi.so", 9) ||
		    !strncmp(base, "libmpich.so", 11))
			return p;
	}
	return NULL;
}

/* The DLL the rank names in MPIR_dll_name, or --dll; NULL with *err 0
 * when it names none, with *err the read's error when its name could
 * not be read. */
static char *dll_path_of(struct col_rank *cr, int *err)
{
	uint64_t addr;
	char *path = NULL;

	*err = 0;
	if (cr->c->o->dll)
		return xstrdup(cr->c->o->dll);
	if (es_proc_lookup(cr->view, "MPIR_dll_name", &addr) < 0)
		return NULL;
	*err = tgt_read_str(cr->t, addr, 4096, &path);
	if (*err < 0)
		return NULL;
	if (!path[0]) {
		free(path);
		return NULL;
	}
	return path;
}

static struct col_dll *dll_get(struct col *c, const char *path)
{
	struct col_dll *d;

	for (d = c->dlls; d; d = d->next)
		if (!strcmp(d->path, path))
			return d;
	d = xcalloc(1, sizeof(*d));
	d->path = xstrdup(path);
	d->next = c->dlls;
	c->dlls = d;
	if (mh_dll_load(path, c->o->dll != NULL, NULL, &d->dll) == 0) {
		c->s->dll = snap_str(c->s, path);
		c->s->mpi = snap_str(c->s, mh_dll_version(d->dll));
		c->s->impl = snap_str(c->s,
				      mh_impl_name(mh_dll_impl(d->dll)));
	}
	return d;
}

static struct col_image *image_get(struct col_rank *cr, struct col_dll *d,
				   const char *libmpi)
{
	struct col *c = cr->c;
	struct col_image *im;
	const char *src;

	for (im = c->images; im; im = im->next)
		if (im->dll == d && !strcmp(im->libmpi, libmpi))
			return im;
	im = xcalloc(1, sizeof(*im));
	im->libmpi = xstrdup(libmpi);
	im->dll = d;
	im->next = c->images;
	c->images = im;
	/* One type index per libmpi image, shared by every rank. */
	im->err = dt_index_open_mpi(libmpi, NULL, c->o->ompi_incdir,
				    &im->types);
	if (im->err < 0)
		return im;
	src = dt_index_source(im->types);
	c->s->types = snap_str(c->s, src);
	md_info("types of %s: %s", libmpi, src);
	im->err = mh_image_new(d->dll, tgt_exe(cr->t), &col_types_ops,
			       im->types, &col_proc_ops, cr, &im->img);
	return im;
}

/* Without a DLL, the implementation from the MPI library's file name:
 * MPICH's ABI is libmpi.so.12 (Debian links libmpich.so.12 to it), Open
 * MPI 4's libmpi.so.40. */
static enum mh_impl impl_of_libmpi(const char *libmpi)
{
	const char *base = strrchr(libmpi, '/');

	base = base ? base + 1 : libmpi;
	if (!strncmp(base, "libmpich", 8) || !strncmp(base, "libmpi.so.12", 12))
		return MH_IMPL_MPICH;
	if (!strncmp(base, "libmpi.so.40", 12))
		return MH_IMPL_OMPI;
	return MH_IMPL_UNKNOWN;
}

static void no_queues(struct col *c, struct snap_rank *r, const char *why)
{
	r->queues = SNAP_QUEUES_NONE;
	r->queues_reason = snap_str(c->s, why);
}

static int read_queues(struct col_rank *cr, struct snap_rank *r)
{
	struct col *c = cr->c;
	const char *libmpi = libmpi_of(cr->view);
	struct col_image *im;
	struct col_dll *d;
	char *path;
	int rc;

	if (!libmpi) {
		no_queues(c, r, "libmpi is not loaded in this process");
		return 0;
	}
	path = dll_path_of(cr, &rc);
	if (rc == -MD_E_GONE)
		return rc;
	if (rc < 0) {
		/* The name is there, its memory is not: not the library's
		 * fault, and --dll would not help. */
		char *why = xasprintf("its memory could not be read "
				      "(MPIR_dll_name: %s)", md_strerror(rc));

		no_queues(c, r, why);
		free(why);
		return 0;
	}
	if (!path) {
		enum mh_impl impl = impl_of_libmpi(libmpi);

		if (!c->s->impl)
			c->s->impl = snap_str(c->s, mh_impl_name(impl));
		if (impl == MH_IMPL_MPICH) {
			/* Debian's MPICH: configured without --enable-debuginfo,
			 * no DLL and no MPIR_dll_name. */
			if (!c->dll_reported)
				md_error("rank %d (pid %d): this MPICH (%s) was "
					 "built without --enable-debuginfo and has "
					 "no message-queue DLL: the report comes "
					 "from stacks alone (for the queues, use an "
					 "MPICH configured with --enable-debuginfo, "
					 "e.g. scripts/build-mpich.sh)", cr->rank,
					 tgt_pid(cr->t), libmpi);
			c->dll_reported = true;
			no_queues(c, r, "MPICH built without --enable-debuginfo "
				  "has no message-queue DLL (use one configured "
				  "with --enable-debuginfo)");
			return 0;
		}
		if (!c->dll_reported)
			md_error("rank %d (pid %d) names no message-queue DLL "
				 "in MPIR_dll_name: give one with --dll",
				 cr->rank, tgt_pid(cr->t));
		c->dll_reported = true;
		no_queues(c, r, "the MPI library names no message-queue DLL");
		return 0;
	}
	d = dll_get(c, path);
	free(path);
	if (!d->dll) {
		no_queues(c, r, "the message-queue DLL could not be used");
		return 0;
	}
	im = image_get(cr, d, libmpi);
	cr->types = im->types;
	if (!im->img) {
		no_queues(c, r, im->types ? "the DLL found no message queues "
					    "in the MPI library"
					  : "no type information for libmpi");
		return 0;
	}
	rc = mh_collect(im->img, &col_proc_ops, cr, cr->rank, c->s, r);
	col_phase(c, COL_PHASE_OB1, cr->rank);
	if (rc == 0 && r->queues == SNAP_QUEUES_OK) {
		col_ob1_read(cr, im, r);
		cr->im = im;
	}
	/* The topologies, for neighbour collectives: beside the DLL, which
	 * does not read them. */
	if (rc == 0 && r->queues == SNAP_QUEUES_OK)
		topo_read(&col_proc_ops, cr, im->types, c->s, r, c->topo);
	return rc;
}

/*
 * The library's count of completed requests, where it keeps one that a
 * symbol names (MPICH ch3, nemesis and sock: an int, hidden, in .symtab).
 * Open MPI's ob1 walk sets its own count (ob1q.c: message sequences).
 */
static void read_completions(struct col_rank *cr, struct snap_rank *r)
{
	static const char *const syms[] = {
		"MPIDI_CH3I_progress_completion_count",
	};
	uint64_t addr;
	uint32_t v;

	for (size_t i = 0; i < sizeof(syms) / sizeof(*syms); i++)
		if (es_proc_lookup(cr->view, syms[i], &addr) == 0 &&
		    tgt_read(cr->t, addr, &v, sizeof(v)) == 0) {
			r->has_completions = true;
			r->completions = v;
			return;
		}
}

/*
 * The thread support the rank's MPI_Init_thread gave: Open MPI's
 * ompi_mpi_thread_provided, MPICH's MPIR_ThreadInfo.thread_provided (its
 * first member), both an int holding MPI_THREAD_SINGLE (0) to
 * MPI_THREAD_MULTIPLE (3).
 */
static void read_thread_level(struct col_rank *cr, struct snap_rank *r)
{
	static const char *const syms[] = {
		"ompi_mpi_thread_provided", "MPIR_ThreadInfo",
	};
	uint64_t addr;
	int32_t v;

	for (size_t i = 0; i < sizeof(syms) / sizeof(*syms); i++)
		if (es_proc_lookup(cr->view, syms[i], &addr) == 0 &&
		    tgt_read(cr->t, addr, &v, sizeof(v)) == 0) {
			if (v >= 0 && v <= 3)
				r->thread_level = SNAP_TL_SINGLE + v;
			return;
		}
}

/*
 * Has MPI_Finalize returned in the rank?  Open MPI's ompi_mpi_state, an
 * int32, is OMPI_MPI_STATE_FINALIZE_COMPLETED (5) once it has; with
 * async_mpi_finalize that happens while other ranks still wait.  A rank
 * still inside MPI_Finalize is not finalized: its stack shows the call.
 * MPICH's MPI_Finalize returns only once every rank is in it, so no rank
 * of an MPICH job is past it while another waits on it.
 */
static void read_finalized(struct col_rank *cr, struct snap_rank *r)
{
	uint64_t addr;
	int32_t v;

	if (es_proc_lookup(cr->view, "ompi_mpi_state", &addr) == 0 &&
	    tgt_read(cr->t, addr, &v, sizeof(v)) == 0)
		r->finalized = v == 5;
}

int col_read_rank(struct col_rank *cr, struct snap_rank *r)
{
	struct col *c = cr->c;
	long long t0 = md_now_ns(), t1;
	int rc;

	rc = col_rank_view(cr);
	if (rc < 0)
		return rc;
	t1 = md_now_ns();
	c->st.setup_ns += t1 - t0;
	col_phase(c, COL_PHASE_QUEUES, cr->rank);
	rc = read_queues(cr, r);
	t0 = md_now_ns();
	c->st.queues_ns += t0 - t1;
	if (rc == 0) {
		read_completions(cr, r);
		read_thread_level(cr, r);
		read_finalized(cr, r);
	}
	if (rc == 0) {
		col_phase(c, COL_PHASE_STACKS, cr->rank);
		rc = stk_read_all(cr->t, cr->view, c->lines, c->s, r);
	}
	c->st.stacks_ns += md_now_ns() - t0;
	if (rc == 0)
		rc = col_ob1_iprobes(cr, r);
	if (rc == 0) {
		struct trk_ctx x = { cr->t, cr->view, c->lines, cr->types,
				     c->s, cr->rank,
				     &c->track_noted };

		col_phase(c, COL_PHASE_TRACK, cr->rank);
		rc = trk_read(&x, r);
	}
	es_view_free(cr->view);
	cr->view = NULL;
	return rc;
}

void col_prepare(struct col *c, int rank)
{
	struct col_rank cr = { .c = c, .rank = -1 };
	int pid = c->s->ranks[rank].pid;
	const char *maps, *libmpi;
	struct col_dll *d;
	char *path;
	int err;

	if (col_target(c, pid, false, &cr.t) < 0)
		return;
	if (c->read_fault[rank])
		tgt_inject_read_fault(cr.t, c->read_fault[rank]);
	maps = tgt_maps_text(cr.t);
	if (maps && es_view_from_maps(c->syms, maps, tgt_exe(cr.t),
				      &cr.view) == 0) {
		libmpi = libmpi_of(cr.view);
		path = libmpi ? dll_path_of(&cr, &err) : NULL;
		if (path) {
			d = dll_get(c, path);
			if (d->dll)
				col_ob1_prepare(&cr, image_get(&cr, d, libmpi));
		}
		free(path);
		es_view_free(cr.view);
	}
	tgt_free(cr.t);
}

void col_images_free(struct col *c)
{
	struct col_image *im, *in;
	struct col_dll *d, *dn;

	for (im = c->images; im; im = in) {
		in = im->next;
		mh_image_free(im->img);
		ob1_layout_free(im->ob1);
		dt_index_free(im->ob1_types);
		dt_index_free(im->types);
		free(im->libmpi);
		free(im);
	}
	for (d = c->dlls; d; d = dn) {
		dn = d->next;
		mh_dll_free(d->dll);
		free(d->path);
		free(d);
	}
	c->images = NULL;
	c->dlls = NULL;
}
