/*
 * cluster.c - the hosts of scripts/cluster.sh, read from its state dir:
 * hostfile (one host per line), env (KEY=VALUE), pids/HOST ("PID1 START
 * UNSHAREPID START").  Processes are ended by pid only, each checked to
 * be in the host's pid namespace with the start time seen.
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

#define MC_MAX_PROCS 512

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

bool mc_required(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

/* Inode of pid's pid namespace, 0 if gone. */
static unsigned long long pidns_of(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

void mc_free(struct mc_cluster *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nhosts; i++)
		free(c->hosts[i].name);
	for (char **e = c->env; e && *e; e++)
		free(*e);
	free(c->env);
	free(c->hosts);
	free(c->name);
	free(c->state);
	free(c->hostfile);
	free(c->script);
	free(c);
}

const char *mc_getenv(const struct mc_cluster *c, const char *key)
{
	size_t n = strlen(key);

	for (char **e = c->env; e && *e; e++)
		if (!strncmp(*e, key, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

void mc_putenv(const struct mc_cluster *c)
{
	for (char **e = c->env; e && *e; e++)
		putenv(*e);
}

int mc_host_index(const struct mc_cluster *c, const char *name)
{
	for (int i = 0; i < c->nhosts; i++)
		if (!strcmp(c->hosts[i].name, name))
			return i;
	return -1;
}

/* Lines of path, without their newline, NULL-ended (free each and it). */
static char **read_lines(const char *path)
{
	char *text = mj_slurp(path), *save = NULL, **lines;
	size_t n = 0;

	if (!text)
		return NULL;
	lines = xcalloc(strlen(text) / 2 + 2, sizeof(*lines));
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (*l)
			lines[n++] = xstrdup(l);
	free(text);
	return lines;
}

static void free_lines(char **lines)
{
	for (char **l = lines; l && *l; l++)
		free(*l);
	free(lines);
}

/* Host h's pid 1 from state/pids/NAME; 0 or a reason (free). */
static char *open_host(struct mc_cluster *c, struct mc_host *h)
{
	char *path = xasprintf("%s/pids/%s", c->state, h->name);
	char *text = mj_slurp(path);
	int pid = 0;
	char *why = NULL;

	if (!text || sscanf(text, "%d %llu", &pid, &h->start) != 2)
		why = xasprintf("cluster %s: no pid for host %s in %s", c->name,
				h->name, path);
	else if (mj_start_time(pid) != h->start)
		why = xasprintf("cluster %s: host %s is down (its sshd, pid %d,"
				" is gone): %s up again", c->name, h->name,
				pid, c->script);
	h->pid1 = pid;
	h->pidns = why ? 0 : pidns_of(pid);
	free(text);
	free(path);
	return why;
}

int mc_open(struct mc_cluster **out, char **why)
{
	const char *hf = getenv("MD_CLUSTER_HOSTFILE");
	struct mc_cluster *c;
	char *envpath, **hosts;
	int n = 0;

	*out = NULL;
	*why = NULL;
	if (!hf || !*hf) {
		*why = xstrdup("no test cluster: MD_CLUSTER_HOSTFILE is not set"
			       " (scripts/test.sh brings one up; by hand:"
			       " scripts/cluster.sh up 3, then"
			       " export MD_CLUSTER_HOSTFILE=<its last line>)");
		return -MD_E_GONE;
	}
	c = xcalloc(1, sizeof(*c));
	c->hostfile = xstrdup(hf);
	c->state = xstrdup(hf);
	*strrchr(c->state, '/') = '\0';
	envpath = xasprintf("%s/env", c->state);
	c->env = read_lines(envpath);
	hosts = read_lines(hf);
	free(envpath);
	if (!c->env || !hosts || !hosts[0] || !mc_getenv(c, "MD_CLUSTER")) {
		*why = xasprintf("no test cluster at %s (MD_CLUSTER_HOSTFILE):"
				 " bring it up with scripts/cluster.sh up 3",
				 hf);
		free_lines(hosts);
		mc_free(c);
		return -MD_E_GONE;
	}
	c->name = xstrdup(mc_getenv(c, "MD_CLUSTER"));
	c->script = xstrdup(mc_getenv(c, "MD_CLUSTER_SCRIPT") ?
			    mc_getenv(c, "MD_CLUSTER_SCRIPT") :
			    "scripts/cluster.sh");
	while (hosts[n])
		n++;
	c->hosts = xcalloc(n, sizeof(*c->hosts));
	for (c->nhosts = 0; c->nhosts < n && !*why; c->nhosts++) {
		c->hosts[c->nhosts].name = hosts[c->nhosts];
		hosts[c->nhosts] = NULL;
		*why = open_host(c, &c->hosts[c->nhosts]);
	}
	free_lines(hosts);
	if (*why) {
		mc_free(c);
		return -MD_E_GONE;
	}
	*out = c;
	return 0;
}

/* pid 1 inside, state, start time and comm from /proc/PID/status+stat. */
static bool proc_info(pid_t pid, struct mc_proc *p)
{
	char path[64], line[256];
	FILE *f;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->start = mj_start_time(pid);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f || !p->start) {
		if (f)
			fclose(f);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5))
			sscanf(line + 5, " %31[^\n]", p->comm);
		else if (!strncmp(line, "NSpid:", 6)) {
			/* The last field is the pid in the innermost ns. */
			char *last = strrchr(line, '\t');

			p->nspid = last ? atoi(last + 1) : 0;
		}
	}
	fclose(f);
	return true;
}

