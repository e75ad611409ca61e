/* Head-to-head blocking sends of 1 MiB on 2 ranks: too large for the eager protocol, both wait in MPI_Send for a receive that never comes. */
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

#define LEN (1 << 20)

int main(int argc, char **argv)
{
	int rank;
	char *out = calloc(LEN, 1), *in = calloc(LEN, 1);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;

	sample_mark("READY", rank);
	MPI_Send(out, LEN, MPI_CHAR, peer, 7, MPI_COMM_WORLD); /* STUCK */
	MPI_Recv(in, LEN, MPI_CHAR, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	free(out);
	free(in);
	return 0;
}
