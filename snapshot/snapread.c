/*
 * snapread.c - read a snapshot written by snap_write()
 * (doc/snapshot-format.md): the header, communicator and note lines and
 * the loop over lines; the rank lines are in snapread_rank.c.
 *
 * One line at a time: yajl parses it into the reader's reused nodes
 * (snapjson.c) and the line is checked and converted into the model, so
 * memory is the model plus one line.  Everything that sizes an
 * allocation is checked before the allocation: a snapshot is input from
 * anyone (bug reports) and must never crash or exhaust the reader.
 */
#include "snap.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md.h"
#include "snapjson.h"

/* Far above any machine (Frontier has ~9.4 million cores) and still
 * small enough that counts times element sizes cannot overflow. */
#define RD_MAX_RANKS (1 << 26)
/* The shortest possible rank or communicator line, `{"rank":0}`. */
#define RD_MIN_LINE 10

#define HD(k, kd, field, ...) SJ_FIELD(k, kd, struct snap, field, __VA_ARGS__)

static const struct snapjs_field header_fields[] = {
	HD("time", SJ_I64, time),
	HD("tool", SJ_STR, tool),
	HD("host", SJ_STR, host),
	HD("starter", SJ_STR, starter),
	HD("mpi", SJ_STR, mpi),
	HD("implementation", SJ_STR, impl),
	HD("dll", SJ_STR, dll),
	HD("types", SJ_STR, types),
	HD("starter_pid", SJ_INT, starter_pid, .max = INT_MAX),
	HD("looks", SJ_INT, looks, .max = INT_MAX),
	HD("interval_ms", SJ_INT, interval_ms, .max = INT_MAX),
	{ NULL },
};
SJ_TABLE_FITS(header_fields);

/* nranks and ncomms size the allocations: checked against the input
 * before anything is allocated. */
#define RD(k, field, ...) \
	SJ_FIELD(k, SJ_INT, struct snapread, field, __VA_ARGS__)

static const struct snapjs_field count_fields[] = {
	RD("nranks", nranks, .max = RD_MAX_RANKS),
	RD("ncomms", ncomms, .max = RD_MAX_RANKS),
	RD("held", held, .max = SJ_NRANKS, .def = -1),
	{ NULL },
};
SJ_TABLE_FITS(count_fields);

static int read_header(struct snapread *r, const struct snapjs_node *o)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *v = snapjs_get(j, o, "version");
	const struct snapjs_node *f = snapjs_get(j, o, "format");
	const char *missing = !snapjs_get(j, o, "nranks") ? "nranks"
			      : !snapjs_get(j, o, "ncomms") ? "ncomms"
							    : NULL;
	int64_t version = -1;

	if (!f || f->type != SNAPJS_STR || strcmp(f->s, SNAP_FORMAT) != 0)
		return snapjs_fail(j, f ? snapjs_col(j, f) : 1,
				   "not an mpi-deadlock snapshot: the first "
				   "line must say \"format\":\"%s\"",
				   SNAP_FORMAT);
	if (v && snapjs_num(j, v, "version", NULL, INT_MIN, INT_MAX, &version))
		return -MD_E_INPUT;
	if (version != SNAP_VERSION)
		return snapjs_fail(j, v ? snapjs_col(j, v) : 1,
				   "snapshot version %d is not supported: "
				   "this mpi-deadlock reads version %d",
				   (int)version, SNAP_VERSION);
	if (snapjs_fields(r, o, header_fields, j->s))
		return -MD_E_INPUT;
	r->have_header = true;
	if (missing)
		return snapjs_fail(j, 1, "the header has no \"%s\"", missing);
	if (snapjs_fields(r, o, count_fields, r))
		return -MD_E_INPUT;
	r->last_rank = -1;
	if (r->held >= 0)
		j->s->job_nranks = r->nranks;
	if (r->size >= 0 &&
	    ((long long)(r->held >= 0 ? r->held : r->nranks) + r->ncomms) *
			    RD_MIN_LINE > r->size)
		return snapjs_fail(j, snapjs_col(j, snapjs_get(j, o, "nranks")),
				   "%d ranks and %d communicators cannot fit "
				   "in the %lld bytes of the file: truncated "
				   "or inconsistent",
				   r->nranks, r->ncomms, r->size);
	r->group_budget = 64 * (int64_t)r->nranks + (1 << 20);
	return 0;
}

