/*
 * stacks.c - thread stacks with libunwind-ptrace (see stacks.h).
 *
 * libunwind's _UPT accessors do their own PTRACE_PEEK* on the stopped
 * threads: this is the one place outside target.c where ptrace is used,
 * through libunwind, on threads that target.c has stopped.
 */
#include "stacks.h"

#include <inttypes.h>
#include <libunwind-ptrace.h>
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
	struct stk_map *maps;
	int nmaps;
	bool warned;
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

static const char *object_at(const struct stk_walk *w, uint64_t pc)
{
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
	if (!f->object)
		f->object = object_at(w, lookup_pc);
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
}

static void walk_thread(struct stk_walk *w, int tid, struct snap_thread *th)
{
	int max = w->o->max_frames > 0 ? w->o->max_frames : STK_MAX_FRAMES;
	void *upt = _UPT_create(tid);
	bool exact = true;	/* innermost, or after a signal frame */
	unw_cursor_t c;
	int r, keep;

	th->tid = tid;
	th->mpi_frame = th->user_frame = -1;
	th->frames = xcalloc((size_t)max, sizeof(*th->frames));
	r = upt ? unw_init_remote(&c, w->as, upt) : -UNW_ENOMEM;
	if (r < 0 && !w->warned) {
		w->warned = true;
		md_warn("unw_init_remote for thread %d of pid %d: %s", tid,
			tgt_pid(w->t), unw_strerror(r));
	}
	while (r >= 0 && th->nframes < max) {
		unw_word_t ip = 0;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		/* A return address points after the call: look up the
		 * call's own line. */
		describe(w, &c, ip, exact ? ip : ip - 1,
			 &th->frames[th->nframes++]);
		exact = unw_is_signal_frame(&c) > 0;
		if (unw_step(&c) <= 0)
			break;
	}
	if (upt)
		_UPT_destroy(upt);
	keep = th->nframes ? th->nframes : 1;
	th->frames = xrealloc(th->frames, (size_t)keep * sizeof(*th->frames));
	classify(w->s, th);
}

int stk_process(struct tgt *t, struct snap *s, const struct stk_opts *o,
		struct snap_thread **threads, int *n)
{
	struct stk_walk w = { .t = t, .s = s, .o = o };
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
	parse_maps(&w);
	/* One address space per process: libunwind caches unwind info by
	 * address, and libraries sit elsewhere in every rank (ASLR). */
	w.as = unw_create_addr_space(&_UPT_accessors, 0);
	unw_set_caching_policy(w.as, UNW_CACHE_GLOBAL);
	*threads = xcalloc((size_t)(nt ? nt : 1), sizeof(**threads));
	for (int i = 0; i < nt; i++)
		walk_thread(&w, tids[i], &(*threads)[i]);
	*n = nt;
	unw_destroy_addr_space(w.as);
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
			      .ctx = &e };
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
