/* Neighbour collective with a member missing, 4 ranks on a periodic ring (MPI_Cart_create): ranks 0-2 call MPI_Neighbor_allgather, rank 3 goes straight to MPI_Finalize.  Rank 1's neighbours (0, 2) both take part, so it completes and finalizes; ranks 0 and 2 wait for rank 3. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, dims[1] = { 4 }, periods[1] = { 1 }, v, got[2];
	MPI_Comm ring;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
	v = rank;
	sample_mark("READY", rank);
	if (rank != 3)
		MPI_Neighbor_allgather(&v, 1, MPI_INT, got, 1, MPI_INT, ring); /* STUCK */
	MPI_Finalize(); /* STUCK */
	return 0;
}
