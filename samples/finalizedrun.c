/* A finalized rank that runs on, 3 ranks: rank 2 calls MPI_Finalize (asynchronous finalize) and then computes for ever; ranks 0 and 1 wait in MPI_Recv for a message it can no longer send. */
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;

	/* As in earlyexit.c: MPI_Finalize returns without the fence over
	 * all ranks.  Rank 2 is then alive but out of MPI for good. */
	setenv("OMPI_MCA_async_mpi_finalize", "1", 1);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 2) {
		MPI_Finalize();
		sample_mark("FINALIZED", rank);
		for (;;) {
			volatile unsigned long long r = sample_spin(1ULL << 30);
			(void)r;
		}
	}
	sample_mark("READY", rank);
	MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	MPI_Finalize();
	return 0;
}
