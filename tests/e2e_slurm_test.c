/*
 * e2e_slurm_test.c - mpi-deadlock on jobs run the way Slurm users run
 * them (issue 11), on a real Slurm (scripts/slurm.sh: munge, slurmctld,
 * one slurmd per host of the test cluster): ranks started by
 * `srun --mpi=pmix` and by mpirun inside `salloc`, spread over 3 nodes;
 * `--attach` to srun and to that mpirun, `--slurm JOBID[.STEP]` with its
 * one-line errors, `run -- srun`, and the batch recipe of doc/slurm.md.
 *
 * Needs $SLURM_CONF and $MD_SLURM_STATE (scripts/test.sh brings Slurm up
 * and exports `slurm.sh env`): skipped with the reason without them,
 * failed in CI.  Every job gets a name of its own; the .fini hook cancels
 * it (scancel by job id), ends the srun or salloc it started by process
 * group, waits until Slurm lists the job no more, and then SIGKILLs by
 * pid whatever a job left on any host (support/cluster.h, mc_sweep).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md.h"
#include "slurm.h"
#include "support/cluster.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define WAIT_MS 90000
#define TOOL_MS 120000

static struct mc_cluster *cur_cluster;
static unsigned long long cur_since;	/* our start time: mc_sweep */
static struct mj_job *cur_job;		/* srun or salloc (mpirun in it) */
static char *cur_name;			/* the job's name */
static char *cur_dir;			/* shared with the hosts (build tree) */
static int cur_seq;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* scontrol/squeue/scancel with their output (free), status returned. */
static int slurm_cmd(char **out, const char *a0, const char *a1,
		     const char *a2, const char *a3, const char *a4)
{
	char *argv[6] = { (char *)a0, (char *)a1, (char *)a2, (char *)a3,
			  (char *)a4, NULL };
	char *o = NULL;
	int rc = sl_capture(argv, &o, NULL);

	if (out)
		*out = o;
	else
		free(o);
	return rc;
}

/* The job ids (blank-separated) of jobs named name, "" if none. */
static char *job_ids(const char *name)
{
	char *out = NULL, *n = xasprintf("--name=%s", name);

	slurm_cmd(&out, "squeue", "-h", "-o", "%i", n);
	free(n);
	for (char *p = out; p && *p; p++)
		if (*p == '\n')
			*p = ' ';
	return out ? out : xstrdup("");
}

static void end_job(void)
{
	char *ids;

	if (cur_name) {
		ids = job_ids(cur_name);
		if (*ids) {
			char *argv[64] = { (char *)"scancel" }, *save = NULL;
			char *o = NULL;
			int k = 1;

			for (char *t = strtok_r(ids, " ", &save); t && k < 63;
			     t = strtok_r(NULL, " ", &save))
				argv[k++] = t;
			argv[k] = NULL;
			sl_capture(argv, &o, NULL);
			free(o);
		}
		free(ids);
	}
	mj_end(cur_job);
	cur_job = NULL;
	for (int i = 0; cur_name && i < 100; i++) {
		ids = job_ids(cur_name);
		bool gone = !*ids;

		free(ids);
		if (gone)
			break;
		sleep_ms(200);
	}
	if (cur_cluster && cur_since) {
		char *left = NULL;

		if (mc_sweep(cur_cluster, cur_since, 15000, &left) > 0)
			cr_log_warn("left on the hosts, killed: %s", left);
		free(left);
	}
	free(cur_name);
	cur_name = NULL;
}

static void sl_fini(void)
{
	end_job();
	mc_free(cur_cluster);
	cur_cluster = NULL;
	mj_tmpdir_end(&cur_dir);
}

TestSuite(e2e_slurm, .fini = sl_fini, .timeout = 300);

static const char *bin(void)
{
	const char *b = getenv("MD_BIN");

	return b ? b : "build/mpi-deadlock";
}

static char *sample(const char *name)
{
	const char *build = getenv("MD_BUILD");
	char *p = xasprintf("%s/samples/debian/%s", build ? build : "build",
			    name);

	if (access(p, X_OK)) {
		free(p);
		cr_skip_test("samples are not built (make samples)");
	}
	return p;
}

