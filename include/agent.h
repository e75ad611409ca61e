/*
 * agent.h - collection across hosts.  The front end collects the ranks
 * of its own host itself and starts one agent per other host through a
 * launcher (ssh as Open MPI uses it, or the job's own mpirun); an agent
 * is `mpi-deadlock agent`, the same collector restricted to the pids it
 * is told of, talking over its standard input and output
 * (doc/agents.md, "Protocol").  The front end merges the partial
 * snapshots into one; the analyzer cannot tell it from a one-host job.
 */
#ifndef MD_AGENT_H
#define MD_AGENT_H

#include <signal.h>
#include <stdbool.h>

#include "collect.h"
#include "snap.h"

/* The protocol version: both sides refuse another one. */
#define AG_PROTO 1
/* The first word of the agent's first line. */
#define AG_MAGIC "mpi-deadlock-agent"

/*
 * The nice value a collection asks for (ag_prefer_cpu).  Ranks that
 * busy-poll in MPI take every core of an oversubscribed host; at nice 0
 * a collector among 32 spinning ranks of a core gets 1/33 of it.  With
 * the right to (root, CAP_SYS_NICE) the front end, its launchers and the
 * agents run at this value for their short life; without it they run as
 * they are.  The ranks' own priority is never touched.
 */
#define AG_NICE (-19)
/* Lower this process's nice value to AG_NICE if allowed; else nothing. */
void ag_prefer_cpu(void);
/*
 * Where the kernel groups processes by session for the scheduler
 * (autogroup), a nice value orders a process only against its own
 * session; sessions share the CPU by their groups' nice values.  Lower
 * the group nice value of this process's session to AG_NICE if allowed;
 * else nothing.  Called only in sessions made for the tool: a launcher's
 * (the front end's child after setsid) and an agent's (made by its
 * launcher); never in the user's, where the job may run.
 */
void ag_prefer_cpu_session(void);

enum ag_launcher {
	AG_LAUNCH_AUTO,		/* what the job itself used */
	AG_LAUNCH_SSH,		/* Open MPI's remote shell (plm_rsh_agent) */
	AG_LAUNCH_MPIRUN,	/* the job's own mpirun, one agent per host */
	AG_LAUNCH_SRUN,		/* srun --overlap --jobid=JOB -w HOST (Slurm) */
};

/*
 * Run as an agent on fds 0 and 1 (`mpi-deadlock agent`).  base holds the
 * agent's own settings (dll: --dll or NULL, the type providers' folders,
 * no_line_memo; borrowed), the front end sends the rest; stop is the
 * signal flag.  When the input or the output
 * closes, or a signal comes, every rank is detached and it returns
 * MD_EXIT_ERROR with one line on stderr; after a snapshot was sent it
 * returns 0.
 */
int ag_main(const struct col_opts *base, volatile sig_atomic_t *stop);

/* Where the time of a many-host collection went (nanoseconds). */
struct ag_stats {
	long long start_ns;	/* launch until every agent is ready */
	long long collect_ns;	/* the looks, every host at once */
	long long transfer_ns;	/* "send" until every snapshot is in */
	long long merge_ns;	/* reading and merging the snapshots */
	int hosts;		/* agents started */
};

struct ag_opts {
	struct col_opts col;	/* the collection (pid, looks, stop...) */
	enum ag_launcher launcher;
	const char *rsh;	/* --rsh CMD, NULL: plm_rsh_agent or ssh */
	const char *agent;	/* --agent PATH, NULL: our own path */
	int timeout_s;		/* --agent-timeout, per agent and step */
	struct ag_stats *stats;	/* filled when not NULL */
};

/*
 * Collect the job of o->col.pid on every host: like col_collect, with
 * the looks of all hosts taken at the same moments.  A host whose agent
 * could not be started or did not answer leaves its ranks "remote" with
 * a reason that names the host, the launcher's own error and the fix.
 * Returns 0 and *out, or a negated MD_E_* code (reported); -MD_E_INTR
 * when *o->col.stop was set, after every agent detached and exited.
 */
int ag_collect(const struct ag_opts *o, struct snap **out);

/* Is pid an Open MPI daemon (orted, prted)? */
bool ag_is_daemon(int pid);
/* pid if it is a daemon, its parent if that is one (a rank started by
 * it), else 0. */
int ag_daemon_of(int pid);

/*
 * Collect the ranks of this host of a job whose mpirun runs elsewhere,
 * o->pid being the job's daemon here (orted): its children that name
 * their rank in OMPI_COMM_WORLD_RANK; the other ranks "remote".  Returns
 * as col_collect.
 */
int ag_collect_daemon(const struct col_opts *o, struct snap **out);

#endif /* MD_AGENT_H */
