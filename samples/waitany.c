/* MPI_Waitany where one message is enough (no deadlock): rank 0 waits for 1 or 2, rank 1 computes then sends, rank 2 waits for rank 0 before it sends. */
#include <mpi.h>

#include "sample.h"

#define SPIN 400000000ULL

int main(int argc, char **argv)
{
	int rank, idx = -1, v[2] = { 0, 0 }, go = 0;
	MPI_Request req[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Irecv(&v[0], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&v[1], 1, MPI_INT, 2, 5, MPI_COMM_WORLD, &req[1]);
		sample_mark("STARTED", rank);
		MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
		printf("waitany index=%d value=%d\n", idx, v[idx]);
		MPI_Send(&go, 1, MPI_INT, 2, 6, MPI_COMM_WORLD);
		MPI_Wait(&req[1 - idx], MPI_STATUS_IGNORE);
		printf("second value=%d\n", v[1 - idx]);
	} else if (rank == 1) {
		sample_mark("STARTED", rank);
		int r = (int)(sample_spin(SPIN) % 1000);
		MPI_Send(&r, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
	} else {
		sample_mark("STARTED", rank);
		MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		int r = 2000;
		MPI_Send(&r, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
