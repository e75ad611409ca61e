/*
 * snapjson.c - one snapshot line parsed by yajl into a flat array of
 * nodes (no malloc per value), the fields of the tables read from them,
 * and the reader's one-line error messages (file:line:column).
 */
#include "snapjson.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/* n->at is where the token before n ended: n starts after the blanks
 * and separators. */
long sj_col(const struct snapread *r, const struct sj_node *n)
{
	size_t i = n ? n->at : 0;

	while (i < r->len && r->line[i] && strchr(" \t\r,:", r->line[i]))
		i++;
	return (long)i + 1;
}

int sj_fail_at(const struct snapread *r, long col, const char *fmt, ...)
{
	char msg[512], at[64] = "";
	va_list ap;
	int n = 0;

	if (r->quiet)
		return -MD_E_INPUT;
	if (r->at_comm >= 0)
		n += snprintf(at + n, sizeof(at) - n, "communicator %d: ",
			      r->at_comm);
	if (r->at_rank >= 0)
		n += snprintf(at + n, sizeof(at) - n, "rank %d: ", r->at_rank);
	if (r->at_op >= 0)
		snprintf(at + n, sizeof(at) - n, "op %d: ", r->at_op);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	md_error("%s:%ld:%ld: %s%s", r->name, r->lineno, col, at, msg);
	return -MD_E_INPUT;
}

/* A NUL-ended copy in the line's text, which was sized for the whole
 * line up front (a decoded token never outgrows its JSON text plus its
 * NUL), so the pointers stay valid. */
static const char *copy(struct snapread *r, const void *s, size_t len)
{
	char *p = r->text + r->textlen;

	memcpy(p, s, len);
	p[len] = '\0';
	r->textlen += len + 1;
	return p;
}

/* A new node in the current container (or the line's value). */
static struct sj_node *node(struct snapread *r, int type, const void *s,
			    size_t len)
{
	struct sj_node *n;

	if (!r->depth && r->values++) {
		r->cancel = "a second JSON value on the line";
		return NULL;
	}
	if (r->nnodes == r->nodecap) {
		r->nodecap = r->nodecap ? 2 * r->nodecap : 64;
		r->nodes = xrealloc(r->nodes, (size_t)r->nodecap * sizeof(*n));
	}
	n = memset(&r->nodes[r->nnodes++], 0, sizeof(*n));
	n->type = (uint8_t)type;
	n->skip = 1;
	n->at = (uint32_t)r->prev;
	if (s)
		n->s = copy(r, s, n->len = len);
	if (r->depth) {
		struct sj_node *parent = &r->nodes[r->open[r->depth - 1]];

		parent->n++;
		if (parent->type == SJV_OBJ) {
			n->key = r->key;
			n->klen = r->klen;
			n->at = (uint32_t)r->keyat;
		}
	}
	r->prev = yajl_get_bytes_consumed(r->h);
	return n;
}

static int cb_null(void *ctx)
{
	return node(ctx, SJV_NULL, NULL, 0) != NULL;
}

static int cb_bool(void *ctx, int b)
{
	struct sj_node *n = node(ctx, SJV_BOOL, NULL, 0);

	return n && (n->b = b, 1);
}

/* yajl checked the number's syntax; number() converts it. */
static int cb_number(void *ctx, const char *s, size_t len)
{
	return node(ctx, SJV_NUM, s, len) != NULL;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return node(ctx, SJV_STR, s, len) != NULL;
}

static int open_node(struct snapread *r, int type)
{
	if (r->depth == SJ_DEPTH) {
		r->cancel = "nesting deeper than 16 levels";
		return 0;
	}
	if (!node(r, type, NULL, 0))
		return 0;
	r->open[r->depth++] = r->nnodes - 1;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return open_node(ctx, SJV_OBJ);
}

static int cb_start_array(void *ctx)
{
	return open_node(ctx, SJV_ARR);
}

