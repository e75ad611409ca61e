/*
 * snapwrite.c - write a snapshot as JSON Lines (doc/snapshot-format.md).
 *
 * yajl's generator writes each line (the reader parses with yajl too:
 * one library, one idea of JSON), so no string is escaped by hand and no
 * tree is built.  The keys are the tables' of snapformat.c, in their
 * order; those at their default are left out to keep a million rank
 * lines short, and snap_read() puts the defaults back.
 */
#include "snap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "md.h"
#include "snapformat.h"

typedef yajl_gen jgen;

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF), 0 if none. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], n, min;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)
		       ? 0 : n;
}

/*
 * The snapshot is UTF-8, and its reader checks: a string that is not
 * (a path of bytes in another encoding, read from a rank) is written
 * with U+FFFD for each byte that starts no well-formed sequence, so that
 * the snapshot, an agent's included, stays readable.
 */
static void put_str(jgen g, const char *v)
{
	static const unsigned char replacement[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)v, *piece;
	size_t len = strlen(v), o = 0, k, n;
	unsigned char *fixed = NULL;

	for (size_t i = 0; i < len; i += k ? k : 1) {
		k = utf8_len(u + i);
		piece = k ? u + i : replacement;
		n = k ? k : 3;
		if (!k && !fixed) {
			/* The first stray byte: copy what came before it. */
			fixed = xmalloc(3 * len + 1);
			memcpy(fixed, u, o = i);
		}
		if (fixed) {
			memcpy(fixed + o, piece, n);
			o += n;
		}
	}
	yajl_gen_string(g, fixed ? fixed : u, fixed ? o : len);
	free(fixed);
}

static void add_str(jgen g, const char *key, const char *v)
{
	if (!v)
		return;
	put_str(g, key);
	put_str(g, v);
}

static void add_int(jgen g, const char *key, int64_t v)
{
	put_str(g, key);
	yajl_gen_integer(g, v);
}

static void add_u64(jgen g, const char *key, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);

	put_str(g, key);
	yajl_gen_number(g, buf, (size_t)n);
}

static void add_addr(jgen g, const char *key, uint64_t v)
{
	char buf[24];

	if (!v)
		return;
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	add_str(g, key, buf);
}

static void add_true(jgen g, const char *key, bool v)
{
	if (!v)
		return;
	put_str(g, key);
	yajl_gen_bool(g, 1);
}

/* Open an object or array value under key. */
static void open_map(jgen g, const char *key)
{
	put_str(g, key);
	yajl_gen_map_open(g);
}

static void open_array(jgen g, const char *key)
{
	put_str(g, key);
	yajl_gen_array_open(g);
}

/* Close the line's object, print it and start the next line. */
static void put_line(jgen g, FILE *f)
{
	const unsigned char *buf;
	size_t len;

	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, f);
	fputc('\n', f);
	yajl_gen_clear(g);
	yajl_gen_reset(g, NULL);
}

/* Whether the field at base is at its default, which the reader gives
 * back for an absent key. */
static bool at_default(const struct sj_field *f, const void *base)
{
	const char *p = (const char *)base + f->off;

	switch (f->kind) {
	case SJ_INT:
	case SJ_ENUM:
		return *(const int *)p == f->def;
	case SJ_I64:
	case SJ_U64:
	case SJ_ADDR:
		return *(const uint64_t *)p == 0;
	case SJ_STR:
		return !*(const char *const *)p;
	case SJ_BOOL:
		return !*(const bool *)p;
	case SJ_SUB:
		if (f->count)
			return !*(const bool *)((const char *)base + f->count);
		for (const struct sj_field *k = f->sub; k->key; k++)
			if (!at_default(k, base))
				return false;
		return true;
	case SJ_LIST:
		return !*(const int *)((const char *)base + f->count);
	case SJ_FN:
		break;
	}
	return false;
}

static void write_fields(jgen g, const struct sj_field *f, const void *base);

