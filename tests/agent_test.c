/*
 * agent_test.c - the parts of many-host collection that need no second
 * host: merging partial snapshots, and the launcher's command line taken
 * from the job's own settings.  The real agents are in e2e_agents_test.c.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/launch.h"
#include "md.h"
#include "slurm.h"
#include "snap.h"
#include "support/snapbuild.h"

static char *written(const struct snap *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	return text;
}

/* The part of s that host `keep` (ranks r with r % 2 == keep) would have
 * sent: its ranks as read, the others "remote". */
static struct snap *part_of(const struct snap *s, int keep)
{
	struct snap *p = snap_new();

	snap_set_nranks(p, s->nranks);
	/* Interned in another order than the whole: the merge renumbers. */
	for (int i = s->ncomms - 1; i >= 0; i--)
		snap_comm_intern(p, s->comms[i].id, s->comms[i].name,
				 s->comms[i].size, s->comms[i].group);
	for (int i = 0; i < s->nranks; i++) {
		if (i % 2 == keep) {
			snap_copy_rank(p, s, i);
		} else {
			p->ranks[i].state = SNAP_RANK_REMOTE;
			p->ranks[i].reason = snap_str(p, "not given to this agent");
		}
	}
	return p;
}

Test(agent, merging_partial_snapshots_gives_the_whole_one)
{
	struct snap *whole = sb_ring(6), *a, *b, *m;
	int row[3] = { 4, 2, 0 };
	char *x, *y;

	/* sb_comm makes ranks 4, 2, 0 members of "row". */
	sb_comm(whole, 7, "row", 3, row);
	a = part_of(whole, 0);
	b = part_of(whole, 1);
	cr_assert_neq(a->comms[0].id, whole->comms[0].id,
		      "the parts must number communicators differently");
	m = snap_new();
	m->looks = whole->looks;
	m->interval_ms = whole->interval_ms;
	snap_set_nranks(m, whole->nranks);
	for (int i = 0; i < whole->nranks; i++)
		snap_copy_rank(m, i % 2 ? b : a, i);
	x = written(whole);
	y = written(m);
	cr_expect_str_eq(y, x);
	free(x);
	free(y);
	snap_free(a);
	snap_free(b);
	snap_free(m);
	snap_free(whole);
}

/* The ranks r of s with r % 3 == keep as a partial snapshot: only those
 * ranks, numbered globally, through the file format (written and read
 * back, as they come from an agent). */
static struct snap *held_part_of(const struct snap *s, int keep)
{
	struct snap *p = snap_new(), *back;
	char *text;
	FILE *f;
	int n = 0;

	for (int i = keep; i < s->nranks; i += 3)
		n++;
	snap_set_nranks(p, n);
	p->job_nranks = s->nranks;
	for (int i = s->ncomms - 1; i >= 0; i--)
		snap_comm_intern(p, s->comms[i].id, s->comms[i].name,
				 s->comms[i].size, s->comms[i].group);
	for (int k = 0, i = keep; i < s->nranks; i += 3, k++) {
		struct snap one = *s;

		/* snap_copy_rank copies rank i to index i: copy through a
		 * snapshot whose ranks[] starts at i. */
		one.ranks = &s->ranks[i - k];
		one.nranks = s->nranks - (i - k);
		snap_copy_rank(p, &one, k);
		p->ranks[k].rank = i;
	}
	text = written(p);
	cr_assert(strstr(text, "\"held\":"), "%s", text);
	f = fmemopen(text, strlen(text), "r");
	cr_assert_eq(snap_read(f, "part", &back), 0);
	fclose(f);
	free(text);
	snap_free(p);
	cr_assert_eq(back->job_nranks, s->nranks);
	cr_assert_eq(back->nranks, n);
	for (int k = 0; k < n; k++)
		cr_assert_eq(back->ranks[k].rank, keep + 3 * k);
	return back;
}

Test(agent, partial_snapshots_of_held_ranks_merge_into_the_whole_one)
{
	struct snap *whole = sb_ring(7), *m, *p;
	int row[3] = { 5, 2, 0 };
	char *x, *y;

	sb_comm(whole, 7, "row", 3, row);
	m = snap_new();
	m->looks = whole->looks;
	m->interval_ms = whole->interval_ms;
	snap_set_nranks(m, whole->nranks);
	for (int keep = 2; keep >= 0; keep--) {
		p = held_part_of(whole, keep);
		cr_assert_eq(snap_merge_part(m, p), 0);
		snap_free(p);
	}
	x = written(whole);
	y = written(m);
	cr_expect_str_eq(y, x);
	free(x);
	free(y);
	snap_free(m);
	snap_free(whole);
}

