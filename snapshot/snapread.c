/*
 * snapread.c - read a snapshot written by snap_write()
 * (doc/snapshot-format.md): the header, communicator and note lines, the
 * input and the loop over lines; the rank lines are in snapread_rank.c.
 *
 * One line at a time: yajl parses it into the reader's reused nodes
 * (snapjson.c) and the line is checked and converted into the model, so
 * memory is the model plus what the reader has not given back of the
 * input (struct input).  Everything that sizes an allocation is checked
 * before the allocation: a snapshot is input from anyone (bug reports)
 * and must never crash or exhaust the reader.
 */
#include "snap.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md.h"
#include "snapjson.h"

/* Far above any machine (Frontier has ~9.4 million cores) and still
 * small enough that counts times element sizes cannot overflow. */
#define RD_MAX_RANKS (1 << 26)
/* The shortest possible rank or communicator line, `{"rank":0}`. */
#define RD_MIN_LINE 10

/* nranks and ncomms size the allocations: checked against the input
 * before anything is allocated. */
#define SJ_T struct snapread
static const struct sj_field count_fields[] = {
	SJ_FIELD("nranks", SJ_INT, nranks, .max = RD_MAX_RANKS),
	SJ_FIELD("ncomms", SJ_INT, ncomms, .max = RD_MAX_RANKS),
	SJ_FIELD("held", SJ_INT, held, .max = SJ_NRANKS, .def = -1),
	{ NULL },
};
#undef SJ_T

static int read_header(struct snapread *r, const struct sj_node *o)
{
	const struct sj_node *v = sj_get(o, "version");
	const struct sj_node *f = sj_get(o, "format");
	int64_t version = -1;
	int most;

	if (!f || f->type != SJV_STR || strcmp(f->s, SNAP_FORMAT) != 0)
		return sj_fail(r, f, "not an mpi-deadlock snapshot: the first line must say \"format\":\"%s\"",
			       SNAP_FORMAT);
	if (v && sj_num(r, v, "\"version\"", INT_MIN, INT_MAX, &version))
		return -MD_E_INPUT;
	if (version != SNAP_VERSION)
		return sj_fail(r, v, "snapshot version %d is not supported: this mpi-deadlock reads version %d",
			       (int)version, SNAP_VERSION);
	r->have_header = true;
	if (!sj_get(o, "nranks") || !sj_get(o, "ncomms"))
		return sj_fail(r, NULL, "the header has no \"%s\"",
			       sj_get(o, "nranks") ? "ncomms" : "nranks");
	if (sj_fields(r, o, snap_header_fields, r->s) ||
	    sj_fields(r, o, count_fields, r))
		return -MD_E_INPUT;
	most = r->held >= 0 ? r->held : r->nranks;
	if ((size_t)(most + r->ncomms) * RD_MIN_LINE > r->size)
		return sj_fail(r, sj_get(o, "nranks"),
			       "%d ranks and %d communicators cannot fit in the %zu bytes of the file: truncated or inconsistent",
			       most, r->ncomms, r->size);
	/* Zeroed ranks are freed as read ones are (snap_free). */
	r->s->ranks = xcalloc((size_t)most, sizeof(*r->s->ranks));
	r->s->nranks = most;
	if (r->held >= 0)
		r->s->job_nranks = r->nranks;
	r->group_budget = 64 * (int64_t)r->nranks + (1 << 20);
	return 0;
}

