/*
 * slurmjob.h - `mpi-deadlock --slurm JOBID[.STEP]` (doc/slurm.md): the
 * step's starter found through Slurm, the front end run on its node.
 */
#ifndef MD_SLURMJOB_H
#define MD_SLURMJOB_H

#include <signal.h>

#include "cli.h"

/*
 * Report on the MPI job of Slurm step c->slurm as --attach would on its
 * starter.  Returns the exit code of --attach (0, 1, 2), MD_EXIT_ERROR
 * with one line on stderr (job unknown, not running, of another user, no
 * step, a step that is not MPI, srun failed), or 128+N on signal N.
 */
int sj_main(const struct cli *c, volatile sig_atomic_t *stop);

#endif /* MD_SLURMJOB_H */
