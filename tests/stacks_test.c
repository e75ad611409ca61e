/* stacks_test.c - stacks of a forked child blocked in a known function. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/stacks.h"
#include "md.h"
#include "support/tracee.h"

static int find_func(const struct snap_thread *th, const char *name)
{
	for (int i = 0; i < th->nframes; i++)
		if (th->frames[i].func && !strcmp(th->frames[i].func, name))
			return i;
	return -1;
}

static const struct snap_thread *thread_of(const struct snap_thread *th,
					   int n, int tid)
{
	for (int i = 0; i < n; i++)
		if (th[i].tid == tid)
			return &th[i];
	return NULL;
}

static void free_threads(struct snap_thread *th, int n)
{
	for (int i = 0; i < n; i++)
		free(th[i].frames);
	free(th);
}

Test(stacks, main_thread_of_child_shows_known_function_and_caller)
{
	struct stk_opts o = { 0 };
	struct snap_thread *th = NULL;
	const struct snap_thread *m;
	struct snap *s = snap_new();
	struct tr_child c;
	struct tgt *t;
	int n = 0, k;

	cr_assert_eq(tr_child_start(&c, 2), 0);
	cr_assert_eq(tgt_attach(c.pid, &t), 0);
	cr_assert_eq(stk_process(t, s, &o, &th, &n), 0);
	tgt_free(t);
	cr_expect_eq(n, 3);
	m = thread_of(th, n, c.pid);
	cr_assert_not_null(m);
	k = find_func(m, "tr_known_wait");
	cr_expect_geq(k, 1, "tr_known_wait not above the read in libc");
	/* child_main is inlined into its one caller. */
	cr_expect_gt(find_func(m, "tr_child_start"), k);
	/* The innermost frame is the read system call, in libc. */
	cr_expect_not_null(m->frames[0].object);
	cr_expect_not_null(strstr(m->frames[0].object, "libc"),
			   "frame 0 in %s", m->frames[0].object);
	cr_expect_null(m->mpi_call);
	cr_expect_eq(m->user_frame, k, "user frame %d, want %d", m->user_frame,
		     k);
	cr_expect(!m->progress_thread);
	cr_expect_eq(stk_app_thread(th, n, c.pid), (int)(m - th));
	free_threads(th, n);
	snap_free(s);
	cr_expect_geq(tr_child_ping(&c, 5000), 0, "child must run again");
	tr_child_end(&c);
}

Test(stacks, other_threads_show_their_start_function)
{
	struct stk_opts o = { 0 };
	struct snap_thread *th = NULL;
	struct snap *s = snap_new();
	struct tr_child c;
	struct tgt *t;
	int n = 0, seen = 0;

	cr_assert_eq(tr_child_start(&c, 2), 0);
	cr_assert_eq(tgt_attach(c.pid, &t), 0);
	cr_assert_eq(stk_process(t, s, &o, &th, &n), 0);
	tgt_free(t);
	for (int i = 0; i < n; i++)
		if (th[i].tid != c.pid && find_func(&th[i], "sleeper") >= 0)
			seen++;
	cr_expect_eq(seen, 2);
	free_threads(th, n);
	snap_free(s);
	tr_child_end(&c);
}

Test(stacks, frames_are_capped_at_max_frames)
{
	struct stk_opts o = { .max_frames = 2 };
	struct snap_thread *th = NULL;
	struct snap *s = snap_new();
	struct tr_child c;
	struct tgt *t;
	int n = 0;

	cr_assert_eq(tr_child_start(&c, 0), 0);
	cr_assert_eq(tgt_attach(c.pid, &t), 0);
	cr_assert_eq(stk_process(t, s, &o, &th, &n), 0);
	tgt_free(t);
	cr_assert_eq(n, 1);
	cr_expect_eq(th[0].nframes, 2);
	free_threads(th, n);
	snap_free(s);
	tr_child_end(&c);
}

Test(stacks, refuses_a_target_that_is_not_attached)
{
	struct stk_opts o = { 0 };
	struct snap_thread *th = NULL;
	struct snap *s = snap_new();
	struct tgt *t = tgt_fake_new(3);
	struct tr_capture cap;
	char *err;
	int n = 0, r;

	tr_stderr_begin(&cap);
	r = stk_process(t, s, &o, &th, &n);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_INPUT);
	cr_expect_not_null(strstr(err, "not attached"), "stderr: %s", err);
	free(err);
	tgt_free(t);
	snap_free(s);
}

/* ---- the walker on the fake target: a copy of our own memory ---- */