/* "0-1023,2048" into out, *n entries, which never pass max. */
static int parse_ranges(struct snapread *r, const struct sj_node *v, int max,
			int *out, int *n)
{
	const char *p = v->s;
	char *end;

	for (*n = 0; *p;) {
		long a, b;

		if (*p < '0' || *p > '9')
			goto bad;
		a = b = strtol(p, &end, 10);
		if (*(p = end) == '-') {
			if (*++p < '0' || *p > '9')
				goto bad;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
		if (a > b || b >= r->nranks)
			return sj_fail(r, v, "\"group\" range %ld-%ld is out of range (%d ranks)",
				       a, b, r->nranks);
		if (b - a + 1 > (long)max - *n)
			return sj_fail(r, v, "\"group\" has more than \"size\" %d entries",
				       max);
		while (a <= b)
			out[(*n)++] = (int)a++;
	}
	return 0;
bad:
	return sj_fail(r, v, "\"group\" \"%.40s\" is not a list of rank ranges like \"0-3,8\" (at \"%.10s\")",
		       v->s, p);
}

/* A group lists each global rank at most once. */
static int check_distinct(struct snapread *r, const struct sj_node *v,
			  const int *g, int n)
{
	int ret = 0, i;

	if (!r->seen)
		r->seen = xcalloc((size_t)r->nranks / 8 + 1, 1);
	for (i = 0; i < n && !ret; i++) {
		if (r->seen[g[i] / 8] & (1u << (g[i] % 8)))
			ret = sj_fail(r, v, "\"group\" lists global rank %d twice",
				      g[i]);
		r->seen[g[i] / 8] |= (unsigned char)(1u << (g[i] % 8));
	}
	while (i-- > 0)
		r->seen[g[i] / 8] = 0;
	return ret;
}

/*
 * Groups given as rank ranges, shared between the reads given the same
 * snap_groups (snap_read_opts): the agents of one job all send its
 * MPI_COMM_WORLD as "0-1048575", which is expanded once, not once a
 * part.  A few entries, replaced in turn; only big groups.
 */
#define GROUPS_KEEP 8
#define GROUPS_MIN 1024

struct snap_groups {
	pthread_mutex_t lock;
	struct {
		char *text;
		int size, nranks;
		int *group;
	} e[GROUPS_KEEP];
	unsigned next;		/* the entry replaced next */
};

struct snap_groups *snap_groups_new(void)
{
	struct snap_groups *g = xcalloc(1, sizeof(*g));

	pthread_mutex_init(&g->lock, NULL);
	return g;
}

void snap_groups_free(struct snap_groups *g)
{
	if (!g)
		return;
	for (int i = 0; i < GROUPS_KEEP; i++) {
		free(g->e[i].text);
		snap_group_put(g->e[i].group);
	}
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* The group of text read before with the same size and job, with a
 * reference, or NULL; with add, group is added instead. */
static int *groups_use(struct snap_groups *g, const char *text, int size,
		       int nranks, int *add)
{
	int *found = NULL;
	unsigned i;

	pthread_mutex_lock(&g->lock);
	for (i = 0; i < GROUPS_KEEP && !add && !found; i++)
		if (g->e[i].text && g->e[i].size == size &&
		    g->e[i].nranks == nranks && !strcmp(g->e[i].text, text))
			found = snap_group_get(g->e[i].group);
	if (add) {
		i = g->next++ % GROUPS_KEEP;
		free(g->e[i].text);
		snap_group_put(g->e[i].group);
		g->e[i].text = xstrdup(text);
		g->e[i].size = size;
		g->e[i].nranks = nranks;
		g->e[i].group = snap_group_get(add);
	}
	pthread_mutex_unlock(&g->lock);
	return found;
}

/* A group of snap_group_new at f->off (NULL if absent) of the size at
 * f->count, checked: a group from r->groups was checked when first read,
 * only the budget is this snapshot's. */
int sr_group(struct snapread *r, const struct sj_field *f,
	     const struct sj_node *v, void *base)
{
	int size = *(int *)((char *)base + f->count);
	int **out = (int **)((char *)base + f->off);
	bool cache = r->groups && v && v->type == SJV_STR && size >= GROUPS_MIN;
	const struct sj_node *e;
	int n = 0, ret = 0, i = 0;
	int64_t x;

	/* A "remote" counts only with a "remote_size". */
	if (!v || (!size && strcmp(f->key, "remote") == 0))
		return 0;
	if (v->type != SJV_STR && v->type != SJV_ARR)
		return sj_fail(r, v, "%s must be an array of ranks or a string of rank ranges",
			       f->name);
	/* size is at most nranks, which the input's size bounds. */
	if ((r->group_budget -= size) < 0)
		return sj_fail(r, v, "the communicator groups add up to more than 64 entries per rank");
	if (cache &&
	    (*out = groups_use(r->groups, v->s, size, r->nranks, NULL)))
		return 0;
	*out = snap_group_new(size);
	if (v->type == SJV_STR)
		ret = parse_ranges(r, v, size, *out, &n);
	else if ((n = v->n) == size)
		sj_each(e, v) {
			if ((ret = sj_num(r, e, "a \"group\" entry", 0,
					  r->nranks - 1, &x)))
				break;
			(*out)[i++] = (int)x;
		}
	if (!ret && n != size)
		ret = sj_fail(r, v, "%s has %d entries, \"%s\" says %d",
			      f->name, n,
			      strcmp(f->key, "group") ? "remote_size" : "size",
			      size);
	if (!ret)
		ret = check_distinct(r, v, *out, size);
	if (!ret && cache)
		groups_use(r->groups, v->s, size, r->nranks, *out);
	return ret;
}

/* "neighbors": "1,3;0,2;;1" with a "topo": size lists of local ranks,
 * ';' between them, ',' between the ranks of one list (a rank takes 2
 * bytes), into c->nbr_first (where each list starts) and c->nbr. */
int sr_neighbors(struct snapread *r, const struct sj_field *f,
		 const struct sj_node *v, void *base)
{
	struct snap_comm *c = base;
	const char *p;
	char *end;
	int n = 0;

	if (c->topo == SNAP_TOPO_NONE)
		return 0;
	if (!v)
		return sj_fail(r, sj_get(r->nodes, "topo"), "\"topo\" without \"neighbors\"");
	if (sj_check(r, v, f->key, SJV_STR, 0))
		return -MD_E_INPUT;
	c->nbr_first = xcalloc((size_t)c->size + 1, sizeof(int));
	c->nbr = xmalloc((v->len / 2 + 1) * sizeof(int));
	p = v->s;
	for (int i = 0; i < c->size; i++) {
		while (*p >= '0' && *p <= '9') {
			long x = strtol(p, &end, 10);

			if (x >= c->size)
				goto bad;
			c->nbr[n++] = (int)x;
			p = end + (*end == ',' && end[1] >= '0' && end[1] <= '9');
		}
		c->nbr_first[i + 1] = n;
		if (i + 1 < c->size && *p++ != ';')
			goto bad;
	}
	if (!*p)
		return 0;
bad:
	return sj_fail(r, v, "\"neighbors\" must be %d lists of local ranks below %d, one per local rank (\"1,3;0,2\")",
		       c->size, c->size);
}

static int read_comm(struct snapread *r, const struct sj_node *o)
{
	const struct sj_node *n = sj_get(o, "comm");
	/* What c points to is the reader's until it is given to the
	 * snapshot. */
	struct snap_comm c = { 0 };
	int64_t idx;
	int got = -1, ret;

	if (r->ranks_read)
		return sj_fail(r, n, "a communicator line comes after the rank lines");
	if (sj_num(r, n, "\"comm\"", 0, r->ncomms - 1, &idx))
		return -MD_E_INPUT;
	if (idx != r->comms_read)
		return sj_fail(r, n, "communicator %d comes where communicator %d was expected",
			       (int)idx, r->comms_read);
	r->at_comm = (int)idx;
	ret = sj_fields(r, o, snap_comm_fields, &c);
	if (!ret)
		got = snap_comm_intern_shared(r->s, c.id, c.name, c.size, c.group);
	if (!ret && got != idx)
		ret = sj_fail(r, NULL, "the same as communicator %d", got);
	if (!ret && c.remote_size)
		snap_comm_set_remote(r->s, got, c.remote_size, c.remote);
	if (!ret && c.nbr_first)
		snap_comm_set_topo(r->s, got, c.topo, c.nbr_first, c.nbr);
	r->comms_read += !ret;
	snap_group_put(c.group);
	snap_group_put(c.remote);
	free(c.nbr_first);
	free(c.nbr);
	return ret;
}

/* What a line is depends on its keys ("rank" before "comm" before
 * "note"). */
static int read_object(struct snapread *r)
{
	const struct sj_node *o = &r->nodes[0], *note;

	if (o->type != SJV_OBJ)
		return sj_fail(r, o, "the line is not a JSON object");
	if (!r->have_header)
		return read_header(r, o);
	if (sj_get(o, "rank"))
		return snapread_rank(r, o);
	if (sj_get(o, "comm"))
		return read_comm(r, o);
	if ((note = sj_get(o, "note"))) {
		if (note->type != SJV_STR)
			return sj_fail(r, note, "\"note\" must be a string");
		snap_note(r->mem, "%s", note->s);
		return 0;
	}
	if (sj_get(o, "format"))
		return sj_fail(r, NULL, "a second header line");
	return sj_fail(r, NULL, "the line is neither a communicator, a rank nor a note");
}

/* After the last line: was everything the header promised there? */
static int finish(struct snapread *r)
{
	r->lineno++;
	r->len = 0;
	r->at_comm = r->at_rank = r->at_op = -1;
	if (!r->have_header)
		return sj_fail(r, NULL, "empty file: no snapshot header");
	if (r->comms_read < r->ncomms)
		return sj_fail(r, NULL, "truncated: %d of %d communicator lines",
			       r->comms_read, r->ncomms);
	if (r->ranks_read < r->s->nranks)
		return sj_fail(r, NULL, "truncated: %d of %d rank lines",
			       r->ranks_read, r->s->nranks);
	return 0;
}

/*
 * The input, whole, in one mapping, its lines found with memchr: a
 * regular file is mapped (and cut between the threads of the parallel
 * reader); anything else (a pipe, a memory stream) is read into an
 * anonymous mapping that doubles as it fills (mremap moves pages, it
 * copies none).  The pages of the lines read are given back as the
 * reader goes, so a pipe costs its size until its end has come, and then
 * no more than a file.
 */
struct input {
	char *map;
	size_t maplen;
	const char *p, *end;	/* what is left to read */
	const char *kept;	/* the mapping's pages from here are kept */
	bool file;
};

static const char *page_of(const char *p)
{
	return (const char *)((uintptr_t)p & -(uintptr_t)getpagesize());
}

/* Room for more of a pipe: the anonymous mapping doubles. */
static void grow(struct input *in)
{
	size_t len = in->maplen ? 2 * in->maplen : 1 << 20;
	void *m = in->maplen ?
			  mremap(in->map, in->maplen, len, MREMAP_MAYMOVE) :
			  mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		md_error("mmap of %zu bytes for the snapshot: %s", len,
			 strerror(errno));
		abort();
	}
	in->map = m;
	in->maplen = len;
}

/* 0, or -MD_E_INPUT after a read error (reported). */
static int map_input(struct input *in, FILE *f, const char *name)
{
	struct stat st;
	size_t len = 0, got;

	/* A mapped file that shrinks under the reader raises SIGBUS:
	 * --snapshot never does that to a regular file (it renames a new
	 * one over it, main/cli.c); a file truncated by hand while it is
	 * read would.  A file read from elsewhere than its start is read
	 * like a pipe. */
	if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) && st.st_size &&
	    ftell(f) == 0) {
		in->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fileno(f), 0);
		in->file = in->map != MAP_FAILED;
	}
	if (in->file) {
		in->maplen = len = (size_t)st.st_size;
	} else {
		do {
			if (len == in->maplen)
				grow(in);
			got = fread(in->map + len, 1, in->maplen - len, f);
			len += got;
		} while (got);
		if (ferror(f)) {
			md_error("reading %s: %s", name, strerror(errno));
			return -MD_E_INPUT;
		}
	}
	in->p = in->kept = in->map;
	in->end = in->map + len;
	return 0;
}

