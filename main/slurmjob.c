/*
 * slurmjob.c - `mpi-deadlock --slurm JOBID[.STEP]`: from any host of a
 * Slurm cluster (a login node), find the step's starter through Slurm
 * (`scontrol -o show job/step`: its SrunHost:Pid), and run the front end
 * where it is: here when that is this host, else on that node through
 * `srun --overlap --jobid=JOB`, its report and exit code passed through.
 * The remote side is the same command (`--slurm J.S`), which finds the
 * starter on its own host.
 */
#include "slurmjob.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md.h"
#include "slurm.h"

/* "J" or "J.S" with decimal J and S. */
static bool sj_parse(const char *arg, char **job, char **step)
{
	size_t n = strspn(arg, "0123456789");

	if (!n || (arg[n] && (arg[n] != '.' || !arg[n + 1] ||
			      strspn(arg + n + 1, "0123456789") !=
				      strlen(arg + n + 1))))
		return false;
	*job = xstrndup(arg, n);
	*step = arg[n] ? xstrdup(arg + n + 1) : NULL;
	return true;
}

static int sj_scontrol(const char *what, const char *id, char **out,
		       char **err)
{
	char a0[] = "scontrol", a1[] = "-o", a2[] = "show";
	char *w = xstrdup(what), *i = xstrdup(id);
	char *argv[] = { a0, a1, a2, w, i, NULL };
	int rc = sl_capture(argv, out, err);

	free(w);
	free(i);
	return rc;
}

/* The job: running, and ours.  Returns 0 or MD_EXIT_ERROR (reported). */
static int sj_check_job(const char *job)
{
	char *out = NULL, *err = NULL, *state = NULL, *user = NULL;
	char *reason = NULL;
	int rc = sj_scontrol("job", job, &out, &err), ret = MD_EXIT_ERROR;
	unsigned long uid;
	char *paren;

	if (rc != 0) {
		if (strstr(err, "Invalid job id"))
			md_error("--slurm %s: Slurm knows no job %s (it ended a "
				 "while ago, or never existed): nothing to attach "
				 "to; see squeue for running jobs", job, job);
		else
			md_error("--slurm %s: scontrol show job failed: %s (is "
				 "SLURM_CONF right, and slurmctld up?)", job,
				 *err ? err : "no message");
		goto out;
	}
	state = sl_field(out, "JobState");
	user = sl_field(out, "UserId");
	reason = sl_field(out, "Reason");
	paren = user ? strchr(user, '(') : NULL;
	if (paren && getuid() != 0 &&
	    (uid = strtoul(paren + 1, NULL, 10)) != (unsigned long)getuid()) {
		*paren = 0;
		md_error("--slurm %s: job %s belongs to user %s (uid %lu), not "
			 "to you: only its owner or root can attach to its ranks",
			 job, job, user, uid);
		goto out;
	}
	if (!state || strcmp(state, "RUNNING")) {
		md_error("--slurm %s: job %s is not running (%s%s%s): there is "
			 "nothing to attach to%s", job, job,
			 state ? state : "no state",
			 reason && strcmp(reason, "None") ? ", " : "",
			 reason && strcmp(reason, "None") ? reason : "",
			 state && !strcmp(state, "PENDING") ?
				 " until it starts" : "");
		goto out;
	}
	ret = 0;
out:
	free(out);
	free(err);
	free(state);
	free(user);
	free(reason);
	return ret;
}

struct sj_step {
	char *id;		/* "J.S" */
	char *name;
	char *host;		/* SrunHost */
	int pid;		/* its srun's pid there */
};

