/*
 * target.c - the generic target and its live implementation: ptrace,
 * /proc and process_vm_readv.  See target.h for the contracts.
 */
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"

struct tgt {
	const struct tgt_ops *ops;
	void *impl;
	int pid;
	bool attached;
	bool perm_reported;
	char *maps;
	char *exe;
	bool exe_tried;
	int *tids;
	int ntids;
};

/* One stopped thread and the signal to give back when it runs again. */
struct live_thr {
	int tid;
	int sig;
	bool stopped;	/* its stop has been waited for */
};

struct live {
	int pid;
	bool attached;
	int n, cap;
	struct live_thr *thr;
};

struct tgt *tgt_new(int pid, const struct tgt_ops *ops, void *impl,
		    bool attached)
{
	struct tgt *t = xcalloc(1, sizeof(*t));

	t->ops = ops;
	t->impl = impl;
	t->pid = pid;
	t->attached = attached;
	return t;
}

void *tgt_impl(const struct tgt *t)
{
	return t->impl;
}

int tgt_pid(const struct tgt *t)
{
	return t->pid;
}

bool tgt_is_attached(const struct tgt *t)
{
	return t->attached;
}

void tgt_detach(struct tgt *t)
{
	if (!t || !t->attached)
		return;
	t->ops->detach(t);
	t->attached = false;
}

void tgt_free(struct tgt *t)
{
	if (!t)
		return;
	tgt_detach(t);
	t->ops->release(t);
	free(t->maps);
	free(t->exe);
	free(t->tids);
	free(t);
}

/* ---- /proc helpers, quiet ---- */

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static bool pid_exists(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return pid > 0 && access(path, F_OK) == 0;
}

int tgt_proc_stat(int pid, struct tgt_stat *st)
{
	char path[64], *text, *open_paren, *close_paren;
	size_t len;
	int r = -MD_E_NOSUCH;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = slurp(path);
	if (!text)
		return -MD_E_NOSUCH;
	/* comm may hold spaces and parentheses: it ends at the LAST ')';
	 * then come state (3), ppid (4) ... starttime (22). */
	open_paren = strchr(text, '(');
	close_paren = strrchr(text, ')');
	if (open_paren && close_paren && close_paren > open_paren &&
	    sscanf(close_paren + 1,
		   " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %*d %*d %llu", &st->state, &st->ppid,
		   &st->start) == 3) {
		len = (size_t)(close_paren - open_paren - 1);
		if (len >= TGT_COMM_MAX)
			len = TGT_COMM_MAX - 1;
		memcpy(st->comm, open_paren + 1, len);
		st->comm[len] = '\0';
		r = 0;
	}
	free(text);
	return r;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), 0 if gone. */
static char proc_state(int pid)
{
	struct tgt_stat st;

	return tgt_proc_stat(pid, &st) == 0 ? st.state : 0;
}

int tgt_proc_parent(int pid, int *ppid, char comm[TGT_COMM_MAX])
{
	struct tgt_stat st;
	int r = tgt_proc_stat(pid, &st);

	if (r == 0) {
		*ppid = st.ppid;
		memcpy(comm, st.comm, TGT_COMM_MAX);
	}
	return r;
}

