/*
 * sample.h - shared by the samples: the marker lines the end-to-end tests
 * wait for.  A rank prints "MD-READY rank=N" right before the call it is
 * going to block in, and "MD-STARTED rank=N" when a job that does not
 * deadlock has reached the phase the test attaches in.  stdout goes
 * through mpirun, so every marker is flushed at once.
 */
#ifndef MD_SAMPLE_H
#define MD_SAMPLE_H

#include <stdio.h>

static inline void sample_mark(const char *what, int rank)
{
	printf("MD-%s rank=%d\n", what, rank);
	fflush(stdout);
}

/* A deterministic busy loop: the same result on every run. */
static inline unsigned long long sample_spin(unsigned long long n)
{
	unsigned long long x = 88172645463325252ULL, sum = 0;

	for (unsigned long long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x >> 40;
	}
	return sum;
}

#endif /* MD_SAMPLE_H */
