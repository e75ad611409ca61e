/* Probe spin-wait deadlock, 2 ranks: each polls MPI_Iprobe for a message from the other, which it sends only after its own probe found one. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, flag = 0, peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	peer = 1 - rank;
	sample_mark("READY", rank);
	while (!flag)
		MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Recv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Send(&rank, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
