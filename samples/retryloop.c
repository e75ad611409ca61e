/* A receive retried for ever, 2 ranks: rank 0 waits for rank 1's message with a time-out loop (MPI_Irecv, MPI_Test for 50 ms, MPI_Cancel, again), rank 1 waits in MPI_Recv for rank 0's message first.  Rank 0 posts a new request each round, but no message ever moves: a deadlock. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, flag = 0;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank == 0) {
		while (!flag) {
			double t0 = MPI_Wtime();

			MPI_Irecv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
			while (!flag && MPI_Wtime() - t0 < 0.05)
				MPI_Test(&req, &flag, MPI_STATUS_IGNORE); /* STUCK */
			if (!flag) {
				MPI_Cancel(&req);
				MPI_Wait(&req, MPI_STATUS_IGNORE);
			}
		}
		MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
