/*
 * snapjson.c - typed, checked access to the fields of a snapshot line,
 * and the reader's one-line error messages (file:line:column).
 */
#include "snapjson.h"

#include <errno.h>
#include <inttypes.h>
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
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	md_error("%s:%ld:%ld: %s%s", r->name, r->lineno, col, r->ctx, msg);
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

int snaprd_int(struct snaprd *r, jobj *o, const char *key, int64_t min,
	       int64_t max, int def, int *out)
{
	jobj *v;
	int64_t n;

	*out = def;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	n = json_object_get_int64(v);
	if (n < min || n > max)
		return snaprd_fail(r, key,
				   "\"%s\" %" PRId64
				   " is out of range (%" PRId64 "..%" PRId64
				   ")",
				   key, n, min, max);
	*out = (int)n;
	return 0;
}

int snaprd_u64(struct snaprd *r, jobj *o, const char *key, uint64_t *out)
{
	jobj *v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	if (json_object_get_int64(v) < 0)
		return snaprd_fail(r, key, "\"%s\" %" PRId64 " is negative",
				   key, json_object_get_int64(v));
	*out = json_object_get_uint64(v);
	return 0;
}

int snaprd_str(struct snaprd *r, jobj *o, const char *key, const char **out)
{
	jobj *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return snaprd_fail(r, key, "\"%s\" must be a string", key);
	*out = snap_str(r->s, json_object_get_string(v));
	return 0;
}

int snaprd_bool(struct snaprd *r, jobj *o, const char *key, bool *out)
{
	jobj *v;

	*out = false;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return snaprd_fail(r, key, "\"%s\" must be true or false", key);
	*out = json_object_get_boolean(v);
	return 0;
}

int snaprd_addr(struct snaprd *r, jobj *o, const char *key, uint64_t *out)
{
	const char *str;
	char *end;
	jobj *v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	str = json_object_get_string(v);
	if (!json_object_is_type(v, json_type_string) ||
	    strncmp(str, "0x", 2) || !str[2] || strchr(str, '-') ||
	    strchr(str, ' '))
		return snaprd_fail(
			r, key, "\"%s\" must be a hex string \"0x...\"", key);
	errno = 0;
	*out = strtoull(str + 2, &end, 16);
	if (*end || errno)
		return snaprd_fail(r, key,
				   "\"%s\" \"%s\" is not a 64-bit hex "
				   "address",
				   key, str);
	return 0;
}

/* A string naming one of n enum values (by names(i)), or def if absent. */
int snaprd_enum(struct snaprd *r, jobj *o, const char *key,
		const char *(*names)(int), int n, int def, int *out)
{
	const char *str;
	int ret = snaprd_str(r, o, key, &str);

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

/* The array under key (NULL if absent) and its length, at most max. */
int snaprd_array(struct snaprd *r, jobj *o, const char *key, size_t max,
		 jobj **arr, int *n)
{
	jobj *v;

	*arr = NULL;
	*n = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return snaprd_fail(r, key, "\"%s\" must be an array", key);
	if (json_object_array_length(v) > max)
		return snaprd_fail(r, key,
				   "\"%s\" has %zu entries, at most %zu "
				   "are allowed",
				   key, json_object_array_length(v), max);
	*arr = v;
	*n = (int)json_object_array_length(v);
	return 0;
}

int snaprd_object(struct snaprd *r, jobj *o, const char *key, jobj **out)
{
	*out = NULL;
	if (!json_object_object_get_ex(o, key, out) || !*out)
		return 0;
	if (!json_object_is_type(*out, json_type_object))
		return snaprd_fail(r, key, "\"%s\" must be an object", key);
	return 0;
}

int snaprd_i64(struct snaprd *r, jobj *o, const char *key, int64_t *out)
{
	jobj *v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return snaprd_fail(r, key, "\"%s\" must be an integer", key);
	*out = json_object_get_int64(v);
	return 0;
}