/* Slurm, the cluster under it, a folder the hosts see, a job name. */
static void open_slurm(void)
{
	const char *conf = getenv("SLURM_CONF");
	const char *build = getenv("MD_BUILD");
	char *out = NULL;
	int rc;

	if (!conf || !getenv("MD_SLURM_STATE") || access(conf, R_OK)) {
		if (mc_required())
			cr_assert_fail("CI=true and no Slurm: SLURM_CONF and "
				       "MD_SLURM_STATE unset (scripts/test.sh "
				       "runs scripts/slurm.sh up)");
		cr_skip_test("no Slurm: run scripts/slurm.sh up 3 and export "
			     "its env (scripts/test.sh does)");
	}
	MC_OPEN_OR_SKIP(&cur_cluster);
	rc = slurm_cmd(&out, "sinfo", "-h", "-o", "%D %T", NULL);
	cr_assert_eq(rc, 0, "sinfo failed: Slurm is not up:\n%s", out);
	free(out);
	cur_since = mj_start_time(getpid());
	/* The hosts' /tmp is their own: sbatch's output file and JUnit file
	 * are written on node1, so they go into the build tree. */
	cur_name = xasprintf("mdt%d-%d", (int)getpid(), cur_seq++);
	cur_dir = xasprintf("%s/e2e-slurm", build ? build : "build");
	mkdir(cur_dir, 0755);
	free(cur_dir);
	cur_dir = xasprintf("%s/e2e-slurm/%s", build ? build : "build",
			    cur_name);
	cr_assert_eq(mkdir(cur_dir, 0755), 0, "mkdir %s", cur_dir);
}

/*
 * Start the job as cur_job, stdout and stderr in cur_dir/job.out and
 * job.err, with Open MPI's ob1 (the DLL reads its queues): argv itself
 * (srun) if prog is NULL, else `argv... mpirun --map-by node -np np
 * prog` (argv: salloc and its options).  mj_end sends SIGTERM to the
 * whole process group: salloc does not pass it on to mpirun.
 */
static void start(char *const argv[], const char *prog, int np)
{
	static char *const env[] = { (char *)"OMPI_MCA_pml=ob1", NULL };
	static char *const by_node[] = { (char *)"--map-by", (char *)"node",
					 NULL };
	struct mj_opts o = { .env = env, .term_group = true };

	cr_assert_null(cur_job, "a job is already running");
	if (prog) {
		o.prefix = argv;
		o.args = by_node;
		cur_job = mj_start_opts("mpirun", prog, np, cur_dir, &o);
	} else {
		cur_job = mj_start_argv(argv, cur_dir, &o);
	}
	cr_assert_not_null(cur_job, "cannot start %s", argv[0]);
}

static char *out_path(const char *tag)
{
	return xasprintf("%s/%s.%s.out", cur_dir, cur_name, tag);
}

/* Wait for n lines starting with prefix in the file at path. */
static void wait_lines(const char *path, const char *prefix, int n)
{
	long long end = md_now_ns() + WAIT_MS * 1000000LL;

	for (;;) {
		char *t = mj_slurp(path);
		int k = t ? mj_count_lines(t, prefix) : 0;

		free(t);
		if (k >= n)
			return;
		if (md_now_ns() > end)
			break;
		if (cur_job && !mj_wait_exit(cur_job, 0))
			break;
		sleep_ms(200);
	}
	char *t = mj_slurp(path);
	char *e = xasprintf("%.*serr", (int)(strlen(path) - 3), path);
	char *te = mj_slurp(e);

	cr_assert_fail("%d '%s' lines never came in %s:\n%s\nstderr:\n%s", n,
		       prefix, path, t ? t : "", te ? te : "");
}

/* The job's id (one job named cur_name). */
static char *the_job(void)
{
	for (int i = 0; i < 100; i++) {
		char *ids = job_ids(cur_name);

		ids[strcspn(ids, " ")] = 0;
		if (*ids)
			return ids;
		free(ids);
		sleep_ms(100);
	}
	cr_assert_fail("no job named %s in squeue", cur_name);
	return NULL;
}