static int cb_end(void *ctx)
{
	struct snapread *r = ctx;
	int o = r->open[--r->depth];

	r->nodes[o].skip = r->nnodes - o;
	r->prev = yajl_get_bytes_consumed(r->h);
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct snapread *r = ctx;

	r->keyat = r->prev;
	/* A key without escapes comes as yajl's pointer into the line,
	 * which lasts as long as the nodes; a decoded one is copied.  Keys
	 * are compared by length (klen), never read as C strings. */
	r->key = (uintptr_t)k >= (uintptr_t)r->line &&
			 (uintptr_t)k + len <= (uintptr_t)r->line + r->len
		 ? (const char *)k
		 : copy(r, k, len);
	r->klen = (uint32_t)len;
	r->prev = yajl_get_bytes_consumed(r->h);
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

void sj_init(struct snapread *r, struct snap *s, const char *name)
{
	r->name = name;
	r->s = r->mem = s;
	r->at_comm = r->at_rank = r->at_op = -1;
	r->h = yajl_alloc(&callbacks, NULL, r);
	if (!r->h) {
		md_error("yajl_alloc: out of memory");
		abort();
	}
	/* One handle for all lines: one value per line, checked here. */
	yajl_config(r->h, yajl_allow_multiple_values, 1);
}

void sj_done(struct snapread *r)
{
	yajl_free(r->h);
	free(r->nodes);
	free(r->text);
}

int sj_parse_line(struct snapread *r)
{
	yajl_status st;
	unsigned char *msg;
	size_t at;

	if (2 * r->len + 16 > r->textcap) {
		r->textcap = 2 * r->len + 16;
		r->text = xrealloc(r->text, r->textcap);
	}
	r->textlen = r->prev = 0;
	r->nnodes = r->depth = r->values = 0;
	r->cancel = NULL;
	st = yajl_parse(r->h, (const unsigned char *)r->line, r->len);
	/* The end of the line ends a number there (the value's own, or a
	 * second value's). */
	if (st == yajl_status_ok && !r->depth)
		st = yajl_complete_parse(r->h);
	if (st == yajl_status_ok && (r->depth || !r->values))
		return sj_fail_at(r, (long)r->len + 1,
				  "the line ends inside a JSON value: truncated");
	/* A second value cut at the end of the line (`{...}"x`) gave no
	 * callback: yajl holds its start, and would read it on into the
	 * next line.  (After a container r->prev is where it ended; a
	 * scalar ends at the line's end.) */
	if (st == yajl_status_ok && r->nodes[0].type >= SJV_ARR) {
		size_t i = r->prev;

		while (i < r->len && strchr(" \t\r\n", r->line[i]) &&
		       r->line[i])
			i++;
		if (i < r->len)
			return sj_fail_at(r, (long)i + 1,
					  "a second JSON value on the line");
	}
	if (st == yajl_status_ok)
		return 0;
	if (r->cancel)
		return sj_fail(r, &(struct sj_node){ .at = r->prev }, "%s",
			       r->cancel);
	/* yajl's own words ("lexical error: invalid char in json text.")
	 * where it stopped: it counts the byte or token it stopped at. */
	at = yajl_get_bytes_consumed(r->h);
	at = at > r->len ? r->len : at;
	msg = yajl_get_error(r->h, 0, NULL, 0);
	msg[strcspn((char *)msg, "\n")] = '\0';
	sj_fail_at(r, at ? (long)at : 1, "invalid JSON: %s", (char *)msg);
	yajl_free_error(r->h, msg);
	return -MD_E_INPUT;
}

static bool key_is(const struct sj_node *n, const char *key, size_t len)
{
	return n->klen == len && n->key[0] == key[0] &&
	       memcmp(n->key, key, len) == 0;
}

const struct sj_node *sj_get(const struct sj_node *o, const char *key)
{
	const struct sj_node *n, *found = NULL;
	size_t len = strlen(key);

	sj_each(n, o)
		if (key_is(n, key, len))
			found = n;
	return found && found->type != SJV_NULL ? found : NULL;
}

int sj_check(struct snapread *r, const struct sj_node *n, const char *key,
	     int type, int max)
{
	static const char *const what[] = {
		[SJV_BOOL] = "true or false", [SJV_NUM] = "an integer",
		[SJV_STR] = "a string", [SJV_ARR] = "an array",
		[SJV_OBJ] = "an object",
	};

	if (n && n->type != type)
		return sj_fail(r, n, "\"%s\" must be %s", key, what[type]);
	if (n && type == SJV_ARR && n->n > max)
		return sj_fail(r, n,
			       "\"%s\" has %d entries, at most %d are allowed",
			       key, n->n, max);
	return 0;
}

/* An integer in min..max into *out, or if u64 any uint64_t (its bits). */
static int number(struct snapread *r, const struct sj_node *n, const char *what,
		  int64_t min, int64_t max, bool u64, int64_t *out)
{
	bool neg = n->type == SJV_NUM && n->s[0] == '-', big = false;
	const char *p = n->type == SJV_NUM ? n->s + neg : "x";
	uint64_t u = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		big |= u > (UINT64_MAX - d) / 10;
		u = u * 10 + d;
	}
	if (*p)
		return sj_fail(r, n, "%s must be an integer", what);
	*out = (int64_t)(neg ? 0 - u : u);
	if (u64 && (big || (neg && u)))
		return sj_fail(r, n, "%s %s is out of range (0..18446744073709551615)",
			       what, n->s);
	if (!u64 &&
	    (big || u > (uint64_t)INT64_MAX + neg || *out < min || *out > max))
		return sj_fail(r, n, "%s %s is out of range (%lld..%lld)", what,
			       n->s, (long long)min, (long long)max);
	return 0;
}

