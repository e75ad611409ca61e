/* Not a deadlock, 4 ranks: a long neighbour exchange of 1 MiB messages with MPI_Sendrecv in both directions; every rank checks what it receives and rank 0 prints a checksum. */
#include <stdint.h>
#include <stdlib.h>
#include <mpi.h>

#include "sample.h"

#define WORDS (1 << 18)		/* 1 MiB of uint32_t */
#define ROUNDS 1500

static uint32_t word(int from, int round, int i)
{
	return (uint32_t)from * 2654435761u ^ (uint32_t)round * 40503u ^
	       (uint32_t)i;
}

static void fill(uint32_t *b, int rank, int round)
{
	for (int i = 0; i < WORDS; i++)
		b[i] = word(rank, round, i);
}

/* Counts wrong words and folds the message into the checksum. */
static long check(const uint32_t *b, int from, int round, uint64_t *sum)
{
	long bad = 0;

	for (int i = 0; i < WORDS; i += 64) {
		bad += b[i] != word(from, round, i);
		*sum = *sum * 31 + b[i];
	}
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size;
	long bad = 0, allbad = 0;
	uint64_t sum = 0, allsum = 0;
	uint32_t *out = malloc(WORDS * 4), *l = malloc(WORDS * 4),
		 *r = malloc(WORDS * 4);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;

	for (int round = 0; round < ROUNDS; round++) {
		if (round == 20)
			sample_mark("STARTED", rank);
		fill(out, rank, round);
		MPI_Sendrecv(out, WORDS, MPI_UINT32_T, right, 1, l, WORDS,
			     MPI_UINT32_T, left, 1, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		MPI_Sendrecv(out, WORDS, MPI_UINT32_T, left, 2, r, WORDS,
			     MPI_UINT32_T, right, 2, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		bad += check(l, left, round, &sum) + check(r, right, round, &sum);
	}
	MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&sum, &allsum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("exchange rounds=%d errors=%ld checksum=%016llx\n", ROUNDS,
		       allbad, (unsigned long long)allsum);
	MPI_Finalize();
	free(out);
	free(l);
	free(r);
	return 0;
}