/* "0-1023,2048" into out (NULL: only count); *n gets the entry count,
 * which never passes max, so nothing is allocated on a lie. */
static int parse_ranges(struct snapread *r, const struct snapjs_node *v,
			int max, int *out, int *n)
{
	const char *p = v->s;

	for (*n = 0; *p;) {
		long a = 0, b;

		if (*p < '0' || *p > '9')
			goto bad;
		for (; *p >= '0' && *p <= '9' && a <= r->nranks; p++)
			a = a * 10 + (*p - '0');
		b = a;
		if (*p == '-') {
			if (*++p < '0' || *p > '9')
				goto bad;
			for (b = 0; *p >= '0' && *p <= '9' && b <= r->nranks;
			     p++)
				b = b * 10 + (*p - '0');
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
		if (a > b || b >= r->nranks)
			return snapjs_fail(&r->j, snapjs_col(&r->j, v),
					   "\"group\" range %ld-%ld is out of "
					   "range (%d ranks)",
					   a, b, r->nranks);
		if (b - a + 1 > (long)max - *n)
			return snapjs_fail(&r->j, snapjs_col(&r->j, v),
					   "\"group\" has more than \"size\" "
					   "%d entries",
					   max);
		for (long g = a; out && g <= b; g++)
			out[*n + g - a] = (int)g;
		*n += (int)(b - a + 1);
	}
	return 0;
bad:
	return snapjs_fail(&r->j, snapjs_col(&r->j, v),
			   "\"group\" \"%.40s\" is not a list of rank ranges "
			   "like \"0-3,8\" (at \"%.10s\")",
			   v->s, p);
}

/* A group lists each global rank at most once. */
static int check_distinct(struct snapread *r, const struct snapjs_node *v,
			  const int *g, int n)
{
	int ret = 0, i;

	if (!r->seen)
		r->seen = xcalloc((size_t)r->nranks / 8 + 1, 1);
	for (i = 0; i < n; i++) {
		if (r->seen[g[i] / 8] & (1u << (g[i] % 8))) {
			ret = snapjs_fail(&r->j, snapjs_col(&r->j, v),
					  "\"group\" lists global rank %d "
					  "twice",
					  g[i]);
			break;
		}
		r->seen[g[i] / 8] |= (unsigned char)(1u << (g[i] % 8));
	}
	while (i-- > 0)
		r->seen[g[i] / 8] = 0;
	return ret;
}

static int group_array(struct snapread *r, const struct snapjs_node *v,
		       int *g)
{
	const struct snapjs_node *e = snapjs_first(&r->j, v);
	int64_t x;

	for (int i = 0; e; e = snapjs_next(&r->j, e), i++) {
		if (snapjs_num(&r->j, e, NULL, "a \"group\" entry", 0,
			       r->nranks - 1, &x))
			return -MD_E_INPUT;
		g[i] = (int)x;
	}
	return 0;
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
 * reference, or NULL. */
static int *groups_find(struct snap_groups *g, const char *text, int size,
			int nranks)
{
	int *found = NULL;

	pthread_mutex_lock(&g->lock);
	for (int i = 0; i < GROUPS_KEEP && !found; i++)
		if (g->e[i].text && g->e[i].size == size &&
		    g->e[i].nranks == nranks && !strcmp(g->e[i].text, text))
			found = snap_group_get(g->e[i].group);
	pthread_mutex_unlock(&g->lock);
	return found;
}

static void groups_add(struct snap_groups *g, const char *text, int size,
		       int nranks, int *group)
{
	unsigned i;

	pthread_mutex_lock(&g->lock);
	i = g->next++ % GROUPS_KEEP;
	free(g->e[i].text);
	snap_group_put(g->e[i].group);
	g->e[i].text = xstrdup(text);
	g->e[i].size = size;
	g->e[i].nranks = nranks;
	g->e[i].group = snap_group_get(group);
	pthread_mutex_unlock(&g->lock);
}

/* *out: a group of snap_group_new (NULL if absent), checked: a group
 * from r->groups was checked when first read, only the budget is this
 * snapshot's. */
static int read_group(struct snapread *r, const struct snapjs_node *o,
		      const char *key, int size, int **out)
{
	const struct snapjs_node *v = snapjs_get(&r->j, o, key);
	bool text = v && v->type == SNAPJS_STR;
	bool cache = r->groups && text && size >= GROUPS_MIN;
	int n = v && v->type == SNAPJS_ARR ? v->n : size, ret = 0;

	*out = cache ? groups_find(r->groups, v->s, size, r->nranks) : NULL;
	if (!v)
		return 0;
	if (!text && v->type != SNAPJS_ARR)
		return snapjs_fail(&r->j, snapjs_col(&r->j, v),
				   "\"%s\" must be an array of ranks or a "
				   "string of rank ranges", key);
	if (text && !*out)
		ret = parse_ranges(r, v, size, NULL, &n);
	if (!ret && n != size)
		ret = snapjs_fail(&r->j, snapjs_col(&r->j, v),
				  "\"%s\" has %d entries, \"%s\" says %d",
				  key, n, strcmp(key, "group") ? "remote_size"
							      : "size", size);
	if (!ret && (r->group_budget -= size) < 0)
		ret = snapjs_fail(&r->j, snapjs_col(&r->j, v),
				  "the communicator groups add up to more "
				  "than 64 entries per rank");
	if (!ret && !*out) {
		*out = snap_group_new(size);
		ret = text ? parse_ranges(r, v, size, *out, &n)
			   : group_array(r, v, *out);
		if (!ret)
			ret = check_distinct(r, v, *out, size);
		if (!ret && cache)
			groups_add(r->groups, v->s, size, r->nranks, *out);
	}
	if (ret) {
		snap_group_put(*out);
		*out = NULL;
	}
	return ret;
}

/* "neighbors": "1,3;0,2;;1": size lists of local ranks, ';' between
 * them, ',' between the ranks of one list. */
static int parse_neighbors(struct snapread *r, long col, int size,
			   const char *text, int **first, int **nbr)
{
	const char *p = text;
	int n = 0, cap = 16;

	*first = xmalloc(((size_t)size + 1) * sizeof(int));
	*nbr = xmalloc((size_t)cap * sizeof(int));
	(*first)[0] = 0;
	for (int i = 0; i < size; i++) {
		while (*p && *p != ';') {
			char *end;
			long v = strtol(p, &end, 10);

			if (end == p || v < 0 || v >= size)
				goto bad;
			if (n == cap)
				*nbr = xrealloc(*nbr,
						(size_t)(cap *= 2) * sizeof(int));
			(*nbr)[n++] = (int)v;
			p = end;
			if (*p == ',' && p[1] && p[1] != ';' && p[1] != ',')
				p++;
			else if (*p && *p != ';')
				goto bad;
		}
		(*first)[i + 1] = n;
		if (i + 1 < size && *p++ != ';')
			goto bad;
	}
	if (!*p)
		return 0;
bad:
	return snapjs_fail(&r->j, col,
			   "\"neighbors\" must be %d lists of local ranks "
			   "below %d, one per local rank (\"1,3;0,2\")",
			   size, size);
}

/* A communicator line's fields but its number and group. */
struct comm_line {
	uint64_t id;
	const char *name, *neighbors;
	int size, topo, remote_size;
};

#define CL(k, kd, field, ...) \
	SJ_FIELD(k, kd, struct comm_line, field, __VA_ARGS__)

static const struct snapjs_field comm_fields[] = {
	CL("id", SJ_U64, id),
	CL("name", SJ_STR, name),
	CL("size", SJ_INT, size, .max = SJ_NRANKS),
	CL("topo", SJ_ENUM, topo, .sub = snap_topo_names),
	CL("neighbors", SJ_STR, neighbors),
	CL("remote_size", SJ_INT, remote_size, .max = SJ_NRANKS),
	{ NULL },
};
SJ_TABLE_FITS(comm_fields);

/* The communicator's topology, if the line has one. */
static int read_topo(struct snapread *r, const struct snapjs_node *o,
		     int idx, const struct comm_line *c)
{
	struct snapjs *j = &r->j;
	int *first = NULL, *nbr = NULL, ret;

	if (c->topo == SNAP_TOPO_NONE)
		return 0;
	if (!c->neighbors)
		return snapjs_fail(j, snapjs_col(j, snapjs_get(j, o, "topo")),
				   "\"topo\" without \"neighbors\"");
	ret = parse_neighbors(r, snapjs_col(j, snapjs_get(j, o, "neighbors")),
			      c->size, c->neighbors, &first, &nbr);
	if (!ret)
		snap_comm_set_topo(j->s, idx, c->topo, first, nbr);
	free(first);
	free(nbr);
	return ret;
}

static int read_comm(struct snapread *r, const struct snapjs_node *o)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *n = snapjs_get(j, o, "comm");
	struct comm_line c = { 0 };
	int64_t idx;
	int got, *group, *remote = NULL;

	if (snapjs_num(j, n, "comm", NULL, 0, INT_MAX, &idx))
		return -MD_E_INPUT;
	if (r->ranks_read > 0)
		return snapjs_fail(j, snapjs_col(j, n),
				   "communicator %d comes after the rank lines",
				   (int)idx);
	if (idx >= r->ncomms)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"comm\" %d is out of range (%d "
				   "communicators in the header)",
				   (int)idx, r->ncomms);
	if (idx != r->comms_read)
		return snapjs_fail(j, snapjs_col(j, n),
				   "communicator %d comes where communicator "
				   "%d was expected",
				   (int)idx, r->comms_read);
	j->at_comm = (int)idx;
	if (snapjs_fields(r, o, comm_fields, &c) ||
	    read_group(r, o, "group", c.size, &group))
		return -MD_E_INPUT;
	if (c.remote_size && read_group(r, o, "remote", c.remote_size,
					 &remote)) {
		snap_group_put(group);
		return -MD_E_INPUT;
	}
	got = snap_comm_intern_shared(j->s, c.id, c.name, c.size, group);
	snap_group_put(group);
	if (got == idx && remote)
		snap_comm_set_remote(j->s, got, c.remote_size, remote);
	snap_group_put(remote);
	if (got != idx)
		return snapjs_fail(j, 1, "the same as communicator %d", got);
	if (read_topo(r, o, (int)idx, &c))
		return -MD_E_INPUT;
	r->comms_read++;
	return 0;
}

