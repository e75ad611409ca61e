/*
 * track.c - what libmdtrack.so's records (snap_track_rec) add to a
 * verdict: where each pending request of a stuck rank was posted, and
 * how the members of a stuck collective disagree.  Without records
 * (a job started without the library) both lists are empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "anl_int.h"
#include "calls.h"
#include "md.h"

static bool stuck(const struct anl_result *r, int i)
{
	return r->ranks[i].role == ANL_ROLE_DEADLOCKED ||
	       r->ranks[i].role == ANL_ROLE_BEHIND;
}

/* The latest record of kind with request req, NULL if none. */
static const struct snap_track_rec *find_req(const struct snap_rank *sr,
					     enum snap_track_kind kind,
					     uint64_t req)
{
	const struct snap_track_rec *best = NULL;

	for (int i = 0; i < sr->ntrack; i++) {
		const struct snap_track_rec *t = &sr->track[i];

		if (t->kind == kind && t->request == req &&
		    (!best || t->seq > best->seq))
			best = t;
	}
	return best;
}

static bool is_start(const struct snap_track_rec *t)
{
	return !strcmp(t->call, "MPI_Start") || !strcmp(t->call, "MPI_Startall");
}

/*
 * The nonblocking collective that a rank waiting on requests (MPI_Wait*,
 * MPI_Test*) has in progress on the communicator of its pending internal
 * request op (ob1's queues show a collective's internal requests, never
 * the user's request): the rank's latest collective record there, when
 * it is a nonblocking one.  NULL if none.
 */
const struct snap_track_rec *anl_op_nbc(const struct snap_rank *sr,
				       const struct snap_op *op)
{
	enum md_call_class cls = anl_call_class(sr->mpi_call);
	const struct snap_track_rec *last = NULL;

	if (!md_call_on_requests(cls) || !anl_op_internal(op) ||
	    op->status != SNAP_ST_PENDING || op->comm < 0)
		return NULL;
	for (int k = 0; k < sr->ntrack; k++) {
		const struct snap_track_rec *t = &sr->track[k];

		if (t->kind == SNAP_TRACK_COLL && t->comm == op->comm &&
		    (!last || t->seq > last->seq))
			last = t;
	}
	return last && !strncmp(last->call, "MPI_I", 5) ? last : NULL;
}

static void push(struct anl_posting **v, int *n, int *cap,
		 struct anl_posting p)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		*v = xrealloc(*v, (size_t)*cap * sizeof(**v));
	}
	(*v)[(*n)++] = p;
}

/* A thread of the rank waits on requests (MPI_Wait*, or polls them):
 * only then does it wait for a request the program posted.  One in
 * MPI_Recv or MPI_Barrier waits for its call's own. */
static bool waits_on_requests(const struct snap_rank *sr)
{
	if (md_call_on_requests(anl_call_class(sr->mpi_call)))
		return true;
	for (int t = 0; t < sr->nthreads; t++)
		if (!sr->threads[t].progress_thread &&
		    md_call_on_requests(anl_call_class(sr->threads[t].mpi_call)))
			return true;
	return false;
}

int anl_postings(const struct anl_result *r, struct anl_posting **out)
{
	struct anl_posting *v = NULL;
	int n = 0, cap = 0;

	for (int i = 0; i < r->nranks; i++) {
		const struct snap_rank *sr = &r->s->ranks[i];
		int first = n;

		if (!sr->ntrack || !stuck(r, i) || !waits_on_requests(sr))
			continue;
		for (int k = 0; k < sr->nops; k++) {
			const struct snap_op *op = &sr->ops[k];
			struct anl_posting p = { .rank = i, .op = k };
			bool dup = false;

			if (op->kind == SNAP_OP_UNEXPECTED ||
			    op->status != SNAP_ST_PENDING)
				continue;
			p.post = op->request ? find_req(sr, SNAP_TRACK_POST,
							op->request) : NULL;
			if (op->request && (!p.post || is_start(p.post)))
				p.init = find_req(sr, SNAP_TRACK_INIT,
						  op->request);
			/* A collective's internal request: the nonblocking
			 * collective it serves, once. */
			if (!p.post && !p.init && (p.post = anl_op_nbc(sr, op)))
				for (int q = first; q < n; q++)
					dup |= v[q].post == p.post;
			if ((!p.post && !p.init) || dup)
				continue;
			push(&v, &n, &cap, p);
		}
	}
	*out = v;
	return n;
}

