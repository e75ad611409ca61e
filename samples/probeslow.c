/* A probe that waits on a slow peer (no deadlock): rank 0 sits in MPI_Probe while rank 1 computes for a few seconds before it sends. */
#include <mpi.h>

#include "sample.h"

#define SPIN 2000000000ULL

int main(int argc, char **argv)
{
	int rank, v = 0, n = 0;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("STARTED", rank);
	if (rank == 0) {
		MPI_Probe(1, 9, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_INT, &n);
		MPI_Recv(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("probe count=%d value=%d\n", n, v);
	} else {
		v = (int)(sample_spin(SPIN) % 1000);
		MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
