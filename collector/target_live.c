/*
 * target_live.c - the live target: ptrace, process_vm_readv and /proc of
 * a real process.  See target.h for the contracts.
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "target_int.h"

/* One seized thread and the signal to give back when it runs again. */
struct live_thr {
	int tid;
	int sig;
	int job_sig;	/* the signal of the group-stop it was in, or 0 */
	bool stopped;	/* its stop has been waited for */
};

struct live {
	int pid;
	bool attached;
	int n, cap;
	struct live_thr *thr;
};

/* ---- attaching ---- */

static bool live_has(const struct live *l, int tid)
{
	for (int i = 0; i < l->n; i++)
		if (l->thr[i].tid == tid)
			return true;
	return false;
}

static void live_add(struct live *l, int tid, bool stopped)
{
	if (l->n == l->cap) {
		l->cap = l->cap * 2 + 8;
		l->thr = xrealloc(l->thr, (size_t)l->cap * sizeof(*l->thr));
	}
	l->thr[l->n++] = (struct live_thr){ .tid = tid, .stopped = stopped };
}

/* The unstopped threads, for tgt_unstopped. */
static void publish_unstopped(struct tgt *t, struct live *l)
{
	int *tids = xmalloc((size_t)(l->n ? l->n : 1) * sizeof(int)), k = 0;

	for (int i = 0; i < l->n; i++)
		if (!l->thr[i].stopped)
			tids[k++] = l->thr[i].tid;
	tgt_set_unstopped(t, tids, k);
	free(tids);
}

/*
 * Let the stopped threads go; a thread not stopped yet is asked once
 * more (WNOHANG) and let go if it has stopped meanwhile, else kept:
 * PTRACE_DETACH needs a stopped tracee.
 */
static void live_detach_all(struct live *l)
{
	int kept = 0, st;

	for (int i = 0; i < l->n; i++) {
		struct live_thr *th = &l->thr[i];

		if (!th->stopped) {
			pid_t got = waitpid(th->tid, &st, __WALL | WNOHANG);

			if (got == 0) {
				l->thr[kept++] = *th;
				continue;
			}
			if (got < 0 || !WIFSTOPPED(st))
				continue;	/* gone, or no longer ours */
			tgt_stop_signals(st, &th->sig, &th->job_sig);
		}
		/* ESRCH: the thread died meanwhile, nothing to restore. */
		ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->sig);
	}
	l->n = kept;
	l->attached = kept > 0;
}

/*
 * Seize and interrupt the threads not seen yet.  Returns the number of
 * new threads, or a negated code with errno of the failing call kept.
 */
static int seize_new(struct live *l, int *failed_tid)
{
	int *tids = NULL, n = 0, added = 0, r;

	r = tgt_proc_tids(l->pid, &tids, &n);
	if (r < 0)
		return r;
	for (int i = 0; i < n; i++) {
		if (live_has(l, tids[i]))
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) < 0) {
			if (errno == ESRCH)
				continue;	/* exited meanwhile */
			/* Ours already: a thread that did not stop in an
			 * earlier look; its interrupt is still pending. */
			if (errno == EPERM &&
			    tgt_tracer_of(l->pid, tids[i]) == getpid()) {
				live_add(l, tids[i], false);
				added++;
				continue;
			}
			*failed_tid = tids[i];
			r = errno == EPERM ? -MD_E_PERM : -MD_E_SYS;
			break;
		}
		live_add(l, tids[i], false);
		if (ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) < 0 &&
		    errno != ESRCH) {
			/* No stop will come: do not wait for one. */
			l->thr[l->n - 1].stopped = true;
			*failed_tid = tids[i];
			r = -MD_E_SYS;
			break;
		}
		added++;
	}
	free(tids);
	return r < 0 ? r : added;
}

enum wait_result { W_STOPPED, W_GONE, W_PENDING };

/*
 * Has the thread stopped?  A signal-delivery-stop is a stop too, but its
 * signal must be given back on detach.
 */
static enum wait_result poll_stop(struct live_thr *th)
{
	pid_t got;
	int st;

