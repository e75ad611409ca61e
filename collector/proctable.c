/*
 * proctable.c - MPIR process acquisition (see proctable.h).
 */
#include "proctable.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"
#include "md.h"

/* On x86-64: {char *host_name; char *executable_name; int pid;} padded. */
#define PT_ENTRY_SIZE 24
#define PT_MAX_RANKS (1 << 24)
#define PT_MAX_STR 4096
#define PT_MAX_DEPTH 32
#define PT_MAX_WRAP_DEPTH 6

/* What one process turned out to be. */
enum pt_kind {
	PT_STARTER,		/* has a filled table */
	PT_STARTER_EARLY,	/* has the table symbols, not filled yet */
	PT_RANK,		/* loads libmpi */
	PT_OTHER,
};

struct pt_head {
	int state;
	int size;
	uint64_t table;
};

int pt_elfsym_lookup(void *ctx, struct tgt *t, const char *name,
		     uint64_t *addr)
{
	const char *maps = tgt_maps_text(t);
	struct es_view *v = NULL;
	int r;

	if (!maps || es_view_from_maps(ctx, maps, tgt_exe(t), &v) < 0)
		return -MD_E_NOSYM;
	r = es_proc_lookup(v, name, addr);
	es_view_free(v);
	return r;
}

void pt_job_free(struct pt_job *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->nranks; i++) {
		free(j->procs[i].host);
		free(j->procs[i].exe);
	}
	free(j->procs);
	free(j->starter_exe);
	free(j->note);
	free(j);
}

bool pt_host_is_local(const char *host, const char *ours)
{
	size_t hl, ol;

	if (!host || !*host)
		return false;
	if (!strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") ||
	    !strcmp(host, ours))
		return true;
	/* "node1" vs "node1.cluster.example": compare the short names. */
	hl = strcspn(host, ".");
	ol = strcspn(ours, ".");
	return hl == ol && !strncmp(host, ours, hl);
}

/* Quiet: the codes of tgt_read and -MD_E_NOSYM. */
static int read_head(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		     struct pt_head *h)
{
	uint64_t a_state, a_size, a_table;
	int r;

	if (lookup(ctx, t, "MPIR_proctable", &a_table) < 0 ||
	    lookup(ctx, t, "MPIR_proctable_size", &a_size) < 0 ||
	    lookup(ctx, t, "MPIR_debug_state", &a_state) < 0)
		return -MD_E_NOSYM;
	r = tgt_read(t, a_state, &h->state, sizeof(h->state));
	if (!r)
		r = tgt_read(t, a_size, &h->size, sizeof(h->size));
	if (!r)
		r = tgt_read(t, a_table, &h->table, sizeof(h->table));
	return r;
}

static enum pt_kind classify(struct tgt *t, pt_lookup_fn lookup, void *ctx,
			     struct pt_head *h)
{
	uint64_t a;
	int r;

	/* A rank carries libopen-rte's empty table too: libmpi first. */
	if (lookup(ctx, t, "MPIR_dll_name", &a) == 0 ||
	    lookup(ctx, t, "ompi_mpi_comm_world", &a) == 0)
		return PT_RANK;
	r = read_head(t, lookup, ctx, h);
	if (r == -MD_E_NOSYM)
		return PT_OTHER;
	if (r < 0 || h->state != 1 || h->size <= 0 || !h->table)
		return PT_STARTER_EARLY;
	return PT_STARTER;
}

static void fill_proc(struct tgt *starter, struct pt_proc *p,
		      const char *ours)
{
	struct tgt *rank = NULL;

	p->local = pt_host_is_local(p->host, ours);
	/* The table's executable_name is not normalised ("/dir/./app"). */
	if (p->local && p->pid > 0 &&
	    tgt_open_other(starter, p->pid, &rank) == 0 && tgt_exe(rank)) {
		free(p->exe);
		p->exe = xstrdup(tgt_exe(rank));
	}
	tgt_free(rank);
}

static int read_entry(struct tgt *t, const unsigned char *raw,
		      struct pt_proc *p)
{
	uint64_t host, exe;
	int32_t pid;
	int r;