int mc_host_procs(const struct mc_cluster *c, int i,
		  unsigned long long since, struct mc_proc *out, int max)
{
	const struct mc_host *h = &c->hosts[i];
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d || !h->pidns) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((e = readdir(d))) {
		pid_t pid = atoi(e->d_name);
		struct mc_proc p;

		if (pid <= 0 || pid == h->pid1 || pidns_of(pid) != h->pidns)
			continue;
		/* A zombie is already dead: its parent reaps it. */
		if (mj_proc_state(pid) == 'Z' || !proc_info(pid, &p) ||
		    p.start < since)
			continue;
		if (n < max)
			out[n] = p;
		n++;
	}
	closedir(d);
	return n;
}

pid_t mc_host_pid(const struct mc_cluster *c, int i, pid_t nspid)
{
	struct mc_proc ps[MC_MAX_PROCS];
	int n = mc_host_procs(c, i, 0, ps, MC_MAX_PROCS);

	if (nspid == 1)
		return c->hosts[i].pid1;
	for (int k = 0; k < n && k < MC_MAX_PROCS; k++)
		if (ps[k].nspid == nspid)
			return ps[k].pid;
	return 0;
}

static int count_all(const struct mc_cluster *c, unsigned long long since)
{
	int n = 0;

	for (int i = 0; i < c->nhosts; i++)
		n += mc_host_procs(c, i, since, NULL, 0);
	return n;
}

/* Kill what is left on host i; append "node2: pid 7 (ring)" to *left. */
static int kill_left(const struct mc_cluster *c, int i,
		     unsigned long long since, char **left)
{
	struct mc_proc *ps = xcalloc(MC_MAX_PROCS, sizeof(*ps));
	int n = mc_host_procs(c, i, since, ps, MC_MAX_PROCS), killed = 0;

	for (int k = 0; k < n && k < MC_MAX_PROCS; k++) {
		/* Still the same process in the same host? */
		if (mj_start_time(ps[k].pid) != ps[k].start ||
		    pidns_of(ps[k].pid) != c->hosts[i].pidns)
			continue;
		if (kill(ps[k].pid, SIGKILL))
			continue;
		killed++;
		if (left) {
			char *more = xasprintf("%s%s%s: pid %d (%s, %d here)",
					       *left ? *left : "",
					       *left ? ", " : "",
					       c->hosts[i].name, ps[k].nspid,
					       ps[k].comm, ps[k].pid);
			free(*left);
			*left = more;
		}
	}
	free(ps);
	return killed;
}

int mc_sweep(const struct mc_cluster *c, unsigned long long since,
	     int timeout_ms, char **left)
{
	long long deadline = md_now_ns() + timeout_ms * 1000000LL;
	int killed = 0;

	if (left)
		*left = NULL;
	while (count_all(c, since) > 0 && md_now_ns() < deadline)
		sleep_ms(100);
	for (int i = 0; i < c->nhosts; i++)
		killed += kill_left(c, i, since, left);
	/* Killed processes may take a moment to be gone. */
	for (int t = 0; t < 50 && count_all(c, since) > 0; t++)
		sleep_ms(100);
	return killed;
}

struct mj_job *mc_start_job(const struct mc_cluster *c, const char *mpirun,
			    const char *prog, int np, const char *dir,
			    char *const *args)
{
	struct mj_opts o = {
		.hostfile = c->hostfile,
		.env = c->env,
		.args = args,
		.cluster = c,
	};

	return mj_start_opts(mpirun, prog, np, dir, &o);
}

int mc_exec(const struct mc_cluster *c, const char *host,
	    char *const argv[], char **out, int timeout_ms)
{
	char *dir = mj_tmpdir("mcexec"), *name, *outp, *errp, **av;
	size_t n = 0;
	int st;

	*out = NULL;
	if (!dir)
		return -1;
	name = xasprintf("MD_CLUSTER=%s", c->name);
	while (argv[n])
		n++;
	av = xcalloc(n + 6, sizeof(*av));
	av[0] = (char *)"/usr/bin/env";
	av[1] = name;
	av[2] = c->script;
	av[3] = (char *)"exec";
	av[4] = (char *)host;
	memcpy(av + 5, argv, n * sizeof(*av));
	outp = xasprintf("%s/out", dir);
	errp = xasprintf("%s/err", dir);
	st = rp_wait_status(rp_spawn(av, NULL, outp, errp), timeout_ms);
	*out = mj_slurp(outp);
	mj_rmdir(dir);
	free(dir);
	free(outp);
	free(errp);
	free(av);
	free(name);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}