	do
		got = waitpid(th->tid, &st, __WALL | WNOHANG);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return W_GONE;
	if (got == 0)
		return W_PENDING;
	if (!WIFSTOPPED(st))
		return W_GONE;	/* exited or killed: reaped */
	/* A thread of a process stopped by SIGSTOP, SIGTSTP, SIGTTIN or
	 * SIGTTOU reports that group-stop with its signal, and stays in it
	 * when let go. */
	tgt_stop_signals(st, &th->sig, &th->job_sig);
	return W_STOPPED;
}

/* The signal the process was stopped by before we came, or 0. */
static int job_stop_signal(const struct live *l)
{
	for (int i = 0; i < l->n; i++)
		if (l->thr[i].job_sig)
			return l->thr[i].job_sig;
	return 0;
}

/*
 * Wait until deadline for the stops of the threads not stopped yet, all
 * of them at once.  Polled: a thread in uninterruptible sleep (NFS, a
 * driver) stops only when it wakes, and we must not hang on it.  Threads
 * gone are dropped.  Returns the number still not stopped.
 */
static int wait_all(struct live *l, long long deadline)
{
	useconds_t nap = 0;
	int pending;

	for (;;) {
		int kept = 0;

		pending = 0;
		for (int i = 0; i < l->n; i++) {
			struct live_thr *th = &l->thr[i];
			enum wait_result w = W_STOPPED;

			if (!th->stopped)
				w = poll_stop(th);
			if (w == W_GONE)
				continue;
			th->stopped = w == W_STOPPED;
			pending += w == W_PENDING;
			l->thr[kept++] = *th;
		}
		l->n = kept;
		if (!pending || md_now_ns() > deadline)
			return pending;
		usleep(nap);
		nap = nap < 8000 ? nap + 100 : nap;
	}
}

static int count_stopped(const struct live *l)
{
	int k = 0;

	for (int i = 0; i < l->n; i++)
		k += l->thr[i].stopped;
	return k;
}

static int first_unstopped(const struct live *l)
{
	for (int i = 0; i < l->n; i++)
		if (!l->thr[i].stopped)
			return l->thr[i].tid;
	return 0;
}

/* Undo a failed attach; reports what happened.  Returns r. */
static int attach_failed(struct tgt *t, struct live *l, int r, int failed,
			 int saved, int stuck)
{
	/* PTRACE_DETACH needs a stopped tracee: collect the stops of the
	 * threads seized first (unless they would not come). */
	if (!stuck)
		wait_all(l, md_now_ns() + TGT_STOP_TIMEOUT_NS);
	live_detach_all(l);
	publish_unstopped(t, l);
	tgt_set_attached(t, false);
	if (stuck)
		md_error("thread %d of pid %d did not stop within %lld s "
			 "(uninterruptible sleep?): try again later",
			 stuck, l->pid, TGT_STOP_TIMEOUT_NS / 1000000000LL);
	else if (r == -MD_E_SYS)
		md_error("ptrace(PTRACE_SEIZE/INTERRUPT, %d) in pid %d: %s",
			 failed, l->pid, strerror(saved));
	else if (r == -MD_E_GONE)
		md_info("pid %d exited while attaching", l->pid);
	else if (r == -MD_E_PERM) {
		char call[64];

		snprintf(call, sizeof(call), "ptrace(PTRACE_SEIZE, %d)",
			 l->pid);
		tgt_report_perm(t, call, EPERM);
	}
	errno = saved;
	return r;
}

static int live_attach_wait(struct tgt *t, long long deadline)
{
	struct live *l = tgt_impl(t);
	int r = 0, failed = l->pid, rounds = 0, pending;

	if (!l->attached)
		return -MD_E_GONE;
	/* Threads may appear while we stop the others: seize again until
	 * no new one shows up. */
	do {
		pending = wait_all(l, deadline);
		if (pending && md_now_ns() > deadline)
			break;
		r = seize_new(l, &failed);
	} while (r > 0 && ++rounds < 1000);
	if (r < 0)
		return attach_failed(t, l, r, failed, errno, 0);
	if (count_stopped(l) == 0)
		return attach_failed(t, l, l->n ? -MD_E_SYS : -MD_E_GONE,
				     failed, errno, first_unstopped(l));
	publish_unstopped(t, l);
	tgt_set_stopped_by(t, job_stop_signal(l));
	if (pending)
		md_warn("thread %d of pid %d did not stop within %lld s "
			"(uninterruptible sleep?): its stack is left out and it "
			"is let go once it stops", first_unstopped(l), l->pid,
			TGT_STOP_TIMEOUT_NS / 1000000000LL);
	return 0;
}

