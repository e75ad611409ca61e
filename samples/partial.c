/* Partial deadlock, 8 ranks: ranks 0 and 1 receive from each other first; ranks 2-7 do a ring exchange, finish and wait in MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, w = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank < 2) {
		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Send(&v, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
	} else {
		int right = rank == 7 ? 2 : rank + 1, left = rank == 2 ? 7 : rank - 1;

		MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &w, 1, MPI_INT, left,
			     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