#ifdef __x86_64__
/* Copy [a, a+len) of our own memory into the fake.  Through the kernel,
 * not memcpy: under ASan the stack and globals hold poisoned redzones. */
static void add_own_region(struct tgt *t, uint64_t a, size_t len)
{
	unsigned char *buf = xmalloc(len);
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)a, len };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	    (ssize_t)len)
		tgt_fake_add_region(t, a, buf, len);
	free(buf);
}

/* Every readable file mapping and the stack of this process, copied into
 * a fake at the same addresses, with the maps text and our exe. */
static struct tgt *fake_of_self(const ucontext_t *uc)
{
	struct tgt *t = tgt_fake_new_attached(getpid());
	static const int greg[17] = { REG_RAX, REG_RDX, REG_RCX, REG_RBX,
				      REG_RSI, REG_RDI, REG_RBP, REG_RSP,
				      REG_R8,  REG_R9,	REG_R10, REG_R11,
				      REG_R12, REG_R13, REG_R14, REG_R15,
				      REG_RIP };
	struct tgt_regs regs = { { 0 } };
	char line[4096], path[4096], exe[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	char *maps = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&maps, &len);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int tid = (int)gettid();

	cr_assert(f && m && n > 0);
	exe[n] = '\0';
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char perm[8];

		fputs(line, m);
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095[^\n]", &a, &b,
			   perm, path) < 3 || perm[0] != 'r')
			continue;
		if (path[0] == '/' || !strcmp(path, "[stack]"))
			add_own_region(t, a, (size_t)(b - a));
	}
	fclose(f);
	fclose(m);
	tgt_fake_set_maps(t, maps);
	free(maps);
	tgt_fake_set_exe(t, exe);
	tgt_fake_set_threads(t, &tid, 1);
	for (int i = 0; i < 17; i++)
		regs.r[i] = (uint64_t)uc->uc_mcontext.gregs[greg[i]];
	tgt_fake_set_regs(t, tid, &regs);
	return t;
}

static volatile int fake_depth_sink;

/* Capture our registers and memory here, and unwind the copy. */
static __attribute__((noinline)) int fake_depth3(struct snap_thread **th,
						 struct snap *s)
{
	struct stk_opts o = { 0 };
	ucontext_t uc;
	struct tgt *t;
	int n = 0;

	cr_assert_eq(getcontext(&uc), 0);
	t = fake_of_self(&uc);
	cr_assert_eq(stk_process(t, s, &o, th, &n), 0);
	tgt_free(t);
	return n + fake_depth_sink;
}

static __attribute__((noinline)) int fake_depth2(struct snap_thread **th,
						 struct snap *s)
{
	return fake_depth3(th, s) + fake_depth_sink;
}

static __attribute__((noinline)) int fake_depth1(struct snap_thread **th,
						 struct snap *s)
{
	return fake_depth2(th, s) + fake_depth_sink;
}

Test(stacks, unwinds_a_fake_target_through_the_ops_table)
{
	struct snap_thread *th = NULL;
	struct snap *s = snap_new();
	int n, k3, k2, k1;

	n = fake_depth1(&th, s);
	cr_assert_eq(n, 1);
	k3 = find_func(&th[0], "fake_depth3");
	k2 = find_func(&th[0], "fake_depth2");
	k1 = find_func(&th[0], "fake_depth1");
	cr_expect_eq(k3, 0, "fake_depth3 at frame %d", k3);
	cr_expect_gt(k2, k3);
	cr_expect_gt(k1, k2);
	cr_expect_gt(find_func(&th[0], "__libc_start_main"), k1,
		     "unwound to the start of the process");
	free_threads(th, n);
	snap_free(s);
}
#else
Test(stacks, unwinds_a_fake_target_through_the_ops_table)
{
	cr_skip_test("the register copy from a ucontext is written for x86-64 only");
}
#endif

