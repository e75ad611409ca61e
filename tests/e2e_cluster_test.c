/*
 * e2e_cluster_test.c - the test cluster itself (scripts/cluster.sh) and
 * the support for jobs spread over its hosts (support/cluster.c): real
 * mpirun, real ranks on namespace hosts reached through their own sshd,
 * for both Open MPI setups.
 *
 * Jobs run on the cluster of the test run ($MD_CLUSTER_HOSTFILE, brought
 * up by scripts/test.sh): skipped with the reason without it, failed in
 * CI.  The tests of cluster.sh itself bring up an instance of their own.
 * The .fini hook ends every job and whatever it left on any host, by pid.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/elfsym.h"
#include "../collector/proctable.h"
#include "md.h"
#include "support/cluster.h"
#include "support/manifest.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define OMPI_G "/var/cache/mpi-deadlock/openmpi-4.1.4-g"
#define MARKER_TIMEOUT_MS 90000
#define SCRIPT_TIMEOUT_MS 120000

static struct mc_cluster *cur_cluster;
static struct mj_job *cur_job;
static char *cur_dir;
static char *cur_instance;	/* a cluster.sh instance a test brought up */
static bool cur_fail_expected;	/* cluster.sh failing is the point */

static char *script_path(void);
static int run_script(const char *instance, const char *out_path,
		      const char *a1, const char *a2);

static void cl_fini(void)
{
	mj_end(cur_job);
	cur_job = NULL;
	mc_free(cur_cluster);
	cur_cluster = NULL;
	if (cur_instance) {
		run_script(cur_instance, "/dev/null", "down", NULL);
		free(cur_instance);
		cur_instance = NULL;
	}
	mj_tmpdir_end(&cur_dir);
}

static char *make_dir(void)
{
	cur_dir = mj_tmpdir("e2ecl");
	cr_assert_not_null(cur_dir, "mkdtemp failed");
	return cur_dir;
}

/* mpirun of a setup, the extra arguments it needs on the hosts, and the
 * sample binary built with it. */
static const char *setup_mpirun(const char *setup)
{
	return strcmp(setup, "ompi-g") ? "mpirun" : OMPI_G "/bin/mpirun";
}

static char *sample_binary(const char *setup, const char *name)
{
	const char *build = getenv("MD_BUILD");
	char *p = xasprintf("%s/samples/%s/%s", build ? build : "build", setup,
			    name);

	if (access(p, X_OK)) {
		free(p);
		cr_skip_test("samples for setup %s are not built (make samples%s)",
			     setup, strcmp(setup, "ompi-g") ? "" :
			     "; needs scripts/build-openmpi.sh done");
	}
	return p;
}

static void dump_file(const char *what, const char *path)
{
	char *t = mj_slurp(path);

	cr_log_warn("--- %s (%s):\n%s", what, path, t ? t : "(missing)");
	free(t);
}

/* Start sample `name` with np ranks over the cluster, wait for `markers`
 * READY lines. */
static void start_on_cluster(const char *setup, const char *name, int np,
			     int markers, char *const *args)
{
	char *bin = sample_binary(setup, name);
	int r;

	MC_OPEN_OR_SKIP(&cur_cluster);
	make_dir();
	/* The -g mpirun, called by its path, gives its prefix to the daemons
	 * it starts; a daemon started by a daemon (tree spawn) is a bare
	 * "orted" from PATH, Debian's, unless told (seen by hand). */
	char *g_args[8] = { (char *)"--mca", (char *)"orte_launch_agent",
			    (char *)OMPI_G "/bin/orted", NULL };
	if (!strcmp(setup, "ompi-g")) {
		for (int k = 0; args && args[k] && k < 4; k++)
			g_args[3 + k] = args[k];
		args = g_args;
	}
	cur_job = mc_start_job(cur_cluster, setup_mpirun(setup), bin, np,
			       cur_dir, args);
	free(bin);
	cr_assert_not_null(cur_job, "could not start mpirun");
	r = mj_wait_lines(cur_job, "MD-", markers, MARKER_TIMEOUT_MS);
	if (r) {
		dump_file("job stdout", cur_job->out);
		dump_file("job stderr", cur_job->err);
		cr_assert_fail("%s over %d hosts: %s before %d markers", name,
			       cur_cluster->nhosts,
			       r == -MD_E_GONE ? "mpirun exited" : "timeout",
			       markers);
	}
}

