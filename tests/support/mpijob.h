/*
 * mpijob.h - start an MPI job (or any command) from a test and end every
 * process of it on every path, never by name.
 */
#ifndef MD_TEST_MPIJOB_H
#define MD_TEST_MPIJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MJ_MAX_RANKS 64

struct mc_cluster;

struct mj_job {
	pid_t pid;		/* mpirun, our child, in its own process group */
	bool reaped;
	int status;		/* wait status once reaped */
	char *out;		/* path of its stdout */
	char *err;		/* path of its stderr */
	int nranks;
	pid_t ranks[MJ_MAX_RANKS];	/* rank pids seen (mpirun's children) */
	unsigned long long start[MJ_MAX_RANKS];	/* their start times, so
						 * a reused pid is never hit */
	const struct mc_cluster *cluster;	/* hosts it runs on (borrowed,
						 * outlives the job), or NULL */
	unsigned long long pid_start;	/* mpirun's start time */
	bool term_group;	/* mj_end's SIGTERM to the process group */
};

/* How mj_start_opts places and starts a job; every field may be NULL. */
struct mj_opts {
	const char *hostfile;	/* --hostfile FILE --map-by node */
	char *const *env;	/* KEY=VALUE for mpirun's environment (and
				 * so its daemons'), NULL-terminated */
	char *const *args;	/* more mpirun arguments before prog,
				 * NULL-terminated */
	bool hydra;		/* MPICH's Hydra mpiexec: `mpiexec [args...]
				 * -np np prog`, none of Open MPI's options */
	const struct mc_cluster *cluster;	/* set as j->cluster: mj_end
						 * then ends what the job left
						 * on those hosts */
	char *const *prefix;	/* words before mpirun, NULL-terminated:
				 * a launcher such as `salloc -N3 ...` */
	bool term_group;	/* mj_end sends SIGTERM to the job's
				 * process group and waits 10 s: for a
				 * launcher (salloc, srun) that does not
				 * pass it on to what it started */
};

/*
 * Start `mpirun --allow-run-as-root --oversubscribe --mca pml ob1 -np np
 * prog` (mpirun: a path or a name looked up in PATH) with stdin
 * /dev/null, stdout in dir/job.out, stderr in dir/job.err, in its own
 * process group, with SIGTERM as its parent-death signal.  Returns the
 * job (mj_end) or NULL after md_error.
 */
struct mj_job *mj_start(const char *mpirun, const char *prog, int np,
			const char *dir);
/* The same spread over the hosts of an Open MPI hostfile (--map-by node:
 * rank r on host r mod hosts); its ranks are not this machine's
 * children, so mj_scan_ranks finds none.  mpirun gets this process's
 * environment (scripts/test.sh exports the cluster's); mc_start_job
 * (support/cluster.h) sets it itself and clears the hosts in mj_end. */
struct mj_job *mj_start_hosts(const char *mpirun, const char *prog, int np,
			      const char *dir, const char *hostfile);

/*
 * mj_start with options (o may be NULL: same as mj_start).  The
 * arguments are `[prefix...] mpirun --allow-run-as-root --oversubscribe
 * --mca pml ob1 [--hostfile F --map-by node] [args...] -np np prog`.
 */
struct mj_job *mj_start_opts(const char *mpirun, const char *prog, int np,
			     const char *dir, const struct mj_opts *o);
/* Start argv as the job (a launcher of its own, e.g. srun), the same
 * way; of o only env, cluster and term_group count (o may be NULL). */
struct mj_job *mj_start_argv(char *const argv[], const char *dir,
			     const struct mj_opts *o);
/* The same with mpirun option pre (NULL: none), e.g. "-x
 * LD_PRELOAD=...", as two arguments pre and pre_arg. */
struct mj_job *mj_start_with(const char *mpirun, const char *pre,
			     const char *pre_arg, const char *prog, int np,
			     const char *dir);

/*
 * Wait until the job's stdout holds at least n lines starting with
 * prefix.  Returns 0, -MD_E_GONE if mpirun exited first, or -MD_E_INTR
 * after timeout_ms.  No message.
 */
int mj_wait_lines(struct mj_job *j, const char *prefix, int n, int timeout_ms);

/* Add mpirun's current children to j->ranks.  Returns how many it has. */
int mj_scan_ranks(struct mj_job *j);

/*
 * Wait up to timeout_ms for mpirun to exit by itself.  Returns 0 (status
 * in j->status) or -MD_E_INTR on timeout.
 */
int mj_wait_exit(struct mj_job *j, int timeout_ms);

/*
 * End the job: SIGTERM to mpirun, up to 5 s for it to exit, then
 * SIGKILL to every rank pid still alive and to mpirun's process group
 * (mpirun can hang in its own finalize), reap mpirun, free j.
 * mj_end(NULL) does nothing.
 */
void mj_end(struct mj_job *j);

/*
 * mj_end, and for a job on a cluster (j->cluster) also: wait up to 10 s
 * until no process started since mpirun is left on any host of it, then
 * SIGKILL by pid (host pid namespace checked) those still there.  Returns
 * how many had to be killed (0: ending mpirun ended everything), with a
 * description of each in *left if left != NULL (free; NULL when 0).
 */
int mj_end_all(struct mj_job *j, char **left);

/* Start time of pid (clock ticks since boot, /proc/PID/stat field 22), or
 * 0 if it is gone. */
unsigned long long mj_start_time(pid_t pid);

/* One-letter state of pid from /proc/PID/stat, or 0 if it is gone. */
char mj_proc_state(pid_t pid);
/* TracerPid of pid, 0 if none or gone. */
pid_t mj_tracer(pid_t pid);

/* The whole file at path, NUL-terminated (free), or NULL.  The tests'
 * one reader of whole files. */
char *mj_slurp(const char *path);
/* The same with its length in *len (a binary file may hold NULs). */
char *mj_slurp_len(const char *path, size_t *len);

/* Count lines of text starting with prefix. */
int mj_count_lines(const char *text, const char *prefix);

/* A fresh directory "/tmp/md-NAME.XXXXXX": the string to free (and the
 * directory to mj_rmdir), NULL if it cannot be made. */
char *mj_tmpdir(const char *name);
/* Remove dir and everything in it (NULL: nothing). */
void mj_rmdir(const char *dir);
/* A test's folder at its end: removed (kept if MD_KEEP is set, for a
 * look after a failure), freed, *dir NULL. */
void mj_tmpdir_end(char **dir);
/* Keep the folder of a failed test for whoever looks later: it moves to
 * $MD_FAILURES (default /var/tmp/mpi-deadlock-failures) as
 * <name>.<time>.<pid>, or stays where it is if it cannot; the path is
 * printed on stderr.  Frees *dir. */
void mj_tmpdir_keep(char **dir, const char *name);

#endif /* MD_TEST_MPIJOB_H */
