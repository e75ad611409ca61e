/*
 * benchpost.c - what one wrapped call costs, without MPI (make bench,
 * scripts/bench-track.sh).  Built twice: with -DBENCHPOST_MPI it is a
 * shared library (as libmpi is: a program reaches it through its PLT)
 * that defines a trivial PMPI_Isend, which hands out one of 32 recycled
 * request handles as an MPI library's free list does; without, it is
 * the program, linked with libmdtrack.so and that library, so MPI_Isend
 * is the wrapper around it.  It times the same loop through MPI_Isend
 * and straight through PMPI_Isend, interleaved, and prints the least CPU
 * time of many rounds of each: one process on one core, so the figure
 * holds on a loaded machine better than the message rate does.
 *   track_post_wrapped / track_post_direct / track_post_added: ns a call
 *   through a variable that holds MPI_REQUEST_NULL (as after MPI_Wait),
 *   with another tag each time (the record is written);
 *   track_post_loop_added: the same with one tag (a loop's post: the
 *   record is only compared);
 *   track_post_held_added: through one that still holds its last
 *   request, another tag each time (the held record's path; with the
 *   same arguments again it is a loop's post)
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define CALLS 1000000
#define ROUNDS 40

#ifdef BENCHPOST_MPI
static char reqs[32][256];
static unsigned next;
#ifdef OPEN_MPI
/* Open MPI's MPI_REQUEST_NULL is the address of this object. */
char benchpost_request_null[256] __asm__("ompi_request_null");
#endif

int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest,
	       int tag, MPI_Comm comm, MPI_Request *req)
{
	(void)buf;
	(void)count;
	(void)dt;
	(void)dest;
	(void)tag;
	(void)comm;
	*req = (MPI_Request)(void *)reqs[next++ & 31];
	__asm__ volatile("" ::: "memory");
	return MPI_SUCCESS;
}
#else
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum mode { CHANGING, SAME, HELD, NMODES };

/* HELD: the variable still holds the last request when it is posted
 * through again with another tag (a request copied out, as into a C++
 * vector); else it
 * holds MPI_REQUEST_NULL, as after MPI_Wait.  SAME: one tag. */
static double loop(int wrapped, enum mode mode)
{
	int mask = mode == SAME ? 0 : 7;
	MPI_Request r = MPI_REQUEST_NULL;
	int v = 0;
	double t0 = cpu();

	for (int i = 0; i < CALLS; i++) {
		if (wrapped)
			MPI_Isend(&v, 1, (MPI_Datatype)0, 1, i & mask,
				  (MPI_Comm)0, &r);
		else
			PMPI_Isend(&v, 1, (MPI_Datatype)0, 1, i & mask,
				   (MPI_Comm)0, &r);
		if (mode != HELD)
			r = MPI_REQUEST_NULL;
	}
	return cpu() - t0;
}

int main(void)
{
	/* Least time of each mode, wrapped [1] and direct [0]. */
	double t[NMODES][2];

	for (int m = 0; m < NMODES; m++)
		t[m][0] = t[m][1] = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < 2 * NMODES; k++) {
			int wrapped = (k + r) % 2, m = k / 2;
			double s = loop(wrapped, (enum mode)m);

			t[m][wrapped] = s < t[m][wrapped] ? s : t[m][wrapped];
		}
	}
	printf("track_post_wrapped: %.2f ns\n", t[CHANGING][1] / CALLS * 1e9);
	printf("track_post_direct: %.2f ns\n", t[CHANGING][0] / CALLS * 1e9);
	printf("track_post_added: %.2f ns\n",
	       (t[CHANGING][1] - t[CHANGING][0]) / CALLS * 1e9);
	printf("track_post_loop_added: %.2f ns (the same arguments again, as "
	       "in a loop)\n", (t[SAME][1] - t[SAME][0]) / CALLS * 1e9);
	printf("track_post_held_added: %.2f ns (a variable posted through "
	       "again, with another tag, while it holds a request)\n",
	       (t[HELD][1] - t[HELD][0]) / CALLS * 1e9);
	return 0;
}
#endif
