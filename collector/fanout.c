/*
 * fanout.c - the front end of a many-host collection: its own host's
 * ranks through the collector, one agent per other host through a
 * launcher, every host's look k taken at the same moment (the front end
 * sends "look k" to every agent, takes its own look, and waits for every
 * "looked k" before it sleeps the interval), then the partial snapshots
 * merged in rank order.  A host that fails keeps its ranks "remote" with
 * the reason; the collection goes on with the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "launch.h"
#include "md.h"
#include "slurm.h"

#define ERR_TAIL 1024

struct conn {
	const char *host;	/* borrowed from the local snapshot */
	int *ranks;
	int nranks;
	pid_t pid;		/* the launcher; its own process group */
	int in, out, err;	/* our ends, -1 when closed */
	char *obuf;
	size_t olen, ocap;
	char etail[ERR_TAIL];	/* the last bytes of its stderr */
	size_t elen;
	bool out_eof, reaped;
	int status;
	char *fail;		/* why its ranks are not collected */
	struct snap *part;
};

struct fan {
	const struct ag_opts *o;
	struct ln_ctx ln;
	struct col *col;
	struct snap *s;		/* the local collection's */
	struct conn *c;
	int n;
};

static bool stopped(const struct fan *f)
{
	return f->o->col.stop && *f->o->col.stop;
}

static bool live(const struct conn *c)
{
	return !c->fail;
}

/* Group the ranks the local collector left "remote" by host. */
static void group_hosts(struct fan *f)
{
	for (int i = 0; i < f->s->nranks; i++) {
		const struct snap_rank *r = &f->s->ranks[i];
		struct conn *c = NULL;

		if (r->state != SNAP_RANK_REMOTE)
			continue;
		for (int k = 0; k < f->n && !c; k++)
			if (!strcmp(f->c[k].host, r->host ? r->host : ""))
				c = &f->c[k];
		if (!c) {
			f->c = xrealloc(f->c, ((size_t)f->n + 1) * sizeof(*f->c));
			c = &f->c[f->n++];
			memset(c, 0, sizeof(*c));
			c->host = r->host ? r->host : "";
			c->in = c->out = c->err = -1;
			c->pid = -1;
		}
		c->ranks = xrealloc(c->ranks,
				    ((size_t)c->nranks + 1) * sizeof(int));
		c->ranks[c->nranks++] = i;
	}
}

static void fail(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char *text;

	if (c->fail)
		return;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = xstrdup("failed");
	va_end(ap);
	c->fail = text;
	md_warn("ranks on host %s not collected: %s", c->host, text);
	if (c->in >= 0) {
		/* The agent detaches what it holds and exits. */
		close(c->in);
		c->in = -1;
	}
}

static void start(struct fan *f, struct conn *c)
{
	int pin[2], pout[2], perr[2];
	char **argv = ln_argv(&f->ln, c->host), **env;

	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
	    pipe2(perr, O_CLOEXEC)) {
		fail(c, "pipe: %s", strerror(errno));
		ln_argv_free(argv);
		return;
	}
	/* Made before the fork: the child only calls exec. */
	env = sl_child_env(f->ln.env, f->ln.launcher == AG_LAUNCH_SRUN);
	c->pid = fork();
	if (c->pid == 0) {
		/*
		 * A session of its own, hence a process group of its own: a
		 * Ctrl-C at the terminal reaches the front end only, which
		 * then lets every agent detach.  And, where the kernel groups
		 * sessions for the scheduler (autogroup), a share of the CPU
		 * of its own: a launcher (mpirun and its helpers, ssh) starts
		 * beside ranks that busy-poll every core, and sharing the
		 * front end's share made each start wait for the others.
		 */
		if (setsid() < 0)
			setpgid(0, 0);
		ag_prefer_cpu_session();
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execvpe(argv[0], argv, env);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	c->in = pin[1];
	c->out = pout[0];
	c->err = perr[0];
	free(env);
	if (c->pid < 0) {
		fail(c, "fork: %s", strerror(errno));
		c->pid = -1;
	}
	ln_argv_free(argv);
}

