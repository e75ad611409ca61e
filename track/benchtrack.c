/*
 * benchtrack.c - what libmdtrack.so costs in the job (make bench,
 * scripts/bench-track.sh).  Run with the library preloaded on 2 ranks:
 * the same loops are timed through MPI_* (the library's wrappers) and
 * through PMPI_* (straight into the MPI library), alternating round by
 * round in one run, so both see the same machine.  Loops: a message
 * rate (MPI_Isend/MPI_Irecv of WINDOW small messages each way, then
 * MPI_Waitall) and a small MPI_Allreduce.  Rank 0 prints "name: value
 * unit" lines: rates of the fastest round of each (least disturbed);
 * overheads as the median of the per-round ratios of wall time (the
 * slower rank's) and of CPU time (user + system of both ranks: less
 * moved by other processes on a shared machine), and of the fastest
 * rounds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <mpi.h>

#define WINDOW 16

/* Wall time; the minimum over many short rounds is the least disturbed
 * (the machine may be shared). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process's CPU time (its threads, user + system). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One timed loop: wall and CPU seconds. */
struct span {
	double wall, cpu;
};

static struct span start(void)
{
	return (struct span){ now(), cpu_now() };
}

static struct span since(struct span t0)
{
	return (struct span){ now() - t0.wall, cpu_now() - t0.cpu };
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of the per-round ratios tracked/plain: each round times
 * both back to back, so a slow phase of the machine cancels out. */
static double paired(const double *t, const double *p, int n)
{
	double *q = calloc((size_t)n, sizeof(double)), m;

	for (int i = 0; i < n; i++)
		q[i] = t[i] / p[i];
	m = median(q, n);
	free(q);
	return (m - 1) * 100;
}

static double least(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/* Seconds for iters windows of messages, through MPI_* or PMPI_*. */
static struct span msgrate(int iters, int peer, int tracked)
{
	int out[WINDOW], in[WINDOW];
	MPI_Request req[2 * WINDOW];
	struct span t0;

	for (int k = 0; k < WINDOW; k++)
		out[k] = k;
	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = start();
	for (int i = 0; i < iters; i++) {
		for (int k = 0; k < WINDOW; k++) {
			if (tracked) {
				MPI_Irecv(&in[k], 1, MPI_INT, peer, k,
					  MPI_COMM_WORLD, &req[k]);
				MPI_Isend(&out[k], 1, MPI_INT, peer, k,
					  MPI_COMM_WORLD, &req[WINDOW + k]);
			} else {
				PMPI_Irecv(&in[k], 1, MPI_INT, peer, k,
					   MPI_COMM_WORLD, &req[k]);
				PMPI_Isend(&out[k], 1, MPI_INT, peer, k,
					   MPI_COMM_WORLD, &req[WINDOW + k]);
			}
		}
		PMPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
	}
	return since(t0);
}

static struct span allreduce(int iters, int tracked)
{
	int in = 1, out = 0;
	struct span t0;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = start();
	for (int i = 0; i < iters; i++) {
		if (tracked)
			MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM,
				      MPI_COMM_WORLD);
		else
			PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM,
				       MPI_COMM_WORLD);
	}
	return since(t0);
}

/* The slower rank's wall time (what the job sees) and the CPU time of
 * both. */
static struct span job_time(struct span t)
{
	struct span m;

	PMPI_Allreduce(&t.wall, &m.wall, 1, MPI_DOUBLE, MPI_MAX,
		       MPI_COMM_WORLD);
	PMPI_Allreduce(&t.cpu, &m.cpu, 1, MPI_DOUBLE, MPI_SUM,
		       MPI_COMM_WORLD);
	return m;
}

int main(int argc, char **argv)
{
	int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 400;
	int miters = argc > 2 ? atoi(argv[2]) : 200;
	int aiters = argc > 3 ? atoi(argv[3]) : 2000;
	double *mp, *mt, *ap, *at, *cmp, *cmt, *cap, *cat;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || rounds < 1 || miters < 1 || aiters < 1) {
		if (!rank)
			fprintf(stderr, "benchtrack: run on 2 ranks: "
					"benchtrack [ROUNDS MSG_ITERS "
					"ALLREDUCE_ITERS]\n");
		MPI_Abort(MPI_COMM_WORLD, 64);
	}
	if (!dlsym(RTLD_DEFAULT, "md_track_table")) {
		if (!rank)
			fprintf(stderr, "benchtrack: libmdtrack.so is not "
					"loaded: run with mpirun -x "
					"LD_PRELOAD=.../libmdtrack.so\n");
		MPI_Abort(MPI_COMM_WORLD, 64);
	}
	mp = calloc((size_t)rounds, sizeof(double));
	mt = calloc((size_t)rounds, sizeof(double));
	ap = calloc((size_t)rounds, sizeof(double));
	at = calloc((size_t)rounds, sizeof(double));
	cmp = calloc((size_t)rounds, sizeof(double));
	cmt = calloc((size_t)rounds, sizeof(double));
	cap = calloc((size_t)rounds, sizeof(double));
	cat = calloc((size_t)rounds, sizeof(double));
	msgrate(miters / 10 + 1, 1 - rank, 1);	/* warm up */
	allreduce(aiters / 10 + 1, 1);
	for (int r = 0; r < rounds; r++) {
		/* Alternate which goes first: no order bias. */
		int first = r % 2;

		for (int k = 0; k < 2; k++) {
			int tr = k ^ first;
			struct span t = job_time(msgrate(miters, 1 - rank, tr));

			(tr ? mt : mp)[r] = t.wall;
			(tr ? cmt : cmp)[r] = t.cpu;
		}
		for (int k = 0; k < 2; k++) {
			int tr = k ^ first;
			struct span t = job_time(allreduce(aiters, tr));

			(tr ? at : ap)[r] = t.wall;
			(tr ? cat : cap)[r] = t.cpu;
		}
	}
	if (!rank) {
		double msgs = 2.0 * WINDOW * miters;
		double p = least(mp, rounds), t = least(mt, rounds);
		double pa = least(ap, rounds), ta = least(at, rounds);

		printf("track_msgrate_plain: %.0f msgs/s\n", msgs / p);
		printf("track_msgrate_tracked: %.0f msgs/s\n", msgs / t);
		printf("track_msgrate_overhead: %.2f %%\n",
		       paired(mt, mp, rounds));
		printf("track_msgrate_overhead_cpu: %.2f %%\n",
		       paired(cmt, cmp, rounds));
		printf("track_msgrate_overhead_fastest: %.2f %%\n",
		       (t / p - 1) * 100);
		printf("track_allreduce_plain: %.3f us\n", pa / aiters * 1e6);
		printf("track_allreduce_tracked: %.3f us\n", ta / aiters * 1e6);
		printf("track_allreduce_overhead: %.2f %%\n",
		       paired(at, ap, rounds));
		printf("track_allreduce_overhead_cpu: %.2f %%\n",
		       paired(cat, cap, rounds));
		printf("track_allreduce_overhead_fastest: %.2f %%\n",
		       (ta / pa - 1) * 100);
	}
	free(mp);
	free(mt);
	free(ap);
	free(at);
	free(cmp);
	free(cmt);
	free(cap);
	free(cat);
	MPI_Finalize();
	return 0;
}
