/*
 * target_fake.c - a target made of memory regions and texts given by a
 * test, so that proctable, the MQD DLL host and a whole collection run
 * without a process.  The targets opened or attached on one fake share
 * it: what the test does to the fake (gone, failing reads, stopped) is
 * seen through all of them, and the fake counts the attaches and
 * detaches made through them.
 *
 * Its job-control state changes as the kernel would change a process's
 * under the tool's seize, interrupt, wait and detach: a group-stop stays
 * in effect through a detach (the kernel stops the process again), a
 * stop signal that someone else sends while it is in our stop acts once
 * it is let go, and one that comes between the seize and the wait is
 * reported as a signal-delivery-stop and stops the process only if the
 * detach gives it back.  What the tool gives back is decided by
 * tgt_stop_signals, as for the live target, from the waitpid status the
 * fake makes up: a tool that dropped that signal would leave the process
 * running, and the tests would see it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/ptrace.h>

#include "md.h"
#include "target_int.h"

struct fake_regs {
	int tid;
	struct tgt_regs regs;
};

struct fake_region {
	uint64_t addr;
	size_t len;
	unsigned char *data;
};

struct fake {
	int nregions;
	struct fake_region *regions;
	char *maps;
	char *exe;
	int *tids;
	int ntids;
	bool gone;
	int read_err;		/* tgt_fake_fail_reads */
	struct tgt_stat stat;
	bool has_stat;
	struct fake_regs *regs;
	int nregs;
	char *env;		/* tgt_fake_setenv: NAME=VALUE\0... */
	size_t envlen;
	struct tgt **links;	/* other processes of its system, borrowed */
	int nlinks;
	int attaches;
	int detaches;
	int attached;		/* targets attached to it now */
	bool waited;		/* its stop was waited for (attach_wait) */
	int stopped_sig;	/* the group-stop in effect, 0: none */
	int pending_sig;	/* a stop signal sent while in our stop */
	int delivery_sig;	/* one sent between the seize and the wait */
	int resume_sig;		/* what the detach gives back */
	int *stuck;		/* threads that never stop */
	int nstuck;
	tgt_fake_wait_fn on_wait;	/* told of each attach_wait */
	void *on_wait_ctx;
	int refs;		/* targets sharing it (tgt_open_other) */
};

/* A read may span regions that touch each other, byte by byte. */
static int fake_read(struct tgt *t, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = tgt_impl(t);
	unsigned char *out = buf;
	size_t done = 0;

	if (f->gone)
		return -MD_E_GONE;
	if (f->read_err)
		return f->read_err;
	while (done < len) {
		uint64_t a = addr + done;
		size_t take = 0;

		for (int i = 0; i < f->nregions && !take; i++) {
			struct fake_region *r = &f->regions[i];

			if (a < r->addr || a - r->addr >= r->len)
				continue;
			take = r->len - (size_t)(a - r->addr);
			if (take > len - done)
				take = len - done;
			memcpy(out + done, r->data + (a - r->addr), take);
		}
		if (!take)
			return -MD_E_FAULT;
		done += take;
	}
	return 0;
}

static int fake_maps(struct tgt *t, char **text)
{
	struct fake *f = tgt_impl(t);

	if (f->gone)
		return -MD_E_GONE;
	*text = xstrdup(f->maps ? f->maps : "");
	return 0;
}

static int fake_threads(struct tgt *t, int **tids, int *n)
{
	struct fake *f = tgt_impl(t);

	if (f->gone)
		return -MD_E_GONE;
	*tids = xmalloc((size_t)(f->ntids ? f->ntids : 1) * sizeof(int));
	if (f->ntids)
		memcpy(*tids, f->tids, (size_t)f->ntids * sizeof(int));
	*n = f->ntids;
	return 0;
}

static int fake_exe(struct tgt *t, char **path)
{
	struct fake *f = tgt_impl(t);

	if (!f->exe)
		return -MD_E_NOSUCH;
	*path = xstrdup(f->exe);
	return 0;
}

static int fake_regs(struct tgt *t, int tid, struct tgt_regs *out)
{
	struct fake *f = tgt_impl(t);

	if (f->gone)
		return -MD_E_GONE;
	for (int i = 0; i < f->nregs; i++) {
		if (f->regs[i].tid == tid) {
			*out = f->regs[i].regs;
			return 0;
		}
	}
	return -MD_E_SYS;
}

static int fake_stat(struct tgt *t, struct tgt_stat *st)
{
	struct fake *f = tgt_impl(t);

	if (f->gone || !f->has_stat)
		return -MD_E_NOSUCH;
	*st = f->stat;
	/* As /proc shows a tracee, whatever it was doing: its own state
	 * comes back when the last tracer lets go. */
	if (f->attached > 0)
		st->state = 't';
	else if (f->stopped_sig)
		st->state = 'T';
	return 0;
}

