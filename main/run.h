/*
 * run.h - `mpi-deadlock run`: start a job, and if it is still running at
 * the deadline, report on it and end it.
 */
#ifndef MD_RUN_H
#define MD_RUN_H

#include <signal.h>

#include "cli.h"

/* Exit code of run when the deadline passed and no deadlock was found
 * (the job was slow, or live-locked): as timeout(1). */
#define RUN_EXIT_TIMEOUT 124

/*
 * Run c->job_argv in our process group with our stdio, and wait.  The
 * job ends by itself: returns its exit status (128+N if killed by signal
 * N; leftover descendants of a killed job are killed).  The deadline
 * (c->timeout_s) passes: collects from the job's pid, prints the report
 * to stdout, ends the job unless c->keep_running, and returns the
 * verdict's code, RUN_EXIT_TIMEOUT for "no deadlock", or MD_EXIT_ERROR.
 * *stop is set (SIGINT/SIGTERM): ends the job and returns 128+*stop.
 * The job could not be started: 127 (not found) or 126, as a shell.
 */
int run_job(const struct cli *c, const volatile sig_atomic_t *stop);

/*
 * Read /proc/PID/stat: the parent pid and the start time (field 22, clock
 * ticks since boot; with pid it names a process for its whole life).
 * Returns 0, or -MD_E_NOSUCH without reporting (the caller knows whether
 * a vanished process matters).
 */
int run_proc_stat(int pid, int *ppid, unsigned long long *start);

/*
 * The interposition library (runtrack.c) for a job started by the
 * command cmd: its path, malloc'ed, or NULL when it is not there.
 * MPICH's Hydra gets the build against MPICH's mpi.h
 * (MD_TRACK_LIB_MPICH, else lib/mpi-deadlock/mpich/libmdtrack.so under
 * the installation prefix or beside the binary), any other command the
 * build against Open MPI's (MD_TRACK_LIB, else
 * lib/mpi-deadlock/libmdtrack.so).
 */
char *rt_library(const char *cmd);

enum rt_launcher {
	RT_OTHER,	/* not a launcher we know: a wrapper command */
	RT_OPENMPI,	/* Open MPI's mpirun (orterun): -x NAME=VALUE */
	RT_HYDRA,	/* MPICH's hydra: -genv NAME VALUE */
};

/* What kind of launcher the command cmd (searched in PATH) is. */
enum rt_launcher rt_launcher_of(const char *cmd);

/*
 * The job's command with lib passed to every rank as LD_PRELOAD (before
 * an LD_PRELOAD already set): the launcher's own option inserted after
 * argv[0], or, for any other command, unchanged with *env_preload set to
 * the LD_PRELOAD value to put in its environment (else NULL).  Both
 * malloc'ed: rt_argv_free, free.
 */
char **rt_job_argv(char *const *argv, const char *lib, char **env_preload);
void rt_argv_free(char **argv);

#endif /* MD_RUN_H */