/* What a line is depends on its keys ("rank" before "comm" before
 * "note"). */
static int read_object(struct snapread *r)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *o = &j->nodes[0], *note;

	if (o->type != SNAPJS_OBJ)
		return snapjs_fail(j, snapjs_col(j, o),
				   "the line is not a JSON object");
	if (!r->have_header)
		return read_header(r, o);
	if (snapjs_get(j, o, "rank"))
		return snapread_rank(r, o);
	if (snapjs_get(j, o, "comm"))
		return read_comm(r, o);
	if ((note = snapjs_get(j, o, "note"))) {
		if (note->type != SNAPJS_STR)
			return snapjs_fail(j, snapjs_col(j, note),
					   "\"note\" must be a string");
		snap_note(j->mem, "%s", note->s);
		return 0;
	}
	if (snapjs_get(j, o, "format"))
		return snapjs_fail(j, 1, "a second header line");
	return snapjs_fail(j, 1,
			   "the line is neither a communicator, a rank nor "
			   "a note");
}

/* After the last line: was everything the header promised there? */
static int finish(struct snapread *r)
{
	struct snapjs *j = &r->j;

	j->at_comm = j->at_rank = j->at_op = -1;
	if (!r->have_header)
		return snapjs_fail(j, 1, "empty file: no snapshot header");
	if (r->comms_read < r->ncomms)
		return snapjs_fail(j, 1,
				   "truncated: %d of %d communicator lines",
				   r->comms_read, r->ncomms);
	if (r->ranks_read < (r->held >= 0 ? r->held : r->nranks))
		return snapjs_fail(j, 1, "truncated: %d of %d rank lines",
				   r->ranks_read,
				   r->held >= 0 ? r->held : r->nranks);
	return 0;
}