/* ---- live ops ---- */

static int peek_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;
	uint64_t start = addr & ~(uint64_t)7;
	size_t done = 0;

	/* Word by word as strace's umoven: the first and last words may be
	 * partial. */
	for (uint64_t a = start; done < len; a += 8) {
		size_t skip = a < addr ? (size_t)(addr - a) : 0;
		size_t take = 8 - skip;
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tgt_pid(t), (void *)a, NULL);
		if (errno)
			return -1;
		if (take > len - done)
			take = len - done;
		memcpy(out + done, (unsigned char *)&w + skip, take);
		done += take;
	}
	return 0;
}

static int vm_read(int pid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done),
					len - done };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EFAULT;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static int sort_errno(struct tgt *t, const char *call, uint64_t addr)
{
	int e = errno;

	switch (e) {
	case ESRCH:
		return -MD_E_GONE;
	case EFAULT:
	case EIO:
		return -MD_E_FAULT;
	case EPERM:
	case EACCES:
		tgt_report_perm(t, call, e);
		return -MD_E_PERM;
	default:
		md_error("%s(%d, 0x%llx): %s", call, tgt_pid(t),
			 (unsigned long long)addr, strerror(e));
		return -MD_E_SYS;
	}
}

static int live_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	if (vm_read(tgt_pid(t), addr, buf, len) == 0)
		return 0;
	/* process_vm_readv may be missing or filtered (ENOSYS, EPERM under
	 * seccomp); an attached tracer can still peek. */
	if (tgt_is_attached(t) && errno != ESRCH && errno != EFAULT) {
		if (peek_read(t, addr, buf, len) == 0)
			return 0;
		return sort_errno(t, "ptrace(PTRACE_PEEKDATA)", addr);
	}
	if (errno == ESRCH && tgt_pid_exists(tgt_pid(t)))
		errno = EPERM;	/* a zombie or a vanished mm */
	return sort_errno(t, "process_vm_readv", addr);
}

static int live_maps(struct tgt *t, char **text)
{
	char path[64];
	int e;

	snprintf(path, sizeof(path), "/proc/%d/maps", tgt_pid(t));
	*text = tgt_slurp(path);
	if (*text)
		return 0;
	e = errno;
	if (!tgt_pid_exists(tgt_pid(t)))
		return -MD_E_GONE;
	md_error("open %s: %s", path, strerror(e));
	return e == EACCES || e == EPERM ? -MD_E_PERM : -MD_E_SYS;
}

static int live_threads(struct tgt *t, int **tids, int *n)
{
	struct live *l = tgt_impl(t);
	int k = 0;

	if (!tgt_is_attached(t))
		return tgt_proc_tids(tgt_pid(t), tids, n);
	*tids = xmalloc((size_t)(l->n ? l->n : 1) * sizeof(**tids));
	for (int i = 0; i < l->n; i++)
		if (l->thr[i].stopped)
			(*tids)[k++] = l->thr[i].tid;
	*n = k;
	return 0;
}

static int live_exe(struct tgt *t, char **path)
{
	return tgt_proc_exe(tgt_pid(t), path);
}

static int live_auxv(struct tgt *t, uint64_t type, uint64_t *val)
{
	char *text;
	size_t len;
	uint64_t e[2];
	int r = tgt_proc_strings(tgt_pid(t), "auxv", &text, &len);

	if (r < 0)
		return r;
	r = -MD_E_NOSYM;
	for (size_t off = 0; off + sizeof(e) <= len; off += sizeof(e)) {
		memcpy(e, text + off, sizeof(e));
		if (e[0] == 0)	/* AT_NULL */
			break;
		if (e[0] == type) {
			*val = e[1];
			r = 0;
			break;
		}
	}
	free(text);
	return r;
}

