/* junit.c - the verdict as JUnit XML, and GitHub Actions annotations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "anl_int.h"
#include "md.h"

static void put_xml(const char *s, FILE *out)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(*s, out); break;
		}
	}
}

static void put_body(const struct anl_result *r, FILE *out)
{
	struct anl_opts o = { .format = ANL_FORMAT_TEXT };
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	anl_report_text(r, &o, mem);
	fclose(mem);
	put_xml(text, out);
	free(text);
}

int anl_write_junit(const struct anl_result *r, const char *name,
		    const char *path)
{
	FILE *out = fopen(path, "w");
	char *summary;
	bool fail = r->verdict != ANL_NO_DEADLOCK;

	if (!out) {
		md_error("fopen(%s) for the JUnit report: %s", path,
			 strerror(errno));
		return -MD_E_SYS;
	}
	summary = anl_summary(r);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<testsuite name=\"mpi-deadlock\" tests=\"1\" "
		     "failures=\"%d\" errors=\"0\">\n  <testcase name=\"",
		fail);
	put_xml(name, out);
	fputs("\" classname=\"mpi-deadlock\"", out);
	if (fail) {
		fputs(">\n    <failure message=\"", out);
		put_xml(summary, out);
		fputs("\">", out);
		put_body(r, out);
		fputs("</failure>\n  </testcase>\n", out);
	} else {
		fputs("/>\n", out);
	}
	fputs("</testsuite>\n", out);
	free(summary);
	if (fclose(out)) {
		md_error("writing %s: %s", path, strerror(errno));
		return -MD_E_SYS;
	}
	return 0;
}

struct site {
	const char *file, *call;
	int line, pad;
	int first;
	struct anl_ranges rs;
	UT_hash_handle hh;
};

enum { WAITS_SELF = -2, WAITS_ANY = -3, WAITS_UNKNOWN = -4 };

/* The first rank a deadlocked rank waits for, for the annotation; a wait
 * for any member of a communicator is WAITS_ANY (WAITS_UNKNOWN when no
 * operation names the peer), as the text report says, not the member
 * the graph goes on to; WAITS_SELF when it waits only for itself. */
static int waits_for(const struct anl_result *r, int v)
{
	int first, n = wfg_out(r->g, v, &first), none = -1;

	for (int e = first; e < first + n; e++) {
		int t = wfg_edge_to(r->g, e);

		if (t == v)
			none = WAITS_SELF;
		else if (t < r->nranks)
			return t;
		if (t >= r->nranks && r->v[t - r->nranks].kind == ANL_V_ANY) {
			const struct anl_ev *ev = anl_edge_ev(r, e);

			return ev && ev->op < 0 && !ev->any_source
				       ? WAITS_UNKNOWN : WAITS_ANY;
		}
		if (t >= r->nranks) {
			int f2, n2 = wfg_out(r->g, t, &f2);

			for (int k = f2; k < f2 + n2; k++)
				if (wfg_edge_to(r->g, k) != v)
					return wfg_edge_to(r->g, k);
		}
	}
	return none;
}

/* A workflow command's property (the file name) and its message, with
 * the characters that would end them escaped as GitHub's runner reads
 * them back. */
static void put_escaped(const char *s, bool property, FILE *out)
{
	for (; *s; s++) {
		if (*s == '%' || *s == '\r' || *s == '\n' ||
		    (property && (*s == ':' || *s == ',')))
			fprintf(out, "%%%02X", (unsigned char)*s);
		else
			fputc(*s, out);
	}
}

static void put_site(const struct anl_result *r, struct site *s,
		     FILE *out)
{
	const char *call = s->call ? s->call : "MPI";
	int to = waits_for(r, s->first);
	char *msg;

	if (s->rs.count > 1)
		msg = xasprintf("ranks %s wait in %s (deadlock)",
				anl_ranges_str(&s->rs), call);
	else if (to >= 0)
		msg = xasprintf("rank %s waits for rank %d in %s (deadlock)",
				anl_ranges_str(&s->rs), to, call);
	else if (to == WAITS_ANY || to == WAITS_UNKNOWN)
		msg = xasprintf("rank %s waits for %s in %s (deadlock)",
				anl_ranges_str(&s->rs), to == WAITS_ANY ?
				"any rank" : "a rank not known", call);
	else if (to == WAITS_SELF)
		msg = xasprintf("rank %s waits for itself in %s (deadlock)",
				anl_ranges_str(&s->rs), call);
	else
		msg = xasprintf("rank %s waits in %s (deadlock)",
				anl_ranges_str(&s->rs), call);
	fputs("::error file=", out);
	put_escaped(s->file, true, out);
	fprintf(out, ",line=%d::", s->line);
	put_escaped(msg, false, out);
	fputc('\n', out);
	free(msg);
}

/* One ::error per distinct call site of the deadlocked ranks. */
void anl_report_github(const struct anl_result *r, FILE *out)
{
	struct site *table = NULL, **order = NULL, *s, key;
	int n = 0;

	for (int i = 0; i < r->nranks; i++) {
		const struct snap_rank *sr = &r->s->ranks[i];

		if (r->ranks[i].role != ANL_ROLE_DEADLOCKED || !sr->call_file)
			continue;
		memset(&key, 0, sizeof(key));
		key.file = sr->call_file;
		key.call = sr->mpi_call;
		key.line = sr->call_line;
		HASH_FIND(hh, table, &key, offsetof(struct site, first), s);
		if (!s) {
			s = xcalloc(1, sizeof(*s));
			*s = key;
			s->first = i;
			anl_ranges_init(&s->rs);
			HASH_ADD(hh, table, file, offsetof(struct site, first), s);
			order = xrealloc(order, ((size_t)n + 1) * sizeof(*order));
			order[n++] = s;
		}
		anl_ranges_add(&s->rs, i);
	}
	HASH_CLEAR(hh, table);
	for (int i = 0; i < n; i++) {
		s = order[i];
		put_site(r, s, out);
		anl_ranges_free(&s->rs);
		free(s);
	}
	free(order);
}
