/* ranges.c - sets of ranks as compact text: "0-3,8,10-12". */
#include <stdlib.h>
#include <string.h>

#include "anl_int.h"
#include "md.h"

void anl_ranges_init(struct anl_ranges *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->first = rs->last = -2;
}

static void put(struct anl_ranges *rs, const char *text)
{
	size_t n = strlen(text);

	if (rs->len + n + 1 > rs->cap) {
		rs->cap = 2 * (rs->len + n + 1) + 32;
		rs->buf = xrealloc(rs->buf, rs->cap);
	}
	memcpy(rs->buf + rs->len, text, n + 1);
	rs->len += n;
}

/* Close the open run first..last into the text. */
static void flush(struct anl_ranges *rs)
{
	char tmp[32];

	if (rs->first < 0)
		return;
	if (rs->first == rs->last)
		snprintf(tmp, sizeof(tmp), "%s%d", rs->len ? "," : "",
			 rs->first);
	else
		snprintf(tmp, sizeof(tmp), "%s%d-%d", rs->len ? "," : "",
			 rs->first, rs->last);
	put(rs, tmp);
	rs->first = rs->last = -2;
}

void anl_ranges_add(struct anl_ranges *rs, int r)
{
	rs->count++;
	if (rs->first >= 0 && r == rs->last + 1) {
		rs->last = r;
		return;
	}
	flush(rs);
	rs->first = rs->last = r;
}

const char *anl_ranges_str(struct anl_ranges *rs)
{
	flush(rs);
	if (!rs->buf)
		put(rs, "");
	return rs->buf;
}

void anl_ranges_free(struct anl_ranges *rs)
{
	free(rs->buf);
	anl_ranges_init(rs);
}

char *anl_ranks_text(const int *ranks, int n)
{
	struct anl_ranges rs;
	char *text;

	anl_ranges_init(&rs);
	for (int i = 0; i < n; i++)
		anl_ranges_add(&rs, ranks[i]);
	text = xasprintf("%s %s", n == 1 ? "rank" : "ranks",
			 anl_ranges_str(&rs));
	anl_ranges_free(&rs);
	return text;
}
