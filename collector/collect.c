/*
 * collect.c - from a starter (or rank) pid to a snapshot: find the ranks,
 * then take the looks.  In each look every local rank is stopped, read
 * and let go again; the ranks whose MPI state did not change between the
 * looks are the ones that may be blocked.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect_int.h"
#include "looks.h"
#include "md.h"
#include "proctable.h"

static bool stopped(const struct col *c)
{
	return c->o->stop && *c->o->stop;
}

static void progress(const struct col *c, const char *what, int i, int n)
{
	if (c->o->progress)
		fprintf(stderr, "\rmpi-deadlock: %s rank %d of %d\033[K", what,
			i, n);
}

static void progress_done(const struct col *c)
{
	if (c->o->progress)
		fprintf(stderr, "\r\033[K");
}

/* Fill the snapshot's header and ranks from the process table. */
static void fill_job(struct col *c, const struct pt_job *job)
{
	struct snap *s = c->s;
	char host[256] = "";
	int i;

	gethostname(host, sizeof(host) - 1);
	s->time = (int64_t)time(NULL);
	s->tool = snap_str(s, "mpi-deadlock " MD_VERSION);
	s->host = snap_str(s, host);
	s->starter_pid = job->starter_pid;
	s->starter = snap_str(s, job->starter_exe);
	if (job->given_rank >= 0)
		md_info("pid %d is rank %d; its starter is pid %d",
			job->given_pid, job->given_rank, job->starter_pid);
	s->looks = c->o->looks;
	s->interval_ms = c->o->interval_ms;
	if (job->note)
		snap_note(s, "%s", job->note);
	snap_set_nranks(s, job->nranks);
	for (i = 0; i < job->nranks; i++) {
		struct snap_rank *r = &s->ranks[i];
		const struct pt_proc *p = &job->procs[i];

		r->pid = p->pid;
		r->host = snap_str(s, p->host);
		r->exe = snap_str(s, p->exe);
		if (!p->local) {
			r->state = SNAP_RANK_REMOTE;
			r->reason = snap_str(s, "on another host: not "
					     "collected (ptrace reaches only "
					     "local processes)");
		}
	}
}

static void mark(struct col *c, int i, enum snap_rank_state st,
		 const char *why)
{
	c->s->ranks[i].state = st;
	c->s->ranks[i].reason = snap_str(c->s, why);
	c->s->ranks[i].stopped_by = 0;	/* as an earlier look found it */
	c->s->ranks[i].collected_on = c->s->host;
}

const char *col_phase_name(enum col_phase p)
{
	static const char *const names[] = {
#define COL_PHASE_NAME(name, text) text,
		COL_PHASES(COL_PHASE_NAME)
#undef COL_PHASE_NAME
	};

	return p >= 0 && p < COL_PHASE_COUNT ? names[p] : "?";
}

void col_phase(struct col *c, enum col_phase p, int rank)
{
	int pid, code;

	if (!c->o->fault)
		return;
	pid = rank >= 0 ? c->s->ranks[rank].pid : c->s->starter_pid;
	code = c->o->fault(c->o->fault_ctx, p, rank, pid);
	if (code >= 0 || rank < 0)
		return;
	c->read_fault[rank] = code;
	if (c->tgts[rank])
		tgt_inject_read_fault(c->tgts[rank], code);
}

/* A note once, however many looks find the same thing. */
static void note_once(struct snap *s, const char *text)
{
	const char *interned = snap_str(s, text);

	for (int i = 0; i < s->nnotes; i++)
		if (s->notes[i] == interned)
			return;
	snap_note(s, "%s", text);
}

/*
 * Targets with threads that had not stopped when they were detached:
 * let each thread go once it has stopped.  A target is freed when it has
 * none left; at the end (final) whatever remains is freed anyway and
 * those threads stay traced until this process exits (the kernel then
 * lets them go).
 */