static void send_line(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void send_line(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char *text;
	size_t len, off = 0;
	int n;

	if (!live(c) || c->in < 0)
		return;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n;
	while (off < len) {
		ssize_t w = write(c->in, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			/* Its end is gone: the reason shows when its output
			 * ends (the launcher's error). */
			close(c->in);
			c->in = -1;
			break;
		}
		off += (size_t)w;
	}
	free(text);
}

static void reap(struct conn *c, bool block)
{
	if (c->pid > 0 && !c->reaped &&
	    waitpid(c->pid, &c->status, block ? 0 : WNOHANG) == c->pid)
		c->reaped = true;
}

/* What its stderr ended with, as one line ("" if nothing): the last
 * lines that say something, joined (mpirun frames its messages in lines
 * of dashes). */
static char *err_line(struct conn *c)
{
	char *t = xstrndup(c->etail, c->elen), *lines[6], *p, *save = NULL;
	char *out = xstrdup("");
	int n = 0;

	for (p = strtok_r(t, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		char *e = p + strlen(p);

		while (*p == ' ' || *p == '\t')
			p++;
		while (e > p && (e[-1] == '\r' || e[-1] == ' '))
			*--e = 0;
		if (!*p || strspn(p, "-=*") == strlen(p))
			continue;
		if (n == 6)
			memmove(lines, lines + 1, 5 * sizeof(*lines)), n = 5;
		lines[n++] = p;
	}
	for (int i = 0; i < n && strlen(out) < 300; i++) {
		char *j = xasprintf("%s%s%s", out, *out ? " " : "", lines[i]);

		free(out);
		out = j;
	}
	free(t);
	return out;
}

static void read_fd(struct conn *c, int *fd, bool is_out)
{
	char buf[65536];
	ssize_t n = read(*fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		if (is_out)
			c->out_eof = true;
		return;
	}
	if (is_out) {
		if (c->olen + (size_t)n > c->ocap) {
			c->ocap = (c->olen + (size_t)n) * 2;
			c->obuf = xrealloc(c->obuf, c->ocap + 1);
		}
		memcpy(c->obuf + c->olen, buf, (size_t)n);
		c->olen += (size_t)n;
		return;
	}
	if ((size_t)n >= ERR_TAIL) {
		memcpy(c->etail, buf + n - (ERR_TAIL - 1), ERR_TAIL - 1);
		c->elen = ERR_TAIL - 1;
		return;
	}
	if (c->elen + (size_t)n >= ERR_TAIL) {
		size_t drop = c->elen + (size_t)n - (ERR_TAIL - 1);

		memmove(c->etail, c->etail + drop, c->elen - drop);
		c->elen -= drop;
	}
	memcpy(c->etail + c->elen, buf, (size_t)n);
	c->elen += (size_t)n;
	if (md_verbose() > 0)
		fprintf(stderr, "[%s] %.*s", c->host, (int)n, buf);
}

/* What a step waits for: a whole line, or the end of the output. */
enum want { W_LINE, W_EOF };

static bool has(const struct conn *c, enum want w)
{
	if (w == W_EOF)
		return c->out_eof;
	return c->obuf && memchr(c->obuf, '\n', c->olen);
}

/* Pump every live agent's output until each has what the step wants, its
 * output ended, the deadline passed or a stop came.  Returns false on a
 * stop. */
static bool pump(struct fan *f, enum want w, long long deadline)
{
	struct pollfd *pf = xcalloc((size_t)f->n * 2 + 1, sizeof(*pf));
	bool ok = true;

	for (;;) {
		int np = 0, waiting = 0;
		long long left = deadline - md_now_ns();

		if (stopped(f)) {
			ok = false;
			break;
		}
		for (int i = 0; i < f->n; i++) {
			struct conn *c = &f->c[i];

			if (!live(c) || has(c, w) || c->out_eof)
				continue;
			waiting++;
			pf[np++] = (struct pollfd){ c->out, POLLIN, 0 };
			if (c->err >= 0)
				pf[np++] = (struct pollfd){ c->err, POLLIN, 0 };
		}
		if (!waiting || left <= 0)
			break;
		if (poll(pf, (nfds_t)np, left > 100000000LL ? 100 :
			 (int)(left / 1000000) + 1) < 0 && errno != EINTR)
			break;
		for (int k = 0; k < np; k++) {
			if (!pf[k].revents)
				continue;
			for (int i = 0; i < f->n; i++) {
				struct conn *c = &f->c[i];

				if (pf[k].fd == c->out && c->out >= 0)
					read_fd(c, &c->out, true);
				else if (pf[k].fd == c->err && c->err >= 0)
					read_fd(c, &c->err, false);
			}
		}
	}
	free(pf);
	return ok;
}

/* Why an agent ended before answering, from what its launcher said. */
static void explain_end(struct fan *f, struct conn *c, const char *when)
{
	char *e;

	/* Its stderr may hold more: read what is left, briefly. */
	for (int i = 0; i < 20 && c->err >= 0; i++) {
		struct pollfd p = { c->err, POLLIN, 0 };

		if (poll(&p, 1, 50) <= 0)
			break;
		read_fd(c, &c->err, false);
	}
	/* Its output ends a moment before it does: its exit status tells
	 * the launcher's failures apart. */
	for (int i = 0; i < 100 && !c->reaped; i++) {
		struct timespec ts = { 0, 10 * 1000000L };

		reap(c, false);
		if (!c->reaped)
			nanosleep(&ts, NULL);
	}
	e = err_line(c);
	if (!strcmp(when, "start") && c->reaped && WIFEXITED(c->status) &&
	    WEXITSTATUS(c->status) == 255 && f->ln.launcher == AG_LAUNCH_SSH)
		fail(c, "host %s unreachable: %s", c->host,
		     *e ? e : "the remote shell failed with status 255");
	else if (!strcmp(when, "start") && (strstr(e, "No such file") ||
		 strstr(e, "not found") ||
		 strstr(e, "could not access or execute") ||
		 (c->reaped && WIFEXITED(c->status) &&
		  WEXITSTATUS(c->status) == 127)))
		fail(c, "no agent at %s on host %s: %s (install mpi-deadlock %s "
		     "there, or give its path with --agent)", f->ln.agent,
		     c->host, e, MD_VERSION);
	else if (!strcmp(when, "start") && strstr(e, "unknown subcommand"))
		fail(c, "the agent %s on host %s is not mpi-deadlock %s (it has "
		     "no agent mode: %s): install the same version there, or "
		     "give its path with --agent", f->ln.agent, c->host,
		     MD_VERSION, e);
	else if (!strcmp(when, "start"))
		fail(c, "%s could not start the agent on host %s: %s",
		     ln_name(&f->ln), c->host, *e ? e : "no answer");
	else
		fail(c, "the agent on host %s ended during collection (%s): its "
		     "ranks were detached and run on; collect again", c->host,
		     *e ? e : "no message");
	free(e);
}

static char *take_line(struct conn *c)
{
	char *nl = c->obuf ? memchr(c->obuf, '\n', c->olen) : NULL;
	size_t n;
	char *line;

	if (!nl)
		return NULL;
	n = (size_t)(nl - c->obuf);
	line = xstrndup(c->obuf, n);
	memmove(c->obuf, nl + 1, c->olen - n - 1);
	c->olen -= n + 1;
	return line;
}

static void timed_out(struct fan *f, struct conn *c, const char *what)
{
	fail(c, "host %s did not answer within %d s (%s): raise "
	     "--agent-timeout, or check the host", c->host, f->o->timeout_s,
	     what);
}

/* Every live agent's next line, checked by check (NULL line: none). */
static bool step(struct fan *f, const char *what,
		 void (*check)(struct fan *, struct conn *, char *, void *),
		 void *arg)
{
	long long deadline = md_now_ns() + f->o->timeout_s * 1000000000LL;

	if (!pump(f, W_LINE, deadline))
		return false;
	for (int i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];
		char *line;

		if (!live(c))
			continue;
		line = take_line(c);
		if (!line && c->out_eof)
			explain_end(f, c, what);
		else if (!line)
			timed_out(f, c, what);
		else
			check(f, c, line, arg);
		free(line);
	}
	return true;
}

/* "mpi-deadlock-agent PROTO VERSION SNAPVERSION HOST" */
static void check_hello(struct fan *f, struct conn *c, char *line, void *arg)
{
	char magic[32], ver[64];
	int proto, sv;

	(void)arg;
	if (sscanf(line, "%31s %d %63s %d", magic, &proto, ver, &sv) != 4 ||
	    strcmp(magic, AG_MAGIC))
		fail(c, "the agent %s on host %s is not mpi-deadlock %s: it "
		     "said '%.60s': install the same version there, or give "
		     "its path with --agent", f->ln.agent, c->host, MD_VERSION,
		     line);
	else if (proto != AG_PROTO || strcmp(ver, MD_VERSION) ||
		 sv != SNAP_VERSION)
		fail(c, "the agent %s on host %s is mpi-deadlock %s (protocol "
		     "%d, snapshot version %d), this is %s (protocol %d, "
		     "snapshot version %d): install the same version there, "
		     "or give its path with --agent", f->ln.agent, c->host, ver,
		     proto, sv, MD_VERSION, AG_PROTO, SNAP_VERSION);
}

static void check_ready(struct fan *f, struct conn *c, char *line, void *arg)
{
	(void)f;
	(void)arg;
	if (strncmp(line, "ready ", 6))
		fail(c, "the agent on host %s refused: %.100s", c->host,
		     !strncmp(line, "refused ", 8) ? line + 8 : line);
}

static void check_looked(struct fan *f, struct conn *c, char *line, void *arg)
{
	int k;

	(void)f;
	if (sscanf(line, "looked %d", &k) != 1 || k != *(int *)arg)
		fail(c, "the agent on host %s answered '%.60s' to look %d",
		     c->host, line, *(int *)arg);
}

static void send_job(struct fan *f, struct conn *c)
{
	send_line(c, "hello %d %s %d\n", AG_PROTO, MD_VERSION, SNAP_VERSION);
	/* FLAGS bit 0: no ob1 walk (agent.c reads them; older agents of
	 * the same protocol ignore them). */
	send_line(c, "job %d %d %d\n", f->s->nranks, f->o->col.looks,
		  f->o->col.no_ob1 ? 1 : 0);
	for (int k = 0; k < c->nranks; k++) {
		const struct snap_rank *r = &f->s->ranks[c->ranks[k]];

		send_line(c, "rank %d %d %s\n", r->rank, r->pid,
			  r->exe ? r->exe : "");
	}
	send_line(c, "go\n");
}

/* Sleep between looks, waking for a stop request. */
static void pause_ms(const struct fan *f, int ms)
{
	long long end = md_now_ns() + ms * 1000000LL;
	struct timespec ts = { 0, 20 * 1000000L };

	while (md_now_ns() < end && !stopped(f))
		nanosleep(&ts, NULL);
}

static int looks(struct fan *f)
{
	int n = f->o->col.looks > 0 ? f->o->col.looks : 1;

	for (int k = 0; k < n; k++) {
		if (k)
			pause_ms(f, f->o->col.interval_ms);
		if (stopped(f))
			return -MD_E_INTR;
		for (int i = 0; i < f->n; i++)
			send_line(&f->c[i], "look %d\n", k);
		if (col_look(f->col, k) < 0 || !step(f, "look", check_looked, &k))
			return -MD_E_INTR;
	}
	return 0;
}

/* Read each agent's snapshot from what it sent. */
static void read_parts(struct fan *f)
{
	struct snap_read_opts opts = { .groups = snap_groups_new() };

	for (int i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];
		char *name;
		FILE *in;

		if (!live(c))
			continue;
		if (!c->out_eof) {
			timed_out(f, c, "sending its snapshot");
			continue;
		}
		reap(c, false);
		name = xasprintf("snapshot from the agent on %s", c->host);
		in = fmemopen(c->obuf, c->olen, "r");
		if (!in || snap_read_opts(in, name, &opts, &c->part) < 0)
			fail(c, "the agent on host %s sent a bad snapshot: its "
			     "ranks were detached; collect again", c->host);
		else if (c->part->nranks != f->s->nranks)
			fail(c, "the agent on host %s sent %d ranks, the job has "
			     "%d", c->host, c->part->nranks, f->s->nranks);
		if (in)
			fclose(in);
		free(name);
	}
	snap_groups_free(opts.groups);
}

