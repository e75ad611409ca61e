/*
 * snapjson.h - private to the snapshot reader: one line of JSON parsed by
 * yajl into a flat tree of nodes, and tables of fields
 * (struct snapjs_field) that say how an object's keys go into a struct.
 *
 * The nodes and the strings of a line live in arrays the reader reuses
 * from line to line: nothing is allocated per value, and a node is valid
 * until the next line is parsed.  Keys no table names are ignored (room
 * for additions within a format version).  A key that is absent or null
 * takes its default; of equal keys the last counts.  Every error is one
 * line naming the file, line, column (of the key) and what was wrong;
 * the functions then return -MD_E_INPUT.
 */
#ifndef MD_SNAPJSON_H
#define MD_SNAPJSON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "snap.h"

enum snapjs_type { SNAPJS_NULL, SNAPJS_BOOL, SNAPJS_NUM, SNAPJS_STR,
		   SNAPJS_ARR, SNAPJS_OBJ };

/* One value; children of an array or object are chained by next. */
struct snapjs_node {
	uint8_t type;		/* enum snapjs_type */
	bool b;			/* a bool's value */
	/* A number: an integer (no fraction, no exponent) of magnitude u,
	 * negative if neg, unless it does not fit in 64 bits. */
	bool integer, neg, big;
	uint32_t at;		/* where its key (or value) is: snapjs_col */
	uint32_t klen;
	int next;		/* next sibling's index, 0 at the end */
	int first;		/* first child's index, 0 if none */
	int n;			/* children */
	uint64_t u;
	const char *key;	/* klen bytes, not NUL-ended; NULL in an array */
	const char *s;		/* string value or number text, NUL-ended */
	size_t len;		/* of s */
};

/* The format nests 5 deep (rank, threads, thread, frames, frame). */
#define SNAPJS_DEPTH 16

struct snapjs {
	const char *name;	/* the file, for messages */
	long lineno;
	const char *line;	/* the current line, len bytes */
	size_t len;
	/* Where in the snapshot, for messages ("rank 7: op 2: "); -1
	 * where not.  Numbers, not text: formatted only on an error. */
	int at_comm, at_rank, at_op;
	struct snap *s;		/* strings are interned here */
	/* Where a rank's arrays go (snap_alloc): s, or a worker's own
	 * snapshot whose pool joins s's at the end (snap_adopt_pool). */
	struct snap *mem;
	pthread_mutex_t *lock;	/* around interning in s, with workers */
	bool quiet;		/* a worker's: errors are left to the serial
				 * reader, which reads again and reports */
	struct snapjs_node *nodes;	/* nodes[0] is the line's value */
	int nnodes, nodecap;
	char *text;		/* the line's strings, NUL-ended */
	size_t textlen, textcap;
	/* The parse: the open arrays and objects, their last child so far
	 * (0 if none), the top-level values, the offset after the last
	 * token, the key of the value that follows, why a callback
	 * stopped the parse. */
	yajl_handle h;
	int open[SNAPJS_DEPTH], last[SNAPJS_DEPTH], depth, values;
	size_t prev, keyat;
	const char *key;
	uint32_t klen;
	const char *cancel;
	/* The last strings interned, by a cheap hash of their bytes: most
	 * ranks repeat their neighbour's host, call, file and function. */
	struct { const char *s; size_t len; } cache[256];
};

void snapjs_init(struct snapjs *j, struct snap *s, const char *name);
void snapjs_done(struct snapjs *j);

/* Parse j->line (j->len bytes; j->line[j->len] must be readable and not a
 * digit, e.g. the line's '\n') into j->nodes: exactly one JSON value. */
int snapjs_parse_line(struct snapjs *j);

/* The 1-based column of n's key, or of n in an array. */
int snapjs_col(const struct snapjs *j, const struct snapjs_node *n);