	memcpy(&host, raw, 8);
	memcpy(&exe, raw + 8, 8);
	memcpy(&pid, raw + 16, 4);
	p->pid = pid;
	r = host ? tgt_read_str(t, host, PT_MAX_STR, &p->host) : 0;
	if (!r && exe)
		r = tgt_read_str(t, exe, PT_MAX_STR, &p->exe);
	if (!p->host)
		p->host = xstrdup("");
	if (!p->exe)
		p->exe = xstrdup("");
	return r;
}

static int read_entries(struct tgt *t, const struct pt_head *h,
			struct pt_job *j)
{
	size_t bytes = (size_t)h->size * PT_ENTRY_SIZE;
	unsigned char *raw = xmalloc(bytes);
	char ours[256] = "";
	int r;

	gethostname(ours, sizeof(ours) - 1);
	r = tgt_read(t, h->table, raw, bytes);
	j->procs = xcalloc((size_t)h->size, sizeof(*j->procs));
	j->nranks = h->size;
	for (int i = 0; i < h->size && !r; i++) {
		j->procs[i].rank = i;
		r = read_entry(t, raw + (size_t)i * PT_ENTRY_SIZE,
			       &j->procs[i]);
		fill_proc(t, &j->procs[i], ours);
	}
	free(raw);
	if (r < 0 && r != -MD_E_PERM)
		md_error("reading MPIR_proctable (%d entries at 0x%llx) in pid %d: %s",
			 h->size, (unsigned long long)h->table, tgt_pid(t),
			 md_strerror(r));
	return r;
}

static void report_not_ready(int pid, const struct pt_head *h)
{
	md_error("mpirun pid %d: MPIR_debug_state %d, MPIR_proctable_size %d: "
		 "ranks not yet past MPI_Init: try again in a moment",
		 pid, h->state, h->size);
}

int pt_read_table(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		  struct pt_job **out)
{
	struct pt_head h = { 0 };
	struct pt_job *j;
	int r;

	r = read_head(t, lookup, ctx, &h);
	if (r == -MD_E_NOSYM) {
		md_error("pid %d has no MPIR_proctable: not an Open MPI 4 mpirun "
			 "(Open MPI 5's mpirun has no MPIR table)",
			 tgt_pid(t));
		return r;
	}
	if (r < 0) {
		if (r != -MD_E_PERM)
			md_error("reading the MPIR symbols of pid %d: %s",
				 tgt_pid(t), md_strerror(r));
		return r;
	}
	if (h.state != 1 || h.size <= 0 || !h.table) {
		report_not_ready(tgt_pid(t), &h);
		return -MD_E_NOTREADY;
	}
	if (h.size > PT_MAX_RANKS) {
		md_error("pid %d: MPIR_proctable_size %d is not believable",
			 tgt_pid(t), h.size);
		return -MD_E_INPUT;
	}
	j = xcalloc(1, sizeof(*j));
	j->starter_pid = tgt_pid(t);
	j->given_pid = tgt_pid(t);
	j->given_rank = -1;
	if (tgt_exe(t))
		j->starter_exe = xstrdup(tgt_exe(t));
	r = read_entries(t, &h, j);
	if (r < 0) {
		pt_job_free(j);
		return r;
	}
	*out = j;
	return 0;
}

/* The user's pid was neither a starter nor under one. */
static int report_not_mpi(int pid, const char *comm, bool rank_seen)
{
	if (!rank_seen && pt_is_launcher(comm))
		md_error("pid %d (%s) has no MPIR process table: Open MPI 5 "
			 "and later replaced MPIR with the PMIx tool interface, "
			 "which is not supported: mpi-deadlock needs the "
			 "mpirun of Open MPI 4.x",
			 pid, comm);
	else if (rank_seen)
		md_error("pid %d (%s) is an MPI rank but no parent of it is an "
			 "MPI starter with an MPIR process table (a singleton "
			 "without mpirun, Open MPI 5, or a launcher such as "
			 "srun): give the pid of an Open MPI 4 mpirun",
			 pid, comm);
	else
		md_error("pid %d (%s) is not an MPI starter or rank: give the "
			 "pid of mpirun, e.g. pgrep -P %d or pgrep -x mpirun",
			 pid, comm, pid);
	return -MD_E_NOTMPI;
}

static int find_given_rank(const struct pt_job *j, int pid)
{
	for (int i = 0; i < j->nranks; i++)
		if (j->procs[i].pid == pid)
			return i;
	return -1;
}

