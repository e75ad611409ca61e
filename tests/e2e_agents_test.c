/*
 * e2e_agents_test.c - collection through agents on a real Open MPI job,
 * on this one machine: the front end runs in a UTS namespace of its own
 * (hostname md-front), so every rank of the job is on "another host" to
 * it and is collected through an agent started by a remote shell that
 * runs the command here (in a UTS namespace named after the host, so the
 * agent reports that host).  The faults are made by the remote shell or
 * by an --agent wrapper.  What needs real hosts (scripts/cluster.sh) is
 * in e2e_cluster_test.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md.h"
#include "snap.h"
#include "support/mpijob.h"
#include "support/tracee.h"

static struct tr_job job;

static void job_fini(void)
{
	tr_job_end(&job);
}

/* Write an executable script dir/name with text; returns its path. */
static char *script(const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", job.dir, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "fopen %s", path);
	fputs(text, f);
	fclose(f);
	chmod(path, 0755);
	return path;
}

/* The remote shell of these tests: ignores nothing, runs here. */
static char *local_rsh(void)
{
	return script("localrsh",
		      "#!/bin/sh\n"
		      "# HOST COMMAND...: run COMMAND here, named HOST\n"
		      "host=$1; shift\n"
		      "exec unshare --uts sh -c \"hostname $host; exec $*\"\n");
}

/* The file's text, "" if there is none (the process never wrote it). */
static char *text_of(const char *path)
{
	char *text = mj_slurp(path);

	return text ? text : xstrdup("");
}

static const char *skip_reason(void)
{
	int st = system("unshare --uts true 2>/dev/null");

	if (!getenv("MD_BIN"))
		return "MD_BIN is not set (run through make)";
	if (st != 0)
		return "unshare --uts does not work here (needs root): the "
		       "front end cannot be put on a host of its own";
	return NULL;
}

/*
 * Run the front end as md-front on the job with args (NULL-ended), stdout
 * and stderr into files; returns the exit status; *pid gets the tool's
 * pid when stop_after_ms > 0 (then SIGINT is sent after that time).
 */
