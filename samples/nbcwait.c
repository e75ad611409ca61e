/* Nonblocking collective + MPI_Wait, 2 ranks: rank 0 starts MPI_Ibarrier and waits for it before it sends; rank 1 waits in MPI_Recv for that message before it joins the barrier. */
#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("READY", rank);
	if (rank == 0) {
		MPI_Ibarrier(MPI_COMM_WORLD, &req); /* POSTED */
		MPI_Wait(&req, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
		MPI_Ibarrier(MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}