/* The processes named comm on host i (pid inside the host). */
static int host_procs_named(int i, const char *comm, pid_t *nspids, int max)
{
	struct mc_proc ps[64];
	int n = mc_host_procs(cur_cluster, i, 0, ps, 64), k = 0;

	for (int p = 0; p < n && p < 64; p++)
		if (!strcmp(ps[p].comm, comm) && k < max)
			nspids[k++] = ps[p].nspid;
	return k;
}

/* routed_radix 1: the daemons form a chain, so the orted on one host
 * starts the next one through ssh (Open MPI's tree spawn). */
static char *chain_args[] = { (char *)"--mca", (char *)"routed_radix",
			      (char *)"1", NULL };

/* Host i's ssh sessions come from another host, not from the machine
 * (the bridge's address, A.B.C.1). */
static void expect_ssh_from_a_host(int i)
{
	char *argv[] = { (char *)"ss", (char *)"-Htn", (char *)"state",
			 (char *)"established", (char *)"( sport = :22 )",
			 NULL };
	const char *net = mc_getenv(cur_cluster, "MD_CLUSTER_SUBNET");
	char *out = NULL, *bridge;
	int st;

	cr_assert_not_null(net);
	bridge = xasprintf(" %.*s1:", (int)(strrchr(net, '.') - net + 1),
			   net);
	st = mc_exec(cur_cluster, cur_cluster->hosts[i].name, argv, &out,
		     30000);
	cr_expect_eq(st, 0, "ss on %s", cur_cluster->hosts[i].name);
	cr_expect(out && strstr(out, ":22 ") && !strstr(out, bridge),
		  "%s: ssh sessions not (only) from another host:\n%s",
		  cur_cluster->hosts[i].name, out);
	free(out);
	free(bridge);
}

static void ranks_spread_over_three_hosts(const char *setup,
					  char *const *args)
{
	struct es_cache *ec = es_cache_new();
	struct pt_job *t = NULL;
	bool seen[8] = { false };
	char *left = NULL;
	unsigned long long since;
	int r, killed;

	start_on_cluster(setup, "ring", 3, 3, args);
	cr_assert_geq(cur_cluster->nhosts, 3, "the cluster has %d hosts, "
		      "this test needs 3", cur_cluster->nhosts);
	r = pt_acquire(cur_job->pid, pt_elfsym_lookup, ec, &t);
	cr_assert_eq(r, 0, "pt_acquire(mpirun %d): %s", cur_job->pid,
		     md_strerror(r));
	cr_assert_eq(t->nranks, 3);
	for (int k = 0; k < 3; k++) {
		int h = mc_host_index(cur_cluster, t->procs[k].host);
		pid_t pids[8], local;
		int n;
		bool found = false;

		cr_assert_geq(h, 0, "rank %d on '%s', not a cluster host", k,
			      t->procs[k].host);
		cr_expect(!seen[h], "two ranks on %s with --map-by node",
			  t->procs[k].host);
		seen[h] = true;
		cr_expect(!t->procs[k].local, "rank %d called local", k);
		/* The table's pid is the rank's pid inside its host. */
		n = host_procs_named(h, "ring", pids, 8);
		for (int p = 0; p < n; p++)
			found |= pids[p] == t->procs[k].pid;
		cr_expect(found, "rank %d: pid %d is no 'ring' on %s", k,
			  t->procs[k].pid, t->procs[k].host);
		local = mc_host_pid(cur_cluster, h, t->procs[k].pid);
		cr_expect_gt(local, 0, "rank %d not found from here", k);
		cr_expect_eq(mj_tracer(local), 0, "rank %d is traced", k);
	}
	pt_job_free(t);
	es_cache_free(ec);
	if (args == chain_args)
		expect_ssh_from_a_host(cur_cluster->nhosts - 1);
	/* Ending mpirun ends everything it started on every host (the
	 * hosts' own daemons, Slurm's slurmd, were there before it). */
	since = cur_job->pid_start;
	killed = mj_end_all(cur_job, &left);
	cur_job = NULL;
	cr_expect_eq(killed, 0, "left behind after mpirun ended: %s", left);
	free(left);
	for (int h = 0; h < cur_cluster->nhosts; h++)
		cr_expect_eq(mc_host_procs(cur_cluster, h, since, NULL, 0), 0,
			     "host %s is not empty", cur_cluster->hosts[h].name);
}

