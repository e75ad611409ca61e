/*
 * snapjson.h - private to the snapshot reader: the reader's state and
 * typed, checked access to the fields of one parsed line.
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

#include <json-c/json.h>

#include "snap.h"

typedef struct json_object jobj;

struct snaprd {
	const char *name;
	long lineno;
	const char *line;
	size_t len;
	char ctx[96]; /* "rank 7: op 2: " */
	struct snap *s;
	struct json_tokener *tok;
	bool have_header;
	int nranks, ncomms; /* from the header */
	int comms_read, ranks_read, ranks_cap;
	int64_t group_budget; /* group entries still allowed */
	long long size;	      /* input bytes, -1 if not known */
	unsigned char *seen;  /* nranks bits: duplicate group entries */
};

/* Report an error at a column of the current line (1-based), or at the
 * first place key is used as a key in it (column 1 if key is NULL). */
int snaprd_fail_at(const struct snaprd *r, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int snaprd_fail(const struct snaprd *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An integer in min..max (default def). */
int snaprd_int(struct snaprd *r, jobj *o, const char *key, int64_t min,
	       int64_t max, int def, int *out);
/* A non-negative integer (default 0). */
int snaprd_u64(struct snaprd *r, jobj *o, const char *key, uint64_t *out);
int snaprd_i64(struct snaprd *r, jobj *o, const char *key, int64_t *out);
/* A string, interned in r->s (default NULL). */
int snaprd_str(struct snaprd *r, jobj *o, const char *key, const char **out);
int snaprd_bool(struct snaprd *r, jobj *o, const char *key, bool *out);
/* A "0x..." hex string (default 0). */
int snaprd_addr(struct snaprd *r, jobj *o, const char *key, uint64_t *out);
/* A string that is names(i) for some i < n: *out = i (default def). */
int snaprd_enum(struct snaprd *r, jobj *o, const char *key,
		const char *(*names)(int), int n, int def, int *out);
/* An array of at most max entries: *arr borrowed from o (NULL, *n = 0
 * if absent). */
int snaprd_array(struct snaprd *r, jobj *o, const char *key, size_t max,
		 jobj **arr, int *n);
/* An object, borrowed from o (NULL if absent). */
int snaprd_object(struct snaprd *r, jobj *o, const char *key, jobj **out);

#endif /* MD_SNAPJSON_H */