/* One snapshot: the header of the front end's, each rank from whoever
 * collected it, in rank order. */
static struct snap *merge(struct fan *f)
{
	struct snap *m = snap_new(), *s = f->s;
	char *text;

	m->time = s->time;
	m->tool = snap_str(m, s->tool);
	m->host = snap_str(m, s->host);
	m->starter_pid = s->starter_pid;
	m->starter = snap_str(m, s->starter);
	m->looks = s->looks;
	m->interval_ms = s->interval_ms;
	snap_set_nranks(m, s->nranks);
	for (int i = 0; i < s->nranks; i++)
		if (s->ranks[i].state != SNAP_RANK_REMOTE)
			snap_copy_rank(m, s, i);
	for (int i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];

		for (int k = 0; k < c->nranks; k++) {
			int r = c->ranks[k];

			if (live(c) && c->part) {
				snap_copy_rank(m, c->part, r);
				m->ranks[r].host = snap_str(m, s->ranks[r].host);
				continue;
			}
			snap_copy_rank(m, s, r);
			text = xasprintf("not collected: %s", c->fail);
			m->ranks[r].reason = snap_str(m, text);
			free(text);
		}
	}
	return m;
}

/* The header fields of the DLL and types: the front end's, else the first
 * agent's that has them; then the notes of all. */