/* The next line of in, read: 1 if there was one (0 at the end), or an
 * error. */
static int read_next(struct snapread *r, struct input *in)
{
	const char *nl, *page;
	size_t i = 0;

	if (in->p == in->end)
		return 0;
	nl = memchr(in->p, '\n', (size_t)(in->end - in->p));
	r->lineno++;
	r->line = in->p;
	r->len = (size_t)((nl ? nl : in->end) - in->p);
	in->p = nl ? nl + 1 : in->end;
	/* Mapped pages count in the RSS: those read go back as we go. */
	page = page_of(r->line);
	if (page - in->kept >= 1 << 22) {
		madvise((void *)in->kept, (size_t)(page - in->kept),
			MADV_DONTNEED);
		in->kept = page;
	}
	while (i < r->len && r->line[i] && strchr(" \t\r", r->line[i]))
		i++;
	if (i == r->len)
		return 1;
	r->at_comm = r->at_rank = r->at_op = -1;
	return sj_parse_line(r) || read_object(r) ? -MD_E_INPUT : 1;
}

/*
 * The parallel reader: after the header and the communicators, the rank
 * lines of a whole snapshot in a regular file are cut into ranges at
 * line starts, one per thread.  Each thread parses its range with its
 * own parser and pool (the page faults of a million ranks' arrays, most
 * of the read here, are taken in parallel too) and interns strings in
 * the snapshot under a lock (rarely: the string cache hits).  A worker
 * reports nothing: on any error the file is read again by one thread,
 * which reports it with its line number.
 */
