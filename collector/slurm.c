/*
 * slurm.c - Slurm's answers through its own commands: a starter's job
 * (its environment, else `scontrol -o show step` by SrunHost:Pid), and
 * the starter behind the srun of an mpirun's daemons.
 */
#include "slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "proctable.h"
#include "target.h"

extern char **environ;

static void buf_add(char **b, size_t *len, const char *data, size_t n)
{
	*b = xrealloc(*b, *len + n + 1);
	memcpy(*b + *len, data, n);
	*len += n;
	(*b)[*len] = 0;
}

/* The last line of text that is not empty (malloc'ed). */
static char *last_line(const char *text)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	return xstrndup(start, (size_t)(end - start));
}

/* sl_capture with env (NULL: ours) for the child. */
static int capture(char *const argv[], char *const env[], char **out,
		   char **err)
{
	int po[2], pe[2], status = 0, rc = -1;
	char *ebuf = xstrdup("");
	size_t olen = 0, elen = 0;
	pid_t pid;

	*out = xstrdup("");
	if (err)
		*err = NULL;
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		free(ebuf);
		if (err)
			*err = xasprintf("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvpe(argv[0], argv, env ? env : environ);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid > 0) {
		struct pollfd pf[2] = { { po[0], POLLIN, 0 },
					{ pe[0], POLLIN, 0 } };
		int open_fds = 2;

		while (open_fds) {
			if (poll(pf, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			for (int i = 0; i < 2; i++) {
				char b[4096];
				ssize_t n;

				if (pf[i].fd < 0 || !pf[i].revents)
					continue;
				n = read(pf[i].fd, b, sizeof(b));
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					pf[i].fd = -1;
					open_fds--;
					continue;
				}
				if (i == 0)
					buf_add(out, &olen, b, (size_t)n);
				else
					buf_add(&ebuf, &elen, b, (size_t)n);
			}
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status))
			rc = WEXITSTATUS(status);
	}
	close(po[0]);
	close(pe[0]);
	if (err)
		*err = last_line(ebuf);
	free(ebuf);
	return rc;
}

int sl_capture(char *const argv[], char **out, char **err)
{
	return capture(argv, NULL, out, err);
}

bool sl_is_srun(const char *exe)
{
	const char *b;

	if (!exe)
		return false;
	b = strrchr(exe, '/');
	b = b ? b + 1 : exe;
	return !strcmp(b, "srun");
}

char *sl_field(const char *line, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p == line || p[-1] == ' ' || p[-1] == '\n') && p[kl] == '=') {
			const char *v = p + kl + 1;

			return xstrndup(v, strcspn(v, " \n"));
		}
	}
	return NULL;
}

/* Whether entry ("NAME=VALUE") sets a variable that one of set sets. */
static bool set_by(const char *entry, char *const *set)
{
	size_t n = strcspn(entry, "=");

	for (; set && *set; set++)
		if (!strncmp(*set, entry, n) && (*set)[n] == '=')
			return true;
	return false;
}

char **sl_child_env(char *const *set, bool srun)
{
	size_t n = 0, k = 0;
	char **env;

	for (char **e = environ; e && *e; e++)
		n++;
	for (char *const *s = set; s && *s; s++)
		n++;
	env = xcalloc(n + 1, sizeof(*env));
	for (char **e = environ; e && *e; e++) {
		if (srun && !strncmp(*e, "SLURM_", 6) &&
		    strncmp(*e, "SLURM_CONF=", 11))
			continue;
		if (!set_by(*e, set))
			env[k++] = *e;
	}
	for (char *const *s = set; s && *s; s++)
		env[k++] = *s;
	env[k] = NULL;
	return env;
}

/* The value of name in a NUL-separated environ block, or NULL. */
static const char *env_get(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; p < text + len; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=')
			return p + nl + 1;
	return NULL;
}

/* The step whose srun is pid on this host: its job id; conf: the
 * SLURM_CONF to ask with, or NULL for ours. */
static char *job_by_srun(int pid, const char *conf)
{
	char a0[] = "scontrol", a1[] = "-o", a2[] = "show", a3[] = "step";
	char *argv[] = { a0, a1, a2, a3, NULL };
	char host[256] = "", *out = NULL, *save = NULL, *job = NULL;
	char *want, *set[2] = { NULL, NULL }, **env;

	if (gethostname(host, sizeof(host) - 1))
		return NULL;
	host[strcspn(host, ".")] = 0;
	want = xasprintf("%s:%d", host, pid);
	set[0] = conf ? xasprintf("SLURM_CONF=%s", conf) : NULL;
	env = set[0] ? sl_child_env(set, false) : NULL;
	if (capture(argv, env, &out, NULL) == 0) {
		for (char *l = strtok_r(out, "\n", &save); l && !job;
		     l = strtok_r(NULL, "\n", &save)) {
			char *sp = sl_field(l, "SrunHost:Pid");
			char *step = sp ? sl_field(l, "StepId") : NULL;

			if (sp && step && !strcmp(sp, want))
				job = xstrndup(step, strcspn(step, "."));
			free(sp);
			free(step);
		}
	}
	free(env);
	free(set[0]);
	free(out);
	free(want);
	return job;
}

char *sl_job_of(int pid, const char *exe, char **conf)
{
	char *text = NULL, *job = NULL;
	const char *v;
	size_t len = 0;

	*conf = NULL;
	if (tgt_proc_strings(pid, "environ", &text, &len) == 0) {
		if ((v = env_get(text, len, "SLURM_JOB_ID")) && *v)
			job = xstrdup(v);
		if (!getenv("SLURM_CONF") &&
		    (v = env_get(text, len, "SLURM_CONF")))
			*conf = xstrdup(v);
		free(text);
	}
	if (!job && sl_is_srun(exe))
		job = job_by_srun(pid, *conf);
	return job;
}

int sl_starter_of(int pid)
{
	char *exe = NULL, *pexe = NULL, comm[TGT_COMM_MAX];
	int ppid = 0, r = pid;

	if (tgt_proc_exe(pid, &exe) == 0 && sl_is_srun(exe) &&
	    tgt_proc_parent(pid, &ppid, comm) == 0 && ppid > 1 &&
	    tgt_proc_exe(ppid, &pexe) == 0 && pt_is_launcher(pexe)) {
		md_info("pid %d is the srun that %s (pid %d) started for its "
			"daemons: collecting through %s", pid, pexe, ppid, pexe);
		r = ppid;
	}
	free(exe);
	free(pexe);
	return r;
}
