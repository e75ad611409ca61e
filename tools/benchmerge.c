/*
 * benchmerge - the front end's side of a collection at scale: PARTS
 * partial snapshots of RANKS ranks each (one per host's agent, or per
 * branch of a launcher's tree) arrive at once on PARTS pipes, are read in
 * parallel, merged into one snapshot of PARTS x RANKS ranks and analysed.
 *
 *   benchmerge [--parts P] [--ranks R] [--threads T] [--name NAME]
 *   defaults: 1024 parts of 1024 ranks (1,048,576 ranks), T = the
 *   processors online
 *
 * A child process plays the agents: it writes every part (a ring: rank i
 * waits in MPI_Recv from i-1, the lean ranks of gensnap, with the host
 * that collected them) into memory first, then feeds all the pipes at
 * once, non-blocking, whichever can take data.  The clock starts when
 * the child is ready to send, so only the front end's work is timed:
 * T threads each take the next pipe, read its snapshot (snap_read), and
 * merge it (snap_merge_part, one at a time under a lock); then the
 * analysis.  Prints "NAME_total: 1.234 s" lines: wall and CPU time (all
 * threads of this process, not the child's) of read + merge and of the
 * analysis, and this process's peak RSS.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze.h"
#include "md.h"
#include "snap.h"

struct bench {
	int parts, ranks, threads;
	int *rd;		/* read end of each part's pipe */
	atomic_int next;	/* the next part a reader takes */
	pthread_mutex_t lock;	/* dst, merge_ns */
	struct snap *dst;
	long long merge_ns;	/* thread CPU time in snap_merge_part */
	double feed_from;	/* the agents' CPU time when they start */
	struct snap_read_opts opts;	/* the groups all parts share */
	int failed;
};

/* Part p: ranks p*R .. p*R+R-1 (Open MPI's default mapping by slot). */
static struct snap *make_part(int p, int nparts, int nranks)
{
	struct snap *s = snap_new();
	int n = nparts * nranks;
	char host[32];
	const char *h;

	snprintf(host, sizeof(host), "node%04d", p);
	s->time = 1700000000;
	s->tool = snap_str(s, "mpi-deadlock " MD_VERSION);
	s->host = h = snap_str(s, host);
	s->looks = 2;
	s->interval_ms = 1000;
	s->job_nranks = n;
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", n, NULL);
	s->comms[0].group = snap_group_new(n);
	for (int i = 0; i < n; i++)
		s->comms[0].group[i] = i;
	s->ranks = xcalloc((size_t)nranks, sizeof(*s->ranks));
	s->nranks = nranks;
	for (int k = 0; k < nranks; k++) {
		struct snap_rank *r = &s->ranks[k];
		struct snap_op *op = xcalloc(1, sizeof(*op));
		int i = p * nranks + k;

		r->rank = i;
		r->pid = 10000 + k;
		r->host = r->collected_on = h;
		r->exe = snap_str(s, "/home/u/app");
		r->progress = SNAP_PROGRESS_STABLE;
		r->members = xcalloc(1, sizeof(*r->members));
		r->members[0].local_rank = i;
		r->nmembers = 1;
		r->mpi_call = snap_str(s, "MPI_Recv");
		r->call_func = snap_str(s, "main");
		r->call_file = snap_str(s, "bench.c");
		r->call_line = 20;
		op->kind = SNAP_OP_RECV;
		op->peer_local = op->peer_global = (i + n - 1) % n;
		op->tag = 7;
		op->length = 4096;
		op->actual_local = op->actual_global = -1;
		op->request = 0x555500100000ULL + 256ULL * (unsigned)k;
		r->ops = op;
		r->nops = 1;
	}
	return s;
}

static double cpu_of(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return cpu_of(&ru);
}

/* Write what the ready pipes take; returns the parts sent whole (their
 * pipes closed). */
static int feed(int parts, struct pollfd *pf, char **text, const size_t *len,
		size_t *off)
{
	int done = 0;

	for (int p = 0; p < parts; p++) {
		ssize_t n;

		if (pf[p].fd < 0 || !pf[p].revents)
			continue;
		n = write(pf[p].fd, text[p] + off[p], len[p] - off[p]);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			_exit(1);
		if (n > 0)
			off[p] += (size_t)n;
		if (off[p] == len[p]) {
			close(pf[p].fd);
			pf[p].fd = -1;
			done++;
		}
	}
	return done;
}

