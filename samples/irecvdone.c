/* An MPI_Irecv whose message has all arrived, then a receive nobody can satisfy, 3 ranks: rank 1 sends rank 0 the message of its MPI_Irecv and finishes; ranks 0 and 2 each wait to receive from the other first. The Irecv is complete, not a message in transfer. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, w = 0;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Irecv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
		sample_mark("READY", rank);
		MPI_Recv(&w, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Send(&w, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	} else {
		sample_mark("READY", rank);
		MPI_Recv(&w, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Send(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