/* srun --mpi=pmix of sample name, np ranks over 3 nodes. */
static void start_srun(const char *name, int np, int markers)
{
	char *prog = sample(name), *n = xasprintf("-n%d", np);
	char *j = xasprintf("--job-name=%s", cur_name);
	char *argv[] = { (char *)"srun", (char *)"-N3", n, j,
			 (char *)"--mpi=pmix", prog, NULL };

	start(argv, NULL, 0);
	wait_lines(cur_job->out, "MD-", markers);
	free(prog);
	free(n);
	free(j);
}

/* salloc -N3 ... mpirun --map-by node sample; returns mpirun's pid. */
static pid_t start_salloc(const char *name, int np, int markers)
{
	char *prog = sample(name), *n = xasprintf("-n%d", np);
	char *j = xasprintf("--job-name=%s", cur_name);
	char *argv[] = { (char *)"salloc", (char *)"-N3", n, j,
			 (char *)"--quiet", NULL };
	char path[64], *kids;
	pid_t salloc, mpirun;

	start(argv, prog, np);
	wait_lines(cur_job->out, "MD-", markers);
	salloc = cur_job->pid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)salloc,
		 (int)salloc);
	kids = mj_slurp(path);
	mpirun = kids ? (pid_t)atoi(kids) : 0;
	free(kids);
	cr_assert_gt(mpirun, 0, "salloc (pid %d) has no child mpirun",
		     (int)salloc);
	free(prog);
	free(n);
	free(j);
	return mpirun;
}

struct tool {
	int status;	/* exit code, -1: did not end */
	char *out, *err;
};

static struct tool tool_run(char *const args[])
{
	char *argv[32] = { (char *)bin() };
	char *o = out_path("tool"), *e = xasprintf("%s/%s.tool.err", cur_dir,
						   cur_name);
	struct tool t;
	int k = 1, st;

	for (int i = 0; args[i] && k < 31; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	st = rp_wait_status(rp_spawn(argv, NULL, o, e), TOOL_MS);
	t.status = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	t.out = mj_slurp(o);
	t.err = mj_slurp(e);
	if (!t.out)
		t.out = xstrdup("");
	if (!t.err)
		t.err = xstrdup("");
	free(o);
	free(e);
	return t;
}

static void tool_free(struct tool *t)
{
	free(t->out);
	free(t->err);
}

/* Every node's ranks were read there. */
static void expect_three_nodes(const struct tool *t)
{
	for (int i = 1; i <= 3; i++) {
		char *want = xasprintf("collected on node%d", i);

		cr_expect(strstr(t->out, want), "no '%s' in:\n%s\nstderr:\n%s",
			  want, t->out, t->err);
		free(want);
	}
	cr_expect(!strstr(t->out, "not collected"), "ranks not collected:\n%s",
		  t->out);
}

static void expect_ring(const struct tool *t)
{
	cr_expect_eq(t->status, 1, "exit %d, want 1 (deadlock):\n%s\n%s",
		     t->status, t->out, t->err);
	cr_expect(strstr(t->out, "DEADLOCK: 6 of 6 ranks are in a cycle"),
		  "report:\n%s", t->out);
	cr_expect(strstr(t->out, "ring.c:16"), "no STUCK line:\n%s", t->out);
	expect_three_nodes(t);
}

static void expect_collmismatch(const struct tool *t)
{
	cr_expect_eq(t->status, 1, "exit %d, want 1 (deadlock):\n%s\n%s",
		     t->status, t->out, t->err);
	cr_expect(strstr(t->out, "MPI_Barrier") && strstr(t->out, "MPI_Bcast") &&
		  strstr(t->out, "collmismatch.c:14") &&
		  strstr(t->out, "collmismatch.c:16"),
		  "the two collectives are not named:\n%s", t->out);
	expect_three_nodes(t);
}

static void expect_healthy(const struct tool *t)
{
	cr_expect_eq(t->status, 0, "exit %d, want 0 (no deadlock):\n%s\n%s",
		     t->status, t->out, t->err);
	cr_expect(strstr(t->out, "NO DEADLOCK"), "report:\n%s", t->out);
	expect_three_nodes(t);
}

static struct tool attach_v(pid_t pid)
{
	char p[32];
	char *args[] = { (char *)"--attach", p, (char *)"-v", NULL };

