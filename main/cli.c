/* cli.c - command-line parsing (getopt_long) and the shared output policy. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect.h"
#include "md.h"

enum {
	OPT_SNAPSHOT = 256,
	OPT_SLURM,
	OPT_DUMP,
	OPT_FORMAT,
	OPT_ALL_RANKS,
	OPT_JUNIT,
	OPT_GITHUB,
	OPT_NO_GITHUB,
	OPT_DLL,
	OPT_INTERVAL,
	OPT_LOOKS,
	OPT_TIMEOUT,
	OPT_KEEP_RUNNING,
	OPT_LAUNCHER,
	OPT_RSH,
	OPT_AGENT,
	OPT_AGENT_TIMEOUT,
	OPT_NO_TRACK,
	OPT_HELP,
	OPT_VERSION,
};

/* Which subcommands accept an option: an option given to the wrong one
 * is a usage error, not silently ignored. */
#define FOR_ATTACH (1u << CLI_ATTACH)
#define FOR_ANALYZE (1u << CLI_ANALYZE)
#define FOR_RUN (1u << CLI_RUN)
#define FOR_GSTACK (1u << CLI_GSTACK)
#define FOR_AGENT (1u << CLI_AGENT)
#define FOR_REPORT (FOR_ATTACH | FOR_ANALYZE | FOR_RUN | FOR_GSTACK)
#define FOR_COLLECT (FOR_ATTACH | FOR_RUN | FOR_GSTACK)

static const struct option cli_long[] = {
	{ "attach", required_argument, NULL, 'a' },
	{ "slurm", required_argument, NULL, OPT_SLURM },
	{ "snapshot", required_argument, NULL, OPT_SNAPSHOT },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "all-ranks", no_argument, NULL, OPT_ALL_RANKS },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "github", no_argument, NULL, OPT_GITHUB },
	{ "no-github", no_argument, NULL, OPT_NO_GITHUB },
	{ "dll", required_argument, NULL, OPT_DLL },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "looks", required_argument, NULL, OPT_LOOKS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "keep-running", no_argument, NULL, OPT_KEEP_RUNNING },
	{ "launcher", required_argument, NULL, OPT_LAUNCHER },
	{ "rsh", required_argument, NULL, OPT_RSH },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "agent-timeout", required_argument, NULL, OPT_AGENT_TIMEOUT },
	{ "no-track", no_argument, NULL, OPT_NO_TRACK },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static unsigned int cli_allowed(int opt)
{
	switch (opt) {
	case 'a':
	case OPT_SLURM:
		return FOR_ATTACH;
	case OPT_SNAPSHOT:
		return FOR_COLLECT;
	case OPT_DLL:
		return FOR_COLLECT | FOR_AGENT;
	case OPT_INTERVAL:
	case OPT_LOOKS:
	case OPT_LAUNCHER:
	case OPT_RSH:
	case OPT_AGENT:
	case OPT_AGENT_TIMEOUT:
		return FOR_COLLECT;
	case 'v':
	case 'q':
		return FOR_REPORT | FOR_AGENT;
	case OPT_TIMEOUT:
	case OPT_KEEP_RUNNING:
	case OPT_NO_TRACK:
		return FOR_RUN;
	default:
		return FOR_REPORT;
	}
}

static const char *const cli_cmd_name[] = {
	[CLI_ATTACH] = "--attach",
	[CLI_ANALYZE] = "analyze",
	[CLI_RUN] = "run",
	[CLI_GSTACK] = "gstack",
	[CLI_AGENT] = "agent",
	[CLI_HELP] = "--help",
	[CLI_VERSION] = "--version",
};

static int __attribute__((format(printf, 1, 2))) cli_bad(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mpi-deadlock: %s\nTry 'mpi-deadlock --help'.\n", buf);
	return MD_EXIT_USAGE;
}

/* A whole-string decimal in [min, max]; names the option on failure. */
static int cli_int(const char *opt, const char *arg, long min, long max,
		   int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return cli_bad("%s: '%s' is not a number in %ld..%ld", opt, arg,
			       min, max);
	*out = (int)v;
	return 0;
}

