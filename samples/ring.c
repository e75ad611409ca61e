/* Ring of blocking receives: every rank receives from its left neighbour first, so nobody ever sends (any -np >= 2). */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, size, token = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;

	sample_mark("READY", rank);
	MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