static void merge_meta(struct fan *f, struct snap *m)
{
	const struct snap *src = f->s;

	for (int i = 0; !src->dll && i < f->n; i++)
		if (f->c[i].part && f->c[i].part->dll)
			src = f->c[i].part;
	m->dll = snap_str(m, src->dll);
	m->mpi = snap_str(m, src->mpi);
	m->impl = snap_str(m, src->impl);
	m->types = snap_str(m, src->types);
	for (int i = 0; i < f->s->nnotes; i++)
		snap_note(m, "%s", f->s->notes[i]);
	for (int i = 0; i < f->n; i++)
		for (int k = 0; f->c[i].part && k < f->c[i].part->nnotes; k++)
			snap_note(m, "%s", f->c[i].part->notes[k]);
}

/* Signal a launcher's session (its group), or the launcher itself
 * before it made one. */
static void end_launcher(pid_t pid, int sig)
{
	if (kill(-pid, sig) < 0)
		kill(pid, sig);
}

/* Let every agent go: its input closes, it detaches whatever it holds and
 * exits; a launcher still there after the grace time is ended. */
static void close_all(struct fan *f, int grace_ms)
{
	long long end = md_now_ns() + grace_ms * 1000000LL;
	struct timespec ts = { 0, 10 * 1000000L };
	bool all;

	for (int i = 0; i < f->n; i++)
		if (f->c[i].in >= 0) {
			close(f->c[i].in);
			f->c[i].in = -1;
		}
	do {
		all = true;
		for (int i = 0; i < f->n; i++) {
			reap(&f->c[i], false);
			all &= f->c[i].pid <= 0 || f->c[i].reaped;
		}
	} while (!all && md_now_ns() < end && (nanosleep(&ts, NULL), 1));
	for (int i = 0; i < f->n; i++) {
		struct conn *c = &f->c[i];

		if (c->pid > 0 && !c->reaped) {
			end_launcher(c->pid, SIGTERM);
			for (int k = 0; k < 100 && !c->reaped; k++) {
				nanosleep(&ts, NULL);
				reap(c, false);
			}
			if (!c->reaped)
				end_launcher(c->pid, SIGKILL);
			reap(c, true);
		}
		if (c->out >= 0)
			close(c->out);
		if (c->err >= 0)
			close(c->err);
		c->out = c->err = -1;
	}
}