/* ptrace's registers in libunwind's numbering (see struct tgt_regs). */
static int live_regs(struct tgt *t, int tid, struct tgt_regs *out)
{
#if defined(__x86_64__)
	struct user_regs_struct u;
	struct iovec io = { &u, sizeof(u) };
	const unsigned long long *map[17] = {
		&u.rax, &u.rdx, &u.rcx, &u.rbx, &u.rsi, &u.rdi, &u.rbp,
		&u.rsp, &u.r8,	&u.r9,	&u.r10, &u.r11, &u.r12, &u.r13,
		&u.r14, &u.r15, &u.rip,
	};
#elif defined(__aarch64__)
	struct user_regs_struct u;
	struct iovec io = { &u, sizeof(u) };
#endif

	(void)t;
#if defined(__x86_64__) || defined(__aarch64__)
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRSTATUS, &io) < 0)
		return errno == ESRCH ? -MD_E_GONE : -MD_E_SYS;
#endif
#if defined(__x86_64__)
	for (int i = 0; i < 17; i++)
		out->r[i] = *map[i];
	return 0;
#elif defined(__aarch64__)
	for (int i = 0; i < 31; i++)
		out->r[i] = u.regs[i];
	out->r[31] = u.sp;
	out->r[32] = u.pc;
	return 0;
#else
	(void)tid;
	(void)out;
	return -MD_E_SYS;
#endif
}

static int live_stat(struct tgt *t, struct tgt_stat *st)
{
	return tgt_proc_stat(tgt_pid(t), st);
}

static int live_children(struct tgt *t, int **pids, int *n)
{
	return tgt_proc_children(tgt_pid(t), pids, n);
}

static int live_environ(struct tgt *t, char **text, size_t *len)
{
	return tgt_proc_strings(tgt_pid(t), "environ", text, len);
}

static int live_open_other(struct tgt *t, int pid, struct tgt **out)
{
	(void)t;
	if (!tgt_pid_exists(pid))
		return -MD_E_NOSUCH;
	return tgt_live_open(pid, out);
}

static void live_detach(struct tgt *t)
{
	struct live *l = tgt_impl(t);
	int saved = errno;

	/* Errors are being reported by the caller: keep its errno. */
	if (l->n)
		live_detach_all(l);
	publish_unstopped(t, l);
	errno = saved;
}

static void live_release(struct tgt *t)
{
	struct live *l = tgt_impl(t);

	free(l->thr);
	free(l);
}

static const struct tgt_ops live_ops = {
	.read = live_read,
	.maps = live_maps,
	.threads = live_threads,
	.exe = live_exe,
	.regs = live_regs,
	.stat = live_stat,
	.children = live_children,
	.environ = live_environ,
	.open_other = live_open_other,
	.detach = live_detach,
	.release = live_release,
	.auxv = live_auxv,
	.attach_wait = live_attach_wait,
};

int tgt_live_open(int pid, struct tgt **out)
{
	struct live *l;

	if (!tgt_pid_exists(pid)) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	l = xcalloc(1, sizeof(*l));
	l->pid = pid;
	*out = tgt_new(pid, &live_ops, l, false);
	return 0;
}

int tgt_attach_start(int pid, struct tgt **out)
{
	struct tgt_stat st;
	struct live *l;
	struct tgt *t;
	int r, failed = pid;

	*out = NULL;
	if (!tgt_pid_exists(pid)) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	/* A rank killed but not yet reaped is a zombie: it can be seized
	 * but never stops, and would stay traced by us. */
	if (tgt_proc_stat(pid, &st) < 0 || st.state == 'Z' || st.state == 'X')
		return -MD_E_GONE;
	l = xcalloc(1, sizeof(*l));
	l->pid = pid;
	l->attached = true;
	t = tgt_new(pid, &live_ops, l, true);
	r = seize_new(l, &failed);
	if (r == 0)
		r = -MD_E_GONE;
	if (r < 0) {
		attach_failed(t, l, r, failed, errno, 0);
		tgt_free(t);
		return r;
	}
	*out = t;
	return 0;
}

int tgt_attach(int pid, struct tgt **out)
{
	struct tgt *t;
	int r = tgt_attach_start(pid, &t);

	if (r < 0)
		return r;
	r = tgt_attach_wait(t, md_now_ns() + TGT_STOP_TIMEOUT_NS);
	if (r < 0) {
		tgt_free(t);
		return r;
	}
	*out = t;
	return 0;
}