TestSuite(e2e_cluster, .fini = cl_fini, .timeout = 240);

Test(e2e_cluster, ring_ranks_are_on_three_hosts_in_mpir_table_debian)
{
	ranks_spread_over_three_hosts("debian", NULL);
}

Test(e2e_cluster, ring_ranks_are_on_three_hosts_in_mpir_table_ompi_g)
{
	ranks_spread_over_three_hosts("ompi-g", NULL);
}

Test(e2e_cluster, tree_spawn_from_host_to_host_reaches_every_host_debian)
{
	ranks_spread_over_three_hosts("debian", chain_args);
}

Test(e2e_cluster, tree_spawn_from_host_to_host_reaches_every_host_ompi_g)
{
	ranks_spread_over_three_hosts("ompi-g", chain_args);
}

/* mpirun killed outright: its daemons lose it and end their ranks. */
static void killed_mpirun_leaves_nothing(const char *setup)
{
	int np = 6, killed;
	unsigned long long since;
	char *left = NULL;

	start_on_cluster(setup, "ring", np, np, NULL);
	cr_assert_gt(mc_host_procs(cur_cluster, 1, cur_job->pid_start, NULL,
				   0), 0, "no process of the job on %s",
		     cur_cluster->hosts[1].name);
	kill(cur_job->pid, SIGKILL);
	since = cur_job->pid_start;
	killed = mj_end_all(cur_job, &left);
	cur_job = NULL;
	cr_expect_eq(killed, 0, "left behind after SIGKILL of mpirun: %s",
		     left);
	free(left);
	for (int h = 0; h < cur_cluster->nhosts; h++)
		cr_expect_eq(mc_host_procs(cur_cluster, h, since, NULL, 0), 0,
			     "host %s is not empty", cur_cluster->hosts[h].name);
}

Test(e2e_cluster, mpirun_killed_leaves_no_rank_on_any_host_debian)
{
	killed_mpirun_leaves_nothing("debian");
}

Test(e2e_cluster, mpirun_killed_leaves_no_rank_on_any_host_ompi_g)
{
	killed_mpirun_leaves_nothing("ompi-g");
}

/* The sweep is not vacuous: a process left on a host is found and
 * killed, and named. */
Test(e2e_cluster, sweep_finds_and_kills_a_process_left_on_a_host)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"setsid sleep 300 </dev/null >/dev/null 2>&1 &",
			 NULL };
	char *out = NULL, *left = NULL;
	unsigned long long since;
	int st, killed;

	MC_OPEN_OR_SKIP(&cur_cluster);
	since = mj_start_time(getpid());
	st = mc_exec(cur_cluster, cur_cluster->hosts[0].name, argv, &out,
		     30000);
	free(out);
	cr_assert_eq(st, 0, "cluster.sh exec %s failed",
		     cur_cluster->hosts[0].name);
	cr_assert_eq(mc_host_procs(cur_cluster, 0, since, NULL, 0), 1);
	killed = mc_sweep(cur_cluster, since, 500, &left);
	cr_expect_eq(killed, 1, "killed %d", killed);
	cr_expect(left && strstr(left, cur_cluster->hosts[0].name) &&
		  strstr(left, "sleep"), "left: %s", left);
	free(left);
	cr_expect_eq(mc_host_procs(cur_cluster, 0, since, NULL, 0), 0);
}

/* Does `ps -e -o pid=,comm=` output list pid 1 as sshd? */
static bool has_pid1_sshd(const char *ps)
{
	for (const char *l = ps; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		int pid;
		char comm[32];

		if (sscanf(l, " %d %31s", &pid, comm) == 2 && pid == 1 &&
		    !strcmp(comm, "sshd"))
			return true;
	}
	return false;
}

