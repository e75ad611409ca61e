/* A polling loop that is not a deadlock: rank 0 computes between MPI_Test calls on a receive while rank 1 computes for a few seconds before it sends. */
#include <mpi.h>

#include "sample.h"

#define SPIN 2000000000ULL

int main(int argc, char **argv)
{
	int rank, v = 0, flag = 0, polls = 0;
	unsigned long long work = 0;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sample_mark("STARTED", rank);
	if (rank == 0) {
		MPI_Irecv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &req);
		while (!flag) {
			work += sample_spin(1000000);
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
			polls++;
		}
		printf("poll value=%d done=%d\n", v, polls > 0 && work > 0);
	} else {
		v = (int)(sample_spin(SPIN) % 1000);
		MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
