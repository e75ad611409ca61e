/*
 * launch.c - the launcher's command line for one agent.  ssh is given
 * BatchMode so that it fails instead of asking; the remote command is
 * one shell-quoted string, as ssh hands it to the remote shell.  mpirun
 * is the job's own, with the job's --mca settings and OMPI_MCA_*
 * environment, so it reaches the hosts the way the job's did.
 */
#include "launch.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "slurm.h"
#include "target.h"

static char **strv_push(char **v, int *n, const char *s)
{
	v = xrealloc(v, ((size_t)*n + 2) * sizeof(*v));
	v[(*n)++] = xstrdup(s);
	v[*n] = NULL;
	return v;
}

void ln_argv_free(char **argv)
{
	for (int i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

char **ln_split(const char *cmd)
{
	char *copy = xstrdup(cmd), *save = NULL, *w;
	char **v = NULL;
	int n = 0;

	for (w = strtok_r(copy, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, ":"))
			break;
		v = strv_push(v, &n, w);
	}
	free(copy);
	return v;
}

/* The value of NAME in a NUL-separated environ block, or NULL. */
static const char *env_get(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; p < text + len; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=')
			return p + nl + 1;
	return NULL;
}

/* The job's --mca pairs from its command line; plm_rsh_agent noted. */
static void job_cmdline(struct ln_ctx *l, int pid, char **rsh)
{
	char *text = NULL;
	size_t len = 0;
	int n = 0;

	if (tgt_proc_strings(pid, "cmdline", &text, &len) < 0)
		return;
	for (const char *p = text; p < text + len; p += strlen(p) + 1) {
		const char *k, *v;

		if (strcmp(p, "--mca") && strcmp(p, "-mca"))
			continue;
		k = p + strlen(p) + 1;
		if (k >= text + len)
			break;
		v = k + strlen(k) + 1;
		if (v >= text + len)
			break;
		if (!strcmp(k, "plm_rsh_agent") && !*rsh)
			*rsh = xstrdup(v);
		l->mca = strv_push(l->mca, &n, "--mca");
		l->mca = strv_push(l->mca, &n, k);
		l->mca = strv_push(l->mca, &n, v);
		p = v;
	}
	free(text);
}

/* The job's OMPI_MCA_* and OMPI_ALLOW_* environment. */
static void job_environ(struct ln_ctx *l, int pid, char **rsh,
			bool *batch)
{
	char *text = NULL;
	size_t len = 0;
	const char *v;
	int n = 0;

	if (tgt_proc_strings(pid, "environ", &text, &len) < 0)
		return;
	if (!*rsh && (v = env_get(text, len, "OMPI_MCA_plm_rsh_agent")))
		*rsh = xstrdup(v);
	for (const char *p = text; p < text + len; p += strlen(p) + 1)
		if (!strncmp(p, "OMPI_MCA_", 9) ||
		    !strncmp(p, "OMPI_ALLOW_RUN_AS_ROOT", 22))
			l->env = strv_push(l->env, &n, p);
	/* Under a batch system mpirun starts its daemons through it (Slurm
	 * is asked directly: srun). */
	*batch = env_get(text, len, "PBS_JOBID") ||
		 env_get(text, len, "LSB_JOBID") ||
		 ((v = env_get(text, len, "OMPI_MCA_plm")) && strcmp(v, "rsh"));
	free(text);
}

static char *self_path(void)
{
	char *p = NULL;

	if (tgt_proc_exe(getpid(), &p) < 0)
		return xstrdup("mpi-deadlock");
	return p;
}

int ln_setup(const struct ag_opts *o, int starter_pid, const char *starter,
	     struct ln_ctx *l)
{
	char *rsh = NULL, *conf = NULL;
	const char *env;
	bool batch = false;

	memset(l, 0, sizeof(*l));
	l->agent = o->agent ? xstrdup(o->agent) : self_path();
	l->dll = o->col.dll;
	l->verbose = md_verbose() > 0;
	if (starter_pid > 0) {
		job_cmdline(l, starter_pid, &rsh);
		l->rsh_from = rsh ? "the job's --mca plm_rsh_agent" : NULL;
		job_environ(l, starter_pid, &rsh, &batch);
		if (rsh && !l->rsh_from)
			l->rsh_from = "the job's OMPI_MCA_plm_rsh_agent";
	}
	if (o->rsh) {
		free(rsh);
		rsh = xstrdup(o->rsh);
		l->rsh_from = "--rsh";
	} else if (!rsh && (env = getenv("OMPI_MCA_plm_rsh_agent"))) {
		rsh = xstrdup(env);
		l->rsh_from = "OMPI_MCA_plm_rsh_agent";
	}
	if (!rsh) {
		rsh = xstrdup("ssh");
		l->rsh_from = "the default";
	}
	l->rsh = ln_split(rsh);
	free(rsh);
	l->launcher = o->launcher;
	/* A Slurm job (srun is the starter, or the starter runs inside an
	 * allocation): srun --overlap into the job, as the job itself. */
	if (starter_pid > 0 && (l->launcher == AG_LAUNCH_AUTO ||
				l->launcher == AG_LAUNCH_SRUN))
		l->jobid = sl_job_of(starter_pid, starter, &conf);
	if (conf) {
		char *e = xasprintf("SLURM_CONF=%s", conf);
		int n = 0;

		while (l->env && l->env[n])
			n++;
		l->env = strv_push(l->env, &n, e);
		free(e);
		free(conf);
	}
	if (l->launcher == AG_LAUNCH_AUTO)
		l->launcher = l->jobid ? AG_LAUNCH_SRUN :
			      batch ? AG_LAUNCH_MPIRUN : AG_LAUNCH_SSH;
	if (l->launcher == AG_LAUNCH_SRUN) {
		if (!l->jobid) {
			md_error("--launcher srun: pid %d is not part of a Slurm "
				 "job (no SLURM_JOB_ID in its environment, and "
				 "no step of 'scontrol show step' has it as its "
				 "srun): use --launcher ssh or mpirun",
				 starter_pid);
			ln_free(l);
			return -MD_E_INPUT;
		}
		l->srun = xstrdup(sl_is_srun(starter) ? starter : "srun");
		md_info("agents through %s --overlap into Slurm job %s",
			l->srun, l->jobid);
	}
	if (l->launcher == AG_LAUNCH_MPIRUN) {
		if (!starter || starter[0] != '/') {
			md_error("--launcher mpirun: the job's mpirun is not "
				 "known (its executable could not be read): use "
				 "--launcher ssh");
			ln_free(l);
			return -MD_E_INPUT;
		}
		l->mpirun = xstrdup(starter);
	}
	if (!l->rsh) {
		md_error("--rsh: no command in '%s'", o->rsh ? o->rsh : "");
		ln_free(l);
		return -MD_E_INPUT;
	}
	return 0;
}

void ln_free(struct ln_ctx *l)
{
	ln_argv_free(l->rsh);
	ln_argv_free(l->mca);
	ln_argv_free(l->env);
	free(l->mpirun);
	free(l->srun);
	free(l->jobid);
	free(l->agent);
	memset(l, 0, sizeof(*l));
}

const char *ln_name(const struct ln_ctx *l)
{
	if (l->launcher == AG_LAUNCH_SRUN)
		return "srun";
	return l->launcher == AG_LAUNCH_MPIRUN ? "mpirun" : l->rsh[0];
}

/* 'word' with single quotes escaped, for the remote shell. */
static char *quote(const char *w)
{
	size_t n = 3;
	char *q, *p;

	for (const char *s = w; *s; s++)
		n += *s == '\'' ? 4 : 1;
	p = q = xmalloc(n);
	*p++ = '\'';
	for (const char *s = w; *s; s++) {
		if (*s == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p++ = '\'';
	*p = 0;
	return q;
}

static bool is_ssh(const char *prog)
{
	const char *b = strrchr(prog, '/');

	b = b ? b + 1 : prog;
	return !strcmp(b, "ssh");
}

static char **agent_words(const struct ln_ctx *l, char **v, int *n)
{
	v = strv_push(v, n, l->agent);
	v = strv_push(v, n, "agent");
	if (l->dll) {
		v = strv_push(v, n, "--dll");
		v = strv_push(v, n, l->dll);
	}
	if (l->verbose)
		v = strv_push(v, n, "-v");
	return v;
}

char **ln_argv(const struct ln_ctx *l, const char *host)
{
	char **v = NULL, **words = NULL;
	int n = 0, nw = 0;

	if (l->launcher == AG_LAUNCH_SRUN) {
		char *job = xasprintf("--jobid=%s", l->jobid);

		/* One task on that node, sharing the job's CPUs with its
		 * step (--overlap), no PMI for it, Slurm's own notices off. */
		v = strv_push(v, &n, l->srun);
		v = strv_push(v, &n, "--overlap");
		v = strv_push(v, &n, job);
		v = strv_push(v, &n, "--nodelist");
		v = strv_push(v, &n, host);
		v = strv_push(v, &n, "--nodes=1");
		v = strv_push(v, &n, "--ntasks=1");
		v = strv_push(v, &n, "--mpi=none");
		v = strv_push(v, &n, "--job-name=mpi-deadlock-agent");
		v = strv_push(v, &n, "--quiet");
		free(job);
		return agent_words(l, v, &n);
	}
	if (l->launcher == AG_LAUNCH_MPIRUN) {
		v = strv_push(v, &n, l->mpirun);
		for (int i = 0; l->mca && l->mca[i]; i++)
			v = strv_push(v, &n, l->mca[i]);
		if (!strcmp(l->rsh_from, "--rsh")) {
			char *joined = NULL;

			for (int i = 0; l->rsh[i]; i++) {
				char *j = xasprintf("%s%s%s", joined ? joined : "",
						    joined ? " " : "", l->rsh[i]);
				free(joined);
				joined = j;
			}
			v = strv_push(v, &n, "--mca");
			v = strv_push(v, &n, "plm_rsh_agent");
			v = strv_push(v, &n, joined);
			free(joined);
		}
		if (geteuid() == 0)
			v = strv_push(v, &n, "--allow-run-as-root");
		v = strv_push(v, &n, "--host");
		v = strv_push(v, &n, host);
		v = strv_push(v, &n, "-np");
		v = strv_push(v, &n, "1");
		return agent_words(l, v, &n);
	}
	for (int i = 0; l->rsh[i]; i++)
		v = strv_push(v, &n, l->rsh[i]);
	if (is_ssh(l->rsh[0])) {
		v = strv_push(v, &n, "-o");
		v = strv_push(v, &n, "BatchMode=yes");
		v = strv_push(v, &n, "-T");
	}
	v = strv_push(v, &n, host);
	words = agent_words(l, words, &nw);
	for (int i = 0; i < nw; i++) {
		char *q = quote(words[i]);

		v = strv_push(v, &n, q);
		free(q);
	}
	ln_argv_free(words);
	return v;
}
