/*
 * fault_test.c - faults at every phase of a collection, on a real job:
 * the table below has one row per phase (COL_PHASES in collect.h: a new
 * phase gets its row without touching this file) and one column per
 * fault.  The collector's fault-injection hook fires the fault at the
 * start of the phase, the first time the phase comes for the chosen
 * rank; collection takes two looks so that every phase comes once
 * before a look reads the job again.  After each collection every
 * process of the job that still exists must be untraced and in the state
 * it was in before (running, or stopped when someone else stopped it),
 * and the snapshot must name what could not be read.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/proctable.h"
#include "../collector/stacks.h"
#include "collect.h"
#include "md.h"
#include "snap.h"
#include "support/faults.h"
#include "support/mpijob.h"
#include "support/tracee.h"

struct cell {
	enum col_phase phase;
	enum fault fault;
};

struct inject {
	struct cell cell;
	struct tr_job *job;
	bool fired;
	int victim;	/* the rank the fault hit: the first the phase came
			 * for (the DLL setup comes for one rank only) */
	pid_t victim_pid;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static int fire(void *ctx, enum col_phase phase, int rank, int pid)
{
	struct inject *in = ctx;

	if (in->fired || phase != in->cell.phase)
		return 0;
	in->fired = true;
	in->victim = rank;
	in->victim_pid = pid;
	switch (in->cell.fault) {
	case F_RANK_EXITS:
		kill(in->victim_pid, SIGKILL);
		break;
	case F_READ_FAILS:
		/* Simulated: the collector's hook makes every later read
		 * of the rank answer EPERM (tgt_inject_read_fault), as a
		 * real refusal would; the kernel gives no way to make a
		 * live process's memory unreadable to its tracer. */
		return -MD_E_PERM;
	case F_RANK_STOPPED:
		kill(in->victim_pid, SIGSTOP);
		break;
	case F_STARTER_EXITS:
		kill(in->job->mpirun, SIGKILL);
		break;
	case F_SIGINT:
		raise(SIGINT);
		break;
	case F_SIGTERM:
		raise(SIGTERM);
		break;
	default:
		break;
	}
	return 0;
}

static struct tr_job job;

