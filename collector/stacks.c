/*
 * stacks.c - thread stacks with libunwind (see stacks.h).
 *
 * libunwind walks through accessors of our own (unw_create_addr_space)
 * that reach the process only through the target's ops table: registers,
 * memory and the unwind tables of the objects the view knows.  So the
 * walker never touches ptrace or /proc itself, and runs on the fake
 * target as on a live one (libunwind's _UPT accessors would PTRACE_PEEK
 * the threads themselves).
 */
#include "stacks.h"

#include <inttypes.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "mpicalls.h"

/* One file mapping of /proc/PID/maps, for frames the symbolizer cannot
 * place. */
struct stk_map {
	uint64_t start, end;
	const char *path;	/* interned in the snapshot */
};

struct stk_walk {
	struct tgt *t;
	struct snap *s;
	const struct stk_opts *o;
	unw_addr_space_t as;
	const struct es_view *view;	/* o->view, or own_view */
	struct es_cache *own_cache;	/* when the caller gave no view */
	struct es_view *own_view;
	struct stk_map *maps;
	int nmaps;
	bool maps_read;
	bool warned;
};

/* ---- libunwind accessors over the target ---- */

/*
 * libunwind's search of a remote .eh_frame_hdr table.  libunwind-x86_64
 * exports it for its own ptrace and core-file accessors but declares it
 * only in its private headers; its signature has not changed since 2003.
 */
#ifdef __x86_64__
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
					      unw_word_t ip,
					      unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define stk_search_table _Ux86_64_dwarf_search_unwind_table
#endif

/* The accessors' argument: one thread of the walk. */
struct stk_arg {
	struct stk_walk *w;
	int tid;
	struct tgt_regs regs;
};

/*
 * The objects come from the view: each one's bias and .eh_frame_hdr
 * search table, which libunwind's table search reads through
 * access_mem.  An address no object holds (the vdso, generated code)
 * has no information, and libunwind falls back to the frame chain.
 */
static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip,
			      unw_proc_info_t *pi, int need_unwind_info,
			      void *arg)
{
#ifdef stk_search_table
	struct stk_arg *a = arg;
	const struct es_view *v = a->w->view;
	const struct es_object *obj = v ? es_proc_object_at(v, ip) : NULL;
	struct es_eh_table eh;
	unw_dyn_info_t di;

	if (obj && es_image_eh_table(obj->img, &eh) == 0) {
		memset(&di, 0, sizeof(di));
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.start_ip = obj->start;
		di.end_ip = obj->end;
		di.gp = eh.gp;
		di.u.rti.segbase = eh.hdr + obj->bias;
		di.u.rti.table_data = eh.table + obj->bias;
		di.u.rti.table_len = eh.count * 8 / sizeof(unw_word_t);
		return stk_search_table(as, ip, &di, pi, need_unwind_info,
					arg);
	}
#else
	(void)as;
	(void)ip;
	(void)pi;
	(void)need_unwind_info;
	(void)arg;
#endif
	return -UNW_ENOINFO;
}

/* What the table search allocated (as libunwind's _UPT does). */
static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi,
				void *arg)
{
	(void)as;
	(void)arg;
	free(pi->unwind_info);
	pi->unwind_info = NULL;
}

/* No dynamically registered unwind info (JIT) is looked for. */
static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil,
				      void *arg)
{
	(void)as;
	(void)dil;
	(void)arg;
	return -UNW_ENOINFO;
}

/* An unwind reads the same stack and .eh_frame pages over and over: the
 * target keeps the pages of a stopped process (tgt_forget). */
static int acc_access_mem(unw_addr_space_t as, unw_word_t addr,
			  unw_word_t *val, int write, void *arg)
{
	struct stk_arg *a = arg;
	const struct es_object *obj;

	(void)as;
	if (write)
		return -UNW_EINVAL;	/* a walk only reads */
	/* The unwind tables from the file, read once for all ranks; the
	 * stack from the process. */
	obj = a->w->view ? es_proc_object_at(a->w->view, addr) : NULL;
	if (obj && obj->img &&
	    es_image_read_ro(obj->img, addr - obj->bias, val, sizeof(*val)) ==
		    0)
		return 0;
	return tgt_read(a->w->t, addr, val, sizeof(*val)) == 0 ? 0
							       : -UNW_EINVAL;
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t reg,
			  unw_word_t *val, int write, void *arg)
{
	struct stk_arg *a = arg;

	(void)as;
	if (write || reg < 0 || reg >= TGT_NREGS)
		return -UNW_EBADREG;
	*val = a->regs.r[reg];
	return 0;
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t reg,
			    unw_fpreg_t *val, int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

/* The nearest function symbol of the object the view places addr in. */
static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr,
			     char *buf, size_t len, unw_word_t *off,
			     void *arg)
{
	struct stk_arg *a = arg;
	const struct es_view *v = a->w->view;
	const struct es_object *obj = v ? es_proc_object_at(v, addr) : NULL;
	const char *name;
	uint64_t o;

	(void)as;
	if (!obj || !obj->img ||
	    es_addr_to_name(obj->img, addr - obj->bias, &name, &o) < 0)
		return -UNW_ENOINFO;
	snprintf(buf, len, "%s", name);
	*off = o;
	return strlen(name) < len ? 0 : -UNW_ENOMEM;
}

