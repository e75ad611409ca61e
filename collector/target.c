/*
 * target.c - the generic target: the ops table wrapper, the caches of
 * maps, exe and threads, and string reads.  The live implementation is
 * target_live.c, /proc in target_proc.c, permission reasons in
 * target_perm.c, the fake in target_fake.c.  Contracts in target.h.
 */
#include "target.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "md.h"
#include "target_int.h"

struct tgt {
	const struct tgt_ops *ops;
	void *impl;
	int pid;
	bool attached;
	bool perm_reported;
	int read_fault;		/* injected by a test, 0: none */
	char *maps;
	char *exe;
	bool exe_tried;
	int *tids;
	int ntids;
	int *unstopped;
	int nunstopped;
	int stopped_by;
	struct tgt_cache *pages;	/* while attached, all stopped */
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

void tgt_set_attached(struct tgt *t, bool attached)
{
	t->attached = attached;
}

void tgt_set_unstopped(struct tgt *t, const int *tids, int n)
{
	free(t->unstopped);
	t->unstopped = NULL;
	t->nunstopped = n;
	if (n) {
		t->unstopped = xmalloc((size_t)n * sizeof(int));
		memcpy(t->unstopped, tids, (size_t)n * sizeof(int));
	}
}

void tgt_unstopped(struct tgt *t, const int **tids, int *n)
{
	*tids = t->unstopped;
	*n = t->nunstopped;
}

void tgt_set_stopped_by(struct tgt *t, int sig)
{
	t->stopped_by = sig;
}

int tgt_stopped_by(const struct tgt *t)
{
	return t->stopped_by;
}

void tgt_stop_signals(int status, int *resume_sig, int *job_sig)
{
	int sig = WSTOPSIG(status);

	*resume_sig = *job_sig = 0;
	if ((status >> 16) != PTRACE_EVENT_STOP)
		*resume_sig = sig;
	else if (sig != SIGTRAP)
		*job_sig = sig;
}

void tgt_inject_read_fault(struct tgt *t, int code)
{
	t->read_fault = code;
}

void tgt_detach(struct tgt *t)
{
	if (!t || (!t->attached && !t->nunstopped))
		return;
	t->ops->detach(t);
	t->attached = false;
	tgt_forget(t);
	/* The thread list was that of the stopped threads. */
	free(t->tids);
	t->tids = NULL;
}

void tgt_free(struct tgt *t)
{
	if (!t)
		return;
	tgt_detach(t);
	t->ops->release(t);
	tgt_cache_free(t->pages);
	free(t->maps);
	free(t->exe);
	free(t->tids);
	free(t->unstopped);
	free(t);
}

void tgt_report_perm(struct tgt *t, const char *call, int saved_errno)
{
	if (t && t->perm_reported)
		return;
	if (t)
		t->perm_reported = true;
	tgt_perm_report(t ? t->pid : 0, call, saved_errno);
}

int tgt_open(int pid, struct tgt **out)
{
	return tgt_live_open(pid, out);
}

int tgt_attach_wait(struct tgt *t, long long deadline)
{
	return t->ops->attach_wait ? t->ops->attach_wait(t, deadline) : 0;
}

int tgt_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (t->read_fault)
		return t->read_fault;
	/* Only a process stopped whole holds still (a thread that did not
	 * stop may write). */
	if (t->attached && !t->nunstopped) {
		if (!t->pages)
			t->pages = tgt_cache_new();
		return tgt_cache_read(t->pages, t, t->ops, addr, buf, len);
	}
	return t->ops->read(t, addr, buf, len);
}

void tgt_forget(struct tgt *t)
{
	tgt_cache_free(t->pages);
	t->pages = NULL;
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

int tgt_auxv(struct tgt *t, uint64_t type, uint64_t *val)
{
	return t->ops->auxv ? t->ops->auxv(t, type, val) : -MD_E_NOSYM;
}

int tgt_regs(struct tgt *t, int tid, struct tgt_regs *out)
{
	memset(out, 0, sizeof(*out));
	return t->ops->regs(t, tid, out);
}

int tgt_stat(struct tgt *t, struct tgt_stat *st)
{
	return t->ops->stat(t, st);
}

int tgt_children(struct tgt *t, int **pids, int *n)
{
	return t->ops->children(t, pids, n);
}

int tgt_getenv(struct tgt *t, const char *name, char **value)
{
	size_t len, n = strlen(name);
	char *text, *p;
	int r;

	*value = NULL;
	r = t->ops->environ(t, &text, &len);
	if (r < 0)
		return r;
	for (p = text; p < text + len; p += strlen(p) + 1)
		if (!strncmp(p, name, n) && p[n] == '=') {
			*value = xstrdup(p + n + 1);
			break;
		}
	free(text);
	return *value ? 0 : -MD_E_NOSUCH;
}

int tgt_open_other(struct tgt *t, int pid, struct tgt **out)
{
	*out = NULL;
	return t->ops->open_other(t, pid, out);
}
