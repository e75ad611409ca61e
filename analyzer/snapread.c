/*
 * snapread.c - read a snapshot written by snap_write()
 * (doc/snapshot-format.md).
 *
 * One line at a time: json-c parses the line with one reused tokener, the
 * line is converted into the model and its objects are dropped at once,
 * so memory is the model plus one line.  Everything that sizes an
 * allocation is checked before the allocation: a snapshot is input from
 * anyone (bug reports) and must never crash or exhaust the reader.
 */
#include "snap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "md.h"
#include "snapjson.h"

/* Far above any machine (Frontier has ~9.4 million cores) and still
 * small enough that counts times element sizes cannot overflow. */
#define RD_MAX_RANKS (1 << 26)
/* The shortest possible rank or communicator line, `{"rank":0}`. */
#define RD_MIN_LINE 10
/* Nesting in the format is 5 deep (rank, threads, thread, frames,
 * frame); the limit keeps json-c's recursion short on hostile input. */
#define RD_DEPTH 16

/* Adapters: the enum name functions take enums. */
static const char *state_name(int i)
{
	return snap_state_name(i);
}
static const char *progress_name(int i)
{
	return snap_progress_name(i);
}
static const char *kind_name(int i)
{
	return snap_op_kind_name(i);
}
static const char *status_name(int i)
{
	return snap_status_name(i);
}

static int header_strings(struct snaprd *r, jobj *o)
{
	struct snap *s = r->s;

	if (snaprd_str(r, o, "tool", &s->tool) ||
	    snaprd_str(r, o, "host", &s->host) ||
	    snaprd_str(r, o, "starter", &s->starter) ||
	    snaprd_str(r, o, "mpi", &s->mpi) ||
	    snaprd_str(r, o, "dll", &s->dll) ||
	    snaprd_str(r, o, "types", &s->types))
		return -MD_E_INPUT;
	return 0;
}

/* nranks and ncomms size the allocations: check them against the input
 * before anything is allocated. */
static int header_counts(struct snaprd *r, jobj *o)
{
	if (snaprd_int(r, o, "nranks", 0, RD_MAX_RANKS, -1, &r->nranks) ||
	    snaprd_int(r, o, "ncomms", 0, RD_MAX_RANKS, -1, &r->ncomms))
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

static int read_header(struct snaprd *r, jobj *o)
{
	struct snap *s = r->s;
	const char *fmt;
	int version;

	if (snaprd_str(r, o, "format", &fmt))
		return -MD_E_INPUT;
	if (!fmt || strcmp(fmt, SNAP_FORMAT) != 0)
		return snaprd_fail(
			r, fmt ? "format" : NULL,
			"not an mpi-deadlock snapshot: the first line "
			"must say \"format\":\"%s\"",
			SNAP_FORMAT);
	if (snaprd_int(r, o, "version", INT_MIN, INT_MAX, -1, &version))
		return -MD_E_INPUT;
	if (version != SNAP_VERSION)
		return snaprd_fail(r, "version",
				   "snapshot version %d is not supported: this "
				   "mpi-deadlock reads version %d",
				   version, SNAP_VERSION);
	if (snaprd_i64(r, o, "time", &s->time) || header_strings(r, o) ||
	    snaprd_int(r, o, "starter_pid", 0, INT_MAX, 0, &s->starter_pid) ||
	    snaprd_int(r, o, "looks", 0, INT_MAX, 0, &s->looks) ||
	    snaprd_int(r, o, "interval_ms", 0, INT_MAX, 0, &s->interval_ms))
		return -MD_E_INPUT;
	r->have_header = true;
	return header_counts(r, o);
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

static int group_array(struct snaprd *r, jobj *v, int size, int *g)
{
	for (int i = 0; i < size; i++) {
		jobj *e = json_object_array_get_idx(v, (size_t)i);
		int64_t x = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) || x < 0 ||
		    x >= r->nranks)
			return snaprd_fail(r, "group",
					   "\"group\" entry %d is not a "
					   "rank in 0..%d",
					   i, r->nranks - 1);
		g[i] = (int)x;
	}
	return 0;
}