/* "a.c:61", "in main", or "at an unknown place" (malloc'ed). */
char *anl_track_site(const struct snap_track_rec *t)
{
	if (t->file && t->line > 0)
		return xasprintf("%s:%d", t->file, t->line);
	if (t->func)
		return xasprintf("in %s", t->func);
	return xstrdup("an unknown place");
}

/* A record's peer as a global rank, -1 if it cannot be told. */
int anl_track_peer_global(const struct anl_result *r,
			  const struct snap_track_rec *t)
{
	if (t->peer < 0 || t->comm < 0)
		return -1;
	return snap_comm_peer(r->s, t->comm, t->peer);
}

/* The communicator a record names, for a person. */
char *anl_track_comm(const struct anl_result *r, const struct snap_track_rec *t)
{
	if (t->comm >= 0)
		return xstrdup(anl_comm_name(r, t->comm));
	if (t->comm_name)
		return xstrdup(t->comm_name);
	if (t->comm_handle)
		return xasprintf("communicator 0x%llx",
				 (unsigned long long)t->comm_handle);
	return xstrdup("an unknown communicator");
}

static bool is_world(const struct anl_result *r, const struct snap_track_rec *t)
{
	return (t->comm >= 0 && t->comm == r->world) ||
	       (t->comm < 0 && t->comm_name &&
		!strcmp(t->comm_name, "MPI_COMM_WORLD"));
}

bool anl_call_sends(const char *call)
{
	return strstr(call, "send") || strstr(call, "Send");
}

/* ", tag 1 from rank 0" / ", any tag to rank 3 (local 1)", on comm. */
static char *peer_text(const struct anl_result *r,
		       const struct snap_track_rec *t)
{
	char *tag, *peer, *comm = NULL, *out;
	int g = anl_track_peer_global(r, t);
	const char *dir = anl_call_sends(t->call) ? "to" : "from";

	if (t->tag == SNAP_TRACK_ANY)
		tag = xstrdup(", any tag");
	else if (t->tag != SNAP_TRACK_NONE)
		tag = xasprintf(", tag %d", t->tag);
	else
		tag = xstrdup("");
	if (t->peer == SNAP_TRACK_ANY)
		peer = xasprintf(" %s any source", dir);
	else if (t->peer == SNAP_TRACK_PROC_NULL)
		peer = xasprintf(" %s MPI_PROC_NULL", dir);
	else if (t->peer == SNAP_TRACK_NONE || t->peer < 0)
		peer = xstrdup("");
	else if (g >= 0 && g != t->peer)
		peer = xasprintf(" %s rank %d (local %d)", dir, g, t->peer);
	else if (g >= 0 || is_world(r, t))
		peer = xasprintf(" %s rank %d", dir, t->peer);
	else
		peer = xasprintf(" %s local rank %d", dir, t->peer);
	if (!is_world(r, t)) {
		char *c = anl_track_comm(r, t);

		comm = xasprintf(" on %s", c);
		free(c);
	}
	out = xasprintf("%s%s%s", tag, peer, comm ? comm : "");
	free(tag);
	free(peer);
	free(comm);
	return out;
}

/* ", root 0 on comm", "" (a nonblocking collective's record). */
static char *coll_text(const struct anl_result *r,
		       const struct snap_track_rec *t)
{
	char *root = t->peer >= 0 ? xasprintf(", root %d", t->peer)
				  : xstrdup("");
	char *c = is_world(r, t) ? NULL : anl_track_comm(r, t);
	char *out = xasprintf("%s%s%s", root, c ? " on " : "", c ? c : "");

	free(root);
	free(c);
	return out;
}