static int cli_format(const char *arg, enum anl_format *out)
{
	if (!strcmp(arg, "text"))
		*out = ANL_FORMAT_TEXT;
	else if (!strcmp(arg, "json"))
		*out = ANL_FORMAT_JSON;
	else if (!strcmp(arg, "dot"))
		*out = ANL_FORMAT_DOT;
	else
		return cli_bad("--format: '%s' is not one of text, json, dot",
			       arg);
	return 0;
}

static void cli_defaults(struct cli *c)
{
	const char *gh = getenv("GITHUB_ACTIONS");

	memset(c, 0, sizeof(*c));
	c->cmd = CLI_ATTACH;
	c->report.format = ANL_FORMAT_TEXT;
	c->report.github = gh && !strcmp(gh, "true");
	c->looks = 2;
	c->interval_ms = 1000;
	c->timeout_s = CLI_DEFAULT_TIMEOUT;
	c->agent_timeout_s = 30;
}

/* --launcher's words, by enum ag_launcher. */
static const char *const cli_launchers[] = {
	[AG_LAUNCH_AUTO] = "auto",
	[AG_LAUNCH_SSH] = "ssh",
	[AG_LAUNCH_MPIRUN] = "mpirun",
	[AG_LAUNCH_SRUN] = "srun",
};

const char *cli_launcher_name(enum ag_launcher l)
{
	return cli_launchers[l];
}

static int cli_launcher(const char *arg, enum ag_launcher *out)
{
	for (size_t i = 0; i < sizeof(cli_launchers) / sizeof(*cli_launchers);
	     i++)
		if (!strcmp(arg, cli_launchers[i])) {
			*out = (enum ag_launcher)i;
			return 0;
		}
	return cli_bad("--launcher: '%s' is not one of auto, ssh, mpirun, srun",
		       arg);
}

/* One option; returns 0 or MD_EXIT_USAGE (reported). */
static int cli_option(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'a':
		return cli_int("--attach", arg, 1, INT_MAX, &c->pid);
	case OPT_SLURM:
		c->slurm = arg;
		return 0;
	case OPT_SNAPSHOT:
		c->snapshot = arg;
		return 0;
	case OPT_DUMP:
		c->dump = true;
		return 0;
	case OPT_FORMAT:
		return cli_format(arg, &c->report.format);
	case OPT_ALL_RANKS:
		c->report.all_ranks = true;
		return 0;
	case OPT_JUNIT:
		c->junit = arg;
		return 0;
	case OPT_GITHUB:
	case OPT_NO_GITHUB:
		c->report.github = opt == OPT_GITHUB;
		return 0;
	case OPT_DLL:
		c->dll = arg;
		return 0;
	case OPT_INTERVAL:
		return cli_int("--interval", arg, 0, 3600000, &c->interval_ms);
	case OPT_LOOKS:
		return cli_int("--looks", arg, 1, 100, &c->looks);
	case OPT_TIMEOUT:
		return cli_int("--timeout", arg, 0, INT_MAX / 1000,
			       &c->timeout_s);
	case OPT_KEEP_RUNNING:
		c->keep_running = true;
		return 0;
	case OPT_LAUNCHER:
		return cli_launcher(arg, &c->launcher);
	case OPT_RSH:
		if (!*arg)
			return cli_bad("--rsh: the remote shell command is empty");
		c->rsh = arg;
		return 0;
	case OPT_AGENT:
		if (arg[0] != '/')
			return cli_bad("--agent: '%s' is not an absolute path "
				       "(the agent's path on the other hosts)",
				       arg);
		c->agent = arg;
		return 0;
	case OPT_AGENT_TIMEOUT:
		return cli_int("--agent-timeout", arg, 1, 86400,
			       &c->agent_timeout_s);
	case OPT_NO_TRACK:
		c->no_track = true;
		return 0;
	case 'v':
		c->verbose++;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	}
	return cli_bad("internal: unhandled option %d", opt);
}

