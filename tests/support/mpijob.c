/*
 * mpijob.c - launching and ending test jobs.  Everything here ends
 * processes by pid or by the process group we created, never by name:
 * other engineers run their own MPI jobs on the same machine.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md.h"
#include "support/cluster.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct mj_job *mj_start(const char *mpirun, const char *prog, int np,
			const char *dir)
{
	return mj_start_opts(mpirun, prog, np, dir, NULL);
}

struct mj_job *mj_start_hosts(const char *mpirun, const char *prog, int np,
			      const char *dir, const char *hostfile)
{
	struct mj_opts o = { .hostfile = hostfile };

	return mj_start_opts(mpirun, prog, np, dir, &o);
}

/* mpirun's argument vector (free the array only). */
static char **job_argv(const char *mpirun, const char *prog, const char *nps,
		       const struct mj_opts *o)
{
	size_t n = 0, cap = 16;
	char **av;

	for (char *const *a = o && o->args ? o->args : NULL; a && *a; a++)
		cap++;
	for (char *const *a = o && o->prefix ? o->prefix : NULL; a && *a; a++)
		cap++;
	av = xcalloc(cap, sizeof(*av));
	for (char *const *a = o && o->prefix ? o->prefix : NULL; a && *a; a++)
		av[n++] = *a;
	av[n++] = (char *)mpirun;
	if (o && o->hydra) {
		for (char *const *a = o->args; a && *a; a++)
			av[n++] = *a;
		av[n++] = (char *)"-np";
		av[n++] = (char *)nps;
		av[n++] = (char *)prog;
		av[n] = NULL;
		return av;
	}
	av[n++] = (char *)"--allow-run-as-root";
	av[n++] = (char *)"--oversubscribe";
	av[n++] = (char *)"--mca";
	av[n++] = (char *)"pml";
	av[n++] = (char *)"ob1";
	if (o && o->hostfile) {
		av[n++] = (char *)"--hostfile";
		av[n++] = (char *)o->hostfile;
		av[n++] = (char *)"--map-by";
		av[n++] = (char *)"node";
	}
	for (char *const *a = o && o->args ? o->args : NULL; a && *a; a++)
		av[n++] = *a;
	av[n++] = (char *)"-np";
	av[n++] = (char *)nps;
	av[n++] = (char *)prog;
	av[n] = NULL;
	return av;
}

struct mj_job *mj_start_with(const char *mpirun, const char *pre,
			     const char *pre_arg, const char *prog, int np,
			     const char *dir)
{
	char *args[] = { (char *)pre, (char *)pre_arg, NULL };
	struct mj_opts o = { .args = pre ? args : NULL };

	return mj_start_opts(mpirun, prog, np, dir, &o);
}

struct mj_job *mj_start_opts(const char *mpirun, const char *prog, int np,
			     const char *dir, const struct mj_opts *o)
{
	char nps[16], **av;
	struct mj_job *j;

	snprintf(nps, sizeof(nps), "%d", np);
	av = job_argv(mpirun, prog, nps, o);
	j = mj_start_argv(av, dir, o);
	free(av);
	return j;
}

struct mj_job *mj_start_argv(char *const argv[], const char *dir,
			     const struct mj_opts *o)
{
	struct mj_job *j = xcalloc(1, sizeof(*j));

	j->out = xasprintf("%s/job.out", dir);
	j->err = xasprintf("%s/job.err", dir);
	j->cluster = o ? o->cluster : NULL;
	j->term_group = o && o->term_group;
	j->pid = rp_spawn_env(argv, o ? o->env : NULL, NULL, j->out, j->err);
	if (j->pid < 0) {
		md_error("fork for %s: %s", argv[0], strerror(errno));
		free(j->out);
		free(j->err);
		free(j);
		return NULL;
	}
	j->pid_start = mj_start_time(j->pid);
	return j;
}

char *mj_slurp(const char *path)
{
	return mj_slurp_len(path, NULL);
}

char *mj_slurp_len(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap * 2 + 8192;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

int mj_count_lines(const char *text, const char *prefix)
{
	size_t plen = strlen(prefix);
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, prefix, plen))
			n++;
	return n;
}

static bool reap(struct mj_job *j, int options)
{
	if (!j->reaped && waitpid(j->pid, &j->status, options) == j->pid)
		j->reaped = true;
	return j->reaped;
}

int mj_wait_lines(struct mj_job *j, const char *prefix, int n, int timeout_ms)
{
	long long deadline = md_now_ns() + timeout_ms * 1000000LL;

	for (;;) {
		char *text = mj_slurp(j->out);
		int have = mj_count_lines(text, prefix);

		free(text);
		if (have >= n)
			return 0;
		if (reap(j, WNOHANG))
			return -MD_E_GONE;
		if (md_now_ns() > deadline)
			return -MD_E_INTR;
		sleep_ms(50);
	}
}

/* Fields 3 (state), 4 (ppid) and 22 (start time) of /proc/PID/stat. */
static int read_stat(pid_t pid, char *state, pid_t *ppid,
		     unsigned long long *start)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -MD_E_GONE;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold blanks and parentheses */
	if (!p || sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 state, ppid, start) != 3)
		return -MD_E_GONE;
	return 0;
}