/* Report an error at a column of the current line (1-based). */
int snapjs_fail(const struct snapjs *j, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The last child of object o named key, NULL if none or null. */
const struct snapjs_node *snapjs_get(const struct snapjs *j,
				     const struct snapjs_node *o,
				     const char *key);
/* Walking the children of an array or object: first, then next. */
static inline const struct snapjs_node *
snapjs_next(const struct snapjs *j, const struct snapjs_node *n)
{
	return n->next ? &j->nodes[n->next] : NULL;
}
static inline const struct snapjs_node *
snapjs_first(const struct snapjs *j, const struct snapjs_node *n)
{
	return n->first ? &j->nodes[n->first] : NULL;
}

/* n (NULL: absent, fine) is of type (SNAPJS_ARR: of at most max
 * entries); key names it in the message. */
int snapjs_check(struct snapjs *j, const struct snapjs_node *n,
		 const char *key, int type, int max);
/* An integer in min..max; what names it ("a \"group\" entry"), or if
 * NULL the quoted key does. */
int snapjs_num(struct snapjs *j, const struct snapjs_node *n,
	       const char *key, const char *what, int64_t min, int64_t max,
	       int64_t *out);
/* A string node interned in j->s. */
const char *snapjs_intern(struct snapjs *j, const struct snapjs_node *n);

/* How a field is read and stored. */
enum snapjs_kind {
	SJ_INT,		/* int in min..max, def if absent */
	SJ_I64,		/* int64_t */
	SJ_U64,		/* uint64_t, not negative */
	SJ_STR,		/* const char *, interned; NULL if absent */
	SJ_BOOL,	/* bool */
	SJ_ADDR,	/* uint64_t from "0x..." */
	SJ_ENUM,	/* int: the index of the string in sub's names
			 * (NULL-ended), def if absent */
	SJ_OBJ,		/* an object whose fields (sub) go in the struct */
	SJ_LIST,	/* an array of objects (sub: struct snapjs_list) */
	SJ_FN,		/* fn reads it */
};

/* Limits the header sets, for an SJ_INT's max. */
#define SJ_NRANKS (INT64_MAX - 1)	/* nranks */
#define SJ_LAST_RANK (INT64_MAX - 2)	/* nranks - 1 */
#define SJ_LAST_COMM (INT64_MAX - 3)	/* ncomms - 1 */

struct snapread;

/* One key of an object; a table, of at most SJ_MAX_FIELDS, ends with a
 * NULL key. */
#define SJ_MAX_FIELDS 32
/* After a table: it fits snapjs_fields' array (with its end mark). */
#define SJ_TABLE_FITS(t)                                                    \
	_Static_assert(sizeof(t) / sizeof((t)[0]) <= SJ_MAX_FIELDS + 1,     \
		       #t " has more than SJ_MAX_FIELDS fields")
struct snapjs_field {
	const char *key;
	size_t klen;
	enum snapjs_kind kind;
	size_t off;		/* of the value in the struct */
	int64_t min, max;	/* SJ_INT */
	int def;		/* SJ_INT, SJ_ENUM */
	const void *sub;	/* SJ_ENUM, SJ_OBJ, SJ_LIST */
	size_t count;		/* SJ_LIST: offset of the int count */
	/* SJ_FN: n is NULL if absent, base the struct. */
	int (*fn)(struct snapread *r, const struct snapjs_field *f,
		  const struct snapjs_node *n, void *base);
};

#define SJ_FIELD(k, kd, type, field, ...)                              \
	{ .key = k, .klen = sizeof(k) - 1, .kind = kd,                \
	  .off = offsetof(type, field), __VA_ARGS__ }
/* An object read into the same struct, or a key read by a function. */
#define SJ_SUB(k, fields) \
	{ .key = k, .klen = sizeof(k) - 1, .kind = SJ_OBJ, .sub = fields }
#define SJ_CALL(k, f) \
	{ .key = k, .klen = sizeof(k) - 1, .kind = SJ_FN, .fn = f }

/* An array's entries: objects of size bytes in an array of the pool
 * (a pointer at the field's off, their count at count). */
struct snapjs_list {
	const struct snapjs_field *fields;
	size_t size;
	int max;		/* entries */
	const char *what;	/* "an \"ops\" entry", for messages */
	const char *need;	/* a key each entry must have, or NULL */
	bool at_op;		/* messages say "op N: " */
	/* Checks between the fields of an entry, or NULL. */
	int (*check)(struct snapread *r, const struct snapjs_node *o,
		     void *entry);
};

/* Read o's fields (o NULL: all defaults) into the struct at base. */
int snapjs_fields(struct snapread *r, const struct snapjs_node *o,
		  const struct snapjs_field *f, void *base);

/* A rank line (snapread_rank.c): checked against the header's counts
 * and the communicators read before it, stored in s->ranks. */
int snapread_rank(struct snapread *r, const struct snapjs_node *o);
/* Room in s->ranks for the rank at index idx (snapread_rank.c). */
void snapread_reserve(struct snapread *r, int idx);

/* The reader's state between lines (snapread.c). */
struct snapread {
	struct snapjs j;
	bool have_header;
	int nranks, ncomms;	/* from the header */
	int comms_read, ranks_read, ranks_cap;
	int held;		/* rank lines of a partial snapshot; -1: all */
	int last_rank;		/* of a partial snapshot, -1 before any */
	int64_t group_budget;	/* group entries still allowed */
	long long size;		/* input bytes, -1 if not known */
	unsigned char *seen;	/* nranks bits: duplicate group entries */
	/* One of several threads reading the rank lines of a range of the
	 * file: its first rank is taken from its first rank line
	 * (ranks_read -1 until then), s->nranks is set after them all. */
	bool worker;
	int first_rank;
	struct snap_groups *groups;	/* snap_read_opts.groups, or NULL */
};

#endif /* MD_SNAPJSON_H */
