/* Two independent deadlocks in one job, 4 ranks: ranks 0 and 1 receive from each other, and so do ranks 2 and 3, each pair before it sends. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	peer = rank ^ 1;
	sample_mark("READY", rank);
	MPI_Recv(&v, 1, MPI_INT, peer, rank / 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Send(&rank, 1, MPI_INT, peer, rank / 2, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
