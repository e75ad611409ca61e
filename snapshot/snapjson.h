/*
 * snapjson.h - private to the snapshot reader: the reader's state, the
 * values captured from one line by the streaming (yajl) parse, and typed,
 * checked access to them.
 *
 * A line is parsed in one pass into plain records (no tree, no malloc per
 * value: the record arrays are reused from line to line), then checked
 * and converted into the model once the whole line has parsed, because
 * what a line is (header, communicator, rank, note) and the ranges of
 * some fields (a peer's range depends on the op's "comm", a frame index
 * on the number of frames) are only known at its end.
 *
 * Every snaprd_* getter leaves the default in *out when the key is absent
 * (or null), returns 0, or reports one error line naming the file, line,
 * column (of the key) and what was wrong, and returns -MD_E_INPUT.
 */
#ifndef MD_SNAPJSON_H
#define MD_SNAPJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snap.h"

/* What a captured value was in the JSON text. */
enum snaprd_type {
	SNAPRD_ABSENT,
	SNAPRD_NULL,
	SNAPRD_INT,
	SNAPRD_DOUBLE,
	SNAPRD_STRING,
	SNAPRD_BOOL,
	SNAPRD_ARRAY,
	SNAPRD_OBJECT,
};

/* A string value of an address key ("pc", "buffer", "request"). */
enum snaprd_addr {
	SNAPRD_ADDR_OK,		/* value in u */
	SNAPRD_ADDR_FORM,	/* not "0x..." */
	SNAPRD_ADDR_RANGE,	/* not a 64-bit hex number: text in s */
};

/*
 * One captured value.  An integer is kept as json-c kept it (the old
 * reader's semantics): beyond int64 it is clamped, a positive one up to
 * UINT64_MAX; neg says which member holds it.
 */
struct snaprd_val {
	uint8_t type;		/* enum snaprd_type */
	uint8_t addr;		/* enum snaprd_addr, address keys only */
	bool neg;		/* int: negative, value in i, else in u */
	bool b;			/* bool */
	int n;			/* array: entries */
	union {
		int64_t i;
		uint64_t u;
		const char *s;	/* string: interned in the snapshot (a
				 * "group" string: the reader's buffer) */
	};
};

/* The keys of each object, in the order of the key tables. */
enum { RDL_FORMAT, RDL_VERSION, RDL_TIME, RDL_TOOL, RDL_HOST,
       RDL_STARTER_PID, RDL_STARTER, RDL_MPI, RDL_DLL, RDL_TYPES, RDL_LOOKS,
       RDL_INTERVAL_MS, RDL_NRANKS, RDL_NCOMMS, RDL_COMM, RDL_ID, RDL_NAME,
       RDL_SIZE, RDL_GROUP, RDL_RANK, RDL_PID, RDL_EXE, RDL_STATE,
       RDL_REASON, RDL_PROGRESS, RDL_CALL, RDL_SITE, RDL_MEMBERS,
       RDL_QUEUES, RDL_UNEXPECTED, RDL_OPS, RDL_THREADS, RDL_NOTE,
       RDL_TRACK, RDL_COLLECTED_ON, RDL_COUNT };
enum { RDS_FUNC, RDS_FILE, RDS_LINE, RDS_COUNT };
enum { RDQ_NONE, RDQ_COUNT };
enum { RDO_KIND, RDO_STATUS, RDO_COMM, RDO_PEER, RDO_PEER_GLOBAL, RDO_TAG,
       RDO_ANY_TAG, RDO_LENGTH, RDO_BUFFER, RDO_SYSTEM_BUFFER, RDO_ACTUAL,
       RDO_REQUEST, RDO_CORRECTED, RDO_EXTRA, RDO_SOURCE, RDO_TYPE,
       RDO_DATATYPE, RDO_DTCOUNT, RDO_SEQ, RDO_COUNT };
enum { RDA_PEER, RDA_PEER_GLOBAL, RDA_TAG, RDA_LENGTH, RDA_COUNT };
enum { RDT_TID, RDT_CALL, RDT_MPI_FRAME, RDT_USER_FRAME, RDT_PROGRESS,
       RDT_FRAMES, RDT_COUNT };
enum { RDF_PC, RDF_FUNC, RDF_OBJECT, RDF_FILE, RDF_LINE, RDF_COUNT };

/* An entry of "ops"; object false if the entry was not an object. */
struct snaprd_op {
	bool object;
	struct snaprd_val v[RDO_COUNT];
	struct snaprd_val actual[RDA_COUNT];
	struct snaprd_val extra[5];	/* the first 5 entries */
};

struct snaprd_thread {
	bool object;
	struct snaprd_val v[RDT_COUNT];
	int frame0;		/* its frames: snaprd.frames[frame0...] */
};

struct snaprd_frame {
	bool object;
	struct snaprd_val v[RDF_COUNT];
};

/* An entry of "members": pair if it was an array of exactly 2 ints. */
struct snaprd_member {
	bool pair;
	int n;
	int64_t c, l;
};

/* A growable array of the line's records, reused from line to line. */
struct snaprd_vec {
	void *a;
	int n, cap;
};

/* The parse stack and hash-indexed key tables (snapread_sax.c). */
struct snaprd_sax;