static void let_go_lingering(struct col *c, bool final)
{
	int kept = 0;

	for (int i = 0; i < c->nlinger; i++) {
		const int *tids;
		int n;

		tgt_detach(c->linger[i]);
		tgt_unstopped(c->linger[i], &tids, &n);
		if (n && !final)
			c->linger[kept++] = c->linger[i];
		else
			tgt_free(c->linger[i]);
	}
	c->nlinger = kept;
}

static void release(struct col *c, struct tgt *t)
{
	const int *tids;
	int n;

	tgt_detach(t);
	tgt_unstopped(t, &tids, &n);
	if (!n) {
		tgt_free(t);
		return;
	}
	c->linger = xrealloc(c->linger, (size_t)(c->nlinger + 1) *
						sizeof(*c->linger));
	c->linger[c->nlinger++] = t;
}

int col_target(struct col *c, int pid, bool attach, struct tgt **out)
{
	char comm[TGT_COMM_MAX];
	int ppid;

	*out = NULL;
	if (c->o->target)
		return c->o->target(c->o->target_ctx, pid, attach, out);
	if (!attach)
		return tgt_open(pid, out);
	/* A rank that has exited is part of the picture, not an error:
	 * look before tgt_attach, which reports a missing pid. */
	if (tgt_proc_parent(pid, &ppid, comm) < 0)
		return -MD_E_GONE;
	return tgt_attach_start(pid, out);
}

static void record_attach_error(struct col *c, int i, int rc, int look)
{
	if (rc == -MD_E_GONE || rc == -MD_E_NOSUCH)
		mark(c, i, SNAP_RANK_GONE, look ? "exited during "
			"collection" : "exited before collection");
	else
		mark(c, i, SNAP_RANK_UNREAD, md_strerror(rc));
}

/* Name the threads of rank i that did not stop. */
static void note_unstopped(struct col *c, int i)
{
	const int *tids;
	int n;

	tgt_unstopped(c->tgts[i], &tids, &n);
	for (int k = 0; k < n; k++) {
		char *text = xasprintf("rank %d (pid %d): thread %d did not "
				       "stop (uninterruptible sleep?): the "
				       "rank was read from its other threads",
				       i, c->s->ranks[i].pid, tids[k]);

		note_once(c->s, text);
		free(text);
	}
}

/*
 * Stop every local rank; a rank that cannot be stopped is recorded.
 * Every thread of every rank is seized and interrupted first, then the
 * stops are awaited together: one deadline for the job, not per rank.
 */
static void attach_all(struct col *c, int look, const bool *only)
{
	struct snap *s = c->s;
	long long t0 = md_now_ns(), deadline;
	int i, rc;

	let_go_lingering(c, false);
	for (i = 0; i < s->nranks && !stopped(c); i++) {
		if (s->ranks[i].state != SNAP_RANK_COLLECTED ||
		    (only && !only[i]))
			continue;
		progress(c, "stopping", i + 1, s->nranks);
		col_phase(c, COL_PHASE_ATTACH, i);
		rc = col_target(c, s->ranks[i].pid, true, &c->tgts[i]);
		if (rc < 0)
			record_attach_error(c, i, rc, look);
		else if (c->read_fault[i])
			tgt_inject_read_fault(c->tgts[i], c->read_fault[i]);
	}
	deadline = md_now_ns() + TGT_STOP_TIMEOUT_NS;
	for (i = 0; i < s->nranks; i++) {
		if (!c->tgts[i])
			continue;
		rc = tgt_attach_wait(c->tgts[i], deadline);
		if (rc < 0) {
			record_attach_error(c, i, rc, look);
			release(c, c->tgts[i]);
			c->tgts[i] = NULL;
			continue;
		}
		note_unstopped(c, i);
	}
	c->st.attach_ns += md_now_ns() - t0;
}

static void detach_all(struct col *c)
{
	long long t0 = md_now_ns();
	int i;

	for (i = 0; i < c->s->nranks; i++) {
		if (!c->tgts[i])
			continue;
		col_phase(c, COL_PHASE_DETACH, i);
		release(c, c->tgts[i]);
		c->tgts[i] = NULL;
	}
	let_go_lingering(c, false);
	c->st.detach_ns += md_now_ns() - t0;
}