/* exec runs in the host's own namespaces: its name, its pid space. */
Test(e2e_cluster, exec_runs_in_the_host_pid_and_uts_namespaces)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"hostname; ps -e -o pid=,comm=", NULL };
	const char *host;
	char *out = NULL, *want;

	MC_OPEN_OR_SKIP(&cur_cluster);
	host = cur_cluster->hosts[cur_cluster->nhosts - 1].name;
	cr_assert_eq(mc_exec(cur_cluster, host, argv, &out, 30000), 0);
	want = xasprintf("%s\n", host);
	cr_expect(!strncmp(out, want, strlen(want)), "hostname: %s", out);
	cr_expect(has_pid1_sshd(out), "pid 1 is not sshd:\n%s", out);
	/* The machine has hundreds of processes; the host a handful. */
	cr_expect_lt(mj_count_lines(out, " "), 10, "too many processes:\n%s",
		     out);
	free(want);
	free(out);
}

/* ---- scripts/cluster.sh itself, on an instance of the test's own ---- */

static char *script_path(void)
{
	char *dir = mf_samples_dir();
	char *p = xasprintf("%s/../scripts/cluster.sh", dir);

	free(dir);
	return p;
}

/* `MD_CLUSTER=instance cluster.sh a1 [a2]`, stdout to out_path.  Returns
 * the exit status, or -1. */
static int run_script(const char *instance, const char *out_path,
		      const char *a1, const char *a2)
{
	char *script = script_path(), *inst = xasprintf("MD_CLUSTER=%s",
							instance);
	char *argv[] = { (char *)"/usr/bin/env", inst, script, (char *)a1,
			 (char *)a2, NULL };
	char *err = xasprintf("%s.err", out_path);
	int st;

	if (!strcmp(out_path, "/dev/null")) {
		free(err);
		err = xstrdup("/dev/null");
	}
	st = rp_wait_status(rp_spawn(argv, NULL, out_path, err),
			    SCRIPT_TIMEOUT_MS);
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) && cur_dir &&
	    !cur_fail_expected)
		dump_file("cluster.sh stderr", err);
	free(err);
	free(inst);
	free(script);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* Root and sshd, or skip (fail in CI). */
static void need_cluster_rights(void)
{
	const char *why = geteuid() ? "not root (cluster.sh makes namespaces)" :
			  access("/usr/sbin/sshd", X_OK) ?
			  "no /usr/sbin/sshd (scripts/setup.sh installs "
			  "openssh-server)" : NULL;

	if (why && mc_required())
		cr_assert_fail("CI=true: %s", why);
	if (why)
		cr_skip_test("%s", why);
}

/* A fresh instance name for this test, remembered for the .fini hook. */
static const char *new_instance(void)
{
	cur_instance = xasprintf("tc%d", (int)(getpid() % 1000000));
	make_dir();
	return cur_instance;
}

/* `up N`: its last stdout line, which must be the hostfile. */
static char *up(int n)
{
	char *out = xasprintf("%s/up.out", cur_dir), *text, *last, nb[16];
	int st;

	snprintf(nb, sizeof(nb), "%d", n);
	st = run_script(cur_instance, out, "up", nb);
	cr_assert_eq(st, 0, "cluster.sh up %d: exit %d", n, st);
	text = mj_slurp(out);
	cr_assert_not_null(text);
	while (*text && text[strlen(text) - 1] == '\n')
		text[strlen(text) - 1] = '\0';
	last = strrchr(text, '\n');
	last = xstrdup(last ? last + 1 : text);
	free(text);
	free(out);
	return last;
}

static char *state_file(const char *name)
{
	return xasprintf("/run/md-cluster/%s/%s", cur_instance, name);
}

struct host_pids {
	int pid1, upid;
	unsigned long long st1, ust;
};

static struct host_pids read_pids(const char *host)
{
	char *rel = xasprintf("pids/%s", host), *p = state_file(rel);
	char *t = mj_slurp(p);
	struct host_pids h = { 0, 0, 0, 0 };

	cr_assert(t && sscanf(t, "%d %llu %d %llu", &h.pid1, &h.st1, &h.upid,
			      &h.ust) == 4, "no pids in %s", p);
	free(t);
	free(p);
	free(rel);
	return h;
}

/* Is pid still the process started at start?  A zombie is gone: this
 * machine's pid 1 reaps the orphaned unshare of a host only minutes
 * later. */
static bool running(int pid, unsigned long long start)
{
	return mj_start_time(pid) == start && mj_proc_state(pid) != 'Z';
}

