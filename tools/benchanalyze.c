/*
 * benchanalyze - time the analysis of a synthetic snapshot built in
 * memory (reading is benchmarked with the snapshot reader).
 *
 *   benchanalyze KIND NRANKS
 *
 * KIND: ring (rank i in MPI_Recv from i + 1), wildcard (every rank in an
 * MPI_ANY_SOURCE receive), collective (all in MPI_Barrier but the last,
 * which waits in MPI_Recv from rank 0), bystanders (ranks 0 and 1 wait on
 * each other, the rest in MPI_Barrier behind them).  Prints
 * "analyze_N_KIND: S s" and "analyze_N_KIND_peak_rss: M MiB".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analyze.h"
#include "md.h"
#include "snap.h"

static void add_recv(struct snap *s, int i, int peer)
{
	struct snap_rank *r = &s->ranks[i];

	r->mpi_call = snap_str(s, "MPI_Recv");
	r->call_file = snap_str(s, "bench.c");
	r->call_line = 14;
	r->nops = 1;
	r->ops = xcalloc(1, sizeof(*r->ops));
	r->ops[0].kind = SNAP_OP_RECV;
	r->ops[0].comm = 0;
	r->ops[0].peer_local = peer;
	r->ops[0].peer_global = peer;
	r->ops[0].tag = 7;
	r->ops[0].length = 4096;
	r->ops[0].actual_global = -1;
}

static struct snap *build(const char *kind, int n)
{
	struct snap *s = snap_new();
	int *world = xmalloc((size_t)n * sizeof(int));

	snap_set_nranks(s, n);
	for (int i = 0; i < n; i++)
		world[i] = i;
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", n, world);
	free(world);
	for (int i = 0; i < n; i++) {
		struct snap_rank *r = &s->ranks[i];

		r->progress = SNAP_PROGRESS_STABLE;
		r->nmembers = 1;
		r->members = xcalloc(1, sizeof(*r->members));
		r->members[0].local_rank = i;
		if (!strcmp(kind, "ring"))
			add_recv(s, i, (i + 1) % n);
		else if (!strcmp(kind, "wildcard"))
			add_recv(s, i, -1);
		else if (!strcmp(kind, "collective") && i < n - 1)
			r->mpi_call = snap_str(s, "MPI_Barrier");
		else if (!strcmp(kind, "collective"))
			add_recv(s, i, 0);
		else if (i < 2)
			add_recv(s, i, 1 - i);
		else
			r->mpi_call = snap_str(s, "MPI_Barrier");
	}
	return s;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	struct snap *s;
	struct anl_result *r;
	long long t0, t1;
	int n;

	if (argc != 3 || (n = atoi(argv[2])) < 2) {
		fprintf(stderr, "usage: benchanalyze ring|wildcard|collective|"
				"bystanders NRANKS\n");
		return MD_EXIT_USAGE;
	}
	md_set_verbose(getenv("MD_VERBOSE") != NULL);
	s = build(argv[1], n);
	t0 = md_now_ns();
	r = anl_analyze(s);
	t1 = md_now_ns();
	getrusage(RUSAGE_SELF, &ru);
	printf("analyze_%d_%s: %.3f s (%s)\n", n, argv[1], (t1 - t0) / 1e9,
	       anl_verdict(r) == ANL_DEADLOCK ? "deadlock" : "no deadlock");
	printf("analyze_%d_%s_peak_rss: %ld MiB\n", n, argv[1],
	       ru.ru_maxrss / 1024);
	anl_result_free(r);
	snap_free(s);
	return 0;
}