/*
 * The newer look fresh read neither stacks nor queues (its reads failed):
 * it takes the older look's stacks, call and what else was read only
 * with them (the thread level, whether it finalized, the library's
 * count), and keeps its own "queues not read" with the reason, so the
 * report names both where the rank waits and what is missing.  r gets
 * fresh's (empty) threads, freed with it.  A later look is compared with
 * this one: its operations with none (not movement), the rest as read.
 */
static void keep_older_stacks(struct snap_rank *r, struct snap_rank *fresh)
{
	struct snap_rank t = *fresh;

	fresh->nthreads = r->nthreads;
	fresh->threads = r->threads;
	fresh->mpi_call = r->mpi_call;
	fresh->call_func = r->call_func;
	fresh->call_file = r->call_file;
	fresh->call_line = r->call_line;
	fresh->thread_level = r->thread_level;
	fresh->finalized = r->finalized;
	fresh->has_completions = r->has_completions;
	fresh->completions = r->completions;
	r->nthreads = t.nthreads;
	r->threads = t.threads;
}

/* Keep the newest look of rank i in the snapshot, judging progress.  A
 * polling loop caught between two calls of its polling call keeps the
 * look in the call: the report shows where it polls. */
static void keep_look(struct col *c, int i, struct snap_rank *fresh, int look)
{
	struct snap_rank *r = &c->s->ranks[i];
	enum lk_same same = look ? lk_compare(r, fresh) : LK_CHANGED;
	enum snap_progress p;

	if (look == 0)
		p = SNAP_PROGRESS_UNKNOWN;
	else if (same != LK_CHANGED && r->progress != SNAP_PROGRESS_CHANGED)
		p = SNAP_PROGRESS_STABLE;
	else
		p = SNAP_PROGRESS_CHANGED;
	if (look && same == LK_CHANGED) {
		char why[256];

		md_info("rank %d moved between looks %d and %d: %s", r->rank,
			look, look + 1, lk_why(r, fresh, why, sizeof(why)));
	}
	if (same == LK_POLL_KEEP || same == LK_POLL_NEW)
		note_once(c->s, "a rank found outside MPI in one look, in the "
			  "loop that calls its polling call (MPI_Test, "
			  "MPI_Iprobe) in another, with the same pending "
			  "requests, is taken as polling (its call shown "
			  "from the look in the call)");
	if (same == LK_SAME_KEEP || (same == LK_SAME && lk_no_site(r)))
		md_info("rank %d: look %d gave no site (the stack unwinder lost "
			"its thread); judged from the other look", r->rank,
			same == LK_SAME_KEEP ? look + 1 : look);
	if (same == LK_SAME_KEEP && fresh->queues == SNAP_QUEUES_NONE &&
	    r->queues == SNAP_QUEUES_OK) {
		keep_older_stacks(r, fresh);
		same = LK_SAME;
	}
	if (same == LK_POLL_KEEP || same == LK_SAME_KEEP) {
		snap_rank_free_data(fresh);
		r->progress = p;
		return;
	}
	if (same == LK_POLL_SLEEP) {
		lk_poll_site(fresh);
		note_once(c->s, "a rank found outside MPI in every look, with "
			  "the same pending requests, whose polling calls "
			  "(MPI_Test, MPI_Iprobe) libmdtrack.so counted moving "
			  "between the looks, is taken as polling at its last "
			  "one (a loop that sleeps or computes between its "
			  "tests)");
	}
	if (same == LK_SAME || same == LK_POLL_NEW)
		lk_keep_probes(fresh, r);
	fresh->rank = r->rank;
	fresh->pid = r->pid;
	fresh->host = r->host;
	fresh->exe = r->exe;
	fresh->collected_on = c->s->host;
	fresh->state = SNAP_RANK_COLLECTED;
	fresh->progress = p;
	snap_rank_free_data(r);
	*r = *fresh;
}

