/* Wrong communicator on 2 ranks: rank 0 sends tag 2 on MPI_COMM_WORLD (eager, completes) and goes to MPI_Finalize; rank 1 waits for tag 2 on a duplicate of it. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	MPI_Comm dup;
	int rank, v = 5;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_name(dup, "dup");
	if (rank == 0) {
		MPI_Send(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	sample_mark("READY", rank);
	MPI_Recv(&v, 1, MPI_INT, 0, 2, dup, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Finalize();
	return 0;
}
