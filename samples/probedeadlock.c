/* Probe deadlock, 2 ranks: each rank probes for a message from the other before it sends its own. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, peer;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	peer = 1 - rank;
	sample_mark("READY", rank);
	MPI_Probe(peer, 4, MPI_COMM_WORLD, &st); /* STUCK */
	MPI_Recv(&v, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Send(&rank, 1, MPI_INT, peer, 4, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