/* Does the path a + b + c exist? */
static bool exists(const char *a, const char *b, const char *c)
{
	char *p = xasprintf("%s%s%s", a, b, c);
	bool r = access(p, F_OK) == 0;

	free(p);
	return r;
}

/* `ssh -F CONFIG host hostname` prints host. */
static void expect_ssh_answers(const char *host)
{
	char *cfg = state_file("ssh_config");
	char *out = xasprintf("%s/ssh.out", cur_dir), *text;
	char *argv[] = { (char *)"/usr/bin/ssh", (char *)"-F", cfg,
			 (char *)host, (char *)"hostname", NULL };
	int st = rp_wait_status(rp_spawn(argv, NULL, out, "/dev/null"), 30000);

	text = mj_slurp(out);
	cr_expect(st != -1 && WIFEXITED(st) && !WEXITSTATUS(st),
		  "ssh %s failed", host);
	cr_expect(text && !strncmp(text, host, strlen(host)),
		  "ssh %s hostname said '%s'", host, text);
	free(text);
	free(out);
	free(cfg);
}

/* Nothing of the instance is left: state, namespaces, links, daemons. */
static void expect_all_gone(const struct host_pids *hp, int n)
{
	cr_expect(!exists("/run/md-cluster/", cur_instance, ""),
		  "state dir left");
	cr_expect(!exists("/sys/class/net/mdc-", cur_instance, ""),
		  "bridge left");
	{
		char *hosts = mj_slurp("/etc/hosts");
		char *tag = xasprintf("# md-cluster:%s\n", cur_instance);

		cr_expect(hosts && !strstr(hosts, tag), "/etc/hosts keeps %s",
			  tag);
		free(tag);
		free(hosts);
	}
	for (int i = 0; i < n; i++) {
		char host[16], idx[16];

		snprintf(host, sizeof(host), "node%d", i + 1);
		snprintf(idx, sizeof(idx), "-node%d", i + 1);
		cr_expect(!exists("/run/netns/mdc-", cur_instance, idx),
			  "namespace of %s left", host);
		snprintf(idx, sizeof(idx), ".%d", i + 1);
		cr_expect(!exists("/sys/class/net/mdc-", cur_instance, idx),
			  "veth of %s left", host);
		cr_expect(!running(hp[i].pid1, hp[i].st1),
			      "sshd of %s (pid %d) left", host, hp[i].pid1);
		cr_expect(!running(hp[i].upid, hp[i].ust),
			      "unshare of %s (pid %d) left", host, hp[i].upid);
	}
}

TestSuite(e2e_cluster_script, .fini = cl_fini, .timeout = 300);

Test(e2e_cluster_script, up_twice_is_idempotent_and_down_removes_everything)
{
	struct host_pids a[2], b[2];
	char *hf1, *hf2;

	need_cluster_rights();
	new_instance();
	hf1 = up(2);
	cr_expect(exists(hf1, "", ""), "hostfile %s missing", hf1);
	{
		char *hosts = mj_slurp("/etc/hosts");
		char *tag = xasprintf("\tnode2\t# md-cluster:%s\n", cur_instance);

		cr_expect(hosts && strstr(hosts, tag), "/etc/hosts lacks %s",
			  tag);
		free(tag);
		free(hosts);
	}
	a[0] = read_pids("node1");
	a[1] = read_pids("node2");
	hf2 = up(2);
	cr_expect_str_eq(hf2, hf1);
	b[0] = read_pids("node1");
	b[1] = read_pids("node2");
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(b[i].pid1, a[i].pid1, "second up restarted node%d",
			     i + 1);
		cr_expect(running(a[i].pid1, a[i].st1),
			     "node%d's sshd is gone", i + 1);
	}
	expect_ssh_answers("node1");
	expect_ssh_answers("node2");
	cr_assert_eq(run_script(cur_instance, "/dev/null", "down", NULL), 0);
	expect_all_gone(a, 2);
	cr_expect_eq(run_script(cur_instance, "/dev/null", "down", NULL), 0,
		     "a second down fails");
	free(cur_instance);
	cur_instance = NULL;
	free(hf1);
	free(hf2);
}