/* An array of objects, one per entry. */
static void write_list(jgen g, const struct sj_field *f, const void *base)
{
	const char *e = *(const char *const *)((const char *)base + f->off);
	int n = *(const int *)((const char *)base + f->count);

	open_array(g, f->key);
	for (int i = 0; i < n; i++, e += f->size) {
		yajl_gen_map_open(g);
		write_fields(g, f->sub, e);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

/* The keys of a table (snapformat.c) not at their default. */
static void write_fields(jgen g, const struct sj_field *f, const void *base)
{
	for (; f->key; f++) {
		const char *p = (const char *)base + f->off;

		if (!f->always && at_default(f, base))
			continue;
		switch (f->kind) {
		case SJ_INT:
			add_int(g, f->key, *(const int *)p);
			break;
		case SJ_I64:
			add_int(g, f->key, *(const int64_t *)p);
			break;
		case SJ_U64:
			add_u64(g, f->key, *(const uint64_t *)p);
			break;
		case SJ_STR:
			add_str(g, f->key, *(const char *const *)p);
			break;
		case SJ_BOOL:
			add_true(g, f->key, *(const bool *)p);
			break;
		case SJ_ADDR:
			add_addr(g, f->key, *(const uint64_t *)p);
			break;
		case SJ_ENUM:
			add_str(g, f->key, snap_name_of(f->sub, *(const int *)p));
			break;
		case SJ_SUB:
			open_map(g, f->key);
			write_fields(g, f->sub, base);
			yajl_gen_map_close(g);
			break;
		case SJ_LIST:
			write_list(g, f, base);
			break;
		case SJ_FN:
			f->put(g, f, base);
			break;
		}
	}
}

/* Each [comm, local rank] of the rank. */
void sw_members(jgen g, const struct sj_field *f, const void *base)
{
	const struct snap_rank *r = base;

	if (r->nmembers <= 0)
		return;
	open_array(g, f->key);
	for (int i = 0; i < r->nmembers; i++) {
		yajl_gen_array_open(g);
		yajl_gen_integer(g, r->members[i].comm);
		yajl_gen_integer(g, r->members[i].local_rank);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
}

/* Absent: "ok". */
void sw_queues(jgen g, const struct sj_field *f, const void *base)
{
	const struct snap_rank *r = base;

	if (r->queues != SNAP_QUEUES_NONE)
		return;
	open_map(g, f->key);
	add_str(g, "none", r->queues_reason ? r->queues_reason : "");
	yajl_gen_map_close(g);
}

void sw_extra(jgen g, const struct sj_field *f, const void *base)
{
	const struct snap_op *op = base;

	if (op->nextra <= 0)
		return;
	open_array(g, f->key);
	for (int i = 0; i < op->nextra && i < 5; i++)
		put_str(g, op->extra[i] ? op->extra[i] : "");
	yajl_gen_array_close(g);
}

/* SNAP_TRACK_NONE is absent; the special values go by name. */
void sw_track_num(jgen g, const struct sj_field *f, const void *base)
{
	int v = *(const int *)((const char *)base + f->off);

	if (v >= SNAP_TRACK_ANY && v < SNAP_TRACK_ANY + 3)
		add_str(g, f->key, snap_track_specials[v - SNAP_TRACK_ANY]);
	else if (v != SNAP_TRACK_NONE)
		add_int(g, f->key, v);
}

static void write_header(jgen g, const struct snap *s, FILE *f)
{
	yajl_gen_map_open(g);
	add_str(g, "format", SNAP_FORMAT);
	add_int(g, "version", SNAP_VERSION);
	write_fields(g, snap_header_fields, s);
	add_int(g, "nranks", s->job_nranks ? s->job_nranks : s->nranks);
	if (s->job_nranks)
		add_int(g, "held", s->nranks);
	add_int(g, "ncomms", s->ncomms);
	put_line(g, f);
}

/* A text built with stdio (a group or a topology can be long). */
static FILE *text_open(char **text, size_t *len)
{
	FILE *m = open_memstream(text, len);

	if (!m) {
		md_error("open_memstream: out of memory");
		abort();
	}
	return m;
}

/* The topology's neighbours as "1,3;0,2;;1": local ranks, one list per
 * local rank in order, ';' between the lists. */
void sw_neighbors(jgen g, const struct sj_field *f, const void *base)
{
	const struct snap_comm *c = base;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!c->nbr_first)
		return;
	m = text_open(&text, &len);
	for (int i = 0; i < c->size; i++) {
		if (i)
			fputc(';', m);
		for (int k = c->nbr_first[i]; k < c->nbr_first[i + 1]; k++)
			fprintf(m, "%s%d", k > c->nbr_first[i] ? "," : "",
				c->nbr[k]);
	}
	fclose(m);
	add_str(g, f->key, text);
	free(text);
}

/* A group (of the size at f->count) as rank ranges,
 * "0-1023,2048,2050-2051", never longer than the array of ints. */
void sw_group(jgen g, const struct sj_field *f, const void *base)
{
	const int *group = *(int *const *)((const char *)base + f->off);
	int n = *(const int *)((const char *)base + f->count);
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!group)
		return;
	m = text_open(&text, &len);
	for (int i = 0, j; i < n; i = j + 1) {
		for (j = i; j + 1 < n && group[j] < INT_MAX &&
			    group[j + 1] == group[j] + 1;
		     j++)
			;
		fprintf(m, j > i ? "%s%d-%d" : "%s%d", i ? "," : "", group[i],
			group[j]);
	}
	fclose(m);
	add_str(g, f->key, text);
	free(text);
}

static void write_comm(jgen g, const struct snap_comm *c, int idx, FILE *f)
{
	yajl_gen_map_open(g);
	add_int(g, "comm", idx);
	write_fields(g, snap_comm_fields, c);
	put_line(g, f);
}

/* The index is the rank: the file says so even if r->rank is off. */
static void write_rank(jgen g, const struct snap_rank *r, int idx, FILE *f)
{
	yajl_gen_map_open(g);
	add_int(g, "rank", idx);
	write_fields(g, snap_rank_fields, r);
	put_line(g, f);
}

int snap_write(const struct snap *s, FILE *f)
{
	jgen g = yajl_gen_alloc(NULL);

	if (!g) {
		md_error("yajl_gen_alloc: out of memory");
		abort();
	}
	write_header(g, s, f);
	for (int i = 0; i < s->ncomms; i++)
		write_comm(g, &s->comms[i], i, f);
	for (int i = 0; i < s->nranks; i++)
		write_rank(g, &s->ranks[i],
			   s->job_nranks ? s->ranks[i].rank : i, f);
	for (int i = 0; i < s->nnotes; i++) {
		yajl_gen_map_open(g);
		add_str(g, "note", s->notes[i]);
		put_line(g, f);
	}
	yajl_gen_free(g);
	if (fflush(f) != 0 || ferror(f)) {
		md_error("writing the snapshot: %s; check the disk space and "
			 "the path",
			 strerror(errno ? errno : EIO));
		return -MD_E_SYS;
	}
	return 0;
}