Test(stacks, read_all_gives_file_and_line_of_the_call_site)
{
	struct snap *s = snap_new();
	struct snap_rank r = { 0 };
	struct es_cache *ec = es_cache_new();
	struct dl_cache *lines = dl_cache_new(true);
	struct es_view *v = NULL;
	const struct snap_thread *m;
	struct tr_child c;
	struct tgt *t;
	int k;

	cr_assert_eq(tr_child_start(&c, 1), 0);
	cr_assert_eq(tgt_attach(c.pid, &t), 0);
	cr_assert_eq(es_view_from_maps(ec, tgt_maps_text(t), tgt_exe(t), &v),
		     0);
	cr_assert_eq(stk_read_all(t, v, lines, s, &r), 0);
	tgt_free(t);
	cr_assert_eq(r.nthreads, 2);
	m = thread_of(r.threads, r.nthreads, c.pid);
	cr_assert_not_null(m);
	k = find_func(m, "tr_known_wait");
	cr_assert_geq(k, 0);
	cr_expect_not_null(m->frames[k].file);
	cr_expect_not_null(strstr(m->frames[k].file ? m->frames[k].file : "",
				  "tracee.c"));
	cr_expect_gt(m->frames[k].line, 0);
	/* The rank's position is the user frame: tr_known_wait itself. */
	cr_expect_null(r.mpi_call);
	cr_expect_str_eq(r.call_func, "tr_known_wait");
	cr_expect_eq(r.call_line, m->frames[k].line);
	free_threads(r.threads, r.nthreads);
	es_view_free(v);
	dl_cache_free(lines);
	es_cache_free(ec);
	snap_free(s);
	tr_child_end(&c);
}

/* Frames before the first one in libcriterion, where libunwind's own
 * search loses its way (it finds no text segment for the library and
 * guesses from the frame pointer, skipping the test's _jmp frame). */
static int before_criterion(const struct snap_thread *th)
{
	for (int k = 0; k < th->nframes; k++)
		if (th->frames[k].object &&
		    strstr(th->frames[k].object, "libcriterion"))
			return k;
	return th->nframes;
}

/* The view's .eh_frame_hdr tables must unwind as libunwind's own search
 * through /proc/PID/maps does where that one is right, and get through
 * libcriterion up to __libc_start_main. */
Test(stacks, unwinding_with_the_views_tables_gives_the_same_frames)
{
	struct es_cache *ec = es_cache_new();
	struct es_view *v = NULL;
	struct stk_opts plain = { 0 }, viewed = { 0 };
	struct snap_thread *a = NULL, *b = NULL;
	struct snap *s = snap_new();
	struct tr_child c;
	struct tgt *t;
	int na = 0, nb = 0;

	cr_assert_eq(tr_child_start(&c, 2), 0);
	cr_assert_eq(tgt_attach(c.pid, &t), 0);
	cr_assert_eq(es_view_from_maps(ec, tgt_maps_text(t), tgt_exe(t), &v),
		     0);
	viewed.view = v;
	cr_assert_eq(stk_process(t, s, &plain, &a, &na), 0);
	cr_assert_eq(stk_process(t, s, &viewed, &b, &nb), 0);
	tgt_free(t);
	cr_assert_eq(na, nb);
	for (int i = 0; i < na; i++) {
		int same = before_criterion(&a[i]);

		cr_expect_gt(b[i].nframes, 2, "thread %d", b[i].tid);
		cr_assert_geq(b[i].nframes, same, "thread %d", a[i].tid);
		for (int k = 0; k < same; k++)
			cr_expect_eq(a[i].frames[k].pc, b[i].frames[k].pc,
				     "thread %d frame %d", a[i].tid, k);
		if (b[i].tid == c.pid)
			cr_expect_geq(find_func(&b[i], "__libc_start_main"), 0,
				      "main thread unwound to its start");
	}
	free_threads(a, na);
	free_threads(b, nb);
	es_view_free(v);
	es_cache_free(ec);
	snap_free(s);
	tr_child_end(&c);
}

/* A child that calls clock_gettime (the vdso's) without end. */
static __attribute__((noinline)) void vdso_spin(void)
{
	struct timespec ts;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		__asm__ volatile("" : : "r"(&ts) : "memory");
	}
}

/* The [vdso] mapping of a maps text; false if none. */
static bool vdso_range(const char *maps, uint64_t *lo, uint64_t *hi)
{
	for (const char *l = maps; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *nl = strchr(l, '\n');
		const char *v = strstr(l, "[vdso]");
		unsigned long long a, b;

		if (v && (!nl || v < nl) && sscanf(l, "%llx-%llx", &a, &b) == 2) {
			*lo = a;
			*hi = b;
			return true;
		}
	}
	return false;
}

/* A thread stopped in the vdso (no file, no frame pointer) unwinds to
 * its caller through the vdso's own .eh_frame (elfsym_maps.c). */