int tgt_proc_exe(int pid, char **out)
{
	char path[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ENOENT ? -MD_E_NOSUCH : -MD_E_PERM;
	buf[n] = '\0';
	*out = xstrdup(buf);
	return 0;
}

int tgt_proc_strings(int pid, const char *which, char **text, size_t *len)
{
	char path[64];
	size_t n = 0, cap = 4096;
	char *buf;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, which);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -MD_E_NOSUCH : -MD_E_PERM;
	buf = xmalloc(cap + 1);
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap)
			buf = xrealloc(buf, (cap *= 2) + 1);
	}
	close(fd);
	if (got < 0) {
		free(buf);
		return -MD_E_PERM;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* A "Key:\tvalue" field of /proc/PID/status as a number, -1 if absent. */
static long status_field(int pid, const char *key)
{
	char path[64], *text, *p;
	size_t klen = strlen(key);
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = slurp(path);
	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			v = strtol(p + klen + 1, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

static int read_tids(int pid, int **tids, int *n)
{
	char path[64];
	struct dirent *de;
	int cap = 16, cnt = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -MD_E_GONE : -MD_E_SYS;
	*tids = xmalloc((size_t)cap * sizeof(**tids));
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (cnt == cap)
			*tids = xrealloc(*tids, (size_t)(cap *= 2) *
						       sizeof(**tids));
		(*tids)[cnt++] = atoi(de->d_name);
	}
	closedir(d);
	*n = cnt;
	return 0;
}

/* ---- permission diagnosis: one line naming the fix ---- */

/* Whether we hold CAP_SYS_PTRACE (bit 19 of CapEff). */
static bool has_cap_sys_ptrace(void)
{
	char *text = slurp("/proc/self/status"), *p;
	unsigned long long eff = 0;

	if (!text)
		return false;
	p = strstr(text, "\nCapEff:");
	if (p)
		eff = strtoull(p + 8, NULL, 16);
	free(text);
	return eff & (1ULL << 19);
}

static void perm_reason(int pid, char *buf, size_t len)
{
	tgt_perm_reason(pid, "/proc/sys/kernel/yama/ptrace_scope", buf, len);
}

void tgt_perm_reason(int pid, const char *yama_path, char *buf, size_t len)
{
	char comm[TGT_COMM_MAX] = "?", *yama;
	long tracer = status_field(pid, "TracerPid");
	long uid = status_field(pid, "Uid");
	int scope = -1, ppid;

	if (tracer > 0) {
		tgt_proc_parent((int)tracer, &ppid, comm);
		snprintf(buf, len,
			 "already traced by pid %ld (%s): detach that debugger first",
			 tracer, comm);
		return;
	}
	if (uid >= 0 && (uid_t)uid != geteuid() && geteuid() != 0) {
		snprintf(buf, len,
			 "pid %d belongs to uid %ld, we are uid %d: run as that user or as root",
			 pid, uid, (int)geteuid());
		return;
	}
	yama = slurp(yama_path);
	if (yama)
		scope = atoi(yama);
	free(yama);
	if (scope == 1 || scope == 2)
		snprintf(buf, len,
			 "kernel.yama.ptrace_scope is %d: set kernel.yama.ptrace_scope=0 or run as root",
			 scope);
	else if (scope == 3)
		snprintf(buf, len,
			 "kernel.yama.ptrace_scope is 3: ptrace is disabled until reboot");
	else if (has_cap_sys_ptrace())
		snprintf(buf, len,
			 "the kernel refused (process not dumpable, in another "
			 "user namespace, or a security module)");
	else
		snprintf(buf, len,
			 "no CAP_SYS_PTRACE (in a container? give it SYS_PTRACE)");
}

static void report_perm(struct tgt *t, const char *call, int saved_errno)
{
	char why[256];

	if (t && t->perm_reported)
		return;
	if (t)
		t->perm_reported = true;
	perm_reason(t ? t->pid : 0, why, sizeof(why));
	md_error("%s: %s: %s", call, strerror(saved_errno), why);
}

int tgt_check_access(int pid)
{
	char path[64], why[256], call[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == ENOENT || err == ESRCH) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	perm_reason(pid, why, sizeof(why));
	snprintf(call, sizeof(call), "open %s", path);
	md_error("%s: %s: %s", call, strerror(err), why);
	return -MD_E_PERM;
}

/* ---- attaching ---- */

static bool live_has(const struct live *l, int tid)
{
	for (int i = 0; i < l->n; i++)
		if (l->thr[i].tid == tid)
			return true;
	return false;
}

static void live_detach_all(struct live *l)
{
	for (int i = 0; i < l->n; i++) {
		/* ESRCH: the thread died meanwhile, nothing to restore. */
		ptrace(PTRACE_DETACH, l->thr[i].tid, NULL,
		       (void *)(long)l->thr[i].sig);
	}
	l->n = 0;
	l->attached = false;
}

/*
 * Seize and interrupt the threads not seen yet.  Returns the number of
 * new threads, or a negated code with errno of the failing call kept.
 */
static int seize_new(struct live *l, int *failed_tid)
{
	int *tids = NULL, n = 0, added = 0, r;

	r = read_tids(l->pid, &tids, &n);
	if (r < 0)
		return r;
	for (int i = 0; i < n; i++) {
		if (live_has(l, tids[i]))
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) < 0) {
			if (errno == ESRCH)
				continue;	/* exited meanwhile */
			*failed_tid = tids[i];
			r = errno == EPERM ? -MD_E_PERM : -MD_E_SYS;
			break;
		}
		if (l->n == l->cap) {
			l->cap = l->cap * 2 + 8;
			l->thr = xrealloc(l->thr,
					  (size_t)l->cap * sizeof(*l->thr));
		}
		l->thr[l->n++] = (struct live_thr){ .tid = tids[i] };
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

#define TGT_STOP_TIMEOUT_NS (5LL * 1000 * 1000 * 1000)

enum wait_result { W_STOPPED, W_GONE, W_STUCK };

/*
 * Wait until the thread is stopped.  A signal-delivery-stop is a stop
 * too, but its signal must be given back on detach.  Polled with a
 * deadline: a thread in uninterruptible sleep (NFS, a driver) stops only
 * when it wakes, and we must not hang on it.
 */
static enum wait_result wait_stopped(struct live_thr *th, long long deadline)
{
	useconds_t nap = 0;
	pid_t got;
	int st;

	for (;;) {
		got = waitpid(th->tid, &st, __WALL | WNOHANG);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return W_GONE;
		if (got == 0) {
			if (md_now_ns() > deadline)
				return W_STUCK;
			usleep(nap);
			nap = nap < 8000 ? nap + 100 : nap;
			continue;
		}
		if (!WIFSTOPPED(st))
			return W_GONE;	/* exited or killed: reaped */
		if ((st >> 16) != PTRACE_EVENT_STOP)
			th->sig = WSTOPSIG(st);
		return W_STOPPED;
	}
}

/*
 * Wait for the stops of the new threads (each stop is reported once).
 * Returns the tid of a thread that did not stop in time, else 0; such a
 * thread cannot be detached before it stops: the kernel detaches it when
 * we exit.
 */
static int wait_all(struct live *l)
{
	long long deadline = md_now_ns() + TGT_STOP_TIMEOUT_NS;
	int kept = 0, stuck = 0;

	for (int i = 0; i < l->n; i++) {
		enum wait_result w = W_STOPPED;

		if (!l->thr[i].stopped)
			w = wait_stopped(&l->thr[i], deadline);
		if (w == W_STUCK && !stuck)
			stuck = l->thr[i].tid;
		if (w == W_STOPPED) {
			l->thr[i].stopped = true;
			l->thr[kept++] = l->thr[i];
		}
	}
	l->n = kept;
	return stuck;
}

static int live_attach(struct live *l)
{
	int r, failed = l->pid, saved, rounds = 0, stuck = 0;

	l->attached = true;
	do {
		r = seize_new(l, &failed);
		if (r < 0)
			break;
		stuck = wait_all(l);
	} while (r > 0 && !stuck && ++rounds < 1000);
	saved = errno;
	if (stuck)
		r = -MD_E_SYS;
	if (r < 0 || l->n == 0) {
		/* PTRACE_DETACH needs a stopped tracee: collect the stops of
		 * the threads seized in the failed round first. */
		if (!stuck)
			wait_all(l);
		live_detach_all(l);
		if (r == 0)
			r = -MD_E_GONE;
	}
	if (stuck)
		md_error("thread %d of pid %d did not stop within 5 s "
			 "(uninterruptible sleep?): try again later",
			 stuck, l->pid);
	else if (r == -MD_E_SYS)
		md_error("ptrace(PTRACE_SEIZE/INTERRUPT, %d) in pid %d: %s",
			 failed, l->pid, strerror(saved));
	else if (r == -MD_E_GONE)
		md_info("pid %d exited while attaching", l->pid);
	errno = saved;
	return r < 0 ? r : 0;
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
		w = ptrace(PTRACE_PEEKDATA, t->pid, (void *)a, NULL);
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
		report_perm(t, call, e);
		return -MD_E_PERM;
	default:
		md_error("%s(%d, 0x%llx): %s", call, t->pid,
			 (unsigned long long)addr, strerror(e));
		return -MD_E_SYS;
	}
}

static int live_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	if (vm_read(t->pid, addr, buf, len) == 0)
		return 0;
	/* process_vm_readv may be missing or filtered (ENOSYS, EPERM under
	 * seccomp); an attached tracer can still peek. */
	if (t->attached && errno != ESRCH && errno != EFAULT) {
		if (peek_read(t, addr, buf, len) == 0)
			return 0;
		return sort_errno(t, "ptrace(PTRACE_PEEKDATA)", addr);
	}
	if (errno == ESRCH && pid_exists(t->pid))
		errno = EPERM;	/* a zombie or a vanished mm */
	return sort_errno(t, "process_vm_readv", addr);
}

