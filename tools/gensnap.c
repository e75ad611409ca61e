/*
 * gensnap - write a synthetic snapshot for benchmarks and tests.
 *
 *   gensnap [--stacks] KIND NRANKS [FILE]   (FILE defaults to stdout)
 *   gensnap [--threads N] --read FILE [NAME]
 *                                  read FILE with snap_read_opts (N
 *                                  threads, default 1), analyse it
 *                                  with anl_analyze, print the times
 *                                  (wall and this process's CPU) and
 *                                  the peak RSS as "NAME_read: 0.71 s"
 *                                  lines (NAME defaults to "snapshot")
 *
 * KIND: ring (rank i waits in MPI_Recv from i-1), wildcard (everyone in
 * an MPI_ANY_SOURCE receive), collective (all in MPI_Barrier but the
 * last rank, which computes), bystanders (ranks 0 and 1 wait on each
 * other, the rest sit in MPI_Barrier behind them).  The ranks are lean
 * versions of what the collector writes: pid, host, the call and its
 * site, the membership and one operation, about 270 bytes a rank: the
 * analyzer needs no stack.  --stacks adds the collector's per-thread
 * stack, 2 frames (the MPI call and the user's frame), about 530 bytes
 * a rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analyze.h"
#include "md.h"
#include "snap.h"

enum kind { RING, WILDCARD, COLLECTIVE, BYSTANDERS };

struct gen {
	struct snap *s;
	enum kind kind;
	int n;
	bool stacks;
};

static void add_recv(struct snap_rank *r, int peer)
{
	struct snap_op *op = xcalloc(1, sizeof(*op));

	op->kind = SNAP_OP_RECV;
	op->comm = 0;
	op->peer_local = op->peer_global = peer;
	op->tag = peer < 0 ? 0 : 7;
	op->length = 4096;
	op->actual_local = op->actual_global = -1;
	op->request = 0x555500100000ULL + 256ULL * (unsigned)r->rank;
	r->ops = op;
	r->nops = 1;
}

/* The call and its site; with stacks, the thread they come from. */
static void add_call(struct gen *g, struct snap_rank *r, const char *call,
		     const char *pmpi, int line)
{
	struct snap *s = g->s;
	struct snap_thread *t;
	struct snap_frame *f;

	r->mpi_call = snap_str(s, call);
	r->call_func = snap_str(s, "main");
	r->call_file = snap_str(s, "bench.c");
	r->call_line = line;
	if (!g->stacks)
		return;
	t = xcalloc(1, sizeof(*t));
	f = xcalloc(2, sizeof(*f));

	f[0] = (struct snap_frame){.pc = 0x7f1200002000,
				   .func = snap_str(s, pmpi),
				   .object = snap_str(s, "libmpi.so.40")};
	f[1] = (struct snap_frame){.pc = 0x555500001234,
				   .func = snap_str(s, "main"), .object = r->exe,
				   .file = snap_str(s, "bench.c"), .line = line};
	t->tid = r->pid;
	t->mpi_call = snap_str(s, call);
	t->mpi_frame = 0;
	t->user_frame = 1;
	t->nframes = 2;
	t->frames = f;
	r->threads = t;
	r->nthreads = 1;
}

static void fill_rank(struct gen *g, struct snap_rank *r)
{
	struct snap *s = g->s;
	char host[32];
	int i = r->rank;
	bool barrier =
		g->kind == COLLECTIVE || (g->kind == BYSTANDERS && i > 1);

	snprintf(host, sizeof(host), "node%05d", i / 64);
	r->pid = 10000 + i % 64;
	r->host = snap_str(s, host);
	r->exe = snap_str(s, "/home/u/app");
	r->progress = SNAP_PROGRESS_STABLE;
	r->members = xcalloc(1, sizeof(*r->members));
	r->members[0].local_rank = i;
	r->nmembers = 1;
	if (g->kind == COLLECTIVE && i == g->n - 1) {
		r->progress = SNAP_PROGRESS_CHANGED;
		return;
	}
	if (barrier) {
		add_call(g, r, "MPI_Barrier", "PMPI_Barrier", 30);
		return;
	}
	add_call(g, r, "MPI_Recv", "PMPI_Recv", 20);
	if (g->kind == WILDCARD)
		add_recv(r, -1);
	else if (g->kind == BYSTANDERS)
		add_recv(r, 1 - i);
	else
		add_recv(r, (i + g->n - 1) % g->n);
}