/*
 * An Open MPI mpirun whose table is not filled yet (a rank is not past
 * MPI_Init, and may never be: a read that hangs before it): its ranks on
 * this host are its children, each with OMPI_COMM_WORLD_RANK and _SIZE.
 * Returns 0 and *out when every rank is one of them, else 1.
 */
static int children_job(struct tgt *t, struct pt_job **out)
{
	struct pt_job *j = xcalloc(1, sizeof(*j));
	char host[256] = "";
	int found = 0;

	*out = NULL;
	gethostname(host, sizeof(host) - 1);
	pt_add_children(t, j, host, "OMPI_COMM_WORLD_RANK",
			"OMPI_COMM_WORLD_SIZE");
	for (int i = 0; i < j->nranks; i++) {
		j->procs[i].rank = i;
		found += j->procs[i].pid > 0;
	}
	if (!j->nranks || found < j->nranks) {
		pt_job_free(j);
		return 1;
	}
	j->starter_pid = tgt_pid(t);
	if (tgt_exe(t))
		j->starter_exe = xstrdup(tgt_exe(t));
	j->note = xasprintf("mpirun pid %d has not filled its MPIR process "
			    "table: a rank is not past MPI_Init (the ranks "
			    "were found as its children, by "
			    "OMPI_COMM_WORLD_RANK)", tgt_pid(t));
	*out = j;
	return 0;
}

/*
 * Up from t (borrowed) to the starter: the first process with a filled
 * table, opened through the ops (*starter, the caller's; NULL if none),
 * or one whose table is not filled yet but whose children are all the
 * ranks (*job then set).  Returns 0, or -MD_E_NOTREADY (reported).
 */
static int walk_up(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		   struct tgt **starter, bool *rank_seen, struct pt_job **job)
{
	struct tgt *cur = t, *next;
	struct tgt_stat st;
	struct pt_head h;

	*starter = NULL;
	for (int depth = 0; depth < PT_MAX_DEPTH && cur; depth++) {
		enum pt_kind k;

		if (tgt_stat(cur, &st) < 0)
			break;
		k = classify(cur, lookup, ctx, &h);
		if (k == PT_STARTER) {
			*starter = cur;
			return 0;
		}
		/* A launcher's daemon may carry the launcher's MPIR code
		 * with an empty table (Open MPI's orted, Hydra's proxy). */
		if (k == PT_STARTER_EARLY &&
		    pt_daemon_mpi(st.comm) == COL_MPI_NONE) {
			/* Its children may still tell the ranks. */
			if (children_job(cur, job) == 0) {
				*starter = cur;
				return 0;
			}
			report_not_ready(tgt_pid(cur), &h);
			if (cur != t)
				tgt_free(cur);
			return -MD_E_NOTREADY;
		}
		*rank_seen |= k == PT_RANK;
		next = NULL;
		/* Only a rank (or a daemon above it) leads up to the
		 * starter. */
		if ((k != PT_OTHER || *rank_seen) && st.ppid > 1)
			tgt_open_other(cur, st.ppid, &next);
		if (cur != t)
			tgt_free(cur);
		cur = next;
	}
	if (cur != t)
		tgt_free(cur);
	return 0;
}

int pt_acquire_from(struct tgt *t, pt_lookup_fn lookup, void *ctx,
		    struct pt_job **out)
{
	struct tgt_stat st = { .comm = "?" };
	struct tgt *starter = NULL;
	struct pt_job *early = NULL;
	bool rank_seen = false;
	int r;

	if (tgt_stat(t, &st) < 0) {
		md_error("no process with pid %d", tgt_pid(t));
		return -MD_E_NOSUCH;
	}
	r = walk_up(t, lookup, ctx, &starter, &rank_seen, &early);
	if (r < 0)
		return r;
	if (early) {
		*out = early;
		r = 0;
	} else if (!starter) {
		/* Hydra without a table: its proxies know the ranks. */
		r = pt_hydra_job(t, out);
		if (r > 0)
			return report_not_mpi(tgt_pid(t), st.comm, rank_seen);
	} else {
		r = pt_read_table(starter, lookup, ctx, out);
	}
	if (starter != t)
		tgt_free(starter);
	if (r < 0)
		return r;
	(*out)->given_pid = tgt_pid(t);
	(*out)->given_rank = find_given_rank(*out, tgt_pid(t));
	return 0;
}