char *anl_posting_text(const struct anl_result *r, const struct anl_posting *p)
{
	const struct snap_track_rec *made = p->init ? p->init : p->post;
	char *wait = anl_site(r, p->rank), *at = anl_track_site(made);
	char *args = made->kind == SNAP_TRACK_COLL ? coll_text(r, made)
						   : peer_text(r, made);
	char *start = NULL, *out;

	if (p->init && p->post) {
		char *s = anl_track_site(p->post);

		start = xasprintf(" (started by %s at %s)", p->post->call, s);
		free(s);
	}
	out = xasprintf("rank %d waits in %s for the %s posted at %s%s%s",
			p->rank, wait, made->call, at, start ? start : "",
			args);
	free(wait);
	free(at);
	free(args);
	free(start);
	return out;
}

/* Collectives ---------------------------------------------------------- */

const struct snap_track_rec *anl_coll_last(const struct snap_rank *sr,
					   int comm)
{
	const struct snap_track_rec *last = NULL;

	for (int k = 0; k < sr->ntrack; k++) {
		const struct snap_track_rec *t = &sr->track[k];

		if (t->kind == SNAP_TRACK_COLL &&
		    (comm == ANL_ANY_COMM || t->comm == comm) &&
		    (!last || t->seq > last->seq))
			last = t;
	}
	return last;
}

/* The rank's latest collective record, NULL if none. */
static const struct snap_track_rec *latest_coll(const struct snap_rank *sr)
{
	return anl_coll_last(sr, ANL_ANY_COMM);
}

/* The collective a stuck rank is in, from its latest collective record:
 * the call it is in, or a nonblocking one it waits for. */
static const struct snap_track_rec *current_coll(const struct anl_result *r,
						 int i)
{
	const struct snap_rank *sr = &r->s->ranks[i];
	const struct snap_track_rec *last = latest_coll(sr);
	enum md_call_class cls = anl_call_class(sr->mpi_call);

	if (!last)
		return NULL;
	if (md_call_collective(cls) && cls != MD_CALL_FINALIZE &&
	    !strcmp(last->call, sr->mpi_call))
		return last;
	if (md_call_on_requests(cls) && cls != MD_CALL_POLL &&
	    !strncmp(last->call, "MPI_I", 5))
		return last;
	return NULL;
}

int anl_track_coll_comm(const struct snap_rank *sr)
{
	const struct snap_track_rec *t = latest_coll(sr);
	enum md_call_class cls = anl_call_class(sr->mpi_call);

	if (!t || t->comm < 0 || !sr->mpi_call || !md_call_collective(cls) ||
	    cls == MD_CALL_FINALIZE || strcmp(t->call, sr->mpi_call))
		return -1;
	/* The record was made by the call on the stack (not by an earlier
	 * one of the same name elsewhere): its site, when both have one. */
	if (t->file && sr->call_file && t->line > 0 && sr->call_line > 0 &&
	    (t->line != sr->call_line || strcmp(t->file, sr->call_file)))
		return -1;
	return t->comm;
}

enum { D_CALL = 1, D_ROOT = 2, D_COUNT = 4, D_TYPE = 8, D_OP = 16,
       D_COMM = 32 };

/* What two records disagree on (fields either does not have are not
 * compared: a barrier has no root, a derived datatype no name). */
/* The vector collectives, whose counts differ from rank to rank. */
static bool counts_per_rank(const char *call)
{
	size_t n = strlen(call);

	return (n > 1 && call[n - 1] == 'v') || (n > 1 && call[n - 1] == 'w') ||
	       strstr(call, "Reduce_scatter") != NULL ||
	       strstr(call, "educe_scatter") != NULL;
}

