/* A long collective that moves data, not a deadlock: 2 ranks repeat a large MPI_Allreduce for about 8 seconds; every look finds them in MPI_Allreduce, but its internal requests change. */
#include <mpi.h>
#include <stdlib.h>

#include "sample.h"

#define N (1 << 20)

int main(int argc, char **argv)
{
	int rank, stop = 0, it = 0;
	double *in = calloc(N, sizeof(double)), *out = calloc(N, sizeof(double));
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	t0 = MPI_Wtime();
	while (!stop) {
		in[0] = rank == 0 && MPI_Wtime() - t0 > 8.0;
		MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		stop = out[0] > 0;
		if (++it == 2)
			sample_mark("STARTED", rank);
	}
	if (rank == 0)
		printf("longcoll done\n");
	MPI_Finalize();
	free(in);
	free(out);
	return 0;
}
