/* proctable_test.c - MPIR process table reading on fake targets, and the
 * walk from a rank to mpirun on a real Debian Open MPI job (e2e). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/elfsym.h"
#include "../collector/proctable.h"
#include "md.h"
#include "support/tracee.h"

struct fake_sym {
	const char *name;
	uint64_t addr;
};

/* A pt_lookup_fn over a NULL-terminated table of fake_sym. */
static int fake_lookup(void *ctx, struct tgt *t, const char *name,
		       uint64_t *addr)
{
	(void)t;
	for (const struct fake_sym *s = ctx; s->name; s++) {
		if (!strcmp(s->name, name)) {
			*addr = s->addr;
			return 0;
		}
	}
	return -MD_E_NOSYM;
}

static const struct fake_sym starter_syms[] = {
	{ "MPIR_debug_state", 0x10000 },
	{ "MPIR_proctable_size", 0x10004 },
	{ "MPIR_proctable", 0x10008 },
	{ NULL, 0 },
};

/* Lay out a starter whose table has n entries at 0x20000 and strings at
 * 0x30000, as orterun does (24-byte entries). */
static struct tgt *fake_starter_at(int pid, int state, int n,
				   const char **hosts, const char **exes,
				   const int *pids)
{
	struct tgt *t = tgt_fake_new(pid);
	unsigned char table[24 * 8] = { 0 };
	char strings[1024] = { 0 };
	uint64_t table_addr = 0x20000, off = 0;

	tgt_fake_add_region(t, 0x10000, &state, 4);
	tgt_fake_add_region(t, 0x10004, &n, 4);
	tgt_fake_add_region(t, 0x10008, &table_addr, 8);
	for (int i = 0; i < n; i++) {
		uint64_t h = 0x30000 + off, e;

		strcpy(strings + off, hosts[i]);
		off += strlen(hosts[i]) + 1;
		e = 0x30000 + off;
		strcpy(strings + off, exes[i]);
		off += strlen(exes[i]) + 1;
		memcpy(table + i * 24, &h, 8);
		memcpy(table + i * 24 + 8, &e, 8);
		memcpy(table + i * 24 + 16, &pids[i], 4);
		/* orterun leaves padding bytes as they were: not zero. */
		memset(table + i * 24 + 20, 0xab, 4);
	}
	if (n > 0)
		tgt_fake_add_region(t, table_addr, table, (size_t)n * 24);
	tgt_fake_add_region(t, 0x30000, strings, off ? off : 1);
	tgt_fake_set_exe(t, "/usr/bin/orterun");
	return t;
}

static struct tgt *fake_starter(int state, int n, const char **hosts,
				const char **exes, const int *pids)
{
	return fake_starter_at(4242, state, n, hosts, exes, pids);
}

Test(proctable, reads_three_rank_table_with_hosts_exes_and_pids)
{
	const char *hosts[] = { "nodeA", "nodeB.example.org", "nodeC" };
	const char *exes[] = { "/x/./a", "/x/./b", "/x/./c" };
	int pids[] = { 101, 202, 303 };
	struct tgt *t = fake_starter(1, 3, hosts, exes, pids);
	struct pt_job *j = NULL;

	cr_assert_eq(pt_read_table(t, fake_lookup, (void *)starter_syms, &j),
		     0);
	cr_assert_eq(j->nranks, 3);
	cr_expect_eq(j->starter_pid, 4242);
	cr_expect_str_eq(j->starter_exe, "/usr/bin/orterun");
	cr_expect_eq(j->given_rank, -1);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(j->procs[i].rank, i);
		cr_expect_eq(j->procs[i].pid, pids[i]);
		cr_expect_str_eq(j->procs[i].host, hosts[i]);
		/* Remote (not our host name): the table's path is kept. */
		cr_expect_str_eq(j->procs[i].exe, exes[i]);
		cr_expect(!j->procs[i].local);
	}
	pt_job_free(j);
	tgt_free(t);
}

Test(proctable, local_rank_gets_exe_from_its_process)
{
	const char *hosts[] = { "localhost" };
	const char *exes[] = { "/some/./where" };
	int pids[] = { 5151 };
	struct pt_job *j = NULL;
	struct tgt *t, *rank = tgt_fake_new(5151);

	tgt_fake_set_exe(rank, "/some/where");
	t = fake_starter(1, 1, hosts, exes, pids);
	tgt_fake_link(t, rank);
	cr_assert_eq(pt_read_table(t, fake_lookup, (void *)starter_syms, &j),
		     0);
	cr_expect(j->procs[0].local);
	cr_expect_str_eq(j->procs[0].exe, "/some/where");
	pt_job_free(j);
	tgt_free(t);
	tgt_free(rank);
}

