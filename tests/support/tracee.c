/* tracee.c - a child process for the target and stacks tests. */
#include "support/tracee.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "support/mpijob.h"

static volatile uint64_t tr_magic = TR_MAGIC;
static volatile sig_atomic_t tr_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	tr_usr1++;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* noinline: the stacks test looks for this very frame. */
__attribute__((noinline)) void tr_known_wait(int fd, char *byte)
{
	while (read(fd, byte, 1) < 0 && errno == EINTR)
		;
	__asm__ volatile("" ::: "memory");
}

static void child_main(int cmd, int reply, int nthreads)
{
	uint64_t addr = (uint64_t)(uintptr_t)&tr_magic;
	pthread_t th;
	char c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th, NULL, sleeper, NULL);
	if (write(reply, &addr, sizeof(addr)) != sizeof(addr))
		_exit(1);
	for (;;) {
		c = 0;
		tr_known_wait(cmd, &c);
		if (c != 'p')
			_exit(0);
		int n = (int)tr_usr1;
		if (write(reply, &n, sizeof(n)) != sizeof(n))
			_exit(1);
	}
}

static int read_timeout(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

int tr_child_start(struct tr_child *c, int nthreads)
{
	int to_child[2], from_child[2];

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	if (pipe(to_child) < 0 || pipe(from_child) < 0)
		return -1;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child_main(to_child[0], from_child[1], nthreads);
		_exit(0);
	}
	close(to_child[0]);
	close(from_child[1]);
	c->cmd = to_child[1];
	c->reply = from_child[0];
	if (read_timeout(c->reply, &c->magic_addr, sizeof(c->magic_addr),
			 5000) < 0) {
		tr_child_end(c);
		return -1;
	}
	/* Let the threads start: the tests count them. */
	usleep(100 * 1000);
	return 0;
}

int tr_child_ping(struct tr_child *c, int timeout_ms)
{
	int n;

	if (write(c->cmd, "p", 1) != 1)
		return -1;
	if (read_timeout(c->reply, &n, sizeof(n), timeout_ms) < 0)
		return -1;
	return n;
}

void tr_child_end(struct tr_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, __WALL);
		close(c->cmd);
		close(c->reply);
	}
	c->pid = -1;
}

void tr_stderr_begin(struct tr_capture *cap)
{
	fflush(stderr);
	cap->file = tmpfile();
	cap->saved = dup(2);
	dup2(fileno(cap->file), 2);
}

char *tr_stderr_end(struct tr_capture *cap)
{
	char path[64], *s;

	fflush(stderr);
	dup2(cap->saved, 2);
	close(cap->saved);
	/* A tmpfile has no name left: read it through its descriptor. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(cap->file));
	s = mj_slurp(path);
	fclose(cap->file);
	return s ? s : xstrdup("");
}

/* ---- a real Open MPI job ---- */

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

const char *tr_job_start(struct tr_job *j, const char *src, int np)
{
	char cmd[2048], inc[512];
	const char *slash = strrchr(src, '/');

	memset(j, 0, sizeof(*j));
	if (access(src, R_OK) != 0)
		return "sample source not found (run from the repository root)";
	if (system("command -v mpicc >/dev/null && command -v mpirun >/dev/null"))
		return "mpicc or mpirun not installed";
	snprintf(j->dir, sizeof(j->dir), "/tmp/md-tracee-XXXXXX");
	if (!mkdtemp(j->dir))
		return "mkdtemp failed";
	snprintf(j->exe, sizeof(j->exe), "%s/%s", j->dir,
		 slash ? slash + 1 : src);
	j->exe[strlen(j->exe) - 2] = '\0';	/* drop ".c" */
	snprintf(inc, sizeof(inc), "%.*s", slash ? (int)(slash - src) : 1,
		 slash ? src : ".");
	snprintf(cmd, sizeof(cmd), "mpicc -g -O1 -I%s -o %s %s", inc, j->exe,
		 src);
	if (system(cmd) != 0) {
		tr_job_end(j);
		return "mpicc failed";
	}
	j->job = mj_start("mpirun", j->exe, np, j->dir);
	if (!j->job || mj_wait_lines(j->job, "MD-READY", np, 30000) != 0) {
		tr_job_end(j);
		return "the MPI job did not start within 30 s";
	}
	j->mpirun = j->job->pid;
	usleep(700 * 1000);	/* into the call after the line */
	if (mj_scan_ranks(j->job) != np || np > TR_MAX_RANKS) {
		tr_job_end(j);
		return "the MPI job does not have its ranks as children";
	}
	j->nranks = np;
	memcpy(j->ranks, j->job->ranks, (size_t)np * sizeof(pid_t));
	qsort(j->ranks, (size_t)np, sizeof(pid_t), cmp_pid);
	return NULL;
}

void tr_job_end(struct tr_job *j)
{
	char cmd[300];

	mj_end(j->job);
	j->job = NULL;
	j->mpirun = 0;
	j->nranks = 0;
	if (j->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", j->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", j->dir);
		j->dir[0] = '\0';
	}
}

int tr_line_of(const char *path, const char *text)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, text)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

char tr_proc_state(pid_t pid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = mj_slurp(path);
	p = text ? strrchr(text, ')') : NULL;
	if (p && p[1] == ' ')
		c = p[2];
	free(text);
	return c;
}