static void fan_free(struct fan *f)
{
	for (int i = 0; i < f->n; i++) {
		free(f->c[i].ranks);
		free(f->c[i].obuf);
		free(f->c[i].fail);
		snap_free(f->c[i].part);
	}
	free(f->c);
	ln_free(&f->ln);
}

static int run_agents(struct fan *f, struct snap **out)
{
	struct ag_stats st = { .hosts = f->n };
	long long t0 = md_now_ns();
	int rc = 0, i;

	for (i = 0; i < f->n; i++)
		start(f, &f->c[i]);
	for (i = 0; i < f->n; i++)
		send_job(f, &f->c[i]);
	if (!step(f, "start", check_hello, NULL) ||
	    !step(f, "preparing", check_ready, NULL))
		rc = -MD_E_INTR;
	st.start_ns = md_now_ns() - t0;
	t0 = md_now_ns();
	if (rc == 0)
		rc = looks(f);
	st.collect_ns = md_now_ns() - t0;
	t0 = md_now_ns();
	if (rc == 0) {
		for (i = 0; i < f->n; i++)
			send_line(&f->c[i], "send\n");
		if (!pump(f, W_EOF, md_now_ns() + f->o->timeout_s *
						   1000000000LL))
			rc = -MD_E_INTR;
	}
	st.transfer_ns = md_now_ns() - t0;
	if (rc < 0) {
		close_all(f, 10000);
		md_error("interrupted: every rank was detached and runs on, "
			 "every agent detached its ranks and ended");
		return rc;
	}
	t0 = md_now_ns();
	read_parts(f);
	*out = merge(f);
	merge_meta(f, *out);
	st.merge_ns = md_now_ns() - t0;
	close_all(f, 2000);
	if (f->o->stats)
		*f->o->stats = st;
	md_info("agents on %d hosts: start %.3f s, collection %.3f s, "
		"transfer %.3f s, merge %.3f s", st.hosts, st.start_ns / 1e9,
		st.collect_ns / 1e9, st.transfer_ns / 1e9, st.merge_ns / 1e9);
	return 0;
}