static void expect_not_ready(int state, int n)
{
	const char *hosts[] = { "h" }, *exes[] = { "e" };
	int pids[] = { 1 };
	struct tgt *t = fake_starter(state, n, hosts, exes, pids);
	struct tr_capture cap;
	struct pt_job *j = NULL;
	char *err;
	int r;

	tr_stderr_begin(&cap);
	r = pt_read_table(t, fake_lookup, (void *)starter_syms, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOTREADY, "state %d size %d: %d", state, n, r);
	cr_expect_null(j);
	cr_expect_not_null(strstr(err, "not yet past MPI_Init: try again"),
			   "stderr: %s", err);
	free(err);
	tgt_free(t);
}

Test(proctable, not_ready_when_debug_state_is_zero)
{
	expect_not_ready(0, 1);
}

Test(proctable, not_ready_when_table_is_empty)
{
	expect_not_ready(1, 0);
}

Test(proctable, missing_mpir_symbols_say_not_an_open_mpi_4_starter)
{
	struct tgt *t = tgt_fake_new(9);
	struct fake_sym none[] = { { NULL, 0 } };
	struct tr_capture cap;
	struct pt_job *j = NULL;
	char *err;
	int r;

	tr_stderr_begin(&cap);
	r = pt_read_table(t, fake_lookup, none, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOSYM);
	cr_expect_not_null(strstr(err, "no MPIR_proctable"), "stderr: %s", err);
	free(err);
	tgt_free(t);
}

Test(proctable, unreadable_table_entries_fail_with_fault)
{
	const char *hosts[] = { "h", "h" }, *exes[] = { "e", "e" };
	int pids[] = { 1, 2 };
	struct tgt *t = fake_starter(1, 2, hosts, exes, pids);
	int big = 3;	/* one entry more than the memory holds */
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	tgt_fake_add_region(t, 0x0ff00, &big, 4);
	{
		struct fake_sym syms[] = {
			{ "MPIR_debug_state", 0x10000 },
			{ "MPIR_proctable_size", 0x0ff00 },
			{ "MPIR_proctable", 0x10008 },
			{ NULL, 0 },
		};
		tr_stderr_begin(&cap);
		r = pt_read_table(t, fake_lookup, syms, &j);
		err = tr_stderr_end(&cap);
	}
	cr_expect_eq(r, -MD_E_FAULT);
	cr_expect_null(j);
	cr_expect_not_null(strstr(err, "MPIR_proctable (3 entries"),
			   "stderr: %s", err);
	free(err);
	tgt_free(t);
}

Test(proctable, host_match_accepts_localhost_and_short_names)
{
	cr_expect(pt_host_is_local("node7", "node7"));
	cr_expect(pt_host_is_local("localhost", "node7"));
	cr_expect(pt_host_is_local("node7.cluster", "node7"));
	cr_expect(pt_host_is_local("node7", "node7.cluster.org"));
	cr_expect(!pt_host_is_local("node70", "node7"));
	cr_expect(!pt_host_is_local("node8", "node7.cluster"));
	cr_expect(!pt_host_is_local("", "node7"));
}

Test(proctable, acquire_of_missing_pid_says_no_process)
{
	struct fake_sym none[] = { { NULL, 0 } };
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	tr_stderr_begin(&cap);
	r = pt_acquire(0x7ffffff0, fake_lookup, none, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOSUCH);
	cr_expect_not_null(strstr(err, "no process with pid 2147483632"),
			   "stderr: %s", err);
	free(err);
}

Test(proctable, acquire_of_non_mpi_process_names_it_and_the_fix)
{
	struct fake_sym none[] = { { NULL, 0 } };
	struct tr_child c;
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err, want[128];
	int r;

	cr_assert_eq(tr_child_start(&c, 0), 0);
	tr_stderr_begin(&cap);
	r = pt_acquire(c.pid, fake_lookup, none, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOTMPI);
	snprintf(want, sizeof(want), "pid %d (md-tests) is not an MPI starter",
		 c.pid);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	cr_expect_not_null(strstr(err, "pgrep"), "stderr: %s", err);
	free(err);
	tr_child_end(&c);
}

