/* A collective with a rank missing, 4 ranks: ranks 0-2 enter MPI_Barrier, rank 3 waits in MPI_Recv from rank 0 instead. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank == 3)
		MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	else
		MPI_Barrier(MPI_COMM_WORLD); /* STUCK */
	MPI_Finalize();
	return 0;
}
