/*
 * jtree.h - reading a JSON report in tests: yajl's tree (the one JSON
 * library of the project) with lookups that take NULL and a wrong type
 * quietly, so a test can chain them and assert on the result.
 */
#ifndef MD_TEST_JTREE_H
#define MD_TEST_JTREE_H

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/* The tree of text, NULL if it is not JSON; jt_free it. */
yajl_val jt_parse(const char *text);
void jt_free(yajl_val v);
/* Object o's member key, NULL if none (or o is not an object). */
yajl_val jt_get(yajl_val o, const char *key);
/* An array's length (0 for anything else) and its entry i (NULL). */
size_t jt_len(yajl_val a);
yajl_val jt_at(yajl_val a, size_t i);
bool jt_is_array(yajl_val v);
/* An integer that fits an int (ranks, lines, tags; 0 if v is not one),
 * a string (NULL), a boolean (false). */
int jt_int(yajl_val v);
const char *jt_str(yajl_val v);
bool jt_bool(yajl_val v);
/* v as compact JSON text (free it); "null" for NULL. */
char *jt_text(yajl_val v);

#endif