int ag_collect(const struct ag_opts *o, struct snap **out)
{
	struct col_opts co = o->col;
	struct fan f = { .o = o };
	struct snap *merged = NULL;
	int rc, k;

	/* Where the job's mpirun is not (the gstack hook on a host of a
	 * many-host job): only this host's ranks can be had. */
	if (ag_daemon_of(o->col.pid) > 0) {
		co.pid = ag_daemon_of(o->col.pid);
		return ag_collect_daemon(&co, out);
	}
	co.external_pace = true;
	ag_prefer_cpu();
	rc = col_open(&co, &f.col);
	if (rc < 0)
		return rc;
	f.s = col_snap(f.col);
	group_hosts(&f);
	if (!f.n) {
		/* One host: the plain collection. */
		for (k = 0, rc = 0; k < (co.looks > 0 ? co.looks : 1) && !rc; k++) {
			if (k)
				pause_ms(&f, co.interval_ms);
			rc = col_look(f.col, k);
		}
		if (rc < 0)
			md_error("interrupted: every rank was detached and runs "
				 "on");
		col_close(f.col, rc < 0 ? NULL : out);
		return rc;
	}
	rc = ln_setup(o, f.s->starter_pid, f.s->starter, &f.ln);
	signal(SIGPIPE, SIG_IGN);
	if (rc == 0)
		rc = run_agents(&f, &merged);
	col_close(f.col, NULL);
	fan_free(&f);
	if (rc < 0)
		return rc;
	*out = merged;
	return 0;
}