static unsigned differ(const struct anl_result *r,
		       const struct snap_track_rec *a,
		       const struct snap_track_rec *b)
{
	unsigned d = 0;

	/* Ranks at different collectives of one communicator disagree on
	 * where they are; in a deadlock that is where they parted, but
	 * while a member still goes on (a slow rank), the others only went
	 * on first. */
	if (a->ncalls && b->ncalls && a->ncalls != b->ncalls &&
	    r->verdict != ANL_DEADLOCK)
		return 0;
	if (strcmp(a->call, b->call))
		return D_CALL;
	if (a->peer != b->peer && a->peer != SNAP_TRACK_NONE &&
	    b->peer != SNAP_TRACK_NONE)
		d |= D_ROOT;
	/* Counts compare in one predefined datatype only (4 MPI_INT match
	 * 1 of a contiguous type of 4), and never for the vector calls. */
	if (a->count != b->count && a->count && b->count &&
	    !counts_per_rank(a->call) && a->datatype_name &&
	    b->datatype_name && !strcmp(a->datatype_name, b->datatype_name))
		d |= D_COUNT;
	if (a->datatype_name && b->datatype_name &&
	    strcmp(a->datatype_name, b->datatype_name))
		d |= D_TYPE;
	if (a->op_name && b->op_name && strcmp(a->op_name, b->op_name))
		d |= D_OP;
	if (a->comm >= 0 && b->comm >= 0 ? a->comm != b->comm
	    : is_world(r, a) != is_world(r, b) && (a->comm >= 0 || a->comm_name) &&
	      (b->comm >= 0 || b->comm_name))
		d |= D_COMM;
	return d;
}

static bool same_group(const struct snap_track_rec *a,
		       const struct snap_track_rec *b)
{
	return !strcmp(a->call, b->call) && a->peer == b->peer &&
	       a->count == b->count && a->line == b->line &&
	       (a->file == b->file ||
		(a->file && b->file && !strcmp(a->file, b->file))) &&
	       (a->datatype_name == b->datatype_name ||
		(a->datatype_name && b->datatype_name &&
		 !strcmp(a->datatype_name, b->datatype_name))) &&
	       (a->op_name == b->op_name ||
		(a->op_name && b->op_name && !strcmp(a->op_name, b->op_name))) &&
	       a->comm == b->comm;
}

static void add_rank(struct anl_coll_group *g, int rank)
{
	if ((g->nranks & (g->nranks - 1)) == 0)
		g->ranks = xrealloc(g->ranks, (size_t)(g->nranks ? 2 * g->nranks
								 : 1) *
						      sizeof(int));
	g->ranks[g->nranks++] = rank;
}

static void free_one(struct anl_disagree *d)
{
	for (int g = 0; g < d->ngroups; g++)
		free(d->groups[g].ranks);
	free(d->groups);
}

/* The groups of one set of ranks that should meet, if they disagree. */
static bool split(const struct anl_result *r, const int *members, int n,
		  const struct snap_track_rec *const *cur,
		  struct anl_disagree *d)
{
	memset(d, 0, sizeof(*d));
	for (int k = 0; k < n; k++) {
		const struct snap_track_rec *t = cur[members[k]];
		int g;

		for (g = 0; g < d->ngroups; g++)
			if (same_group(d->groups[g].rec, t))
				break;
		if (g == d->ngroups) {
			d->groups = xrealloc(d->groups, (size_t)(g + 1) *
							       sizeof(*d->groups));
			memset(&d->groups[g], 0, sizeof(d->groups[g]));
			d->groups[g].rec = t;
			d->ngroups++;
		}
		add_rank(&d->groups[g], members[k]);
	}
	for (int a = 0; a < d->ngroups; a++)
		for (int b = a + 1; b < d->ngroups; b++)
			d->differ |= differ(r, d->groups[a].rec,
					    d->groups[b].rec);
	if (d->differ)
		return true;
	free_one(d);
	return false;
}

/* The communicator rank i's collective is on, -1 if not known (or its
 * group not read). */
