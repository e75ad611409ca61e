/*
 * gstack.h - `mpi-deadlock gstack PID`: the program Open MPI's
 * `mpirun --timeout N --get-stack-traces` runs once per local rank.
 */
#ifndef MD_GSTACK_H
#define MD_GSTACK_H

#include <signal.h>

#include "cli.h"

/*
 * c->pid is a rank.  The first call for a job (the job is named by the
 * rank's parent pid and its start time, so a reused pid cannot match)
 * creates a stamp file with O_EXCL, collects the whole job, prints the
 * report on stdout (mpirun relays it) and records pid -> rank in the
 * stamp; later calls print one line for their rank.  Returns the exit
 * code (mpirun ignores it): the verdict's for the first call, else 0.
 */
int gstack_main(const struct cli *c, const volatile sig_atomic_t *stop);

#endif /* MD_GSTACK_H */
