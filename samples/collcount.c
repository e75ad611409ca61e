/* Collective count mismatch, 3 ranks: rank 0 calls MPI_Allreduce with count 0, which returns at once, and goes on to MPI_Barrier; ranks 1-2 call it with count 1 and wait for rank 0. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 1, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	MPI_Allreduce(&v, &sum, rank == 0 ? 0 : 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* STUCK */
	MPI_Barrier(MPI_COMM_WORLD); /* STUCK */
	MPI_Finalize();
	return 0;
}
