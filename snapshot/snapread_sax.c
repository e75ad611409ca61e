/*
 * snapread_sax.c - the snapshot reader's streaming parse: yajl calls back
 * for each token of a line and the values of the keys the format knows
 * land in the reader's records (snapjson.h); everything else is skipped.
 * No tree is built and nothing is allocated per value: json-c's tree cost
 * ~20 us per rank line, a million ranks took minutes.
 *
 * Syntax errors are worded and located by json-c, which the reader used
 * before: the line is parsed again with json-c's tokener only when yajl
 * rejected it, so the messages and columns stay what they were.
 */
#include "snapjson.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yajl/yajl_parse.h>

#include "md.h"

/* Nesting in the format is 5 deep (rank, threads, thread, frames,
 * frame); json-c's limit, which the old reader used, is kept. */
#define RD_DEPTH 16
#define RD_BUCKETS 64

/* Where the parse is: an object of the format, one of its arrays, or a
 * value to skip (unknown key, wrong type). */
enum ctx {
	C_SKIP, C_TOP, C_SITE, C_QUEUES, C_OP, C_ACTUAL, C_THREAD, C_FRAME,
	C_NOBJ, /* the object contexts end here */
	C_MEMBERS = C_NOBJ, C_MEMBER, C_GROUP, C_EXTRA, C_OPS, C_THREADS,
	C_FRAMES,
};

/* What a string value of a key becomes. */
enum { S_TYPE, S_INTERN, S_ADDR, S_RAW };

struct key {
	const char *name;
	unsigned char str, obj, arr; /* S_*, C_* of an object/array value */
};

static const struct key top_keys[RDL_COUNT] = {
	{.name = "format", .str = S_INTERN},
	{.name = "version"},
	{.name = "time"},
	{.name = "tool", .str = S_INTERN},
	{.name = "host", .str = S_INTERN},
	{.name = "starter_pid"},
	{.name = "starter", .str = S_INTERN},
	{.name = "mpi", .str = S_INTERN},
	{.name = "dll", .str = S_INTERN},
	{.name = "types", .str = S_INTERN},
	{.name = "looks"},
	{.name = "interval_ms"},
	{.name = "nranks"},
	{.name = "ncomms"},
	{.name = "comm"},
	{.name = "id"},
	{.name = "name", .str = S_INTERN},
	{.name = "size"},
	{.name = "group", .str = S_RAW, .arr = C_GROUP},
	{.name = "rank"},
	{.name = "pid"},
	{.name = "exe", .str = S_INTERN},
	{.name = "state", .str = S_INTERN},
	{.name = "reason", .str = S_INTERN},
	{.name = "progress", .str = S_INTERN},
	{.name = "call", .str = S_INTERN},
	{.name = "site", .obj = C_SITE},
	{.name = "members", .arr = C_MEMBERS},
	{.name = "queues", .str = S_INTERN, .obj = C_QUEUES},
	{.name = "unexpected"},
	{.name = "ops", .arr = C_OPS},
	{.name = "threads", .arr = C_THREADS},
	{.name = "note", .str = S_INTERN},
	{.name = "track"},	/* only noted: snapread_track.c reads it */
	{.name = "collected_on", .str = S_INTERN},
};
static const struct key site_keys[RDS_COUNT] = {
	{.name = "func", .str = S_INTERN},
	{.name = "file", .str = S_INTERN},
	{.name = "line"},
};
static const struct key queues_keys[RDQ_COUNT] = {
	{.name = "none", .str = S_INTERN},
};
static const struct key op_keys[RDO_COUNT] = {
	{.name = "kind", .str = S_INTERN},
	{.name = "status", .str = S_INTERN},
	{.name = "comm"},
	{.name = "peer"},
	{.name = "peer_global"},
	{.name = "tag"},
	{.name = "any_tag"},
	{.name = "length"},
	{.name = "buffer", .str = S_ADDR},
	{.name = "system_buffer"},
	{.name = "actual", .obj = C_ACTUAL},
	{.name = "request", .str = S_ADDR},
	{.name = "corrected"},
	{.name = "extra", .arr = C_EXTRA},
	{.name = "source", .str = S_INTERN},
	{.name = "type", .str = S_INTERN},
	{.name = "datatype", .str = S_INTERN},
	{.name = "count"},
	{.name = "seq"},
};
static const struct key actual_keys[RDA_COUNT] = {
	{.name = "peer"},
	{.name = "peer_global"},
	{.name = "tag"},
	{.name = "length"},
};
static const struct key thread_keys[RDT_COUNT] = {
	{.name = "tid"},
	{.name = "call", .str = S_INTERN},
	{.name = "mpi_frame"},
	{.name = "user_frame"},
	{.name = "progress_thread"},
	{.name = "frames", .arr = C_FRAMES},
};
static const struct key frame_keys[RDF_COUNT] = {
	{.name = "pc", .str = S_ADDR},
	{.name = "func", .str = S_INTERN},
	{.name = "object", .str = S_INTERN},
	{.name = "file", .str = S_INTERN},
	{.name = "line"},
};

