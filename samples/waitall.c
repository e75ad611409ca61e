/* MPI_Irecv from ranks 1 and 2 + MPI_Waitall on 3 ranks: rank 1 sends, rank 2 never does and goes to MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v[2] = { 0, 0 }, one = 1;
	MPI_Request req[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Irecv(&v[0], 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&v[1], 1, MPI_INT, 2, 4, MPI_COMM_WORLD, &req[1]); /* POSTED */
		sample_mark("READY", rank);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE); /* STUCK */
	} else {
		if (rank == 1)
			MPI_Send(&one, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
