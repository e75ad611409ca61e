/*
 * snapjson.h - private to the snapshot reader: a line of JSON parsed by
 * yajl into a flat array of nodes, read into structs by the tables of
 * snapformat.h.
 *
 * Nothing is allocated per value: a line's nodes and strings live in
 * arrays reused from line to line, valid until the next line.  Keys no
 * table names are ignored (room for additions within a format version);
 * an absent or null key takes its default; of equal keys the last
 * counts.  An error is reported once, as one line naming the file, line,
 * column (of the key) and what was wrong, and gives -MD_E_INPUT.
 */
#ifndef MD_SNAPJSON_H
#define MD_SNAPJSON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "snap.h"
#include "snapformat.h"

enum sj_type { SJV_NULL, SJV_BOOL, SJV_NUM, SJV_STR, SJV_ARR, SJV_OBJ };

/* A value, followed in the array by its descendants. */
struct sj_node {
	uint8_t type;		/* enum sj_type */
	bool b;			/* a bool's value */
	uint32_t at;		/* offset of its key (in an array: of it) */
	uint32_t klen;
	int skip;		/* 1 + its descendants: the next sibling */
	int n;			/* children */
	const char *key;	/* klen bytes, not NUL-ended; NULL in an array */
	const char *s;		/* string value or number text, NUL-ended */
	size_t len;		/* of s */
};

/* For each child c of an array or object o. */
#define sj_each(c, o) for (c = (o) + 1; c < (o) + (o)->skip; c += c->skip)

#define SJ_DEPTH 16	/* the format nests 5 deep */

/* A reader: the current line, its parse, and what the lines before it
 * said.  Each worker of the parallel reader (snapread.c) has its own. */
struct snapread {
	const char *name;	/* the file, for messages */
	long lineno;
	const char *line;	/* the current line, len bytes */
	size_t len;
	int at_comm, at_rank, at_op;	/* for messages, -1 where not */
	struct snap *s;		/* strings are interned here */
	/* Where a rank's arrays go (snap_alloc): s, or a worker's own
	 * snapshot whose pool joins s's at the end (snap_adopt_pool). */
	struct snap *mem;
	pthread_mutex_t *lock;	/* around interning in s, with workers */
	/* A worker reports no error: the file is read again by one
	 * thread, which does. */
	bool quiet;
	struct sj_node *nodes;	/* nodes[0] is the line's value */
	int nnodes, nodecap;
	char *text;		/* the line's strings, NUL-ended */
	size_t textlen, textcap;
	/* The parse: the open containers, the top-level values, the
	 * offset after the last token, the next value's key, why a
	 * callback stopped the parse. */
	yajl_handle h;
	int open[SJ_DEPTH], depth, values;
	size_t prev, keyat;
	const char *key;
	uint32_t klen;
	const char *cancel;
	/* The last strings interned, by a cheap hash of their bytes: most
	 * ranks repeat their neighbour's host, call, file and function. */
	struct { const char *s; size_t len; } cache[256];

	bool have_header;
	int nranks, ncomms;	/* from the header */
	int held;		/* rank lines of a partial snapshot; -1: all */
	int comms_read, ranks_read;
	/* The lowest number the next rank line may have (in a whole
	 * snapshot the only one); -1 in a worker until its first. */
	int next_rank;
	int64_t group_budget;	/* group entries still allowed */
	size_t size;		/* input bytes */
	unsigned char *seen;	/* nranks bits: duplicate group entries */
	struct snap_groups *groups;	/* snap_read_opts.groups, or NULL */
};

void sj_init(struct snapread *r, struct snap *s, const char *name);
void sj_done(struct snapread *r);
/* Parse r->line (r->len bytes) into r->nodes: exactly one JSON value. */
int sj_parse_line(struct snapread *r);

/* Report an error at a column of the line (1-based), or at n's key (n
 * in an array: at n; NULL: at the line's value). */
int sj_fail_at(const struct snapread *r, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
long sj_col(const struct snapread *r, const struct sj_node *n);
#define sj_fail(r, n, ...) sj_fail_at(r, sj_col(r, n), __VA_ARGS__)
/* The last child of object o named key, NULL if none or null. */
const struct sj_node *sj_get(const struct sj_node *o, const char *key);
/* n (NULL: absent, fine) is of type (SJV_ARR: of at most max entries). */
int sj_check(struct snapread *r, const struct sj_node *n, const char *key,
	     int type, int max);
/* An integer in min..max; what names it ("\"pid\"", "a \"group\" entry"). */
int sj_num(struct snapread *r, const struct sj_node *n, const char *what,
	   int64_t min, int64_t max, int64_t *out);
/* A string node interned in r->s. */
const char *sj_intern(struct snapread *r, const struct sj_node *n);

/* Read o's fields (o NULL: all defaults) into the struct at base. */
int sj_fields(struct snapread *r, const struct sj_node *o,
	      const struct sj_field *f, void *base);

/* A rank line (snapread_rank.c), stored in s->ranks. */
int snapread_rank(struct snapread *r, const struct sj_node *o);

#endif /* MD_SNAPJSON_H */
