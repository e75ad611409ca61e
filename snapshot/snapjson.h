/*
 * snapjson.h - private to the snapshot reader: one line of JSON parsed by
 * yajl into a flat tree of nodes, and typed, checked access to them.
 *
 * The nodes and the strings of a line live in arrays the reader reuses
 * from line to line: nothing is allocated per value, and a node is valid
 * until the next line is parsed.  Keys the reader does not ask for are
 * parsed and ignored (room for additions within a format version).
 *
 * Every snapjs_* getter takes the object node and a key, leaves the
 * default in *out when the key is absent or null and returns 0, or
 * reports one error line naming the file, line, column (of the key) and
 * what was wrong and returns -MD_E_INPUT.  Where several keys are equal
 * the last one counts.
 */
#ifndef MD_SNAPJSON_H
#define MD_SNAPJSON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	uint64_t u;
	/* Where the search for its key (or, in an array, for the value)
	 * starts: snapjs_col finds the column, for a message only. */
	uint32_t at;
	int next;		/* next sibling's index, 0 at the end */
	int first;		/* first child's index, 0 if none */
	int n;			/* children */
	/* An object: a bit per key (snapjs_kbit), and whether two keys
	 * share a bit (then a lookup reads every key: the last counts). */
	uint64_t kbits;
	bool kshared;
	uint32_t khash;		/* of the key */
	uint32_t klen;
	const char *key;	/* NULL in an array */
	const char *s;		/* string value or number text, NUL-ended */
	size_t len;		/* of s */
};

struct snapjs_parse;	/* the yajl handle and the parse stack */

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
	struct snapjs_parse *p;
	/* Where the last lookup in an object ended: the reader asks for
	 * keys mostly in the order the writer wrote them, so the next one
	 * is usually the next key. */
	const struct snapjs_node *hint_obj;
	int hint_next;
	/* The last strings interned, by a cheap hash of their bytes: most
	 * ranks repeat their neighbour's host, call, file and function. */
	struct { const char *s; size_t len; } cache[256];
};

void snapjs_init(struct snapjs *j, struct snap *s, const char *name);
void snapjs_done(struct snapjs *j);

/*
 * Parse j->line (j->len bytes; j->line[j->len] must be readable and not a
 * digit, e.g. the line's '\n') into j->nodes.  Returns 0 if the line held
 * exactly one JSON value, or -MD_E_INPUT after reporting the parser's
 * message at its column.
 */
int snapjs_parse_line(struct snapjs *j);

/* The 1-based column of n's key, or of n in an array. */
int snapjs_col(const struct snapjs *j, const struct snapjs_node *n);

/* Report an error at a column of the current line (1-based). */
int snapjs_fail(const struct snapjs *j, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A key's hash: cheap, and folded to a constant for a literal key. */
static inline uint32_t snapjs_khash(const char *key, size_t len)
{
	return len ? (uint32_t)len | (uint32_t)(unsigned char)key[0] << 8 |
			     (uint32_t)(unsigned char)key[len / 2] << 16 |
			     (uint32_t)(unsigned char)key[len - 1] << 24
		   : 0;
}

static inline uint64_t snapjs_kbit(uint32_t khash)
{
	return 1ULL << ((khash * 0x9e3779b1U) >> 26);
}

const struct snapjs_node *snapjs_find(struct snapjs *j,
				      const struct snapjs_node *o,
				      const char *key, size_t len);
/* The last child of object o named key, NULL if none (or null). */
static inline const struct snapjs_node *
snapjs_get(struct snapjs *j, const struct snapjs_node *o,
	   const char *key)
{
	return snapjs_find(j, o, key, __builtin_strlen(key));
}
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

/* An integer in min..max (default def). */
int snapjs_int(struct snapjs *j, const struct snapjs_node *o,
	       const char *key, int64_t min, int64_t max, int def, int *out);
/* The same for a node of its own (an array entry); what names it. */
int snapjs_int_node(struct snapjs *j, const struct snapjs_node *n,
		    const char *what, int64_t min, int64_t max, int64_t *out);
int snapjs_i64(struct snapjs *j, const struct snapjs_node *o,
	       const char *key, int64_t *out);
/* A non-negative integer up to UINT64_MAX (default 0). */
int snapjs_u64(struct snapjs *j, const struct snapjs_node *o,
	       const char *key, uint64_t *out);
/* A string, interned in j->s (default NULL). */
int snapjs_str(struct snapjs *j, const struct snapjs_node *o,
	       const char *key, const char **out);
const char *snapjs_intern(struct snapjs *j, const struct snapjs_node *n);
int snapjs_bool(struct snapjs *j, const struct snapjs_node *o,
		const char *key, bool *out);
/* A "0x..." hex string of up to 64 bits (default 0). */
int snapjs_addr(struct snapjs *j, const struct snapjs_node *o,
		const char *key, uint64_t *out);
/* A string that is names(i) for some i < n: *out = i (default def). */
int snapjs_enum(struct snapjs *j, const struct snapjs_node *o,
		const char *key, const char *(*names)(int), int n, int def,
		int *out);
/* An array of at most max entries: *a (NULL if absent). */
int snapjs_array(struct snapjs *j, const struct snapjs_node *o,
		 const char *key, int max, const struct snapjs_node **a);
/* An object: *sub (NULL if absent). */
int snapjs_object(struct snapjs *j, const struct snapjs_node *o,
		  const char *key, const struct snapjs_node **sub);

/* A rank line (snapread_rank.c): checked against the header's counts
 * and the communicators read before it, stored in s->ranks[rank]. */
struct snapread;
int snapread_rank(struct snapread *r, const struct snapjs_node *o);
/* Room in s->ranks for the rank at index idx (snapread_rank.c). */
void snapread_reserve(struct snapread *r, int idx);
/* The rank line's "track" object, libmdtrack.so's records, into k
 * (snapread_track.c). */
int snapread_track(struct snapread *r, const struct snapjs_node *o,
		   struct snap_rank *k);

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
