/*
 * stacks.h - the stack of every thread of a stopped process, with
 * libunwind over the target's ops table, into snapshot threads: frames, the MPI call each
 * thread is in (mpicalls.h), and the rank's call site.
 */
#ifndef MD_STACKS_H
#define MD_STACKS_H

#include <stdint.h>

#include "dwlines.h"
#include "elfsym.h"
#include "snap.h"
#include "target.h"

#define STK_MAX_FRAMES 128

/* What a symbolizer knows about one address; strings are borrowed until
 * the next call and interned by the caller.  NULL / 0 when unknown. */
struct stk_sym {
	const char *func;
	const char *file;
	int line;
	const char *object;	/* path of the loaded object */
};

/*
 * Describe the code address pc of process t.  pc is already the address
 * to look up: a caller frame's return address minus 1.  Returns 0 with
 * what it found, or -MD_E_NOSYM when it knows nothing; libunwind's
 * procedure name and the maps give the fallback.  Must not print.
 */
typedef int (*stk_symbolize_fn)(void *ctx, struct tgt *t, uint64_t pc,
				 struct stk_sym *out);

struct stk_opts {
	stk_symbolize_fn symbolize;	/* NULL: libunwind names only */
	void *ctx;
	int max_frames;			/* 0: STK_MAX_FRAMES */
	/* The process's objects (borrowed): their .eh_frame_hdr tables
	 * and symbols serve the unwinder.  NULL: a view is built from the
	 * target's maps for the walk. */
	const struct es_view *view;
};

/*
 * Walk every thread of t, which must be attached (tgt_attach), with one
 * libunwind address space for the process.  Strings are interned in s.
 * *threads (heap array of *n entries, the caller's: free() it, or hand it
 * to a snap_rank) is in tgt_threads order; each thread has its frames
 * (innermost first, at most max_frames), mpi_call, mpi_frame, user_frame
 * and progress_thread.  A frame's name comes from the symbolizer; only
 * when it knows no object at pc from libunwind (nearest symbol).  A thread whose registers cannot be read keeps 0
 * frames (warned once).  Returns 0, or -MD_E_INPUT if t is not attached
 * (reported), or the code of tgt_threads.
 */
int stk_process(struct tgt *t, struct snap *s, const struct stk_opts *o,
		struct snap_thread **threads, int *n);

/*
 * The application thread of a process: the one in an MPI call that is
 * not a runtime helper, else the main thread (tid == pid), else the
 * first non-helper.  -1 if there is none.
 */
int stk_app_thread(const struct snap_thread *threads, int n, int pid);

/*
 * For the collector: stk_process with a symbolizer over view (objects
 * and ELF names) and lines (function, file, line; may be NULL), then
 * r->threads, r->nthreads and the rank's position (r->mpi_call,
 * call_func, call_file, call_line from the application thread's user
 * frame, or its MPI frame when no user frame is known).  view and lines
 * are borrowed.  Returns 0, or the code of stk_process.
 */
int stk_read_all(struct tgt *t, const struct es_view *view,
		 struct dl_cache *lines, struct snap *s, struct snap_rank *r);

#endif /* MD_STACKS_H */
