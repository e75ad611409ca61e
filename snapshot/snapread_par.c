/*
 * snapread_par.c - read a snapshot held in memory, its rank lines cut
 * between threads.
 *
 * The header and communicator lines are read first, alone: everything
 * after them depends on them.  The rank lines (nearly all of a big file)
 * are then cut at line boundaries into one part per thread; each part is
 * parsed by its own reader (its own yajl handles and records) straight
 * into s->ranks[rank], sized up front.  A part does not know where it
 * starts until its first rank line says so: when all are done, each part
 * must start where the one before ended.
 *
 * Strings are interned in the one snapshot pool under a lock, so equal
 * strings stay pointer-equal (the reports group ranks by pointer).  The
 * lock is rarely taken: each reader's per-key cache interns only when a
 * value changes from one rank line to the next.
 *
 * Parts print nothing.  If any part fails, or the parts do not join up,
 * the whole buffer is read again by one thread: the message is then the
 * one a plain read gives, the first fault in file order at its
 * file:line:column, and a bad file costs two reads, a good one none.
 */
#include "snapjson.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "md.h"

/* The header's nranks sizes s->ranks before the rank lines are counted:
 * only when that many lines of this size fit in the bytes left.  A
 * header that lies gets the plain read, which grows s->ranks as lines
 * come. */
#define PAR_MIN_LINE 64
#define PAR_MAX_THREADS 16
/* A mapped file's pages are let go behind the parse, this many bytes at
 * a time: the file's bytes would otherwise count in the reader's memory
 * beside the snapshot built from them (a million ranks: 300-550 MiB). */
#define PAR_DROP (8u << 20)

struct part {
	struct snaprd *r;
	const char *p, *end;
	bool drop;	/* p..end is a file mapping: let pages go */
	int ret;
	bool started;
	pthread_t tid;
};

/* The whole pages of [a, b) leave the process (the page cache keeps
 * them): they were only read. */
static void drop_pages(const char *a, const char *b)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)a + pg - 1) & ~(pg - 1);
	uintptr_t hi = (uintptr_t)b & ~(pg - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Parse the lines of [*pp, end) into r; with first_rank, stop after the
 * first rank line.  The parse wants a byte after the line ('\n'): the
 * last line, when it has none, is parsed from a copy. */
static int read_lines(struct snaprd *r, const char **pp, const char *end,
		      bool first_rank, bool drop)
{
	const char *p = *pp, *done = p;
	char *tail = NULL;
	int ret = 0;

	while (!ret && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		r->lineno++;
		r->line = p;
		r->len = n;
		if (!nl) {
			tail = xmalloc(n + 1);
			memcpy(tail, p, n);
			tail[n] = '\n';
			r->line = tail;
		}
		p = nl ? nl + 1 : end;
		ret = snaprd_line(r);
		if (first_rank && r->ranks_read > 0)
			break;
		if (drop && (size_t)(p - done) >= PAR_DROP) {
			drop_pages(done, p);
			done = p;
		}
	}
	free(tail);
	*pp = p;
	return ret;
}

static void *part_main(void *arg)
{
	struct part *pt = arg;

	pt->ret = read_lines(pt->r, &pt->p, pt->end, false, pt->drop);
	return NULL;
}

/* Where part i of n of [p, end) starts: after the line the cut falls in
 * (the first part at p). */
static const char *cut(const char *p, const char *end, int i, int n)
{
	const char *c, *nl;

	if (i == 0)
		return p;
	if (i == n)
		return end;
	c = p + (size_t)(end - p) / (size_t)n * (size_t)i;
	nl = memchr(c - 1, '\n', (size_t)(end - c + 1));
	return nl ? nl + 1 : end;
}

/* A reader for part i > 0: what the header and communicators told r0. */
static struct snaprd *part_reader(const struct snaprd *r0)
{
	struct snaprd *r = xmalloc(sizeof(*r));

	snaprd_init(r, r0->s, r0->name, r0->size);
	r->have_header = true;
	r->nranks = r0->nranks;
	r->ncomms = r0->ncomms;
	r->comms_read = r0->comms_read;
	r->ranks_cap = r0->ranks_cap;
	r->group_budget = r0->group_budget;
	r->par = true;
	r->lock = r0->lock;
	r->claimed = r0->claimed;
	return r;
}

/* The ranks a part wrote, for a failed read (snap_free frees only the
 * ranks below s->nranks: those read before the parts). */
static void part_free_ranks(const struct snaprd *r)
{
	for (int i = r->rank0 < 0 ? r->hi : r->rank0; i < r->hi; i++) {
		struct snap_rank *k = &r->s->ranks[i];

		for (int t = 0; t < k->nthreads; t++)
			free(k->threads[t].frames);
		free(k->threads);
		free(k->ops);
		free(k->members);
	}
}

/* Did every part read, each start where the one before ended, and all
 * ranks arrive?  Then the notes follow in part order. */
static bool parts_join(struct part *parts, int n)
{
	struct snaprd *r0 = parts[0].r;
	int next = r0->ranks_read;

	for (int i = 0; i < n; i++) {
		if (parts[i].ret)
			return false;
		if (i > 0 && parts[i].r->rank0 >= 0) {
			if (parts[i].r->rank0 != next)
				return false;
			next = parts[i].r->ranks_read;
		}
	}
	if (next != r0->nranks)
		return false;
	r0->s->nranks = r0->ranks_read = next;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < parts[i].r->notes.n; j++)
			snap_note(r0->s, "%s",
				  ((const char **)parts[i].r->notes.a)[j]);
	return true;
}

