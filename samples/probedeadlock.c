/* Probe deadlock on 2 ranks: each rank waits in MPI_Probe for a message from the other with tag 3 before sending its own. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 5;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	MPI_Probe(1 - rank, 3, MPI_COMM_WORLD, &st); /* STUCK */
	MPI_Recv(&v, 1, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD, &st);
	MPI_Send(&v, 1, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
