/* Deadlock across an intercommunicator, 4 ranks: groups A (world 0,1) and B (world 2,3); world 0 receives from remote rank 1 (world 3) and world 3 from remote rank 0 (world 0); worlds 1 and 2 go to MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;
	MPI_Comm local, inter;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &local);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank < 2 ? 2 : 0, 99,
			     &inter);
	sample_mark("READY", rank);
	if (rank == 0)
		MPI_Recv(&v, 1, MPI_INT, 1, 5, inter, MPI_STATUS_IGNORE); /* STUCK */
	else if (rank == 3)
		MPI_Recv(&v, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Finalize(); /* STUCK */
	return 0;
}