struct snaprd {
	const char *name;
	long lineno;
	const char *line;
	size_t len;
	/* Where in the snapshot, for messages ("rank 7: op 2: "); -1
	 * where not.  Numbers, not text: formatted only on an error. */
	int at_comm, at_rank, at_op;
	struct snap *s;
	bool have_header;
	int nranks, ncomms; /* from the header */
	int comms_read, ranks_read, ranks_cap;
	int64_t group_budget; /* group entries still allowed */
	long long size;	      /* input bytes, -1 if not known */
	unsigned char *seen;  /* nranks bits: duplicate group entries */

	/* The current line, as captured by the parse. */
	struct snaprd_val top[RDL_COUNT];
	struct snaprd_val site[RDS_COUNT];
	struct snaprd_val queues[RDQ_COUNT];
	struct snaprd_vec ops;		/* struct snaprd_op */
	struct snaprd_vec threads;	/* struct snaprd_thread */
	struct snaprd_vec frames;	/* struct snaprd_frame */
	struct snaprd_vec members;	/* struct snaprd_member */
	struct snaprd_vec group;	/* int: a rank, or -1 if not one */
	char *raw;			/* the "group" string */
	size_t rawcap;
	char *tmp;			/* a string value, NUL-terminated */
	size_t tmpcap;
	struct snaprd_sax *sax;

	/* Reading a part of the rank lines beside other threads
	 * (snapread_par.c): interning under *lock, errors not printed
	 * (a failed parallel read is read again alone, for the messages),
	 * notes kept in notes, s->ranks sized to nranks up front and each
	 * rank claimed in claimed[] so that parts never share one.  rank0
	 * is the part's first rank (-1: the next rank line sets it), hi one
	 * past the last rank it touched. */
	bool par;
	void *lock;			/* pthread_mutex_t */
	unsigned char *claimed;
	int rank0, hi;
	struct snaprd_vec notes;	/* const char *, interned */
	/* The strings this part interned: found again without the lock
	 * (a hash set of pointers into the pool, power-of-two size). */
	const char **itab;
	size_t icap, icount;
};

/* The reader's life (snapread.c): snaprd_init starts r on the snapshot
 * s (size: input bytes, -1 if unknown), snaprd_done frees what r holds
 * but not r->s.  snaprd_line parses r->line, r->len (r->line[len]
 * must be readable: '\n' or anything) after r->lineno was advanced;
 * snaprd_finish checks that the header's counts were met. */
void snaprd_init(struct snaprd *r, struct snap *s, const char *name,
		 long long size);
void snaprd_done(struct snaprd *r);
int snaprd_line(struct snaprd *r);
int snaprd_finish(struct snaprd *r);

/*
 * Read a whole snapshot held in memory (snapread_par.c): buf[0..len)
 * need not end in a newline or NUL.  The rank lines are split between
 * up to threads threads when there are at least split bytes of them
 * per thread; the result and the error message are those of a read by
 * one thread.  size is what the header's counts are checked against.
 * mapped: buf is a read-only file mapping whose pages may be dropped
 * once parsed (never for heap memory: it would read back as zeros).
 * Returns 0 and *out, or -MD_E_INPUT (reported).
 */
int snaprd_read_buf(const char *buf, size_t len, const char *name,
		    long long size, int threads, size_t split, bool mapped,
		    struct snap **out);

/* Intern str in r->s (under r->lock if there is one). */
const char *snaprd_intern(struct snaprd *r, const char *str);

/*
 * The streaming parse (snapread_sax.c).  snaprd_sax_new/free own the yajl
 * handles.  snaprd_sax_line parses one line (r->line, r->len) into the
 * captured records: returns 0 when the line held one complete JSON value
 * (*object says whether it was an object), or -MD_E_INPUT after
 * reporting the JSON error.
 */
void snaprd_sax_new(struct snaprd *r);
void snaprd_sax_free(struct snaprd *r);
int snaprd_sax_line(struct snaprd *r, bool *object);

/* Check the captured rank line and add it to r->s (snapread_rank.c). */
int snaprd_rank(struct snaprd *r);

/* The rank line's "track" object into k (snapread_track.c): the line is
 * parsed again by json-c, only when it has one. */
int snaprd_track(struct snaprd *r, struct snap_rank *k);

/* Report an error at a column of the current line (1-based), or at the
 * first place key is used as a key in it (column 1 if key is NULL). */
int snaprd_fail_at(const struct snaprd *r, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int snaprd_fail(const struct snaprd *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* json-c's int64 view of an int value (clamped). */
int64_t snaprd_int64(const struct snaprd_val *v);

/* An integer in min..max (default def). */
int snaprd_int(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       int64_t min, int64_t max, int def, int *out);
/* A non-negative integer (default 0). */
int snaprd_u64(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       uint64_t *out);
int snaprd_i64(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       int64_t *out);
/* A string, interned in r->s (default NULL). */
int snaprd_str(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       const char **out);
int snaprd_bool(struct snaprd *r, const struct snaprd_val *v, const char *key,
		bool *out);
/* A "0x..." hex string (default 0). */
int snaprd_addr(struct snaprd *r, const struct snaprd_val *v, const char *key,
		uint64_t *out);
/* A string that is names(i) for some i < n: *out = i (default def). */
int snaprd_enum(struct snaprd *r, const struct snaprd_val *v, const char *key,
		const char *(*names)(int), int n, int def, int *out);
/* An array of at most max entries: *n entries (0 if absent). */
int snaprd_array(struct snaprd *r, const struct snaprd_val *v,
		 const char *key, size_t max, int *n);
/* An object: *present says whether it is there. */
int snaprd_object(struct snaprd *r, const struct snaprd_val *v,
		  const char *key, bool *present);

#endif /* MD_SNAPJSON_H */
