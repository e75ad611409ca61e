/*
 * dwlines_memo.c - a line table's answers on disk, by build-id (see
 * dwlines_memo.h).
 *
 * The file, md_cache_dir()/lines/BUILD-ID, is text:
 *
 *   mdlines FORMAT SIZE MTIME_NS DWARF_PATH
 *   ADDR<TAB>RET<TAB>LINE<TAB>FUNC<TAB>FILE
 *   ...
 *
 * ADDR in hex; RET 0 (found) or 1 (nothing known: -MD_E_NOSYM); an empty
 * FUNC or FILE is unknown.  Names with a tab or a newline are not kept.
 */
#include "dwlines_memo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugfile.h"
#include "md.h"

#define uthash_malloc(sz) xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#include <uthash.h>

/* Bump when dwlines.c answers differently: old memos are then ignored. */
#define DL_MEMO_FORMAT 2	/* 2: gcc's DWARF 5 default file */
/* Smaller DWARF opens in a few milliseconds: no memo. */
#define DL_MEMO_MIN_DWARF (1 << 20)
/* Bounds on what is read and kept. */
#define DL_MEMO_MAX_BYTES (4 << 20)
#define DL_MEMO_MAX_ENTRIES 20000

struct memo_entry {
	uint64_t addr;
	struct dl_loc loc;
	int ret;
	UT_hash_handle hh;
};

struct dl_memo {
	char *path;		/* the memo file */
	char *head;		/* its first line, without the '\n' */
	struct memo_entry *entries;
	unsigned n;
	bool dirty;
};

static void put(struct dl_memo *m, uint64_t addr, const char *func,
		const char *file, int line, int ret)
{
	struct memo_entry *e;

	HASH_FIND(hh, m->entries, &addr, sizeof(addr), e);
	if (e || m->n >= DL_MEMO_MAX_ENTRIES)
		return;
	e = xcalloc(1, sizeof(*e));
	e->addr = addr;
	/* A few dozen addresses a library: each entry owns its names. */
	e->loc.func = func ? xstrdup(func) : NULL;
	e->loc.file = file ? xstrdup(file) : NULL;
	e->loc.line = line;
	e->ret = ret;
	HASH_ADD(hh, m->entries, addr, sizeof(e->addr), e);
	m->n++;
}

/* One entry line, cut in place; a bad line is skipped. */
static void parse_entry(struct dl_memo *m, char *l)
{
	char *f[5], *end;
	uint64_t addr;
	long ret, line;
	int i;

	for (i = 0; i < 5 && l; i++) {
		f[i] = l;
		l = strchr(l, '\t');
		if (l)
			*l++ = '\0';
	}
	if (i != 5 || l)
		return;
	errno = 0;
	addr = strtoull(f[0], &end, 16);
	if (errno || *end || end == f[0])
		return;
	ret = strtol(f[1], &end, 10);
	if (*end || (ret != 0 && ret != 1))
		return;
	line = strtol(f[2], &end, 10);
	if (*end || line < 0 || line > INT32_MAX)
		return;
	put(m, addr, *f[3] ? f[3] : NULL, *f[4] ? f[4] : NULL, (int)line,
	    ret ? -MD_E_NOSYM : 0);
}

/* The whole memo file, if it is the user's own and not too big. */
static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_size > DL_MEMO_MAX_BYTES)
		goto out;
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
out:
	close(fd);
	return buf;
}

static void load(struct dl_memo *m)
{
	char *buf = slurp(m->path), *l, *nl;
	size_t hl = strlen(m->head);

	if (!buf)
		return;
	/* Another DWARF file, or another format: start afresh. */
	if (strncmp(buf, m->head, hl) != 0 || buf[hl] != '\n') {
		m->dirty = true;
		free(buf);
		return;
	}
	for (l = buf + hl + 1; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;	/* a line cut short by a crash */
		*nl = '\0';
		parse_entry(m, l);
	}
	free(buf);
}

struct dl_memo *dl_memo_open(const char *elf_path, const char *dwarf_path)
{
	struct dl_memo *m;
	struct stat st;
	char *id = NULL, *cache;

	if (strchr(dwarf_path, '\n') ||
	    stat(dwarf_path, &st) != 0 || st.st_size < DL_MEMO_MIN_DWARF ||
	    df_build_id(elf_path, &id) != 0)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	cache = md_cache_dir();
	m->path = xasprintf("%s/lines/%s", cache, id);
	m->head = xasprintf("mdlines %d %lld %lld %s", DL_MEMO_FORMAT,
			    (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec * 1000000000LL +
				    st.st_mtim.tv_nsec,
			    dwarf_path);
	free(cache);
	free(id);
	load(m);
	return m;
}

bool dl_memo_find(struct dl_memo *m, uint64_t addr, struct dl_loc *loc,
		  int *ret)
{
	struct memo_entry *e;

	HASH_FIND(hh, m->entries, &addr, sizeof(addr), e);
	if (!e)
		return false;
	*loc = e->loc;
	*ret = e->ret;
	return true;
}

static bool plain(const char *s)
{
	return !s || (*s && !strpbrk(s, "\t\n"));
}

void dl_memo_add(struct dl_memo *m, uint64_t addr, const struct dl_loc *loc,
		 int ret)
{
	unsigned n = m->n;

	if (!plain(loc->func) || !plain(loc->file))
		return;
	put(m, addr, loc->func, loc->file, loc->line, ret);
	m->dirty |= m->n != n;
}

/* Written to a file of its own and renamed over the memo: a reader sees
 * the old memo or the new one. */
static void save(struct dl_memo *m)
{
	char *dir = xstrdup(m->path), *tmp;
	struct memo_entry *e, *t;
	FILE *f;
	int fd;

	*strrchr(dir, '/') = '\0';
	tmp = xasprintf("%s.%d.tmp", m->path, (int)getpid());
	if (md_mkdir_p(dir) != 0)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fprintf(f, "%s\n", m->head);
	HASH_ITER(hh, m->entries, e, t)
		fprintf(f, "%" PRIx64 "\t%d\t%d\t%s\t%s\n", e->addr,
			e->ret ? 1 : 0, e->loc.line,
			e->loc.func ? e->loc.func : "",
			e->loc.file ? e->loc.file : "");
	if (fclose(f) != 0 || rename(tmp, m->path) != 0)
		unlink(tmp);
out:
	free(tmp);
	free(dir);
}

void dl_memo_close(struct dl_memo *m)
{
	struct memo_entry *e, *t;

	if (!m)
		return;
	if (m->dirty)
		save(m);
	HASH_ITER(hh, m->entries, e, t) {
		HASH_DEL(m->entries, e);
		free((char *)e->loc.func);
		free((char *)e->loc.file);
		free(e);
	}
	free(m->path);
	free(m->head);
	free(m);
}