static int coll_comm(const struct anl_result *r,
		     const struct snap_track_rec *const *cur, int i)
{
	int c = cur[i]->comm >= 0 ? cur[i]->comm
		: is_world(r, cur[i]) ? r->world : -1;

	return c >= 0 && r->s->comms[c].group ? c : -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The members of communicator c in a collective (cur), sorted. */
static int comm_set(const struct anl_result *r,
		    const struct snap_track_rec *const *cur, int c, int *out)
{
	const struct snap_comm *sc = &r->s->comms[c];
	int n = 0;

	for (int m = 0; m < sc->size; m++) {
		int g = sc->group[m];

		if (g >= 0 && g < r->nranks && cur[g])
			out[n++] = g;
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_int);
	/* A group lists each rank once (the reader checks). */
	return n;
}

/* Do the ranks in a collective on one communicator (home, n of them)
 * disagree among themselves? */
static bool home_differs(const struct anl_result *r,
			 const struct snap_track_rec *const *cur,
			 const int *home, int n)
{
	struct anl_disagree d;

	if (n < 2 || !split(r, home, n, cur, &d))
		return false;
	free_one(&d);
	return true;
}

/* A collective where stuck ranks are: its communicator and number. */
struct coll_at {
	int comm;
	uint64_t ncalls;
};

static int cmp_at(const void *a, const void *b)
{
	const struct coll_at *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return x->ncalls < y->ncalls ? -1 : x->ncalls > y->ncalls;
}

/*
 * A stuck rank that is in no collective but went past the one where
 * others are stuck (its latest collective on their communicator has the
 * same number, #k): what it called there, which completed for it (two
 * nonblocking collectives of different kinds can match each other's
 * messages), is compared with theirs.  Only with ranks still in #k
 * (their latest record is the one they are in), and by a sorted list:
 * a million ranks stuck point to point cost one pass.
 */
static void went_past(const struct anl_result *r,
		      const struct snap_track_rec **cur)
{
	struct coll_at *at, key;
	const struct snap_track_rec **past;
	int n = 0;

	at = xmalloc(((size_t)r->nranks + 1) * sizeof(*at));
	for (int j = 0; j < r->nranks; j++)
		if (cur[j] && cur[j]->comm >= 0 && cur[j]->ncalls &&
		    latest_coll(&r->s->ranks[j]) == cur[j])
			at[n++] = (struct coll_at){ cur[j]->comm,
						    cur[j]->ncalls };
	if (!n) {
		free(at);
		return;
	}
	qsort(at, (size_t)n, sizeof(*at), cmp_at);
	past = xcalloc((size_t)r->nranks, sizeof(*past));
	for (int i = 0; i < r->nranks; i++) {
		const struct snap_track_rec *t;

		if (cur[i] || !r->s->ranks[i].ntrack || !stuck(r, i))
			continue;
		t = latest_coll(&r->s->ranks[i]);
		if (!t || t->comm < 0 || !t->ncalls)
			continue;
		key = (struct coll_at){ t->comm, t->ncalls };
		if (bsearch(&key, at, (size_t)n, sizeof(*at), cmp_at))
			past[i] = t;
	}
	for (int i = 0; i < r->nranks; i++)
		if (past[i])
			cur[i] = past[i];
	free(past);
	free(at);
}

/* The sets told so far, by a hash of their ranks, to tell each once
 * (communicators of one group: a duplicate and its original). */
struct told_set {
	uint64_t key;
	int n;
	int *ranks;
	struct told_set *same;	/* another set of the same key */
	UT_hash_handle hh;
};

static uint64_t set_key(const int *members, int nm)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (int k = 0; k < nm; k++) {
		h ^= (uint32_t)members[k];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Was the set told?  If not, it is now. */
static bool told(struct told_set **table, const int *members, int nm)
{
	uint64_t key = set_key(members, nm);
	struct told_set *t, *first;

	HASH_FIND(hh, *table, &key, sizeof(key), first);
	for (t = first; t; t = t->same)
		if (t->n == nm &&
		    !memcmp(t->ranks, members, (size_t)nm * sizeof(int)))
			return true;
	t = xcalloc(1, sizeof(*t));
	t->key = key;
	t->n = nm;
	t->ranks = xmalloc((size_t)nm * sizeof(int));
	memcpy(t->ranks, members, (size_t)nm * sizeof(int));
	if (first) {
		t->same = first->same;
		first->same = t;
	} else {
		HASH_ADD(hh, *table, key, sizeof(key), t);
	}
	return false;
}

static void told_free(struct told_set *table)
{
	struct told_set *t, *tmp, *n;

	HASH_ITER(hh, table, t, tmp) {
		HASH_DEL(table, t);
		for (; t; t = n) {
			n = t->same;
			free(t->ranks);
			free(t);
		}
	}
}

static void add_disagree(struct anl_disagree **v, int *n,
			 const struct anl_disagree *d)
{
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof(**v));
	(*v)[(*n)++] = *d;
}

/*
 * Each communicator some rank is in a collective on is one set: its
 * members, wherever they are (a member in a collective on another
 * communicator went past this one, or has not come yet).  A set is told
 * when its ranks on the communicator disagree among themselves, or when
 * a member is on another communicator whose own ranks agree (the two
 * communicators must meet in one order: interleaved collectives); a
 * member elsewhere whose communicator disagrees within is told there,
 * not again on every communicator it is a member of.  Equal sets are
 * told once.  A rank whose communicator is not known may meet any
 * other: then all are one set.
 */
int anl_disagreements(const struct anl_result *r, struct anl_disagree **out)
{
	int nr = r->nranks, nc = r->s->ncomms, n = 0, nm;
	const struct snap_track_rec **cur = xcalloc((size_t)nr + 1,
						    sizeof(*cur));
	int *members = xmalloc(((size_t)nr + 1) * sizeof(int));
	/* The ranks in a collective on communicator c, in rank order:
	 * home[at[c] .. at[c + 1]); differs[c]: they disagree. */
	int *home = xmalloc(((size_t)nr + 1) * sizeof(int));
	int *at = xcalloc((size_t)nc + 2, sizeof(int));
	bool *differs = xcalloc((size_t)nc + 1, sizeof(bool));
	struct anl_disagree *v = NULL, d;
	struct told_set *sets = NULL;
	bool unknown = false;

	/* Also ranks that are all in one collective (not a wait-for
	 * deadlock) but did not move: arguments that disagree say why. */
	for (int i = 0; i < nr; i++)
		if (r->s->ranks[i].ntrack &&
		    (stuck(r, i) ||
		     (r->ranks[i].role != ANL_ROLE_GONE &&
		      r->ranks[i].role != ANL_ROLE_UNKNOWN &&
		      r->s->ranks[i].progress == SNAP_PROGRESS_STABLE)))
			cur[i] = current_coll(r, i);
	went_past(r, cur);
	for (int i = 0; i < nr; i++) {
		int c;

		if (!cur[i])
			continue;
		c = coll_comm(r, cur, i);
		if (c < 0)
			unknown = true;
		else
			at[c + 2]++;
	}
	if (unknown) {
		nm = 0;
		for (int i = 0; i < nr; i++)
			if (cur[i])
				members[nm++] = i;
		if (nm > 1 && split(r, members, nm, cur, &d))
			add_disagree(&v, &n, &d);
		goto done;
	}
	/* Counts to offsets (at[c + 1] is where c's ranks go), then the
	 * ranks in, which leaves at[c] where they start. */
	for (int c = 0; c < nc; c++)
		at[c + 2] += at[c + 1];
	for (int i = 0; i < nr; i++)
		if (cur[i])
			home[at[coll_comm(r, cur, i) + 1]++] = i;
	for (int c = 0; c < nc; c++)
		differs[c] = home_differs(r, cur, home + at[c],
					  at[c + 1] - at[c]);
	for (int c = 0; c < nc; c++) {
		bool tell = differs[c];

		if (at[c + 1] == at[c] ||
		    (nm = comm_set(r, cur, c, members)) < 2)
			continue;
		for (int k = 0; !tell && k < nm; k++) {
			int b = coll_comm(r, cur, members[k]);

			tell = b != c && !differs[b];
		}
		if (!tell || told(&sets, members, nm) ||
		    !split(r, members, nm, cur, &d))
			continue;
		add_disagree(&v, &n, &d);
	}
done:
	told_free(sets);
	free(differs);
	free(at);
	free(home);
	free(members);
	free(cur);
	*out = v;
	return n;
}

void anl_disagree_free(struct anl_disagree *v, int n)
{
	for (int i = 0; i < n; i++)
		free_one(&v[i]);
	free(v);
}

/* " with root 0, count 4, MPI_INT, MPI_SUM on row" for what differs. */
static char *args_text(const struct anl_result *r,
		       const struct snap_track_rec *t, unsigned d)
{
	char buf[512] = "", *comm;
	size_t len = 0;
	const char *sep = " with ";

#define PUT(...)                                                            \
	do {                                                                \
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,       \
					"%s", sep);                         \
		if (len < sizeof(buf))                                      \
			len += (size_t)snprintf(buf + len,                  \
						sizeof(buf) - len,          \
						__VA_ARGS__);               \
		sep = ", ";                                                 \
	} while (0)
	if ((d & D_ROOT) && t->peer != SNAP_TRACK_NONE)
		PUT("root %d", t->peer);
	if ((d & D_COUNT) && len < sizeof(buf))
		PUT("count %d", t->count);
	if ((d & D_TYPE) && t->datatype_name && len < sizeof(buf))
		PUT("%s", t->datatype_name);
	if ((d & D_OP) && t->op_name && len < sizeof(buf))
		PUT("%s", t->op_name);
#undef PUT
	if ((d & D_COMM) && len < sizeof(buf)) {
		comm = anl_track_comm(r, t);
		snprintf(buf + len, sizeof(buf) - len, " on %s", comm);
		free(comm);
	}
	return xstrdup(buf);
}

