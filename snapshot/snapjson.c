/*
 * snapjson.c - one snapshot line parsed by yajl into a flat tree of
 * nodes (no malloc per value), the fields of the tables read from them,
 * and the reader's one-line error messages (file:line:column).
 */
#include "snapjson.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

int snapjs_fail(const struct snapjs *j, long col, const char *fmt, ...)
{
	char msg[512], at[64] = "";
	va_list ap;
	int n = 0;

	if (j->quiet)
		return -MD_E_INPUT;
	if (j->at_comm >= 0)
		n += snprintf(at + n, sizeof(at) - n, "communicator %d: ",
			      j->at_comm);
	if (j->at_rank >= 0)
		n += snprintf(at + n, sizeof(at) - n, "rank %d: ", j->at_rank);
	if (j->at_op >= 0)
		snprintf(at + n, sizeof(at) - n, "op %d: ", j->at_op);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	md_error("%s:%ld:%ld: %s%s", j->name, j->lineno, col, at, msg);
	return -MD_E_INPUT;
}

/* The column where the token after offset i starts. */
static int col_after(const struct snapjs *j, size_t i)
{
	while (i < j->len && strchr(" \t\r,:", j->line[i]) && j->line[i])
		i++;
	return (int)i + 1;
}

int snapjs_col(const struct snapjs *j, const struct snapjs_node *n)
{
	return col_after(j, n->at);
}

/* A NUL-ended copy in the line's text, which was sized for the whole
 * line up front (a decoded token never outgrows its JSON text plus its
 * NUL), so the pointers stay valid. */
static const char *copy(struct snapjs *j, const void *s, size_t len)
{
	char *p = j->text + j->textlen;

	memcpy(p, s, len);
	p[len] = '\0';
	j->textlen += len + 1;
	return p;
}

/* A new node in the current container (or the line's value). */
static struct snapjs_node *node(struct snapjs *j, int type, const void *s,
				size_t len)
{
	struct snapjs_node *n;
	int idx = j->nnodes;

	if (!j->depth && j->values++) {
		j->cancel = "a second JSON value on the line";
		return NULL;
	}
	if (j->nnodes == j->nodecap) {
		j->nodecap = j->nodecap ? 2 * j->nodecap : 32;
		j->nodes = xrealloc(j->nodes, (size_t)j->nodecap * sizeof(*n));
	}
	n = memset(&j->nodes[j->nnodes++], 0, sizeof(*n));
	n->type = (uint8_t)type;
	n->at = (uint32_t)j->prev;
	if (s)
		n->s = copy(j, s, n->len = len);
	if (j->depth) {
		struct snapjs_node *parent = &j->nodes[j->open[j->depth - 1]];
		int *last = &j->last[j->depth - 1];

		*(*last ? &j->nodes[*last].next : &parent->first) = idx;
		*last = idx;
		parent->n++;
		if (parent->type == SNAPJS_OBJ) {
			n->key = j->key;
			n->klen = j->klen;
			n->at = (uint32_t)j->keyat;
		}
	}
	j->prev = yajl_get_bytes_consumed(j->h);
	return n;
}

static int cb_null(void *ctx)
{
	return node(ctx, SNAPJS_NULL, NULL, 0) != NULL;
}

static int cb_bool(void *ctx, int b)
{
	struct snapjs_node *n = node(ctx, SNAPJS_BOOL, NULL, 0);

	return n && (n->b = b, 1);
}

/* yajl checked the number's syntax. */
static int cb_number(void *ctx, const char *s, size_t len)
{
	struct snapjs_node *n = node(ctx, SNAPJS_NUM, s, len);
	size_t i = s[0] == '-';

	if (!n)
		return 0;
	n->neg = i;
	n->integer = true;
	for (; i < len && n->integer; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		n->integer = d <= 9;
		n->big |= n->u > (UINT64_MAX - d) / 10;
		n->u = n->u * 10 + d;
	}
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return node(ctx, SNAPJS_STR, s, len) != NULL;
}

