/* Wrong tag on 2 ranks: rank 0 sends tag 1 (eager, completes) and goes to MPI_Finalize; rank 1 waits for tag 2. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 5;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	sample_mark("READY", rank);
	MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Finalize();
	return 0;
}
