/*
 * proctable_hydra.c - the ranks of a Hydra job whose mpiexec has no MPIR
 * table (Debian's MPICH: its mpiexec.hydra is stripped and exports no
 * MPIR symbol), found as MPICH's own process manager placed them: Hydra's
 * mpiexec starts one hydra_pmi_proxy per host, and each proxy starts its
 * host's ranks with PMI_RANK and PMI_SIZE in their environment.
 * See proctable.h and doc/mpich.md.
 */
#include "proctable.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"

#define HY_MAX_RANKS (1 << 20)

/* The stat of t; false if it is gone. */
static bool stat_of(struct tgt *t, struct tgt_stat *st)
{
	return t && tgt_stat(t, st) == 0;
}

static bool has_child(struct tgt *t, const char *comm)
{
	struct tgt_stat st;
	int *kids = NULL, n = 0;
	bool found = false;

	if (tgt_children(t, &kids, &n) < 0)
		return false;
	for (int i = 0; i < n && !found; i++) {
		struct tgt *c = NULL;

		if (tgt_open_other(t, kids[i], &c) == 0)
			found = stat_of(c, &st) && !strcmp(st.comm, comm);
		tgt_free(c);
	}
	free(kids);
	return found;
}

/*
 * Hydra's mpiexec for t, opened (the caller's, or t itself): t when one
 * of its children is a proxy, else the parent of the proxy that t is or
 * that is t's parent (a rank).  NULL when t is not part of a Hydra job.
 */
static struct tgt *find_mpiexec(struct tgt *t)
{
	struct tgt *parent = NULL, *up = NULL;
	struct tgt_stat st;

	if (has_child(t, PT_HYDRA_PROXY))
		return t;
	if (!stat_of(t, &st))
		return NULL;
	if (strcmp(st.comm, PT_HYDRA_PROXY) != 0) {
		if (tgt_open_other(t, st.ppid, &parent) < 0 ||
		    !stat_of(parent, &st) ||
		    strcmp(st.comm, PT_HYDRA_PROXY) != 0) {
			tgt_free(parent);
			return NULL;
		}
	}
	if (st.ppid > 1)
		tgt_open_other(parent ? parent : t, st.ppid, &up);
	tgt_free(parent);
	return up;
}

static int env_int(struct tgt *t, const char *name, int *v)
{
	char *s = NULL, *end;
	long x;

	if (tgt_getenv(t, name, &s) < 0)
		return -1;
	x = strtol(s, &end, 10);
	if (end == s || *end || x < 0 || x >= HY_MAX_RANKS) {
		free(s);
		return -1;
	}
	free(s);
	*v = (int)x;
	return 0;
}

void pt_add_children(struct tgt *parent, struct pt_job *j, const char *host,
		     const char *rank_var, const char *size_var)
{
	int *kids = NULL, n = 0;

	if (tgt_children(parent, &kids, &n) < 0)
		return;
	for (int i = 0; i < n; i++) {
		struct tgt *c = NULL;
		int rank, size;

		if (tgt_open_other(parent, kids[i], &c) < 0)
			continue;
		if (env_int(c, rank_var, &rank) == 0 &&
		    env_int(c, size_var, &size) == 0) {
			if (!j->procs) {
				j->nranks = size;
				j->procs = xcalloc((size_t)size,
						   sizeof(*j->procs));
			}
			if (rank < j->nranks && !j->procs[rank].pid) {
				struct pt_proc *p = &j->procs[rank];

				p->pid = kids[i];
				p->host = xstrdup(host);
				p->exe = xstrdup(tgt_exe(c) ? tgt_exe(c) : "");
				p->local = true;
			}
		}
		tgt_free(c);
	}
	free(kids);
}

static struct pt_job *job_of(struct tgt *mpiexec)
{
	struct pt_job *j = xcalloc(1, sizeof(*j));
	char host[256] = "";
	int *kids = NULL, n = 0;

	gethostname(host, sizeof(host) - 1);
	j->starter_pid = tgt_pid(mpiexec);
	if (tgt_exe(mpiexec))
		j->starter_exe = xstrdup(tgt_exe(mpiexec));
	j->given_rank = -1;
	if (tgt_children(mpiexec, &kids, &n) == 0)
		for (int i = 0; i < n; i++) {
			struct tgt *c = NULL;

			struct tgt_stat st;

			if (tgt_open_other(mpiexec, kids[i], &c) == 0 &&
			    stat_of(c, &st) && !strcmp(st.comm, PT_HYDRA_PROXY))
				pt_add_children(c, j, host, "PMI_RANK",
						"PMI_SIZE");
			tgt_free(c);
		}
	free(kids);
	for (int i = 0; i < j->nranks; i++)
		j->procs[i].rank = i;
	return j;
}

int pt_hydra_job(struct tgt *t, struct pt_job **out)
{
	struct tgt *mpiexec = find_mpiexec(t);
	struct pt_job *j;
	int found = 0;

	*out = NULL;
	if (!mpiexec)
		return 1;
	j = job_of(mpiexec);
	for (int i = 0; i < j->nranks; i++)
		found += j->procs[i].pid > 0;
	if (!j->nranks) {
		md_error("pid %d is Hydra's mpiexec without an MPIR process table "
			 "(an MPICH built without --enable-debuginfo, such as "
			 "Debian's) and no rank has started under its "
			 "hydra_pmi_proxy yet: try again in a moment",
			 tgt_pid(mpiexec));
		found = -MD_E_NOTREADY;
	} else if (found < j->nranks) {
		md_error("pid %d is Hydra's mpiexec without an MPIR process table "
			 "(an MPICH built without --enable-debuginfo, such as "
			 "Debian's): %d of its %d ranks run on this host and the "
			 "others cannot be found without the table: use an MPICH "
			 "configured with --enable-debuginfo "
			 "(scripts/build-mpich.sh)",
			 tgt_pid(mpiexec), found, j->nranks);
		found = -MD_E_NOTMPI;
	}
	if (mpiexec != t)
		tgt_free(mpiexec);
	if (found < 0) {
		pt_job_free(j);
		return found;
	}
	md_info("pid %d: Hydra's mpiexec has no MPIR process table: its %d "
		"ranks found as the children of its hydra_pmi_proxy, by "
		"PMI_RANK",
		j->starter_pid, j->nranks);
	*out = j;
	return 0;
}
