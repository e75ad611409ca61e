/*
 * daemon.c - a collection started where the job's mpirun is not: on a
 * host of a many-host job, a rank's parent is Open MPI's daemon (orted),
 * which has no process table (mpirun's --get-stack-traces runs the gstack
 * hook there).  The ranks of this host are the daemon's children; each
 * names its global rank and the job's size in its environment
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE).  They are collected as an
 * agent collects, the other ranks stay "remote".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "md.h"
#include "proctable.h"
#include "target.h"

bool ag_is_daemon(int pid)
{
	struct tgt_stat st;

	/* Open MPI's only: their ranks name themselves in OMPI_*; a Hydra
	 * job's are found by proctable_hydra.c. */
	return tgt_proc_stat(pid, &st) == 0 &&
	       pt_daemon_mpi(st.comm) == COL_MPI_OPENMPI;
}

int ag_daemon_of(int pid)
{
	struct tgt_stat st;

	if (ag_is_daemon(pid))
		return pid;
	if (tgt_proc_stat(pid, &st) == 0 && ag_is_daemon(st.ppid))
		return st.ppid;
	return 0;
}

static long env_num(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; p < text + len; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=')
			return strtol(p + nl + 1, NULL, 10);
	return -1;
}

/* The daemon's children that are ranks of its job. */
static int find_ranks(int daemon, struct col_target **out, int *nranks)
{
	int *kids = NULL, nk = 0, n = 0;
	struct col_target *t;

	if (tgt_proc_children(daemon, &kids, &nk) < 0) {
		md_error("pid %d: no such process", daemon);
		return -MD_E_NOSUCH;
	}
	t = xcalloc((size_t)nk + 1, sizeof(*t));
	*nranks = 0;
	for (int i = 0; i < nk; i++) {
		char *env = NULL, *exe = NULL;
		size_t len = 0;
		long r, size;

		if (tgt_proc_strings(kids[i], "environ", &env, &len) < 0)
			continue;
		r = env_num(env, len, "OMPI_COMM_WORLD_RANK");
		size = env_num(env, len, "OMPI_COMM_WORLD_SIZE");
		free(env);
		if (r < 0 || size <= r || size > (1 << 26) ||
		    tgt_proc_exe(kids[i], &exe) < 0)
			continue;
		t[n].rank = (int)r;
		t[n].pid = kids[i];
		t[n++].exe = exe;
		if (size > *nranks)
			*nranks = (int)size;
	}
	free(kids);
	*out = t;
	return n;
}

int ag_collect_daemon(const struct col_opts *o, struct snap **out)
{
	struct col_opts co = *o;
	struct col_target *t = NULL;
	struct col *c = NULL;
	struct snap *s;
	int n, nranks = 0, rc = 0;

	n = find_ranks(o->pid, &t, &nranks);
	if (n <= 0) {
		if (n == 0)
			md_error("pid %d is an Open MPI daemon without ranks of a "
				 "job here: run mpi-deadlock --attach on the host "
				 "of the job's mpirun", o->pid);
		free(t);
		return n ? n : -MD_E_NOTMPI;
	}
	co.external_pace = false;
	col_open_pids(&co, nranks, t, n, &c);
	for (int k = 0; k < (o->looks > 0 ? o->looks : 1) && !rc; k++) {
		if (k) {
			long long end = md_now_ns() + o->interval_ms * 1000000LL;
			struct timespec ts = { 0, 20 * 1000000L };

			while (md_now_ns() < end && !(o->stop && *o->stop))
				nanosleep(&ts, NULL);
		}
		rc = col_look(c, k);
	}
	col_close(c, &s);
	for (int i = 0; i < n; i++)
		free((char *)t[i].exe);
	free(t);
	if (rc < 0) {
		md_error("interrupted: every rank was detached and runs on");
		snap_free(s);
		return rc;
	}
	s->starter_pid = o->pid;
	for (int i = 0; i < s->nranks; i++)
		if (s->ranks[i].state == SNAP_RANK_REMOTE)
			s->ranks[i].reason = snap_str(s, "on another host: the "
				"job's mpirun is not on this one (run "
				"mpi-deadlock --attach MPIRUN_PID on its host "
				"for the whole job)");
	snap_note(s, "only the %d ranks of host %s were collected: the job's "
		     "mpirun runs on another host", n, s->host);
	*out = s;
	return 0;
}