Test(e2e_cluster_script, up_after_a_crash_cleans_up_and_starts_again)
{
	struct host_pids a[2], b[2];
	char *hf;

	need_cluster_rights();
	new_instance();
	free(up(2));
	a[0] = read_pids("node1");
	a[1] = read_pids("node2");
	/* A crash: node1's pid 1 dies (so does its whole pid namespace). */
	cr_assert_eq(kill(a[0].pid1, SIGKILL), 0);
	hf = up(2);
	b[0] = read_pids("node1");
	b[1] = read_pids("node2");
	for (int i = 0; i < 2; i++) {
		cr_expect_neq(b[i].pid1, a[i].pid1, "node%d not restarted",
			      i + 1);
		cr_expect(running(b[i].pid1, b[i].st1),
			     "node%d's new sshd is not running", i + 1);
		cr_expect(!running(a[i].pid1, a[i].st1),
			      "node%d's old sshd still runs", i + 1);
		cr_expect(!running(a[i].upid, a[i].ust),
			      "node%d's old unshare still runs", i + 1);
	}
	expect_ssh_answers("node1");
	expect_ssh_answers("node2");
	cr_assert_eq(run_script(cur_instance, "/dev/null", "down", NULL), 0);
	expect_all_gone(b, 2);
	free(cur_instance);
	cur_instance = NULL;
	free(hf);
}

/* A second instance beside the run's cluster: own subnet, own node1;
 * its down leaves the run's cluster running. */
Test(e2e_cluster_script, two_instances_do_not_collide)
{
	struct mc_cluster *again = NULL;
	char *why = NULL, *mine, *theirs;
	struct host_pids a[1];

	need_cluster_rights();
	MC_OPEN_OR_SKIP(&cur_cluster);
	new_instance();
	free(up(1));
	a[0] = read_pids("node1");
	mine = state_file("subnet");
	theirs = xasprintf("%s/subnet", cur_cluster->state);
	{
		char *m = mj_slurp(mine), *t = mj_slurp(theirs);

		cr_assert(m && t);
		cr_expect_str_neq(m, t, "both instances on subnet %s", m);
		free(m);
		free(t);
	}
	expect_ssh_answers("node1");
	cr_assert_eq(run_script(cur_instance, "/dev/null", "down", NULL), 0);
	expect_all_gone(a, 1);
	free(cur_instance);
	cur_instance = NULL;
	cr_expect_eq(mc_open(&again, &why), 0, "the run's cluster broke: %s",
		     why);
	for (int i = 0; again && i < again->nhosts; i++)
		cr_expect_eq(again->hosts[i].pid1, cur_cluster->hosts[i].pid1);
	mc_free(again);
	free(why);
	free(mine);
	free(theirs);
}

/* Bad input: one line on stderr naming the problem and the fix, exit 1,
 * nothing made. */
Test(e2e_cluster_script, bad_arguments_get_one_line_naming_the_fix)
{
	static const struct {
		const char *instance, *a1, *a2, *says;
	} cases[] = {
		{ "tcbad", "up", "0", "up needs a host count 1..99" },
		{ "tcbad", "up", "x", "up needs a host count 1..99" },
		{ "Bad-Name", "up", "2", "is not a valid instance name" },
		{ "tcbad", "exec", "node1", "exec needs a host and a command" },
		{ "tcbad", "env", NULL, "is not up: scripts/cluster.sh up N" },
		{ "tcbad", "frob", NULL, "usage: scripts/cluster.sh up N" },
	};

	make_dir();
	cur_fail_expected = true;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = xasprintf("%s/bad%zu", cur_dir, i);
		char *errp = xasprintf("%s.err", out), *err;
		int st = run_script(cases[i].instance, out, cases[i].a1,
				    cases[i].a2);

		err = mj_slurp(errp);
		cr_expect_eq(st, 1, "%s %s: exit %d", cases[i].a1,
			     cases[i].a2 ? cases[i].a2 : "", st);
		cr_expect(err && strstr(err, cases[i].says) &&
			  mj_count_lines(err, "") == 1,
			  "%s %s: stderr '%s'", cases[i].a1,
			  cases[i].a2 ? cases[i].a2 : "", err);
		free(err);
		free(errp);
		free(out);
	}
	cr_expect(access("/run/md-cluster/tcbad", F_OK) != 0,
		  "state made for bad input");
}
