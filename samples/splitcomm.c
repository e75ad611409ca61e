/* Deadlock inside a split sub-communicator, 6 ranks: "odds" (world 1,3,5 = local 0,1,2) is a receive ring; "evens" finish and wait in MPI_Finalize. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, lrank, lsize, v = 0;
	MPI_Comm sub;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
	MPI_Comm_set_name(sub, rank % 2 ? "odds" : "evens");
	MPI_Comm_rank(sub, &lrank);
	MPI_Comm_size(sub, &lsize);
	if (rank % 2) {
		int left = (lrank + lsize - 1) % lsize;

		sample_mark("READY", rank);
		MPI_Recv(&v, 1, MPI_INT, left, 11, sub, MPI_STATUS_IGNORE); /* STUCK */
	} else {
		MPI_Allreduce(&lrank, &v, 1, MPI_INT, MPI_SUM, sub);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
