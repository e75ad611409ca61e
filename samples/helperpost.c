/* Receives posted by a helper that returns the request (its variable a
 * local of the helper: one stack slot, posted through by the same call
 * with the same arguments each time), then MPI_Waitall on 2 ranks:
 * rank 0 posts three receives with tag 1 from rank 1, which sends one
 * message and goes to MPI_Finalize.  No variable holds the two pending
 * requests, so the report must find where they were posted by their
 * arguments. */
#include <mpi.h>

#include "sample.h"

static MPI_Request post_recv(int *buf)
{
	MPI_Request r;

	MPI_Irecv(buf, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r); /* POSTED */
	return r;
}

int main(int argc, char **argv)
{
	int rank, v[3] = { 0, 0, 0 }, one = 1;
	MPI_Request reqs[3];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		for (int i = 0; i < 3; i++)
			reqs[i] = post_recv(&v[i]);
		sample_mark("READY", rank);
		MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE); /* STUCK */
	} else {
		MPI_Send(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		sample_mark("READY", rank);
		MPI_Finalize(); /* STUCK */
		return 0;
	}
	MPI_Finalize();
	return 0;
}