Test(proctable, launcher_without_mpir_is_named_as_open_mpi_5)
{
	struct fake_sym none[] = { { NULL, 0 } };
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err, want[64];
	pid_t pid;
	int r;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "prterun");
		for (;;)
			pause();
	}
	usleep(100 * 1000);
	tr_stderr_begin(&cap);
	r = pt_acquire(pid, fake_lookup, none, &j);
	err = tr_stderr_end(&cap);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect_eq(r, -MD_E_NOTMPI);
	snprintf(want, sizeof(want), "pid %d (prterun) has no MPIR", pid);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	cr_expect_not_null(strstr(err, "Open MPI 5"), "stderr: %s", err);
	free(err);
}

/* ---- the walk up to the starter, on fake processes ---- */

/* Symbols by process: 300 is a rank, 100 the starter, the rest none. */
static int walk_lookup(void *ctx, struct tgt *t, const char *name,
		       uint64_t *addr)
{
	static const struct fake_sym rank_syms[] = {
		{ "ompi_mpi_comm_world", 0x5000 },
		{ NULL, 0 },
	};

	(void)ctx;
	if (tgt_pid(t) == 300)
		return fake_lookup((void *)rank_syms, t, name, addr);
	if (tgt_pid(t) == 100)
		return fake_lookup((void *)starter_syms, t, name, addr);
	return -MD_E_NOSYM;
}

/*
 * A fake rank 300 under middle (pid 200, named mid) under a starter 100
 * named top whose MPIR table holds the two ranks pids (hosts "h", exes
 * "a", the given rank being the one of pid 300): the walk up from the
 * rank, into *j.  The fakes are freed.
 */
static int walk_chain(struct tgt *middle, const char *mid, const char *top,
		      const int pids[2], pt_lookup_fn lookup,
		      struct pt_job **j)
{
	const char *hosts[] = { "h", "h" }, *exes[] = { "a", "a" };
	struct tgt *rank = tgt_fake_new(300);
	struct tgt *starter = fake_starter_at(100, 1, 2, hosts, exes, pids);
	int r;

	tgt_fake_set_stat(rank, 'S', 200, "ring");
	tgt_fake_set_stat(middle, 'S', 100, mid);
	tgt_fake_set_stat(starter, 'S', 1, top);
	tgt_fake_link(rank, middle);
	tgt_fake_link(middle, starter);
	r = pt_acquire_from(rank, lookup, NULL, j);
	tgt_free(rank);
	tgt_free(middle);
	tgt_free(starter);
	return r;
}

Test(proctable, walk_from_a_fake_rank_goes_up_through_orted_to_mpirun)
{
	int pids[] = { 301, 300 };
	struct pt_job *j = NULL;

	cr_assert_eq(walk_chain(tgt_fake_new(200), "orted", "mpirun", pids,
				walk_lookup, &j), 0);
	cr_expect_eq(j->starter_pid, 100);
	cr_expect_eq(j->given_pid, 300);
	cr_expect_eq(j->given_rank, 1);
	cr_expect_eq(j->nranks, 2);
	pt_job_free(j);
}

/* 200 carries an empty MPIR table (state 0), as a launcher's daemon
 * linked with the launcher's code may. */
static int hydra_lookup(void *ctx, struct tgt *t, const char *name,
			uint64_t *addr)
{
	if (tgt_pid(t) == 200)
		return fake_lookup((void *)starter_syms, t, name, addr);
	return walk_lookup(ctx, t, name, addr);
}

/* MPICH: rank -> hydra_pmi_proxy -> mpiexec (doc/mpich.md). */
Test(proctable, walk_from_a_fake_rank_goes_up_through_hydra_proxy_to_mpiexec)
{
	int pids[] = { 300, 301 };
	struct tgt *proxy = fake_starter_at(200, 0, 0, NULL, NULL, NULL);
	struct pt_job *j = NULL;

	cr_assert_eq(walk_chain(proxy, "hydra_pmi_proxy", "mpiexec.hydra", pids,
				hydra_lookup, &j), 0);
	cr_expect_eq(j->starter_pid, 100);
	cr_expect_eq(j->given_rank, 0);
	cr_expect_eq(j->nranks, 2);
	pt_job_free(j);
}

