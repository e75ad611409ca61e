/*
 * snapread.c - read a snapshot written by snap_write()
 * (doc/snapshot-format.md).
 *
 * One line at a time: yajl streams the line's tokens into plain records
 * (snapread_sax.c), the records are checked and converted into the model
 * (here and in snapread_rank.c) and reused for the next line, so memory
 * is the model plus one line and no value costs a malloc.  Everything that
 * sizes an allocation is checked before the allocation: a snapshot is
 * input from anyone (bug reports) and must never crash or exhaust the
 * reader.
 */
#include "snap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
/* Rank-line bytes per thread below which a second thread costs more
 * than it saves. */
#define RD_SPLIT (4u << 20)

static int header_strings(struct snaprd *r)
{
	const struct snaprd_val *v = r->top;
	struct snap *s = r->s;

	if (snaprd_str(r, &v[RDL_TOOL], "tool", &s->tool) ||
	    snaprd_str(r, &v[RDL_HOST], "host", &s->host) ||
	    snaprd_str(r, &v[RDL_STARTER], "starter", &s->starter) ||
	    snaprd_str(r, &v[RDL_MPI], "mpi", &s->mpi) ||
	    snaprd_str(r, &v[RDL_DLL], "dll", &s->dll) ||
	    snaprd_str(r, &v[RDL_TYPES], "types", &s->types))
		return -MD_E_INPUT;
	return 0;
}

/* nranks and ncomms size the allocations: check them against the input
 * before anything is allocated. */
static int header_counts(struct snaprd *r)
{
	if (snaprd_int(r, &r->top[RDL_NRANKS], "nranks", 0, RD_MAX_RANKS, -1,
		       &r->nranks) ||
	    snaprd_int(r, &r->top[RDL_NCOMMS], "ncomms", 0, RD_MAX_RANKS, -1,
		       &r->ncomms))
		return -MD_E_INPUT;
	if (r->nranks < 0 || r->ncomms < 0)
		return snaprd_fail(r, NULL, "the header has no \"%s\"",
				   r->nranks < 0 ? "nranks" : "ncomms");
	if (r->size >= 0 &&
	    ((long long)r->nranks + r->ncomms) * RD_MIN_LINE > r->size)
		return snaprd_fail(
			r, "nranks",
			"%d ranks and %d communicators cannot fit in "
			"the %lld bytes of the file: truncated or "
			"inconsistent",
			r->nranks, r->ncomms, r->size);
	r->group_budget = 64 * (int64_t)r->nranks + (1 << 20);
	return 0;
}

static int read_header(struct snaprd *r)
{
	const struct snaprd_val *v = r->top;
	struct snap *s = r->s;
	const char *fmt;
	int version;

	if (snaprd_str(r, &v[RDL_FORMAT], "format", &fmt))
		return -MD_E_INPUT;
	if (!fmt || strcmp(fmt, SNAP_FORMAT) != 0)
		return snaprd_fail(
			r, fmt ? "format" : NULL,
			"not an mpi-deadlock snapshot: the first line "
			"must say \"format\":\"%s\"",
			SNAP_FORMAT);
	if (snaprd_int(r, &v[RDL_VERSION], "version", INT_MIN, INT_MAX, -1,
		       &version))
		return -MD_E_INPUT;
	if (version != SNAP_VERSION)
		return snaprd_fail(r, "version",
				   "snapshot version %d is not supported: this "
				   "mpi-deadlock reads version %d",
				   version, SNAP_VERSION);
	if (snaprd_i64(r, &v[RDL_TIME], "time", &s->time) ||
	    header_strings(r) ||
	    snaprd_int(r, &v[RDL_STARTER_PID], "starter_pid", 0, INT_MAX, 0,
		       &s->starter_pid) ||
	    snaprd_int(r, &v[RDL_LOOKS], "looks", 0, INT_MAX, 0, &s->looks) ||
	    snaprd_int(r, &v[RDL_INTERVAL_MS], "interval_ms", 0, INT_MAX, 0,
		       &s->interval_ms))
		return -MD_E_INPUT;
	r->have_header = true;
	return header_counts(r);
}

/* "0-1023,2048" into out (NULL: only count); *n gets the entry count,
 * which never passes max, so nothing is allocated on a lie. */