static int live_maps(struct tgt *t, char **text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	*text = slurp(path);
	if (*text)
		return 0;
	if (!pid_exists(t->pid))
		return -MD_E_GONE;
	md_error("open %s: %s", path, strerror(errno));
	return errno == EACCES || errno == EPERM ? -MD_E_PERM : -MD_E_SYS;
}

static int live_threads(struct tgt *t, int **tids, int *n)
{
	struct live *l = t->impl;

	if (!l->attached)
		return read_tids(t->pid, tids, n);
	*tids = xmalloc((size_t)(l->n ? l->n : 1) * sizeof(**tids));
	for (int i = 0; i < l->n; i++)
		(*tids)[i] = l->thr[i].tid;
	*n = l->n;
	return 0;
}

static int live_exe(struct tgt *t, char **path)
{
	return tgt_proc_exe(t->pid, path);
}

static void live_detach(struct tgt *t)
{
	struct live *l = t->impl;
	int saved = errno;

	/* Errors are being reported by the caller: keep its errno. */
	if (l->attached)
		live_detach_all(l);
	errno = saved;
}

static void live_release(struct tgt *t)
{
	struct live *l = t->impl;

	free(l->thr);
	free(l);
}

static const struct tgt_ops live_ops = {
	.read = live_read,
	.maps = live_maps,
	.threads = live_threads,
	.exe = live_exe,
	.detach = live_detach,
	.release = live_release,
};

