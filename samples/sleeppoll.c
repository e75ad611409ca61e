/* Deadlock through a polling loop that sleeps, 3 ranks: rank 0 tests its receive from rank 1 once a millisecond (usleep between its tests), rank 1 waits for rank 2, rank 2 for rank 0.  Every look finds rank 0 sleeping outside MPI; libmdtrack.so's count of its polling calls shows it polling. */
#include <unistd.h>

#include <mpi.h>

#include "sample.h"

int main(int argc, char **argv)
{
	int rank, v = 0, flag = 0, from;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		MPI_Irecv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &req); /* POSTED */
	sample_mark("READY", rank);
	if (rank == 0) {
		while (!flag) {
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE); /* STUCK */
			usleep(1000);
		}
	} else {
		from = (rank + 1) % 3;
		MPI_Recv(&v, 1, MPI_INT, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* STUCK */
	}
	MPI_Send(&rank, 1, MPI_INT, (rank + 2) % 3, 4, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