static int parse_kind(const char *name, enum kind *k)
{
	static const char *const names[] = {"ring", "wildcard", "collective",
					    "bystanders"};

	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0) {
			*k = (enum kind)i;
			return 0;
		}
	return -1;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The benchmark side: read, analyse, "NAME_read: 0.123 s" lines.  Wall
 * time is what a user waits; CPU time (all threads) shows the work when
 * the machine is shared. */
static int read_mode(const char *path, const char *name, int threads)
{
	struct snap_read_opts opts = {.threads = threads};
	struct anl_result *res;
	struct rusage ru;
	struct snap *s;
	long long t0, t1, t2;
	double c0, c1, c2;
	long read_rss;
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		md_error("fopen(%s): cannot read the snapshot", path);
		return MD_EXIT_ERROR;
	}
	c0 = cpu_s();
	t0 = md_now_ns();
	ret = snap_read_opts(f, path, &opts, &s);
	fclose(f);
	if (ret)
		return MD_EXIT_ERROR;
	t1 = md_now_ns();
	c1 = cpu_s();
	getrusage(RUSAGE_SELF, &ru);
	read_rss = ru.ru_maxrss / 1024;
	res = anl_analyze(s);
	t2 = md_now_ns();
	c2 = cpu_s();
	getrusage(RUSAGE_SELF, &ru);
	printf("%s_read: %.3f s\n", name, (double)(t1 - t0) / 1e9);
	printf("%s_analyse: %.3f s\n", name, (double)(t2 - t1) / 1e9);
	printf("%s_total: %.3f s\n", name, (double)(t2 - t0) / 1e9);
	printf("%s_read_cpu: %.3f s\n", name, c1 - c0);
	printf("%s_read_threads: %d\n", name, opts.threads_used);
	printf("%s_analyse_cpu: %.3f s\n", name, c2 - c1);
	printf("%s_read_peak_rss: %ld MiB\n", name, read_rss);
	printf("%s_peak_rss: %ld MiB\n", name, ru.ru_maxrss / 1024);
	printf("%s_verdict: %s\n", name,
	       anl_verdict(res) == ANL_DEADLOCK ? "deadlock" : "no-deadlock");
	anl_result_free(res);
	snap_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct gen g = {0};
	FILE *out = stdout;
	int *group, ret, threads = 1;

	md_malloc_tune();
	if (argc > 2 && strcmp(argv[1], "--threads") == 0) {
		threads = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "--read") == 0)
		return read_mode(argv[2], argc == 4 ? argv[3] : "snapshot",
				 threads);
	if (argc > 1 && strcmp(argv[1], "--stacks") == 0) {
		g.stacks = true;
		argv++;
		argc--;
	}
	if (argc < 3 || parse_kind(argv[1], &g.kind) || atoi(argv[2]) < 2) {
		fprintf(stderr, "usage: gensnap [--stacks] ring|wildcard|"
				"collective|bystanders NRANKS(>=2) [FILE]\n"
				"       gensnap --read FILE [NAME]\n");
		return MD_EXIT_USAGE;
	}
	g.n = atoi(argv[2]);
	if (argc > 3 && !(out = fopen(argv[3], "w"))) {
		md_error("fopen(%s): cannot write the snapshot", argv[3]);
		return MD_EXIT_ERROR;
	}
	g.s = snap_new();
	g.s->time = 1700000000;
	g.s->tool = snap_str(g.s, "gensnap (mpi-deadlock " MD_VERSION ")");
	g.s->looks = 2;
	g.s->interval_ms = 1000;
	group = xmalloc((size_t)g.n * sizeof(*group));
	for (int i = 0; i < g.n; i++)
		group[i] = i;
	snap_comm_intern(g.s, 0, "MPI_COMM_WORLD", g.n, group);
	free(group);
	snap_set_nranks(g.s, g.n);
	for (int i = 0; i < g.n; i++)
		fill_rank(&g, &g.s->ranks[i]);
	ret = snap_write(g.s, out);
	snap_free(g.s);
	if (out != stdout && fclose(out) != 0)
		ret = -MD_E_SYS;
	return ret ? MD_EXIT_ERROR : 0;
}
