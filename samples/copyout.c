/* Requests posted through one variable and copied into an array (as
 * into a C++ vector), then MPI_Waitall on 3 ranks: rank 0 waits for
 * tags 1, 2 and 3 from rank 1, which sends tags 1 and 3 only; rank 2
 * goes to MPI_Finalize.  The variable holds the last request, so the
 * report must find the MPI_Irecv of tag 2 through the copy. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v[3] = { 0, 0, 0 }, one = 1;
	MPI_Request r, reqs[3];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		for (int i = 0; i < 3; i++) {
			MPI_Irecv(&v[i], 1, MPI_INT, 1, i + 1, MPI_COMM_WORLD, &r); /* POSTED */
			reqs[i] = r;
		}
		sample_mark("READY", rank);
		MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE); /* STUCK */
	} else {
		if (rank == 1) {
			MPI_Send(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
			MPI_Send(&one, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
		}
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
