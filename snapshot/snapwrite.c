/*
 * snapwrite.c - write a snapshot as JSON Lines (doc/snapshot-format.md).
 *
 * yajl's generator writes each line (the reader parses with yajl too:
 * one library, one idea of JSON), so no string is escaped by hand and no
 * tree is built.  Fields at their default are left out to keep a million
 * rank lines short; snap_read() puts the defaults back.
 */
#include "snap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "md.h"

typedef yajl_gen jgen;

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF), 0 if none. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], n, min;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)
		       ? 0 : n;
}

/*
 * The snapshot is UTF-8, and its reader checks: a string that is not
 * (a path of bytes in another encoding, read from a rank) is written
 * with U+FFFD for each byte that starts no well-formed sequence, so that
 * the snapshot, an agent's included, stays readable.
 */
static void put_str(jgen g, const char *v)
{
	static const unsigned char replacement[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)v, *piece;
	size_t len = strlen(v), o = 0, k, n;
	unsigned char *fixed = NULL;

	for (size_t i = 0; i < len; i += k ? k : 1) {
		k = utf8_len(u + i);
		piece = k ? u + i : replacement;
		n = k ? k : 3;
		if (!k && !fixed) {
			/* The first stray byte: copy what came before it. */
			fixed = xmalloc(3 * len + 1);
			memcpy(fixed, u, o = i);
		}
		if (fixed) {
			memcpy(fixed + o, piece, n);
			o += n;
		}
	}
	yajl_gen_string(g, fixed ? fixed : u, fixed ? o : len);
	free(fixed);
}

static void add_str(jgen g, const char *key, const char *v)
{
	if (!v)
		return;
	put_str(g, key);
	put_str(g, v);
}

static void add_int(jgen g, const char *key, int64_t v)
{
	put_str(g, key);
	yajl_gen_integer(g, v);
}

static void add_u64(jgen g, const char *key, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);

	put_str(g, key);
	yajl_gen_number(g, buf, (size_t)n);
}

static void add_addr(jgen g, const char *key, uint64_t v)
{
	char buf[24];

	if (!v)
		return;
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	add_str(g, key, buf);
}

static void add_true(jgen g, const char *key, bool v)
{
	if (!v)
		return;
	put_str(g, key);
	yajl_gen_bool(g, 1);
}

/* Open an object or array value under key. */
static void open_map(jgen g, const char *key)
{
	put_str(g, key);
	yajl_gen_map_open(g);
}

static void open_array(jgen g, const char *key)
{
	put_str(g, key);
	yajl_gen_array_open(g);
}

/* Close the line's object, print it and start the next line. */
static void put_line(jgen g, FILE *f)
{
	const unsigned char *buf;
	size_t len;

	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, f);
	fputc('\n', f);
	yajl_gen_clear(g);
	yajl_gen_reset(g, NULL);
}

static void write_header(jgen g, const struct snap *s, FILE *f)
{
	yajl_gen_map_open(g);
	add_str(g, "format", SNAP_FORMAT);
	add_int(g, "version", SNAP_VERSION);
	add_int(g, "time", s->time);
	add_str(g, "tool", s->tool);
	add_str(g, "host", s->host);
	add_int(g, "starter_pid", s->starter_pid);
	add_str(g, "starter", s->starter);
	add_str(g, "mpi", s->mpi);
	add_str(g, "implementation", s->impl);
	add_str(g, "dll", s->dll);
	add_str(g, "types", s->types);
	add_int(g, "looks", s->looks);
	add_int(g, "interval_ms", s->interval_ms);
	add_int(g, "nranks", s->job_nranks ? s->job_nranks : s->nranks);
	if (s->job_nranks)
		add_int(g, "held", s->nranks);
	add_int(g, "ncomms", s->ncomms);
	put_line(g, f);
}

/* Characters of "%d" of v: counted, not printed (a group of a million
 * ranks is measured in every snapshot of the job). */
static size_t digits(int v)
{
	unsigned long long u = v < 0 ? -(long long)v : v;
	size_t n = v < 0 ? 2 : 1;

	while (u >= 10) {
		u /= 10;
		n++;
	}
	return n;
}

/* The group as "0-1023,2048-4095", or NULL when the plain array of ints
 * would be as short. */
static char *group_ranges(const int *g, int n)
{
	size_t arr = 2, len = 0, cap = 64;
	char *out = xmalloc(cap);

	out[0] = '\0';
	for (int i = 0; i < n; i++)
		arr += digits(g[i]) + (i > 0);
	for (int i = 0; i < n;) {
		int j = i;
		char buf[32];
		int k;

		while (j + 1 < n && g[j + 1] == g[j] + 1 && g[j] < INT32_MAX)
			j++;
		if (j > i)
			k = snprintf(buf, sizeof(buf), "%s%d-%d", i ? "," : "",
				     g[i], g[j]);
		else
			k = snprintf(buf, sizeof(buf), "%s%d", i ? "," : "",
				     g[i]);
		if (len + (size_t)k + 1 > cap) {
			cap = 2 * (len + (size_t)k + 1);
			out = xrealloc(out, cap);
		}
		memcpy(out + len, buf, (size_t)k + 1);
		len += (size_t)k;
		i = j + 1;
	}
	if (len + 2 >= arr) {
		free(out);
		return NULL;
	}
	return out;
}

