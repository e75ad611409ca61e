/* A ring of receives nobody sends, waited for by MPI_Waitany, MPI_Waitsome and MPI_Wait, 3 ranks: each rank posts an MPI_Irecv from its left neighbour and waits for it. (MPICH's MPI_Waitany and MPI_Waitsome end in a tail call: their frames are not on the stack.) */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, size, v = 0, idx, n, idxs[1];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Irecv(&v, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &req);
	sample_mark("READY", rank);
	if (rank == 0)
		MPI_Waitany(1, &req, &idx, MPI_STATUS_IGNORE); /* STUCK */
	else if (rank == 1)
		MPI_Waitsome(1, &req, &n, idxs, MPI_STATUSES_IGNORE); /* STUCK */
	else
		MPI_Wait(&req, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Finalize();
	return 0;
}