static int front(const char **args, char **out, char **err,
		 int stop_after_ms)
{
	static char unshare[] = "unshare", uts[] = "--uts", sh[] = "sh",
		    dashc[] = "-c", attach[] = "--attach",
		    body[] = "hostname md-front && exec \"$0\" \"$@\"";
	char *bin = getenv("MD_BIN");
	char *argv[64], pidarg[32];
	char *of = xasprintf("%s/front.out", job.dir);
	char *ef = xasprintf("%s/front.err", job.dir);
	int n = 0, status = 0;
	pid_t pid;

	snprintf(pidarg, sizeof(pidarg), "%d", (int)job.mpirun);
	argv[n++] = unshare;
	argv[n++] = uts;
	argv[n++] = sh;
	argv[n++] = dashc;
	argv[n++] = body;
	argv[n++] = bin;
	argv[n++] = attach;
	argv[n++] = pidarg;
	for (int i = 0; args[i] && n < 62; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (stop_after_ms > 0) {
		struct timespec ts = { stop_after_ms / 1000,
				       (stop_after_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		kill(pid, SIGINT);
	}
	waitpid(pid, &status, 0);
	*out = text_of(of);
	*err = text_of(ef);
	free(of);
	free(ef);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* No rank of the job is stopped or traced. */
static void expect_job_free(void)
{
	for (int i = 0; i < job.nranks; i++) {
		char path[64], line[256];
		FILE *f;
		char st = tr_proc_state(job.ranks[i]);

		cr_expect(st != 't' && st != 'T', "rank pid %d left stopped (%c)",
			  (int)job.ranks[i], st);
		snprintf(path, sizeof(path), "/proc/%d/status",
			 (int)job.ranks[i]);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "TracerPid:", 10))
				cr_expect_eq(atoi(line + 10), 0,
					     "rank pid %d still traced",
					     (int)job.ranks[i]);
		if (f)
			fclose(f);
	}
}

static struct snap *read_snap(const char *path)
{
	FILE *f = fopen(path, "r");
	struct snap *s = NULL;

	cr_assert_not_null(f, "no snapshot %s", path);
	cr_assert_eq(snap_read(f, path, &s), 0);
	fclose(f);
	return s;
}

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

/* The same job state, whatever the pids, hosts, times and addresses. */
static void expect_same(const struct snap *a, const struct snap *b)
{
	cr_assert_eq(a->nranks, b->nranks);
	cr_expect_eq(a->ncomms, b->ncomms);
	for (int i = 0; i < a->ncomms && i < b->ncomms; i++) {
		cr_expect_eq(a->comms[i].id, b->comms[i].id, "comm %d", i);
		cr_expect_str_eq(nz(a->comms[i].name), nz(b->comms[i].name));
		cr_expect_eq(a->comms[i].size, b->comms[i].size);
		for (int k = 0; a->comms[i].group && b->comms[i].group &&
				k < a->comms[i].size; k++)
			cr_expect_eq(a->comms[i].group[k], b->comms[i].group[k]);
	}
	for (int i = 0; i < a->nranks; i++) {
		const struct snap_rank *x = &a->ranks[i], *y = &b->ranks[i];

		cr_expect_eq(x->state, y->state, "rank %d", i);
		cr_expect_eq(x->progress, y->progress, "rank %d", i);
		cr_expect_str_eq(nz(x->mpi_call), nz(y->mpi_call), "rank %d", i);
		cr_expect_str_eq(nz(x->call_file), nz(y->call_file));
		cr_expect_eq(x->call_line, y->call_line, "rank %d", i);
		cr_expect_str_eq(nz(x->exe), nz(y->exe));
		cr_assert_eq(x->nmembers, y->nmembers, "rank %d", i);
		for (int k = 0; k < x->nmembers; k++) {
			cr_expect_eq(x->members[k].comm, y->members[k].comm);
			cr_expect_eq(x->members[k].local_rank,
				     y->members[k].local_rank);
		}
		cr_assert_eq(x->nops, y->nops, "rank %d", i);
		for (int k = 0; k < x->nops; k++) {
			cr_expect_eq(x->ops[k].kind, y->ops[k].kind);
			cr_expect_eq(x->ops[k].comm, y->ops[k].comm);
			cr_expect_eq(x->ops[k].peer_global, y->ops[k].peer_global);
			cr_expect_eq(x->ops[k].tag, y->ops[k].tag);
			cr_expect_eq(x->ops[k].length, y->ops[k].length);
		}
		cr_expect_eq(x->nthreads, y->nthreads, "rank %d", i);
	}
	cr_expect_str_eq(nz(a->dll), nz(b->dll));
	cr_expect_str_eq(nz(a->mpi), nz(b->mpi));
}

#define START(np)                                                         \
	do {                                                              \
		const char *why_ = skip_reason();                         \
		if (!why_)                                                \
			why_ = tr_job_start(&job, "samples/ring.c", np);  \
		if (why_)                                                 \
			cr_skip_test("%s", why_);                         \
	} while (0)

static void same_as_one_host(const char *launcher)
{
	char *rsh, *out, *err, *one, *multi, *cmd;
	struct snap *a, *b;
	int rc;

	rsh = local_rsh();
	one = xasprintf("%s/one.jsonl", job.dir);
	multi = xasprintf("%s/multi.jsonl", job.dir);
	cmd = xasprintf("%s --attach %d --interval 300 --snapshot %s "
			">/dev/null 2>&1", getenv("MD_BIN"), (int)job.mpirun,
			one);
	rc = system(cmd);
	cr_assert_eq(WEXITSTATUS(rc), 1, "one-host collection: %d", rc);
	rc = front((const char *[]){ "--launcher", launcher, "--rsh", rsh,
				     "--interval", "300", "--snapshot", multi,
				     NULL }, &out, &err, 0);
	cr_expect_eq(rc, 1, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "DEADLOCK: 4 of 4 ranks are in a cycle"), "%s",
		  out);
	/* The report says where the ranks were collected. */
	cr_expect(!strstr(out, "not read"), "%s", out);
	a = read_snap(one);
	b = read_snap(multi);
	expect_same(a, b);
	cr_expect_str_eq(b->host, "md-front");
	/* Through ssh the agent runs named after the rank's host; mpirun
	 * sees that this machine is that host and starts it here (as
	 * md-front): then only that it was collected by an agent. */
	for (int i = 0; i < b->nranks; i++)
		if (!strcmp(launcher, "ssh"))
			cr_expect_str_eq(nz(b->ranks[i].collected_on),
					 nz(a->ranks[i].host), "rank %d", i);
		else
			cr_expect_not_null(b->ranks[i].collected_on);
	snap_free(a);
	snap_free(b);
	expect_job_free();
	free(rsh); free(out); free(err); free(one); free(multi); free(cmd);
}

Test(e2e_agents, ring_on_another_host_is_the_same_snapshot_as_on_one,
     .fini = job_fini, .timeout = 240)
{
	START(4);
	same_as_one_host("ssh");
}

/* The job's own mpirun starts the agent (its remote shell being the
 * local one of these tests). */
Test(e2e_agents, mpirun_launcher_gives_the_same_snapshot_as_one_host,
     .fini = job_fini, .timeout = 240)
{
	START(4);
	same_as_one_host("mpirun");
}

/* The agents' settings come from the front end, not from their
 * environment: this remote shell gives them a clean one, like ssh. */
Test(e2e_agents, dll_only_setting_reaches_the_agents,
     .fini = job_fini, .timeout = 240)
{
	char *rsh, *out, *err, *snap[2];
	int rc;

	START(4);
	rsh = script("cleanrsh",
		     "#!/bin/sh\n"
		     "host=$1; shift\n"
		     "exec env -i PATH=\"$PATH\" unshare --uts sh -c "
		     "\"hostname $host; exec $*\"\n");
	for (int off = 0; off < 2; off++) {
		snap[off] = xasprintf("%s/agents%d.jsonl", job.dir, off);
		if (off)
			setenv("MD_NO_OB1", "1", 1);
		rc = front((const char *[]){ "--launcher", "ssh", "--rsh",
					     rsh, "--interval", "300",
					     "--snapshot", snap[off], NULL },
			   &out, &err, 0);
		unsetenv("MD_NO_OB1");
		cr_expect_eq(rc, 1, "status %d\n%s%s", rc, out, err);
		free(out);
		free(err);
	}
	for (int off = 0; off < 2; off++) {
		struct snap *s = read_snap(snap[off]);

		for (int i = 0; i < s->nranks; i++) {
			cr_expect_not_null(s->ranks[i].collected_on,
					   "rank %d not collected by an agent",
					   i);
			cr_expect_eq(s->ranks[i].ob1, !off,
				     "rank %d: ob1 walk %s with MD_NO_OB1%s",
				     i, s->ranks[i].ob1 ? "ran" : "did not run",
				     off ? "=1" : " unset");
		}
		snap_free(s);
		free(snap[off]);
	}
	expect_job_free();
	free(rsh);
}

Test(e2e_agents, unreachable_host_leaves_its_ranks_not_collected,
     .fini = job_fini, .timeout = 120)
{
	char *rsh, *out, *err;
	int rc;

	START(2);
	rsh = script("deadrsh", "#!/bin/sh\n"
				"echo \"ssh: connect to host $1 port 22: "
				"Connection refused\" >&2\nexit 255\n");
	rc = front((const char *[]){ "--rsh", rsh, "--looks", "1", NULL },
		   &out, &err, 0);
	cr_expect_eq(rc, 2, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "not collected: host vm unreachable: ssh: "
			      "connect to host vm port 22: Connection "
			      "refused") ||
		  strstr(out, "unreachable: ssh: connect to host"),
		  "%s", out);
	cr_expect(strstr(out, "INCOMPLETE: none of the 2 ranks could be read"),
		  "%s", out);
	free(rsh); free(out); free(err);
}

