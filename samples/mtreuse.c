/* MPI_THREAD_MULTIPLE, 2 ranks: a request handle reused across threads. Rank 0's main thread receives tag 0, a second thread then receives tag 1 (both complete: MPI libraries recycle the request object, so the three receives get the same handle), then the main thread posts a receive for tag 2 that rank 1 never sends; rank 1 waits for tag 3 from rank 0. The posting named must be the main thread's last one, not the other thread's older one. */
#include <pthread.h>
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

static void *second_thread(void *arg)
{
	MPI_Request req;
	int v = 0;

	(void)arg;
	MPI_Irecv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	return NULL;
}

int main(int argc, char **argv)
{
	int rank, provided, v = 0, one = 1;
	MPI_Request req;
	pthread_t t;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided != MPI_THREAD_MULTIPLE) {
		printf("MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Irecv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		pthread_create(&t, NULL, second_thread, NULL);
		pthread_join(t, NULL);
		MPI_Irecv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &req); /* POSTED */
		sample_mark("READY", rank);
		MPI_Wait(&req, MPI_STATUS_IGNORE); /* STUCK */
	} else {
		MPI_Send(&one, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		MPI_Send(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	}
	MPI_Finalize();
	return 0;
}
