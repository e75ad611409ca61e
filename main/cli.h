/*
 * cli.h - the command line of mpi-deadlock: options, usage, and the
 * output policy shared by every subcommand (report, dump, snapshot file,
 * JUnit file, exit code).
 */
#ifndef MD_CLI_H
#define MD_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "agent.h"
#include "analyze.h"
#include "snap.h"

enum cli_cmd {
	CLI_ATTACH,		/* --attach PID */
	CLI_ANALYZE,		/* analyze FILE */
	CLI_RUN,		/* run [...] -- CMD ARGS... */
	CLI_GSTACK,		/* gstack PID (mpirun's --get-stack-traces) */
	CLI_AGENT,		/* agent: one host's collector (agent.h) */
	CLI_HELP,
	CLI_VERSION,
};

/* Default deadline of `run`, in seconds (0 = wait forever). */
#define CLI_DEFAULT_TIMEOUT 300

struct cli {
	enum cli_cmd cmd;
	int pid;		/* attach, gstack */
	const char *slurm;	/* --slurm JOBID[.STEP] (attach) */
	const char *file;	/* analyze */
	char **job_argv;	/* run: NULL-terminated, borrowed from argv */

	/* Report options. */
	struct anl_opts report;
	const char *snapshot;	/* --snapshot FILE: also write it */
	const char *junit;	/* --junit FILE */
	bool dump;		/* --dump: anl_dump before the report */

	/* Collection options. */
	const char *dll;
	int looks;
	int interval_ms;

	/* Ranks on other hosts (agent.h). */
	enum ag_launcher launcher;
	const char *rsh;	/* --rsh CMD */
	const char *agent;	/* --agent PATH */
	int agent_timeout_s;	/* --agent-timeout SEC */

	/* run */
	int timeout_s;		/* 0: wait forever */
	bool keep_running;
	bool no_track;		/* --no-track: no libmdtrack.so in the ranks */

	int verbose;		/* -v, repeatable */
	bool quiet;		/* -q */
};

/*
 * Parse argv into *c (pointers borrow from argv).  Returns 0, or
 * MD_EXIT_USAGE after printing one line naming what was wrong and
 * "Try 'mpi-deadlock --help'." to stderr.
 */
int cli_parse(int argc, char **argv, struct cli *c);

/* The --launcher word of l: "auto", "ssh", "mpirun" or "srun". */
const char *cli_launcher_name(enum ag_launcher l);

/* The --help text: every subcommand, option and exit code. */
void cli_usage(FILE *out);

/*
 * The collection's settings that come from the environment, into o:
 * MD_OMPI_INCDIR, MD_OMPI_SRCDIR (the type providers' Open MPI headers
 * and sources) and MD_NO_LINE_MEMO, each when set and not empty.  Only
 * main/ reads them; the collector is told.
 */
void cli_env_opts(struct col_opts *o);

/*
 * Collect a snapshot of the job whose starter (or rank) is pid, with the
 * collection options of c; stop is the signal flag (may be NULL).
 * Progress is shown only when stderr is a terminal and not -q.
 * Returns 0 and *out (snap_free), or a negated MD_E_* code (reported).
 */
int cli_collect(const struct cli *c, int pid,
		const volatile sig_atomic_t *stop, struct snap **out);

/*
 * The output every subcommand shares: write the snapshot file if asked,
 * dump if asked, analyse, print the report to out, write the JUnit file
 * (test case named name).  Returns the exit code: 0, 1 or 2 from the
 * verdict, or MD_EXIT_ERROR when a file could not be written (reported).
 */
int cli_emit(const struct cli *c, const struct snap *s, const char *name,
	     FILE *out);

#endif /* MD_CLI_H */
