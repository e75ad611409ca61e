/*
 * snapformat.h - private to snapshot/: the keys of the snapshot format
 * (doc/snapshot-format.md) as tables, one entry per key, that the writer
 * (snapwrite.c) and the reader (snapjson.c) both follow, so they cannot
 * disagree: a new key is one line in snapformat.c.
 *
 * A key at its default is left out by the writer (unless `always`) and
 * given its default by the reader: an absent or null key, and keys no
 * table names (room for additions within a format version), are fine.
 * The writer writes a table's keys in its order, and the reader looks
 * for them in that order.
 */
#ifndef MD_SNAPFORMAT_H
#define MD_SNAPFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

struct snapread;
struct sj_node;

enum sj_kind {
	SJ_INT,		/* int in min..max, def if absent */
	SJ_I64,		/* int64_t */
	SJ_U64,		/* uint64_t */
	SJ_STR,		/* const char *, interned; NULL if absent */
	SJ_BOOL,
	SJ_ADDR,	/* uint64_t as "0x..." */
	SJ_ENUM,	/* int: index in sub's names (NULL-ended), def if absent */
	SJ_SUB,		/* an object whose fields (sub) go in the struct,
			 * written if one is not at its default; count:
			 * offset of a bool that says it is there, or 0 */
	SJ_LIST,	/* an array of at most max objects (fields sub, of
			 * size bytes) in the pool: a pointer at off, their
			 * count at count; each needs the key need, if set,
			 * and passes fn (NULL: no check) */
	SJ_FN,		/* fn reads it (n NULL if absent) into base, put
			 * writes it (or nothing) */
};

/* Maxima the header and the fields read before set. */
#define SJ_NRANKS (INT64_MAX - 1)	/* nranks */
#define SJ_LAST_RANK (INT64_MAX - 2)	/* nranks - 1 */
#define SJ_LAST_COMM (INT64_MAX - 3)	/* ncomms - 1 */
#define SJ_LAST_FRAME (INT64_MAX - 4)	/* a snap_thread's nframes - 1 */

/* A table, of at most SJ_MAX_FIELDS, ends with a NULL key. */
#define SJ_MAX_FIELDS 32
struct sj_field {
	const char *key;
	size_t klen;
	const char *name;	/* the key in quotes, for messages */
	enum sj_kind kind;
	size_t off;		/* of the value in the struct */
	int64_t min, max;
	int def;
	bool always;		/* written even at its default */
	bool at_op;		/* SJ_LIST: messages say "op N: " */
	const void *sub;
	size_t size, count;
	const char *need;
	int (*fn)(struct snapread *r, const struct sj_field *f,
		  const struct sj_node *n, void *base);
	void (*put)(yajl_gen g, const struct sj_field *f, const void *base);
};

/* A field of the struct SJ_T (defined before each table), an object
 * read into the same struct, a key with its own functions. */
#define SJ_KEY(k) .key = k, .klen = sizeof(k) - 1, .name = "\"" k "\""
#define SJ_FIELD(k, kd, field, ...) \
	{ SJ_KEY(k), .kind = kd, .off = offsetof(SJ_T, field), __VA_ARGS__ }
#define SJ_OBJ(k, fields, ...) \
	{ SJ_KEY(k), .kind = SJ_SUB, .sub = fields, __VA_ARGS__ }
#define SJ_CALL(k, name) \
	{ SJ_KEY(k), .kind = SJ_FN, .fn = sr_##name, .put = sw_##name }
/* An int that is an index up to last, or -1 (none, the default). */
#define SJ_INDEX(k, field, last, ...) \
	SJ_FIELD(k, SJ_INT, field, .min = -1, .max = last, .def = -1, \
		 __VA_ARGS__)

/* The header's fields of struct snap, a communicator line's (after its
 * "comm") of struct snap_comm, a rank line's (after its "rank") of
 * struct snap_rank. */
extern const struct sj_field snap_header_fields[];
extern const struct sj_field snap_comm_fields[];
extern const struct sj_field snap_rank_fields[];

/* The names of a track record's special peers and tags, from
 * SNAP_TRACK_ANY on: "any", "proc_null", "root". */
extern const char *const snap_track_specials[3];

/* The keys of their own shape: read in snapread.c (communicators) and
 * snapread_rank.c, written in snapwrite.c. */
#define SJ_OWN(name) \
	int sr_##name(struct snapread *r, const struct sj_field *f, \
		      const struct sj_node *n, void *base); \
	void sw_##name(yajl_gen g, const struct sj_field *f, const void *base)
SJ_OWN(group);
SJ_OWN(neighbors);
SJ_OWN(members);
SJ_OWN(queues);
SJ_OWN(extra);
SJ_OWN(track_num);
/* An op's peer_global against its communicator's group. */
int sr_check_op(struct snapread *r, const struct sj_field *f,
		const struct sj_node *o, void *entry);

#endif /* MD_SNAPFORMAT_H */