static int fake_children(struct tgt *t, int **pids, int *n)
{
	struct fake *f = tgt_impl(t);
	struct tgt_stat st;
	int k = 0;

	if (f->gone)
		return -MD_E_NOSUCH;
	*pids = xmalloc((size_t)(f->nlinks ? f->nlinks : 1) * sizeof(int));
	for (int i = 0; i < f->nlinks; i++)
		if (tgt_stat(f->links[i], &st) == 0 && st.ppid == tgt_pid(t))
			(*pids)[k++] = tgt_pid(f->links[i]);
	*n = k;
	return 0;
}

static int fake_environ(struct tgt *t, char **text, size_t *len)
{
	struct fake *f = tgt_impl(t);

	if (f->gone)
		return -MD_E_NOSUCH;
	*text = xmalloc(f->envlen + 1);
	if (f->envlen)
		memcpy(*text, f->env, f->envlen);
	*len = f->envlen;
	return 0;
}

static const struct tgt_ops fake_ops;

static int fake_open_other(struct tgt *t, int pid, struct tgt **out)
{
	struct fake *f = tgt_impl(t);

	for (int i = 0; i < f->nlinks; i++) {
		struct tgt *o = f->links[i];
		struct fake *of = tgt_impl(o);

		if (tgt_pid(o) != pid || of->gone)
			continue;
		of->refs++;
		*out = tgt_new(pid, &fake_ops, of, false);
		return 0;
	}
	return -MD_E_NOSUCH;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/*
 * Once the last tracer lets go, the process runs what it was given:
 * the signal given back, a stop signal sent meanwhile (not taken by a
 * tracer) are delivered, and a stop signal stops it.  A group-stop in
 * effect stays (the kernel sets the process stopping again).
 */
static void fake_let_go(struct fake *f)
{
	int given[] = { f->resume_sig, f->delivery_sig, f->pending_sig };

	for (size_t i = 0; i < sizeof(given) / sizeof(*given); i++)
		if (is_stop_signal(given[i]))
			f->stopped_sig = given[i];
	f->resume_sig = f->delivery_sig = f->pending_sig = 0;
}

static void fake_detach(struct tgt *t)
{
	struct fake *f = tgt_impl(t);

	f->detaches++;
	if (tgt_is_attached(t) && f->attached > 0 && --f->attached == 0)
		fake_let_go(f);
	tgt_set_unstopped(t, NULL, 0);
}

/*
 * The second half of an attach: the stop the kernel would report, as
 * its waitpid status (a signal-delivery-stop for a stop signal that came
 * after the seize; a PTRACE_EVENT_STOP with the group-stop's signal, or
 * with SIGTRAP for our interrupt), read as the live target reads it.  A
 * fake that exited meanwhile is let go, as the live target lets go what
 * it seized.
 */
static int fake_attach_wait(struct tgt *t, long long deadline)
{
	struct fake *f = tgt_impl(t);
	int sig = f->delivery_sig, event = 0, job_sig;

	if (f->on_wait)
		f->on_wait(f->on_wait_ctx, t, deadline);
	if (f->nstuck)
		tgt_set_unstopped(t, f->stuck, f->nstuck);
	if (!sig) {
		sig = f->stopped_sig ? f->stopped_sig : SIGTRAP;
		event = PTRACE_EVENT_STOP;
	}
	f->delivery_sig = 0;
	f->waited = true;
	tgt_stop_signals(event << 16 | sig << 8 | 0x7f, &f->resume_sig,
			 &job_sig);
	tgt_set_stopped_by(t, job_sig);
	if (!f->gone)
		return 0;
	fake_detach(t);
	tgt_set_attached(t, false);
	return -MD_E_GONE;
}

static void fake_release(struct tgt *t)
{
	struct fake *f = tgt_impl(t);

	if (f->refs-- > 0)
		return;
	for (int i = 0; i < f->nregions; i++)
		free(f->regions[i].data);
	free(f->regions);
	free(f->maps);
	free(f->exe);
	free(f->tids);
	free(f->regs);
	free(f->links);
	free(f->env);
	free(f->stuck);
	free(f);
}

static const struct tgt_ops fake_ops = {
	.read = fake_read,
	.maps = fake_maps,
	.threads = fake_threads,
	.exe = fake_exe,
	.regs = fake_regs,
	.stat = fake_stat,
	.children = fake_children,
	.environ = fake_environ,
	.open_other = fake_open_other,
	.detach = fake_detach,
	.release = fake_release,
	.attach_wait = fake_attach_wait,
};

struct tgt *tgt_fake_new(int pid)
{
	return tgt_new(pid, &fake_ops, xcalloc(1, sizeof(struct fake)), false);
}

void tgt_fake_add_region(struct tgt *t, uint64_t addr, const void *data,
			 size_t len)
{
	struct fake *f = tgt_impl(t);
	struct fake_region *r;

	f->regions = xrealloc(f->regions,
			      (size_t)(f->nregions + 1) * sizeof(*f->regions));
	r = &f->regions[f->nregions++];
	r->addr = addr;
	r->len = len;
	r->data = xmalloc(len);
	memcpy(r->data, data, len);
}

void tgt_fake_set_maps(struct tgt *t, const char *text)
{
	struct fake *f = tgt_impl(t);

	free(f->maps);
	f->maps = xstrdup(text);
}

/* A copy of the n tids in *dst (freed first), *ndst n. */
static void set_tids(int **dst, int *ndst, const int *tids, int n)
{
	free(*dst);
	*dst = xmalloc((size_t)(n ? n : 1) * sizeof(int));
	if (n)
		memcpy(*dst, tids, (size_t)n * sizeof(int));
	*ndst = n;
}

void tgt_fake_set_threads(struct tgt *t, const int *tids, int n)
{
	struct fake *f = tgt_impl(t);

	set_tids(&f->tids, &f->ntids, tids, n);
}

void tgt_fake_set_exe(struct tgt *t, const char *path)
{
	struct fake *f = tgt_impl(t);

	free(f->exe);
	f->exe = xstrdup(path);
}

void tgt_fake_gone(struct tgt *t)
{
	((struct fake *)tgt_impl(t))->gone = true;
}

void tgt_fake_fail_reads(struct tgt *t, int code)
{
	((struct fake *)tgt_impl(t))->read_err = code;
}

void tgt_fake_set_regs(struct tgt *t, int tid, const struct tgt_regs *r)
{
	struct fake *f = tgt_impl(t);

	for (int i = 0; i < f->nregs; i++) {
		if (f->regs[i].tid == tid) {
			f->regs[i].regs = *r;	/* the thread moved */
			return;
		}
	}
	f->regs = xrealloc(f->regs, (size_t)(f->nregs + 1) * sizeof(*f->regs));
	f->regs[f->nregs].tid = tid;
	f->regs[f->nregs++].regs = *r;
}

void tgt_fake_set_stat(struct tgt *t, char state, int ppid, const char *comm)
{
	struct fake *f = tgt_impl(t);

	f->has_stat = true;
	/* 'T': stopped by SIGSTOP before anyone looked (tgt_fake_kill). */
	f->stopped_sig = state == 'T' ? SIGSTOP : 0;
	f->stat.state = state == 'T' ? 'S' : state;
	f->stat.ppid = ppid;
	snprintf(f->stat.comm, sizeof(f->stat.comm), "%s", comm);
}

void tgt_fake_kill(struct tgt *t, int sig)
{
	struct fake *f = tgt_impl(t);

	if (sig == SIGCONT) {
		/* It ends a group-stop and discards pending stops. */
		f->stopped_sig = f->pending_sig = f->delivery_sig = 0;
		return;
	}
	if (!is_stop_signal(sig) || f->gone)
		return;
	if (!f->attached)
		f->stopped_sig = sig;
	else if (!f->waited && !f->stopped_sig)
		f->delivery_sig = sig;	/* dequeued before our interrupt */
	else
		f->pending_sig = sig;	/* acts once it is let go */
}

void tgt_fake_setenv(struct tgt *t, const char *assignment)
{
	struct fake *f = tgt_impl(t);
	size_t n = strlen(assignment) + 1;

	f->env = xrealloc(f->env, f->envlen + n);
	memcpy(f->env + f->envlen, assignment, n);
	f->envlen += n;
}

void tgt_fake_link(struct tgt *t, struct tgt *other)
{
	struct fake *f = tgt_impl(t);

	f->links = xrealloc(f->links, (size_t)(f->nlinks + 1) *
					      sizeof(*f->links));
	f->links[f->nlinks++] = other;
}

struct tgt *tgt_fake_new_attached(int pid)
{
	struct fake *f = xcalloc(1, sizeof(*f));

	f->attaches = f->attached = 1;
	f->waited = true;
	return tgt_new(pid, &fake_ops, f, true);
}

int tgt_fake_open(struct tgt *t, struct tgt **out)
{
	struct fake *f = tgt_impl(t);

	*out = NULL;
	if (f->gone)
		return -MD_E_NOSUCH;
	f->refs++;
	*out = tgt_new(tgt_pid(t), &fake_ops, f, false);
	return 0;
}

int tgt_fake_attach(struct tgt *t, struct tgt **out)
{
	struct fake *f = tgt_impl(t);

	*out = NULL;
	if (f->gone)
		return -MD_E_GONE;
	f->refs++;
	f->attaches++;
	if (f->attached++ == 0)
		f->waited = false;
	*out = tgt_new(tgt_pid(t), &fake_ops, f, true);
	return 0;
}

int tgt_fake_attaches(const struct tgt *t)
{
	return ((const struct fake *)tgt_impl(t))->attaches;
}

int tgt_fake_detaches(const struct tgt *t)
{
	return ((const struct fake *)tgt_impl(t))->detaches;
}

void tgt_fake_set_unstopped(struct tgt *t, const int *tids, int n)
{
	tgt_set_unstopped(t, tids, n);
}

void tgt_fake_set_stuck(struct tgt *t, const int *tids, int n)
{
	struct fake *f = tgt_impl(t);

	set_tids(&f->stuck, &f->nstuck, tids, n);
}

void tgt_fake_on_wait(struct tgt *t, tgt_fake_wait_fn fn, void *ctx)
{
	struct fake *f = tgt_impl(t);

	f->on_wait = fn;
	f->on_wait_ctx = ctx;
}
