/*
 * manifest.c - reader of samples/manifest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "support/manifest.h"

int mf_parse_ranks(const char *text, int np, bool *set)
{
	const char *p = text;

	memset(set, 0, (size_t)np * sizeof(*set));
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p)
			return -MD_E_INPUT;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p)
				return -MD_E_INPUT;
		}
		if (lo < 0 || hi >= np || lo > hi)
			return -MD_E_INPUT;
		for (long r = lo; r <= hi; r++)
			set[r] = true;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -MD_E_INPUT;
	}
	return 0;
}

void mf_format_ranks(const bool *set, int np, char *buf, int size)
{
	int len = 0;

	buf[0] = '\0';
	for (int r = 0; r < np && len < size; r++) {
		int e = r;

		if (!set[r])
			continue;
		while (e + 1 < np && set[e + 1])
			e++;
		if (e == r)
			len += snprintf(buf + len, (size_t)(size - len), "%s%d",
					len ? "," : "", r);
		else
			len += snprintf(buf + len, (size_t)(size - len),
					"%s%d-%d", len ? "," : "", r, e);
		r = e;
	}
}

static struct mf_sample *new_sample(struct mf_manifest *m, char **f, int n,
				    int lineno)
{
	struct mf_sample *s;
	char *dot;

	if (n != 5 || atoi(f[3]) < 1 ||
	    (strcmp(f[4], "deadlock") && strcmp(f[4], "no-deadlock")))
		return NULL;
	m->samples = xrealloc(m->samples,
			      (size_t)(m->nsamples + 1) * sizeof(*s));
	s = &m->samples[m->nsamples++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(f[1]);
	s->source = xstrdup(f[2]);
	s->binary = xstrdup(f[2]);
	dot = strrchr(s->binary, '.');
	if (dot)
		*dot = '\0';
	s->np = atoi(f[3]);
	s->deadlock = !strcmp(f[4], "deadlock");
	s->deadlocked = xcalloc((size_t)s->np, sizeof(bool));
	s->behind = xcalloc((size_t)s->np, sizeof(bool));
	s->lineno = lineno;
	return s;
}

static int add_site(struct mf_sample *s, char **f, int n,
		    struct mf_stuck **list, int *count, const char *setup)
{
	bool *set = xcalloc((size_t)s->np, sizeof(bool));
	char *colon = n == 4 ? strrchr(f[3], ':') : NULL;
	int ret = -MD_E_INPUT;

	if (!colon || atoi(colon + 1) < 1 || mf_parse_ranks(f[1], s->np, set))
		goto out;
	for (int r = 0; r < s->np; r++) {
		struct mf_stuck *st;

		if (!set[r])
			continue;
		*list = xrealloc(*list, (size_t)(*count + 1) * sizeof(*st));
		st = &(*list)[(*count)++];
		st->setup = setup ? xstrdup(setup) : NULL;
		st->rank = r;
		st->call = xstrdup(f[2]);
		st->file = xstrndup(f[3], (size_t)(colon - f[3]));
		st->line = atoi(colon + 1);
	}
	ret = 0;
out:
	free(set);
	return ret;
}

/* One non-sample line of a block; rest is the text after the keyword. */
static int add_field(struct mf_sample *s, char **f, int n, const char *rest)
{
	if (!strcmp(f[0], "markers") && n == 2) {
		s->markers = atoi(f[1]);
		return s->markers > 0 ? 0 : -MD_E_INPUT;
	}
	if (!strcmp(f[0], "deadlocked") && n == 2)
		return mf_parse_ranks(f[1], s->np, s->deadlocked);
	if (!strcmp(f[0], "behind") && n == 2) {
		s->has_behind = true;
		return mf_parse_ranks(f[1], s->np, s->behind);
	}
	if (!strcmp(f[0], "stuck"))
		return add_site(s, f, n, &s->stuck, &s->nstuck, NULL);
	if (!strcmp(f[0], "stuckon") && n == 5)
		return add_site(s, f + 1, n - 1, &s->stuck, &s->nstuck, f[1]);
	if (!strcmp(f[0], "topology") && n == 3 && !s->topology) {
		s->topology = xasprintf("%s %s", f[1], f[2]);
		return 0;
	}
	if (!strcmp(f[0], "track") && n == 1) {
		s->track = true;
		return 0;
	}
	if (!strcmp(f[0], "posted")) {
		s->track = true;
		return add_site(s, f, n, &s->posted, &s->nposted, NULL);
	}
	if (!strcmp(f[0], "disagree") && n >= 2) {
		s->track = true;
		s->disagree = xrealloc(s->disagree, (size_t)(s->ndisagree + 1) *
						    sizeof(char *));
		s->disagree[s->ndisagree++] = xstrdup(rest);
		return 0;
	}
	if (!strcmp(f[0], "unmatched") && n == 4) {
		struct mf_unmatched *u;

		s->unmatched = xrealloc(s->unmatched, (size_t)(s->nunmatched +
					1) * sizeof(*u));
		u = &s->unmatched[s->nunmatched++];
		u->rank = atoi(f[1]);
		u->from = atoi(f[2]);
		u->tag = atoi(f[3]);
		return u->rank >= 0 && u->rank < s->np && u->from >= 0 &&
		       u->from < s->np ? 0 : -MD_E_INPUT;
	}
	if (!strcmp(f[0], "notfor") && n >= 3) {
		const char *why = rest + strcspn(rest, " \t");

		why += strspn(why, " \t");
		s->notfor_setup = xrealloc(s->notfor_setup, (size_t)(s->nnotfor +
					   1) * sizeof(char *));
		s->notfor_reason = xrealloc(s->notfor_reason,
					    (size_t)(s->nnotfor + 1) *
					    sizeof(char *));
		s->notfor_setup[s->nnotfor] = xstrdup(f[1]);
		s->notfor_reason[s->nnotfor++] = xstrdup(why);
		return 0;
	}
	if (!strcmp(f[0], "output") && n >= 2) {
		s->output = xrealloc(s->output,
				     (size_t)(s->noutput + 1) * sizeof(char *));
		s->output[s->noutput++] = xstrdup(rest);
		return 0;
	}
	return -MD_E_INPUT;
}

