/*
 * snapwrite.c - write a snapshot as JSON Lines (doc/snapshot-format.md).
 *
 * Every line is built as a json-c object and printed by json-c, so no
 * string is escaped by hand.  Fields at their default are left out to
 * keep a million rank lines short; snap_read() puts the defaults back.
 */
#include "snap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "md.h"

typedef struct json_object jobj;

static void add(jobj *o, const char *key, jobj *v)
{
	json_object_object_add_ex(o, key, v,
				  JSON_C_OBJECT_ADD_KEY_IS_NEW |
					  JSON_C_OBJECT_KEY_IS_CONSTANT);
}

static void add_str(jobj *o, const char *key, const char *v)
{
	if (v)
		add(o, key, json_object_new_string(v));
}

static void add_int(jobj *o, const char *key, int64_t v)
{
	add(o, key, json_object_new_int64(v));
}

static void add_addr(jobj *o, const char *key, uint64_t v)
{
	char buf[24];

	if (!v)
		return;
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	add(o, key, json_object_new_string(buf));
}

static void add_true(jobj *o, const char *key, bool v)
{
	if (v)
		add(o, key, json_object_new_boolean(1));
}

/* Print one line and drop the object. */
static void put_line(jobj *o, FILE *f)
{
	fputs(json_object_to_json_string_ext(
		      o,
		      JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	      f);
	fputc('\n', f);
	json_object_put(o);
}

static void write_header(const struct snap *s, FILE *f)
{
	jobj *o = json_object_new_object();

	add_str(o, "format", SNAP_FORMAT);
	add_int(o, "version", SNAP_VERSION);
	add_int(o, "time", s->time);
	add_str(o, "tool", s->tool);
	add_str(o, "host", s->host);
	add_int(o, "starter_pid", s->starter_pid);
	add_str(o, "starter", s->starter);
	add_str(o, "mpi", s->mpi);
	add_str(o, "dll", s->dll);
	add_str(o, "types", s->types);
	add_int(o, "looks", s->looks);
	add_int(o, "interval_ms", s->interval_ms);
	add_int(o, "nranks", s->nranks);
	add_int(o, "ncomms", s->ncomms);
	put_line(o, f);
}

static size_t digits(int v)
{
	char buf[16];

	return (size_t)snprintf(buf, sizeof(buf), "%d", v);
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

static void write_comm(const struct snap_comm *c, int idx, FILE *f)
{
	jobj *o = json_object_new_object();
	char *ranges;

	add_int(o, "comm", idx);
	add(o, "id", json_object_new_uint64(c->id));
	add_str(o, "name", c->name ? c->name : "");
	add_int(o, "size", c->size);
	if (c->group) {
		ranges = group_ranges(c->group, c->size);
		if (ranges) {
			add_str(o, "group", ranges);
			free(ranges);
		} else {
			jobj *a = json_object_new_array_ext(c->size);

			for (int i = 0; i < c->size; i++)
				json_object_array_add(
					a, json_object_new_int(c->group[i]));
			add(o, "group", a);
		}
	}
	put_line(o, f);
}

static jobj *op_object(const struct snap_op *op)
{
	jobj *o = json_object_new_object();

	add_str(o, "kind", snap_op_kind_name(op->kind));
	if (op->status != SNAP_ST_PENDING)
		add_str(o, "status", snap_status_name(op->status));
	if (op->comm >= 0)
		add_int(o, "comm", op->comm);
	add_int(o, "peer", op->peer_local);
	add_int(o, "peer_global", op->peer_global);
	if (op->any_tag)
		add_true(o, "any_tag", true);
	else
		add_int(o, "tag", op->tag);
	if (op->length)
		add(o, "length", json_object_new_uint64(op->length));
	add_addr(o, "buffer", op->buffer);
	add_true(o, "system_buffer", op->system_buffer);
	if (op->status >= SNAP_ST_MATCHED || op->kind == SNAP_OP_SEND) {
		jobj *a = json_object_new_object();

		add_int(a, "peer", op->actual_local);
		add_int(a, "peer_global", op->actual_global);
		add_int(a, "tag", op->actual_tag);
		add(a, "length", json_object_new_uint64(op->actual_length));
		add(o, "actual", a);
	}
	add_addr(o, "request", op->request);
	add_true(o, "corrected", op->status_corrected);
	if (op->source != SNAP_SRC_DLL)
		add_str(o, "source", snap_source_name(op->source));
	if (op->req_type)
		add_str(o, "type", op->req_type);
	if (op->datatype) {
		add_str(o, "datatype", op->datatype);
		add(o, "count", json_object_new_uint64(op->count));
	}
	if (op->sequence)
		add(o, "seq", json_object_new_uint64(op->sequence));
	if (op->nextra > 0) {
		jobj *a = json_object_new_array_ext(op->nextra);

		for (int i = 0; i < op->nextra && i < 5; i++)
			json_object_array_add(
				a, json_object_new_string(
					   op->extra[i] ? op->extra[i] : ""));
		add(o, "extra", a);
	}
	return o;
}

static jobj *frame_object(const struct snap_frame *fr)
{
	jobj *o = json_object_new_object();

	add_addr(o, "pc", fr->pc);
	add_str(o, "func", fr->func);
	add_str(o, "object", fr->object);
	add_str(o, "file", fr->file);
	if (fr->line)
		add_int(o, "line", fr->line);
	return o;
}

static jobj *thread_object(const struct snap_thread *t)
{
	jobj *o = json_object_new_object();
	jobj *a = json_object_new_array_ext(t->nframes);

	add_int(o, "tid", t->tid);
	add_str(o, "call", t->mpi_call);
	if (t->mpi_frame != -1)
		add_int(o, "mpi_frame", t->mpi_frame);
	if (t->user_frame != -1)
		add_int(o, "user_frame", t->user_frame);
	add_true(o, "progress_thread", t->progress_thread);
	for (int i = 0; i < t->nframes; i++)
		json_object_array_add(a, frame_object(&t->frames[i]));
	add(o, "frames", a);
	return o;
}

static void add_site(jobj *o, const struct snap_rank *r)
{
	jobj *site;

	if (!r->call_func && !r->call_file && !r->call_line)
		return;
	site = json_object_new_object();
	add_str(site, "func", r->call_func);
	add_str(site, "file", r->call_file);
	if (r->call_line)
		add_int(site, "line", r->call_line);
	add(o, "site", site);
}

/* A number of the track format: SNAP_TRACK_* values by name. */
static void add_track_int(jobj *o, const char *key, int v)
{
	if (v == SNAP_TRACK_NONE)
		return;
	if (v == SNAP_TRACK_ANY)
		add_str(o, key, "any");
	else if (v == SNAP_TRACK_PROC_NULL)
		add_str(o, key, "proc_null");
	else if (v == SNAP_TRACK_ROOT)
		add_str(o, key, "root");
	else
		add_int(o, key, v);
}

static jobj *track_object(const struct snap_track_rec *t)
{
	jobj *o = json_object_new_object();

	add_str(o, "kind", snap_track_kind_name(t->kind));
	add_str(o, "call", t->call);
	add(o, "seq", json_object_new_uint64(t->seq));
	add_addr(o, "request", t->request);
	add_addr(o, "comm_handle", t->comm_handle);
	if (t->comm >= 0)
		add_int(o, "comm", t->comm);
	add_str(o, "comm_name", t->comm_name);
	add_track_int(o, "peer", t->peer);
	add_track_int(o, "tag", t->tag);
	if (t->count)
		add_int(o, "count", t->count);
	add_addr(o, "datatype", t->datatype);
	add_str(o, "datatype_name", t->datatype_name);
	add_addr(o, "op", t->op);
	add_str(o, "op_name", t->op_name);
	if (t->ncalls)
		add(o, "ncalls", json_object_new_uint64(t->ncalls));
	add_addr(o, "ret", t->ret);
	add_str(o, "func", t->func);
	add_str(o, "file", t->file);
	if (t->line)
		add_int(o, "line", t->line);
	return o;
}

/* libmdtrack.so's records: one object, so a reader that does not know
 * it skips it whole. */
static void add_track(jobj *o, const struct snap_rank *r)
{
	jobj *t, *a;

	if (!r->tracked)
		return;
	t = json_object_new_object();
	if (r->track_dropped)
		add(t, "dropped", json_object_new_uint64(r->track_dropped));
	a = json_object_new_array_ext(r->ntrack);
	for (int i = 0; i < r->ntrack; i++)
		json_object_array_add(a, track_object(&r->track[i]));
	add(t, "recs", a);
	add(o, "track", t);
}

static void add_lists(jobj *o, const struct snap_rank *r)
{
	jobj *a;

	if (r->nmembers > 0) {
		a = json_object_new_array_ext(r->nmembers);
		for (int i = 0; i < r->nmembers; i++) {
			jobj *m = json_object_new_array_ext(2);

			json_object_array_add(
				m, json_object_new_int(r->members[i].comm));
			json_object_array_add(
				m,
				json_object_new_int(r->members[i].local_rank));
			json_object_array_add(a, m);
		}
		add(o, "members", a);
	}
	if (r->queues == SNAP_QUEUES_NONE) {
		a = json_object_new_object();
		add_str(a, "none", r->queues_reason ? r->queues_reason : "");
		add(o, "queues", a);
	}
	add_true(o, "unexpected", r->unexpected_available);
	if (r->nops > 0) {
		a = json_object_new_array_ext(r->nops);
		for (int i = 0; i < r->nops; i++)
			json_object_array_add(a, op_object(&r->ops[i]));
		add(o, "ops", a);
	}
	if (r->nthreads > 0) {
		a = json_object_new_array_ext(r->nthreads);
		for (int i = 0; i < r->nthreads; i++)
			json_object_array_add(a, thread_object(&r->threads[i]));
		add(o, "threads", a);
	}
	add_track(o, r);
}

static void write_rank(const struct snap_rank *r, int idx, FILE *f)
{
	jobj *o = json_object_new_object();

	/* The index is the rank: the file says so even if r->rank is off. */
	add_int(o, "rank", idx);
	if (r->pid)
		add_int(o, "pid", r->pid);
	add_str(o, "host", r->host);
	add_str(o, "exe", r->exe);
	add_str(o, "collected_on", r->collected_on);
	if (r->state != SNAP_RANK_COLLECTED)
		add_str(o, "state", snap_state_name(r->state));
	if (r->progress != SNAP_PROGRESS_UNKNOWN)
		add_str(o, "progress", snap_progress_name(r->progress));
	add_str(o, "call", r->mpi_call);
	add_site(o, r);
	add_lists(o, r);
	add_str(o, "reason", r->reason);
	put_line(o, f);
}

int snap_write(const struct snap *s, FILE *f)
{
	write_header(s, f);
	for (int i = 0; i < s->ncomms; i++)
		write_comm(&s->comms[i], i, f);
	for (int i = 0; i < s->nranks; i++)
		write_rank(&s->ranks[i], i, f);
	for (int i = 0; i < s->nnotes; i++) {
		jobj *o = json_object_new_object();

		add_str(o, "note", s->notes[i]);
		put_line(o, f);
	}
	if (fflush(f) != 0 || ferror(f)) {
		md_error("writing the snapshot: %s; check the disk space and "
			 "the path",
			 strerror(errno ? errno : EIO));
		return -MD_E_SYS;
	}
	return 0;
}