int pt_acquire(int pid, pt_lookup_fn lookup, void *ctx, struct pt_job **out)
{
	struct tgt_stat st;
	struct tgt *t;
	int r;

	if (pid <= 0 || tgt_proc_stat(pid, &st) < 0) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	r = tgt_check_access(pid);
	if (r < 0)
		return r;
	r = tgt_open(pid, &t);
	if (r < 0)
		return r;
	r = pt_acquire_from(t, lookup, ctx, out);
	tgt_free(t);
	return r;
}

/*
 * The one list of MPI launchers and the one of their daemons, by the
 * name a process runs as (its comm, or its executable's base name).
 * Debian's mpirun is a link to orterun, so /proc/PID/exe names orterun
 * where comm says mpirun; oshrun is Open MPI's OpenSHMEM mpirun; prte
 * and prterun are PRRTE's (Open MPI 5).  srun is Slurm's, not an MPI
 * launcher: slurm.c knows it.
 */
static const struct pt_name {
	const char *name;
	enum col_mpi mpi;
} launchers[] = {
	{ "mpirun", COL_MPI_EITHER },	    { "mpiexec", COL_MPI_EITHER },
	{ "orterun", COL_MPI_OPENMPI },	    { "prterun", COL_MPI_OPENMPI },
	{ "prte", COL_MPI_OPENMPI },	    { "oshrun", COL_MPI_OPENMPI },
	{ "mpiexec.hydra", COL_MPI_HYDRA },
}, daemons[] = {
	{ "orted", COL_MPI_OPENMPI },	    { "prted", COL_MPI_OPENMPI },
	{ PT_HYDRA_PROXY, COL_MPI_HYDRA },
};

static enum col_mpi name_in(const struct pt_name *names, size_t n,
			    const char *name)
{
	const char *b;

	if (!name)
		return COL_MPI_NONE;
	b = strrchr(name, '/');
	b = b ? b + 1 : name;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(b, names[i].name))
			return names[i].mpi;
	return COL_MPI_NONE;
}

enum col_mpi pt_launcher_mpi(const char *name)
{
	return name_in(launchers, sizeof(launchers) / sizeof(*launchers),
		       name);
}

bool pt_is_launcher(const char *name)
{
	return pt_launcher_mpi(name) != COL_MPI_NONE;
}

enum col_mpi pt_daemon_mpi(const char *name)
{
	return name_in(daemons, sizeof(daemons) / sizeof(*daemons), name);
}

/* Level by level: the nearest launcher is the one that matters. */
int pt_find_starter(struct tgt *job)
{
	int *level = xmalloc(sizeof(int)), n = 1, found = tgt_pid(job);
	struct tgt_stat st;

	if (tgt_stat(job, &st) == 0 && pt_is_launcher(st.comm)) {
		free(level);
		return found;
	}
	level[0] = tgt_pid(job);
	for (int depth = 0; depth < PT_MAX_WRAP_DEPTH && n > 0; depth++) {
		int *next = NULL, m = 0;

		for (int i = 0; i < n && found == tgt_pid(job); i++) {
			struct tgt *p = NULL;
			int *kids = NULL, nk = 0;

			if ((level[i] == tgt_pid(job) ? 0 :
			     tgt_open_other(job, level[i], &p)) < 0 ||
			    tgt_children(p ? p : job, &kids, &nk) < 0) {
				tgt_free(p);
				continue;
			}
			next = xrealloc(next, (size_t)(m + nk + 1) * sizeof(int));
			for (int k = 0; k < nk; k++) {
				struct tgt *c = NULL;

				if (found == tgt_pid(job) &&
				    tgt_open_other(job, kids[k], &c) == 0 &&
				    tgt_stat(c, &st) == 0 &&
				    pt_is_launcher(st.comm))
					found = kids[k];
				tgt_free(c);
				next[m++] = kids[k];
			}
			free(kids);
			tgt_free(p);
		}
		free(level);
		level = next;
		n = found == tgt_pid(job) ? m : 0;
	}
	free(level);
	return found;
}
