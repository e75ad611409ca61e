/* Collective root mismatch on 2 ranks: both call MPI_Reduce on MPI_COMM_WORLD, each naming itself as the root, so each waits for the other's contribution. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 1, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, rank, MPI_COMM_WORLD); /* STUCK */
	MPI_Finalize();
	return 0;
}
