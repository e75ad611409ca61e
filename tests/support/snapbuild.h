/*
 * snapbuild.h - snapshots built in C for the analyzer's tests, through
 * the snap.h API.  Every function ends the test program on misuse; the
 * snapshot is the caller's (snap_free).
 */
#ifndef MD_SNAPBUILD_H
#define MD_SNAPBUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze.h"
#include "snap.h"

/* n collected ranks, progress STABLE, queues read, not in MPI, all
 * members of MPI_COMM_WORLD (id 0, index 0). */
struct snap *sb_new(int n);
/* Put rank in call at file:line (function "main"); call NULL: not in MPI. */
void sb_call(struct snap *s, int rank, const char *call, const char *file,
	     int line);
/* Add a communicator (copied group of global ranks) with its members;
 * returns its index. */
int sb_comm(struct snap *s, uint64_t id, const char *name, int size,
	    const int *group);
/* A pending op of rank on comm towards local peer (-1: any source), tag
 * (-1: any tag), len bytes, with one extra_text line. */
struct snap_op *sb_op(struct snap *s, int rank, enum snap_op_kind kind,
		      int comm, int peer_local, int tag, uint64_t len);
/* rank in MPI_Recv from peer (world) at file:line, tag, 4096 bytes. */
void sb_recv(struct snap *s, int rank, int peer, int tag, const char *file,
	     int line);
/* rank in MPI_Ssend to peer (world), tag, 4096 bytes. */
void sb_send(struct snap *s, int rank, int peer, int tag, const char *file,
	     int line);
/* An op read from ob1's queues (the rank's ob1 flag set): a
 * collective's internal request (tag < 0) or, with probe, a probe's
 * request (tag -1: any tag). */
struct snap_op *sb_ob1_op(struct snap *s, int rank, enum snap_op_kind kind,
			  int comm, int peer_local, int tag, bool probe);
/* Give comm a topology: nbrs[i] lists local rank i's neighbours, ending
 * in -1. */
void sb_topo(struct snap *s, int comm, enum snap_topo kind,
	     const int *const *nbrs);
/* Change a rank's state, with a reason. */
void sb_state(struct snap *s, int rank, enum snap_rank_state st,
	      const char *reason);
/* A ring of n: rank i in MPI_Recv from (i + 1) % n, tag 7, at ring.c:14. */
struct snap *sb_ring(int n);
/* s written by snap_write and read back by snap_read: the copy, or NULL
 * when either refused it (the reader says why on stderr). */
struct snap *sb_round_trip(const struct snap *s);
/* The snapshot in text (JSONL), read; the test fails if it does not. */
struct snap *sb_read_text(const char *text);
/* s analysed and reported with o, whole (heap, the caller's). */
char *sb_render(const struct snap *s, const struct anl_opts *o);

#endif /* MD_SNAPBUILD_H */
