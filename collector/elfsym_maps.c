/*
 * elfsym_maps.c - a process view from the text of /proc/PID/maps (see
 * es_view_from_maps in elfsym.h): the mapped ELF files, their load bias,
 * in ld.so's search order.  Read once per rank and look: kept free of
 * sscanf and per-line copies.
 */
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsym_int.h"
#include "md.h"

#define uthash_malloc(sz) xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#include <uthash.h>

/*
 * What depends only on the files, kept in the image cache for every
 * later view (most ranks map the same images): each mapped file by its
 * maps identity (device, inode, path) with its image or "not ELF", and
 * each distinct list of images with its linker order.  Per rank only the
 * maps text is parsed and the load biases taken.
 */
struct es_mfile {
	UT_hash_handle hh;	/* key: key, keylen */
	char *key;		/* "dev inode path" as maps gives them */
	size_t keylen;
	char *path;
	struct es_image *img;	/* NULL: not an ELF file we can read */
	unsigned id;
};

struct es_tmpl {
	UT_hash_handle hh;	/* key: ids, n * sizeof(*ids) */
	unsigned *ids;		/* exe position, then the files' ids */
	unsigned n;
	unsigned *order;	/* linker order per file; UINT_MAX: dlopen */
};

/* One object of the last view built from maps, for es_links_learn. */
struct es_lastobj {
	const char *path;	/* owned by its es_mfile */
	struct es_image *img;
	uint64_t bias;
	unsigned order;
};

/* A name of ld.so's link_map list, as learnt from a rank whose maps were
 * read too: the file it is, or none (the vdso). */
struct es_linkname {
	UT_hash_handle hh;	/* key: name */
	char *name;
	const char *path;	/* NULL: not an object of the view */
	struct es_image *img;
	unsigned order;
};

struct es_maps_memo {
	struct es_mfile *files;
	struct es_tmpl *tmpls;
	unsigned nfiles;
	struct es_lastobj *last;
	unsigned nlast;
	struct es_linkname *links;
	unsigned nlinked;	/* objects of the learnt view */
	bool learnt;
};

/* One file seen in the maps text. */
struct es_mapfile {
	char *path;
	size_t len;		/* strlen(path) */
	uint64_t start;		/* lowest mapping with file offset 0 */
	bool have_start;
	struct es_image *img;	/* NULL: not an ELF file we can read */
	unsigned order;		/* search order; UINT_MAX: not reached */
};

/* One file of one rank's maps text: its strings point into the text. */
struct es_mapref {
	const char *path, *dev;
	size_t len, devlen;
	unsigned long long ino;
	uint64_t start;		/* lowest mapping with file offset 0 */
	bool have_start;
	bool shared;		/* every mapping MAP_SHARED: not ld.so's */
	struct es_mfile *file;
	unsigned order;
};

/* One maps line; its path runs to the end of the line (not terminated). */
struct es_mapline {
	uint64_t start, end, offset;
	const char *path, *dev;
	size_t pathlen, devlen;
	unsigned long long ino;
	bool shared;
};