/* The input's size bounds the header's counts, when it is known. */
static long long input_size(FILE *f)
{
	struct stat st;
	int fd = fileno(f);

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return (long long)st.st_size;
	return -1;
}

/* The input in big reads (64 KiB and up; a 4 KiB stdio buffer costs a
 * system call per 8 ranks), cut into lines in place: from f, or (a
 * worker) from fd between at and stop. */
struct lines {
	char *buf;
	size_t cap, start, end;
	bool eof, err;
	FILE *f;
	int fd;
	long long at, stop;
	long long off;		/* input offset of the next line */
};

static size_t fill(struct lines *b)
{
	size_t room = b->cap - b->end - 1;
	ssize_t n;

	if (b->f)
		return fread(b->buf + b->end, 1, room, b->f);
	if ((long long)room > b->stop - b->at)
		room = (size_t)(b->stop - b->at);
	n = room ? pread(b->fd, b->buf + b->end, room, b->at) : 0;
	if (n < 0) {
		b->err = true;
		return 0;
	}
	b->at += n;
	return (size_t)n;
}

/* The next line, its '\n' included if it has one, and a byte behind it
 * that may be written; -1 at the end. */
static ssize_t next_line(struct lines *b, char **line)
{
	if (!b->buf) {
		b->cap = 1 << 16;
		b->buf = xmalloc(b->cap);
	}
	for (;;) {
		char *at = b->buf + b->start;
		char *nl = memchr(at, '\n', b->end - b->start);
		size_t n = nl ? (size_t)(nl - at) + 1 : b->end - b->start;

		if (nl || (b->eof && n)) {
			*line = at;
			b->start += n;
			b->off += (long long)n;
			return (ssize_t)n;
		}
		if (b->eof)
			return -1;
		memmove(b->buf, at, n);
		b->start = 0;
		b->end = n;
		if (n > b->cap / 2) {	/* a long line: room for more */
			b->cap *= 2;
			b->buf = xrealloc(b->buf, b->cap);
		}
		n = fill(b);
		b->end += n;
		b->eof = n == 0;
	}
}