#define RD_PAR_MIN_RANKS 4096
#define RD_MAX_THREADS 64

struct worker {
	struct snapread r;
	struct input in;
	pthread_t tid;
	bool started;
	int ret;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	while ((w->ret = read_next(&w->r, &w->in)) > 0)
		;
	return NULL;
}

/* The workers' ranks must follow each other from 0 to nranks (on an
 * error the snapshot, with the notes and pools added here, is freed). */
static int join(struct snapread *r, struct worker *w, int n)
{
	int next = 0, ret = 0;

	for (struct worker *x = w; x < w + n; x++) {
		if (x->started)
			pthread_join(x->tid, NULL);
		/* Its ranks, consecutive, start at next_rank - ranks_read. */
		if (x->ret || (x->r.ranks_read &&
			       x->r.next_rank - x->r.ranks_read != next))
			ret = -MD_E_INPUT;
		next += x->r.ranks_read;
		for (int k = 0; k < x->r.mem->nnotes; k++)
			snap_note(r->s, "%s", x->r.mem->notes[k]);
		snap_adopt_pool(r->s, x->r.mem);
		snap_free(x->r.mem);
		sj_done(&x->r);
	}
	return ret || next != r->nranks ? -MD_E_INPUT : 0;
}

/* Returns the threads that read, or -MD_E_INPUT: read again alone. */
static int read_parallel(struct snapread *r, struct input *in, int threads)
{
	struct worker w[RD_MAX_THREADS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *from = in->p;
	int n;

	if (threads > RD_MAX_THREADS)
		threads = RD_MAX_THREADS;
	for (n = 0; n < threads; n++) {
		struct worker *x = memset(&w[n], 0, sizeof(w[n]));
		const char *cut = from + (in->end - from) / (threads - n);
		const char *nl = memchr(cut, '\n', (size_t)(in->end - cut));

		x->r = (struct snapread){
			.have_header = true, .nranks = r->nranks,
			.ncomms = r->ncomms, .comms_read = r->comms_read,
			.held = -1, .next_rank = -1, .quiet = true,
			.lock = &lock };
		sj_init(&x->r, r->s, r->name);
		x->r.mem = snap_new();
		x->in.p = from;
		x->in.kept = page_of(from);
		x->in.end = n + 1 < threads && nl ? nl + 1 : in->end;
		from = x->in.end;
		/* Without a thread the range is not read: the file is
		 * read again by one. */
		x->started = n && !pthread_create(&x->tid, NULL, work, x);
		if (n && !x->started)
			x->ret = -MD_E_INPUT;
	}
	/* The caller's thread reads the first range. */
	work(&w[0]);
	return join(r, w, n) ? -MD_E_INPUT : n;
}

/* One read of in; RD_AGAIN: read it again with one thread. */
#define RD_AGAIN 1
static int read_all(struct snapread *r, struct input *in,
		    const struct snap_read_opts *o, int *used)
{
	int threads = o ? o->threads : 1;
	int least = o && o->parallel_min > 0 ? o->parallel_min
					      : RD_PAR_MIN_RANKS;
	int ret;

	while ((ret = read_next(r, in)) > 0)
		/* Threads pay where the ranks are many, their lines all
		 * ahead in a mapped file. */
		if (threads > 1 && in->file && r->have_header &&
		    r->comms_read == r->ncomms && r->held < 0 &&
		    r->ranks_read == 0 && r->nranks >= least) {
			ret = read_parallel(r, in, threads);
			*used = ret > 0 ? ret : 1;
			return ret > 0 ? 0 : RD_AGAIN;
		}
	return ret ? ret : finish(r);
}

int snap_read_opts(FILE *f, const char *name, struct snap_read_opts *opts,
		   struct snap **out)
{
	struct snapread r = { .groups = opts ? opts->groups : NULL };
	struct snap_read_opts one = { .threads = 1, .groups = r.groups };
	struct input in = { 0 };
	int ret, used = 1;

	sj_init(&r, snap_new(), name ? name : "snapshot");
	ret = map_input(&in, f, r.name);
	r.size = (size_t)(in.end - in.p);
	if (!ret)
		ret = read_all(&r, &in, opts, &used);
	if (ret)
		snap_free(r.s);
	sj_done(&r);
	free(r.seen);
	munmap(in.map, in.maplen);
	*out = ret ? NULL : r.s;
	if (opts)
		opts->threads_used = used;
	/* A worker saw something wrong: one thread reads again, and says
	 * what and where. */
	return ret == RD_AGAIN ? snap_read_opts(f, name, &one, out) : ret;
}

int snap_read(FILE *f, const char *name, struct snap **out)
{
	return snap_read_opts(f, name, NULL, out);
}