static int parse_ranges(struct snaprd *r, const char *str, int max, int *out,
			int *n)
{
	const char *p = str;

	*n = 0;
	while (*p) {
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
			return snaprd_fail(r, "group",
					   "\"group\" range %ld-%ld is "
					   "out of range (%d ranks)",
					   a, b, r->nranks);
		if (b - a + 1 > (long)max - *n)
			return snaprd_fail(r, "group",
					   "\"group\" has more than "
					   "\"size\" %d entries",
					   max);
		for (long g = a; out && g <= b; g++)
			out[*n + g - a] = (int)g;
		*n += (int)(b - a + 1);
	}
	return 0;
bad:
	return snaprd_fail(r, "group",
			   "\"group\" \"%.40s\" is not a list of rank "
			   "ranges like \"0-3,8\" (at \"%.10s\")",
			   str, p);
}

/* A group lists each global rank at most once. */
static int check_distinct(struct snaprd *r, const int *g, int n)
{
	int ret = 0, i;

	if (!r->seen)
		r->seen = xcalloc((size_t)r->nranks / 8 + 1, 1);
	for (i = 0; i < n; i++) {
		if (r->seen[g[i] / 8] & (1u << (g[i] % 8))) {
			ret = snaprd_fail(r, "group",
					  "\"group\" lists global rank "
					  "%d twice",
					  g[i]);
			break;
		}
		r->seen[g[i] / 8] |= (unsigned char)(1u << (g[i] % 8));
	}
	while (i-- > 0)
		r->seen[g[i] / 8] = 0;
	return ret;
}

/* The entries were kept as ranks, -1 for anything else. */
static int group_array(struct snaprd *r, int size, int *g)
{
	const int *e = r->group.a;

	for (int i = 0; i < size; i++) {
		if (e[i] < 0 || e[i] >= r->nranks)
			return snaprd_fail(r, "group",
					   "\"group\" entry %d is not a "
					   "rank in 0..%d",
					   i, r->nranks - 1);
		g[i] = e[i];
	}
	return 0;
}

static int read_group(struct snaprd *r, int size, int **out)
{
	const struct snaprd_val *v = &r->top[RDL_GROUP];
	int n = 0, ret;

	*out = NULL;
	if (v->type == SNAPRD_ABSENT || v->type == SNAPRD_NULL)
		return 0;
	if (v->type == SNAPRD_STRING) {
		ret = parse_ranges(r, v->s, size, NULL, &n);
	} else if (v->type == SNAPRD_ARRAY) {
		n = v->n > size ? size + 1 : v->n;
		ret = 0;
	} else {
		return snaprd_fail(r, "group",
				   "\"group\" must be an array of "
				   "ranks or a string of rank ranges");
	}
	if (!ret && n != size)
		ret = snaprd_fail(r, "group",
				  "\"group\" has %s entries than "
				  "\"size\" %d",
				  n < size ? "fewer" : "more", size);
	if (!ret && (r->group_budget -= size) < 0)
		ret = snaprd_fail(r, "group",
				  "the communicator groups add up to "
				  "more than 64 entries per rank");
	if (ret)
		return ret;
	*out = xmalloc((size_t)size * sizeof(int) + 1);
	if (v->type == SNAPRD_STRING)
		ret = parse_ranges(r, v->s, size, *out, &n);
	else
		ret = group_array(r, size, *out);
	if (!ret)
		ret = check_distinct(r, *out, size);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

static const char *topo_name(int i)
{
	return snap_topo_name(i);
}

/* "neighbors": "1,3;0,2;;1": size lists of local ranks, ';' between
 * them, ',' between the ranks of one list. */
static int parse_neighbors(struct snaprd *r, int size, const char *text,
			   int **first, int **nbr)
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
	return snaprd_fail(r, "neighbors",
			   "\"neighbors\" must be %d lists of local ranks "
			   "below %d, one per local rank (\"1,3;0,2\")",
			   size, size);
}