/* The loop over the options; help and version win over everything. */
static int cli_options(int argc, char **argv, struct cli *c, bool run)
{
	enum cli_cmd cmd = c->cmd;
	int opt, rc, idx = -1;

	opterr = 0;
	optind = 0;	/* 0: glibc starts over (argv may differ) */
	/* run: stop at the job's command, whose options are its own. */
	while ((opt = getopt_long(argc, argv, run ? "+vq" : "vq", cli_long,
				  &idx)) != -1) {
		if (opt == '?' || opt == ':') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt < 256 && bad[1] != '-')
				return cli_bad("unknown option '-%c'", optopt);
			if (!optopt)
				return cli_bad("unknown or ambiguous option '%s'",
					       bad);
			if (strchr(bad, '='))
				return cli_bad("option '%s' takes no value", bad);
			return cli_bad("option '%s' needs a value", bad);
		}
		if (opt == OPT_HELP || opt == OPT_VERSION) {
			c->cmd = opt == OPT_HELP ? CLI_HELP : CLI_VERSION;
			return 0;
		}
		if (!(cli_allowed(opt) & (1u << cmd)))
			return cli_bad("option '--%s' does not apply to %s",
				       idx >= 0 ? cli_long[idx].name : "?",
				       cli_cmd_name[cmd]);
		idx = -1;
		rc = cli_option(c, opt, optarg);
		if (rc)
			return rc;
	}
	return 0;
}

/* The positional arguments each subcommand takes. */
static int cli_operands(int argc, char **argv, struct cli *c)
{
	int n = argc - optind;

	switch (c->cmd) {
	case CLI_ATTACH:
		if (n)
			return cli_bad("unexpected argument '%s'", argv[optind]);
		if (c->pid && c->slurm)
			return cli_bad("--attach and --slurm both name the job: give one");
		if (!c->pid && !c->slurm)
			return cli_bad("nothing to do: give --attach PID, --slurm JOBID, or a subcommand (analyze, run, gstack)");
		return 0;
	case CLI_ANALYZE:
		if (n != 1)
			return cli_bad("analyze takes one snapshot FILE, got %d arguments",
				       n);
		c->file = argv[optind];
		return 0;
	case CLI_GSTACK:
		if (n != 1)
			return cli_bad("gstack takes one PID, got %d arguments",
				       n);
		return cli_int("gstack", argv[optind], 1, INT_MAX, &c->pid);
	case CLI_RUN:
		if (!n)
			return cli_bad("run needs a command: run [options] -- mpirun ARGS...");
		c->job_argv = argv + optind;
		return 0;
	default:
		return 0;
	}
}

static const char *const cli_subs[] = {
	[CLI_ANALYZE] = "analyze",
	[CLI_RUN] = "run",
	[CLI_GSTACK] = "gstack",
	[CLI_AGENT] = "agent",
};

static enum cli_cmd cli_sub(const char *word)
{
	for (size_t i = 0; i < sizeof(cli_subs) / sizeof(cli_subs[0]); i++)
		if (cli_subs[i] && !strcmp(word, cli_subs[i]))
			return (enum cli_cmd)i;
	return CLI_ATTACH;
}

/* Where the subcommand is: the first operand, after any global options
 * ("mpi-deadlock -v run ..."); 0 if there is none. */
static int cli_sub_index(int argc, char **argv)
{
	opterr = 0;
	optind = 0;	/* 0: glibc starts over (argv may differ) */
	while (getopt_long(argc, argv, "+vq", cli_long, NULL) != -1)
		;
	return optind < argc && optind > 0 ? optind : 0;
}

int cli_parse(int argc, char **argv, struct cli *c)
{
	int rc, at = cli_sub_index(argc, argv);

	cli_defaults(c);
	if (at && (at == 1 || cli_sub(argv[at]) != CLI_ATTACH) &&
	    strcmp(argv[at - 1], "--")) {
		c->cmd = cli_sub(argv[at]);
		if (c->cmd == CLI_ATTACH)
			return cli_bad("unknown subcommand '%s'", argv[at]);
		/* The options before it and after it are parsed as one list,
		 * checked against this subcommand; argv keeps its order. */
		memmove(argv + at, argv + at + 1,
			(size_t)(argc - at) * sizeof(*argv));
		argc--;
	}
	rc = cli_options(argc, argv, c, c->cmd == CLI_RUN);
	if (rc || c->cmd == CLI_HELP || c->cmd == CLI_VERSION)
		return rc;
	if (c->verbose && c->quiet)
		return cli_bad("-v and -q contradict each other");
	return cli_operands(argc, argv, c);
}