/*
 * When the groups, on one communicator, have called different numbers of
 * collectives on it: "; ranks 1-2 went past collective #1 on
 * MPI_COMM_WORLD, where rank 0 still is (its MPI_Allreduce at a.c:11):
 * they parted there (the calls, roots or counts of that collective
 * differ)".  The calls shown are then not where they parted: an eager
 * MPI_Reduce completes at a non-root, a root's MPI_Scatterv with a count
 * of 0 at the others.  "" otherwise.
 */
static char *count_text(const struct anl_result *r,
			const struct anl_disagree *d)
{
	const struct anl_coll_group *low = NULL;
	struct anl_ranges past;
	char *out, *comm, *at, *who;

	if (d->differ & D_COMM)
		return xstrdup("");
	for (int g = 0; g < d->ngroups; g++) {
		if (!d->groups[g].rec->ncalls)
			return xstrdup("");
		if (!low || d->groups[g].rec->ncalls < low->rec->ncalls)
			low = &d->groups[g];
	}
	anl_ranges_init(&past);
	for (int g = 0; g < d->ngroups; g++)
		if (d->groups[g].rec->ncalls > low->rec->ncalls)
			for (int k = 0; k < d->groups[g].nranks; k++)
				anl_ranges_add(&past, d->groups[g].ranks[k]);
	if (!past.count) {
		anl_ranges_free(&past);
		return xstrdup("");
	}
	comm = anl_track_comm(r, low->rec);
	at = anl_track_site(low->rec);
	who = anl_ranks_text(low->ranks, low->nranks);
	out = xasprintf("; %s %s went past collective #%llu on %s, where %s "
			"still %s (%s %s at %s): they parted there (the "
			"calls, roots or counts of that collective differ)",
			past.count == 1 ? "rank" : "ranks",
			anl_ranges_str(&past),
			(unsigned long long)low->rec->ncalls, comm, who,
			low->nranks == 1 ? "is" : "are",
			low->nranks == 1 ? "its" : "their", low->rec->call, at);
	free(who);
	free(comm);
	free(at);
	anl_ranges_free(&past);
	return out;
}

char *anl_disagree_text(const struct anl_result *r,
			const struct anl_disagree *d)
{
	char *out = xstrdup(""), *next, *counts;

	for (int g = 0; g < d->ngroups; g++) {
		const struct snap_track_rec *t = d->groups[g].rec;
		char *who = anl_ranks_text(d->groups[g].ranks,
					   d->groups[g].nranks);
		char *args = args_text(r, t, d->differ), *at = anl_track_site(t);
		bool call = g == 0 || strcmp(t->call, d->groups[g - 1].rec->call);

		next = xasprintf("%s%s%s%s%s%s at %s", out, g ? ", " : "", who,
				 call ? " called " : "", call ? t->call : "",
				 args, at);
		free(out);
		out = next;
		free(who);
		free(args);
		free(at);
	}
	counts = count_text(r, d);
	next = xasprintf("%s%s", out, counts);
	free(out);
	free(counts);
	return next;
}
