/*
 * snap.c - the snapshot object: creation, freeing, string interning,
 * job-wide communicators and the names used in files and reports.
 */
#include "snap.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/* Interned strings and the reader's rank arrays live in big chunks: a
 * million equal file names cost one copy, and a million distinct host
 * names cost no malloc each.  Chunks double from 1 KiB to 2 MiB, a huge
 * page (md_huge_pages). */
#define POOL_CHUNK (2 << 20)

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};

/* An open-addressing hash set: slots hold pointers into the chunks (or,
 * for comms, index + 1 into snap.comms); 0 / NULL is empty. */
struct snap_pool {
	struct pool_chunk *chunks;
	const char **strs;
	size_t nstrs, strcap; /* strcap is a power of two */
	int *comm_slots;
	size_t comm_cap; /* a power of two, or 0 */
	int comms_alloc; /* allocated entries of snap.comms */
	int notes_alloc;
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	/* FNV-1a: short keys (names, paths), no need for more. */
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

/* A group's array follows its reference count. */
struct snap_group {
	atomic_int refs;
	int n;
	int g[];
};

static struct snap_group *group_of(int *g)
{
	return (struct snap_group *)((char *)g - offsetof(struct snap_group, g));
}

int *snap_group_new(int n)
{
	struct snap_group *h = xmalloc(sizeof(*h) +
				       ((size_t)(n > 0 ? n : 0) + 1) * sizeof(int));

	atomic_init(&h->refs, 1);
	h->n = n;
	return h->g;
}

int *snap_group_get(int *g)
{
	if (g)
		atomic_fetch_add_explicit(&group_of(g)->refs, 1,
					  memory_order_relaxed);
	return g;
}

void snap_group_put(int *g)
{
	if (g && atomic_fetch_sub_explicit(&group_of(g)->refs, 1,
					   memory_order_acq_rel) == 1)
		free(group_of(g));
}

struct snap *snap_new(void)
{
	struct snap *s = xcalloc(1, sizeof(*s));

