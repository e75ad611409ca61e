/*
 * snapread_track.c - the reader's part for the "track" object of a rank
 * line (libmdtrack.so's records, doc/snapshot-format.md).  The streaming
 * parse only notes that the line has one; this reads the line again with
 * json-c, so lines without it cost nothing.
 */
#include "snap.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "md.h"
#include "snapjson.h"

typedef struct json_object jobj;

static jobj *get(jobj *o, const char *key)
{
	jobj *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int get_str(struct snaprd *r, jobj *o, const char *key,
		   const char **out)
{
	jobj *v = get(o, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return snaprd_fail(r, "track", "track: \"%s\" must be a string",
				   key);
	*out = snaprd_intern(r, json_object_get_string(v));
	return 0;
}

static int get_addr(struct snaprd *r, jobj *o, const char *key,
		    uint64_t *out)
{
	jobj *v = get(o, key);
	const char *s;
	char *end;

	if (!v)
		return 0;
	s = json_object_is_type(v, json_type_string)
		    ? json_object_get_string(v) : "";
	if (strncmp(s, "0x", 2) || !s[2])
		return snaprd_fail(r, "track", "track: \"%s\" must be a "
				   "\"0x...\" string", key);
	*out = strtoull(s + 2, &end, 16);
	if (*end)
		return snaprd_fail(r, "track", "track: \"%s\" is not a hex "
				   "number", key);
	return 0;
}

static int get_u64(struct snaprd *r, jobj *o, const char *key, uint64_t *out)
{
	jobj *v = get(o, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return snaprd_fail(r, "track", "track: \"%s\" must be a "
				   "non-negative integer", key);
	*out = json_object_get_uint64(v);
	return 0;
}

/* An int, or the names of the special values (snapwrite.c). */
static int get_num(struct snaprd *r, jobj *o, const char *key, int def,
		   int *out)
{
	static const struct { const char *name; int v; } names[] = {
		{ "any", SNAP_TRACK_ANY },
		{ "proc_null", SNAP_TRACK_PROC_NULL },
		{ "root", SNAP_TRACK_ROOT },
	};
	jobj *v = get(o, key);
	int64_t i;

	*out = def;
	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_string)) {
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(json_object_get_string(v), names[k].name)) {
				*out = names[k].v;
				return 0;
			}
	} else if (json_object_is_type(v, json_type_int)) {
		i = json_object_get_int64(v);
		if (i >= -1000 && i <= INT_MAX) {
			*out = (int)i;
			return 0;
		}
	}
	return snaprd_fail(r, "track", "track: \"%s\" must be an integer, "
			   "\"any\", \"proc_null\" or \"root\"", key);
}

static int read_rec(struct snaprd *r, jobj *o, struct snap_track_rec *t)
{
	const char *kind = NULL;
	int comm;

	if (!json_object_is_type(o, json_type_object))
		return snaprd_fail(r, "track", "track: a record is not an "
				   "object");
	if (get_str(r, o, "kind", &kind))
		return -MD_E_INPUT;
	for (t->kind = SNAP_TRACK_POST; t->kind <= SNAP_TRACK_COLL; t->kind++)
		if (kind && !strcmp(kind, snap_track_kind_name(t->kind)))
			break;
	if (t->kind > SNAP_TRACK_COLL)
		return snaprd_fail(r, "track", "track: \"kind\" must be "
				   "\"post\", \"init\" or \"coll\"");
	if (get_str(r, o, "call", &t->call) || !t->call)
		return t->call ? -MD_E_INPUT
			       : snaprd_fail(r, "track", "track: a record "
					     "has no \"call\"");
	if (get_num(r, o, "comm", -1, &comm) ||
	    get_num(r, o, "peer", SNAP_TRACK_NONE, &t->peer) ||
	    get_num(r, o, "tag", SNAP_TRACK_NONE, &t->tag) ||
	    get_num(r, o, "count", 0, &t->count) ||
	    get_num(r, o, "line", 0, &t->line) ||
	    get_u64(r, o, "seq", &t->seq) ||
	    get_u64(r, o, "ncalls", &t->ncalls) ||
	    get_addr(r, o, "request", &t->request) ||
	    get_addr(r, o, "comm_handle", &t->comm_handle) ||
	    get_addr(r, o, "datatype", &t->datatype) ||
	    get_addr(r, o, "op", &t->op) || get_addr(r, o, "ret", &t->ret) ||
	    get_str(r, o, "comm_name", &t->comm_name) ||
	    get_str(r, o, "datatype_name", &t->datatype_name) ||
	    get_str(r, o, "op_name", &t->op_name) ||
	    get_str(r, o, "func", &t->func) || get_str(r, o, "file", &t->file))
		return -MD_E_INPUT;
	if (comm < -1 || comm >= r->ncomms)
		return snaprd_fail(r, "track", "track: \"comm\" %d is not a "
				   "communicator of the file", comm);
	t->comm = comm;
	return 0;
}

int snaprd_track(struct snaprd *r, struct snap_rank *k)
{
	jobj *line, *t, *recs;
	int rc = -MD_E_INPUT, n;
	char *text;

	if (r->top[RDL_TRACK].type == SNAPRD_ABSENT ||
	    r->top[RDL_TRACK].type == SNAPRD_NULL)
		return 0;
	if (r->top[RDL_TRACK].type != SNAPRD_OBJECT)
		return snaprd_fail(r, "track", "\"track\" must be an object");
	/* The streaming parse accepted the line: json-c does too. */
	text = xstrndup(r->line, r->len);
	line = json_tokener_parse(text);
	free(text);
	t = line ? get(line, "track") : NULL;
	if (!t) {
		snaprd_fail(r, "track", "\"track\" could not be read");
		goto out;
	}
	k->tracked = true;
	if (get_u64(r, t, "dropped", &k->track_dropped))
		goto out;
	recs = get(t, "recs");
	if (recs && !json_object_is_type(recs, json_type_array)) {
		snaprd_fail(r, "track", "track: \"recs\" must be an array");
		goto out;
	}
	n = recs ? (int)json_object_array_length(recs) : 0;
	k->track = n ? xcalloc((size_t)n, sizeof(*k->track)) : NULL;
	for (k->ntrack = 0; k->ntrack < n; k->ntrack++)
		if (read_rec(r, json_object_array_get_idx(recs, k->ntrack),
			     &k->track[k->ntrack]))
			goto out;
	rc = 0;
out:
	json_object_put(line);
	return rc;
}