/* The communicator's topology, if the line has one. */
static int read_topo(struct snaprd *r, int idx, int size)
{
	const struct snaprd_val *v = r->top;
	const char *text = NULL;
	int kind, *first = NULL, *nbr = NULL, ret;

	if (snaprd_enum(r, &v[RDL_TOPO], "topo", topo_name, 4, 0, &kind) ||
	    snaprd_str(r, &v[RDL_NEIGHBORS], "neighbors", &text))
		return -MD_E_INPUT;
	if (kind == SNAP_TOPO_NONE)
		return 0;
	if (!text)
		return snaprd_fail(r, "topo", "\"topo\" without \"neighbors\"");
	ret = parse_neighbors(r, size, text, &first, &nbr);
	if (!ret)
		snap_comm_set_topo(r->s, idx, kind, first, nbr);
	free(first);
	free(nbr);
	return ret;
}

static int read_comm(struct snaprd *r)
{
	const struct snaprd_val *v = r->top;
	const char *name;
	int idx, size, got, ret;
	uint64_t id;
	int *group;

	if (snaprd_int(r, &v[RDL_COMM], "comm", 0, INT_MAX, 0, &idx))
		return -MD_E_INPUT;
	if (r->ranks_read > 0)
		return snaprd_fail(r, NULL,
				   "communicator %d comes after the rank "
				   "lines",
				   idx);
	if (idx >= r->ncomms)
		return snaprd_fail(r, "comm",
				   "\"comm\" %d is out of range (%d "
				   "communicators in the header)",
				   idx, r->ncomms);
	if (idx != r->comms_read)
		return snaprd_fail(r, "comm",
				   "communicator %d comes where "
				   "communicator %d was expected",
				   idx, r->comms_read);
	r->at_comm = idx;
	if (snaprd_u64(r, &v[RDL_ID], "id", &id) ||
	    snaprd_str(r, &v[RDL_NAME], "name", &name) ||
	    snaprd_int(r, &v[RDL_SIZE], "size", 0, r->nranks, 0, &size) ||
	    read_group(r, size, &group))
		return -MD_E_INPUT;
	got = snap_comm_intern(r->s, id, name, size, group);
	free(group);
	if (got != idx)
		return snaprd_fail(r, NULL, "the same as communicator %d", got);
	if (read_topo(r, idx, size))
		return -MD_E_INPUT;
	r->comms_read++;
	ret = 0;
	return ret;
}

/* In a part read beside others a note waits for the parts before it
 * (snapread_par.c): the notes keep the file's order. */
static void add_note(struct snaprd *r, const char *text)
{
	struct snaprd_vec *v = &r->notes;

	if (!r->par) {
		snap_note(r->s, "%s", text);
		return;
	}
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 8;
		v->a = xrealloc(v->a, (size_t)v->cap * sizeof(char *));
	}
	((const char **)v->a)[v->n++] = text;
}

/* What a line is depends on its keys ("rank" before "comm" before
 * "note"), so it is interpreted only once it has been parsed whole. */
static int read_object(struct snaprd *r, bool object)
{
	const struct snaprd_val *v = r->top;

	r->at_comm = r->at_rank = r->at_op = -1;
	if (!object)
		return snaprd_fail(r, NULL, "the line is not a JSON object");
	if (!r->have_header)
		return read_header(r);
	if (v[RDL_RANK].type != SNAPRD_ABSENT)
		return snaprd_rank(r);
	if (v[RDL_COMM].type != SNAPRD_ABSENT)
		return read_comm(r);
	if (v[RDL_NOTE].type != SNAPRD_ABSENT) {
		if (v[RDL_NOTE].type != SNAPRD_STRING)
			return snaprd_fail(r, "note",
					   "\"note\" must be a string");
		add_note(r, v[RDL_NOTE].s);
		return 0;
	}
	if (v[RDL_FORMAT].type != SNAPRD_ABSENT)
		return snaprd_fail(r, NULL, "a second header line");
	return snaprd_fail(r, NULL,
			   "the line is neither a communicator, a rank "
			   "nor a note");
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r", p[i]) || !p[i])
			return false;
	return true;
}