static int open_node(struct snapjs *j, int type)
{
	if (j->depth == SNAPJS_DEPTH) {
		j->cancel = "nesting deeper than 16 levels";
		return 0;
	}
	if (!node(j, type, NULL, 0))
		return 0;
	j->open[j->depth] = j->nnodes - 1;
	j->last[j->depth++] = 0;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return open_node(ctx, SNAPJS_OBJ);
}

static int cb_start_array(void *ctx)
{
	return open_node(ctx, SNAPJS_ARR);
}

static int cb_end(void *ctx)
{
	struct snapjs *j = ctx;

	j->depth--;
	j->prev = yajl_get_bytes_consumed(j->h);
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct snapjs *j = ctx;

	j->keyat = j->prev;
	/* A key without escapes comes as yajl's pointer into the line,
	 * which lasts as long as the nodes; a decoded one is copied.  Keys
	 * are compared by length (klen), never read as C strings. */
	j->key = (uintptr_t)k >= (uintptr_t)j->line &&
			 (uintptr_t)k + len <= (uintptr_t)j->line + j->len
		 ? (const char *)k
		 : copy(j, k, len);
	j->klen = (uint32_t)len;
	j->prev = yajl_get_bytes_consumed(j->h);
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

void snapjs_init(struct snapjs *j, struct snap *s, const char *name)
{
	memset(j, 0, sizeof(*j));
	j->name = name;
	j->s = j->mem = s;
	j->at_comm = j->at_rank = j->at_op = -1;
	j->h = yajl_alloc(&callbacks, NULL, j);
	if (!j->h) {
		md_error("yajl_alloc: out of memory");
		abort();
	}
	/* One handle for all lines: one value per line, checked here. */
	yajl_config(j->h, yajl_allow_multiple_values, 1);
}

void snapjs_done(struct snapjs *j)
{
	if (j->h)
		yajl_free(j->h);
	free(j->nodes);
	free(j->text);
	memset(j, 0, sizeof(*j));
}

int snapjs_parse_line(struct snapjs *j)
{
	size_t at;
	unsigned char *msg;

	if (2 * j->len + 16 > j->textcap) {
		j->textcap = 2 * j->len + 16;
		j->text = xrealloc(j->text, j->textcap);
	}
	j->textlen = j->prev = 0;
	j->nnodes = j->depth = j->values = 0;
	j->cancel = NULL;
	/* The byte after the line ends a number at its end. */
	if (yajl_parse(j->h, (const unsigned char *)j->line, j->len + 1) ==
	    yajl_status_ok)
		return j->depth || !j->values
			       ? snapjs_fail(j, (long)j->len + 1,
					     "the line ends inside a JSON "
					     "value: truncated")
			       : 0;
	if (j->cancel)
		return snapjs_fail(j, col_after(j, j->prev), "%s", j->cancel);
	/* yajl's own words ("lexical error: invalid char in json text.")
	 * where it stopped: it counts the byte or token it stopped at. */
	at = yajl_get_bytes_consumed(j->h);
	at = at > j->len ? j->len : at;
	msg = yajl_get_error(j->h, 0, NULL, 0);
	msg[strcspn((char *)msg, "\n")] = '\0';
	snapjs_fail(j, at ? (long)at : 1, "invalid JSON: %s", (char *)msg);
	yajl_free_error(j->h, msg);
	return -MD_E_INPUT;
}

static bool key_is(const struct snapjs_node *n, const char *key, size_t len)
{
	return n->klen == len && n->key[0] == key[0] &&
	       memcmp(n->key, key, len) == 0;
}

const struct snapjs_node *snapjs_get(const struct snapjs *j,
				     const struct snapjs_node *o,
				     const char *key)
{
	const struct snapjs_node *n, *found = NULL;
	size_t len = strlen(key);

	for (n = snapjs_first(j, o); n; n = snapjs_next(j, n))
		if (key_is(n, key, len))
			found = n;
	return found && found->type != SNAPJS_NULL ? found : NULL;
}

int snapjs_check(struct snapjs *j, const struct snapjs_node *n,
		 const char *key, int type, int max)
{
	static const char *const what[] = {
		[SNAPJS_BOOL] = "true or false", [SNAPJS_NUM] = "an integer",
		[SNAPJS_STR] = "a string", [SNAPJS_ARR] = "an array",
		[SNAPJS_OBJ] = "an object",
	};

	if (n && n->type != type)
		return snapjs_fail(j, snapjs_col(j, n), "\"%s\" must be %s",
				   key, what[type]);
	if (n && type == SNAPJS_ARR && n->n > max)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" has %d entries, at most %d are "
				   "allowed",
				   key, n->n, max);
	return 0;
}

