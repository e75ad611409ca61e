/*
 * snapread_track.c - the reader's part for the "track" object of a rank
 * line (libmdtrack.so's records, doc/snapshot-format.md), from the
 * line's parsed nodes (snapjson.h) like every other field.
 */
#include "snap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snapjson.h"

/* An int, or the names snapwrite.c gives the special values. */
static int track_num(struct snapjs *j, const struct snapjs_node *o,
		     const char *key, int def, int *out)
{
	static const struct {
		const char *name;
		int v;
	} names[] = {
		{ "any", SNAP_TRACK_ANY },
		{ "proc_null", SNAP_TRACK_PROC_NULL },
		{ "root", SNAP_TRACK_ROOT },
	};
	const struct snapjs_node *n = snapjs_get(j, o, key);

	*out = def;
	if (!n || n->type != SNAPJS_STR)
		return snapjs_int(j, o, key, -1000, INT_MAX, def, out);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(n->s, names[k].name)) {
			*out = names[k].v;
			return 0;
		}
	return snapjs_fail(j, snapjs_col(j, n),
			   "\"%s\" must be an integer, \"any\", \"proc_null\" "
			   "or \"root\"",
			   key);
}

static const char *kind_name(int i)
{
	return snap_track_kind_name(i);
}

static int read_rec(struct snapread *r, const struct snapjs_node *o,
		    struct snap_track_rec *t)
{
	struct snapjs *j = &r->j;
	int kind;

	if (o->type != SNAPJS_OBJ)
		return snapjs_fail(j, snapjs_col(j, o),
				   "a \"track\" record must be an object");
	if (!snapjs_get(j, o, "call"))
		return snapjs_fail(j, snapjs_col(j, o),
				   "a \"track\" record has no \"call\"");
	if (snapjs_enum(j, o, "kind", kind_name, 3, SNAP_TRACK_POST, &kind) ||
	    snapjs_str(j, o, "call", &t->call) ||
	    snapjs_int(j, o, "comm", -1, r->ncomms - 1, -1, &t->comm) ||
	    track_num(j, o, "peer", SNAP_TRACK_NONE, &t->peer) ||
	    track_num(j, o, "tag", SNAP_TRACK_NONE, &t->tag) ||
	    snapjs_int(j, o, "count", INT_MIN, INT_MAX, 0, &t->count) ||
	    snapjs_int(j, o, "line", 0, INT_MAX, 0, &t->line) ||
	    snapjs_u64(j, o, "seq", &t->seq) ||
	    snapjs_u64(j, o, "ncalls", &t->ncalls) ||
	    snapjs_addr(j, o, "request", &t->request) ||
	    snapjs_addr(j, o, "comm_handle", &t->comm_handle) ||
	    snapjs_addr(j, o, "datatype", &t->datatype) ||
	    snapjs_addr(j, o, "op", &t->op) ||
	    snapjs_addr(j, o, "ret", &t->ret) ||
	    snapjs_str(j, o, "comm_name", &t->comm_name) ||
	    snapjs_str(j, o, "datatype_name", &t->datatype_name) ||
	    snapjs_str(j, o, "op_name", &t->op_name) ||
	    snapjs_str(j, o, "func", &t->func) ||
	    snapjs_str(j, o, "file", &t->file))
		return -MD_E_INPUT;
	t->kind = kind;
	return 0;
}

int snapread_track(struct snapread *r, const struct snapjs_node *o,
		   struct snap_rank *k)
{
	struct snapjs *j = &r->j;
	const struct snapjs_node *t, *a, *e;
	int i = 0;

	if (snapjs_object(j, o, "track", &t))
		return -MD_E_INPUT;
	if (!t)
		return 0;
	k->tracked = true;
	if (snapjs_u64(j, t, "dropped", &k->track_dropped) ||
	    snapjs_array(j, t, "recs", 1 << 20, &a))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	k->track = snap_alloc(r->j.mem, (size_t)a->n * sizeof(*k->track));
	k->ntrack = a->n;
	for (e = snapjs_first(j, a); e; e = snapjs_next(j, e))
		if (read_rec(r, e, &k->track[i++]))
			return -MD_E_INPUT;
	return 0;
}