unsigned long long mj_start_time(pid_t pid)
{
	char st;
	pid_t ppid;
	unsigned long long start;

	return read_stat(pid, &st, &ppid, &start) ? 0 : start;
}

char mj_proc_state(pid_t pid)
{
	char st;
	pid_t ppid;
	unsigned long long start;

	return read_stat(pid, &st, &ppid, &start) ? 0 : st;
}

pid_t mj_tracer(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

static void add_rank(struct mj_job *j, pid_t pid, unsigned long long start)
{
	for (int i = 0; i < j->nranks; i++)
		if (j->ranks[i] == pid)
			return;
	if (j->nranks < MJ_MAX_RANKS) {
		j->ranks[j->nranks] = pid;
		j->start[j->nranks++] = start;
	}
}

/* Is pid Hydra's proxy (MPICH), whose children are the ranks? */
static bool is_hydra_proxy(pid_t pid)
{
	char path[64], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "hydra_pmi_proxy", 15);
}

/* Children of parent (and, below a Hydra proxy, its children). */
static void scan_children(struct mj_job *j, pid_t parent, int depth)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t pid = atoi(e->d_name), ppid;
		unsigned long long start;
		char st;

		if (pid <= 0 || read_stat(pid, &st, &ppid, &start) ||
		    ppid != parent || st == 'Z')
			continue;
		add_rank(j, pid, start);
		if (depth == 0 && is_hydra_proxy(pid))
			scan_children(j, pid, 1);
	}
	closedir(d);
}

int mj_scan_ranks(struct mj_job *j)
{
	scan_children(j, j->pid, 0);
	return j->nranks;
}

int mj_wait_exit(struct mj_job *j, int timeout_ms)
{
	long long deadline = md_now_ns() + timeout_ms * 1000000LL;

	while (!reap(j, WNOHANG)) {
		if (md_now_ns() > deadline)
			return -MD_E_INTR;
		sleep_ms(50);
	}
	return 0;
}

/* Is rank i still the process we saw (not gone, not a reused pid)? */
static bool rank_alive(const struct mj_job *j, int i)
{
	char st;
	pid_t ppid;
	unsigned long long start;

	return !read_stat(j->ranks[i], &st, &ppid, &start) &&
	       start == j->start[i] && st != 'Z';
}

static bool any_rank_alive(const struct mj_job *j)
{
	for (int i = 0; i < j->nranks; i++)
		if (rank_alive(j, i))
			return true;
	return false;
}

void mj_end(struct mj_job *j)
{
	mj_end_all(j, NULL);
}

int mj_end_all(struct mj_job *j, char **left)
{
	int killed = 0;

	if (left)
		*left = NULL;
	if (!j)
		return 0;
	if (!j->reaped) {
		mj_scan_ranks(j);
		kill(j->term_group ? -j->pid : j->pid, SIGTERM);
		mj_wait_exit(j, j->term_group ? 10000 : 5000);
	}
	/* mpirun ends its ranks on SIGTERM, but not always in time, and
	 * orphans of a killed mpirun spin forever. */
	for (int t = 0; t < 20 && any_rank_alive(j); t++)
		sleep_ms(100);
	for (int i = 0; i < j->nranks; i++)
		if (rank_alive(j, i))
			kill(j->ranks[i], SIGKILL);
	if (!j->reaped) {
		/* Seen: mpirun stuck in PMIx_server_finalize after SIGTERM. */
		kill(-j->pid, SIGKILL);
		reap(j, 0);
	}
	/* Remote ranks are no children of ours: their orted ends them when
	 * mpirun goes; what is still there after a while is killed. */
	if (j->cluster)
		killed = mc_sweep(j->cluster, j->pid_start, 10000, left);
	free(j->out);
	free(j->err);
	free(j);
	return killed;
}

char *mj_tmpdir(const char *name)
{
	char *dir = xasprintf("/tmp/md-%s.XXXXXX", name);

	if (mkdtemp(dir))
		return dir;
	free(dir);
	return NULL;
}

void mj_tmpdir_end(char **dir)
{
	if (!getenv("MD_KEEP"))
		mj_rmdir(*dir);
	free(*dir);
	*dir = NULL;
}

void mj_tmpdir_keep(char **dir, const char *name)
{
	const char *base = getenv("MD_FAILURES");
	char *to = NULL;

	if (!*dir)
		return;
	if (!base || !*base)
		base = "/var/tmp/mpi-deadlock-failures";
	if (mkdir(base, 0755) == 0 || errno == EEXIST) {
		to = xasprintf("%s/%s.%lld.%d", base, name,
			       (long long)time(NULL), (int)getpid());
		if (rename(*dir, to)) {
			free(to);
			to = NULL;
		}
	}
	fprintf(stderr, "  kept the failed test's files in %s\n",
		to ? to : *dir);
	free(to);
	free(*dir);
	*dir = NULL;
}

void mj_rmdir(const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (unlink(p))
			mj_rmdir(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}