/* A key table with a small open-addressing index (entry + 1, 0 empty).
 * The format's keys are at most 16 bytes: a key compares as two words. */
#define RD_KEYMAX 16

struct table {
	const struct key *keys;
	uint64_t word[RDL_COUNT][2];
	unsigned char len[RDL_COUNT];
	unsigned char slot[RD_BUCKETS];
};

/* In registers: bytes stored one by one and loaded as a word stall
 * the store forwarding (it showed as a fifth of the read). */
static void key_words(const unsigned char *k, size_t len, uint64_t w[2])
{
	w[0] = w[1] = 0;
	for (size_t i = 0; i < len; i++)
		w[i / 8] |= (uint64_t)k[i] << (8 * (i % 8));
}

static unsigned hash_key(const uint64_t w[2], size_t len)
{
	return (unsigned)(((w[0] ^ w[1] ^ len) * 0x9e3779b97f4a7c15ULL) >>
			  58) % RD_BUCKETS;
}

static void table_init(struct table *t, const struct key *keys, int n)
{
	t->keys = keys;
	for (int i = 0; i < n; i++) {
		const unsigned char *k = (const unsigned char *)keys[i].name;
		unsigned h;

		t->len[i] = (unsigned char)strlen(keys[i].name);
		key_words(k, t->len[i], t->word[i]);
		h = hash_key(t->word[i], t->len[i]);
		while (t->slot[h])
			h = (h + 1) % RD_BUCKETS;
		t->slot[h] = (unsigned char)(i + 1);
	}
}

static int table_find(const struct table *t, const unsigned char *k,
		      size_t len)
{
	uint64_t w[2];
	unsigned h;

	if (!t->keys || len == 0 || len > RD_KEYMAX)
		return -1;
	key_words(k, len, w);
	for (h = hash_key(w, len); t->slot[h]; h = (h + 1) % RD_BUCKETS) {
		int i = t->slot[h] - 1;

		if (t->len[i] == len && t->word[i][0] == w[0] &&
		    t->word[i][1] == w[1])
			return i;
	}
	return -1;
}

/* The strings a key had last, interned: most ranks repeat their
 * neighbour's call, file and function, and then cost a memcmp.  Two,
 * because a stack's frames alternate (an MPI function in libmpi, the
 * user's in the program). */
struct icache {
	const char *s[2];
	size_t len[2];
	unsigned char next;	/* the entry to replace */
};

struct snaprd_sax {
	yajl_handle utf8, ascii; /* validating, and for pure ASCII lines */
	yajl_handle cur;
	struct table tables[C_NOBJ];
	unsigned char stack[RD_DEPTH + 1];
	int depth;
	int key;	/* index of the current key, -1 if unknown */
	/* Its slot in the current object (valid until the object ends:
	 * a record array grows only between its own records). */
	struct snaprd_val *slot;
	struct icache *cache;
	struct icache caches[C_NOBJ][RDL_COUNT];
	int values;	/* top-level values in the line */
	bool object;	/* the top-level value was an object */
};

static void *vec_push(struct snaprd_vec *v, size_t size)
{
	char *e;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->a = xrealloc(v->a, (size_t)v->cap * size);
	}
	e = (char *)v->a + (size_t)v->n++ * size;
	memset(e, 0, size);
	return e;
}

static void *vec_last(const struct snaprd_vec *v, size_t size)
{
	return (char *)v->a + (size_t)(v->n - 1) * size;
}

#define LAST(r, vec, type) ((type *)vec_last(&(r)->vec, sizeof(type)))