Test(e2e_agents, missing_agent_is_named_with_the_fix,
     .fini = job_fini, .timeout = 120)
{
	char *rsh, *out, *err;
	int rc;

	START(2);
	rsh = local_rsh();
	rc = front((const char *[]){ "--rsh", rsh, "--looks", "1", "--agent",
				     "/nonexistent/mpi-deadlock", NULL },
		   &out, &err, 0);
	cr_expect_eq(rc, 2, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "no agent at /nonexistent/mpi-deadlock on host"),
		  "%s", out);
	cr_expect(strstr(out, "give its path with --agent"), "%s", out);
	free(rsh); free(out); free(err);
}

Test(e2e_agents, agent_of_another_version_is_refused,
     .fini = job_fini, .timeout = 120)
{
	char *rsh, *agent, *out, *err;
	int rc;

	START(2);
	rsh = local_rsh();
	agent = script("oldagent", "#!/bin/sh\n"
				   "echo 'mpi-deadlock-agent 1 0.0.9 1 node9'\n"
				   "exec cat >/dev/null\n");
	rc = front((const char *[]){ "--rsh", rsh, "--looks", "1", "--agent",
				     agent, NULL }, &out, &err, 0);
	cr_expect_eq(rc, 2, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "is mpi-deadlock 0.0.9 (protocol 1, snapshot "
			      "version 1), this is " MD_VERSION),
		  "%s", out);
	free(rsh); free(agent); free(out); free(err);
}

