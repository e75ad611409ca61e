/*
 * run_proc.h - test helpers for the front end: run the mpi-deadlock
 * binary (MD_BIN) or any command with captured output, and track the
 * processes a test started by pid.  Prefix rp_.
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
 * Start argv with stdin from in_path (NULL: /dev/null) and stdout/stderr
 * to out_path/err_path.  The child stays in our process group.  Returns
 * the pid, or -1.
 */
pid_t rp_spawn(char *const argv[], const char *in_path, const char *out_path,
	       const char *err_path);

/*
 * Wait up to timeout_ms for pid.  Returns the exit code (128+N for a
 * signal), or -1 after SIGKILLing it when it did not end in time.
 */
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