static const unw_accessors_t stk_accessors = {
	.find_proc_info = acc_find_proc_info,
	.put_unwind_info = acc_put_unwind_info,
	.get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
	.access_mem = acc_access_mem,
	.access_reg = acc_access_reg,
	.access_fpreg = acc_access_fpreg,
	.resume = acc_resume,
	.get_proc_name = acc_get_proc_name,
};

static void parse_maps(struct stk_walk *w)
{
	const char *p = tgt_maps_text(w->t);
	int cap = 0;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, len), path[4096];
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095[^\n]", &a, &b,
			   path) == 3 &&
		    (path[0] == '/' || path[0] == '[')) {
			if (w->nmaps == cap) {
				cap = cap * 2 + 32;
				w->maps = xrealloc(w->maps, (size_t)cap *
							    sizeof(*w->maps));
			}
			w->maps[w->nmaps++] = (struct stk_map){
				a, b, snap_str(w->s, path)
			};
		}
		free(line);
		p = eol ? eol + 1 : NULL;
	}
}

/* The maps are parsed only for a frame that no object of the view
 * holds: most walks never need them. */
static const char *object_at(struct stk_walk *w, uint64_t pc)
{
	if (!w->maps_read) {
		w->maps_read = true;
		parse_maps(w);
	}
	for (int i = 0; i < w->nmaps; i++)
		if (pc >= w->maps[i].start && pc < w->maps[i].end)
			return w->maps[i].path;
	return NULL;
}

/* Fill frame f for the cursor's pc; look up lookup_pc. */
static void describe(struct stk_walk *w, unw_cursor_t *c, uint64_t pc,
		     uint64_t lookup_pc, struct snap_frame *f)
{
	struct stk_sym sym = { 0 };
	char name[512];
	unw_word_t off;

	f->pc = pc;
	if (w->o->symbolize &&
	    w->o->symbolize(w->o->ctx, w->t, lookup_pc, &sym) == 0) {
		f->func = snap_str(w->s, sym.func);
		f->file = snap_str(w->s, sym.file);
		f->line = sym.line;
		f->object = snap_str(w->s, sym.object);
	}
	if (f->object)
		return;
	f->object = object_at(w, lookup_pc);
	/* libunwind's name (acc_get_proc_name) is the nearest function
	 * symbol before pc, whatever its size: for an object the symbolizer
	 * knows (above) it only names the wrong static function. */
	if (!f->func && unw_get_proc_name(c, name, sizeof(name), &off) == 0)
		f->func = snap_str(w->s, name);
}

static void classify(struct snap *s, struct snap_thread *th)
{
	struct mc_class mc;

	mc_classify(th->frames, th->nframes, &mc);
	th->mpi_call = mc.call[0] ? snap_str(s, mc.call) : NULL;
	th->mpi_frame = mc.mpi_frame;
	th->user_frame = mc.user_frame;
	th->progress_thread = mc.progress_thread;
	th->called_back_by = mc.called_back_by[0]
				     ? snap_str(s, mc.called_back_by) : NULL;
}

static void walk_thread(struct stk_walk *w, int tid, struct snap_thread *th)
{
	int max = w->o->max_frames > 0 ? w->o->max_frames : STK_MAX_FRAMES;
	struct stk_arg arg = { .w = w, .tid = tid };
	bool exact = true;	/* innermost, or after a signal frame */
	unw_cursor_t c;
	int r, keep;

	th->tid = tid;
	th->mpi_frame = th->user_frame = -1;
	th->frames = xcalloc((size_t)max, sizeof(*th->frames));
	r = tgt_regs(w->t, tid, &arg.regs);
	if (r < 0 && !w->warned) {
		w->warned = true;
		md_warn("registers of thread %d of pid %d: %s", tid,
			tgt_pid(w->t), md_strerror(r));
	}
	if (r == 0) {
		r = unw_init_remote(&c, w->as, &arg);
		if (r < 0 && !w->warned) {
			w->warned = true;
			md_warn("unw_init_remote for thread %d of pid %d: %s",
				tid, tgt_pid(w->t), unw_strerror(r));
		}
	}
	while (r >= 0 && th->nframes < max) {
		unw_word_t ip = 0, sp = 0;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (unw_get_reg(&c, UNW_REG_SP, &sp) == 0)
			th->frames[th->nframes].sp = sp;
		/* A return address points after the call: look up the
		 * call's own line. */
		describe(w, &c, ip, exact ? ip : ip - 1,
			 &th->frames[th->nframes++]);
		exact = unw_is_signal_frame(&c) > 0;
		if (unw_step(&c) <= 0)
			break;
	}
	keep = th->nframes ? th->nframes : 1;
	th->frames = xrealloc(th->frames, (size_t)keep * sizeof(*th->frames));
	classify(w->s, th);
}