/*
 * The agents: every part written, then all pipes fed at once.  Each
 * pipe is made big enough for its part where the system allows
 * (F_SETPIPE_SZ) and filled before the clock starts: the parts have
 * all arrived.  What does not fit is fed by a poll loop while the front
 * end reads (its CPU time is printed apart).
 */
static void agents(struct bench *b, const int *wr, int go)
{
	char **text = xcalloc((size_t)b->parts, sizeof(*text));
	size_t *len = xcalloc((size_t)b->parts, sizeof(*len));
	size_t *off = xcalloc((size_t)b->parts, sizeof(*off));
	struct pollfd *pf = xcalloc((size_t)b->parts, sizeof(*pf));
	int left = b->parts;
	double at;

	for (int p = 0; p < b->parts; p++) {
		struct snap *s = make_part(p, b->parts, b->ranks);
		FILE *f = open_memstream(&text[p], &len[p]);

		if (!f || snap_write(s, f) < 0 || fclose(f) != 0)
			_exit(1);
		snap_free(s);
		fcntl(wr[p], F_SETFL, O_NONBLOCK);
		fcntl(wr[p], F_SETPIPE_SZ, (int)len[p]);
		pf[p].fd = wr[p];
		pf[p].events = POLLOUT;
		pf[p].revents = POLLOUT;
	}
	left -= feed(b->parts, pf, text, len, off);
	/* Go, with the CPU time spent so far (making the parts). */
	at = cpu_s();
	if (write(go, &at, sizeof(at)) != sizeof(at))
		_exit(1);
	while (left > 0) {
		if (poll(pf, (nfds_t)b->parts, -1) < 0 && errno != EINTR)
			_exit(1);
		left -= feed(b->parts, pf, text, len, off);
	}
	_exit(0);
}

static long long thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *reader(void *arg)
{
	struct bench *b = arg;
	int p;

	while ((p = atomic_fetch_add(&b->next, 1)) < b->parts) {
		FILE *f = fdopen(b->rd[p], "r");
		char name[64];
		struct snap *part;
		int rc;

		snprintf(name, sizeof(name), "part %d", p);
		rc = f ? snap_read_opts(f, name, &b->opts, &part) : -MD_E_SYS;
		if (f)
			fclose(f);
		pthread_mutex_lock(&b->lock);
		if (rc == 0) {
			long long m0 = thread_ns();

			rc = snap_merge_part(b->dst, part);
			b->merge_ns += thread_ns() - m0;
		}
		if (rc < 0)
			b->failed = 1;
		pthread_mutex_unlock(&b->lock);
		if (rc == 0)
			snap_free(part);
	}
	return NULL;
}

