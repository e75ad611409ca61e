/* A rank that is gone, 3 ranks: rank 2 calls MPI_Finalize early and exits (asynchronous finalize, so mpirun keeps the job alive); rank 0 waits for it in MPI_Recv, rank 1 in MPI_Barrier. */
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;

	/*
	 * Open MPI's MPI_Finalize is a fence over all ranks, and a rank
	 * that exits without MPI_Finalize makes mpirun abort the whole job
	 * ("exiting improperly"): neither leaves a job hung with a rank
	 * gone.  With async_mpi_finalize (set here for every rank, so they
	 * agree) MPI_Finalize returns without the fence and the rank exits
	 * normally while the others stay in the job.
	 */
	setenv("OMPI_MCA_async_mpi_finalize", "1", 1);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 2) {
		MPI_Finalize();
		sample_mark("GONE", rank);
		return 0;
	}
	sample_mark("READY", rank);
	if (rank == 0)
		MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	else
		MPI_Barrier(MPI_COMM_WORLD); /* STUCK */
	MPI_Finalize();
	return 0;
}