	snprintf(p, sizeof(p), "%d", (int)pid);
	return tool_run(args);
}

/* The job name started with np ranks and markers marker lines, through
 * srun --mpi=pmix or by mpirun inside salloc: the pid to attach to. */
static pid_t start_job(bool salloc, const char *name, int np, int markers)
{
	if (salloc)
		return start_salloc(name, np, markers);
	start_srun(name, np, markers);
	return cur_job->pid;
}

/* A ring over three nodes, every rank collected there by an agent that
 * srun started (picked: what the tool says it picked). */
static void check_ring(bool salloc, const char *picked)
{
	struct tool t;

	open_slurm();
	t = attach_v(start_job(salloc, "ring", 6, 6));
	expect_ring(&t);
	cr_expect(strstr(t.err, picked) && strstr(t.err, "srun"),
		  "auto did not pick %s:\n%s", picked, t.err);
	tool_free(&t);
}

static void check_collmismatch(bool salloc)
{
	struct tool t;

	open_slurm();
	t = attach_v(start_job(salloc, "collmismatch", 6, 6));
	expect_collmismatch(&t);
	tool_free(&t);
}

static void check_healthy(bool salloc)
{
	char *args[] = { (char *)"--attach", NULL, (char *)"--interval",
			 (char *)"300", NULL };
	char p[32];
	struct tool t;

	open_slurm();
	snprintf(p, sizeof(p), "%d", (int)start_job(salloc, "longcoll", 3, 3));
	args[1] = p;
	t = tool_run(args);
	expect_healthy(&t);
	tool_free(&t);
}

/* --- srun --mpi=pmix ---------------------------------------------- */

Test(e2e_slurm, srun_pmix_ring_over_three_nodes_every_rank_collected_there)
{
	check_ring(false, "agents through");
}

Test(e2e_slurm, srun_pmix_collective_mismatch_over_three_nodes)
{
	check_collmismatch(false);
}

Test(e2e_slurm, srun_pmix_healthy_job_is_no_deadlock)
{
	check_healthy(false);
}

/* --- mpirun inside salloc ----------------------------------------- */

Test(e2e_slurm, salloc_mpirun_ring_agents_through_srun)
{
	check_ring(true, "agents through srun --overlap into Slurm job");
}

Test(e2e_slurm, salloc_mpirun_collective_mismatch)
{
	check_collmismatch(true);
}

Test(e2e_slurm, salloc_mpirun_healthy_job_is_no_deadlock)
{
	check_healthy(true);
}

/* --- --slurm JOBID ------------------------------------------------ */

Test(e2e_slurm, slurm_jobid_and_jobid_step_report_like_attach)
{
	char *job, *step;
	struct tool t;

	open_slurm();
	start_srun("ring", 6, 6);
	job = the_job();
	step = xasprintf("%s.0", job);
	{
		char *args[] = { (char *)"--slurm", job, NULL };

		t = tool_run(args);
		expect_ring(&t);
		tool_free(&t);
	}
	{
		char *args[] = { (char *)"--slurm", step, (char *)"--format",
				 (char *)"json", NULL };

		t = tool_run(args);
		cr_expect_eq(t.status, 1, "exit %d:\n%s\n%s", t.status, t.out,
			     t.err);
		cr_expect(strstr(t.out, "\"deadlock\""), "not JSON:\n%s", t.out);
		tool_free(&t);
	}
	free(step);
	free(job);
}

/* One line on stderr, exit 3, containing want. */
static void expect_one_line(const struct tool *t, const char *want)
{
	cr_expect_eq(t->status, 3, "exit %d, want 3:\n%s\n%s", t->status,
		     t->out, t->err);
	cr_expect(strstr(t->err, want), "no '%s' in:\n%s", want, t->err);
	cr_expect_eq(mj_count_lines(t->err, ""), 1, "not one line:\n%s",
		     t->err);
}

Test(e2e_slurm, slurm_errors_unknown_pending_not_mpi_other_user_one_line)
{
	char *job, *big, *j, *o = NULL;
	struct tool t;
	int rc;

	open_slurm();
	/* A step that is not MPI. */
	{
		char *n = xasprintf("--job-name=%s", cur_name);
		char *argv[] = { (char *)"srun", (char *)"-N2", (char *)"-n2", n,
				 (char *)"sh", (char *)"-c",
				 (char *)"echo MD-UP; exec sleep 300", NULL };

		start(argv, NULL, 0);
		wait_lines(cur_job->out, "MD-UP", 2);
		free(n);
	}
	job = the_job();
	{
		char *args[] = { (char *)"--slurm", job, NULL };

		t = tool_run(args);
		expect_one_line(&t, "is not an MPI job");
		tool_free(&t);
	}
	/* Another user's job: the tool run as nobody. */
	{
		char *argv[] = { (char *)"/usr/bin/setpriv", (char *)"--reuid=65534",
				 (char *)"--regid=65534", (char *)"--clear-groups",
				 (char *)bin(), (char *)"--slurm", job, NULL };
		char *op = out_path("nobody"), *ep = xasprintf("%s/%s.nobody.err",
							       cur_dir, cur_name);
		int st = rp_wait_status(rp_spawn(argv, NULL, op, ep), TOOL_MS);
		struct tool n = { st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				  mj_slurp(op), mj_slurp(ep) };

		if (!n.err || strstr(n.err, "Permission denied") ||
		    strstr(n.err, "exec "))
			cr_log_warn("the tool cannot run as nobody here (%s): "
				    "another user's job not checked", n.err);
		else
			expect_one_line(&n, "belongs to user root (uid 0), not to you");
		tool_free(&n);
		free(op);
		free(ep);
	}
	/* A job that Slurm does not know. */
	big = xasprintf("%ld", atol(job) + 100000);
	{
		char *args[] = { (char *)"--slurm", big, NULL };

		t = tool_run(args);
		expect_one_line(&t, "Slurm knows no job");
		tool_free(&t);
	}
	/* A step that is not there. */
	{
		char *s = xasprintf("%s.5", job);
		char *args[] = { (char *)"--slurm", s, NULL };

		t = tool_run(args);
		expect_one_line(&t, "is not running (running steps of job");
		tool_free(&t);
		free(s);
	}
	/* A pending job (it may start in an hour). */
	j = xasprintf("--job-name=%s", cur_name);
	rc = slurm_cmd(&o, "sbatch", "--parsable", "--begin=now+1hour", j,
		       "--wrap=true");
	cr_assert_eq(rc, 0, "sbatch: %s", o);
	o[strcspn(o, "\n;")] = 0;
	{
		char *args[] = { (char *)"--slurm", o, NULL };

		t = tool_run(args);
		expect_one_line(&t, "is not running (PENDING");
		tool_free(&t);
	}
	free(o);
	free(j);
	free(big);
	free(job);
}

/* --- run -- srun, and the batch recipe ----------------------------- */

Test(e2e_slurm, run_srun_reports_at_its_deadline_and_ends_the_job)
{
	char *prog = sample("ring"), *j, *ids;
	struct tool t;

	open_slurm();
	j = xasprintf("--job-name=%s", cur_name);
	{
		char *args[] = { (char *)"run", (char *)"--timeout", (char *)"10",
				 (char *)"--", (char *)"srun", (char *)"-N3",
				 (char *)"-n6", j, (char *)"--mpi=pmix", prog, NULL };

		setenv("OMPI_MCA_pml", "ob1", 1);
		t = tool_run(args);
	}
	expect_ring(&t);
	/* run ended srun, and Slurm the step. */
	for (int i = 0; i < 100; i++) {
		ids = job_ids(cur_name);
		bool gone = !*ids;

		free(ids);
		if (gone)
			break;
		sleep_ms(200);
	}
	ids = job_ids(cur_name);
	cr_expect_str_empty(ids, "job still in squeue after run ended: %s", ids);
	free(ids);
	tool_free(&t);
	free(j);
	free(prog);
}

/* sbatch the recipe with a two-minute limit; wait for its trap's line.
 * Slurm sends the signal up to a minute before the time asked (it looks
 * once a minute): with a one-minute limit it came as the job started,
 * before bash had set the trap, and SIGUSR1 ended the job (WTERMSIG 10,
 * 70 ms after its start, in a CI run).  With two minutes and @45 it
 * comes 15 to 75 s after the start. */
static char *batch(const char *starter_words[], char **junit)
{
	/* Relative: scripts/run-tests.sh runs the tests in the source tree. */
	char *script = (char *)"tests/support/slurm-batch.sh";
	char *outf = xasprintf("%s/%s.batch.txt", cur_dir, cur_name);
	char *o = xasprintf("--output=%s", outf), *n = xasprintf("--job-name=%s",
								   cur_name);
	char *argv[24] = { (char *)"sbatch", (char *)"--parsable", (char *)"-N3",
			   (char *)"-n6", (char *)"--time=2",
			   (char *)"--signal=B:USR1@45", o, n, script };
	char *res = NULL, *text = NULL;
	long long end;
	int k = 9, rc;

	for (int i = 0; starter_words[i]; i++)
		argv[k++] = (char *)starter_words[i];
	argv[k] = NULL;
	setenv("MPI_DEADLOCK", bin(), 1);
	setenv("REPORT_DIR", cur_dir, 1);
	setenv("OMPI_MCA_pml", "ob1", 1);
	rc = sl_capture(argv, &res, NULL);
	cr_assert_eq(rc, 0, "sbatch failed: %s", res);
	res[strcspn(res, "\n;")] = 0;
	*junit = xasprintf("%s/deadlock-%s.xml", cur_dir, res);
	/* The job ends at its limit (120 s) at the latest. */
	end = md_now_ns() + 170 * 1000000000LL;
	while (md_now_ns() < end) {
		free(text);
		text = mj_slurp(outf);
		if (text && strstr(text, "mpi-deadlock exit "))
			break;
		sleep_ms(500);
	}
	cr_assert(text && strstr(text, "mpi-deadlock exit "),
		  "the trap did not run mpi-deadlock:\n%s", text ? text : "");
	free(res);
	free(outf);
	free(o);
	free(n);
	return text;
}

Test(e2e_slurm, batch_recipe_leaves_the_report_in_the_job_output, .timeout = 280)
{
	const char *words[] = { "srun", "--mpi=pmix", NULL, NULL };
	char *prog, *text, *junit = NULL, *x;

	open_slurm();
	prog = sample("ring");
	words[2] = prog;
	text = batch(words, &junit);
	cr_expect(strstr(text, "DEADLOCK: 6 of 6 ranks are in a cycle"),
		  "no report in the output file:\n%s", text);
	cr_expect(strstr(text, "mpi-deadlock exit 1"), "output:\n%s", text);
	for (int i = 1; i <= 3; i++) {
		char *want = xasprintf("collected on node%d", i);

		cr_expect(strstr(text, want), "no '%s':\n%s", want, text);
		free(want);
	}
	x = mj_slurp(junit);
	cr_expect(x && strstr(x, "<testsuite"), "no JUnit file %s", junit);
	free(x);
	free(text);
	free(junit);
	free(prog);
}

Test(e2e_slurm, slurm_jobid_of_a_batch_job_running_mpirun)
{
	char *prog, *script, *o, *n, *res = NULL, *job;
	struct tool t;
	int rc;

	open_slurm();
	prog = sample("ring");
	script = xasprintf("--wrap=mpirun --map-by node %s", prog);
	o = xasprintf("--output=%s/%s.batch.txt", cur_dir, cur_name);
	n = xasprintf("--job-name=%s", cur_name);
	{
		char *argv[] = { (char *)"sbatch", (char *)"--parsable",
				 (char *)"-N3", (char *)"-n6", o, n, script, NULL };

		setenv("OMPI_MCA_pml", "ob1", 1);
		rc = sl_capture(argv, &res, NULL);
	}
	cr_assert_eq(rc, 0, "sbatch: %s", res);
	{
		char *op = xasprintf("%s/%s.batch.txt", cur_dir, cur_name);

		wait_lines(op, "MD-", 6);
		free(op);
	}
	job = the_job();
	{
		char *args[] = { (char *)"--slurm", job, NULL };

		t = tool_run(args);
		expect_ring(&t);
		tool_free(&t);
	}
	free(job);
	free(res);
	free(prog);
	free(script);
	free(o);
	free(n);
}