Test(e2e_agents, agent_that_dies_mid_collection_leaves_ranks_running,
     .fini = job_fini, .timeout = 120)
{
	char *rsh, *agent, *text, *out, *err;
	int rc;

	START(4);
	rsh = local_rsh();
	/* Its output is cut after hello, ready and the first look: the agent
	 * must detach and end, the front end say so. */
	text = xasprintf("#!/bin/sh\n\"%s\" \"$@\" | sed -u 3q\n",
			 getenv("MD_BIN"));
	agent = script("cutagent", text);
	rc = front((const char *[]){ "--rsh", rsh, "--looks", "3",
				     "--interval", "300", "--agent", agent,
				     NULL }, &out, &err, 0);
	cr_expect_eq(rc, 2, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "ended during collection"), "%s", out);
	expect_job_free();
	free(rsh); free(agent); free(text); free(out); free(err);
}

Test(e2e_agents, slow_host_times_out_per_agent,
     .fini = job_fini, .timeout = 120)
{
	char *rsh, *agent, *out, *err;
	long long t0;
	int rc;

	START(2);
	rsh = local_rsh();
	agent = script("slowagent", "#!/bin/sh\nexec sleep 60\n");
	t0 = md_now_ns();
	rc = front((const char *[]){ "--rsh", rsh, "--looks", "1", "--agent",
				     agent, "--agent-timeout", "1", NULL },
		   &out, &err, 0);
	cr_expect_lt(md_now_ns() - t0, 15000000000LL, "took too long");
	cr_expect_eq(rc, 2, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(out, "did not answer within 1 s (start): raise "
			      "--agent-timeout"), "%s", out);
	free(rsh); free(agent); free(out); free(err);
}