int sj_num(struct snapread *r, const struct sj_node *n, const char *what,
	   int64_t min, int64_t max, int64_t *out)
{
	return number(r, n, what, min, max, false, out);
}

/* Interning costs a hash of the whole string and a probe: the cache in
 * front of it costs a few bytes' hash and a memcmp. */
const char *sj_intern(struct snapread *r, const struct sj_node *n)
{
	const unsigned char *s = (const unsigned char *)n->s;
	size_t len = strlen(n->s); /* a \u0000 ends it */
	uint8_t h = (uint8_t)(len * 31 + s[0] + 7u * s[len ? len - 1 : 0] +
			      13u * s[len / 2]);

	if (!r->cache[h].s || r->cache[h].len != len ||
	    memcmp(r->cache[h].s, n->s, len) != 0) {
		if (r->lock)
			pthread_mutex_lock(r->lock);
		r->cache[h].s = snap_str(r->s, n->s);
		if (r->lock)
			pthread_mutex_unlock(r->lock);
		r->cache[h].len = len;
	}
	return r->cache[h].s;
}

/* "0x" and 1-16 hex digits, either case. */
static int read_addr(struct snapread *r, const struct sj_node *n,
		     const char *key, uint64_t *out)
{
	size_t i = 2;

	if (n->type != SJV_STR)
		return sj_fail(r, n, "\"%s\" must be a hex string \"0x...\"",
			       key);
	if (n->len >= 3 && n->len <= 18 && n->s[0] == '0' && n->s[1] == 'x')
		for (*out = 0;
		     i < n->len && md_hex_digit((unsigned char)n->s[i]) >= 0;
		     i++)
			*out = *out << 4 |
			       (unsigned)md_hex_digit((unsigned char)n->s[i]);
	if (i == n->len && n->len >= 3)
		return 0;
	return sj_fail(r, n, "\"%s\" \"%.40s\" is not a hex address \"0x...\" of up to 16 digits",
		       key, n->s);
}

static int read_enum(struct snapread *r, const struct sj_node *n,
		     const char *key, const char *const *names, int *out)
{
	for (int i = 0; names[i]; i++)
		if (names[i][0] == n->s[0] && strcmp(names[i], n->s) == 0) {
			*out = i;
			return 0;
		}
	return sj_fail(r, n, "\"%s\" \"%.40s\" is not a known value", key,
		       n->s);
}

/* The entries of an array of objects, in an array of the pool. */
static int read_list(struct snapread *r, const struct sj_field *f,
		     const struct sj_node *a, void *base)
{
	const struct sj_node *e;
	char *entry;
	int i = 0;

	if (!a || !a->n)
		return 0;
	entry = snap_alloc(r->mem, (size_t)a->n * f->size);
	*(void **)((char *)base + f->off) = entry;
	*(int *)((char *)base + f->count) = a->n;
	for (e = a + 1; e < a + a->skip; e += e->skip, entry += f->size) {
		if (f->at_op)
			r->at_op = i++;
		if (e->type != SJV_OBJ)
			return sj_fail(r, e, "each \"%s\" entry must be an object", f->key);
		if (f->need && !sj_get(e, f->need))
			return sj_fail(r, e, "each \"%s\" entry needs a \"%s\"",
				       f->key, f->need);
		if (sj_fields(r, e, f->sub, entry) ||
		    (f->fn && f->fn(r, f, e, entry)))
			return -MD_E_INPUT;
	}
	if (f->at_op)
		r->at_op = -1;
	return 0;
}

