/*
 * agent.c - `mpi-deadlock agent`: the collector of one host, driven by
 * the front end over standard input and output (doc/agents.md).  A
 * watcher thread owns standard input: it queues the commands and, when
 * the input ends or the output's reader goes away, sets the stop flag,
 * so that a look in progress detaches every rank and the agent exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent.h"
#include "md.h"

#define AG_LINE_MAX 8192

struct ag_in {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char buf[AG_LINE_MAX * 2];
	size_t len;
	bool eof;		/* input closed, or output's reader gone */
	const char *why;
	volatile sig_atomic_t *stop;
};

static void in_end(struct ag_in *in, const char *why)
{
	pthread_mutex_lock(&in->mu);
	if (!in->eof) {
		in->eof = true;
		in->why = why;
	}
	__atomic_store_n(in->stop, SIGHUP, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&in->cv);
	pthread_mutex_unlock(&in->mu);
}

/* The watcher: reads fd 0 into the buffer and watches fd 1. */
static void *watch(void *arg)
{
	struct ag_in *in = arg;
	struct pollfd pf[2] = { { 0, POLLIN, 0 }, { 1, 0, 0 } };

	for (;;) {
		char tmp[4096];
		ssize_t n;

		if (poll(pf, 2, 200) < 0 && errno != EINTR) {
			in_end(in, "poll failed");
			return NULL;
		}
		if (*in->stop) {
			/* A signal: wake the command wait. */
			pthread_mutex_lock(&in->mu);
			pthread_cond_broadcast(&in->cv);
			pthread_mutex_unlock(&in->mu);
		}
		if (pf[1].revents & (POLLERR | POLLHUP)) {
			in_end(in, "the front end's end of the output closed");
			return NULL;
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(0, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			in_end(in, "the input closed");
			return NULL;
		}
		pthread_mutex_lock(&in->mu);
		if (in->len + (size_t)n > sizeof(in->buf)) {
			pthread_mutex_unlock(&in->mu);
			in_end(in, "a command line is too long");
			return NULL;
		}
		memcpy(in->buf + in->len, tmp, (size_t)n);
		in->len += (size_t)n;
		pthread_cond_broadcast(&in->cv);
		pthread_mutex_unlock(&in->mu);
	}
}

/* The next command line (malloc'ed, no newline), or NULL at the end or on
 * a stop. */
static char *next_line(struct ag_in *in)
{
	char *line = NULL, *nl;

	pthread_mutex_lock(&in->mu);
	for (;;) {
		nl = memchr(in->buf, '\n', in->len);
		if (nl) {
			size_t n = (size_t)(nl - in->buf);

			line = xstrndup(in->buf, n);
			memmove(in->buf, nl + 1, in->len - n - 1);
			in->len -= n + 1;
			break;
		}
		if (in->eof || *in->stop)
			break;
		pthread_cond_wait(&in->cv, &in->mu);
	}
	pthread_mutex_unlock(&in->mu);
	return line;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* "hello PROTO VERSION SNAPVERSION" from the front end. */
static int check_hello(const char *line)
{
	char ver[64];
	int proto, sv;

	if (sscanf(line, "hello %d %63s %d", &proto, ver, &sv) != 3) {
		say("refused expected a hello line");
		md_error("agent: the front end did not greet as mpi-deadlock "
			 "does: '%.80s'", line);
		return -MD_E_INPUT;
	}
	if (proto != AG_PROTO || strcmp(ver, MD_VERSION) || sv != SNAP_VERSION) {
		say("refused agent is mpi-deadlock %s (protocol %d, snapshot "
		    "%d)", MD_VERSION, AG_PROTO, SNAP_VERSION);
		md_error("agent: the front end is mpi-deadlock %s (protocol %d, "
			 "snapshot %d), this agent %s (protocol %d, snapshot "
			 "%d): install the same version on every host",
			 ver, proto, sv, MD_VERSION, AG_PROTO, SNAP_VERSION);
		return -MD_E_INPUT;
	}
	return 0;
}

/* Bits of the job line's FLAGS. */
enum { AG_JOB_NO_OB1 = 1 };

struct ag_job {
	int nranks, looks, flags, n, cap;
	struct col_target *t;
};

static void job_free(struct ag_job *j)
{
	for (int i = 0; i < j->n; i++)
		free((char *)j->t[i].exe);
	free(j->t);
}

/* "job NRANKS LOOKS [FLAGS]", then "rank G PID EXE" lines, then "go". */
static int read_job(struct ag_in *in, struct ag_job *j)
{
	char *line;
	int rc = -MD_E_INPUT;

	while ((line = next_line(in))) {
		int g, pid, off = 0;

		if (!strcmp(line, "go")) {
			rc = j->nranks > 0 ? 0 : -MD_E_INPUT;
			free(line);
			break;
		}
		if (sscanf(line, "job %d %d %d", &j->nranks, &j->looks,
			   &j->flags) >= 2) {
			free(line);
			continue;
		}
		if (sscanf(line, "rank %d %d %n", &g, &pid, &off) == 2 &&
		    off > 0 && g >= 0 && g < j->nranks && pid > 0) {
			if (j->n == j->cap) {
				j->cap = j->cap ? 2 * j->cap : 16;
				j->t = xrealloc(j->t, (size_t)j->cap *
							      sizeof(*j->t));
			}
			j->t[j->n].rank = g;
			j->t[j->n].pid = pid;
			j->t[j->n++].exe = xstrdup(line + off);
			free(line);
			continue;
		}
		md_error("agent: bad command from the front end: '%.80s'", line);
		free(line);
		return -MD_E_INPUT;
	}
	return rc;
}

/* The looks, as the front end calls them, then the snapshot. */
static int serve(struct ag_in *in, struct col *c)
{
	char *line;
	int look, rc;

	while ((line = next_line(in))) {
		if (sscanf(line, "look %d", &look) == 1) {
			free(line);
			rc = col_look(c, look);
			if (rc < 0)
				return rc;
			say("looked %d", look);
			continue;
		}
		if (!strcmp(line, "send")) {
			free(line);
			if (snap_write(col_snap(c), stdout) || fflush(stdout))
				return -MD_E_SYS;
			return 0;
		}
		md_error("agent: bad command from the front end: '%.80s'", line);
		free(line);
		return -MD_E_INPUT;
	}
	return -MD_E_INTR;
}

static int run_agent(struct ag_in *in, const struct col_opts *base)
{
	struct ag_job j = { 0 };
	struct col_opts o = {
		.dll = base->dll,
		.interval_ms = 0,
		.ompi_incdir = base->ompi_incdir,
		.ompi_srcdir = base->ompi_srcdir,
		.no_line_memo = base->no_line_memo,
	};
	struct col *c = NULL;
	char *line;
	int rc;

	line = next_line(in);
	if (!line)
		return -MD_E_INTR;
	rc = check_hello(line);
	free(line);
	if (rc == 0)
		rc = read_job(in, &j);
	if (rc == 0) {
		o.looks = j.looks;
		o.no_ob1 = j.flags & AG_JOB_NO_OB1;
		o.stop = in->stop;
		rc = col_open_pids(&o, j.nranks, j.t, j.n, &c);
	}
	if (rc == 0) {
		say("ready %d", j.n);
		rc = serve(in, c);
	}
	col_close(c, NULL);
	job_free(&j);
	return rc;
}

void ag_prefer_cpu(void)
{
	/* Before any thread is made: Linux applies it to the caller only,
	 * and threads inherit it. */
	if (getpriority(PRIO_PROCESS, 0) > AG_NICE)
		(void)setpriority(PRIO_PROCESS, 0, AG_NICE);
}

void ag_prefer_cpu_session(void)
{
	char v[16];
	ssize_t w;
	int fd, n;

	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(v, sizeof(v), "%d", AG_NICE);
	/* EPERM without the right, as for setpriority: nothing changes. */
	w = write(fd, v, (size_t)n);
	(void)w;
	close(fd);
}

int ag_main(const struct col_opts *base, volatile sig_atomic_t *stop)
{
	struct ag_in in = { .stop = stop };
	char host[256] = "";
	pthread_t th;
	int rc;

	/* A front end gone mid-write is an error return, not a death with
	 * ranks stopped. */
	signal(SIGPIPE, SIG_IGN);
	ag_prefer_cpu();
	/* The session the agent runs in is the one its launcher made for it
	 * (ssh's, the tool's own mpirun's orted, srun's task): raising its
	 * share raises the agent's and that of what relays its input and
	 * output (orted). */
	ag_prefer_cpu_session();
	pthread_mutex_init(&in.mu, NULL);
	pthread_cond_init(&in.cv, NULL);
	gethostname(host, sizeof(host) - 1);
	say("%s %d %s %d %s", AG_MAGIC, AG_PROTO, MD_VERSION, SNAP_VERSION,
	    host);
	if (pthread_create(&th, NULL, watch, &in)) {
		md_error("agent: pthread_create: %s", strerror(errno));
		return MD_EXIT_ERROR;
	}
	pthread_detach(th);
	rc = run_agent(&in, base);
	if (rc == -MD_E_INTR)
		md_error("agent on %s: %s: every rank was detached and runs "
			 "on", host, in.why ? in.why : "interrupted");
	/* The watcher may still block in poll: exit without joining it. */
	fflush(stdout);
	return rc ? MD_EXIT_ERROR : 0;
}