/* A set, non-empty variable's value, else NULL. */
static const char *cli_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

void cli_env_opts(struct col_opts *o)
{
	o->ompi_incdir = cli_env("MD_OMPI_INCDIR");
	o->ompi_srcdir = cli_env("MD_OMPI_SRCDIR");
	o->no_line_memo = cli_env("MD_NO_LINE_MEMO") != NULL;
}

int cli_collect(const struct cli *c, int pid,
		const volatile sig_atomic_t *stop, struct snap **out)
{
	struct ag_opts o = {
		.col = {
			.pid = pid,
			.dll = c->dll,
			.looks = c->looks,
			.interval_ms = c->interval_ms,
			.progress = !c->quiet && isatty(STDERR_FILENO),
			.stop = stop,
		},
		.launcher = c->launcher,
		.rsh = c->rsh,
		.agent = c->agent,
		.timeout_s = c->agent_timeout_s,
	};
	const char *no_ob1 = getenv("MD_NO_OB1");
	const char *no_links = getenv("MD_NO_LINKS");

	/* The DLL's view only: for comparing, and the benchmark. */
	o.col.no_ob1 = no_ob1 && *no_ob1 && strcmp(no_ob1, "0");
	/* Every rank's maps read (collect_view.c): for comparing. */
	o.col.no_links = no_links && *no_links && strcmp(no_links, "0");
	cli_env_opts(&o.col);
	return ag_collect(&o, out);
}

/*
 * --snapshot: a regular file (or a new one) is written beside itself and
 * renamed over, so a reader never sees it half written, and one that
 * has the old file mapped (snapshot/snapread.c) keeps reading the old
 * file, which does not shrink under it.  Anything else (a pipe,
 * /dev/stdout) is written in place.
 */