	s->version = SNAP_VERSION;
	s->pool = xcalloc(1, sizeof(*s->pool));
	return s;
}

void snap_rank_free_data(struct snap_rank *r)
{
	if (r->pooled)
		return;
	for (int t = 0; t < r->nthreads; t++)
		free(r->threads[t].frames);
	free(r->threads);
	free(r->ops);
	free(r->members);
	free(r->track);
}

void snap_free(struct snap *s)
{
	struct pool_chunk *c, *next;

	if (!s)
		return;
	for (int i = 0; i < s->nranks; i++)
		snap_rank_free_data(&s->ranks[i]);
	free(s->ranks);
	for (int i = 0; i < s->ncomms; i++) {
		snap_group_put(s->comms[i].group);
		free(s->comms[i].nbr_first);
		free(s->comms[i].remote);
		free(s->comms[i].nbr);
	}
	free(s->comms);
	free(s->notes);
	if (s->pool) {
		for (c = s->pool->chunks; c; c = next) {
			next = c->next;
			free(c);
		}
		free(s->pool->strs);
		free(s->pool->comm_slots);
		free(s->pool);
	}
	free(s);
}

/* n bytes at a multiple of align (a power of two, at most 8). */
static char *pool_alloc(struct snap_pool *p, size_t n, size_t align)
{
	struct pool_chunk *c = p->chunks;
	size_t pad = c ? -c->used & (align - 1) : 0;

	if (!c || c->cap - c->used < n + pad) {
		/* Chunks grow from 1 KiB: a small snapshot stays small.
		 * Sizes count the header; a whole huge page is aligned. */
		size_t hdr = sizeof(*c), total = c ? 2 * (hdr + c->cap) : 1024;
		bool big = n > POOL_CHUNK / 4;
		size_t cap;

		if (big)
			total = hdr + n;
		else if (total > POOL_CHUNK || total - hdr < n)
			total = POOL_CHUNK;
		cap = total - hdr;
		if (total == POOL_CHUNK) {
			c = aligned_alloc(POOL_CHUNK, POOL_CHUNK);
			if (!c)
				c = xmalloc(POOL_CHUNK);
			md_huge_pages(c, POOL_CHUNK);
		} else {
			c = xmalloc(total);
		}
		c->used = 0;
		c->cap = cap;
		/* A big string gets its own chunk behind the current one so
		 * the current chunk's free space is not lost. */
		if (big && p->chunks) {
			c->next = p->chunks->next;
			p->chunks->next = c;
		} else {
			c->next = p->chunks;
			p->chunks = c;
		}
		pad = 0;
	}
	c->used += pad + n;
	return c->data + c->used - n;
}

void *snap_alloc(struct snap *s, size_t n)
{
	void *m = pool_alloc(s->pool, n ? n : 1, 8);

	memset(m, 0, n);
	return m;
}

void snap_adopt_pool(struct snap *dst, struct snap *src)
{
	struct pool_chunk *last = src->pool->chunks;

	if (!last)
		return;
	while (last->next)
		last = last->next;
	/* Behind dst's current chunk, whose free space stays in use. */
	if (dst->pool->chunks) {
		last->next = dst->pool->chunks->next;
		dst->pool->chunks->next = src->pool->chunks;
	} else {
		dst->pool->chunks = src->pool->chunks;
	}
	src->pool->chunks = NULL;
	free(src->pool->strs);
	src->pool->strs = NULL;
	src->pool->nstrs = src->pool->strcap = 0;
}

static void strs_grow(struct snap_pool *p)
{
	size_t cap = p->strcap ? p->strcap * 2 : 256;
	const char **t = xcalloc(cap, sizeof(*t));

	for (size_t i = 0; i < p->strcap; i++) {
		const char *str = p->strs[i];
		size_t h;

		if (!str)
			continue;
		h = hash_bytes(HASH_SEED, str, strlen(str)) & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = str;
	}
	free(p->strs);
	p->strs = t;
	p->strcap = cap;
}

const char *snap_str(struct snap *s, const char *str)
{
	struct snap_pool *p = s->pool;
	size_t n, h;
	char *copy;

	if (!str)
		return NULL;
	if (2 * (p->nstrs + 1) > p->strcap)
		strs_grow(p);
	n = strlen(str);
	h = hash_bytes(HASH_SEED, str, n) & (p->strcap - 1);
	for (; p->strs[h]; h = (h + 1) & (p->strcap - 1))
		if (strcmp(p->strs[h], str) == 0)
			return p->strs[h];
	copy = pool_alloc(p, n + 1, 1);
	memcpy(copy, str, n + 1);
	p->strs[h] = copy;
	p->nstrs++;
	return copy;
}

void snap_note(struct snap *s, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		text = xstrdup("(note could not be formatted)");
	if (s->nnotes == s->pool->notes_alloc) {
		s->pool->notes_alloc = s->nnotes ? 2 * s->nnotes : 8;
		s->notes = xrealloc(s->notes,
				    s->pool->notes_alloc * sizeof(*s->notes));
	}
	s->notes[s->nnotes++] = snap_str(s, text);
	free(text);
}

void snap_set_nranks(struct snap *s, int n)
{
	if (n < 0)
		n = 0;
	for (int i = n; i < s->nranks; i++)
		snap_rank_free_data(&s->ranks[i]);
	/* A million ranks: 150 MB, in huge pages (xrealloc asks). */
	s->ranks = xrealloc(s->ranks, (size_t)n * sizeof(*s->ranks));
	if (n > s->nranks)
		memset(s->ranks + s->nranks, 0,
		       (size_t)(n - s->nranks) * sizeof(*s->ranks));
	for (int i = s->nranks; i < n; i++)
		s->ranks[i].rank = i;
	s->nranks = n;
}

static uint64_t comm_hash(uint64_t id, const char *name, int size,
			  const int *group)
{
	uint64_t h = hash_bytes(HASH_SEED, &id, sizeof(id));

	h = hash_bytes(h, name, strlen(name));
	h = hash_bytes(h, &size, sizeof(size));
	if (!group)
		return h;
	if (size <= 256)
		return hash_bytes(h, group, (size_t)size * sizeof(*group));
	/* A group of a million ranks is interned once per partial
	 * snapshot merged: hash 256 entries spread over it (comm_equal
	 * compares them all). */
	for (int i = 0; i < 256; i++)
		h = hash_bytes(h, &group[(size_t)i * (size_t)(size - 1) / 255],
			       sizeof(*group));
	return h;
}

static bool comm_equal(const struct snap_comm *c, uint64_t id, const char *name,
		       int size, const int *group)
{
	if (c->id != id || c->size != size || strcmp(c->name, name) != 0)
		return false;
	if (!c->group != !group)
		return false;
	return !group || c->group == group ||
	       memcmp(c->group, group, (size_t)size * sizeof(*group)) == 0;
}

static void comm_slots_grow(struct snap *s)
{
	struct snap_pool *p = s->pool;
	size_t cap = p->comm_cap ? p->comm_cap * 2 : 64;
	int *t = xcalloc(cap, sizeof(*t));

	for (int i = 0; i < s->ncomms; i++) {
		const struct snap_comm *c = &s->comms[i];
		size_t h = comm_hash(c->id, c->name, c->size, c->group) &
			   (cap - 1);

		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = i + 1;
	}
	free(p->comm_slots);
	p->comm_slots = t;
	p->comm_cap = cap;
}

static int comm_intern(struct snap *s, uint64_t id, const char *name, int size,
		       const int *group, int *shared)
{
	struct snap_pool *p = s->pool;
	struct snap_comm *c;
	size_t h;

	if (!name)
		name = "";
	if (size < 0)
		size = 0;
	if (2 * ((size_t)s->ncomms + 1) > p->comm_cap)
		comm_slots_grow(s);
	h = comm_hash(id, name, size, group) & (p->comm_cap - 1);
	for (; p->comm_slots[h]; h = (h + 1) & (p->comm_cap - 1))
		if (comm_equal(&s->comms[p->comm_slots[h] - 1], id, name, size,
			       group))
			return p->comm_slots[h] - 1;
	if (s->ncomms == p->comms_alloc) {
		p->comms_alloc = s->ncomms ? 2 * s->ncomms : 8;
		s->comms =
			xrealloc(s->comms, p->comms_alloc * sizeof(*s->comms));
	}
	c = &s->comms[s->ncomms];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->name = snap_str(s, name);
	c->size = size;
	c->group = NULL;
	if (shared) {
		c->group = snap_group_get(shared);
	} else if (group) {
		c->group = snap_group_new(size);
		memcpy(c->group, group, (size_t)size * sizeof(*group));
	}
	p->comm_slots[h] = ++s->ncomms;
	return s->ncomms - 1;
}

int snap_comm_intern(struct snap *s, uint64_t id, const char *name, int size,
		     const int *group)
{
	return comm_intern(s, id, name, size, group, NULL);
}

int snap_comm_intern_shared(struct snap *s, uint64_t id, const char *name,
			    int size, int *group)
{
	return comm_intern(s, id, name, size, group, group);
}

void snap_comm_set_topo(struct snap *s, int comm, enum snap_topo kind,
			const int *first, const int *nbr)
{
	struct snap_comm *c = &s->comms[comm];
	size_t n;

	free(c->nbr_first);
	free(c->nbr);
	c->nbr_first = c->nbr = NULL;
	c->topo = SNAP_TOPO_NONE;
	if (kind == SNAP_TOPO_NONE || !first || c->size <= 0)
		return;
	n = (size_t)first[c->size];
	c->topo = kind;
	c->nbr_first = xmalloc(((size_t)c->size + 1) * sizeof(int));
	memcpy(c->nbr_first, first, ((size_t)c->size + 1) * sizeof(int));
	c->nbr = xmalloc(n * sizeof(int) + 1);
	if (n)
		memcpy(c->nbr, nbr, n * sizeof(int));
}

void snap_comm_set_remote(struct snap *s, int comm, int size,
			  const int *remote)
{
	struct snap_comm *c = &s->comms[comm];

	free(c->remote);
	c->remote = NULL;
	c->remote_size = size > 0 ? size : 0;
	if (size <= 0 || !remote)
		return;
	c->remote = xmalloc((size_t)size * sizeof(int));
	memcpy(c->remote, remote, (size_t)size * sizeof(int));
	c->remote_size = size;
}

int snap_comm_peer(const struct snap *s, int comm, int peer)
{
	const struct snap_comm *c;

	if (comm < 0 || comm >= s->ncomms || peer < 0)
		return -1;
	c = &s->comms[comm];
	if (c->remote_size)
		return c->remote && peer < c->remote_size ? c->remote[peer]
							  : -1;
	return c->group && peer < c->size ? c->group[peer] : -1;
}

/* The names the format gives each enum's values, NULL-ended.  Given by
 * value, not by position, and each list checked to end right after the
 * enum's _LAST value (snap.h): a new value without a name does not
 * compile. */
#define NAMES_END(names, last)                                              \
	_Static_assert(sizeof(names) / sizeof((names)[0]) == (last) + 2,    \
		       #names " does not name every value up to " #last)
const char *const snap_state_names[] = {
	[SNAP_RANK_COLLECTED] = "collected", [SNAP_RANK_GONE] = "gone",
	[SNAP_RANK_UNREAD] = "unread", [SNAP_RANK_REMOTE] = "remote",
	[SNAP_RANK_STATE_LAST + 1] = NULL,
};
NAMES_END(snap_state_names, SNAP_RANK_STATE_LAST);
const char *const snap_progress_names[] = {
	[SNAP_PROGRESS_UNKNOWN] = "unknown", [SNAP_PROGRESS_STABLE] = "stable",
	[SNAP_PROGRESS_CHANGED] = "changed", [SNAP_PROGRESS_LAST + 1] = NULL,
};
NAMES_END(snap_progress_names, SNAP_PROGRESS_LAST);
const char *const snap_thread_level_names[] = {
	[SNAP_TL_UNKNOWN] = "unknown", [SNAP_TL_SINGLE] = "single",
	[SNAP_TL_FUNNELED] = "funneled", [SNAP_TL_SERIALIZED] = "serialized",
	[SNAP_TL_MULTIPLE] = "multiple", [SNAP_TL_LAST + 1] = NULL,
};
NAMES_END(snap_thread_level_names, SNAP_TL_LAST);
const char *const snap_op_kind_names[] = {
	[SNAP_OP_SEND] = "send", [SNAP_OP_RECV] = "recv",
	[SNAP_OP_UNEXPECTED] = "unexpected", [SNAP_OP_KIND_LAST + 1] = NULL,
};
NAMES_END(snap_op_kind_names, SNAP_OP_KIND_LAST);
const char *const snap_status_names[] = {
	[SNAP_ST_PENDING] = "pending", [SNAP_ST_MATCHED] = "matched",
	[SNAP_ST_COMPLETE] = "complete", [SNAP_ST_LAST + 1] = NULL,
};
NAMES_END(snap_status_names, SNAP_ST_LAST);
const char *const snap_source_names[] = {
	[SNAP_SRC_DLL] = "dll", [SNAP_SRC_OB1] = "ob1",
	[SNAP_SRC_LAST + 1] = NULL,
};
NAMES_END(snap_source_names, SNAP_SRC_LAST);
const char *const snap_topo_names[] = {
	[SNAP_TOPO_NONE] = "none", [SNAP_TOPO_CART] = "cart",
	[SNAP_TOPO_GRAPH] = "graph", [SNAP_TOPO_DIST_GRAPH] = "dist_graph",
	[SNAP_TOPO_LAST + 1] = NULL,
};
NAMES_END(snap_topo_names, SNAP_TOPO_LAST);
const char *const snap_track_kind_names[] = {
	[SNAP_TRACK_POST] = "post", [SNAP_TRACK_INIT] = "init",
	[SNAP_TRACK_COLL] = "coll", [SNAP_TRACK_POLL] = "poll",
	[SNAP_TRACK_KIND_LAST + 1] = NULL,
};
NAMES_END(snap_track_kind_names, SNAP_TRACK_KIND_LAST);

const char *snap_name_of(const char *const *names, unsigned i)
{
	for (unsigned k = 0; names[k]; k++)
		if (k == i)
			return names[k];
	return "?";
}

const char *snap_state_name(enum snap_rank_state st)
{
	return snap_name_of(snap_state_names, st);
}

const char *snap_progress_name(enum snap_progress p)
{
	return snap_name_of(snap_progress_names, p);
}

const char *snap_op_kind_name(enum snap_op_kind k)
{
	return snap_name_of(snap_op_kind_names, k);
}

const char *snap_status_name(enum snap_op_status st)
{
	return snap_name_of(snap_status_names, st);
}

const char *snap_source_name(enum snap_op_source src)
{
	return snap_name_of(snap_source_names, src);
}

const char *snap_topo_name(enum snap_topo t)
{
	return snap_name_of(snap_topo_names, t);
}

const char *snap_track_kind_name(enum snap_track_kind k)
{
	return snap_name_of(snap_track_kind_names, k);
}
