/* RMA fence with a member missing, 3 ranks: ranks 0-1 call MPI_Win_fence on a window of all three, rank 2 waits in MPI_Recv for a message rank 0 sends only after the fence. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, buf[4] = { 0 }, v = 0;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &win);
	sample_mark("READY", rank);
	if (rank < 2) {
		MPI_Win_fence(0, win); /* STUCK */
		if (rank == 0)
			MPI_Send(&v, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Win_fence(0, win);
	}
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