/*
 * Debian's MPICH: mpiexec.mpich (100) without any MPIR symbol, one
 * hydra_pmi_proxy (200), ranks 300.. with PMI_RANK/PMI_SIZE and no MPIR
 * symbol either (no debuginfo).  nlocal of size ranks are here.
 */
struct hyjob {
	struct tgt *mpiexec, *proxy, *ranks[4];
	int n;
};

static void hyjob_make(struct hyjob *h, int nlocal, int size)
{
	char env[32];

	h->n = nlocal;
	h->mpiexec = tgt_fake_new(100);
	h->proxy = tgt_fake_new(200);
	tgt_fake_set_stat(h->mpiexec, 'S', 1, "mpiexec.mpich");
	tgt_fake_set_stat(h->proxy, 'S', 100, "hydra_pmi_proxy");
	tgt_fake_link(h->mpiexec, h->proxy);
	tgt_fake_link(h->proxy, h->mpiexec);
	/* The proxy starts them in reverse: the order must not matter. */
	for (int i = 0; i < nlocal; i++) {
		struct tgt *r = tgt_fake_new(300 + i);

		tgt_fake_set_stat(r, 'S', 200, "ring");
		tgt_fake_set_exe(r, "/tmp/ring");
		snprintf(env, sizeof(env), "PMI_RANK=%d", nlocal - 1 - i);
		tgt_fake_setenv(r, "PATH=/bin");
		tgt_fake_setenv(r, env);
		snprintf(env, sizeof(env), "PMI_SIZE=%d", size);
		tgt_fake_setenv(r, env);
		tgt_fake_link(r, h->proxy);
		tgt_fake_link(h->proxy, r);
		h->ranks[i] = r;
	}
}

static void hyjob_free(struct hyjob *h)
{
	for (int i = 0; i < h->n; i++)
		tgt_free(h->ranks[i]);
	tgt_free(h->proxy);
	tgt_free(h->mpiexec);
}

static int no_symbols(void *ctx, struct tgt *t, const char *name,
		      uint64_t *addr)
{
	(void)ctx;
	(void)t;
	(void)name;
	(void)addr;
	return -MD_E_NOSYM;
}

Test(proctable, hydra_without_table_finds_ranks_under_its_proxy_by_pmi_rank)
{
	struct hyjob h;
	struct pt_job *j = NULL;

	hyjob_make(&h, 3, 3);
	cr_assert_eq(pt_acquire_from(h.mpiexec, no_symbols, NULL, &j), 0);
	cr_expect_eq(j->starter_pid, 100);
	cr_expect_eq(j->nranks, 3);
	for (int r = 0; r < 3; r++) {
		cr_expect_eq(j->procs[r].rank, r);
		cr_expect_eq(j->procs[r].pid, 302 - r, "rank %d: pid %d", r,
			     j->procs[r].pid);
		cr_expect(j->procs[r].local);
		cr_expect_str_eq(j->procs[r].exe, "/tmp/ring");
	}
	pt_job_free(j);
	hyjob_free(&h);
}

Test(proctable, hydra_without_table_from_a_rank_goes_up_through_the_proxy)
{
	struct hyjob h;
	struct pt_job *j = NULL;

	hyjob_make(&h, 2, 2);
	cr_assert_eq(pt_acquire_from(h.ranks[0], no_symbols, NULL, &j), 0);
	cr_expect_eq(j->starter_pid, 100);
	cr_expect_eq(j->nranks, 2);
	cr_expect_eq(j->given_pid, 300);
	cr_expect_eq(j->given_rank, 1);
	pt_job_free(j);
	hyjob_free(&h);
}

Test(proctable, hydra_without_table_refuses_ranks_on_other_hosts_and_says_why)
{
	struct hyjob h;
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	hyjob_make(&h, 2, 4);
	tr_stderr_begin(&cap);
	r = pt_acquire_from(h.mpiexec, no_symbols, NULL, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOTMPI);
	cr_expect_null(j);
	cr_expect_not_null(strstr(err, "2 of its 4 ranks run on this host"),
			   "stderr: %s", err);
	cr_expect_not_null(strstr(err, "--enable-debuginfo"), "stderr: %s",
			   err);
	free(err);
	hyjob_free(&h);
}

