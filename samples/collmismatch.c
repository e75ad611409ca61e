/* Different collectives on one communicator, 4 ranks: ranks 0-1 call MPI_Barrier while ranks 2-3 call MPI_Bcast. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank < 2)
		MPI_Barrier(MPI_COMM_WORLD); /* STUCK */
	else
		MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD); /* STUCK */
	MPI_Finalize();
	return 0;
}
