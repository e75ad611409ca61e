/*
 * cluster.h - the namespace hosts of scripts/cluster.sh as tests see
 * them: which hosts, the environment a job on them needs, starting a job
 * spread over them (through mpijob), and what is left on a host.
 *
 * The cluster of a test run is named by $MD_CLUSTER_HOSTFILE (the last
 * line of `scripts/cluster.sh up N`; scripts/test.sh brings one up and
 * exports it).  Everything else is read from the state dir beside it.
 * A host's processes are found from this (the machine's) pid namespace:
 * each host is one pid namespace whose pid 1 is its sshd.
 */
#ifndef MD_TEST_CLUSTER_H
#define MD_TEST_CLUSTER_H

#include <stdbool.h>
#include <sys/types.h>

struct mj_job;

struct mc_host {
	char *name;			/* node1 */
	pid_t pid1;			/* its sshd (pid 1 inside), our pid */
	unsigned long long start;	/* pid1's start time */
	unsigned long long pidns;	/* inode of its pid namespace */
};

struct mc_cluster {
	char *name;		/* instance (MD_CLUSTER) */
	char *state;		/* its state dir */
	char *hostfile;
	char *script;		/* scripts/cluster.sh that made it */
	int nhosts;
	struct mc_host *hosts;
	char **env;		/* KEY=VALUE of `cluster.sh env`, NULL-ended */
};

/* One process on a host. */
struct mc_proc {
	pid_t pid;		/* in our pid namespace */
	pid_t nspid;		/* inside the host */
	unsigned long long start;
	char comm[32];
};

/*
 * The cluster named by $MD_CLUSTER_HOSTFILE, with every host's sshd
 * alive.  Returns 0 and *out (mc_free), or -MD_E_GONE and *why (free):
 * one line saying what is missing and how to bring the cluster up.
 * No message.
 */
int mc_open(struct mc_cluster **out, char **why);
void mc_free(struct mc_cluster *c);

/* CI=true: a multi-host test without its cluster fails, never skips. */
bool mc_required(void);

/*
 * In a Criterion test: *cp = the cluster, or the test is skipped with the
 * reason (outside CI) or fails (CI=true).
 */
#define MC_OPEN_OR_SKIP(cp)                                               \
	do {                                                              \
		char *why_ = NULL;                                        \
		if (mc_open((cp), &why_)) {                               \
			if (mc_required())                                \
				cr_assert_fail("CI=true and no cluster: %s", \
					       why_);                     \
			cr_skip_test("%s", why_);                         \
		}                                                         \
	} while (0)

/* Value of key in the cluster's environment (borrowed), or NULL. */
const char *mc_getenv(const struct mc_cluster *c, const char *key);

/*
 * Put the cluster's environment (OMPI_MCA_plm_rsh_agent, the subnet for
 * Open MPI's traffic, MD_CLUSTER_*) into this process's, for a test that
 * runs the tool or mpirun itself.  Criterion runs each test in a process
 * of its own, so it does not outlive the test.  The strings stay c's.
 */
void mc_putenv(const struct mc_cluster *c);

/* Index of the host named name, or -1. */
int mc_host_index(const struct mc_cluster *c, const char *name);

/*
 * Processes on host i other than its pid 1, started at or after `since`
 * (clock ticks, /proc/PID/stat field 22; 0: all).  Fills up to max in
 * out and returns how many there are (may exceed max).
 */
int mc_host_procs(const struct mc_cluster *c, int i,
		  unsigned long long since, struct mc_proc *out, int max);

/*
 * Our pid of the process with pid nspid inside host i (a pid from the
 * MPIR table), or 0 if there is none: for mj_proc_state and mj_tracer.
 */
pid_t mc_host_pid(const struct mc_cluster *c, int i, pid_t nspid);

/*
 * Wait up to timeout_ms until no host has a process started at or after
 * `since` (other than its pid 1), then SIGKILL by pid those still there
 * (each checked to be in the host's pid namespace with the same start
 * time).  Returns how many were killed; *left (if non-NULL) describes
 * them, "node2: pid 7 (ring) ...", or is NULL when none.
 */
int mc_sweep(const struct mc_cluster *c, unsigned long long since,
	     int timeout_ms, char **left);

/*
 * Start mpirun spread over the cluster: mj_start_opts with the hostfile,
 * --map-by node, the cluster's environment and extra mpirun arguments
 * args (NULL-terminated, or NULL).  mj_end then also clears the hosts.
 * c must outlive the job.  Returns the job or NULL after md_error.
 */
struct mj_job *mc_start_job(const struct mc_cluster *c, const char *mpirun,
			    const char *prog, int np, const char *dir,
			    char *const *args);

/*
 * `cluster.sh exec HOST argv...` with stdout in *out (free) for at most
 * timeout_ms.  Returns its exit status (0..255), or -1 if it could not
 * run or timed out.
 */
int mc_exec(const struct mc_cluster *c, const char *host,
	    char *const argv[], char **out, int timeout_ms);

#endif /* MD_TEST_CLUSTER_H */
