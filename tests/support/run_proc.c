/* run_proc.c - see run_proc.h. */
#include "run_proc.h"
#include "mpijob.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md.h"

const char *rp_bin(void)
{
	const char *b = getenv("MD_BIN");

	return b && access(b, X_OK) == 0 ? b : NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* In the child: fd from path (NULL: /dev/null), or exit 127. */
static void redirect(const char *path, int fd, int flags)
{
	int f = open(path ? path : "/dev/null", flags, 0644);

	if (f < 0) {
		fprintf(stderr, "open %s: %s\n", path ? path : "/dev/null",
			strerror(errno));
		_exit(127);
	}
	if (f != fd) {
		dup2(f, fd);
		close(f);
	}
}

pid_t rp_spawn_env(char *const argv[], char *const env[], const char *in_path,
		   const char *out_path, const char *err_path)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		/* Also here, so that a kill of the group cannot race the
		 * child. */
		setpgid(pid, pid);
		return pid;
	}
	/* Die with the test: one killed by its timeout leaves nothing. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	redirect(in_path, 0, O_RDONLY);
	redirect(out_path, 1, O_WRONLY | O_CREAT | O_TRUNC);
	redirect(err_path, 2, O_WRONLY | O_CREAT | O_TRUNC);
	for (char *const *e = env; e && *e; e++)
		putenv(*e);
	execvp(argv[0], argv);
	fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

pid_t rp_spawn(char *const argv[], const char *in_path, const char *out_path,
	       const char *err_path)
{
	return rp_spawn_env(argv, NULL, in_path, out_path, err_path);
}

/* Has pid exited (not yet reaped: its pid and group stay ours)?  1 yes,
 * 0 not yet, -1 it is no child of ours. */
static int exited(pid_t pid)
{
	siginfo_t si = { 0 };

	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		if (errno != EINTR)
			return -1;
	return si.si_pid == pid;
}

int rp_wait_status(pid_t pid, int timeout_ms)
{
	long long deadline = md_now_ns() + timeout_ms * 1000000LL;
	int st = -1, e;

	if (pid <= 0)
		return -1;
	while (!(e = exited(pid)) && md_now_ns() <= deadline)
		sleep_ms(20);
	if (e < 0)
		return -1;
	if (!e) {
		/* SIGTERM first: the tool detaches from its ranks. */
		kill(pid, SIGTERM);
		for (int t = 0; t < 150 && !exited(pid); t++)
			sleep_ms(20);
	}
	/* The leader is not reaped yet, so its group is nobody else's:
	 * whatever it left behind (an mpirun, ranks) goes with it. */
	kill(-pid, SIGKILL);
	if (waitpid(pid, &st, 0) != pid || !e)
		return -1;
	return st;
}