/* Two descriptors per pipe, and room for the rest. */
static int raise_fd_limit(int parts)
{
	struct rlimit rl;
	rlim_t want = 2 * (rlim_t)parts + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		md_error("%d pipes need %lu descriptors, the hard limit is %lu: "
			 "raise it (ulimit -Hn) or give fewer --parts",
			 parts, (unsigned long)want,
			 (unsigned long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static int parse_args(int argc, char **argv, struct bench *b,
		      const char **name)
{
	for (int i = 1; i < argc; i++) {
		int *v = !strcmp(argv[i], "--parts")     ? &b->parts
			 : !strcmp(argv[i], "--ranks")   ? &b->ranks
			 : !strcmp(argv[i], "--threads") ? &b->threads
							 : NULL;

		if (!strcmp(argv[i], "--name") && i + 1 < argc) {
			*name = argv[++i];
			continue;
		}
		if (!v || i + 1 >= argc || (*v = atoi(argv[++i])) < 1) {
			fprintf(stderr, "usage: benchmerge [--parts P] "
					"[--ranks R] [--threads T] "
					"[--name NAME]\n");
			return -1;
		}
	}
	return 0;
}

static void make_dst(struct bench *b)
{
	struct snap *s = snap_new();

	s->time = 1700000000;
	s->tool = snap_str(s, "mpi-deadlock " MD_VERSION);
	s->host = snap_str(s, "front");
	s->looks = 2;
	s->interval_ms = 1000;
	snap_set_nranks(s, b->parts * b->ranks);
	b->dst = s;
}

int main(int argc, char **argv)
{
	struct bench b = { .parts = 1024, .ranks = 1024 };
	const char *name = NULL;
	pthread_t *th;
	int *wr, ctl[2], status;
	long long t0, t1, t2;
	double c0, c1, c2;
	struct anl_result *res;
	struct rusage ru, child;
	long merge_rss;
	pid_t pid;

	md_malloc_tune();

	b.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (parse_args(argc, argv, &b, &name) < 0 ||
	    raise_fd_limit(b.parts) < 0)
		return MD_EXIT_ERROR;
	if (!name)
		name = xasprintf("merge_%dx%d", b.parts, b.ranks);
	b.rd = xcalloc((size_t)b.parts, sizeof(*b.rd));
	wr = xcalloc((size_t)b.parts, sizeof(*wr));
	for (int p = 0; p < b.parts; p++) {
		int fd[2];

		if (pipe2(fd, O_CLOEXEC) != 0) {
			md_error("pipe: %s", strerror(errno));
			return MD_EXIT_ERROR;
		}
		b.rd[p] = fd[0];
		wr[p] = fd[1];
	}
	if (pipe2(ctl, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		md_error("pipe or fork: %s", strerror(errno));
		return MD_EXIT_ERROR;
	}
	if (pid == 0) {
		for (int p = 0; p < b.parts; p++)
			close(b.rd[p]);
		close(ctl[0]);
		agents(&b, wr, ctl[1]);
	}
	for (int p = 0; p < b.parts; p++)
		close(wr[p]);
	close(ctl[1]);
	if (read(ctl[0], &b.feed_from, sizeof(b.feed_from)) !=
	    sizeof(b.feed_from)) {
		md_error("the agents' process failed before sending");
		waitpid(pid, NULL, 0);
		return MD_EXIT_ERROR;
	}
	c0 = cpu_s();
	t0 = md_now_ns();
	make_dst(&b);
	pthread_mutex_init(&b.lock, NULL);
	b.opts.groups = snap_groups_new();
	th = xcalloc((size_t)b.threads, sizeof(*th));
	for (int i = 0; i < b.threads; i++)
		pthread_create(&th[i], NULL, reader, &b);
	for (int i = 0; i < b.threads; i++)
		pthread_join(th[i], NULL);
	t1 = md_now_ns();
	c1 = cpu_s();
	getrusage(RUSAGE_SELF, &ru);
	merge_rss = ru.ru_maxrss / 1024;
	if (wait4(pid, &status, 0, &child) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || b.failed) {
		md_error("a part could not be sent, read or merged");
		return MD_EXIT_ERROR;
	}
	res = anl_analyze(b.dst);
	t2 = md_now_ns();
	c2 = cpu_s();
	getrusage(RUSAGE_SELF, &ru);
	printf("%s_ranks: %d\n", name, b.parts * b.ranks);
	printf("%s_threads: %d\n", name, b.threads);
	printf("%s_read_merge: %.3f s\n", name, (double)(t1 - t0) / 1e9);
	printf("%s_analyse: %.3f s\n", name, (double)(t2 - t1) / 1e9);
	printf("%s_total: %.3f s (target < 3 s at 1024x1024)\n", name,
	       (double)(t2 - t0) / 1e9);
	printf("%s_read_merge_cpu: %.3f s\n", name, c1 - c0);
	printf("%s_merge_cpu: %.3f s (of read_merge_cpu)\n", name,
	       (double)b.merge_ns / 1e9);
	printf("%s_analyse_cpu: %.3f s\n", name, c2 - c1);
	printf("%s_agents_feed_cpu: %.3f s (the child that plays the "
	       "agents, while the clock runs: not the front end's)\n", name,
	       cpu_of(&child) - b.feed_from);
	printf("%s_merge_peak_rss: %ld MiB\n", name, merge_rss);
	printf("%s_peak_rss: %ld MiB (target < 1536 MiB)\n", name,
	       ru.ru_maxrss / 1024);
	printf("%s_verdict: %s\n", name,
	       anl_verdict(res) == ANL_DEADLOCK ? "deadlock" : "no-deadlock");
	anl_result_free(res);
	snap_free(b.dst);
	snap_groups_free(b.opts.groups);
	return 0;
}
