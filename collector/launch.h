/*
 * launch.h - how the front end starts an agent on another host: the
 * command line of the launcher (ssh as Open MPI uses it, or the job's own
 * mpirun) and what it takes from the job (its plm_rsh_agent, its --mca
 * settings), read once per collection.
 */
#ifndef MD_LAUNCH_H
#define MD_LAUNCH_H

#include <stdbool.h>

#include "agent.h"

struct ln_ctx {
	enum ag_launcher launcher;	/* resolved: SSH, MPIRUN or SRUN */
	char **rsh;		/* the remote shell's words, NULL-ended */
	const char *rsh_from;	/* where it came from, for messages */
	char *mpirun;		/* the job's starter */
	char *srun;		/* SRUN: the job's srun, or "srun" */
	char *jobid;		/* SRUN: the job's Slurm job id */
	char **mca;		/* the job's "--mca K V" words, NULL-ended */
	char **env;		/* the job's OMPI_MCA_* and OMPI_ALLOW_*
				 * entries, and its SLURM_CONF when ours
				 * has none (sl_job_of), NULL-ended */
	char *agent;		/* the agent's path on the hosts */
	const char *dll;	/* --dll passed on, or NULL */
	bool verbose;
};

/*
 * Resolve the launcher and what it needs for the job whose starter is
 * starter_pid (executable starter, may be NULL) under options o.
 * Returns 0, or -MD_E_INPUT when the launcher cannot be used (reported).
 */
int ln_setup(const struct ag_opts *o, int starter_pid, const char *starter,
	     struct ln_ctx *l);
void ln_free(struct ln_ctx *l);

/* The argv that starts an agent on host (malloc'ed, NULL-ended; free
 * with ln_argv_free). */
char **ln_argv(const struct ln_ctx *l, const char *host);
void ln_argv_free(char **argv);

/* The launcher's name for messages: "ssh", "mpirun", "srun". */
const char *ln_name(const struct ln_ctx *l);

/* Split a command string on blanks into a NULL-ended argv (malloc'ed);
 * Open MPI's "ssh : rsh" alternatives: the first is taken. */
char **ln_split(const char *cmd);

#endif /* MD_LAUNCH_H */
