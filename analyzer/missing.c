/* missing.c - what could not be read or was guessed, as report lines. */
#include <stdlib.h>
#include <string.h>

#include "anl_int.h"
#include "md.h"

/* Not a gap in the data but the one the DLL leaves: the classic
 * mismatched-tag hang.  Beyond the ANL_MISS_* bits of anl_rank.miss. */
enum { MISS_UNEXPECTED = 1 << 14 };

struct mgroup {
	int bit;
	const char *reason;
	struct anl_ranges rs;
};

static const struct {
	int bit;
	const char *text;
} miss_text[] = {
	{ ANL_MISS_UNREAD, "could not be read" },
	{ ANL_MISS_QUEUES, "no message-queue information" },
	{ ANL_MISS_ONELOOK, "blocked in one look only (a slow rank would look "
			    "the same)" },
	{ ANL_MISS_NOOP, "blocked with no pending operation visible; assumed "
			 "to wait for any rank [inferred]" },
	{ ANL_MISS_COLLCOMM, "the collective's communicator is unknown "
			     "(member of several); assumed MPI_COMM_WORLD "
			     "[inferred]" },
	{ ANL_MISS_SEVERAL, "several pending operations could block the "
			    "call; taken as waiting for any of them" },
	{ ANL_MISS_MAYBE, "may also be deadlocked, depending on the missing "
			  "data" },
	{ ANL_MISS_SPIN, "polling (MPI_Test, MPI_Iprobe) at the same call site "
			 "with the same requests pending in every look: taken "
			 "as blocked on them [inferred]" },
	{ ANL_MISS_NOTOPO, "in a neighbour collective on a communicator whose "
			   "topology was not read: taken to wait on every "
			   "member [inferred]" },
	{ ANL_MISS_INTERNAL, "in a collective that no member left between the "
			     "looks; its internal requests (ob1's queues) were "
			     "not read, so one still moving data inside would "
			     "look the same [inferred]" },
	{ ANL_MISS_OUTSIDE, "waits on processes outside the job "
			    "(MPI_Comm_spawn's children, MPI_Comm_connect's "
			    "peers), which are not read: no verdict for it" },
	{ MISS_UNEXPECTED, "receiving from a rank that has gone on to "
			   "MPI_Finalize or exited: a message it sent with "
			   "another tag or communicator may sit in the "
			   "unexpected queue, which this MPI's DLL cannot "
			   "show" },
};

#define NMISS ((int)(sizeof(miss_text) / sizeof(miss_text[0])))

static const char *reason_of(const struct snap_rank *sr, int bit)
{
	if (bit == ANL_MISS_UNREAD)
		return sr->reason ? sr->reason : snap_state_name(sr->state);
	if (bit == ANL_MISS_QUEUES)
		return sr->queues_reason;
	return NULL;
}

/* Groups by (what, reason); reasons are interned, so few and equal
 * pointers, and the scan over groups stays short. */
static struct mgroup *group_for(struct mgroup **g, int *n, int bit,
				const char *reason)
{
	for (int i = *n - 1; i >= 0; i--)
		if ((*g)[i].bit == bit && ((*g)[i].reason == reason ||
		    ((*g)[i].reason && reason && !strcmp((*g)[i].reason, reason))))
			return &(*g)[i];
	*g = xrealloc(*g, ((size_t)*n + 1) * sizeof(**g));
	(*g)[*n].bit = bit;
	(*g)[*n].reason = reason;
	anl_ranges_init(&(*g)[*n].rs);
	return &(*g)[(*n)++];
}

static char *group_line(struct mgroup *m)
{
	const char *what = "";

	for (int k = 0; k < NMISS; k++)
		if (miss_text[k].bit == m->bit)
			what = miss_text[k].text;
	return xasprintf("%s %s: %s%s%s", m->rs.count == 1 ? "rank" : "ranks",
			 anl_ranges_str(&m->rs), what,
			 m->reason ? ": " : "", m->reason ? m->reason : "");
}

static bool finished_peer(const struct snap *s, int peer)
{
	const struct snap_rank *p;

	if (peer < 0 || peer >= s->nranks)
		return false;
	p = &s->ranks[peer];
	return p->state == SNAP_RANK_GONE || p->finalized ||
	       (p->mpi_call && !strcmp(p->mpi_call, "MPI_Finalize"));
}

/* A stuck rank receiving from a rank that is done, with no view of its
 * unexpected queue. */
static bool unexpected_hidden(const struct anl_result *r, int i)
{
	const struct snap_rank *sr = &r->s->ranks[i];
	int role = r->ranks[i].role;

	if ((role != ANL_ROLE_DEADLOCKED && role != ANL_ROLE_BEHIND) ||
	    sr->queues != SNAP_QUEUES_OK || sr->unexpected_available)
		return false;
	for (int k = 0; k < sr->nops; k++)
		if (sr->ops[k].kind == SNAP_OP_RECV &&
		    finished_peer(r->s, sr->ops[k].peer_global))
			return true;
	return false;
}

static bool has_miss(const struct anl_result *r, int i, int bit)
{
	if (bit == MISS_UNEXPECTED)
		return unexpected_hidden(r, i);
	return r->ranks[i].miss & bit;
}

/*
 * The processes mpirun started are one MPI job only if its
 * MPI_COMM_WORLD has them all: a program built with another MPI than the
 * launcher's runs as singletons, each rank 0 of a world of its own.
 */
static char *not_one_job(const struct anl_result *r)
{
	const struct snap_comm *w;
	int job = r->s->job_nranks > 0 ? r->s->job_nranks : r->nranks;

	if (r->world < 0 || r->world >= r->s->ncomms)
		return NULL;
	w = &r->s->comms[r->world];
	if (!w->name || strcmp(w->name, "MPI_COMM_WORLD") || w->size == job)
		return NULL;
	return xasprintf("MPI_COMM_WORLD has %d rank%s, but the launcher "
			 "started %d processes: they are not one MPI job (a "
			 "program built with another MPI than the launcher's, "
			 "e.g. MPICH's mpicc and Open MPI's mpirun?), and each "
			 "is judged as its own", w->size,
			 w->size == 1 ? "" : "s", job);
}

char **anl_missing(const struct anl_result *r, int *n)
{
	struct mgroup *g = NULL;
	int ng = 0;
	char **lines;

	for (int k = 0; k < NMISS; k++) {
		for (int i = 0; i < r->nranks; i++) {
			int bit = miss_text[k].bit;

			if (has_miss(r, i, bit))
				anl_ranges_add(&group_for(&g, &ng, bit,
					reason_of(&r->s->ranks[i], bit))->rs, i);
		}
	}
	lines = xmalloc(((size_t)ng + 2) * sizeof(*lines));
	for (int i = 0; i < ng; i++) {
		lines[i] = group_line(&g[i]);
		anl_ranges_free(&g[i].rs);
	}
	free(g);
	*n = ng;
	if ((lines[ng] = not_one_job(r)))
		(*n)++;
	return lines;
}

void anl_strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
