/* A persistent MPI_Ssend_init on the wrong communicator, 2 ranks: rank 0 sends on a duplicate of MPI_COMM_WORLD, rank 1 receives with MPI_Recv_init on MPI_COMM_WORLD; both wait in MPI_Wait. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 7;
	MPI_Comm dup;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (rank == 0)
		MPI_Ssend_init(&v, 1, MPI_INT, 1, 5, dup, &req); /* POSTED */
	else
		MPI_Recv_init(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &req); /* POSTED */
	MPI_Start(&req);
	sample_mark("READY", rank);
	MPI_Wait(&req, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Request_free(&req);
	MPI_Comm_free(&dup);
	MPI_Finalize();
	return 0;
}