Test(proctable, walk_from_a_fake_process_outside_any_job_is_not_mpi)
{
	struct tgt *p = tgt_fake_new(500), *shell = tgt_fake_new(400);
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	tgt_fake_set_stat(p, 'S', 400, "sleep");
	tgt_fake_set_stat(shell, 'S', 1, "bash");
	tgt_fake_link(p, shell);
	tr_stderr_begin(&cap);
	r = pt_acquire_from(p, walk_lookup, NULL, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOTMPI);
	cr_expect_not_null(strstr(err, "pid 500 (sleep) is not an MPI starter"),
			   "stderr: %s", err);
	free(err);
	tgt_free(p);
	tgt_free(shell);
}

/* One list each: every name the collector's callers knew (slurm.c's
 * mpirun test on an executable's path, the daemons the walk up passes). */
Test(proctable, launcher_and_daemon_names_are_known_by_comm_and_path)
{
	static const char *const launchers[] = {
		"mpirun", "mpiexec", "orterun", "prterun", "prte", "oshrun",
		"mpiexec.hydra", "/usr/bin/orterun", "/opt/ompi/bin/prterun",
	};

	for (size_t i = 0; i < sizeof(launchers) / sizeof(*launchers); i++)
		cr_expect(pt_is_launcher(launchers[i]), "%s", launchers[i]);
	cr_expect_eq(pt_launcher_mpi("/usr/bin/orterun"), COL_MPI_OPENMPI);
	cr_expect_eq(pt_launcher_mpi("mpiexec.hydra"), COL_MPI_HYDRA);
	cr_expect_eq(pt_launcher_mpi("mpirun"), COL_MPI_EITHER);
	cr_expect_not(pt_is_launcher("srun"), "srun is Slurm's");
	cr_expect_not(pt_is_launcher("/usr/bin/orted"));
	cr_expect_not(pt_is_launcher(NULL));
	cr_expect_eq(pt_daemon_mpi("orted"), COL_MPI_OPENMPI);
	cr_expect_eq(pt_daemon_mpi("prted"), COL_MPI_OPENMPI);
	cr_expect_eq(pt_daemon_mpi("hydra_pmi_proxy"), COL_MPI_HYDRA);
	cr_expect_eq(pt_daemon_mpi("mpirun"), COL_MPI_NONE);
	cr_expect_eq(col_launcher_mpi("/usr/bin/prterun"), COL_MPI_OPENMPI);
}

Test(proctable, starter_under_a_wrapper_is_found_among_the_descendants)
{
	struct tgt *sh = tgt_fake_new(10), *bash = tgt_fake_new(11);
	struct tgt *other = tgt_fake_new(12), *mpirun = tgt_fake_new(13);

	tgt_fake_set_stat(sh, 'S', 1, "sh");
	tgt_fake_set_stat(bash, 'S', 10, "bash");
	tgt_fake_set_stat(other, 'S', 10, "tee");
	tgt_fake_set_stat(mpirun, 'S', 11, "mpirun");
	tgt_fake_link(sh, bash);
	tgt_fake_link(sh, other);
	tgt_fake_link(sh, mpirun);
	tgt_fake_link(bash, mpirun);
	cr_expect_eq(pt_find_starter(sh), 13);
	cr_expect_eq(pt_find_starter(mpirun), 13, "a launcher is its own");
	cr_expect_eq(pt_find_starter(other), 12, "no launcher: the job");
	tgt_free(sh);
	tgt_free(bash);
	tgt_free(other);
	tgt_free(mpirun);
}

/* ---- e2e_proctable: a real Debian Open MPI job ---- */

static struct tr_job job;

static void job_fini(void)
{
	tr_job_end(&job);
}

static void start_nosender(void)
{
	const char *why = tr_job_start(&job, "samples/nosender.c", 3);

	if (why)
		cr_skip_test("%s", why);
}

static struct pt_job *acquire_or_fail(int pid, struct es_cache *ec)
{
	struct pt_job *j = NULL;
	int r = pt_acquire(pid, pt_elfsym_lookup, ec, &j);

	cr_assert_eq(r, 0, "pt_acquire(%d): %s", pid, md_strerror(r));
	return j;
}