int rp_wait(pid_t pid, int timeout_ms)
{
	int st = rp_wait_status(pid, timeout_ms);

	if (st == -1)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

void rp_run(char *const argv[], const char *in_path, int timeout_ms,
	    struct rp_result *r)
{
	char *dir = mj_tmpdir("run-test"), out[4096], err[4096];

	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	r->code = rp_wait(rp_spawn(argv, in_path, out, err), timeout_ms);
	/* Both files exist: rp_spawn created them. */
	r->out = mj_slurp(out);
	r->err = mj_slurp(err);
	mj_rmdir(dir);
	free(dir);
}

void rp_result_free(struct rp_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

bool rp_alive(pid_t pid)
{
	char path[64], *s, *p;
	bool alive;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = mj_slurp(path);
	p = s ? strrchr(s, ')') : NULL;
	alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	free(s);
	return alive;
}

int rp_rank_pids(const char *dir, pid_t *pids, int max)
{
	char path[4096], *s;
	int i, n = 0;

	for (i = 0; i < 64 && n < max; i++) {
		snprintf(path, sizeof(path), "%s/rank.%d.pid", dir, i);
		s = mj_slurp(path);
		if (s && atoi(s) > 0)
			pids[n++] = atoi(s);
		free(s);
	}
	return n;
}

int rp_wait_gone(const pid_t *pids, int n, int ms)
{
	int alive = 0;

	for (int waited = 0;; waited += 50) {
		alive = 0;
		for (int k = 0; k < n; k++)
			alive += rp_alive(pids[k]);
		if (!alive || waited >= ms)
			return alive;
		usleep(50000);
	}
}

void rp_kill_all(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (rp_alive(pids[i]))
			kill(pids[i], SIGKILL);
}

/* Rank i receives from rank i + 1: a ring that never ends.  Each rank
 * first writes its pid to DIR/rank.I.pid (DIR: its first argument). */
static const char ring_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n{\n"
	"	int rank, size, x = 0;\n	char p[4096];\n	FILE *f;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
	"	MPI_Comm_size(MPI_COMM_WORLD, &size);\n"
	"	snprintf(p, sizeof(p), \"%s/rank.%d.pid\", argv[1], rank);\n"
	"	if ((f = fopen(p, \"w\"))) {\n"
	"		fprintf(f, \"%d\\n\", (int)getpid());\n		fclose(f);\n	}\n"
	"	MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD,\n"
	"		 MPI_STATUS_IGNORE);\n"
	"	MPI_Finalize();\n	return 0;\n}\n";

/* The same ring in Fortran 2008 (use mpi_f08). */
static const char ring_f08_src[] =
	"program ring\n"
	"  use mpi_f08\n"
	"  implicit none\n"
	"  integer :: rank, size, x, u\n"
	"  character(len=4096) :: dir, path\n"
	"  call MPI_Init()\n"
	"  call MPI_Comm_rank(MPI_COMM_WORLD, rank)\n"
	"  call MPI_Comm_size(MPI_COMM_WORLD, size)\n"
	"  call get_command_argument(1, dir)\n"
	"  write (path, '(A,\"/rank.\",I0,\".pid\")') trim(dir), rank\n"
	"  open (newunit=u, file=trim(path), status='replace')\n"
	"  write (u, '(I0)') getpid()\n"
	"  close (u)\n"
	"  call MPI_Recv(x, 1, MPI_INTEGER, mod(rank + 1, size), 0, &\n"
	"                MPI_COMM_WORLD, MPI_STATUS_IGNORE)\n"
	"  call MPI_Finalize()\n"
	"end program ring\n";

/* One parent that spawns one child, then receives from it on the
 * intercommunicator while the child receives from it: a deadlock across
 * two jobs.  The parent writes DIR/rank.0.pid, the child rank.1.pid. */
const char rp_spawn_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n{\n"
	"	MPI_Comm parent, inter;\n	int x = 0;\n	char p[4096];\n"
	"	FILE *f;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	MPI_Comm_get_parent(&parent);\n"
	"	snprintf(p, sizeof(p), \"%s/rank.%d.pid\", argv[1],\n"
	"		 parent != MPI_COMM_NULL);\n"
	"	if ((f = fopen(p, \"w\"))) {\n"
	"		fprintf(f, \"%d\\n\", (int)getpid());\n		fclose(f);\n	}\n"
	"	if (parent == MPI_COMM_NULL) {\n"
	"		MPI_Comm_spawn(argv[0], argv + 1, 1, MPI_INFO_NULL, 0,\n"
	"			       MPI_COMM_WORLD, &inter,\n"
	"			       MPI_ERRCODES_IGNORE);\n"
	"		parent = inter;\n	}\n"
	"	MPI_Recv(&x, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);\n"
	"	MPI_Finalize();\n	return 0;\n}\n";

static int build(const char *compiler, const char *prog, const char *ext,
		 const char *text)
{
	char *src = NULL, *cc[] = { (char *)compiler, (char *)"-g",
				    (char *)"-o", (char *)prog, NULL, NULL };
	FILE *f;
	int rc = -1;

	if (asprintf(&src, "%s.%s", prog, ext) < 0)
		return -1;
	cc[4] = src;
	f = fopen(src, "w");
	if (f) {
		fputs(text, f);
		rc = fclose(f) ? -1 : rp_wait(rp_spawn(cc, NULL, NULL, NULL),
					      60000);
	}
	free(src);
	return rc;
}

int rp_build_ring(const char *mpicc, const char *prog)
{
	return build(mpicc, prog, "c", ring_src);
}

int rp_build_ring_f08(const char *mpif90, const char *prog)
{
	return build(mpif90, prog, "f90", ring_f08_src);
}

int rp_build_spawn(const char *mpicc, const char *prog)
{
	return build(mpicc, prog, "c", rp_spawn_src);
}
