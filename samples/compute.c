/* Not a deadlock, 4 ranks: rank 0 computes for a long time (deterministic busy loop) while rank 1 waits for it in MPI_Recv and ranks 2-3 in MPI_Barrier. */
#include <mpi.h>

#include "sample.h"

/* About 10 s alone on one core at -O0; longer when the cores are shared. */
#define SPIN 2500000000ULL

int main(int argc, char **argv)
{
	int rank;
	unsigned long long r = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("STARTED", rank);
	if (rank == 0) {
		r = sample_spin(SPIN);
		MPI_Send(&r, 1, MPI_UNSIGNED_LONG_LONG, 1, 0, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(&r, 1, MPI_UNSIGNED_LONG_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("result %llu\n", r);
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
