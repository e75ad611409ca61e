/*
 * slurm.h - what the tool asks Slurm (doc/slurm.md): the job of a starter
 * (srun, or an mpirun inside an allocation), a step's starter, and the
 * command that runs a program on one node of a job (`srun --overlap`).
 * Slurm is asked through its own commands (scontrol, srun), as a user
 * would, with the environment of the job where it has one.
 */
#ifndef MD_SLURM_H
#define MD_SLURM_H

#include <stdbool.h>

/*
 * Run argv (argv[0] looked up in PATH) with stdin from /dev/null, its
 * standard output in *out (malloc'ed, NUL-ended) and the last line of its
 * standard error in *err (malloc'ed, "" if none; err may be NULL).
 * Returns its exit status (0..255), or -1 if it could not be run or was
 * killed (*out and *err still set).
 */
int sl_capture(char *const argv[], char **out, char **err);

/* Is exe (a path) srun? */
bool sl_is_srun(const char *exe);

/*
 * The Slurm job of the job whose starter is pid (exe: its executable, may
 * be NULL): SLURM_JOB_ID of its environment (mpirun or srun inside an
 * allocation), else, for srun, the step whose SrunHost:Pid is this host
 * and pid (`scontrol -o show step`).  Returns a malloc'ed job id, or NULL
 * when it is not a Slurm job (nothing printed).  When ours has no
 * SLURM_CONF and the starter's environment has one, *conf is it
 * (malloc'ed; else NULL): scontrol is asked with it, and so must be the
 * Slurm commands the caller starts for the job.  Our own environment is
 * not changed.
 */
char *sl_job_of(int pid, const char *exe, char **conf);

/*
 * pid, or, when pid is the srun an mpirun started for its daemons (its
 * parent is an MPI launcher: mpirun, mpiexec, orterun, prterun, ...;
 * collector/proctable.c's list), that mpirun: the process whose table
 * names the ranks.
 */
int sl_starter_of(int pid);

/*
 * The value of key (e.g. "JobState") in one line of `scontrol -o show`
 * output: malloc'ed, or NULL if absent.  Values end at a blank.
 */
char *sl_field(const char *line, const char *key);

/*
 * The environment of a child the tool starts (for execvpe): ours with
 * each "NAME=VALUE" of set (NULL-ended, may be NULL) in place of the
 * variable of that name, and, when srun, without any SLURM_* but
 * SLURM_CONF: an srun started from inside a step must not take that
 * step's settings (task counts, distribution) for its own.  A new
 * NULL-ended array (free it alone) of strings borrowed from environ and
 * set, valid while they are; our own environment is not changed.
 */
char **sl_child_env(char *const *set, bool srun);

#endif /* MD_SLURM_H */
