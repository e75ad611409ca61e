/* MPI_Irecv with the wrong tag waited on with MPI_Wait, 2 ranks: rank 0 posts a receive for tag 1, rank 1 sends tag 2 (eagerly) and goes to MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, one = 1;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Irecv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req); /* POSTED */
		sample_mark("READY", rank);
		MPI_Wait(&req, MPI_STATUS_IGNORE); /* STUCK */
	} else {
		MPI_Send(&one, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		sample_mark("READY", rank);
	}
	MPI_Finalize(); /* STUCK */
	return 0;
}
