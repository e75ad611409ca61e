/* jtree.c - see jtree.h. */
#include "support/jtree.h"

#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "md.h"

yajl_val jt_parse(const char *text)
{
	char err[256];

	return text ? yajl_tree_parse(text, err, sizeof(err)) : NULL;
}

void jt_free(yajl_val v)
{
	yajl_tree_free(v);
}

yajl_val jt_get(yajl_val o, const char *key)
{
	const char *path[] = { key, NULL };

	return YAJL_IS_OBJECT(o) ? yajl_tree_get(o, path, yajl_t_any) : NULL;
}

size_t jt_len(yajl_val a)
{
	return YAJL_IS_ARRAY(a) ? a->u.array.len : 0;
}

yajl_val jt_at(yajl_val a, size_t i)
{
	return i < jt_len(a) ? a->u.array.values[i] : NULL;
}

bool jt_is_array(yajl_val v)
{
	return YAJL_IS_ARRAY(v);
}

int jt_int(yajl_val v)
{
	return YAJL_IS_INTEGER(v) ? (int)YAJL_GET_INTEGER(v) : 0;
}

const char *jt_str(yajl_val v)
{
	return YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

bool jt_bool(yajl_val v)
{
	return YAJL_IS_TRUE(v);
}

static void gen(yajl_gen g, yajl_val v)
{
	if (YAJL_IS_STRING(v)) {
		yajl_gen_string(g, (const unsigned char *)v->u.string,
				strlen(v->u.string));
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			const char *k = v->u.object.keys[i];

			yajl_gen_string(g, (const unsigned char *)k, strlen(k));
			gen(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			gen(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(g);
	}
}

char *jt_text(yajl_val v)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	char *out;

	gen(g, v);
	yajl_gen_get_buf(g, &buf, &len);
	out = xstrndup((const char *)buf, len);
	yajl_gen_free(g);
	return out;
}