static void parts_run(struct part *parts, int n)
{
	for (int i = 1; i < n; i++)
		parts[i].started = pthread_create(&parts[i].tid, NULL,
						  part_main, &parts[i]) == 0;
	part_main(&parts[0]);
	for (int i = 1; i < n; i++) {
		if (parts[i].started)
			pthread_join(parts[i].tid, NULL);
		else
			part_main(&parts[i]);
	}
}

/* The rank lines in [p, end) by n parts, r0 reading the first.  Returns
 * true if they read, false if the buffer must be read again alone. */
static bool read_parts(struct snaprd *r0, const char *p, const char *end,
		       int n, bool drop)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct part *parts = xcalloc((size_t)n, sizeof(*parts));
	bool ok;

	r0->s->ranks = xrealloc(r0->s->ranks,
				(size_t)r0->nranks * sizeof(*r0->s->ranks));
	r0->ranks_cap = r0->nranks;
	r0->claimed = xcalloc((size_t)r0->nranks, 1);
	memset(r0->claimed, 1, (size_t)r0->ranks_read);
	r0->lock = &lock;
	r0->par = true;
	r0->rank0 = r0->hi = r0->ranks_read;
	for (int i = 0; i < n; i++) {
		parts[i].r = i ? part_reader(r0) : r0;
		parts[i].p = cut(p, end, i, n);
		parts[i].end = cut(p, end, i + 1, n);
		parts[i].drop = drop;
	}
	parts_run(parts, n);
	ok = parts_join(parts, n);
	if (ok)
		md_info("%s: rank lines read by %d threads", r0->name, n);
	else
		md_info("%s: rank lines read again by one thread, for the "
			"first fault in file order",
			r0->name);
	for (int i = n - 1; i >= 0; i--) {
		if (!ok)
			part_free_ranks(parts[i].r);
		if (i) {
			snaprd_done(parts[i].r);
			free(parts[i].r);
		}
	}
	free(r0->claimed);
	r0->claimed = NULL;
	r0->lock = NULL;
	r0->par = false;
	pthread_mutex_destroy(&lock);
	free(parts);
	return ok;
}

/* How many parts the rest [p, end) is worth: 1 for a plain read. */
static int parts_for(const struct snaprd *r, const char *p, const char *end,
		     int threads, size_t split)
{
	size_t left = (size_t)(end - p);
	size_t n = left / split;

	if (threads < 2 || n < 2 || r->ranks_read < 1)
		return 1;
	if ((size_t)(r->nranks - r->ranks_read) > left / PAR_MIN_LINE)
		return 1;
	return (int)(n < (size_t)threads ? n : (size_t)threads);
}

int snaprd_read_buf(const char *buf, size_t len, const char *name,
		    long long size, int threads, size_t split, bool mapped,
		    struct snap **out)
{
	const char *p = buf, *end = buf + len;
	struct snaprd r;
	int ret, n;

	*out = NULL;
	if (threads > PAR_MAX_THREADS)
		threads = PAR_MAX_THREADS;
	snaprd_init(&r, snap_new(), name, size);
	ret = read_lines(&r, &p, end, threads > 1, mapped);
	n = parts_for(&r, p, end, threads, split ? split : 1);
	if (!ret && n > 1 && !read_parts(&r, p, end, n, mapped)) {
		snaprd_done(&r);
		snap_free(r.s);
		return snaprd_read_buf(buf, len, name, size, 1, split, mapped,
				       out);
	}
	if (!ret && n == 1)
		ret = read_lines(&r, &p, end, false, mapped);
	r.lineno++;
	if (!ret)
		ret = snaprd_finish(&r);
	snaprd_done(&r);
	if (ret) {
		snap_free(r.s);
		return ret;
	}
	*out = r.s;
	return 0;
}