Test(agent, partial_snapshot_of_another_job_size_is_not_merged)
{
	struct snap *whole = sb_ring(6), *p = held_part_of(whole, 1), *m;

	m = snap_new();
	snap_set_nranks(m, 5);
	cr_expect_eq(snap_merge_part(m, p), -MD_E_INPUT);
	snap_free(m);
	snap_free(p);
	snap_free(whole);
}

static int read_text(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct snap *s = NULL;
	int rc = snap_read(f, "part", &s);

	fclose(f);
	snap_free(s);
	return rc;
}

Test(agent, partial_snapshot_with_ranks_out_of_order_or_too_many_is_rejected)
{
	static const char head[] =
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"nranks\":8,\"held\":2,\"ncomms\":0}\n";
	char *ok = xasprintf("%s{\"rank\":1}\n{\"rank\":6}\n", head);
	char *back = xasprintf("%s{\"rank\":6}\n{\"rank\":1}\n", head);
	char *more = xasprintf("%s{\"rank\":1}\n{\"rank\":2}\n"
			       "{\"rank\":3}\n", head);
	char *fewer = xasprintf("%s{\"rank\":1}\n", head);

	cr_expect_eq(read_text(ok), 0);
	cr_expect_eq(read_text(back), -MD_E_INPUT);
	cr_expect_eq(read_text(more), -MD_E_INPUT);
	cr_expect_eq(read_text(fewer), -MD_E_INPUT);
	free(ok);
	free(back);
	free(more);
	free(fewer);
}

/* A stand-in for the job's mpirun: its command line carries --mca
 * settings, its environment OMPI_MCA_* ones. */
/* A stand-in for a job's starter: sleeps with envp (and mpirun's
 * btl_tcp_if_include setting in its command line). */
static pid_t fake_starter(char *const envp[])
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execle("/bin/sh", "sh", "-c", "sleep 30; true", "--mca",
		       "btl_tcp_if_include", "10.77.0.0/24", (char *)NULL, envp);
		_exit(127);
	}
	usleep(100000);
	return pid;
}

static pid_t fake_mpirun(const char *rsh_env)
{
	static char oob[] = "OMPI_MCA_oob_tcp_if_include=10.77.0.0/24",
		    home[] = "HOME=/nowhere";
	char env1[256];
	char *envp[] = { env1, oob, home, NULL };

	snprintf(env1, sizeof(env1), "OMPI_MCA_plm_rsh_agent=%s", rsh_env);
	return fake_starter(envp);
}

