/* main.c - the front end: parse, install the signal flag, dispatch. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "collect.h"
#include "md.h"
#include "gstack.h"
#include "run.h"
#include "slurm.h"
#include "slurmjob.h"

/*
 * The only mutable global of the program: set by SIGINT/SIGTERM, read by
 * the collector between steps and by run's wait loop.  The handler does
 * nothing else; whoever sees it detaches or ends the job and returns.
 */
static volatile sig_atomic_t md_stop;

static void md_on_signal(int sig)
{
	md_stop = sig;
}

/* No SA_RESTART: a signal must cut short the sleeps of the wait loops. */
static void md_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = md_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Collection interrupted by a signal: 128+N, as a shell would report. */
static int md_collect_failed(int rc)
{
	if (rc == -MD_E_INTR && md_stop)
		return 128 + md_stop;
	return MD_EXIT_ERROR;
}

static int md_attach(const struct cli *c)
{
	struct snap *s = NULL;
	char *name;
	int rc;

	/* The srun of an mpirun's daemons: its table names the daemons; the
	 * ranks are in mpirun's. */
	rc = cli_collect(c, sl_starter_of(c->pid), &md_stop, &s);
	if (rc)
		return md_collect_failed(rc);
	name = xasprintf("mpi-deadlock --attach %d", c->pid);
	rc = cli_emit(c, s, name, stdout);
	free(name);
	snap_free(s);
	return rc;
}

static int md_analyze(const struct cli *c)
{
	struct snap_read_opts opts;
	struct snap *s = NULL;
	FILE *f;
	int rc;

	f = strcmp(c->file, "-") ? fopen(c->file, "r") : stdin;
	if (!f) {
		md_error("fopen(%s): %s", c->file, strerror(errno));
		return MD_EXIT_ERROR;
	}
	/* A thread per processor for the rank lines of a big file (the
	 * reader uses one where they would not pay); 8 at most: past that
	 * the memory, not the parsing, is the limit. */
	opts.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (opts.threads > 8)
		opts.threads = 8;
	rc = snap_read_opts(f, c->file, &opts, &s);
	if (f != stdin)
		fclose(f);
	if (rc)
		return MD_EXIT_ERROR;
	rc = cli_emit(c, s, c->file, stdout);
	snap_free(s);
	return rc;
}

int main(int argc, char **argv)
{
	struct cli c;
	int rc;

	md_malloc_tune();
	rc = cli_parse(argc, argv, &c);
	if (rc)
		return rc;
	md_set_verbose(c.verbose);
	md_signals();
	switch (c.cmd) {
	case CLI_HELP:
		cli_usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("mpi-deadlock %s\n", MD_VERSION);
		return 0;
	case CLI_ATTACH:
		return c.slurm ? sj_main(&c, &md_stop) : md_attach(&c);
	case CLI_ANALYZE:
		return md_analyze(&c);
	case CLI_RUN:
		return run_job(&c, &md_stop);
	case CLI_GSTACK:
		return gstack_main(&c, &md_stop);
	case CLI_AGENT: {
		struct col_opts o = { .dll = c.dll };

		cli_env_opts(&o);
		return ag_main(&o, &md_stop);
	}
	}
	return MD_EXIT_ERROR;
}