/* Read the ranks stopped in this look into the snapshot. */
static void read_all(struct col *c, int look)
{
	struct snap *s = c->s;
	int i, rc;

	for (i = 0; i < s->nranks && !stopped(c); i++) {
		struct col_rank cr = { .c = c, .t = c->tgts[i], .rank = i };
		struct snap_rank fresh = { 0 };

		if (!cr.t)
			continue;
		progress(c, "reading", i + 1, s->nranks);
		rc = col_read_rank(&cr, &fresh);
		tgt_forget(cr.t);	/* its pages: read once, no longer needed */
		if (rc == -MD_E_GONE) {
			snap_rank_free_data(&fresh);
			mark(c, i, SNAP_RANK_GONE, "exited during collection");
			continue;
		}
		if (rc < 0) {
			snap_rank_free_data(&fresh);
			mark(c, i, SNAP_RANK_UNREAD, md_strerror(rc));
			continue;
		}
		keep_look(c, i, &fresh, look);
		/* As the last look found it: a SIGCONT between looks counts. */
		s->ranks[i].stopped_by = tgt_stopped_by(cr.t);
		c->st.ranks_read++;
	}
}

/* Sleep between looks, waking for a stop request. */
static void pause_between_looks(struct col *c)
{
	long long t0 = md_now_ns(), end = t0 + c->o->interval_ms * 1000000LL;
	struct timespec ts = { 0, 20 * 1000000L };

	for (int i = 0; i < c->s->nranks; i++)
		if (c->s->ranks[i].state == SNAP_RANK_COLLECTED)
			col_phase(c, COL_PHASE_BETWEEN, i);
	if (c->o->progress)
		fprintf(stderr, "\rmpi-deadlock: waiting %d ms for the next "
				"look\033[K", c->o->interval_ms);
	while (md_now_ns() < end && !stopped(c))
		nanosleep(&ts, NULL);
	c->st.wait_ns += md_now_ns() - t0;
}

static void block_jobctl(struct col *c)
{
	sigset_t jobctl;

	/* Ctrl-Z (or a background write to the terminal) would stop us with
	 * every rank stopped under us: such a stop waits until all ranks are
	 * detached again. */
	sigemptyset(&jobctl);
	sigaddset(&jobctl, SIGTSTP);
	sigaddset(&jobctl, SIGTTIN);
	sigaddset(&jobctl, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &jobctl, &c->saved_mask);
}

/*
 * Load what the looks need (the DLL, the MPI library's types, ob1's
 * layouts) from the first rank stopped here, once.  It is done with the
 * ranks stopped, not before: ranks that spin in MPI's progress loop take
 * the CPU from anything that runs beside them (a nice -19 process gets
 * about a third of a core next to 128 of them), and an agent is ready
 * for the first look sooner.
 */
static void setup_once(struct col *c)
{
	if (c->prepared)
		return;
	for (int i = 0; i < c->s->nranks; i++) {
		if (c->tgts[i]) {
			long long t1 = md_now_ns();

			c->prepared = true;
			col_phase(c, COL_PHASE_SETUP, i);
			col_prepare(c, i);
			c->st.setup_ns += md_now_ns() - t1;
			break;
		}
	}
}

/*
 * The ranks of the last look that did not move and should be looked at
 * again: one found outside MPI (a rank that polls, MPI_Test or
 * MPI_Iprobe in a loop, is now and then stopped between two calls, and
 * a report that shows it outside MPI names neither its call nor, for a
 * probe loop, what it waits for), or one in MPI_Iprobe whose probe
 * request no look caught (stopped in the call but outside ob1's probe:
 * the report would not say what it probes for).  Set only[i] for each;
 * 0 if there is none.
 */
static int unfinished(struct col *c, bool *only)
{
	int n = 0;

	for (int i = 0; i < c->s->nranks; i++) {
		const struct snap_rank *r = &c->s->ranks[i];

		only[i] = r->state == SNAP_RANK_COLLECTED &&
			  r->progress != SNAP_PROGRESS_CHANGED &&
			  (!r->mpi_call || lk_probe_unseen(r));
		n += only[i];
	}
	return n;
}