/* The mappings of one file are adjacent: look at the last file first. */
static int find_mapref(const struct es_mapref *f, unsigned n,
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

/* The digits of a number in base 16 or 10 at *p (no sign, no prefix,
 * as the kernel writes them); false if none or if it does not fit.
 * (strtoull also takes signs, prefixes and the locale's blanks, on the
 * ~280 lines of every rank's maps.) */
static bool digits(const char **p, int base, unsigned long long *v)
{
	const char *q = *p;
	unsigned long long n = 0;

	for (;; q++) {
		int x = md_hex_digit((unsigned char)*q);
		unsigned d = (unsigned)x;

		if (x < 0 || d >= (unsigned)base)
			break;
		if (n > (ULLONG_MAX - d) / (unsigned)base)
			return false;
		n = n * (unsigned)base + d;
	}
	if (q == *p)
		return false;
	*v = n;
	*p = q;
	return true;
}

static bool take_num(const char **p, int base, char sep,
		     unsigned long long *v)
{
	return digits(p, base, v) && skip_sep(p, sep);
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
	const char *p = line, *perms, *dev;
	unsigned long long s, e, off, ino;
	const char *end;

	if (!take_num(&p, 16, '-', &s) || !take_num(&p, 16, 0, &e))
		return -1;
	perms = p;
	if (!take_word(&p) || !take_num(&p, 16, 0, &off))
		return -1;
	dev = p;
	if (!take_word(&p))
		return -1;
	end = p;
	if (!digits(&end, 10, &ino))
		return -1;
	m->dev = dev;
	m->devlen = (size_t)(end - dev);
	p = end;
	while (is_blank(*p))
		p++;
	if (p > line + len)
		return -1;
	m->start = s;
	m->end = e;
	m->offset = off;
	m->ino = ino;
	m->shared = perms[0] && perms[1] && perms[2] && perms[3] == 's';
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

static int cmp_mapref(const void *a, const void *b)
{
	const struct es_mapref *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return 0;
}

static void add_mapref(struct es_mapref **f, unsigned *n, unsigned *cap,
		       const struct es_mapline *m)
{
	struct es_mapref *nf;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*f = xrealloc(*f, *cap * sizeof(**f));
	}
	nf = &(*f)[(*n)++];
	memset(nf, 0, sizeof(*nf));
	nf->path = m->path;
	nf->len = m->pathlen;
	nf->dev = m->dev;
	nf->devlen = m->devlen;
	nf->ino = m->ino;
	nf->shared = true;
}

/* Collect the files of the maps text; returns -1 at a malformed line. */
/*
 * The vdso has no file, and no frame pointer: a thread stopped in it
 * (clock_gettime, which MPI progress loops call all the time) unwinds
 * only through its .eh_frame.  Every process of one kernel and ABI maps
 * the same image, so ours, copied once into a memory file, stands for
 * a target's [vdso] of the same size.  NULL if it cannot be had.
 */
static const char *vdso_path(size_t *size)
{
	static char path[64];
	static size_t len;
	static int tried;
	const Elf64_Ehdr *eh;
	int fd;

	if (tried) {
		*size = len;
		return len ? path : NULL;
	}
	tried = 1;
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)
			((const char *)eh + eh->e_phoff) + i;

		if (ph->p_offset + ph->p_filesz > len)
			len = ph->p_offset + ph->p_filesz;
	}
	fd = memfd_create("mpi-deadlock-vdso", MFD_CLOEXEC);
	if (fd < 0 || len > (1 << 20) || write(fd, eh, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		len = 0;
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	*size = len;
	return path;
}

static bool is_vdso_copy(const char *path)
{
	size_t size;
	const char *v = vdso_path(&size);

	return v && !strcmp(path, v);
}

/* A maps line of the vdso, made to name our copy of it, when the sizes
 * agree (one page more or less: the kernel rounds the mapping). */
static bool vdso_line(struct es_mapline *m, uint64_t end)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size;
	const char *path;

	if (m->pathlen != 6 || memcmp(m->path, "[vdso]", 6))
		return false;
	path = vdso_path(&size);
	if (!path || end - m->start != (size + (size_t)page - 1) /
					       (size_t)page * (size_t)page)
		return false;
	m->path = path;
	m->pathlen = strlen(path);
	return true;
}

static int collect_maprefs(const char *text, struct es_mapref **out,
			   unsigned *nout)
{
	struct es_mapref *f = NULL;
	unsigned n = 0, cap = 0, lineno = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct es_mapline m = { 0 };
		int r = len ? parse_maps_line(p, len, &m) : 0, i;

		lineno++;
		if (r < 0) {
			md_error("maps line %u is not in /proc/PID/maps format: "
				 "%.*s", lineno, (int)(len < 60 ? len : 60), p);
			free(f);
			return -1;
		}
		p += len + (nl ? 1 : 0);
		if (r == 0 && (!len || !vdso_line(&m, m.end)))
			continue;
		if (memmem(m.path, m.pathlen, " (deleted)", 10))
			continue;
		i = find_mapref(f, n, m.path, m.pathlen);
		if (i < 0) {
			add_mapref(&f, &n, &cap, &m);
			i = (int)n - 1;
		}
		f[i].shared = f[i].shared && m.shared;
		if (m.offset == 0 && (!f[i].have_start || m.start < f[i].start)) {
			f[i].start = m.start;
			f[i].have_start = true;
		}
	}
	*out = f;
	*nout = n;
	return 0;
}

static struct es_maps_memo *memo_of(struct es_cache *c)
{
	struct es_maps_memo **slot = es_cache_maps_memo(c);

	if (!*slot)
		*slot = xcalloc(1, sizeof(**slot));
	return *slot;
}

/*
 * The file of a maps entry, opened (through the image cache, by stat
 * identity) the first time its device, inode and path are seen.  A file
 * that only MAP_SHARED mappings name (Open MPI's shared-memory segments,
 * new in every rank) is not an object ld.so loaded: it is not opened.
 */