Test(e2e_proctable, mpirun_pid_gives_every_rank_with_pid_and_exe,
     .fini = job_fini, .timeout = 90)
{
	struct es_cache *ec = es_cache_new();
	struct pt_job *j;

	start_nosender();
	j = acquire_or_fail(job.mpirun, ec);
	cr_expect_eq(j->starter_pid, job.mpirun);
	cr_expect_eq(j->given_rank, -1);
	cr_expect_not_null(strstr(j->starter_exe ? j->starter_exe : "",
				  "orterun"));
	cr_assert_eq(j->nranks, 3);
	for (int i = 0; i < 3; i++) {
		bool known = false;

		for (int k = 0; k < job.nranks; k++)
			known |= job.ranks[k] == j->procs[i].pid;
		cr_expect(known, "rank %d pid %d is no child of mpirun", i,
			  j->procs[i].pid);
		cr_expect(j->procs[i].local);
		cr_expect_str_eq(j->procs[i].exe, job.exe);
	}
	pt_job_free(j);
	es_cache_free(ec);
}

Test(e2e_proctable, rank_pid_walks_up_to_mpirun, .fini = job_fini,
     .timeout = 90)
{
	struct es_cache *ec = es_cache_new();
	struct pt_job *j;
	pid_t rank_pid;

	start_nosender();
	rank_pid = job.ranks[1];
	j = acquire_or_fail(rank_pid, ec);
	cr_expect_eq(j->starter_pid, job.mpirun);
	cr_expect_eq(j->given_pid, rank_pid);
	cr_assert_geq(j->given_rank, 0);
	cr_expect_eq(j->procs[j->given_rank].pid, rank_pid);
	pt_job_free(j);
	es_cache_free(ec);
	/* Memory reads only: mpirun was never stopped. */
	cr_expect_neq(tr_proc_state(job.mpirun), 't');
}

/*
 * Open MPI's mpirun (100) whose table is still empty (a rank not past
 * MPI_Init), with nlocal of size ranks as its children (300..), each
 * with OMPI_COMM_WORLD_RANK and _SIZE.
 */
static void early_job(struct tgt **mpirun, struct tgt **ranks, int nlocal,
		      int size)
{
	char env[48];

	*mpirun = fake_starter_at(100, 0, 0, NULL, NULL, NULL);
	tgt_fake_set_stat(*mpirun, 'S', 1, "mpirun");
	for (int i = 0; i < nlocal; i++) {
		ranks[i] = tgt_fake_new(300 + i);
		tgt_fake_set_stat(ranks[i], 'S', 100, "app");
		tgt_fake_set_exe(ranks[i], "/tmp/app");
		snprintf(env, sizeof(env), "OMPI_COMM_WORLD_RANK=%d", i);
		tgt_fake_setenv(ranks[i], env);
		snprintf(env, sizeof(env), "OMPI_COMM_WORLD_SIZE=%d", size);
		tgt_fake_setenv(ranks[i], env);
		tgt_fake_link(ranks[i], *mpirun);
		tgt_fake_link(*mpirun, ranks[i]);
	}
}

/* A rank that hangs before MPI_Init keeps the table empty for good: the
 * ranks are found as mpirun's children, and the job says so. */
Test(proctable, empty_table_finds_the_ranks_as_children_of_mpirun)
{
	struct tgt *mpirun, *ranks[3];
	struct pt_job *j = NULL;

	early_job(&mpirun, ranks, 3, 3);
	cr_assert_eq(pt_acquire_from(mpirun, walk_lookup, NULL, &j), 0);
	cr_expect_eq(j->starter_pid, 100);
	cr_expect_eq(j->nranks, 3);
	for (int r = 0; r < 3; r++) {
		cr_expect_eq(j->procs[r].pid, 300 + r);
		cr_expect(j->procs[r].local);
	}
	cr_expect_not_null(j->note);
	cr_expect_not_null(strstr(j->note ? j->note : "", "not past MPI_Init"));
	pt_job_free(j);
	for (int i = 0; i < 3; i++)
		tgt_free(ranks[i]);
	tgt_free(mpirun);
}

/* Some ranks elsewhere (or not started): still "try again". */
Test(proctable, empty_table_with_ranks_missing_is_not_ready)
{
	struct tgt *mpirun, *ranks[2];
	struct pt_job *j = NULL;
	struct tr_capture cap;
	char *err;
	int r;

	early_job(&mpirun, ranks, 2, 3);
	tr_stderr_begin(&cap);
	r = pt_acquire_from(mpirun, walk_lookup, NULL, &j);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOTREADY);
	cr_expect_null(j);
	cr_expect_not_null(strstr(err, "try again"), "stderr: %s", err);
	free(err);
	for (int i = 0; i < 2; i++)
		tgt_free(ranks[i]);
	tgt_free(mpirun);
}
