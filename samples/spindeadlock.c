/* Spin-wait deadlock, 2 ranks: each posts a receive from the other and polls it with MPI_Test until it completes, before it sends. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, flag = 0, peer;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	peer = 1 - rank;
	MPI_Irecv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &req);
	sample_mark("READY", rank);
	while (!flag)
		MPI_Test(&req, &flag, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Send(&rank, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
