/* Crossed synchronous sends on 2 ranks: MPI_Ssend of one int completes only when received, and both ranks send first. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, out = 42, in = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;

	sample_mark("READY", rank);
	MPI_Ssend(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD); /* STUCK */
	MPI_Recv(&in, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