/* The same inside a Slurm allocation. */
static pid_t fake_mpirun_in_slurm(void)
{
	static char job[] = "SLURM_JOB_ID=4242",
		    rsh[] = "OMPI_MCA_plm_rsh_agent=ssh";
	char *envp[] = { job, rsh, NULL };

	return fake_starter(envp);
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static char *joined(char **v)
{
	char *out = xstrdup("");

	for (int i = 0; v && v[i]; i++) {
		char *n = xasprintf("%s%s%s", out, i ? " " : "", v[i]);

		free(out);
		out = n;
	}
	return out;
}

/* The launcher o sets up for job (which then ends) into *l, and the
 * command line of the agent for host, as one string (heap). */
static char *agent_line(const struct ag_opts *o, pid_t job, const char *host,
			struct ln_ctx *l)
{
	char **argv, *text;

	cr_assert_eq(ln_setup(o, job, "/usr/bin/orterun", l), 0);
	end(job);
	argv = ln_argv(l, host);
	text = joined(argv);
	ln_argv_free(argv);
	return text;
}

Test(agent, ssh_launcher_uses_the_jobs_plm_rsh_agent_in_batch_mode)
{
	struct ag_opts o = { .launcher = AG_LAUNCH_AUTO,
			     .agent = "/opt/md/bin/mpi-deadlock" };
	pid_t job = fake_mpirun("ssh -F /etc/md-test/ssh_config");
	struct ln_ctx l;
	char *text = agent_line(&o, job, "node2", &l);

	cr_expect_eq(l.launcher, AG_LAUNCH_SSH);
	cr_expect_str_eq(l.rsh_from, "the job's OMPI_MCA_plm_rsh_agent");
	cr_expect_str_eq(text, "ssh -F /etc/md-test/ssh_config -o BatchMode=yes "
			       "-T node2 '/opt/md/bin/mpi-deadlock' 'agent'");
	free(text);
	ln_free(&l);
}

Test(agent, rsh_option_wins_and_is_not_given_ssh_options)
{
	struct ag_opts o = { .launcher = AG_LAUNCH_SSH, .rsh = "/x/myrsh -q",
			     .agent = "/a b/mpi-deadlock" };
	struct ln_ctx l;
	char *text = agent_line(&o, fake_mpirun("ssh : rsh"), "node3", &l);

	cr_expect_str_eq(text, "/x/myrsh -q node3 '/a b/mpi-deadlock' 'agent'");
	free(text);
	ln_free(&l);
}

Test(agent, mpirun_launcher_is_the_jobs_own_with_its_settings)
{
	struct ag_opts o = { .launcher = AG_LAUNCH_MPIRUN,
			     .agent = "/opt/md/bin/mpi-deadlock" };
	struct ln_ctx l;
	char *text = agent_line(&o, fake_mpirun("ssh"), "node1", &l), *want;

	want = xasprintf("/usr/bin/orterun --mca btl_tcp_if_include "
			 "10.77.0.0/24 %s--host node1 -np 1 "
			 "/opt/md/bin/mpi-deadlock agent",
			 geteuid() == 0 ? "--allow-run-as-root " : "");
	cr_expect_str_eq(text, want);
	cr_expect_not_null(l.env);
	free(want);
	want = joined(l.env);
	cr_expect_str_eq(want, "OMPI_MCA_plm_rsh_agent=ssh "
			       "OMPI_MCA_oob_tcp_if_include=10.77.0.0/24");
	free(want);
	free(text);
	ln_free(&l);
}

Test(agent, auto_picks_srun_into_the_job_inside_a_slurm_allocation)
{
	struct ag_opts o = { .launcher = AG_LAUNCH_AUTO,
			     .agent = "/opt/md/bin/mpi-deadlock" };
	struct ln_ctx l;
	char *text = agent_line(&o, fake_mpirun_in_slurm(), "node2", &l);

	cr_expect_eq(l.launcher, AG_LAUNCH_SRUN);
	cr_expect_str_eq(ln_name(&l), "srun");
	cr_expect_str_eq(text, "srun --overlap --jobid=4242 --nodelist node2 "
			       "--nodes=1 --ntasks=1 --mpi=none "
			       "--job-name=mpi-deadlock-agent --quiet "
			       "/opt/md/bin/mpi-deadlock agent");
	free(text);
	ln_free(&l);
}

/* The job's SLURM_CONF reaches the agents' srun, not our environment. */
Test(agent, slurm_conf_of_the_job_goes_to_the_srun_only)
{
	static char job[] = "SLURM_JOB_ID=4242",
		    conf[] = "SLURM_CONF=/etc/slurm-job/slurm.conf";
	char *envp[] = { job, conf, NULL };
	struct ag_opts o = { .launcher = AG_LAUNCH_AUTO,
			     .agent = "/opt/md/bin/mpi-deadlock" };
	struct ln_ctx l;
	pid_t pid;
	bool found = false;

	unsetenv("SLURM_CONF");
	pid = fake_starter(envp);
	cr_assert_eq(ln_setup(&o, pid, "/usr/bin/orterun", &l), 0);
	end(pid);
	cr_expect_eq(l.launcher, AG_LAUNCH_SRUN);
	for (int i = 0; l.env && l.env[i]; i++)
		found |= !strcmp(l.env[i], conf);
	cr_expect(found, "SLURM_CONF is not in the launcher's environment");
	cr_expect_null(getenv("SLURM_CONF"), "our environment changed");
	ln_free(&l);
}

/* An srun from inside a step: the step's SLURM_* are left out of the
 * child's environment, SLURM_CONF and the rest kept, ours untouched. */
Test(agent, srun_child_environment_drops_the_steps_slurm_settings)
{
	char over[] = "MD_TEST_X=new", add[] = "MD_SLURM_HOP=node1";
	char *set[] = { over, add, NULL }, **env;
	int ntasks = 0, conf = 0, x = 0, hop = 0, path = 0;

	setenv("SLURM_NTASKS", "4", 1);
	setenv("SLURM_CONF", "/etc/slurm/slurm.conf", 1);
	setenv("MD_TEST_X", "old", 1);
	env = sl_child_env(set, true);
	for (int i = 0; env[i]; i++) {
		ntasks += !strncmp(env[i], "SLURM_NTASKS=", 13);
		conf += !strcmp(env[i], "SLURM_CONF=/etc/slurm/slurm.conf");
		x += !strncmp(env[i], "MD_TEST_X=", 10);
		x += 10 * !strcmp(env[i], "MD_TEST_X=new");
		hop += !strcmp(env[i], "MD_SLURM_HOP=node1");
		path += !strncmp(env[i], "PATH=", 5);
	}
	free(env);
	cr_expect_eq(ntasks, 0);
	cr_expect_eq(conf, 1);
	cr_expect_eq(x, 11, "MD_TEST_X once, the new value");
	cr_expect_eq(hop, 1);
	cr_expect_eq(path, !!getenv("PATH"));
	cr_expect_str_eq(getenv("SLURM_NTASKS"), "4", "ours is untouched");
	env = sl_child_env(NULL, false);
	ntasks = 0;
	for (int i = 0; env[i]; i++)
		ntasks += !strcmp(env[i], "SLURM_NTASKS=4");
	free(env);
	cr_expect_eq(ntasks, 1, "only srun's child loses them");
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_CONF");
	unsetenv("MD_TEST_X");
}

Test(agent, srun_launcher_outside_slurm_is_refused_with_the_fix)
{
	pid_t job = fake_mpirun("ssh");
	struct ag_opts o = { .launcher = AG_LAUNCH_SRUN,
			     .agent = "/opt/md/bin/mpi-deadlock" };
	struct ln_ctx l;
	int rc;

	/* Not srun, and no SLURM_JOB_ID in its environment. */
	rc = ln_setup(&o, job, "/usr/bin/orterun", &l);
	end(job);
	cr_expect_eq(rc, -MD_E_INPUT);
}

Test(agent, open_mpi_alternatives_take_the_first_remote_shell)
{
	char **v = ln_split("  ssh -x : rsh");
	char *t = joined(v);

	cr_expect_str_eq(t, "ssh -x");
	free(t);
	ln_argv_free(v);
}

/* Run `sh -c cmd` and return its stdout (heap) and exit status. */
static char *sh_out(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *text = NULL;
	size_t len = 0;

	cr_assert_not_null(p);
	if (getdelim(&text, &len, 0, p) < 0) {
		free(text);
		text = xstrdup("");
	}
	*status = pclose(p);
	return text;
}

Test(agent, agent_refuses_a_front_end_of_another_version)
{
	const char *bin = getenv("MD_BIN");
	char *cmd, *out, *want;
	int st;

	if (!bin)
		cr_skip_test("MD_BIN is not set (run through make)");
	cmd = xasprintf("printf 'hello 1 0.0.9 1\\n' | %s agent 2>/dev/null",
			bin);
	out = sh_out(cmd, &st);
	cr_expect_eq(WEXITSTATUS(st), 3);
	want = xasprintf("refused agent is mpi-deadlock %s (protocol %d, "
			 "snapshot %d)\n", MD_VERSION, AG_PROTO, SNAP_VERSION);
	cr_expect(strstr(out, want), "%s", out);
	cr_expect(!strncmp(out, AG_MAGIC " ", strlen(AG_MAGIC) + 1), "%s", out);
	free(want);
	free(out);
	free(cmd);
}

Test(agent, agent_ends_when_its_input_closes_before_any_look)
{
	const char *bin = getenv("MD_BIN");
	char *cmd, *out;
	int st;

	if (!bin)
		cr_skip_test("MD_BIN is not set (run through make)");
	cmd = xasprintf("printf 'hello 1 %s %d\\njob 2 1\\nrank 0 %d /bin/sh\\n"
			"go\\n' | %s agent 2>&1 >/dev/null", MD_VERSION,
			SNAP_VERSION, (int)getpid(), bin);
	out = sh_out(cmd, &st);
	cr_expect_eq(WEXITSTATUS(st), 3);
	cr_expect(strstr(out, "the input closed: every rank was detached and "
			      "runs on"), "%s", out);
	free(out);
	free(cmd);
}

/* Read a snapshot's text with opts. */
static struct snap *read_with(const struct snap *s, struct snap_read_opts *o)
{
	char *text = written(s);
	FILE *f = fmemopen(text, strlen(text), "r");
	struct snap *back = NULL;

	cr_assert_eq(snap_read_opts(f, "part", o, &back), 0);
	fclose(f);
	free(text);
	return back;
}

Test(agent, parts_read_with_shared_groups_share_a_big_group_and_merge_the_same)
{
	struct snap *whole = sb_ring(1024), *m = snap_new(), *p[3];
	struct snap_read_opts o = { .groups = snap_groups_new() };
	char *x, *y;

	snap_set_nranks(m, whole->nranks);
	m->looks = whole->looks;
	m->interval_ms = whole->interval_ms;
	for (int keep = 0; keep < 3; keep++) {
		struct snap *held = held_part_of(whole, keep);

		/* The third is read without the groups: its own array. */
		p[keep] = read_with(held, keep < 2 ? &o : NULL);
		snap_free(held);
		cr_assert_eq(p[keep]->comms[0].size, 1024);
	}
	snap_groups_free(o.groups);
	cr_expect_eq(p[0]->comms[0].group, p[1]->comms[0].group,
		     "the second part expanded \"0-1023\" again");
	cr_expect_neq(p[0]->comms[0].group, p[2]->comms[0].group);
	cr_expect_eq(memcmp(p[0]->comms[0].group, p[2]->comms[0].group,
			    1024 * sizeof(int)), 0);
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(snap_merge_part(m, p[k]), 0);
		cr_expect_eq(p[k]->ranks[0].nops, 0, "moved, not copied");
		snap_free(p[k]);
	}
	x = written(whole);
	y = written(m);
	cr_expect_str_eq(y, x);
	free(x);
	free(y);
	snap_free(m);
	snap_free(whole);
}
