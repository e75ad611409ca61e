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

#include <yajl/yajl_parse.h>

#include "md.h"

/* The format nests 5 deep (rank, threads, thread, frames, frame). */
#define SNAPJS_DEPTH 16

struct snapjs_parse {
	yajl_handle h;
	int open[SNAPJS_DEPTH];	/* the open arrays and objects */
	int last[SNAPJS_DEPTH];	/* their last child so far, 0 if none */
	int depth;
	int values;		/* top-level values in the line */
	size_t prev;		/* offset after the previous token */
	const char *key;	/* the key of the value that follows */
	uint32_t khash, klen;
	size_t keyat;		/* where the search for the key starts */
	const char *cancel;	/* why a callback stopped the parse */
};

/* A key's hash: cheap, and folded to a constant for a literal key. */
static inline uint32_t key_hash(const char *key, size_t len)
{
	return len ? (uint32_t)len | (uint32_t)(unsigned char)key[0] << 8 |
			     (uint32_t)(unsigned char)key[len / 2] << 16 |
			     (uint32_t)(unsigned char)key[len - 1] << 24
		   : 0;
}

static inline uint64_t kbit(uint32_t h)
{
	return 1ULL << ((h * 0x9e3779b1U) >> 26);
}

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

/* The column where the token after offset i starts. */
static int col_after(const struct snapjs *j, size_t i)
{

	for (; i < j->len; i++) {
		char c = j->line[i];

		if (c != ' ' && c != '\t' && c != '\r' && c != ',' && c != ':')
			break;
	}
	return (int)i + 1;
}

int snapjs_col(const struct snapjs *j, const struct snapjs_node *n)
{
	return col_after(j, n->at);
}

/* A new node in the current container (or the line's value). */
static struct snapjs_node *node(struct snapjs *j, int type)
{
	struct snapjs_parse *p = j->p;
	struct snapjs_node *n;
	int idx = j->nnodes;

	if (!p->depth && p->values++) {
		p->cancel = "a second JSON value on the line";
		return NULL;
	}
	if (j->nnodes == j->nodecap) {
		j->nodecap = j->nodecap ? 2 * j->nodecap : 32;
		j->nodes = xrealloc(j->nodes, (size_t)j->nodecap * sizeof(*n));
	}
	n = &j->nodes[j->nnodes++];
	memset(n, 0, sizeof(*n));
	n->type = (uint8_t)type;
	n->at = (uint32_t)p->prev;
	if (p->depth) {
		struct snapjs_node *parent = &j->nodes[p->open[p->depth - 1]];
		int *last = &p->last[p->depth - 1];

		if (*last)
			j->nodes[*last].next = idx;
		else
			parent->first = idx;
		*last = idx;
		parent->n++;
		if (parent->type == SNAPJS_OBJ) {
			uint64_t bit = kbit(p->khash);

			n->key = p->key;
			n->khash = p->khash;
			n->klen = p->klen;
			n->at = p->keyat;
			parent->kshared |= (parent->kbits & bit) != 0;
			parent->kbits |= bit;
		}
	}
	p->prev = yajl_get_bytes_consumed(p->h);
	return n;
}

static int scalar(void *ctx, int type, const void *s, size_t len, bool b)
{
	struct snapjs *j = ctx;
	struct snapjs_node *n = node(j, type);

	if (!n)
		return 0;
	n->b = b;
	if (s) {
		n->s = copy(j, s, len);
		n->len = len;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return scalar(ctx, SNAPJS_NULL, NULL, 0, false);
}

static int cb_bool(void *ctx, int b)
{
	return scalar(ctx, SNAPJS_BOOL, NULL, 0, b);
}

/* yajl checked the number's syntax. */
static int cb_number(void *ctx, const char *s, size_t len)
{
	struct snapjs *j = ctx;
	size_t i = s[0] == '-';
	struct snapjs_node *n;

	if (!scalar(ctx, SNAPJS_NUM, s, len, false))
		return 0;
	n = &j->nodes[j->nnodes - 1];
	n->neg = i;
	n->integer = true;
	for (; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9) {
			n->integer = false;
			break;
		}
		if (n->u > (UINT64_MAX - d) / 10)
			n->big = true;
		n->u = n->u * 10 + d;
	}
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return scalar(ctx, SNAPJS_STR, s, len, false);
}

static int open_node(void *ctx, int type)
{
	struct snapjs *j = ctx;
	struct snapjs_parse *p = j->p;

	if (p->depth == SNAPJS_DEPTH) {
		p->cancel = "nesting deeper than 16 levels";
		return 0;
	}
	if (!node(j, type))
		return 0;
	p->open[p->depth] = j->nnodes - 1;
	p->last[p->depth++] = 0;
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

	j->p->depth--;
	j->p->prev = yajl_get_bytes_consumed(j->p->h);
	return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct snapjs *j = ctx;
	struct snapjs_parse *p = j->p;

	p->keyat = p->prev;
	p->key = copy(j, k, len);
	p->khash = key_hash(p->key, len);
	p->klen = (uint32_t)len;
	p->prev = yajl_get_bytes_consumed(p->h);
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
	j->p = xcalloc(1, sizeof(*j->p));
	j->p->h = yajl_alloc(&callbacks, NULL, j);
	if (!j->p->h) {
		md_error("yajl_alloc: out of memory");
		abort();
	}
	/* One handle for all lines: one value per line, checked here. */
	yajl_config(j->p->h, yajl_allow_multiple_values, 1);
}