/* The next line of in, read: 1 if there was one (0 at the end), or an
 * error. */
static int read_next(struct snapread *r, struct lines *in)
{
	struct snapjs *j = &r->j;
	char *line;
	ssize_t n = next_line(in, &line);

	if (n < 0)
		return 0;
	j->lineno++;
	j->line = line;
	/* The parse wants a byte behind the line. */
	j->len = (size_t)n - (line[n - 1] == '\n');
	line[j->len] = '\n';
	if (strspn(line, " \t\r") == j->len)
		return 1;
	j->at_comm = j->at_rank = j->at_op = -1;
	return snapjs_parse_line(j) || read_object(r) ? -MD_E_INPUT : 1;
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
	struct lines in;
	pthread_t tid;
	bool started;
	int ret;
};

/* The start of the first line at or after pos (after a '\n'). */
static long long line_start(int fd, long long pos, long long end)
{
	char buf[4096];

	if (pos <= 0)
		return pos;
	for (pos--; pos < end;) {
		ssize_t n = pread(fd, buf, sizeof(buf), pos);
		char *nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;

		if (nl)
			return pos + (nl - buf) + 1;
		if (n <= 0)
			break;
		pos += n;
	}
	return end;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	while ((w->ret = read_next(&w->r, &w->in)) > 0)
		;
	if (!w->ret && w->in.err)
		w->ret = -MD_E_INPUT;
	return NULL;
}