static struct es_mfile *mfile_get(struct es_cache *c, struct es_maps_memo *mm,
				  const struct es_mapref *r)
{
	size_t klen = r->devlen + 1 + r->len;
	char stackkey[512], *key = klen <= sizeof(stackkey) ? stackkey
							     : xmalloc(klen);
	struct es_mfile *f;

	memcpy(key, r->dev, r->devlen);
	key[r->devlen] = ' ';
	memcpy(key + r->devlen + 1, r->path, r->len);
	HASH_FIND(hh, mm->files, key, klen, f);
	if (!f) {
		f = xcalloc(1, sizeof(*f));
		if (key == stackkey) {
			f->key = xmalloc(klen);
			memcpy(f->key, key, klen);
		} else {
			f->key = key;
			key = stackkey;
		}
		f->keylen = klen;
		f->path = xstrndup(r->path, r->len);
		f->id = mm->nfiles++;
		if (r->shared ||
		    es_cache_get_quiet(c, f->path, &f->img) != 0)
			f->img = NULL;
		/* Frames and reports name the vdso as maps does. */
		if (f->img && is_vdso_copy(f->path)) {
			free(f->path);
			f->path = xstrdup("[vdso]");
		}
		HASH_ADD_KEYPTR(hh, mm->files, f->key, f->keylen, f);
	}
	if (key != stackkey)
		free(key);
	return f;
}

/* The linker order of one list of images (elf[0..n), exe its position),
 * computed the first time that list is seen. */
static const unsigned *tmpl_order(struct es_maps_memo *mm,
				  struct es_mapref *const *elf, unsigned n,
				  unsigned exe)
{
	unsigned *ids = xmalloc((n + 1) * sizeof(*ids)), i;
	size_t klen = (n + 1) * sizeof(*ids);
	struct es_mapfile *mf;
	struct es_tmpl *t;

	ids[0] = exe;
	for (i = 0; i < n; i++)
		ids[i + 1] = elf[i]->file->id;
	HASH_FIND(hh, mm->tmpls, ids, klen, t);
	if (t) {
		free(ids);
		return t->order;
	}
	t = xcalloc(1, sizeof(*t));
	t->ids = ids;
	t->n = n + 1;
	t->order = xmalloc((n ? n : 1) * sizeof(*t->order));
	mf = xcalloc(n ? n : 1, sizeof(*mf));
	for (i = 0; i < n; i++) {
		mf[i].path = elf[i]->file->path;
		mf[i].img = elf[i]->file->img;
	}
	if (n)
		linker_order(mf, n, exe);
	for (i = 0; i < n; i++)
		t->order[i] = mf[i].order;
	free(mf);
	HASH_ADD_KEYPTR(hh, mm->tmpls, t->ids, klen, t);
	return t->order;
}

static void links_forget(struct es_maps_memo *mm)
{
	struct es_linkname *l, *ln;

	HASH_ITER(hh, mm->links, l, ln) {
		HASH_DEL(mm->links, l);
		free(l->name);
		free(l);
	}
	mm->learnt = false;
	mm->nlinked = 0;
}

void es_maps_memo_free(struct es_maps_memo *mm)
{
	struct es_mfile *f, *fn;
	struct es_tmpl *t, *tn;

	if (!mm)
		return;
	HASH_ITER(hh, mm->files, f, fn) {
		HASH_DEL(mm->files, f);
		free(f->key);
		free(f->path);
		free(f);
	}
	HASH_ITER(hh, mm->tmpls, t, tn) {
		HASH_DEL(mm->tmpls, t);
		free(t->ids);
		free(t->order);
		free(t);
	}
	links_forget(mm);
	free(mm->last);
	free(mm);
}