/* Stop and read the ranks in only[] once more, the others running. */
static void look_again(struct col *c, int look, const bool *only)
{
	struct timespec ts = { 0, COL_RELOOK_PAUSE_MS * 1000000L };

	nanosleep(&ts, NULL);
	if (stopped(c))
		return;
	attach_all(c, look, only);
	if (!stopped(c))
		read_all(c, look);
	detach_all(c);
	c->st.relooks++;
}

/*
 * A starter that exited during the collection is said once, in the
 * snapshot's notes and on stderr: the ranks it ended show as exited,
 * and those still running are orphans of a job that cannot end well.
 */
static void note_starter_gone(struct col *c)
{
	int pid = c->s->starter_pid, rc;
	struct tgt_stat st = { 0 };
	struct tgt *t = NULL;
	char *text;

	if (pid <= 0 || c->starter_gone)
		return;
	if (c->o->target) {
		rc = col_target(c, pid, false, &t);
		if (rc == 0)
			rc = tgt_stat(t, &st);
		tgt_free(t);
	} else {
		rc = tgt_proc_stat(pid, &st);
	}
	if (rc == 0 && st.state != 'Z' && st.state != 'X')
		return;
	c->starter_gone = true;
	text = xasprintf("the starter (pid %d) exited during the collection: "
			 "ranks it ended are named as exited", pid);
	md_warn("%s", text);
	note_once(c->s, text);
	free(text);
}

int col_look(struct col *c, int look)
{
	bool last = look + 1 >= (c->o->looks > 0 ? c->o->looks : 1);

	if (look && c->o->interval_ms > 0 && !c->external_pace)
		pause_between_looks(c);
	if (!stopped(c)) {
		bool *only = xcalloc((size_t)c->s->nranks + 1, sizeof(*only));

		block_jobctl(c);
		attach_all(c, look, NULL);
		if (!stopped(c))
			setup_once(c);
		if (!stopped(c))
			read_all(c, look);
		/* Detached on every path, a stop request included. */
		detach_all(c);
		/* In the last look, a rank outside MPI (or in a probe not
		 * caught) is looked at again, a few ms later, so that a
		 * polling rank shows its call (and what it probes for). */
		for (int k = 0; last && k < COL_RELOOKS && !stopped(c) &&
				unfinished(c, only); k++)
			look_again(c, look, only);
		free(only);
		pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL);
		note_starter_gone(c);
	}
	progress_done(c);
	return stopped(c) ? -MD_E_INTR : 0;
}

static void prepare(struct col *c)
{
	c->tgts = xcalloc((size_t)c->s->nranks + 1, sizeof(*c->tgts));
	c->read_fault = xcalloc((size_t)c->s->nranks + 1, sizeof(int));
}

/* The job from o->pid's process table: through the target factory
 * when there is one. */
static int acquire(struct col *c, struct pt_job **job)
{
	struct tgt *t;
	int rc;

	if (!c->o->target)
		return pt_acquire(c->o->pid, pt_elfsym_lookup, c->syms, job);
	rc = col_target(c, c->o->pid, false, &t);
	if (rc == -MD_E_GONE || rc == -MD_E_NOSUCH) {
		md_error("no process with pid %d", c->o->pid);
		return -MD_E_NOSUCH;
	}
	if (rc < 0)
		return rc;
	rc = pt_acquire_from(t, pt_elfsym_lookup, c->syms, job);
	tgt_free(t);
	return rc;
}

int col_open(const struct col_opts *o, struct col **out)
{
	struct col *c = xcalloc(1, sizeof(*c));
	struct pt_job *job = NULL;
	long long t0 = md_now_ns();
	int rc;

	c->o = o;
	c->external_pace = o->external_pace;
	c->syms = es_cache_new();
	rc = acquire(c, &job);
	c->st.find_ns = md_now_ns() - t0;
	if (rc < 0) {
		es_cache_free(c->syms);
		free(c);
		return rc;
	}
	c->s = snap_new();
	c->lines = dl_cache_new(!o->no_line_memo);
	fill_job(c, job);
	pt_job_free(job);
	c->topo = topo_acc_new();
	prepare(c);
	*out = c;
	return 0;
}

