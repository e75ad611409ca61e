/*
 * elfsym_maps.c - a process view from the text of /proc/PID/maps (see
 * es_view_from_maps in elfsym.h): the mapped ELF files, their load bias,
 * in ld.so's search order.  Read once per rank and look: kept free of
 * sscanf and per-line copies.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "elfsym_int.h"
#include "md.h"

/* One file seen in the maps text. */
struct es_mapfile {
	char *path;
	size_t len;		/* strlen(path) */
	uint64_t start;		/* lowest mapping with file offset 0 */
	bool have_start;
	struct es_image *img;	/* NULL: not an ELF file we can read */
	unsigned order;		/* search order; UINT_MAX: not reached */
};

/* One maps line; its path runs to the end of the line (not terminated). */
struct es_mapline {
	uint64_t start, offset;
	const char *path;
	size_t pathlen;
};

/* The mappings of one file are adjacent: look at the last file first. */
static int find_mapfile(const struct es_mapfile *f, unsigned n,
			const char *path, size_t len)
{
	unsigned i;

	if (n && f[n - 1].len == len && !memcmp(f[n - 1].path, path, len))
		return (int)(n - 1);
	for (i = 0; i < n; i++)
		if (f[i].len == len && !memcmp(f[i].path, path, len))
			return (int)i;
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* After a field: one sep character, or (sep 0) at least one blank. */
static bool skip_sep(const char **p, char sep)
{
	if (sep) {
		if (**p != sep)
			return false;
		(*p)++;
		return true;
	}
	if (!is_blank(**p))
		return false;
	while (is_blank(**p))
		(*p)++;
	return true;
}

static bool take_num(const char **p, int base, char sep,
		     unsigned long long *v)
{
	char *e;

	/* strtoull would skip the newline and read the next line. */
	if (isspace((unsigned char)**p))
		return false;
	*v = strtoull(*p, &e, base);
	if (e == *p)
		return false;
	*p = e;
	return skip_sep(p, sep);
}

static bool take_word(const char **p)
{
	const char *q = *p;

	while (*q && *q != '\n' && !is_blank(*q))
		q++;
	if (q == *p)
		return false;
	*p = q;
	return skip_sep(p, 0);
}

/*
 * Parse one maps line of len bytes: "start-end perms offset dev inode
 * path".  Returns 1 and the fields for a line naming a file, 0 for an
 * anonymous or special mapping, -1 for a line that is not maps format.
 */
static int parse_maps_line(const char *line, size_t len, struct es_mapline *m)
{
	const char *p = line;
	unsigned long long s, e, off, ino;
	char *end;

	if (!take_num(&p, 16, '-', &s) || !take_num(&p, 16, 0, &e) ||
	    !take_word(&p) || !take_num(&p, 16, 0, &off) || !take_word(&p))
		return -1;
	ino = isspace((unsigned char)*p) ? 0 : strtoull(p, &end, 10);
	if (isspace((unsigned char)*p) || end == p)
		return -1;
	p = end;
	while (is_blank(*p))
		p++;
	if (p > line + len)
		return -1;
	m->start = s;
	m->offset = off;
	m->path = p;
	m->pathlen = (size_t)(line + len - p);
	return m->pathlen && *p == '/' && ino != 0;
}

/* The mapped file that a DT_NEEDED name refers to: by DT_SONAME, else by
 * file name (a library without a soname). */
static int find_needed(const struct es_mapfile *f, unsigned n,
		       const char *needed)
{
	unsigned i;
	const char *base;

	for (i = 0; i < n; i++)
		if (f[i].img && f[i].img->soname &&
		    strcmp(f[i].img->soname, needed) == 0)
			return (int)i;
	for (i = 0; i < n; i++) {
		base = strrchr(f[i].path, '/');
		if (f[i].img && strcmp(base ? base + 1 : f[i].path, needed) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * ld.so's global search order: the executable, then its DT_NEEDED
 * libraries breadth-first (each once).  Objects not reached that way were
 * dlopen()ed later (Open MPI's mca_*.so plugins); they follow, by
 * decreasing address, an approximation of load order since mmap hands out
 * addresses top-down.
 */
static void linker_order(struct es_mapfile *f, unsigned n, unsigned exe)
{
	unsigned *queue = xmalloc((n + 1) * sizeof(*queue));
	unsigned head = 0, tail = 0, next = 0, i, k;
	int j;

	for (i = 0; i < n; i++)
		f[i].order = UINT_MAX;
	f[exe].order = next++;
	queue[tail++] = exe;
	while (head < tail) {
		const struct es_image *img = f[queue[head++]].img;

		for (k = 0; img && k < img->nneeded; k++) {
			j = find_needed(f, n, img->needed[k]);
			if (j >= 0 && f[j].order == UINT_MAX) {
				f[j].order = next++;
				queue[tail++] = (unsigned)j;
			}
		}
	}
	free(queue);
}

static int cmp_mapfile(const void *a, const void *b)
{
	const struct es_mapfile *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return 0;
}

static unsigned add_mapfile(struct es_mapfile **f, unsigned *n,
			    unsigned *cap, const struct es_mapline *m)
{
	struct es_mapfile *nf;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		*f = xrealloc(*f, *cap * sizeof(**f));
	}
	nf = &(*f)[*n];
	memset(nf, 0, sizeof(*nf));
	nf->path = xstrndup(m->path, m->pathlen);
	nf->len = m->pathlen;
	return (*n)++;
}

/* Collect the files of the maps text; returns -1 at a malformed line. */
static int collect_mapfiles(const char *text, struct es_mapfile **out,
			    unsigned *nout)
{
	struct es_mapfile *f = NULL;
	unsigned n = 0, cap = 0, lineno = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct es_mapline m;
		int r = len ? parse_maps_line(p, len, &m) : 0, i;

		lineno++;
		if (r < 0) {
			md_error("maps line %u is not in /proc/PID/maps format: "
				 "%.*s", lineno, (int)(len < 60 ? len : 60), p);
			goto bad;
		}
		p += len + (nl ? 1 : 0);
		if (r == 0 || memmem(m.path, m.pathlen, " (deleted)", 10))
			continue;
		i = find_mapfile(f, n, m.path, m.pathlen);
		if (i < 0)
			i = (int)add_mapfile(&f, &n, &cap, &m);
		if (m.offset == 0 && (!f[i].have_start || m.start < f[i].start)) {
			f[i].start = m.start;
			f[i].have_start = true;
		}
	}
	*out = f;
	*nout = n;
	return 0;
bad:
	while (n)
		free(f[--n].path);
	free(f);
	return -1;
}

int es_view_from_maps(struct es_cache *c, const char *maps_text,
		      const char *exe_path, struct es_view **out)
{
	struct es_mapfile *f;
	struct es_view *v;
	unsigned n, i, exe = 0;

	*out = NULL;
	if (collect_mapfiles(maps_text, &f, &n) < 0)
		return -MD_E_INPUT;
	for (i = 0; i < n; i++) {
		if (!f[i].have_start ||
		    es_cache_get_quiet(c, f[i].path, &f[i].img) != 0)
			f[i].img = NULL;
		if (exe_path && strcmp(f[i].path, exe_path) == 0)
			exe = i;
	}
	if (n) {
		linker_order(f, n, exe);
		qsort(f, n, sizeof(*f), cmp_mapfile);
	}
	v = es_view_new(c);
	for (i = 0; i < n; i++) {
		if (f[i].img)
			es_view_append(v, f[i].path,
				    f[i].start - f[i].img->base_vaddr, f[i].img);
		free(f[i].path);
	}
	free(f);
	*out = v;
	return 0;
}