int es_view_from_maps(struct es_cache *c, const char *maps_text,
		      const char *exe_path, struct es_view **out)
{
	struct es_maps_memo *mm = memo_of(c);
	size_t exe_len = exe_path ? strlen(exe_path) : 0;
	struct es_mapref *f, **elf;
	const unsigned *order;
	unsigned n, i, ne = 0, exe = 0;
	struct es_view *v;

	*out = NULL;
	if (collect_maprefs(maps_text, &f, &n) < 0)
		return -MD_E_INPUT;
	elf = xmalloc((n ? n : 1) * sizeof(*elf));
	for (i = 0; i < n; i++) {
		if (!f[i].have_start)
			continue;
		f[i].file = mfile_get(c, mm, &f[i]);
		if (!f[i].file->img)
			continue;
		if (exe_path && f[i].len == exe_len &&
		    !memcmp(f[i].path, exe_path, exe_len))
			exe = ne;
		elf[ne++] = &f[i];
	}
	order = tmpl_order(mm, elf, ne, exe);
	for (i = 0; i < ne; i++)
		elf[i]->order = order[i];
	/* Sort the images among themselves (the rest is dropped). */
	for (i = 0; i < ne; i++)
		f[i] = *elf[i];
	free(elf);
	if (ne > 1)
		qsort(f, ne, sizeof(*f), cmp_mapref);
	v = es_view_new(c);
	mm->last = xrealloc(mm->last, (ne ? ne : 1) * sizeof(*mm->last));
	mm->nlast = ne;
	for (i = 0; i < ne; i++) {
		uint64_t bias = f[i].start - f[i].file->img->base_vaddr;

		es_view_append_borrowed(v, f[i].file->path, bias,
					f[i].file->img);
		mm->last[i] = (struct es_lastobj){ f[i].file->path,
						   f[i].file->img, bias,
						   f[i].order };
	}
	free(f);
	*out = v;
	return 0;
}

/* ---- the same view from ld.so's link_map list ---- */

static int learn_one(struct es_maps_memo *mm, const struct es_link *l,
		     bool *taken)
{
	struct es_linkname *e;
	const struct es_lastobj *o = NULL;

	for (unsigned j = 0; j < mm->nlast && !o; j++)
		if (mm->last[j].bias == l->addr && !taken[j]) {
			o = &mm->last[j];
			taken[j] = true;
		}
	HASH_FIND_STR(mm->links, l->name, e);
	if (e)	/* a name twice: which file is which is not known */
		return -MD_E_NOSYM;
	e = xcalloc(1, sizeof(*e));
	e->name = xstrdup(l->name);
	if (o) {
		e->path = o->path;
		e->img = o->img;
		e->order = o->order;
	}
	HASH_ADD_KEYPTR(hh, mm->links, e->name, strlen(e->name), e);
	return 0;
}

int es_links_learn(struct es_cache *c, const struct es_link *links,
		   unsigned n)
{
	struct es_maps_memo *mm = memo_of(c);
	bool *taken = xcalloc(mm->nlast + 1, sizeof(*taken));
	unsigned matched = 0;
	int rc = 0;

	links_forget(mm);
	for (unsigned i = 0; i < n && rc == 0; i++)
		rc = learn_one(mm, &links[i], taken);
	for (unsigned j = 0; j < mm->nlast; j++)
		matched += taken[j];
	free(taken);
	/* Every object of the maps' view must be in the list: a file
	 * mapped privately without ld.so is seen only in the maps. */
	if (rc == 0 && matched != mm->nlast)
		rc = -MD_E_NOSYM;
	if (rc < 0) {
		links_forget(mm);
		return rc;
	}
	mm->learnt = true;
	mm->nlinked = matched;
	return 0;
}

struct es_linked {
	const struct es_linkname *e;
	uint64_t bias, start;
};

static int cmp_linked(const void *a, const void *b)
{
	const struct es_linked *x = a, *y = b;

	/* As cmp_mapref: linker order, then dlopen()ed by address. */
	if (x->e->order != y->e->order)
		return x->e->order < y->e->order ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return 0;
}

int es_view_from_links(struct es_cache *c, const struct es_link *links,
		       unsigned n, struct es_view **out)
{
	struct es_maps_memo *mm = memo_of(c);
	struct es_linked *o;
	unsigned k = 0;
	struct es_view *v;

	*out = NULL;
	if (!mm->learnt)
		return -MD_E_NOSYM;
	o = xmalloc((mm->nlinked + 1) * sizeof(*o));
	for (unsigned i = 0; i < n; i++) {
		struct es_linkname *e;

		HASH_FIND_STR(mm->links, links[i].name, e);
		if (!e || (e->img && k == mm->nlinked)) {
			free(o);	/* a name not learnt: new objects */
			return -MD_E_NOSYM;
		}
		if (!e->img)
			continue;
		o[k].e = e;
		o[k].bias = links[i].addr;
		o[k++].start = links[i].addr + e->img->base_vaddr;
	}
	if (k != mm->nlinked) {
		free(o);	/* objects missing: another list of images */
		return -MD_E_NOSYM;
	}
	qsort(o, k, sizeof(*o), cmp_linked);
	v = es_view_new(c);
	for (unsigned i = 0; i < k; i++)
		es_view_append_borrowed(v, o[i].e->path, o[i].bias,
					o[i].e->img);
	free(o);
	*out = v;
	return 0;
}