static int read_group(struct snaprd *r, jobj *o, int size, int **out)
{
	jobj *v;
	int n = 0, ret;

	*out = NULL;
	if (!json_object_object_get_ex(o, "group", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_string)) {
		ret = parse_ranges(r, json_object_get_string(v), size, NULL,
				   &n);
	} else if (json_object_is_type(v, json_type_array)) {
		n = (int)(json_object_array_length(v) > (size_t)size
				  ? (size_t)size + 1
				  : json_object_array_length(v));
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
	if (json_object_is_type(v, json_type_string))
		ret = parse_ranges(r, json_object_get_string(v), size, *out,
				   &n);
	else
		ret = group_array(r, v, size, *out);
	if (!ret)
		ret = check_distinct(r, *out, size);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

static int read_comm(struct snaprd *r, jobj *o)
{
	const char *name;
	int idx, size, got, ret;
	uint64_t id;
	int *group;

	if (snaprd_int(r, o, "comm", 0, INT_MAX, 0, &idx))
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
	snprintf(r->ctx, sizeof(r->ctx), "communicator %d: ", idx);
	if (snaprd_u64(r, o, "id", &id) || snaprd_str(r, o, "name", &name) ||
	    snaprd_int(r, o, "size", 0, r->nranks, 0, &size) ||
	    read_group(r, o, size, &group))
		return -MD_E_INPUT;
	got = snap_comm_intern(r->s, id, name, size, group);
	free(group);
	if (got != idx)
		return snaprd_fail(r, NULL, "the same as communicator %d", got);
	r->comms_read++;
	ret = 0;
	return ret;
}

static int read_site(struct snaprd *r, struct snap_rank *k, jobj *o)
{
	jobj *site;

	if (snaprd_object(r, o, "site", &site))
		return -MD_E_INPUT;
	if (!site)
		return 0;
	if (snaprd_str(r, site, "func", &k->call_func) ||
	    snaprd_str(r, site, "file", &k->call_file) ||
	    snaprd_int(r, site, "line", 0, INT_MAX, 0, &k->call_line))
		return -MD_E_INPUT;
	return 0;
}

/* Each member pair must be a real place in the communicator's group. */
static int read_members(struct snaprd *r, struct snap_rank *k, jobj *o)
{
	jobj *a;
	int n;

	if (snaprd_array(r, o, "members", (size_t)r->ncomms, &a, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->members = xcalloc((size_t)n, sizeof(*k->members));
	k->nmembers = n;
	for (int i = 0; i < n; i++) {
		jobj *m = json_object_array_get_idx(a, (size_t)i), *c, *l;
		const struct snap_comm *comm;
		int64_t ci, li;

		/* json-c asserts on array access to a non-array. */
		if (!json_object_is_type(m, json_type_array) ||
		    json_object_array_length(m) != 2)
			return snaprd_fail(r, "members",
					   "\"members\" entry %d "
					   "must be [comm, local rank]",
					   i);
		c = json_object_array_get_idx(m, 0);
		l = json_object_array_get_idx(m, 1);
		if (!json_object_is_type(c, json_type_int) ||
		    !json_object_is_type(l, json_type_int))
			return snaprd_fail(r, "members",
					   "\"members\" entry %d must "
					   "be [comm, local rank]",
					   i);
		ci = json_object_get_int64(c);
		li = json_object_get_int64(l);
		if (ci < 0 || ci >= r->ncomms)
			return snaprd_fail(r, "members",
					   "\"members\" entry %d: "
					   "comm %" PRId64
					   " is out of range (%d "
					   "communicators)",
					   i, ci, r->ncomms);
		comm = &r->s->comms[ci];
		if (li < 0 || li >= comm->size ||
		    (comm->group && comm->group[li] != k->rank))
			return snaprd_fail(r, "members",
					   "\"members\" entry %d: "
					   "rank %d is not local rank %" PRId64
					   " of communicator %" PRId64,
					   i, k->rank, li, ci);
		k->members[i].comm = (int)ci;
		k->members[i].local_rank = (int)li;
	}
	return 0;
}

static int read_queues(struct snaprd *r, struct snap_rank *k, jobj *o)
{
	jobj *v, *none;

	if (snaprd_bool(r, o, "unexpected", &k->unexpected_available))
		return -MD_E_INPUT;
	if (!json_object_object_get_ex(o, "queues", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), "ok") == 0)
		return 0;
	if (!json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "none", &none) ||
	    !json_object_is_type(none, json_type_string))
		return snaprd_fail(r, "queues",
				   "\"queues\" must be \"ok\" or "
				   "{\"none\":\"reason\"}");
	k->queues = SNAP_QUEUES_NONE;
	k->queues_reason = snap_str(r->s, json_object_get_string(none));
	return 0;
}

static int read_actual(struct snaprd *r, struct snap_op *op, jobj *o)
{
	jobj *a;

	if (snaprd_object(r, o, "actual", &a))
		return -MD_E_INPUT;
	op->actual_local = op->actual_global = -1;
	if (!a)
		return 0;
	if (snaprd_int(r, a, "peer", -1, INT_MAX, -1, &op->actual_local) ||
	    snaprd_int(r, a, "peer_global", -1, r->nranks - 1, -1,
		       &op->actual_global) ||
	    snaprd_int(r, a, "tag", INT_MIN, INT_MAX, 0, &op->actual_tag) ||
	    snaprd_u64(r, a, "length", &op->actual_length))
		return -MD_E_INPUT;
	return 0;
}

static int read_extra(struct snaprd *r, struct snap_op *op, jobj *o)
{
	jobj *a;
	int n;

	if (snaprd_array(r, o, "extra", 5, &a, &n))
		return -MD_E_INPUT;
	for (int i = 0; i < n; i++) {
		jobj *e = json_object_array_get_idx(a, (size_t)i);

		if (!json_object_is_type(e, json_type_string))
			return snaprd_fail(r, "extra",
					   "\"extra\" entry %d must be "
					   "a string",
					   i);
		op->extra[i] = snap_str(r->s, json_object_get_string(e));
		op->nextra = i + 1;
	}
	return 0;
}

static int op_peer(struct snaprd *r, struct snap_op *op, jobj *o)
{
	const struct snap_comm *c;

	if (snaprd_int(r, o, "comm", -1, INT_MAX, -1, &op->comm))
		return -MD_E_INPUT;
	if (op->comm >= r->ncomms)
		return snaprd_fail(r, "comm",
				   "\"comm\" %d is out of range "
				   "(%d communicators)",
				   op->comm, r->ncomms);
	c = op->comm >= 0 ? &r->s->comms[op->comm] : NULL;
	if (snaprd_int(r, o, "peer", -1, c ? c->size - 1 : INT_MAX, -1,
		       &op->peer_local) ||
	    snaprd_int(r, o, "peer_global", -1, r->nranks - 1, -1,
		       &op->peer_global))
		return -MD_E_INPUT;
	if (c && c->group && op->peer_local >= 0 && op->peer_global >= 0 &&
	    c->group[op->peer_local] != op->peer_global)
		return snaprd_fail(
			r, "peer_global",
			"\"peer_global\" %d is not "
			"\"peer\" %d of communicator %d (global rank "
			"%d)",
			op->peer_global, op->peer_local, op->comm,
			c->group[op->peer_local]);
	return 0;
}

static int read_op(struct snaprd *r, struct snap_op *op, jobj *o)
{
	int kind, status;

	if (!json_object_is_type(o, json_type_object))
		return snaprd_fail(r, "ops",
				   "an entry of \"ops\" is not an object");
	if (!json_object_object_get_ex(o, "kind", NULL))
		return snaprd_fail(r, "ops",
				   "an entry of \"ops\" has no \"kind\"");
	if (snaprd_enum(r, o, "kind", kind_name, 3, 0, &kind) ||
	    snaprd_enum(r, o, "status", status_name, 3, 0, &status) ||
	    op_peer(r, op, o) ||
	    snaprd_int(r, o, "tag", INT_MIN, INT_MAX, 0, &op->tag) ||
	    snaprd_bool(r, o, "any_tag", &op->any_tag) ||
	    snaprd_u64(r, o, "length", &op->length) ||
	    snaprd_addr(r, o, "buffer", &op->buffer) ||
	    snaprd_bool(r, o, "system_buffer", &op->system_buffer) ||
	    read_actual(r, op, o) ||
	    snaprd_addr(r, o, "request", &op->request) ||
	    snaprd_bool(r, o, "corrected", &op->status_corrected) ||
	    read_extra(r, op, o))
		return -MD_E_INPUT;
	op->kind = kind;
	op->status = status;
	return 0;
}

static int read_ops(struct snaprd *r, struct snap_rank *k, jobj *o)
{
	jobj *a;
	int n, len = (int)strlen(r->ctx);

	if (snaprd_array(r, o, "ops", 1 << 24, &a, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->ops = xcalloc((size_t)n, sizeof(*k->ops));
	k->nops = n;
	for (int i = 0; i < n; i++) {
		snprintf(r->ctx + len, sizeof(r->ctx) - len, "op %d: ", i);
		if (read_op(r, &k->ops[i], json_object_array_get_idx(a, i)))
			return -MD_E_INPUT;
	}
	r->ctx[len] = '\0';
	return 0;
}

static int read_frame(struct snaprd *r, struct snap_frame *f, jobj *o)
{
	if (!json_object_is_type(o, json_type_object))
		return snaprd_fail(r, "frames",
				   "an entry of \"frames\" is not an "
				   "object");
	if (snaprd_addr(r, o, "pc", &f->pc) ||
	    snaprd_str(r, o, "func", &f->func) ||
	    snaprd_str(r, o, "object", &f->object) ||
	    snaprd_str(r, o, "file", &f->file) ||
	    snaprd_int(r, o, "line", 0, INT_MAX, 0, &f->line))
		return -MD_E_INPUT;
	return 0;
}

static int read_thread(struct snaprd *r, struct snap_thread *t, jobj *o)
{
	jobj *a;
	int n;

	t->mpi_frame = t->user_frame = -1;
	if (!json_object_is_type(o, json_type_object))
		return snaprd_fail(r, "threads",
				   "an entry of \"threads\" is not "
				   "an object");
	if (snaprd_int(r, o, "tid", 0, INT_MAX, 0, &t->tid) ||
	    snaprd_str(r, o, "call", &t->mpi_call) ||
	    snaprd_bool(r, o, "progress_thread", &t->progress_thread) ||
	    snaprd_array(r, o, "frames", 1 << 20, &a, &n))
		return -MD_E_INPUT;
	if (snaprd_int(r, o, "mpi_frame", -1, n - 1, -1, &t->mpi_frame) ||
	    snaprd_int(r, o, "user_frame", -1, n - 1, -1, &t->user_frame))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	t->frames = xcalloc((size_t)n, sizeof(*t->frames));
	t->nframes = n;
	for (int i = 0; i < n; i++)
		if (read_frame(r, &t->frames[i],
			       json_object_array_get_idx(a, (size_t)i)))
			return -MD_E_INPUT;
	return 0;
}

static int read_threads(struct snaprd *r, struct snap_rank *k, jobj *o)
{
	jobj *a;
	int n;

	if (snaprd_array(r, o, "threads", 1 << 20, &a, &n))
		return -MD_E_INPUT;
	if (!n)
		return 0;
	k->threads = xcalloc((size_t)n, sizeof(*k->threads));
	k->nthreads = n;
	for (int i = 0; i < n; i++)
		if (read_thread(r, &k->threads[i],
				json_object_array_get_idx(a, (size_t)i)))
			return -MD_E_INPUT;
	return 0;
}

/* Room for rank idx; grows by doubling so a header that lies about
 * nranks on a pipe costs nothing until the rank lines are there. */
static void ranks_reserve(struct snaprd *r, int idx)
{
	long long cap = r->ranks_cap;

	if (idx < r->ranks_cap)
		return;
	while (cap <= idx)
		cap = cap ? 2 * cap : 4096;
	if (cap > r->nranks)
		cap = r->nranks;
	r->s->ranks = xrealloc(r->s->ranks, (size_t)cap * sizeof(*r->s->ranks));
	r->ranks_cap = (int)cap;
}

static int rank_number(struct snaprd *r, jobj *o, int *idx)
{
	if (snaprd_int(r, o, "rank", 0, INT_MAX, 0, idx))
		return -MD_E_INPUT;
	if (r->comms_read != r->ncomms)
		return snaprd_fail(r, NULL,
				   "rank %d comes after %d communicator "
				   "lines, the header says %d",
				   *idx, r->comms_read, r->ncomms);
	if (*idx >= r->nranks)
		return snaprd_fail(r, "rank",
				   "rank %d is out of range (%d ranks "
				   "in the header)",
				   *idx, r->nranks);
	if (*idx < r->ranks_read)
		return snaprd_fail(r, "rank", "rank %d appears twice", *idx);
	if (*idx > r->ranks_read)
		return snaprd_fail(r, "rank",
				   "rank %d comes where rank %d was "
				   "expected: ranks must be in order, none "
				   "missing",
				   *idx, r->ranks_read);
	return 0;
}

static int read_rank(struct snaprd *r, jobj *o)
{
	struct snap_rank *k;
	int idx, state, progress;

	if (rank_number(r, o, &idx))
		return -MD_E_INPUT;
	ranks_reserve(r, idx);
	k = &r->s->ranks[idx];
	memset(k, 0, sizeof(*k));
	k->rank = idx;
	/* Counted now so that snap_free releases a half-read rank. */
	r->s->nranks = idx + 1;
	snprintf(r->ctx, sizeof(r->ctx), "rank %d: ", idx);
	if (snaprd_int(r, o, "pid", 0, INT_MAX, 0, &k->pid) ||
	    snaprd_str(r, o, "host", &k->host) ||
	    snaprd_str(r, o, "exe", &k->exe) ||
	    snaprd_enum(r, o, "state", state_name, 4, 0, &state) ||
	    snaprd_enum(r, o, "progress", progress_name, 3, 0, &progress) ||
	    snaprd_str(r, o, "call", &k->mpi_call) || read_site(r, k, o) ||
	    read_members(r, k, o) || read_queues(r, k, o) ||
	    read_ops(r, k, o) || read_threads(r, k, o) ||
	    snaprd_str(r, o, "reason", &k->reason))
		return -MD_E_INPUT;
	k->state = state;
	k->progress = progress;
	r->ranks_read++;
	return 0;
}

static int read_object(struct snaprd *r, jobj *o)
{
	jobj *note;

	r->ctx[0] = '\0';
	if (!json_object_is_type(o, json_type_object))
		return snaprd_fail(r, NULL, "the line is not a JSON object");
	if (!r->have_header)
		return read_header(r, o);
	if (json_object_object_get_ex(o, "rank", NULL))
		return read_rank(r, o);
	if (json_object_object_get_ex(o, "comm", NULL))
		return read_comm(r, o);
	if (json_object_object_get_ex(o, "note", &note)) {
		if (!json_object_is_type(note, json_type_string))
			return snaprd_fail(r, "note",
					   "\"note\" must be a string");
		snap_note(r->s, "%s", json_object_get_string(note));
		return 0;
	}
	if (json_object_object_get_ex(o, "format", NULL))
		return snaprd_fail(r, NULL, "a second header line");
	return snaprd_fail(r, NULL,
			   "the line is neither a communicator, a rank "
			   "nor a note");
}

static int parse_line(struct snaprd *r)
{
	enum json_tokener_error err;
	size_t end;
	jobj *o;
	int ret;

	r->ctx[0] = '\0';
	if (memchr(r->line, '\0', r->len))
		return snaprd_fail_at(
			r, (char *)memchr(r->line, '\0', r->len) - r->line + 1,
			"a NUL byte in the line");
	json_tokener_reset(r->tok);
	/* The terminating NUL goes in too: it ends a bare top-level number
	 * or literal, which json-c would otherwise wait on. */
	o = json_tokener_parse_ex(r->tok, r->line, (int)r->len + 1);
	err = json_tokener_get_error(r->tok);
	end = json_tokener_get_parse_end(r->tok);
	if (err == json_tokener_continue || err == json_tokener_error_parse_eof)
		return snaprd_fail_at(r, (long)r->len + 1,
				      "the line ends inside "
				      "a JSON value: truncated");
	if (err != json_tokener_success)
		return snaprd_fail_at(r, (long)end + 1, "invalid JSON: %s",
				      json_tokener_error_desc(err));
	for (end = end > r->len ? r->len : end; end < r->len; end++)
		if (!strchr(" \t\r", r->line[end])) {
			json_object_put(o);
			return snaprd_fail_at(r, (long)end + 1,
					      "text after the "
					      "JSON object");
		}
	ret = read_object(r, o);
	json_object_put(o);
	return ret;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r", p[i]) || !p[i])
			return false;
	return true;
}

/* After the last line: was everything the header promised there? */
static int check_complete(struct snaprd *r)
{
	r->ctx[0] = '\0';
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

static long long input_size(FILE *f)
{
	struct stat st;
	int fd = fileno(f);

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (long long)st.st_size;
}

int snap_read(FILE *f, const char *name, struct snap **out)
{
	struct snaprd r = {.name = name ? name : "snapshot",
			   .size = input_size(f)};
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	*out = NULL;
	r.s = snap_new();
	r.tok = json_tokener_new_ex(RD_DEPTH);
	json_tokener_set_flags(r.tok, JSON_TOKENER_STRICT |
					      JSON_TOKENER_VALIDATE_UTF8);
	while (!ret && (n = getline(&buf, &cap, f)) >= 0) {
		r.lineno++;
		r.line = buf;
		r.len = (size_t)n;
		if (r.len && buf[r.len - 1] == '\n')
			buf[--r.len] = '\0';
		if (!blank(r.line, r.len))
			ret = parse_line(&r);
	}
	if (!ret && ferror(f)) {
		md_error("reading %s: %s", r.name, strerror(errno));
		ret = -MD_E_INPUT;
	}
	r.lineno++;
	if (!ret)
		ret = check_complete(&r);
	free(buf);
	free(r.seen);
	json_tokener_free(r.tok);
	if (ret) {
		snap_free(r.s);
		return ret;
	}
	*out = r.s;
	return 0;
}
