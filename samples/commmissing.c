/* Communicator creation with a member missing, 3 ranks: ranks 0-1 call MPI_Comm_split, rank 2 waits in MPI_Recv for a message rank 0 sends only after the split. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank < 2) {
		MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half); /* STUCK */
		if (rank == 0)
			MPI_Send(&v, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
	}
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
