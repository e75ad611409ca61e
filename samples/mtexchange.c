/* MPI_THREAD_MULTIPLE, 2 ranks, healthy: 4 threads per rank exchange messages with MPI_Isend/MPI_Irecv/MPI_Waitall (a tag per thread) and reduce with MPI_Iallreduce on a communicator per thread; rank 0 prints a checksum. */
#include <pthread.h>
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

#define THREADS 4
#define ROUNDS 200

static int rank;
static MPI_Comm comms[THREADS];
static unsigned long long sums[THREADS];

static void *worker(void *arg)
{
	int t = (int)(long)arg, peer = 1 - rank;
	unsigned long long sum = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int out = rank * 1000003 + t * 7919 + i, in = 0, red = 0;
		MPI_Request req[2];

		MPI_Irecv(&in, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(&out, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		sum = sum * 31 + (unsigned)in;
		if (i % 20 == 0) {
			MPI_Iallreduce(&in, &red, 1, MPI_INT, MPI_SUM, comms[t],
				       &req[0]);
			MPI_Wait(&req[0], MPI_STATUS_IGNORE);
			sum += (unsigned)red;
		}
	}
	sums[t] = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	pthread_t th[THREADS];
	unsigned long long total = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided != MPI_THREAD_MULTIPLE) {
		printf("MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	sample_mark("STARTED", rank);
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		total ^= sums[t] + (unsigned long long)t;
	}
	if (rank == 0)
		printf("mtexchange threads=%d rounds=%d checksum=%llx\n",
		       THREADS, ROUNDS, total);
	for (int t = 0; t < THREADS; t++)
		MPI_Comm_free(&comms[t]);
	MPI_Finalize();
	return 0;
}