/* The values of the object being parsed (an object context). */
static struct snaprd_val *obj_vals(struct snaprd *r, int ctx)
{
	switch (ctx) {
	case C_TOP:
		return r->top;
	case C_SITE:
		return r->site;
	case C_QUEUES:
		return r->queues;
	case C_OP:
		return LAST(r, ops, struct snaprd_op)->v;
	case C_ACTUAL:
		return LAST(r, ops, struct snaprd_op)->actual;
	case C_THREAD:
		return LAST(r, threads, struct snaprd_thread)->v;
	default:
		return LAST(r, frames, struct snaprd_frame)->v;
	}
}

static int top_ctx(const struct snaprd *r)
{
	return r->sax->depth ? r->sax->stack[r->sax->depth - 1] : -1;
}

/* The key's slot for the value that follows it, NULL if not captured. */
static struct snaprd_val *key_slot(struct snaprd *r, const struct key **k)
{
	int ctx = top_ctx(r);

	/* Not in a skipped value: the caller checked. */
	if (!r->sax->slot)
		return NULL;
	*k = &r->sax->tables[ctx].keys[r->sax->key];
	return r->sax->slot;
}

/* A NUL-terminated copy of a string value in buf (grown as needed):
 * json-c handed out C strings, so a \u0000 ends them here too. */
