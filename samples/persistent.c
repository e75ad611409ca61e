/* Persistent requests, 2 ranks: each starts a persistent receive from the other and waits for it before it starts its persistent send. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, in = 0, out, peer;
	MPI_Request rreq, sreq;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	peer = 1 - rank;
	out = rank;
	MPI_Recv_init(&in, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &rreq);
	MPI_Send_init(&out, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &sreq);
	MPI_Start(&rreq);
	sample_mark("READY", rank);
	MPI_Wait(&rreq, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Start(&sreq);
	MPI_Wait(&sreq, MPI_STATUS_IGNORE);
	MPI_Request_free(&rreq);
	MPI_Request_free(&sreq);
	MPI_Finalize();
	return 0;
}