int stk_process(struct tgt *t, struct snap *s, const struct stk_opts *o,
		struct snap_thread **threads, int *n)
{
	struct stk_walk w = { .t = t, .s = s, .o = o };
	unw_accessors_t acc = stk_accessors;
	const int *tids;
	int nt, r;

	if (!tgt_is_attached(t)) {
		md_error("stacks of pid %d: the process is not attached",
			 tgt_pid(t));
		return -MD_E_INPUT;
	}
	r = tgt_threads(t, &tids, &nt);
	if (r < 0)
		return r;
	/* Without a view from the caller, one of our own from the maps. */
	w.view = o->view;
	if (!w.view) {
		const char *maps = tgt_maps_text(t);

		w.own_cache = es_cache_new();
		if (maps && es_view_from_maps(w.own_cache, maps, tgt_exe(t),
					      &w.own_view) == 0)
			w.view = w.own_view;
	}
	/* One address space per process: libraries sit elsewhere in every
	 * rank (ASLR).  No cache of libunwind's: a process's few dozen
	 * frames hardly hit it, and every look-up of its global cache
	 * costs two sigprocmask calls (a quarter of them at 256 ranks); the
	 * tables it would save reading come from the files anyway
	 * (es_image_read_ro). */
	w.as = unw_create_addr_space(&acc, 0);
	unw_set_caching_policy(w.as, UNW_CACHE_NONE);
	*threads = xcalloc((size_t)(nt ? nt : 1), sizeof(**threads));
	for (int i = 0; i < nt; i++)
		walk_thread(&w, tids[i], &(*threads)[i]);
	*n = nt;
	unw_destroy_addr_space(w.as);
	es_view_free(w.own_view);
	es_cache_free(w.own_cache);
	free(w.maps);
	return 0;
}

int stk_app_thread(const struct snap_thread *threads, int n, int pid)
{
	int main_thread = -1, other = -1;

	for (int i = 0; i < n; i++) {
		if (threads[i].progress_thread)
			continue;
		if (threads[i].mpi_call)
			return i;
		if (threads[i].tid == pid)
			main_thread = i;
		else if (other < 0)
			other = i;
	}
	return main_thread >= 0 ? main_thread : other;
}

/* ---- the collector's symbolizer: elfsym objects + dwlines ---- */

struct stk_es {
	const struct es_view *view;
	struct dl_cache *lines;
};

static int es_symbolize(void *ctx, struct tgt *t, uint64_t pc,
			struct stk_sym *out)
{
	struct stk_es *e = ctx;
	const struct es_object *obj = es_proc_object_at(e->view, pc);
	const struct dl_table *tbl;
	struct dl_loc loc;

	(void)t;
	if (!obj)
		return -MD_E_NOSYM;
	out->object = obj->path;
	if (e->lines &&
	    dl_cache_get(e->lines, obj->path, obj->img, &tbl) == 0 &&
	    dl_lookup(tbl, pc - obj->bias, &loc) == 0) {
		out->func = loc.func;
		out->file = loc.file;
		out->line = loc.line;
	}
	if (!out->func && obj->img)
		es_addr_to_name(obj->img, pc - obj->bias, &out->func, NULL);
	return 0;
}

static void set_position(struct snap_rank *r, const struct snap_thread *th)
{
	int f = th->user_frame >= 0 ? th->user_frame : th->mpi_frame;

	r->mpi_call = th->mpi_call;
	if (f < 0)
		return;
	r->call_func = th->frames[f].func;
	r->call_file = th->frames[f].file;
	r->call_line = th->frames[f].line;
}

int stk_read_all(struct tgt *t, const struct es_view *view,
		 struct dl_cache *lines, struct snap *s, struct snap_rank *r)
{
	struct stk_es e = { view, lines };
	struct stk_opts o = { .symbolize = view ? es_symbolize : NULL,
			      .ctx = &e,
			      .view = view };
	struct snap_thread *th = NULL;
	int n = 0, app, rc;

	rc = stk_process(t, s, &o, &th, &n);
	if (rc < 0)
		return rc;
	r->threads = th;
	r->nthreads = n;
	app = stk_app_thread(th, n, tgt_pid(t));
	if (app >= 0)
		set_position(r, &th[app]);
	return 0;
}