static void ctrl_c(const char *launcher)
{
	char *rsh, *agent, *text, *out, *err, *pidfile, *pidtext;
	int rc, apid;

	rsh = local_rsh();
	pidfile = xasprintf("%s/agent.pid", job.dir);
	text = xasprintf("#!/bin/sh\necho $$ > %s\nexec \"%s\" \"$@\"\n",
			 pidfile, getenv("MD_BIN"));
	agent = script("pidagent", text);
	/* A long interval: the interrupt comes between the looks or during
	 * one; either way nothing may stay stopped. */
	rc = front((const char *[]){ "--launcher", launcher, "--rsh", rsh,
				     "--looks", "2", "--interval", "20000",
				     "--agent", agent, NULL }, &out, &err,
		   3500);
	cr_expect_eq(rc, 130, "status %d\n%s%s", rc, out, err);
	cr_expect(strstr(err, "every agent detached its ranks and ended"),
		  "%s", err);
	pidtext = text_of(pidfile);
	apid = atoi(pidtext);
	cr_expect_gt(apid, 0, "the agent never started");
	for (int i = 0; i < 100 && apid > 0 && kill(apid, 0) == 0; i++)
		usleep(20000);
	cr_expect(apid <= 0 || (kill(apid, 0) < 0 && errno == ESRCH),
		  "agent pid %d still there", apid);
	expect_job_free();
	free(rsh); free(agent); free(text); free(out); free(err);
	free(pidfile); free(pidtext);
}

Test(e2e_agents, ctrl_c_at_the_front_end_lets_every_agent_detach,
     .fini = job_fini, .timeout = 120)
{
	START(4);
	ctrl_c("ssh");
}

Test(e2e_agents, ctrl_c_reaches_agents_started_by_mpirun,
     .fini = job_fini, .timeout = 120)
{
	START(4);
	ctrl_c("mpirun");
}

/* What the e2e_hosts_run tests need: the test cluster (its hostfile and,
 * if named, one more of its variables), the tool and the ring sample;
 * they skip, saying why, without it.  Returns the ring's path. */
static char *hosts_ring(const char *also)
{
	const char *hf = getenv("MD_CLUSTER_HOSTFILE");
	const char *build = getenv("MD_BUILD");
	char *ring;

	if (!hf || (also && !getenv(also)) || access(hf, R_OK))
		cr_skip_test("no test cluster: run `scripts/cluster.sh up 3` "
			     "and `eval \"$(scripts/cluster.sh env)\"` (make "
			     "test through scripts/test.sh does)");
	if (!getenv("MD_BIN") || !build)
		cr_skip_test("MD_BIN or MD_BUILD is not set (run through make)");
	ring = xasprintf("%s/samples/debian/ring", build);
	if (access(ring, X_OK))
		cr_skip_test("%s is not built (make samples)", ring);
	return ring;
}

/* The ring on 6 ranks over the cluster's hosts (--map-by node), its
 * markers seen; *dir is its folder (mj_rmdir, free). */
static struct mj_job *hosts_start_ring(const char *ring, char **dir)
{
	struct mj_job *j;

	cr_assert_not_null(*dir = mj_tmpdir("hosts"));
	j = mj_start_hosts("mpirun", ring, 6, *dir,
			   getenv("MD_CLUSTER_HOSTFILE"));
	cr_assert_not_null(j);
	if (mj_wait_lines(j, "MD-READY", 6, 90000)) {
		mj_end(j);
		cr_assert_fail("the job did not start on the cluster");
	}
	return j;
}

/* cmd's standard output ("" if none; free it); *st its wait status. */
static char *popen_all(const char *cmd, int *st)
{
	FILE *p = popen(cmd, "r");
	char *out = NULL;
	size_t len = 0;

	cr_assert_not_null(p);
	if (getdelim(&out, &len, 0, p) < 0) {
		free(out);
		out = xstrdup("");
	}
	*st = pclose(p);
	return out;
}

/*
 * `run` on a job spread over 3 hosts of the test cluster: at the deadline
 * it collects through the agents, reports the deadlock with every host's
 * ranks collected there, and ends the job.
 */