int snapjs_num(struct snapjs *j, const struct snapjs_node *n,
	       const char *key, const char *what, int64_t min, int64_t max,
	       int64_t *out)
{
	bool fits = n->type == SNAPJS_NUM && n->integer && !n->big &&
		    n->u <= (uint64_t)INT64_MAX + n->neg;
	int64_t v = !fits		? 0
		    : !n->neg		? (int64_t)n->u
		    : n->u > INT64_MAX ? INT64_MIN
				       : -(int64_t)n->u;
	char name[80];

	if (fits && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	snprintf(name, sizeof(name), "\"%s\"", key);
	if (n->type != SNAPJS_NUM || !n->integer)
		return snapjs_fail(j, snapjs_col(j, n), "%s must be an integer",
				   what ? what : name);
	return snapjs_fail(j, snapjs_col(j, n),
			   "%s %s is out of range (%" PRId64 "..%" PRId64 ")",
			   what ? what : name, n->s, min, max);
}

/* Interning costs a hash of the whole string and a probe: the cache in
 * front of it costs a few bytes' hash and a memcmp. */
const char *snapjs_intern(struct snapjs *j, const struct snapjs_node *n)
{
	size_t len = strlen(n->s); /* a \u0000 ends it */
	unsigned h = (unsigned)(len * 31 + (unsigned char)n->s[0] +
				(len ? 7u * (unsigned char)n->s[len - 1] +
					       13u * (unsigned char)n->s[len / 2]
				     : 0)) %
		     256;

	if (!j->cache[h].s || j->cache[h].len != len ||
	    memcmp(j->cache[h].s, n->s, len) != 0) {
		if (j->lock)
			pthread_mutex_lock(j->lock);
		j->cache[h].s = snap_str(j->s, n->s);
		if (j->lock)
			pthread_mutex_unlock(j->lock);
		j->cache[h].len = len;
	}
	return j->cache[h].s;
}

static int read_u64(struct snapjs *j, const struct snapjs_node *n,
		    const char *key, uint64_t *out)
{
	if (n->type != SNAPJS_NUM || !n->integer)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" must be an integer", key);
	if (n->big || (n->neg && n->u))
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" %s is out of range (0..%" PRIu64 ")",
				   key, n->s, UINT64_MAX);
	*out = n->u;
	return 0;
}

static int read_addr(struct snapjs *j, const struct snapjs_node *n,
		     const char *key, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 2;

	if (n->type != SNAPJS_STR)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" must be a hex string \"0x...\"",
				   key);
	/* "0x" and 1-16 hex digits, either case */
	if (n->len >= 3 && n->len <= 18 && n->s[0] == '0' && n->s[1] == 'x')
		for (; i < n->len; i++) {
			int d = md_hex_digit((unsigned char)n->s[i]);

			if (d < 0)
				break;
			v = v << 4 | (unsigned)d;
		}
	if (i != n->len || n->len < 3)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" \"%.40s\" is not a hex address "
				   "\"0x...\" of up to 16 digits",
				   key, n->s);
	*out = v;
	return 0;
}

static int read_enum(struct snapjs *j, const struct snapjs_node *n,
		     const char *key, const char *const *names, int *out)
{
	if (snapjs_check(j, n, key, SNAPJS_STR, 0))
		return -MD_E_INPUT;
	for (int i = 0; names[i]; i++)
		if (names[i][0] == n->s[0] && strcmp(names[i], n->s) == 0) {
			*out = i;
			return 0;
		}
	return snapjs_fail(j, snapjs_col(j, n),
			   "\"%s\" \"%.40s\" is not a known value", key, n->s);
}

