/*
 * run_proc.h - the tests' one process runner: run the mpi-deadlock
 * binary (MD_BIN) or any command with captured output, and track the
 * processes a test started by pid.  MPI jobs start through it too
 * (mj_start*, support/mpijob.h).  Prefix rp_.
 */
#ifndef MD_TESTS_RUN_PROC_H
#define MD_TESTS_RUN_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct rp_result {
	int code;	/* exit code as a shell gives it; -1: timed out */
	char *out;	/* captured stdout, NUL-terminated (free) */
	char *err;	/* captured stderr (free) */
};

/* $MD_BIN if it names an executable, else NULL (the caller skips). */
const char *rp_bin(void);


/*
 * Start argv (argv[0] a path or a name looked up in PATH) with stdin
 * from in_path and stdout/stderr to out_path/err_path (each NULL:
 * /dev/null), in a process group of its own, with SIGTERM as its
 * parent-death signal (a test killed by its timeout leaves nothing).
 * Returns the pid, or -1.
 */
pid_t rp_spawn(char *const argv[], const char *in_path, const char *out_path,
	       const char *err_path);
/* The same with env (KEY=VALUE strings, NULL-terminated; NULL: none)
 * added to the child's environment. */
pid_t rp_spawn_env(char *const argv[], char *const env[], const char *in_path,
		   const char *out_path, const char *err_path);

/*
 * Wait up to timeout_ms for pid, our child.  Returns its wait status, or
 * -1 if pid is not a process (rp_spawn failed) or did not end in time:
 * then it got SIGTERM, up to 3 s to end, and SIGKILL to its process
 * group, and is reaped.
 */
int rp_wait_status(pid_t pid, int timeout_ms);
/* rp_wait_status as an exit code (128+N for a signal), -1 the same. */
int rp_wait(pid_t pid, int timeout_ms);

/* rp_spawn + rp_wait with output captured into r (rp_result_free). */
void rp_run(char *const argv[], const char *in_path, int timeout_ms,
	    struct rp_result *r);
void rp_result_free(struct rp_result *r);

/* Is pid a live process (not a zombie)? */
bool rp_alive(pid_t pid);

/* Read the pids in dir/rank.*.pid files into pids (at most max). */
int rp_rank_pids(const char *dir, pid_t *pids, int max);

/* Wait up to ms for the pids to be gone; returns how many are alive. */
int rp_wait_gone(const pid_t *pids, int n, int ms);

/* SIGKILL the pids that are still alive (cleanup after a failure). */
void rp_kill_all(const pid_t *pids, int n);

/*
 * Compile a ring deadlock (rank i waits in MPI_Recv from rank i + 1,
 * after writing its pid to DIR/rank.I.pid, DIR being its first argument)
 * with mpicc into prog, from prog.c.  Returns mpicc's exit code (0), or
 * -1.
 */
int rp_build_ring(const char *mpicc, const char *prog);
/* The same ring in Fortran 2008 (use mpi_f08), from prog.f90. */
int rp_build_ring_f08(const char *mpif90, const char *prog);
/* A parent (run it with -np 1) that spawns one child; each waits in
 * MPI_Recv for the other on their intercommunicator.  The parent writes
 * DIR/rank.0.pid, the child DIR/rank.1.pid. */
int rp_build_spawn(const char *mpicc, const char *prog);
/* Its source, for another MPI's compiler. */
extern const char rp_spawn_src[];

#endif /* MD_TESTS_RUN_PROC_H */