/* Does /proc/PID/exe name the program the front end was told of? A pid
 * reused by another program must not be stopped. */
static const char *exe_mismatch(int pid, const char *want)
{
	const char *wb, *hb;
	char *have = NULL;
	static const char *const bad = "the pid runs another program now "
				       "(the rank exited and the pid was "
				       "reused?)";
	bool same;

	if (!want || !*want)
		return NULL;
	if (tgt_proc_exe(pid, &have) < 0)
		return NULL; /* gone or unreadable: the attach says which */
	wb = strrchr(want, '/');
	hb = strrchr(have, '/');
	wb = wb ? wb + 1 : want;
	hb = hb ? hb + 1 : have;
	same = !strcmp(wb, hb);
	free(have);
	return same ? NULL : bad;
}

int col_open_pids(const struct col_opts *o, int nranks,
		  const struct col_target *t, int n, struct col **out)
{
	struct col *c = xcalloc(1, sizeof(*c));
	char host[256] = "";
	struct snap *s;

	c->o = o;
	c->external_pace = true;
	c->syms = es_cache_new();
	c->lines = dl_cache_new(!o->no_line_memo);
	c->s = s = snap_new();
	gethostname(host, sizeof(host) - 1);
	s->time = (int64_t)time(NULL);
	s->tool = snap_str(s, "mpi-deadlock " MD_VERSION);
	s->host = snap_str(s, host);
	s->looks = o->looks;
	s->interval_ms = o->interval_ms;
	snap_set_nranks(s, nranks);
	for (int i = 0; i < nranks; i++) {
		s->ranks[i].state = SNAP_RANK_REMOTE;
		s->ranks[i].reason = snap_str(s, "not given to this agent");
	}
	for (int i = 0; i < n; i++) {
		struct snap_rank *r = &s->ranks[t[i].rank];
		const char *why = exe_mismatch(t[i].pid, t[i].exe);

		r->pid = t[i].pid;
		r->host = snap_str(s, host);
		r->exe = snap_str(s, t[i].exe);
		r->state = why ? SNAP_RANK_UNREAD : SNAP_RANK_COLLECTED;
		r->reason = why ? snap_str(s, why) : NULL;
		r->collected_on = why ? s->host : NULL;
	}
	c->topo = topo_acc_new();
	prepare(c);
	*out = c;
	return 0;
}

struct snap *col_snap(struct col *c)
{
	return c->s;
}

void col_close(struct col *c, struct snap **out)
{
	if (!c)
		return;
	detach_all(c);
	let_go_lingering(c, true);
	topo_acc_finish(c->topo, c->s);
	free(c->linger);
	free(c->tgts);
	free(c->read_fault);
	col_images_free(c);
	dl_cache_free(c->lines);
	es_cache_free(c->syms);
	if (c->o->stats)
		*c->o->stats = c->st;
	md_info("timing: find %.3f s, attach %.3f s, setup %.3f s, queues "
		"%.3f s (ob1 %.3f s), stacks %.3f s, detach %.3f s, waiting "
		"%.3f s, %d rank reads (%d looks again)", c->st.find_ns / 1e9,
		c->st.attach_ns / 1e9, c->st.setup_ns / 1e9,
		c->st.queues_ns / 1e9, c->st.ob1_ns / 1e9,
		c->st.stacks_ns / 1e9, c->st.detach_ns / 1e9,
		c->st.wait_ns / 1e9, c->st.ranks_read, c->st.relooks);
	if (out)
		*out = c->s;
	else
		snap_free(c->s);
	free(c);
}

int col_collect(const struct col_opts *o, struct snap **out)
{
	int look, looks = o->looks > 0 ? o->looks : 1, rc = 0;
	struct snap *s;
	struct col *c;

	rc = col_open(o, &c);
	if (rc < 0)
		return rc;
	for (look = 0; look < looks && rc == 0; look++)
		rc = col_look(c, look);
	if (rc < 0)
		md_error("interrupted: every rank was detached and runs on");
	col_close(c, &s);
	if (rc < 0) {
		snap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
