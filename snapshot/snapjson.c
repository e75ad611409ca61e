/*
 * snapjson.c - typed, checked access to the values captured from a
 * snapshot line, and the reader's one-line error messages
 * (file:line:column).  The checks and messages are those of the json-c
 * reader this replaced: a value's JSON type decides, as json-c's did.
 */
#include "snapjson.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/* Column (1-based) of "key" used as a key in the current line, or 1. */
static long key_column(const struct snaprd *r, const char *key)
{
	size_t klen = key ? strlen(key) : 0;

	for (size_t i = 0; key && i + klen + 2 <= r->len; i++) {
		size_t j = i + klen + 2;

		if (r->line[i] != '"' || memcmp(r->line + i + 1, key, klen) ||
		    r->line[i + klen + 1] != '"')
			continue;
		while (j < r->len && (r->line[j] == ' ' || r->line[j] == '\t'))
			j++;
		if (j < r->len && r->line[j] == ':')
			return (long)i + 1;
	}
	return 1;
}

static int vfail(const struct snaprd *r, long col, const char *fmt, va_list ap)
{
	char msg[512], at[64] = "";
	int n = 0;

	if (r->par)
		return -MD_E_INPUT;
	if (r->at_comm >= 0)
		n += snprintf(at + n, sizeof(at) - n, "communicator %d: ",
			      r->at_comm);
	if (r->at_rank >= 0)
		n += snprintf(at + n, sizeof(at) - n, "rank %d: ", r->at_rank);
	if (r->at_op >= 0)
		snprintf(at + n, sizeof(at) - n, "op %d: ", r->at_op);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	md_error("%s:%ld:%ld: %s%s", r->name, r->lineno, col, at, msg);
	return -MD_E_INPUT;
}

int snaprd_fail_at(const struct snaprd *r, long col, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(r, col, fmt, ap);
	va_end(ap);
	return ret;
}

int snaprd_fail(const struct snaprd *r, const char *key, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(r, key_column(r, key), fmt, ap);
	va_end(ap);
	return ret;
}

int64_t snaprd_int64(const struct snaprd_val *v)
{
	if (v->neg)
		return v->i;
	return v->u > INT64_MAX ? INT64_MAX : (int64_t)v->u;
}

static bool absent(const struct snaprd_val *v)
{
	return v->type == SNAPRD_ABSENT || v->type == SNAPRD_NULL;
}

int snaprd_int(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       int64_t min, int64_t max, int def, int *out)
{
	int64_t n;

	*out = def;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_INT)
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	n = snaprd_int64(v);
	if (n < min || n > max)
		return snaprd_fail(r, key,
				   "\"%s\" %" PRId64
				   " is out of range (%" PRId64 "..%" PRId64
				   ")",
				   key, n, min, max);
	*out = (int)n;
	return 0;
}

int snaprd_u64(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       uint64_t *out)
{
	*out = 0;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_INT)
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	if (v->neg)
		return snaprd_fail(r, key, "\"%s\" %" PRId64 " is negative",
				   key, v->i);
	*out = v->u;
	return 0;
}

int snaprd_i64(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       int64_t *out)
{
	*out = 0;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_INT)
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	*out = snaprd_int64(v);
	return 0;
}

int snaprd_str(struct snaprd *r, const struct snaprd_val *v, const char *key,
	       const char **out)
{
	*out = NULL;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_STRING)
		return snaprd_fail(r, key, "\"%s\" must be a string", key);
	*out = v->s;
	return 0;
}

int snaprd_bool(struct snaprd *r, const struct snaprd_val *v, const char *key,
		bool *out)
{
	*out = false;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_BOOL)
		return snaprd_fail(r, key, "\"%s\" must be true or false", key);
	*out = v->b;
	return 0;
}

/* The text was checked as it was parsed (snapread_sax.c). */
int snaprd_addr(struct snaprd *r, const struct snaprd_val *v, const char *key,
		uint64_t *out)
{
	*out = 0;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_STRING || v->addr == SNAPRD_ADDR_FORM)
		return snaprd_fail(
			r, key, "\"%s\" must be a hex string \"0x...\"", key);
	if (v->addr == SNAPRD_ADDR_RANGE)
		return snaprd_fail(r, key,
				   "\"%s\" \"%s\" is not a 64-bit hex "
				   "address",
				   key, v->s);
	*out = v->u;
	return 0;
}

int snaprd_enum(struct snaprd *r, const struct snaprd_val *v, const char *key,
		const char *(*names)(int), int n, int def, int *out)
{
	const char *str;
	int ret = snaprd_str(r, v, key, &str);

	*out = def;
	if (ret || !str)
		return ret;
	for (int i = 0; i < n; i++)
		if (strcmp(names(i), str) == 0) {
			*out = i;
			return 0;
		}
	return snaprd_fail(r, key, "\"%s\" \"%s\" is not a known value", key,
			   str);
}

int snaprd_array(struct snaprd *r, const struct snaprd_val *v,
		 const char *key, size_t max, int *n)
{
	*n = 0;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_ARRAY)
		return snaprd_fail(r, key, "\"%s\" must be an array", key);
	if ((size_t)v->n > max)
		return snaprd_fail(r, key,
				   "\"%s\" has %d entries, at most %zu "
				   "are allowed",
				   key, v->n, max);
	*n = v->n;
	return 0;
}

int snaprd_object(struct snaprd *r, const struct snaprd_val *v,
		  const char *key, bool *present)
{
	*present = false;
	if (absent(v))
		return 0;
	if (v->type != SNAPRD_OBJECT)
		return snaprd_fail(r, key, "\"%s\" must be an object", key);
	*present = true;
	return 0;
}

static size_t str_hash(const char *str, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)str[i];
		h *= 0x100000001b3ULL;
	}
	return (size_t)h;
}

static void itab_add(struct snaprd *r, const char *p, size_t h);

static void itab_grow(struct snaprd *r)
{
	const char **old = r->itab;
	size_t cap = r->icap;

	r->icap = cap ? 2 * cap : 64;
	r->itab = xcalloc(r->icap, sizeof(*r->itab));
	r->icount = 0;
	for (size_t i = 0; i < cap; i++)
		if (old[i])
			itab_add(r, old[i], str_hash(old[i], strlen(old[i])));
	free(old);
}

static void itab_add(struct snaprd *r, const char *p, size_t h)
{
	if (2 * (r->icount + 1) > r->icap)
		itab_grow(r);
	for (h &= r->icap - 1; r->itab[h]; h = (h + 1) & (r->icap - 1))
		;
	r->itab[h] = p;
	r->icount++;
}

/* Parts read side by side share the pool under a lock, taken only for a
 * string the part has not met before: with the lock per string, two
 * threads spent their time waking each other (a 2-frame stack changes
 * 4 strings per rank line). */
const char *snaprd_intern(struct snaprd *r, const char *str)
{
	size_t n, h, i;
	const char *p;

	if (!r->lock)
		return snap_str(r->s, str);
	n = strlen(str);
	h = str_hash(str, n);
	for (i = h & (r->icap - 1); r->icap && r->itab[i];
	     i = (i + 1) & (r->icap - 1))
		if (strcmp(r->itab[i], str) == 0)
			return r->itab[i];
	pthread_mutex_lock(r->lock);
	p = snap_str(r->s, str);
	pthread_mutex_unlock(r->lock);
	itab_add(r, p, h);
	return p;
}