/* The topology's neighbours as "1,3;0,2;;1": local ranks, one list per
 * local rank in order, ';' between the lists. */
static void write_topo(jgen g, const struct snap_comm *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (c->topo == SNAP_TOPO_NONE || !c->nbr_first)
		return;
	m = open_memstream(&text, &len);
	if (!m)
		return;
	for (int i = 0; i < c->size; i++) {
		if (i)
			fputc(';', m);
		for (int k = c->nbr_first[i]; k < c->nbr_first[i + 1]; k++)
			fprintf(m, "%s%d", k > c->nbr_first[i] ? "," : "",
				c->nbr[k]);
	}
	fclose(m);
	add_str(g, "topo", snap_topo_name(c->topo));
	add_str(g, "neighbors", text ? text : "");
	free(text);
}

/* A group as rank ranges ("0-3,8"), or an array where ranges would be
 * longer. */
static void write_group(jgen g, const char *key, const int *group, int n)
{
	char *ranges = group_ranges(group, n);

	if (ranges) {
		add_str(g, key, ranges);
		free(ranges);
		return;
	}
	open_array(g, key);
	for (int i = 0; i < n; i++)
		yajl_gen_integer(g, group[i]);
	yajl_gen_array_close(g);
}

static void write_comm(jgen g, const struct snap_comm *c, int idx, FILE *f)
{
	yajl_gen_map_open(g);
	add_int(g, "comm", idx);
	add_u64(g, "id", c->id);
	add_str(g, "name", c->name ? c->name : "");
	add_int(g, "size", c->size);
	if (c->group)
		write_group(g, "group", c->group, c->size);
	if (c->remote) {
		add_int(g, "remote_size", c->remote_size);
		write_group(g, "remote", c->remote, c->remote_size);
	}
	write_topo(g, c);
	put_line(g, f);
}