/* A maximum that depends on the header or on fields read before. */
static int64_t limit(const struct snapread *r, int64_t max, const void *base)
{
	if (max < SJ_LAST_FRAME)
		return max;
	switch (max) {
	case SJ_NRANKS:
		return r->nranks;
	case SJ_LAST_RANK:
		return r->nranks - 1;
	case SJ_LAST_COMM:
		return r->ncomms - 1;
	case SJ_LAST_FRAME:
		return ((const struct snap_thread *)base)->nframes - 1;
	}
	return max;
}

/* The type each kind of field wants (SJ_ADDR and SJ_FN: their own). */
static const uint8_t wants[SJ_FN + 1] = {
	[SJ_INT] = SJV_NUM, [SJ_I64] = SJV_NUM, [SJ_U64] = SJV_NUM,
	[SJ_STR] = SJV_STR, [SJ_BOOL] = SJV_BOOL, [SJ_ENUM] = SJV_STR,
	[SJ_SUB] = SJV_OBJ, [SJ_LIST] = SJV_ARR,
};

static int read_field(struct snapread *r, const struct sj_field *f,
		      const struct sj_node *n, void *base)
{
	void *p = (char *)base + f->off;
	int64_t v;

	if (f->kind == SJ_INT || f->kind == SJ_ENUM)
		*(int *)p = f->def;
	if (n && wants[f->kind] &&
	    (n->type != wants[f->kind] || f->kind == SJ_LIST) &&
	    sj_check(r, n, f->key, wants[f->kind], (int)f->max))
		return -MD_E_INPUT;
	if (!n && f->kind != SJ_SUB && f->kind != SJ_LIST && f->kind != SJ_FN)
		return 0;
	switch (f->kind) {
	case SJ_INT:
		if (sj_num(r, n, f->name, f->min, limit(r, f->max, base), &v))
			return -MD_E_INPUT;
		*(int *)p = (int)v;
		return 0;
	case SJ_I64:
	case SJ_U64:
		return number(r, n, f->name, INT64_MIN, INT64_MAX,
			      f->kind == SJ_U64, p);
	case SJ_STR:
		*(const char **)p = sj_intern(r, n);
		return 0;
	case SJ_BOOL:
		*(bool *)p = n->b;
		return 0;
	case SJ_ADDR:
		return read_addr(r, n, f->key, p);
	case SJ_ENUM:
		return read_enum(r, n, f->key, f->sub, p);
	case SJ_SUB:
		if (f->count)
			*(bool *)((char *)base + f->count) = n != NULL;
		return sj_fields(r, n, f->sub, base);
	case SJ_LIST:
		return read_list(r, f, n, base);
	case SJ_FN:
		return f->fn(r, f, n, base);
	}
	return 0;
}

/* One pass over o's keys: each to its field (the last of equal keys
 * counts, null is absent), looked for from the field after the last one
 * found, since the writer writes them in the table's order. */
int sj_fields(struct snapread *r, const struct sj_node *o,
	      const struct sj_field *f, void *base)
{
	const struct sj_node *got[SJ_MAX_FIELDS], *n;
	int nf = 0, i = 0;

	while (f[nf].key) {
		assert(nf < SJ_MAX_FIELDS);
		got[nf++] = NULL;
	}
	if (o)
		sj_each(n, o)
			for (int k = 0; k < nf; k++, i = i + 1 < nf ? i + 1 : 0)
				if (key_is(n, f[i].key, f[i].klen)) {
					got[i] = n->type == SJV_NULL ? NULL : n;
					i = i + 1 < nf ? i + 1 : 0;
					break;
				}
	for (i = 0; i < nf; i++)
		if (read_field(r, &f[i], got[i], base))
			return -MD_E_INPUT;
	return 0;
}
