/* MPI_THREAD_MULTIPLE, 2 ranks: two threads of rank 0 wait in MPI_Recv from rank 1 (tags 1 and 2) while rank 1 waits in MPI_Recv from rank 0. */
#include <pthread.h>
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

static void *second_receiver(void *arg)
{
	int v = 0;

	(void)arg;
	sample_mark("READY", 0);
	MPI_Recv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	return NULL;
}

int main(int argc, char **argv)
{
	int rank, provided, v = 0;
	pthread_t t;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided != MPI_THREAD_MULTIPLE) {
		printf("MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		pthread_create(&t, NULL, second_receiver, NULL);
		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		pthread_join(t, NULL);
	} else {
		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	}
	MPI_Finalize();
	return 0;
}