Test(e2e_hosts_run, run_reports_a_ring_spread_over_three_hosts,
     .timeout = 240)
{
	char *ring = hosts_ring(NULL), *cmd, *out;
	int st;

	cmd = xasprintf("%s run --timeout 10 --interval 300 -- mpirun "
			"--allow-run-as-root --oversubscribe --hostfile %s "
			"--map-by node --mca pml ob1 -np 6 %s 2>/dev/null",
			getenv("MD_BIN"), getenv("MD_CLUSTER_HOSTFILE"), ring);
	out = popen_all(cmd, &st);
	cr_expect_eq(WEXITSTATUS(st), 1, "status %d\n%s", st, out);
	cr_expect(strstr(out, "DEADLOCK: 6 of 6 ranks are in a cycle"), "%s",
		  out);
	/* --map-by node: host i holds ranks i and i+3, read there. */
	for (int h = 0; h < 3; h++) {
		char *want = xasprintf(": ranks %d,%d, collected on ", h, h + 3);

		cr_expect(strstr(out, want), "no line '%s' in\n%s", want, out);
		free(want);
	}
	cr_expect(!strstr(out, "not collected"), "%s", out);
	free(out);
	free(cmd);
	free(ring);
}

/*
 * The gstack hook as Open MPI's daemon runs it on a host of a many-host
 * job (`gstack RANKPID` inside that host, the rank's parent being orted):
 * it reports the ranks of its host, the others "not read", exit 2.
 */
Test(e2e_hosts_run, gstack_on_a_host_without_mpirun_reports_its_ranks,
     .timeout = 240)
{
	char *ring = hosts_ring("MD_CLUSTER_SCRIPT"), *cmd, *out, *dir;
	struct mj_job *j = hosts_start_ring(ring, &dir);
	int st;

	/* The second host holds ranks 1 and 4 (--map-by node). */
	cmd = xasprintf("%s exec $(echo $MD_CLUSTER_HOSTS | cut -d' ' -f2) "
			"sh -c 'for d in /proc/[0-9]*; do [ \"$(cat $d/comm "
			"2>/dev/null)\" = ring ] && exec %s gstack --looks 2 "
			"--interval 300 ${d#/proc/}; done; echo no rank; exit 9'"
			" 2>/dev/null", getenv("MD_CLUSTER_SCRIPT"),
			getenv("MD_BIN"));
	out = popen_all(cmd, &st);
	mj_end(j);
	cr_expect_eq(WEXITSTATUS(st), 2, "status %d\n%s", st, out);
	cr_expect(strstr(out, ": ranks 1,4, collected on "), "%s", out);
	cr_expect(strstr(out, "only the 2 ranks of host "), "%s", out);
	cr_expect(strstr(out, "ranks 1,4: MPI_Recv at "), "%s", out);
	mj_rmdir(dir);
	free(dir);
	free(out);
	free(cmd);
	free(ring);
}

/* Real hosts whose sshd cannot be reached (a port nobody listens on):
 * each host's ranks name the host and ssh's own error, exit 2. */
Test(e2e_hosts_run, unreachable_hosts_name_ssh_s_own_error, .timeout = 240)
{
	char *ring = hosts_ring("MD_CLUSTER_STATE"), *cmd, *out, *dir;
	struct mj_job *j = hosts_start_ring(ring, &dir);
	int st, n = 0;

	cmd = xasprintf("%s --attach %d --looks 1 --launcher ssh --rsh "
			"'ssh -F %s/ssh_config -p 2' 2>/dev/null",
			getenv("MD_BIN"), (int)j->pid,
			getenv("MD_CLUSTER_STATE"));
	out = popen_all(cmd, &st);
	mj_end(j);
	cr_expect_eq(WEXITSTATUS(st), 2, "status %d\n%s", st, out);
	for (const char *q = out; (q = strstr(q, "(not collected: host ")); q++)
		n += !!strstr(q, " unreachable: ssh: connect to host ") &&
		     strstr(q, " unreachable: ssh: connect to host ") <
			     strchr(q, '\n');
	cr_expect_eq(n, 3, "3 hosts unreachable expected:\n%s", out);
	mj_rmdir(dir);
	free(dir);
	free(out);
	free(cmd);
	free(ring);
}