Test(stacks, thread_stopped_in_the_vdso_unwinds_to_its_caller)
{
	struct es_cache *ec = es_cache_new();
	struct dl_cache *lines = dl_cache_new(true);
	struct snap *s = snap_new();
	bool caught = false;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		vdso_spin();
		_exit(0);
	}
	for (int i = 0; i < 400 && !caught; i++) {
		struct snap_rank r = { 0 };
		struct es_view *v = NULL;
		uint64_t lo, hi;
		struct tgt *t;

		usleep(1000);
		cr_assert_eq(tgt_attach(pid, &t), 0);
		cr_assert(vdso_range(tgt_maps_text(t), &lo, &hi));
		cr_assert_eq(es_view_from_maps(ec, tgt_maps_text(t), tgt_exe(t),
					       &v), 0);
		cr_assert_eq(stk_read_all(t, v, lines, s, &r), 0);
		tgt_free(t);
		if (r.nthreads == 1 && r.threads[0].nframes &&
		    r.threads[0].frames[0].pc >= lo &&
		    r.threads[0].frames[0].pc < hi) {
			caught = true;
			cr_expect_str_eq(r.threads[0].frames[0].object ?
					 r.threads[0].frames[0].object : "",
					 "[vdso]");
			cr_expect_geq(find_func(&r.threads[0], "vdso_spin"), 1,
				      "stopped in the vdso at %#llx: its caller "
				      "is not on the stack",
				      (unsigned long long)
					      r.threads[0].frames[0].pc);
		}
		free_threads(r.threads, r.nthreads);
		es_view_free(v);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect(caught, "the child was never stopped in the vdso");
	dl_cache_free(lines);
	es_cache_free(ec);
	snap_free(s);
}

/* ---- e2e_stacks: ranks of a real Debian Open MPI job ---- */

static struct tr_job job;

static void job_fini(void)
{
	tr_job_end(&job);
}

/* Attach rank pid, read its stacks with symbols and lines, detach. */
static void read_rank(pid_t pid, struct snap *s, struct es_cache *ec,
		      struct dl_cache *lines, struct snap_rank *r)
{
	struct es_view *v = NULL;
	struct tgt *t;

	cr_assert_eq(tgt_attach(pid, &t), 0);
	cr_assert_eq(es_view_from_maps(ec, tgt_maps_text(t), tgt_exe(t), &v),
		     0);
	cr_assert_eq(stk_read_all(t, v, lines, s, r), 0);
	tgt_free(t);
	es_view_free(v);
}

Test(e2e_stacks, ranks_show_recv_and_finalize_at_the_stuck_lines,
     .fini = job_fini, .timeout = 120)
{
	const char *src = "samples/nosender.c", *why;
	int recv_line = tr_line_of(src, "MPI_Recv("),
	    fin_line = tr_line_of(src, "MPI_Finalize(); /* STUCK */");
	struct es_cache *ec = es_cache_new();
	struct dl_cache *lines = dl_cache_new(true);
	struct snap *s = snap_new();
	struct snap_rank r[3] = { 0 };
	int helpers = 0;

	why = tr_job_start(&job, src, 3);
	if (why)
		cr_skip_test("%s", why);
	/* The ranks were forked in rank order: pids ascend with ranks.  A
	 * rank prints its marker right before its call: under load it may
	 * not be in it yet, so it is read again (2 s at most). */
	for (int i = 0; i < 3; i++) {
		const char *want = i ? "MPI_Finalize" : "MPI_Recv";

		read_rank(job.ranks[i], s, ec, lines, &r[i]);
		for (int k = 0; k < 100 && (!r[i].mpi_call ||
					   strcmp(r[i].mpi_call, want)); k++) {
			free_threads(r[i].threads, r[i].nthreads);
			memset(&r[i], 0, sizeof(r[i]));
			usleep(20000);
			read_rank(job.ranks[i], s, ec, lines, &r[i]);
		}
	}
	cr_expect_str_eq(r[0].mpi_call, "MPI_Recv");
	cr_expect_str_eq(r[0].call_func, "main");
	cr_expect_eq(r[0].call_line, recv_line);
	cr_expect_not_null(strstr(r[0].call_file ? r[0].call_file : "",
				  "nosender.c"));
	for (int i = 1; i < 3; i++) {
		cr_expect_str_eq(r[i].mpi_call, "MPI_Finalize", "rank %d", i);
		cr_expect_eq(r[i].call_line, fin_line, "rank %d", i);
	}
	for (int i = 0; i < r[0].nthreads; i++)
		helpers += r[0].threads[i].progress_thread;
	cr_expect_geq(helpers, 1, "opal/pmix progress threads");
	cr_expect_eq(helpers, r[0].nthreads - 1);
	for (int i = 0; i < 3; i++) {
		cr_expect_neq(tr_proc_state(job.ranks[i]), 't',
			      "rank %d left stopped", i);
		free_threads(r[i].threads, r[i].nthreads);
	}
	snap_free(s);
	dl_cache_free(lines);
	es_cache_free(ec);
}