static int cli_write_snapshot(const struct snap *s, const char *path)
{
	struct stat st;
	bool in_place = !stat(path, &st) && !S_ISREG(st.st_mode);
	char *tmp = in_place ? xstrdup(path)
			     : xasprintf("%s.%d.tmp", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	int rc;

	if (!f) {
		md_error("fopen(%s) for --snapshot: %s", tmp, strerror(errno));
		free(tmp);
		return -MD_E_SYS;
	}
	rc = snap_write(s, f);
	if (fclose(f) && !rc) {
		md_error("writing --snapshot %s: %s", tmp, strerror(errno));
		rc = -MD_E_SYS;
	}
	if (!in_place && !rc && rename(tmp, path)) {
		md_error("rename(%s, %s) for --snapshot: %s", tmp, path,
			 strerror(errno));
		rc = -MD_E_SYS;
	}
	if (!in_place && rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int cli_emit(const struct cli *c, const struct snap *s, const char *name,
	     FILE *out)
{
	struct anl_result *r;
	int code, failed = 0;

	if (c->snapshot && cli_write_snapshot(s, c->snapshot))
		failed = 1;
	if (c->dump)
		anl_dump(s, out);
	r = anl_analyze(s);
	anl_report(r, &c->report, out);
	fflush(out);
	code = anl_exit_code(r);
	if (c->junit && anl_write_junit(r, name, c->junit))
		failed = 1;
	anl_result_free(r);
	return failed ? MD_EXIT_ERROR : code;
}

void cli_usage(FILE *out)
{
	fputs("Usage: mpi-deadlock --attach PID [options]\n"
	      "       mpi-deadlock --slurm JOBID[.STEP] [options]\n"
	      "       mpi-deadlock analyze FILE [report options]\n"
	      "       mpi-deadlock run [--timeout SEC] [--keep-running] [options] -- mpirun ARGS...\n"
	      "       mpi-deadlock gstack PID\n"
	      "       mpi-deadlock agent     (started by the front end on other hosts)\n"
	      "\n"
	      "Find out why a running MPI job (Open MPI's mpirun) is stuck: read every\n"
	      "rank's pending operations and stack, build the wait-for graph, report the\n"
	      "deadlock, detach.  The job goes on untouched (except with run, see below).\n"
	      "\n"
	      "Subcommands:\n"
	      "  --attach PID        collect from the job whose mpirun (or one rank) is PID\n"
	      "  --slurm JOBID[.STEP] the MPI job of a running Slurm job step, from any\n"
	      "                      host of the cluster: its starter is found through\n"
	      "                      Slurm, the collection runs on its node (srun\n"
	      "                      --overlap), the report is printed here\n"
	      "  analyze FILE        report on a snapshot written by --snapshot\n"
	      "  run -- CMD...       start CMD (mpirun ...); if it is still running at the\n"
	      "                      deadline, collect, report and end it; if it ends by\n"
	      "                      itself, exit with its status and print nothing\n"
	      "  gstack PID          the hook of 'mpirun --timeout N --get-stack-traces':\n"
	      "                      the first call for a job reports on the whole job,\n"
	      "                      later calls print one line per rank\n"
	      "\n"
	      "Report options:\n"
	      "  --format FMT        text (default), json or dot\n"
	      "  --all-ranks         text: one line per rank instead of rank ranges\n"
	      "  --dump              print the collected snapshot for a person first\n"
	      "  --junit FILE        also write a JUnit XML file (one test case)\n"
	      "  --github            also print GitHub annotations (default on when\n"
	      "                      GITHUB_ACTIONS=true); --no-github turns them off\n"
	      "  --snapshot FILE     also write the snapshot (not with analyze)\n"
	      "Collection options (--attach, run, gstack):\n"
	      "  --dll PATH          message-queue DLL to use instead of MPIR_dll_name\n"
	      "  --looks N           looks at the job to compare (default 2)\n"
	      "  --interval MS       between two looks (default 1000)\n"
	      "Ranks on other hosts (--attach, run, gstack): one agent per host\n"
	      "  --launcher L        ssh, mpirun (the job's own, one agent per host),\n"
	      "                      srun (srun --overlap into the job's Slurm job)\n"
	      "                      or auto (default: what the job used; srun for\n"
	      "                      srun's jobs and jobs inside a Slurm allocation)\n"
	      "  --rsh CMD           ssh: remote shell (default: Open MPI's\n"
	      "                      plm_rsh_agent of the job or environment, else ssh)\n"
	      "  --agent PATH        the agent's path on the hosts (default: this one)\n"
	      "  --agent-timeout SEC per agent and step (default 30)\n"
	      "run options:\n"
	      "  --timeout SEC       deadline (default 300; 0 = wait forever)\n"
	      "  --keep-running      at the deadline report, then leave the job running\n"
	      "  --no-track          do not load libmdtrack.so into the ranks (by default\n"
	      "                      mpirun -x LD_PRELOAD=... records where each request\n"
	      "                      was posted and each collective's arguments)\n"
	      "Other:\n"
	      "  -v, --verbose       say more on stderr (repeatable)\n"
	      "  -q, --quiet         no progress or notices on stderr\n"
	      "  --help, --version\n"
	      "\n"
	      "Exit codes:\n"
	      "  0    no deadlock found\n"
	      "  1    deadlock found\n"
	      "  2    incomplete: some ranks or data could not be read, no verdict\n"
	      "  3    error: could not attach, bad input, a file could not be written\n"
	      "  64   usage error\n"
	      "  124  run: the deadline passed, no deadlock was found, the job was ended\n"
	      "       (left running with --keep-running)\n"
	      "  130, 143  interrupted by SIGINT, SIGTERM (run ends the job first)\n"
	      "  run passes the job's own exit status through when the job ends by\n"
	      "  itself (128+N when it was killed by signal N).\n"
	      "\n"
	      "Environment: GITHUB_ACTIONS=true turns on --github; XDG_RUNTIME_DIR\n"
	      "(else /tmp) holds gstack's per-job stamp files.\n"
	      "See mpi-deadlock(1).\n",
	      out);
}