int snaprd_line(struct snaprd *r)
{
	bool object;

	if (blank(r->line, r->len))
		return 0;
	r->at_comm = r->at_rank = r->at_op = -1;
	if (memchr(r->line, '\0', r->len))
		return snaprd_fail_at(
			r, (char *)memchr(r->line, '\0', r->len) - r->line + 1,
			"a NUL byte in the line");
	if (snaprd_sax_line(r, &object))
		return -MD_E_INPUT;
	return read_object(r, object);
}

/* After the last line: was everything the header promised there? */
int snaprd_finish(struct snaprd *r)
{
	r->at_comm = r->at_rank = r->at_op = -1;
	r->line = "";
	r->len = 0;
	if (!r->have_header)
		return snaprd_fail(r, NULL, "empty file: no snapshot header");
	if (r->comms_read < r->ncomms)
		return snaprd_fail(r, NULL,
				   "truncated: %d of %d communicator "
				   "lines",
				   r->comms_read, r->ncomms);
	if (r->ranks_read < r->nranks)
		return snaprd_fail(r, NULL, "truncated: %d of %d rank lines",
				   r->ranks_read, r->nranks);
	return 0;
}

void snaprd_init(struct snaprd *r, struct snap *s, const char *name,
		 long long size)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->size = size;
	r->at_comm = r->at_rank = r->at_op = -1;
	r->rank0 = -1;
	r->s = s;
	snaprd_sax_new(r);
}

void snaprd_done(struct snaprd *r)
{
	free(r->seen);
	free(r->notes.a);
	free(r->itab);
	snaprd_sax_free(r);
}

/* A pipe: line by line, as it comes. */
static int read_stream(FILE *f, const char *name, struct snap **out)
{
	struct snaprd r;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	snaprd_init(&r, snap_new(), name, -1);
	while (!ret && (n = getline(&buf, &cap, f)) >= 0) {
		r.lineno++;
		r.line = buf;
		r.len = (size_t)n;
		/* The parse wants the line's '\n' behind it; getline left
		 * room for its NUL there when the last line has none. */
		if (r.len && buf[r.len - 1] == '\n')
			r.len--;
		else
			buf[r.len] = '\n';
		ret = snaprd_line(&r);
	}
	if (!ret && ferror(f)) {
		md_error("reading %s: %s", r.name, strerror(errno));
		ret = -MD_E_INPUT;
	}
	r.lineno++;
	if (!ret)
		ret = snaprd_finish(&r);
	free(buf);
	snaprd_done(&r);
	if (ret) {
		snap_free(r.s);
		return ret;
	}
	*out = r.s;
	return 0;
}

/* Threads for the rank lines: the online CPUs (at most 8), or
 * MD_READ_THREADS; MD_READ_SPLIT sets the bytes of rank lines a thread
 * must have at least (tests and fuzzing set it low). */
static void read_opts(int *threads, size_t *split)
{
	const char *t = getenv("MD_READ_THREADS");
	const char *sp = getenv("MD_READ_SPLIT");
	long n = t ? atol(t) : sysconf(_SC_NPROCESSORS_ONLN);

	*threads = n < 1 ? 1 : n > 8 ? 8 : (int)n;
	*split = sp ? strtoull(sp, NULL, 10) : RD_SPLIT;
	if (*split < 1)
		*split = 1;
}

/* A regular file is mapped: no copy of its bytes, and its rank lines
 * can be cut between threads.  Returns 1 if f cannot be mapped. */
static int read_mapped(FILE *f, const char *name, struct snap **out)
{
	int fd = fileno(f), threads, ret;
	struct stat st;
	size_t split, len;
	off_t off;
	void *map;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (off = ftello(f)) < 0 || off > st.st_size)
		return 1;
	len = (size_t)(st.st_size - off);
	read_opts(&threads, &split);
	if (len == 0)
		return snaprd_read_buf("", 0, name, st.st_size, 1, split,
				       false, out);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	ret = snaprd_read_buf((const char *)map + off, len, name, st.st_size,
			      threads, split, true, out);
	munmap(map, (size_t)st.st_size);
	fseeko(f, 0, SEEK_END);
	return ret;
}

int snap_read(FILE *f, const char *name, struct snap **out)
{
	int ret;

	*out = NULL;
	name = name ? name : "snapshot";
	ret = read_mapped(f, name, out);
	if (ret != 1)
		return ret;
	return read_stream(f, name, out);
}