static void write_op(jgen g, const struct snap_op *op)
{
	yajl_gen_map_open(g);
	add_str(g, "kind", snap_op_kind_name(op->kind));
	if (op->status != SNAP_ST_PENDING)
		add_str(g, "status", snap_status_name(op->status));
	if (op->comm >= 0)
		add_int(g, "comm", op->comm);
	add_int(g, "peer", op->peer_local);
	add_int(g, "peer_global", op->peer_global);
	if (op->any_tag)
		add_true(g, "any_tag", true);
	else
		add_int(g, "tag", op->tag);
	if (op->length)
		add_u64(g, "length", op->length);
	add_addr(g, "buffer", op->buffer);
	add_true(g, "system_buffer", op->system_buffer);
	if (op->status >= SNAP_ST_MATCHED || op->kind == SNAP_OP_SEND) {
		open_map(g, "actual");
		add_int(g, "peer", op->actual_local);
		add_int(g, "peer_global", op->actual_global);
		add_int(g, "tag", op->actual_tag);
		add_u64(g, "length", op->actual_length);
		yajl_gen_map_close(g);
	}
	add_addr(g, "request", op->request);
	add_true(g, "corrected", op->status_corrected);
	if (op->source != SNAP_SRC_DLL)
		add_str(g, "source", snap_source_name(op->source));
	add_str(g, "type", op->req_type);
	add_str(g, "datatype", op->datatype);
	/* MPICH's DLL gives a count without its datatype. */
	if (op->datatype || op->count)
		add_u64(g, "count", op->count);
	if (op->sequence)
		add_u64(g, "seq", op->sequence);
	if (op->nextra > 0) {
		open_array(g, "extra");
		for (int i = 0; i < op->nextra && i < 5; i++)
			put_str(g, op->extra[i] ? op->extra[i] : "");
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

static void write_frame(jgen g, const struct snap_frame *fr)
{
	yajl_gen_map_open(g);
	add_addr(g, "pc", fr->pc);
	add_str(g, "func", fr->func);
	add_str(g, "object", fr->object);
	add_str(g, "file", fr->file);
	if (fr->line)
		add_int(g, "line", fr->line);
	yajl_gen_map_close(g);
}

static void write_thread(jgen g, const struct snap_thread *t)
{
	yajl_gen_map_open(g);
	add_int(g, "tid", t->tid);
	add_str(g, "call", t->mpi_call);
	if (t->mpi_frame != -1)
		add_int(g, "mpi_frame", t->mpi_frame);
	if (t->user_frame != -1)
		add_int(g, "user_frame", t->user_frame);
	add_true(g, "progress_thread", t->progress_thread);
	open_array(g, "frames");
	for (int i = 0; i < t->nframes; i++)
		write_frame(g, &t->frames[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void write_site(jgen g, const struct snap_rank *r)
{
	if (!r->call_func && !r->call_file && !r->call_line)
		return;
	open_map(g, "site");
	add_str(g, "func", r->call_func);
	add_str(g, "file", r->call_file);
	if (r->call_line)
		add_int(g, "line", r->call_line);
	yajl_gen_map_close(g);
}

/* A number of the track format: SNAP_TRACK_* values by name. */
static void add_track_int(jgen g, const char *key, int v)
{
	if (v == SNAP_TRACK_NONE)
		return;
	if (v == SNAP_TRACK_ANY)
		add_str(g, key, "any");
	else if (v == SNAP_TRACK_PROC_NULL)
		add_str(g, key, "proc_null");
	else if (v == SNAP_TRACK_ROOT)
		add_str(g, key, "root");
	else
		add_int(g, key, v);
}

static void write_track_rec(jgen g, const struct snap_track_rec *t)
{
	yajl_gen_map_open(g);
	add_str(g, "kind", snap_track_kind_name(t->kind));
	add_str(g, "call", t->call);
	add_u64(g, "seq", t->seq);
	add_addr(g, "request", t->request);
	add_addr(g, "comm_handle", t->comm_handle);
	if (t->comm >= 0)
		add_int(g, "comm", t->comm);
	add_str(g, "comm_name", t->comm_name);
	add_track_int(g, "peer", t->peer);
	add_track_int(g, "tag", t->tag);
	if (t->count)
		add_int(g, "count", t->count);
	add_addr(g, "datatype", t->datatype);
	add_str(g, "datatype_name", t->datatype_name);
	add_addr(g, "op", t->op);
	add_str(g, "op_name", t->op_name);
	if (t->ncalls)
		add_u64(g, "ncalls", t->ncalls);
	add_addr(g, "ret", t->ret);
	add_str(g, "func", t->func);
	add_str(g, "file", t->file);
	if (t->line)
		add_int(g, "line", t->line);
	yajl_gen_map_close(g);
}

/* libmdtrack.so's records: one object, so a reader that does not know
 * it skips it whole. */
static void write_track(jgen g, const struct snap_rank *r)
{
	if (!r->tracked)
		return;
	open_map(g, "track");
	if (r->track_dropped)
		add_u64(g, "dropped", r->track_dropped);
	open_array(g, "recs");
	for (int i = 0; i < r->ntrack; i++)
		write_track_rec(g, &r->track[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void write_lists(jgen g, const struct snap_rank *r)
{
	if (r->nmembers > 0) {
		open_array(g, "members");
		for (int i = 0; i < r->nmembers; i++) {
			yajl_gen_array_open(g);
			yajl_gen_integer(g, r->members[i].comm);
			yajl_gen_integer(g, r->members[i].local_rank);
			yajl_gen_array_close(g);
		}
		yajl_gen_array_close(g);
	}
	if (r->queues == SNAP_QUEUES_NONE) {
		open_map(g, "queues");
		add_str(g, "none", r->queues_reason ? r->queues_reason : "");
		yajl_gen_map_close(g);
	}
	add_true(g, "unexpected", r->unexpected_available);
	add_true(g, "ob1", r->ob1);
	if (r->nops > 0) {
		open_array(g, "ops");
		for (int i = 0; i < r->nops; i++)
			write_op(g, &r->ops[i]);
		yajl_gen_array_close(g);
	}
	if (r->nthreads > 0) {
		open_array(g, "threads");
		for (int i = 0; i < r->nthreads; i++)
			write_thread(g, &r->threads[i]);
		yajl_gen_array_close(g);
	}
	write_track(g, r);
}

static void write_rank(jgen g, const struct snap_rank *r, int idx, FILE *f)
{
	yajl_gen_map_open(g);
	/* The index is the rank: the file says so even if r->rank is off. */
	add_int(g, "rank", idx);
	if (r->pid)
		add_int(g, "pid", r->pid);
	add_str(g, "host", r->host);
	add_str(g, "exe", r->exe);
	add_str(g, "collected_on", r->collected_on);
	if (r->state != SNAP_RANK_COLLECTED)
		add_str(g, "state", snap_state_name(r->state));
	if (r->progress != SNAP_PROGRESS_UNKNOWN)
		add_str(g, "progress", snap_progress_name(r->progress));
	add_str(g, "call", r->mpi_call);
	write_site(g, r);
	write_lists(g, r);
	add_str(g, "reason", r->reason);
	put_line(g, f);
}

int snap_write(const struct snap *s, FILE *f)
{
	jgen g = yajl_gen_alloc(NULL);

	if (!g) {
		md_error("yajl_gen_alloc: out of memory");
		abort();
	}
	write_header(g, s, f);
	for (int i = 0; i < s->ncomms; i++)
		write_comm(g, &s->comms[i], i, f);
	for (int i = 0; i < s->nranks; i++)
		write_rank(g, &s->ranks[i],
			   s->job_nranks ? s->ranks[i].rank : i, f);
	for (int i = 0; i < s->nnotes; i++) {
		yajl_gen_map_open(g);
		add_str(g, "note", s->notes[i]);
		put_line(g, f);
	}
	yajl_gen_free(g);
	if (fflush(f) != 0 || ferror(f)) {
		md_error("writing the snapshot: %s; check the disk space and "
			 "the path",
			 strerror(errno ? errno : EIO));
		return -MD_E_SYS;
	}
	return 0;
}