static void job_fini(void)
{
	/* A stopped rank would not see SIGTERM from mpirun. */
	for (int i = 0; i < job.nranks; i++)
		if (job.ranks[i] > 0)
			kill(job.ranks[i], SIGCONT);
	tr_job_end(&job);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

ParameterizedTestParameters(e2e_fault, every_phase)
{
	static struct cell cells[COL_PHASE_COUNT * F_COUNT];
	size_t n = 0;

	for (int p = 0; p < COL_PHASE_COUNT; p++)
		for (int f = 0; f < F_COUNT; f++)
			cells[n++] = (struct cell){ p, f };
	return cr_make_param_array(struct cell, cells, n);
}

/* Wait a little for a process's state to settle after a signal. */
static char settled_state(pid_t pid, char want)
{
	char st = tr_proc_state(pid);

	for (int i = 0; i < 100 && st && st != want; i++) {
		usleep(20 * 1000);
		st = tr_proc_state(pid);
	}
	return st;
}

/* The snapshot says what it could not read of the victim, and does not
 * blame Open MPI, which names its DLL, for a read that failed. */
static bool names_what_was_not_read(const struct snap_rank *r)
{
	if (r->state != SNAP_RANK_COLLECTED)
		return r->reason && *r->reason;
	return r->queues == SNAP_QUEUES_NONE && r->queues_reason &&
	       *r->queues_reason &&
	       !strstr(r->queues_reason, "names no message-queue DLL");
}

static bool gone(char st)
{
	return !st || st == 'Z' || st == 'X';
}

/*
 * Why rank i (pid) may be gone at the check, NULL if it may not: it was
 * the victim of "a rank exits", the tool named it as exited, or the job
 * ended after its starter went (mpirun ends the job when a rank is
 * killed).  A cell where ranks vanish unexplained fails: it would check
 * nothing.
 */
static const char *why_gone(const struct inject *in, const struct snap *s,
			    int i, pid_t pid)
{
	if (pid == in->victim_pid && in->cell.fault == F_RANK_EXITS)
		return "the victim";
	if (s && s->ranks[i].state == SNAP_RANK_GONE)
		return "named as exited";
	for (int k = 0; k < 250 && !gone(tr_proc_state(job.mpirun)); k++)
		usleep(20 * 1000);
	if (gone(tr_proc_state(job.mpirun)) &&
	    (in->cell.fault == F_RANK_EXITS ||
	     in->cell.fault == F_STARTER_EXITS))
		return "ended with its starter";
	return NULL;
}

static void check_job(const struct inject *in, const struct snap *s)
{
	const struct cell *c = &in->cell;
	int alive = 0;

	for (int i = 0; i < job.nranks; i++) {
		pid_t pid = job.ranks[i];
		bool stopped = pid == in->victim_pid &&
			       c->fault == F_RANK_STOPPED;
		char st = settled_state(pid, stopped ? 'T' : 'S');

		if (gone(st)) {
			const char *why = why_gone(in, s, i, pid);

			cr_expect_not_null(why, "%s at %s: rank %d (pid %d) "
					   "gone, unexplained",
					   fault_names[c->fault],
					   col_phase_name(c->phase), i, pid);
			cr_log_info("rank %d gone: %s", i, why ? why : "?");
			continue;	/* nothing to restore */
		}
		alive++;
		cr_expect_eq(mj_tracer(pid), 0, "%s at %s: rank %d still traced",
			     fault_names[c->fault], col_phase_name(c->phase), i);
		if (stopped)
			cr_expect_eq(st, 'T', "%s at %s: rank %d state %c, "
				     "want stopped as it was left",
				     fault_names[c->fault],
				     col_phase_name(c->phase), i, st);
		else
			cr_expect(st == 'R' || st == 'S', "%s at %s: rank %d "
				  "state %c, want running",
				  fault_names[c->fault],
				  col_phase_name(c->phase), i, st);
	}
	cr_log_info("%d of %d ranks alive and checked", alive, job.nranks);
	if (tr_proc_state(job.mpirun) && tr_proc_state(job.mpirun) != 'Z')
		cr_expect_eq(mj_tracer(job.mpirun), 0, "mpirun traced");
}

ParameterizedTest(struct cell *c, e2e_fault, every_phase, .fini = job_fini,
		  .timeout = 180)
{
	struct inject in = { .cell = *c, .job = &job, .victim = -1 };
	struct col_opts o = { .looks = 2, .interval_ms = 200,
			      .stop = &stop_flag, .fault = fire,
			      .fault_ctx = &in };
	struct tr_capture cap;
	struct snap *s = NULL;
	const char *why;
	char *err;
	int rc;

	cr_log_info("fault: %s at %s", fault_names[c->fault],
		    col_phase_name(c->phase));
	why = tr_job_start(&job, "samples/nosender.c", 3);
	if (why)
		cr_skip_test("%s", why);
	stop_flag = 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	o.pid = job.mpirun;
	tr_stderr_begin(&cap);
	rc = col_collect(&o, &s);
	err = tr_stderr_end(&cap);
	cr_expect(in.fired, "%s at %s: the phase never came",
		  fault_names[c->fault], col_phase_name(c->phase));
	check_job(&in, s);
	if (c->fault == F_SIGINT || c->fault == F_SIGTERM) {
		cr_expect_eq(rc, -MD_E_INTR, "rc %d; stderr: %s", rc, err);
		cr_expect_null(s);
		cr_expect_not_null(strstr(err, "every rank was detached"),
				   "stderr: %s", err);
	} else {
		cr_assert_eq(rc, 0, "%s at %s: rc %d; stderr: %s",
			     fault_names[c->fault], col_phase_name(c->phase),
			     rc, err);
		const struct snap_rank *v;

		cr_assert_eq(s->nranks, 3);
		cr_assert(in.victim >= 0 && in.victim < 3);
		v = &s->ranks[in.victim];
		if (c->fault == F_RANK_EXITS || c->fault == F_READ_FAILS)
			cr_expect(names_what_was_not_read(v),
				  "%s at %s: rank %d state %d reason %s "
				  "queues %d (%s)", fault_names[c->fault],
				  col_phase_name(c->phase), in.victim,
				  v->state, v->reason ? v->reason : "-",
				  v->queues,
				  v->queues_reason ? v->queues_reason : "-");
		/* The last look found it stopped: the snapshot says by
		 * what, and so does the verdict. */
		if (c->fault == F_RANK_STOPPED)
			fault_expect_stopped(s, in.victim, c->fault,
					     col_phase_name(c->phase));
		if (c->fault == F_READ_FAILS)
			fault_expect_unread_named(s, in.victim, c->fault,
						  col_phase_name(c->phase));
		if (c->fault == F_STARTER_EXITS)
			fault_expect_starter_gone(s, err, c->fault,
						  col_phase_name(c->phase));
	}
	free(err);
	snap_free(s);
}

/* ---- the same faults on the fake target, where a phase runs on it ---- */

/*
 * The whole table on a fake job is fault_fake_test.c.  Here, the walk
 * from a rank up to its starter (before attach) and the stack walk.  A
 * rank that is gone and a rank whose reads fail must give an error code
 * or an empty result, never a crash, and the target must be let go
 * (detach called) when the caller frees it.
 */
enum fake_fault { FF_GONE, FF_READ_FAILS, FF_COUNT };

static void fake_fault(struct tgt *t, enum fake_fault f)
{
	if (f == FF_GONE)
		tgt_fake_gone(t);
	else
		tgt_fake_fail_reads(t, -MD_E_PERM);
}

static int walk_lookup(void *ctx, struct tgt *t, const char *name,
		       uint64_t *addr)
{
	uint64_t probe;

	(void)ctx;
	(void)name;
	/* A symbol is only as good as the memory behind it. */
	if (tgt_read(t, 0x1000, &probe, sizeof(probe)) < 0)
		return -MD_E_NOSYM;
	*addr = 0x1000;
	return 0;
}

Test(fault, fake_rank_gone_or_unreadable_in_the_walk_to_the_starter)
{
	for (int f = 0; f < FF_COUNT; f++) {
		struct tgt *rank = tgt_fake_new(300), *starter = tgt_fake_new(100);
		uint64_t word = 0;
		struct pt_job *j = NULL;
		struct tr_capture cap;
		char *err;
		int r;

		tgt_fake_add_region(rank, 0x1000, &word, sizeof(word));
		tgt_fake_set_stat(rank, 'S', 100, "app");
		tgt_fake_set_stat(starter, 'S', 1, "mpirun");
		tgt_fake_link(rank, starter);
		fake_fault(rank, f);
		tr_stderr_begin(&cap);
		r = pt_acquire_from(rank, walk_lookup, NULL, &j);
		err = tr_stderr_end(&cap);
		cr_expect(r == -MD_E_NOSUCH || r == -MD_E_NOTMPI,
			  "fault %d: %s", f, md_strerror(r));
		cr_expect_null(j);
		cr_expect(strstr(err, "pid 300"), "fault %d: %s", f, err);
		free(err);
		tgt_free(rank);
		tgt_free(starter);
	}
}

Test(fault, fake_rank_gone_or_unreadable_in_the_stack_walk)
{
	for (int f = 0; f < FF_COUNT; f++) {
		struct tgt *t = tgt_fake_new_attached(7);
		struct tgt_regs regs = { { 0 } };
		struct stk_opts o = { 0 };
		struct snap_thread *th = NULL;
		struct snap *s = snap_new();
		int tid = 7, n = 0, r;

		regs.r[TGT_REG_PC] = 0x401000;
		regs.r[TGT_REG_SP] = 0x7ff000;
		tgt_fake_set_threads(t, &tid, 1);
		tgt_fake_set_regs(t, tid, &regs);
		fake_fault(t, f);
		r = stk_process(t, s, &o, &th, &n);
		if (f == FF_GONE) {
			/* Gone: no threads to list, or threads without
			 * registers. */
			cr_expect(r == -MD_E_GONE || (r == 0 && n <= 1));
		} else {
			cr_expect_eq(r, 0);
			cr_expect_eq(n, 1);
			cr_expect_leq(th[0].nframes, 1, "nothing to unwind");
		}
		for (int i = 0; i < n; i++)
			free(th[i].frames);
		free(th);
		tgt_detach(t);
		cr_expect_eq(tgt_fake_detaches(t), 1, "fault %d: let go", f);
		cr_expect(!tgt_is_attached(t));
		tgt_free(t);
		snap_free(s);
	}
}

/* ---- a real thread that does not stop, in a real job ---- */

struct release {
	pid_t pid;	/* rank 1 */
	bool done;
};

/* Between the looks, let the held thread's vfork child exit: the thread
 * then stops, and the collector must let it go. */
static int release_held(void *ctx, enum col_phase phase, int rank, int pid)
{
	struct release *rel = ctx;
	char path[64];
	FILE *f;

	if (rank == 1)
		rel->pid = pid;
	if (phase != COL_PHASE_BETWEEN || rank != 1 || rel->done)
		return 0;
	rel->done = true;
	snprintf(path, sizeof(path), "/tmp/md-dstate-%d.go", pid);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	return 0;
}

Test(e2e_fault, a_thread_that_does_not_stop_is_named_and_let_go,
     .fini = job_fini, .timeout = 180)
{
	struct release rel = { 0 };
	struct col_opts o = { .looks = 2, .interval_ms = 500,
			      .fault = release_held, .fault_ctx = &rel };
	struct tr_capture cap;
	struct snap *s = NULL;
	const char *why;
	char *err, path[64], want[64];
	bool named = false;
	int rc;

	why = tr_job_start(&job, "tests/fixtures/mpi/dstate.c", 2);
	if (why)
		cr_skip_test("%s", why);
	o.pid = job.mpirun;
	tr_stderr_begin(&cap);
	rc = col_collect(&o, &s);
	err = tr_stderr_end(&cap);
	cr_assert_eq(rc, 0, "stderr: %s", err);
	cr_expect(rel.done, "the looks never paused");
	cr_expect_eq(s->ranks[1].state, SNAP_RANK_COLLECTED, "reason %s",
		     s->ranks[1].reason ? s->ranks[1].reason : "-");
	cr_expect_geq(s->ranks[1].nthreads, 1, "read from the other threads");
	snprintf(want, sizeof(want), "rank 1 (pid %d): thread", rel.pid);
	for (int i = 0; i < s->nnotes; i++)
		named |= strstr(s->notes[i], want) &&
			 strstr(s->notes[i], "did not stop");
	cr_expect(named, "no note names the thread; stderr: %s", err);
	/* Released between the looks, it stopped and was let go: no thread
	 * of the job is traced any more. */
	for (int i = 0; i < job.nranks; i++) {
		char dir[64];
		struct dirent *d;
		DIR *dp;

		snprintf(dir, sizeof(dir), "/proc/%d/task", job.ranks[i]);
		dp = opendir(dir);
		while (dp && (d = readdir(dp))) {
			char st[384], line[256];
			FILE *f;

			if (d->d_name[0] == '.')
				continue;
			snprintf(st, sizeof(st), "%s/%s/status", dir, d->d_name);
			f = fopen(st, "r");
			while (f && fgets(line, sizeof(line), f))
				if (!strncmp(line, "TracerPid:", 10))
					cr_expect_eq(atoi(line + 10), 0,
						     "thread %s of pid %d traced",
						     d->d_name, job.ranks[i]);
			if (f)
				fclose(f);
		}
		if (dp)
			closedir(dp);
	}
	snprintf(path, sizeof(path), "/tmp/md-dstate-%d.go", rel.pid);
	unlink(path);
	free(err);
	snap_free(s);
}