/* The entries of an array of objects, in an array of the pool. */
static int read_list(struct snapread *r, const struct snapjs_field *f,
		     const struct snapjs_node *a, void *base)
{
	const struct snapjs_list *l = f->sub;
	struct snapjs *j = &r->j;
	const struct snapjs_node *e;
	char *entry;
	int i = 0;

	if (snapjs_check(j, a, f->key, SNAPJS_ARR, l->max))
		return -MD_E_INPUT;
	if (!a || !a->n)
		return 0;
	entry = snap_alloc(j->mem, (size_t)a->n * l->size);
	*(void **)((char *)base + f->off) = entry;
	*(int *)((char *)base + f->count) = a->n;
	for (e = snapjs_first(j, a); e; e = snapjs_next(j, e), i++) {
		if (l->at_op)
			j->at_op = i;
		if (e->type != SNAPJS_OBJ)
			return snapjs_fail(j, snapjs_col(j, e),
					   "%s must be an object", l->what);
		if (l->need && !snapjs_get(j, e, l->need))
			return snapjs_fail(j, snapjs_col(j, e),
					   "%s needs a \"%s\"", l->what,
					   l->need);
		if (snapjs_fields(r, e, l->fields, entry + i * l->size) ||
		    (l->check && l->check(r, e, entry + i * l->size)))
			return -MD_E_INPUT;
	}
	if (l->at_op)
		j->at_op = -1;
	return 0;
}

static int64_t limit(const struct snapread *r, int64_t max)
{
	return max == SJ_NRANKS	     ? r->nranks
	       : max == SJ_LAST_RANK ? r->nranks - 1
	       : max == SJ_LAST_COMM ? r->ncomms - 1
				     : max;
}

static int read_field(struct snapread *r, const struct snapjs_field *f,
		      const struct snapjs_node *n, void *base)
{
	struct snapjs *j = &r->j;
	void *p = (char *)base + f->off;
	int64_t v;

	if (f->kind == SJ_INT || f->kind == SJ_ENUM)
		*(int *)p = f->def;
	if (!n && f->kind != SJ_OBJ && f->kind != SJ_LIST && f->kind != SJ_FN)
		return 0;
	switch (f->kind) {
	case SJ_INT:
		if (snapjs_num(j, n, f->key, NULL, f->min, limit(r, f->max),
			       &v))
			return -MD_E_INPUT;
		*(int *)p = (int)v;
		return 0;
	case SJ_I64:
		return snapjs_num(j, n, f->key, NULL, INT64_MIN, INT64_MAX, p);
	case SJ_U64:
		return read_u64(j, n, f->key, p);
	case SJ_STR:
		if (snapjs_check(j, n, f->key, SNAPJS_STR, 0))
			return -MD_E_INPUT;
		*(const char **)p = snapjs_intern(j, n);
		return 0;
	case SJ_BOOL:
		if (snapjs_check(j, n, f->key, SNAPJS_BOOL, 0))
			return -MD_E_INPUT;
		*(bool *)p = n->b;
		return 0;
	case SJ_ADDR:
		return read_addr(j, n, f->key, p);
	case SJ_ENUM:
		return read_enum(j, n, f->key, f->sub, p);
	case SJ_OBJ:
		if (snapjs_check(j, n, f->key, SNAPJS_OBJ, 0))
			return -MD_E_INPUT;
		return snapjs_fields(r, n, f->sub, base);
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
int snapjs_fields(struct snapread *r, const struct snapjs_node *o,
		  const struct snapjs_field *f, void *base)
{
	const struct snapjs_node *got[SJ_MAX_FIELDS], *n;
	int nf = 0, i = 0;

	while (f[nf].key)
		got[nf++] = NULL;
	for (n = o ? snapjs_first(&r->j, o) : NULL; n;
	     n = snapjs_next(&r->j, n))
		for (int k = 0; k < nf; k++, i = i + 1 < nf ? i + 1 : 0)
			if (key_is(n, f[i].key, f[i].klen)) {
				got[i] = n->type == SNAPJS_NULL ? NULL : n;
				i = i + 1 < nf ? i + 1 : 0;
				break;
			}
	for (i = 0; i < nf; i++)
		if (read_field(r, &f[i], got[i], base))
			return -MD_E_INPUT;
	return 0;
}