int tgt_open(int pid, struct tgt **out)
{
	struct live *l;

	if (!pid_exists(pid)) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	l = xcalloc(1, sizeof(*l));
	l->pid = pid;
	*out = tgt_new(pid, &live_ops, l, false);
	return 0;
}

int tgt_attach(int pid, struct tgt **out)
{
	struct live *l;
	struct tgt *t;
	char st;
	int r;

	if (!pid_exists(pid)) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	/* A rank killed but not yet reaped is a zombie: it can be seized
	 * but never stops, and would stay traced by us. */
	st = proc_state(pid);
	if (st == 'Z' || st == 'X')
		return -MD_E_GONE;
	l = xcalloc(1, sizeof(*l));
	l->pid = pid;
	t = tgt_new(pid, &live_ops, l, false);
	r = live_attach(l);
	if (r == -MD_E_PERM) {
		char call[64];

		snprintf(call, sizeof(call), "ptrace(PTRACE_SEIZE, %d)", pid);
		report_perm(t, call, EPERM);
	}
	if (r < 0) {
		tgt_free(t);
		return r;
	}
	t->attached = true;
	*out = t;
	return 0;
}

/* ---- generic accessors with caching ---- */

int tgt_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	return t->ops->read(t, addr, buf, len);
}

int tgt_read_str(struct tgt *t, uint64_t addr, size_t max, char **out)
{
	size_t len = 0, cap = 64, step = 64;
	char *s = xmalloc(cap);
	int r = 0;

	/* Chunks up to a page boundary; a chunk that faults is read again
	 * byte by byte: a string may end just before unmapped memory. */
	while (len + 1 < max) {
		size_t room = 4096 - (size_t)((addr + len) & 4095);
		size_t chunk = room < step ? room : step;
		char *nul;

		if (chunk > max - 1 - len)
			chunk = max - 1 - len;
		if (len + chunk + 1 > cap)
			s = xrealloc(s, cap = (len + chunk + 1) * 2);
		r = tgt_read(t, addr + len, s + len, chunk);
		if (r == -MD_E_FAULT && chunk > 1) {
			step = 1;
			continue;
		}
		if (r < 0)
			break;
		nul = memchr(s + len, '\0', chunk);
		len += nul ? (size_t)(nul - (s + len)) : chunk;
		if (nul)
			break;
	}
	if (r < 0) {
		free(s);
		return r;
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

const char *tgt_maps_text(struct tgt *t)
{
	if (!t->maps && t->ops->maps(t, &t->maps) < 0)
		t->maps = NULL;
	return t->maps;
}

int tgt_threads(struct tgt *t, const int **tids, int *n)
{
	int r;

	if (!t->tids || !t->attached) {
		free(t->tids);
		t->tids = NULL;
		r = t->ops->threads(t, &t->tids, &t->ntids);
		if (r < 0) {
			if (r != -MD_E_GONE)
				md_error("listing threads of pid %d: %s",
					 t->pid, md_strerror(r));
			return r;
		}
	}
	*tids = t->tids;
	*n = t->ntids;
	return 0;
}

const char *tgt_exe(struct tgt *t)
{
	if (!t->exe_tried) {
		t->exe_tried = true;
		if (t->ops->exe(t, &t->exe) < 0)
			t->exe = NULL;
	}
	return t->exe;
}