void snapjs_done(struct snapjs *j)
{
	if (j->p)
		yajl_free(j->p->h);
	free(j->p);
	free(j->nodes);
	free(j->text);
	memset(j, 0, sizeof(*j));
}

/* yajl's own words ("lexical error: invalid char in json text.") at the
 * column where it stopped. */
static int parse_error(struct snapjs *j)
{
	size_t at = yajl_get_bytes_consumed(j->p->h);
	unsigned char *msg;
	int ret;

	/* It counts the byte or token it stopped at. */
	if (at > j->len)
		at = j->len;
	if (j->p->cancel)
		return snapjs_fail(j, col_after(j, j->p->prev), "%s",
				   j->p->cancel);
	msg = yajl_get_error(j->p->h, 0, NULL, 0);
	msg[strcspn((char *)msg, "\n")] = '\0';
	ret = snapjs_fail(j, at ? (long)at : 1, "invalid JSON: %s",
			  (char *)msg);
	yajl_free_error(j->p->h, msg);
	return ret;
}

int snapjs_parse_line(struct snapjs *j)
{
	struct snapjs_parse *p = j->p;

	if (2 * j->len + 16 > j->textcap) {
		j->textcap = 2 * j->len + 16;
		j->text = xrealloc(j->text, j->textcap);
	}
	j->textlen = 0;
	j->nnodes = 0;
	j->hint_obj = NULL;
	p->depth = p->values = 0;
	p->prev = 0;
	p->cancel = NULL;
	/* The byte after the line ends a number at its end. */
	if (yajl_parse(p->h, (const unsigned char *)j->line, j->len + 1) !=
	    yajl_status_ok)
		return parse_error(j);
	if (p->depth || !p->values)
		return snapjs_fail(j, (long)j->len + 1,
				   "the line ends inside a JSON value: "
				   "truncated");
	return 0;
}

static bool key_is(const struct snapjs_node *n, const char *key, size_t len,
		   uint32_t khash)
{
	return n->khash == khash && n->klen == len &&
	       memcmp(n->key, key, len) == 0;
}

const struct snapjs_node *snapjs_find(struct snapjs *j,
				      const struct snapjs_node *o,
				      const char *key, size_t len)
{
	const struct snapjs_node *n, *found = NULL;
	uint32_t khash = key_hash(key, len);
	int start;

	if (!(o->kbits & kbit(khash)))
		return NULL;
	if (o->kshared) {	/* the last of equal keys counts */
		for (n = snapjs_first(j, o); n; n = snapjs_next(j, n))
			if (key_is(n, key, len, khash))
				found = n;
	} else {
		/* From where the last lookup in o ended, round to it. */
		start = j->hint_obj == o && j->hint_next ? j->hint_next
							 : o->first;
		for (n = &j->nodes[start]; n && !found;) {
			if (key_is(n, key, len, khash))
				found = n;
			n = n->next ? &j->nodes[n->next]
				    : snapjs_first(j, o);
			if (n == &j->nodes[start])
				break;
		}
		if (found) {
			j->hint_obj = o;
			j->hint_next = found->next;
		}
	}
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

	if (n->type != SNAPJS_STR)
		return snapjs_fail(j, snapjs_col(j, n),
				   "\"%s\" must be a hex string \"0x...\"", key);
	if (n->len < 3 || n->len > 18 || n->s[0] != '0' || n->s[1] != 'x')
		goto bad;
	for (size_t i = 2; i < n->len; i++) {
		char c = n->s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			goto bad;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
bad:
	return snapjs_fail(j, snapjs_col(j, n),
			   "\"%s\" \"%.40s\" is not a hex address \"0x...\" "
			   "of up to 16 digits",
			   key, n->s);
}

static int read_enum(struct snapjs *j, const struct snapjs_node *n,
		     const char *key, const char *const *names, int *out)
{
	if (snapjs_check(j, n, key, SNAPJS_STR, 0))
		return -MD_E_INPUT;
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], n->s) == 0) {
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
		if (l->need && !snapjs_find(j, e, l->need, strlen(l->need)))
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

int snapjs_fields(struct snapread *r, const struct snapjs_node *o,
		  const struct snapjs_field *f, void *base)
{
	for (; f->key; f++)
		if (read_field(r, f,
			       o ? snapjs_find(&r->j, o, f->key, f->klen)
				 : NULL,
			       base))
			return -MD_E_INPUT;
	return 0;
}
