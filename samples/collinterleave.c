/* Interleaved collectives, 2 ranks: rank 0 calls MPI_Bcast (root 1) then MPI_Allreduce, rank 1 calls them in the other order. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 1, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank == 0) {
		MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_WORLD); /* STUCK */
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	} else {
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* STUCK */
		MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
