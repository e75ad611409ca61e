/* A receive across an intercommunicator from a slow peer (no deadlock), 4 ranks: world 0 (group A) receives from remote rank 0 of group B, world 2, which computes for a few seconds before it sends. */
#include <mpi.h>

#include "sample.h"

#define SPIN 2000000000ULL

int main(int argc, char **argv)
{
	int rank, v = 0;
	MPI_Comm local, inter;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &local);
	MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank < 2 ? 2 : 0, 99,
			     &inter);
	sample_mark("STARTED", rank);
	if (rank == 0) {
		MPI_Recv(&v, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
		printf("received value=%d\n", v);
	} else if (rank == 2) {
		v = (int)(sample_spin(SPIN) % 1000);
		MPI_Send(&v, 1, MPI_INT, 0, 5, inter);
	}
	MPI_Finalize();
	return 0;
}