/* The steps of job that could be an MPI job (numbered, not ours). */
static int sj_steps(const char *job, struct sj_step **steps, int *n)
{
	char *out = NULL, *err = NULL, *save = NULL;
	int rc = sj_scontrol("step", job, &out, &err);

	*steps = NULL;
	*n = 0;
	if (rc != 0 && !strstr(err, "Invalid job id")) {
		md_error("--slurm %s: scontrol show step failed: %s", job,
			 *err ? err : "no message");
		free(out);
		free(err);
		return MD_EXIT_ERROR;
	}
	for (char *l = strtok_r(out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *id = sl_field(l, "StepId"), *name = sl_field(l, "Name");
		char *sp = sl_field(l, "SrunHost:Pid"), *colon, *dot;

		dot = id ? strchr(id, '.') : NULL;
		colon = sp ? strrchr(sp, ':') : NULL;
		if (!dot || !isdigit((unsigned char)dot[1]) || !colon ||
		    (name && !strncmp(name, "mpi-deadlock", 12))) {
			free(id);
			free(name);
			free(sp);
			continue;
		}
		*colon = 0;
		*steps = xrealloc(*steps, ((size_t)*n + 1) * sizeof(**steps));
		(*steps)[(*n)++] = (struct sj_step){
			.id = id, .name = name ? name : xstrdup("?"),
			.host = sp, .pid = atoi(colon + 1),
		};
	}
	free(out);
	free(err);
	return 0;
}

static void sj_steps_free(struct sj_step *s, int n)
{
	for (int i = 0; i < n; i++) {
		free(s[i].id);
		free(s[i].name);
		free(s[i].host);
	}
	free(s);
}

/* "J.0 (ring), J.1 (sleep)" */
static char *sj_list(const struct sj_step *s, int n)
{
	char *l = xstrdup("");

	for (int i = 0; i < n; i++) {
		char *j = xasprintf("%s%s%s (%s)", l, i ? ", " : "", s[i].id,
				    s[i].name);

		free(l);
		l = j;
	}
	return l;
}

/* The step to attach to, or NULL (reported). */
static const struct sj_step *sj_pick(const char *job, const char *step,
				     const struct sj_step *s, int n)
{
	char *want = step ? xasprintf("%s.%s", job, step) : NULL;
	char *list = sj_list(s, n);
	const struct sj_step *r = NULL;

	for (int i = 0; want && i < n; i++)
		if (!strcmp(s[i].id, want))
			r = &s[i];
	if (want && !r)
		md_error("--slurm %s: step %s is not running (running steps of "
			 "job %s: %s)", want, want, job, n ? list : "none");
	else if (!want && n == 1)
		r = &s[0];
	else if (!want && !n)
		md_error("--slurm %s: job %s runs no job step (no srun, and no "
			 "mpirun that started its daemons): nothing to attach "
			 "to yet", job, job);
	else if (!want)
		md_error("--slurm %s: job %s runs %d steps (%s): name one, e.g. "
			 "--slurm %s", job, job, n, list, s[n - 1].id);
	free(want);
	free(list);
	return r;
}

static void sj_push(char ***v, int *n, const char *s)
{
	*v = xrealloc(*v, ((size_t)*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

static void sj_push_int(char ***v, int *n, const char *opt, int val)
{
	char b[32];

	snprintf(b, sizeof(b), "%d", val);
	sj_push(v, n, opt);
	sj_push(v, n, b);
}

/* An output path as the node sees it: absolute (its cwd may differ). */
static void sj_push_path(char ***v, int *n, const char *opt, const char *p)
{
	char cwd[4096];
	char *abs;

	sj_push(v, n, opt);
	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		sj_push(v, n, p);
		return;
	}
	abs = xasprintf("%s/%s", cwd, p);
	sj_push(v, n, abs);
	free(abs);
}

static const char *const sj_formats[] = { "text", "json", "dot" };

/* srun --overlap ... SELF --slurm J.S [the options of c]. */
static char **sj_remote_argv(const struct cli *c, const struct sj_step *st,
			     const char *job)
{
	char **v = NULL, *self = NULL, *o;
	int n = 0;

	sj_push(&v, &n, "srun");
	sj_push(&v, &n, "--overlap");
	o = xasprintf("--jobid=%s", job);
	sj_push(&v, &n, o);
	free(o);
	sj_push(&v, &n, "--nodelist");
	sj_push(&v, &n, st->host);
	sj_push(&v, &n, "--nodes=1");
	sj_push(&v, &n, "--ntasks=1");
	sj_push(&v, &n, "--mpi=none");
	sj_push(&v, &n, "--job-name=mpi-deadlock");
	sj_push(&v, &n, "--quiet");
	if (c->agent) {
		self = xstrdup(c->agent);
	} else {
		char buf[4096];
		ssize_t len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

		self = xstrdup(len > 0 ? (buf[len] = 0, buf) : "mpi-deadlock");
	}
	sj_push(&v, &n, self);
	free(self);
	sj_push(&v, &n, "--slurm");
	sj_push(&v, &n, st->id);
	sj_push(&v, &n, "--format");
	sj_push(&v, &n, sj_formats[c->report.format]);
	if (c->report.all_ranks)
		sj_push(&v, &n, "--all-ranks");
	if (c->dump)
		sj_push(&v, &n, "--dump");
	sj_push(&v, &n, c->report.github ? "--github" : "--no-github");
	if (c->junit)
		sj_push_path(&v, &n, "--junit", c->junit);
	if (c->snapshot)
		sj_push_path(&v, &n, "--snapshot", c->snapshot);
	if (c->dll) {
		sj_push(&v, &n, "--dll");
		sj_push(&v, &n, c->dll);
	}
	sj_push_int(&v, &n, "--looks", c->looks);
	sj_push_int(&v, &n, "--interval", c->interval_ms);
	sj_push_int(&v, &n, "--agent-timeout", c->agent_timeout_s);
	if (c->launcher != AG_LAUNCH_AUTO) {
		sj_push(&v, &n, "--launcher");
		sj_push(&v, &n, cli_launcher_name(c->launcher));
	}
	if (c->rsh) {
		sj_push(&v, &n, "--rsh");
		sj_push(&v, &n, c->rsh);
	}
	if (c->agent) {
		sj_push(&v, &n, "--agent");
		sj_push(&v, &n, c->agent);
	}
	for (int i = 0; i < c->verbose; i++)
		sj_push(&v, &n, "-v");
	if (c->quiet)
		sj_push(&v, &n, "-q");
	return v;
}

static void sj_argv_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * Run the front end on the step's node; its stdout is ours, its stderr
 * passed on line by line ("srun: error" lines noted: srun itself failed).
 */
static int sj_remote(const struct cli *c, const struct sj_step *st,
		     const char *job, const volatile sig_atomic_t *stop)
{
	char **argv = sj_remote_argv(c, st, job), buf[4096], line[1024];
	int pe[2], status = 0, rc;
	size_t ll = 0;
	bool srun_failed = false, signalled = false;
	char *srun_err = NULL, *hop[2] = { NULL, NULL }, **env;
	pid_t pid;

	md_info("step %s: its srun is pid %d on %s: running the front end "
		"there through srun --overlap", st->id, st->pid, st->host);
	if (pipe2(pe, O_CLOEXEC)) {
		md_error("pipe: %s", strerror(errno));
		sj_argv_free(argv);
		return MD_EXIT_ERROR;
	}
	/* There, the step's host must be its own: never a second hop. */
	hop[0] = xasprintf("MD_SLURM_HOP=%s", st->host);
	env = sl_child_env(hop, true);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* Its own group: a Ctrl-C here is passed on as one SIGTERM
		 * (srun hands it to the front end there, which detaches). */
		setpgid(0, 0);
		if (null >= 0)
			dup2(null, 0);
		dup2(pe[1], 2);
		execvpe(argv[0], argv, env);
		fprintf(stderr, "srun: error: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(pe[1]);
	sj_argv_free(argv);
	free(env);
	free(hop[0]);
	if (pid < 0) {
		md_error("fork: %s", strerror(errno));
		close(pe[0]);
		return MD_EXIT_ERROR;
	}
	setpgid(pid, pid);
	for (;;) {
		struct pollfd p = { pe[0], POLLIN, 0 };
		ssize_t n;

		if (stop && *stop && !signalled) {
			kill(pid, SIGTERM);
			signalled = true;
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(pe[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n' && ll < sizeof(line) - 1) {
				line[ll++] = buf[i];
				continue;
			}
			if (buf[i] != '\n')
				continue;
			line[ll] = 0;
			/* The front end's own exit code: passed through. */
			if (!strncmp(line, "srun: error:", 12) &&
			    strstr(line, ": Exited with exit code ")) {
				ll = 0;
				continue;
			}
			if (!strncmp(line, "srun: error:", 12) ||
			    !strncmp(line, "srun: fatal:", 12)) {
				srun_failed = true;
				free(srun_err);
				srun_err = xstrdup(line);
			} else {
				fprintf(stderr, "%s\n", line);
			}
			ll = 0;
		}
	}
	close(pe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		if (stop && *stop && !signalled) {
			kill(pid, SIGTERM);
			signalled = true;
		}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : MD_EXIT_ERROR;
	if (srun_failed && rc != 0 && !signalled) {
		md_error("--slurm %s: srun could not run the front end on %s "
			 "(the node of the step's srun): %s", st->id, st->host,
			 srun_err);
		rc = MD_EXIT_ERROR;
	}
	free(srun_err);
	if (signalled && stop)
		rc = 128 + *stop;
	return rc;
}

/* The step's srun is here: collect and report here. */
static int sj_local(const struct cli *c, const struct sj_step *st,
		    volatile sig_atomic_t *stop)
{
	struct snap *s = NULL;
	char *name;
	int rc, pid = sl_starter_of(st->pid);

	md_info("step %s: its starter is pid %d here", st->id, pid);
	rc = cli_collect(c, pid, stop, &s);
	if (rc)
		return rc == -MD_E_INTR && *stop ? 128 + *stop : MD_EXIT_ERROR;
	if (!s->dll) {
		md_error("--slurm %s: step %s is not an MPI job: none of its "
			 "tasks (%s) loaded an MPI library that names a "
			 "message-queue DLL (MPIR_dll_name): nothing to analyse",
			 st->id, st->id, st->name);
		snap_free(s);
		return MD_EXIT_ERROR;
	}
	name = xasprintf("mpi-deadlock --slurm %s", st->id);
	rc = cli_emit(c, s, name, stdout);
	free(name);
	snap_free(s);
	return rc;
}

int sj_main(const struct cli *c, volatile sig_atomic_t *stop)
{
	char *job = NULL, *step = NULL, host[256] = "";
	struct sj_step *steps = NULL;
	const struct sj_step *st;
	int n = 0, rc;

	if (!sj_parse(c->slurm, &job, &step)) {
		md_error("--slurm '%s': not a Slurm job id: give JOBID or "
			 "JOBID.STEP (numbers, as squeue shows them)", c->slurm);
		return MD_EXIT_ERROR;
	}
	rc = sj_check_job(job);
	if (!rc)
		rc = sj_steps(job, &steps, &n);
	st = rc ? NULL : sj_pick(job, step, steps, n);
	if (!rc && !st)
		rc = MD_EXIT_ERROR;
	if (!rc) {
		gethostname(host, sizeof(host) - 1);
		host[strcspn(host, ".")] = 0;
		if (!strcmp(host, st->host)) {
			rc = sj_local(c, st, stop);
		} else if (getenv("MD_SLURM_HOP")) {
			md_error("--slurm %s: srun ran the front end on %s, whose "
				 "host name is '%s', not '%s' (the step's "
				 "SrunHost): Slurm's node names must be the "
				 "hosts' names", st->id, getenv("MD_SLURM_HOP"),
				 host, st->host);
			rc = MD_EXIT_ERROR;
		} else {
			rc = sj_remote(c, st, job, stop);
		}
	}
	sj_steps_free(steps, n);
	free(job);
	free(step);
	return rc;
}
