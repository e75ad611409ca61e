/* Receive from a rank that never sends, 3 ranks: rank 0 waits for rank 2; ranks 1 and 2 go straight to MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	} else {
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