static char *copy_str(char **buf, size_t *cap, const unsigned char *s,
		      size_t len)
{
	if (len + 1 > *cap) {
		*cap = len + 1 > 2 * *cap ? len + 1 : 2 * *cap;
		*buf = xrealloc(*buf, *cap);
	}
	memcpy(*buf, s, len);
	(*buf)[len] = '\0';
	return *buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The old reader's check: "0x", something, no '-' or ' ', then strtoull
 * (which also takes a sign, blanks or a second "0x": so does this). */
static void set_addr(struct snaprd *r, struct snaprd_val *v, const char *str)
{
	char *end;

	v->addr = SNAPRD_ADDR_OK;
	if (strncmp(str, "0x", 2) || !str[2] || strchr(str, '-') ||
	    strchr(str, ' ')) {
		v->addr = SNAPRD_ADDR_FORM;
		return;
	}
	errno = 0;
	v->u = strtoull(str + 2, &end, 16);
	if (*end || errno) {
		v->addr = SNAPRD_ADDR_RANGE;
		v->s = snaprd_intern(r, str);
	}
}

/* The common address, "0x" and 1 to 16 hex digits, straight from the
 * parser's bytes. */
static bool addr_fast(struct snaprd_val *v, const unsigned char *s, size_t len)
{
	uint64_t x = 0;

	if (len < 3 || len > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < len; i++) {
		int d = hexval((char)s[i]);

		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	v->addr = SNAPRD_ADDR_OK;
	v->u = x;
	return true;
}

static const char *intern(struct snaprd *r, struct icache *c,
			  const unsigned char *s, size_t len)
{
	const char *p;

	for (int i = 0; i < 2; i++)
		if (c->s[i] && c->len[i] == len &&
		    memcmp(c->s[i], s, len) == 0)
			return c->s[i];
	p = snaprd_intern(r, copy_str(&r->tmp, &r->tmpcap, s, len));
	/* Cut short at a \u0000, it would not compare. */
	if (!memchr(s, '\0', len)) {
		c->s[c->next] = p;
		c->len[c->next] = len;
		c->next ^= 1;
	}
	return p;
}

static void set_string(struct snaprd *r, struct snaprd_val *v, int how,
		       const unsigned char *s, size_t len)
{
	v->type = SNAPRD_STRING;
	v->s = NULL;
	if (how == S_INTERN)
		v->s = intern(r, r->sax->cache, s, len);
	else if (how == S_ADDR && !addr_fast(v, s, len))
		set_addr(r, v, copy_str(&r->tmp, &r->tmpcap, s, len));
	else if (how == S_RAW)
		v->s = copy_str(&r->raw, &r->rawcap, s, len);
}

/* A JSON number as json-c kept it: a fraction or exponent makes a
 * double, an integer beyond 64 bits is clamped. */
static void set_number(struct snaprd_val *v, const char *s, size_t len)
{
	bool neg = len && s[0] == '-';
	uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX;

	for (size_t i = neg; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			v->type = SNAPRD_DOUBLE;
			return;
		}
		if (u > (lim - (uint64_t)(s[i] - '0')) / 10)
			u = lim;
		else
			u = u * 10 + (uint64_t)(s[i] - '0');
	}
	v->type = SNAPRD_INT;
	v->neg = neg && u;
	if (v->neg)
		v->i = u > INT64_MAX ? INT64_MIN : -(int64_t)u;
	else
		v->u = u;
}

/* One more entry in the array slot's count (saturated). */
static void count(struct snaprd_val *v)
{
	if (v->n < INT_MAX)
		v->n++;
}

/* An element of one of the format's arrays; val is the element when it
 * is a scalar (NULL for an object or array, which cb_start handles). */
static void element(struct snaprd *r, int ctx, const struct snaprd_val *val,
		    const unsigned char *str, size_t len)
{
	struct snaprd_member *m;
	struct snaprd_op *op;

	switch (ctx) {
	case C_MEMBERS:
		count(&r->top[RDL_MEMBERS]);
		vec_push(&r->members, sizeof(struct snaprd_member));
		break;
	case C_MEMBER:
		m = LAST(r, members, struct snaprd_member);
		m->n += m->n < 3;
		if (!val || val->type != SNAPRD_INT)
			m->pair = false;
		else if (m->n == 1)
			m->c = snaprd_int64(val);
		else
			m->l = snaprd_int64(val);
		break;
	case C_GROUP:
		count(&r->top[RDL_GROUP]);
		*(int *)vec_push(&r->group, sizeof(int)) =
			val && val->type == SNAPRD_INT && !val->neg &&
					val->u <= INT_MAX
				? (int)val->u
				: -1;
		break;
	case C_EXTRA:
		op = LAST(r, ops, struct snaprd_op);
		if (op->v[RDO_EXTRA].n < 5) {
			/* An object or array entry: anything but a string. */
			op->extra[op->v[RDO_EXTRA].n] =
				val ? *val
				    : (struct snaprd_val){.type = SNAPRD_OBJECT};
			r->sax->cache = &r->sax->caches[C_OP][RDO_EXTRA];
			if (str)
				set_string(r, &op->extra[op->v[RDO_EXTRA].n],
					   S_INTERN, str, len);
		}
		count(&op->v[RDO_EXTRA]);
		break;
	case C_OPS:
		count(&r->top[RDL_OPS]);
		vec_push(&r->ops, sizeof(struct snaprd_op));
		break;
	case C_THREADS:
		count(&r->top[RDL_THREADS]);
		vec_push(&r->threads, sizeof(struct snaprd_thread));
		break;
	case C_FRAMES:
		count(&LAST(r, threads, struct snaprd_thread)->v[RDT_FRAMES]);
		vec_push(&r->frames, sizeof(struct snaprd_frame));
		break;
	}
}

/* A second value on the line: json-c words it. */
static int top_value(struct snaprd *r, bool object)
{
	if (r->sax->values++) {
		return 0;
	}
	r->sax->object = object;
	return 1;
}

static int scalar(struct snaprd *r, const struct snaprd_val *val,
		  const unsigned char *str, size_t len)
{
	const struct key *k;
	struct snaprd_val *v;
	int ctx = top_ctx(r);

	if (ctx < 0)
		return top_value(r, false);
	if (ctx == C_SKIP)
		return 1;
	if (ctx >= C_NOBJ) {
		element(r, ctx, val, str, len);
		return 1;
	}
	v = key_slot(r, &k);
	if (!v)
		return 1;
	*v = *val;
	if (str)
		set_string(r, v, k->str, str, len);
	return 1;
}

static int cb_null(void *p)
{
	struct snaprd_val v = {.type = SNAPRD_NULL};

	return scalar(p, &v, NULL, 0);
}

static int cb_boolean(void *p, int b)
{
	struct snaprd_val v = {.type = SNAPRD_BOOL, .b = b};

	return scalar(p, &v, NULL, 0);
}

static int cb_number(void *p, const char *s, size_t len)
{
	struct snaprd_val v = {0};

	set_number(&v, s, len);
	return scalar(p, &v, NULL, 0);
}

static int cb_string(void *p, const unsigned char *s, size_t len)
{
	struct snaprd_val v = {.type = SNAPRD_STRING};

	return scalar(p, &v, s, len);
}

static int push(struct snaprd *r, int ctx)
{
	if (r->sax->depth >= RD_DEPTH) {
		return 0;	/* json-c words it: "nesting too deep" */
	}
	r->sax->stack[r->sax->depth++] = (unsigned char)ctx;
	return 1;
}

/* The context of an object (map) or array value in the current place,
 * after noting it in its parent. */
static int child_ctx(struct snaprd *r, bool map)
{
	int ctx = top_ctx(r), sub;
	const struct key *k;
	struct snaprd_val *v;

	if (ctx >= C_NOBJ) {
		element(r, ctx, NULL, NULL, 0);
		if (map && ctx == C_OPS)
			return LAST(r, ops, struct snaprd_op)->object = true,
			       C_OP;
		if (map && ctx == C_THREADS) {
			struct snaprd_thread *t =
				LAST(r, threads, struct snaprd_thread);

			t->object = true;
			t->frame0 = r->frames.n;
			return C_THREAD;
		}
		if (map && ctx == C_FRAMES)
			return LAST(r, frames, struct snaprd_frame)->object =
				       true,
			       C_FRAME;
		if (!map && ctx == C_MEMBERS)
			return LAST(r, members, struct snaprd_member)->pair =
				       true,
			       C_MEMBER;
		return C_SKIP;
	}
	v = key_slot(r, &k);
	if (!v)
		return C_SKIP;
	memset(v, 0, sizeof(*v));
	v->type = map ? SNAPRD_OBJECT : SNAPRD_ARRAY;
	sub = map ? k->obj : k->arr;
	if (sub == C_SITE)
		memset(r->site, 0, sizeof(r->site));
	else if (sub == C_QUEUES)
		memset(r->queues, 0, sizeof(r->queues));
	else if (sub == C_ACTUAL)
		memset(LAST(r, ops, struct snaprd_op)->actual, 0,
		       sizeof(((struct snaprd_op *)0)->actual));
	else if (sub == C_MEMBERS)
		r->members.n = 0;
	else if (sub == C_GROUP)
		r->group.n = 0;
	else if (sub == C_OPS)
		r->ops.n = 0;
	else if (sub == C_THREADS)
		r->threads.n = r->frames.n = 0;
	else if (sub == C_FRAMES)
		r->frames.n = LAST(r, threads, struct snaprd_thread)->frame0;
	return sub ? sub : C_SKIP;
}

static int start(struct snaprd *r, bool map)
{
	int ctx = top_ctx(r);

	if (ctx < 0) {
		if (!top_value(r, map))
			return 0;
		return push(r, map ? C_TOP : C_SKIP);
	}
	return push(r, ctx == C_SKIP ? C_SKIP : child_ctx(r, map));
}

static int cb_start_map(void *p)
{
	return start(p, true);
}

static int cb_start_array(void *p)
{
	return start(p, false);
}

static int cb_end(void *p)
{
	struct snaprd *r = p;
	struct snaprd_member *m;

	if (top_ctx(r) == C_MEMBER) {
		m = LAST(r, members, struct snaprd_member);
		m->pair = m->pair && m->n == 2;
	}
	r->sax->depth--;
	return 1;
}

static int cb_map_key(void *p, const unsigned char *k, size_t len)
{
	struct snaprd *r = p;
	int ctx = top_ctx(r);

	r->sax->key = ctx > C_SKIP && ctx < C_NOBJ
			      ? table_find(&r->sax->tables[ctx], k, len)
			      : -1;
	r->sax->slot = NULL;
	if (r->sax->key >= 0) {
		r->sax->slot = &obj_vals(r, ctx)[r->sax->key];
		r->sax->cache = &r->sax->caches[ctx][r->sax->key];
	}
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

static yajl_handle handle_new(struct snaprd *r, bool validate)
{
	yajl_handle h = yajl_alloc(&callbacks, NULL, r);

	if (!h) {
		md_error("yajl_alloc: out of memory");
		exit(MD_EXIT_ERROR);
	}
	/* One value per line, the lines fed one after the other. */
	yajl_config(h, yajl_allow_multiple_values, 1);
	if (!validate)
		yajl_config(h, yajl_dont_validate_strings, 1);
	return h;
}

void snaprd_sax_new(struct snaprd *r)
{
	struct snaprd_sax *x = xcalloc(1, sizeof(*x));

	r->sax = x;
	table_init(&x->tables[C_TOP], top_keys, RDL_COUNT);
	table_init(&x->tables[C_SITE], site_keys, RDS_COUNT);
	table_init(&x->tables[C_QUEUES], queues_keys, RDQ_COUNT);
	table_init(&x->tables[C_OP], op_keys, RDO_COUNT);
	table_init(&x->tables[C_ACTUAL], actual_keys, RDA_COUNT);
	table_init(&x->tables[C_THREAD], thread_keys, RDT_COUNT);
	table_init(&x->tables[C_FRAME], frame_keys, RDF_COUNT);
	x->utf8 = handle_new(r, true);
	x->ascii = handle_new(r, false);
}

void snaprd_sax_free(struct snaprd *r)
{
	if (!r->sax)
		return;
	yajl_free(r->sax->utf8);
	yajl_free(r->sax->ascii);
	free(r->sax);
	r->sax = NULL;
	free(r->ops.a);
	free(r->threads.a);
	free(r->frames.a);
	free(r->members.a);
	free(r->group.a);
	free(r->raw);
	free(r->tmp);
}

/* Pure ASCII lines (the writer's usual output) go to the handle that
 * skips UTF-8 validation: ~20% of yajl's time. */
static bool ascii(const char *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= (unsigned char)p[i];
	return !(acc & 0x8080808080808080ULL);
}

/* yajl rejected the line: json-c's words and column, as the reader gave
 * them before; yajl's only where json-c takes the line. */
static int diagnose(struct snaprd *r, yajl_handle h)
{
	struct json_tokener *tok = json_tokener_new_ex(RD_DEPTH);
	char *copy = xstrndup(r->line, r->len);
	enum json_tokener_error err;
	json_object *o;
	unsigned char *msg;
	size_t end;
	int ret;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	/* The NUL goes in too: it ends a bare top-level number. */
	o = json_tokener_parse_ex(tok, copy, (int)r->len + 1);
	err = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_object_put(o);
	json_tokener_free(tok);
	free(copy);
	if (err == json_tokener_continue || err == json_tokener_error_parse_eof)
		return snaprd_fail_at(r, (long)r->len + 1,
				      "the line ends inside "
				      "a JSON value: truncated");
	if (err != json_tokener_success)
		return snaprd_fail_at(r, (long)end + 1, "invalid JSON: %s",
				      json_tokener_error_desc(err));
	for (end = end > r->len ? r->len : end; end < r->len; end++)
		if (!strchr(" \t\r", r->line[end]))
			return snaprd_fail_at(r, (long)end + 1,
					      "text after the JSON object");
	msg = yajl_get_error(h, 0, NULL, 0);
	end = yajl_get_bytes_consumed(h);
	msg[strcspn((char *)msg, "\n")] = '\0';
	ret = snaprd_fail_at(r, (long)(end > r->len ? r->len : end) + 1,
			     "invalid JSON: %s", msg);
	yajl_free_error(h, msg);
	return ret;
}

static void line_reset(struct snaprd *r)
{
	memset(r->top, 0, sizeof(r->top));
	memset(r->site, 0, sizeof(r->site));
	memset(r->queues, 0, sizeof(r->queues));
	r->ops.n = r->threads.n = r->frames.n = 0;
	r->members.n = r->group.n = 0;
	r->sax->depth = r->sax->values = 0;
	r->sax->key = -1;
	r->sax->slot = NULL;
	r->sax->object = false;
}

/* r->line[r->len] is the line's '\n' (snap_read puts one there for a
 * last line without it): it ends a bare top-level number for yajl. */
int snaprd_sax_line(struct snaprd *r, bool *object)
{
	struct snaprd_sax *x = r->sax;
	yajl_status st;

	line_reset(r);
	x->cur = ascii(r->line, r->len) ? x->ascii : x->utf8;
	st = yajl_parse(x->cur, (const unsigned char *)r->line, r->len + 1);
	if (st != yajl_status_ok)
		return diagnose(r, x->cur);
	if (x->depth || !x->values)
		return snaprd_fail_at(r, (long)r->len + 1,
				      "the line ends inside "
				      "a JSON value: truncated");
	*object = x->object;
	return 0;
}