/* The workers' ranks must follow each other from 0 to nranks. */
static int join(struct snapread *r, struct worker *w, int n)
{
	struct snap *s = r->j.s;
	int next = 0, ret = 0;

	for (int i = 0; i < n; i++) {
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
		if (w[i].ret || (w[i].r.ranks_read >= 0 &&
				 w[i].r.first_rank != next))
			ret = -MD_E_INPUT;
		else if (w[i].r.ranks_read >= 0)
			next = w[i].r.ranks_read;
	}
	if (next != r->nranks)
		ret = -MD_E_INPUT;
	for (int i = 0; i < n; i++) {
		struct snap *mem = w[i].r.j.mem;

		for (int k = 0; !ret && k < mem->nnotes; k++)
			snap_note(s, "%s", mem->notes[k]);
		snap_adopt_pool(s, mem);
		snap_free(mem);
		snapjs_done(&w[i].r.j);
		free(w[i].in.buf);
	}
	if (!ret)
		s->nranks = r->ranks_read = r->nranks;
	return ret;
}

/* Returns the threads that read, or -MD_E_INPUT: read again alone. */
static int read_parallel(struct snapread *r, struct lines *in, int threads)
{
	struct worker w[RD_MAX_THREADS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	long long from = in->off, size = r->size;
	int fd = fileno(in->f), n;

	if (threads > RD_MAX_THREADS)
		threads = RD_MAX_THREADS;
	snapread_reserve(r, r->nranks - 1);
	for (n = 0; n < threads; n++) {
		struct worker *x = memset(&w[n], 0, sizeof(w[n]));

		x->r = *r;
		snapjs_init(&x->r.j, r->j.s, r->j.name);
		x->r.j.mem = snap_new();
		x->r.j.lock = &lock;
		x->r.j.quiet = x->r.worker = true;
		x->r.seen = NULL;
		x->r.ranks_read = n ? -1 : 0;
		x->in = (struct lines){ .fd = fd, .at = from, .stop = size };
		if (n + 1 < threads)
			x->in.stop = line_start(fd, from + (size - from) /
							    (threads - n),
						size);
		from = x->in.stop;
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

/* One read of f; RD_AGAIN: read it again with one thread. */
#define RD_AGAIN 1
static int read_file(FILE *f, const char *name,
		     const struct snap_read_opts *opts, int threads, int *used,
		     struct snap **out)
{
	struct snapread r = {.size = input_size(f),
			     .groups = opts ? opts->groups : NULL};
	struct lines in = {.f = f, .off = ftell(f)};
	int ret;

	snapjs_init(&r.j, snap_new(), name ? name : "snapshot");
	/* The header and the communicators, then the rank lines in
	 * parallel where that pays. */
	while ((ret = read_next(&r, &in)) > 0)
		/* Threads pay where the ranks are many, their lines all
		 * ahead in a regular file. */
		if (threads > 1 && r.have_header &&
		    r.comms_read == r.ncomms && r.held < 0 &&
		    r.ranks_read == 0 && r.size >= 0 && in.off >= 0 &&
		    r.nranks >= RD_PAR_MIN_RANKS) {
			*used = read_parallel(&r, &in, threads);
			ret = *used > 0 ? 0 : RD_AGAIN;
			break;
		}
	if (!ret && ferror(f)) {
		md_error("reading %s: %s", r.j.name, strerror(errno));
		ret = -MD_E_INPUT;
	}
	r.j.lineno++;
	r.j.line = "";
	r.j.len = 0;
	if (!ret)
		ret = finish(&r);
	free(in.buf);
	free(r.seen);
	if (ret)
		snap_free(r.j.s);
	else
		*out = r.j.s;
	snapjs_done(&r.j);
	return ret;
}

int snap_read_opts(FILE *f, const char *name, struct snap_read_opts *opts,
		   struct snap **out)
{
	long start = ftell(f);
	int ret, used = 1;

	*out = NULL;
	ret = read_file(f, name, opts, opts ? opts->threads : 1, &used, out);
	if (opts)
		opts->threads_used = used;
	if (ret == RD_AGAIN) {
		if (fseek(f, start, SEEK_SET) != 0) {
			md_error("fseek(%s): %s", name ? name : "snapshot",
				 strerror(errno));
			return -MD_E_INPUT;
		}
		ret = read_file(f, name, opts, 1, &used, out);
		if (opts)
			opts->threads_used = 1;
	}
	return ret;
}

int snap_read(FILE *f, const char *name, struct snap **out)
{
	return snap_read_opts(f, name, NULL, out);
}