/* Splits line in place into at most max blank-separated fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	for (char *t = strtok(line, " \t\n"); t && n < max;
	     t = strtok(NULL, " \t\n"))
		f[n++] = t;
	return n;
}

static int parse_line(struct mf_manifest *m, char *line, int lineno)
{
	char *f[8] = { NULL }, *rest, *nl;
	int n, ret;

	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	rest = line + strspn(line, " \t");
	if (!*rest || *rest == '#')
		return 0;
	rest += strcspn(rest, " \t");
	rest += strspn(rest, " \t");
	rest = xstrdup(rest);
	n = split(line, f, 8);
	if (n == 0) {
		free(rest);
		return -MD_E_INPUT;
	}
	if (!strcmp(f[0], "sample"))
		ret = new_sample(m, f, n, lineno) ? 0 : -MD_E_INPUT;
	else if (!m->nsamples)
		ret = -MD_E_INPUT;
	else
		ret = add_field(&m->samples[m->nsamples - 1], f, n, rest);
	free(rest);
	return ret;
}

int mf_load(const char *path, struct mf_manifest **out)
{
	FILE *f = fopen(path, "r");
	struct mf_manifest *m;
	char line[1024];
	int lineno = 0;

	if (!f) {
		md_error("fopen(%s): %s", path, strerror(errno));
		return -MD_E_SYS;
	}
	m = xcalloc(1, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (parse_line(m, line, lineno)) {
			md_error("%s:%d: bad manifest line (see the format at the top of the file)",
				 path, lineno);
			fclose(f);
			mf_free(m);
			return -MD_E_INPUT;
		}
	}
	fclose(f);
	*out = m;
	return 0;
}

static void free_sample(struct mf_sample *s)
{
	for (int i = 0; i < s->nstuck; i++) {
		free(s->stuck[i].setup);
		free(s->stuck[i].call);
		free(s->stuck[i].file);
	}
	for (int i = 0; i < s->noutput; i++)
		free(s->output[i]);
	for (int i = 0; i < s->nposted; i++) {
		free(s->posted[i].call);
		free(s->posted[i].file);
	}
	for (int i = 0; i < s->ndisagree; i++)
		free(s->disagree[i]);
	for (int i = 0; i < s->nnotfor; i++) {
		free(s->notfor_setup[i]);
		free(s->notfor_reason[i]);
	}
	free(s->notfor_setup);
	free(s->notfor_reason);
	free(s->posted);
	free(s->disagree);
	free(s->stuck);
	free(s->output);
	free(s->topology);
	free(s->unmatched);
	free(s->deadlocked);
	free(s->behind);
	free(s->name);
	free(s->source);
	free(s->binary);
}

void mf_free(struct mf_manifest *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nsamples; i++)
		free_sample(&m->samples[i]);
	free(m->samples);
	free(m);
}

const struct mf_sample *mf_find(const struct mf_manifest *m, const char *name)
{
	for (int i = 0; i < m->nsamples; i++)
		if (!strcmp(m->samples[i].name, name))
			return &m->samples[i];
	return NULL;
}

char *mf_samples_dir(void)
{
	const char *env = getenv("MD_SAMPLES"), *build = getenv("MD_BUILD");

	if (env && *env)
		return xstrdup(env);
	if (!access("samples/manifest", R_OK) || !build)
		return xstrdup("samples");
	return xasprintf("%s/../samples", build);
}

const char *mf_notfor(const struct mf_sample *s, const char *setup)
{
	for (int i = 0; i < s->nnotfor; i++)
		if (!strcmp(s->notfor_setup[i], setup))
			return s->notfor_reason[i];
	return NULL;
}
