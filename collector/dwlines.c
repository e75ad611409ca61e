/*
 * dwlines.c - address to (function, file, line) per ELF file, from the
 * DWARF line programs and subprogram ranges (libdwarf 20210528 API).
 */
#include "dwlines.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "debugfile.h"
#include "dwlines_memo.h"
#include "md.h"

#define uthash_malloc(sz) xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#include <uthash.h>

struct dl_row {
	uint64_t addr;
	const char *file;	/* interned */
	int line;		/* 0: end of a sequence, no code here */
	unsigned order;		/* position in the line program */
};

struct dl_func {
	uint64_t lo, hi;
	const char *name;	/* interned */
};

/* One copy of each file and function name: thousands of rows share a
 * handful of files. */
struct dl_str {
	char *s;
	UT_hash_handle hh;
};

/* The rows and functions of one compilation unit (or of several, read
 * together), sorted once when read. */
struct dl_unit {
	Dwarf_Off die_off;	/* the CU's DIE in .debug_info */
	bool loaded;
	struct dl_row *rows;
	size_t nrows, rows_cap;
	struct dl_func *funcs;
	size_t nfuncs, funcs_cap;
};

/* A .debug_aranges entry: [lo, hi) belongs to the CU whose DIE is at cu,
 * units[unit]. */
struct dl_range {
	uint64_t lo, hi;
	Dwarf_Off cu;
	unsigned unit;
};

/*
 * A table reads compilation units on demand: libc's separate debug file
 * alone has 4,000 CUs and reading all their line programs cost 0.3 s per
 * collection, while a stack touches a dozen of them.  .debug_aranges says
 * which CU holds an address; CUs that it does not list (clang emits no
 * aranges) are read all together, into rest, at the first address that
 * no range covers.
 */
struct dl_table {
	char *path;
	const struct es_image *syms;
	struct dl_str *strs;
	Dwarf_Debug dbg;	/* NULL: no DWARF */
	struct dl_unit *units;	/* by die_off */
	unsigned nunits;
	struct dl_range *ranges;	/* by lo */
	size_t nranges;
	struct dl_unit rest;
	bool rest_read;
	size_t nrows;		/* rows read so far */
	long long build_ns;
	/* With a memo (dwlines_memo.h), the DWARF file is opened only
	 * when the memo does not know an address: later is its path until
	 * then. */
	struct dl_memo *memo;
	char *later;
};

struct dl_centry {
	char *path;
	struct dl_table *t;
	UT_hash_handle hh;
};

struct dl_cache {
	struct dl_centry *entries;
	bool memo;		/* tables may answer from a memo */
};

static const char *intern(struct dl_table *t, const char *s)
{
	struct dl_str *e;

	HASH_FIND_STR(t->strs, s, e);
	if (!e) {
		e = xmalloc(sizeof(*e));
		e->s = xstrdup(s);
		HASH_ADD_KEYPTR(hh, t->strs, e->s, strlen(e->s), e);
	}
	return e->s;
}

static void add_row(struct dl_unit *u, uint64_t addr, const char *file,
		    int line)
{
	if (u->nrows == u->rows_cap) {
		u->rows_cap = u->rows_cap ? 2 * u->rows_cap : 64;
		u->rows = xrealloc(u->rows, u->rows_cap * sizeof(*u->rows));
	}
	u->rows[u->nrows].addr = addr;
	u->rows[u->nrows].file = file;
	u->rows[u->nrows].line = line;
	u->rows[u->nrows].order = (unsigned)u->nrows;
	u->nrows++;
}

static void add_func(struct dl_unit *u, uint64_t lo, uint64_t hi,
		     const char *name)
{
	if (u->nfuncs == u->funcs_cap) {
		u->funcs_cap = u->funcs_cap ? 2 * u->funcs_cap : 16;
		u->funcs = xrealloc(u->funcs,
				    u->funcs_cap * sizeof(*u->funcs));
	}
	u->funcs[u->nfuncs].lo = lo;
	u->funcs[u->nfuncs].hi = hi;
	u->funcs[u->nfuncs].name = name;
	u->nfuncs++;
}

/* ---- reading ---- */

/*
 * The file names of a DWARF 5 line table whose rows that name no file
 * are in file 1 (the DWARF 5 default), where libdwarf 20210528 (Debian
 * bookworm's) starts the file register at 0: gcc never sets file 0, so
 * its rows at 0 are the default's, and a static inline function of a
 * header that comes first in the unit would be named after the .c file.
 * clang sets file 0 itself where it means it.
 */
struct dl_files {
	char **names;
	Dwarf_Signed n;
	bool default_is_1;
};

static void read_line(struct dl_table *t, struct dl_unit *u,
		      const struct dl_files *fs, Dwarf_Line l)
{
	Dwarf_Addr addr;
	Dwarf_Unsigned lineno = 0, fileno = 1;
	Dwarf_Bool end = 0;
	char *file = NULL;

	if (dwarf_lineaddr(l, &addr, NULL) != DW_DLV_OK)
		return;
	dwarf_lineendsequence(l, &end, NULL);
	if (end) {
		add_row(u, addr, NULL, 0);
		return;
	}
	dwarf_lineno(l, &lineno, NULL);
	if (fs->default_is_1 && fs->n > 1 &&
	    dwarf_line_srcfileno(l, &fileno, NULL) == DW_DLV_OK && !fileno) {
		add_row(u, addr, intern(t, fs->names[1]), (int)lineno);
		return;
	}
	if (dwarf_linesrc(l, &file, NULL) != DW_DLV_OK)
		file = NULL;
	add_row(u, addr, file ? intern(t, file) : NULL, (int)lineno);
	if (file)
		dwarf_dealloc(t->dbg, file, DW_DLA_STRING);
}

static bool made_by_gcc(Dwarf_Die cu)
{
	char *producer = NULL;
	Dwarf_Attribute attr;
	bool gnu = false;

	if (dwarf_attr(cu, DW_AT_producer, &attr, NULL) != DW_DLV_OK)
		return false;
	if (dwarf_formstring(attr, &producer, NULL) == DW_DLV_OK)
		gnu = !strncmp(producer, "GNU ", 4);
	dwarf_dealloc_attribute(attr);
	return gnu;
}

static void read_lines(struct dl_table *t, struct dl_unit *u, Dwarf_Die cu)
{
	Dwarf_Unsigned version;
	Dwarf_Small count;
	Dwarf_Line_Context ctx;
	Dwarf_Line *lines;
	Dwarf_Signed n, i;
	struct dl_files fs = { 0 };

	if (dwarf_srclines_b(cu, &version, &count, &ctx, NULL) != DW_DLV_OK)
		return;
	if (version == 5 && made_by_gcc(cu) &&
	    dwarf_srcfiles(cu, &fs.names, &fs.n, NULL) == DW_DLV_OK)
		fs.default_is_1 = true;
	if (dwarf_srclines_from_linecontext(ctx, &lines, &n, NULL) ==
	    DW_DLV_OK)
		for (i = 0; i < n; i++)
			read_line(t, u, &fs, lines[i]);
	if (fs.default_is_1) {
		for (i = 0; i < fs.n; i++)
			dwarf_dealloc(t->dbg, fs.names[i], DW_DLA_STRING);
		dwarf_dealloc(t->dbg, fs.names, DW_DLA_LIST);
	}
	dwarf_srclines_dealloc_b(ctx);
}

/* The name of a subprogram, also for the out-of-line copy of an inline
 * function, whose name sits on the abstract DIE it points to. */
static bool func_name(Dwarf_Debug dbg, Dwarf_Die die, char **name)
{
	static const Dwarf_Half refs[] = { DW_AT_abstract_origin,
					   DW_AT_specification };
	Dwarf_Attribute attr;
	Dwarf_Off off;
	Dwarf_Die other;
	unsigned i;
	bool ok = false;

	if (dwarf_diename(die, name, NULL) == DW_DLV_OK)
		return true;
	for (i = 0; i < 2 && !ok; i++) {
		if (dwarf_attr(die, refs[i], &attr, NULL) != DW_DLV_OK)
			continue;
		if (dwarf_global_formref(attr, &off, NULL) == DW_DLV_OK &&
		    dwarf_offdie_b(dbg, off, true, &other, NULL) == DW_DLV_OK) {
			ok = dwarf_diename(other, name, NULL) == DW_DLV_OK;
			dwarf_dealloc_die(other);
		}
		dwarf_dealloc_attribute(attr);
	}
	return ok;
}

static void read_func(struct dl_table *t, struct dl_unit *u, Dwarf_Die die)
{
	Dwarf_Addr lo, hi;
	Dwarf_Half form;
	enum Dwarf_Form_Class cls;
	char *name;

	/* Functions split in parts (DW_AT_ranges, gcc's .cold copies) are
	 * left to the symbol table. */
	if (dwarf_lowpc(die, &lo, NULL) != DW_DLV_OK ||
	    dwarf_highpc_b(die, &hi, &form, &cls, NULL) != DW_DLV_OK)
		return;
	if (cls == DW_FORM_CLASS_CONSTANT)
		hi += lo;
	if (hi > lo && func_name(t->dbg, die, &name))
		add_func(u, lo, hi, intern(t, name));
}

/* Append the line rows and top-level functions of the CU whose DIE is cu
 * to u. */
static void read_cu(struct dl_table *t, struct dl_unit *u, Dwarf_Die cu)
{
	Dwarf_Die die = NULL, next;
	Dwarf_Half tag;
	size_t before = u->nrows;
	int ret;

	read_lines(t, u, cu);
	ret = dwarf_child(cu, &die, NULL);
	while (ret == DW_DLV_OK) {
		if (dwarf_tag(die, &tag, NULL) == DW_DLV_OK &&
		    tag == DW_TAG_subprogram)
			read_func(t, u, die);
		ret = dwarf_siblingof_b(t->dbg, die, true, &next, NULL);
		dwarf_dealloc_die(die);
		die = next;
	}
	t->nrows += u->nrows - before;
}

static int cmp_row(const void *a, const void *b)
{
	const struct dl_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* A sequence that ends where the next one starts: the end first,
	 * so the search lands on the start. */
	if ((x->line == 0) != (y->line == 0))
		return x->line == 0 ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_func(const void *a, const void *b)
{
	const struct dl_func *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void unit_sort(struct dl_unit *u)
{
	if (u->nrows)
		qsort(u->rows, u->nrows, sizeof(*u->rows), cmp_row);
	if (u->nfuncs)
		qsort(u->funcs, u->nfuncs, sizeof(*u->funcs), cmp_func);
	u->loaded = true;
}

static void unit_free(struct dl_unit *u)
{
	free(u->rows);
	free(u->funcs);
}

static void load_unit(struct dl_table *t, struct dl_unit *u)
{
	long long t0 = md_now_ns();
	Dwarf_Die cu;

	if (dwarf_offdie_b(t->dbg, u->die_off, true, &cu, NULL) == DW_DLV_OK) {
		read_cu(t, u, cu);
		dwarf_dealloc_die(cu);
	}
	unit_sort(u);
	t->build_ns += md_now_ns() - t0;
}

static bool has_unit(const struct dl_table *t, Dwarf_Off off);

/* Every CU that .debug_aranges does not list, into t->rest. */
static void load_rest(struct dl_table *t)
{
	Dwarf_Unsigned hlen, typeoff, next_off;
	Dwarf_Half version, asize, lsize, esize, cutype;
	Dwarf_Off abbrev, off;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;
	Dwarf_Die cu;
	long long t0 = md_now_ns();
	int ret;

	t->rest_read = true;
	while ((ret = dwarf_next_cu_header_d(t->dbg, true, &hlen, &version,
					     &abbrev, &asize, &lsize, &esize,
					     &sig, &typeoff, &next_off,
					     &cutype, &err)) == DW_DLV_OK) {
		if (dwarf_siblingof_b(t->dbg, NULL, true, &cu, NULL) !=
		    DW_DLV_OK)
			continue;
		if (dwarf_dieoffset(cu, &off, NULL) != DW_DLV_OK ||
		    !has_unit(t, off))
			read_cu(t, &t->rest, cu);
		dwarf_dealloc_die(cu);
	}
	if (ret == DW_DLV_ERROR)
		md_warn("%s: line tables read in part: %s", t->path,
			dwarf_errmsg(err));
	unit_sort(&t->rest);
	t->build_ns += md_now_ns() - t0;
}

/* ---- the aranges index ---- */

static int cmp_off(const void *a, const void *b)
{
	Dwarf_Off x = *(const Dwarf_Off *)a, y = *(const Dwarf_Off *)b;

	return x < y ? -1 : x > y;
}

static int cmp_range(const void *a, const void *b)
{
	const struct dl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->unit < y->unit ? -1 : x->unit > y->unit;
}

static long unit_index(const struct dl_table *t, Dwarf_Off off)
{
	unsigned lo = 0, hi = t->nunits;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->units[mid].die_off == off)
			return mid;
		if (t->units[mid].die_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool has_unit(const struct dl_table *t, Dwarf_Off off)
{
	return unit_index(t, off) >= 0;
}

/* One unit per distinct CU that the ranges name. */
static void make_units(struct dl_table *t)
{
	Dwarf_Off *offs = xcalloc(t->nranges + 1, sizeof(*offs));
	size_t i;

	for (i = 0; i < t->nranges; i++)
		offs[i] = t->ranges[i].cu;
	qsort(offs, t->nranges, sizeof(*offs), cmp_off);
	t->units = xcalloc(t->nranges + 1, sizeof(*t->units));
	for (i = 0; i < t->nranges; i++)
		if (i == 0 || offs[i] != offs[i - 1])
			t->units[t->nunits++].die_off = offs[i];
	free(offs);
	for (i = 0; i < t->nranges; i++)
		t->ranges[i].unit = (unsigned)unit_index(t, t->ranges[i].cu);
}

static void index_aranges(struct dl_table *t)
{
	Dwarf_Arange *ar = NULL;
	Dwarf_Signed n = 0, i;
	Dwarf_Unsigned seg, segsize, len;
	Dwarf_Addr start;
	Dwarf_Off off;

	if (dwarf_get_aranges(t->dbg, &ar, &n, NULL) != DW_DLV_OK)
		return;
	t->ranges = xcalloc((size_t)n + 1, sizeof(*t->ranges));
	for (i = 0; i < n; i++) {
		if (dwarf_get_arange_info_b(ar[i], &seg, &segsize, &start,
					    &len, &off, NULL) == DW_DLV_OK &&
		    len > 0)
			t->ranges[t->nranges++] = (struct dl_range){
				.lo = start, .hi = start + len, .cu = off
			};
		dwarf_dealloc(t->dbg, ar[i], DW_DLA_ARANGE);
	}
	dwarf_dealloc(t->dbg, ar, DW_DLA_LIST);
	make_units(t);
	qsort(t->ranges, t->nranges, sizeof(*t->ranges), cmp_range);
}

static int open_dwarf(struct dl_table *t, const char *path)
{
	Dwarf_Error err = NULL;

	if (dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY,
			    NULL, NULL, &t->dbg, NULL, 0, NULL, &err) !=
	    DW_DLV_OK) {
		md_error("dwarf_init_path(%s): %s", path,
			 err ? dwarf_errmsg(err) : "no DWARF");
		t->dbg = NULL;
		return -MD_E_INPUT;
	}
	index_aranges(t);
	return 0;
}

int dl_table_open(const char *elf_path, const struct es_image *syms,
		  bool memo, struct dl_table **out)
{
	struct dl_table *t;
	char *dbg = NULL, *how = NULL;
	long long t0 = md_now_ns();
	int ret = df_has_debug_info(elf_path);

	*out = NULL;
	if (ret < 0)
		return ret;
	t = xcalloc(1, sizeof(*t));
	t->path = xstrdup(elf_path);
	t->syms = syms;
	if (ret == 1)
		dbg = xstrdup(elf_path);
	else if (df_find(elf_path, NULL, &dbg, &how) != 0)
		dbg = NULL;	/* names from the symbol table only */
	ret = 0;
	if (dbg && memo && (t->memo = dl_memo_open(elf_path, dbg)))
		t->later = xstrdup(dbg);
	else if (dbg)
		ret = open_dwarf(t, dbg);
	free(dbg);
	free(how);
	if (ret) {
		dl_table_free(t);
		return ret;
	}
	if (!t->dbg && !t->later)
		t->rest_read = true;
	t->build_ns = md_now_ns() - t0;
	*out = t;
	return 0;
}

void dl_table_free(struct dl_table *t)
{
	struct dl_str *e, *tmp;
	unsigned i;

	if (!t)
		return;
	HASH_ITER(hh, t->strs, e, tmp) {
		HASH_DEL(t->strs, e);
		free(e->s);
		free(e);
	}
	for (i = 0; i < t->nunits; i++)
		unit_free(&t->units[i]);
	unit_free(&t->rest);
	free(t->units);
	free(t->ranges);
	if (t->dbg)
		dwarf_finish(t->dbg, NULL);
	dl_memo_close(t->memo);
	free(t->later);
	free(t->path);
	free(t);
}

unsigned dl_table_nrows(const struct dl_table *t)
{
	return (unsigned)t->nrows;
}

long long dl_table_build_ns(const struct dl_table *t)
{
	return t->build_ns;
}

/* Index of the last element with key <= addr in a sorted array, or -1. */
#define LAST_LEQ(arr, n, field, addr)                                     \
	({                                                                \
		size_t lo_ = 0, hi_ = (n);                                \
		while (lo_ < hi_) {                                       \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;              \
			if ((arr)[mid_].field <= (addr))                  \
				lo_ = mid_ + 1;                           \
			else                                              \
				hi_ = mid_;                               \
		}                                                         \
		(long)lo_ - 1;                                            \
	})

static const char *unit_func(const struct dl_unit *u, uint64_t addr)
{
	long i = LAST_LEQ(u->funcs, u->nfuncs, lo, addr), stop = i - 8;

	/* Ranges nest only for nested functions (a GNU extension): look a
	 * few back past ranges that end before addr. */
	for (; i >= 0 && i > stop; i--)
		if (addr < u->funcs[i].hi)
			return u->funcs[i].name;
	return NULL;
}

/* Function and line of addr in one unit; true if either is known. */
static bool unit_lookup(const struct dl_unit *u, uint64_t addr,
			struct dl_loc *loc)
{
	long r = LAST_LEQ(u->rows, u->nrows, addr, addr);

	loc->func = unit_func(u, addr);
	loc->file = NULL;
	loc->line = 0;
	if (r >= 0 && u->rows[r].line > 0) {
		loc->file = u->rows[r].file;
		loc->line = u->rows[r].line;
	}
	return loc->func || loc->line;
}

/* The units whose aranges hold addr, read on first use. */
static bool ranges_lookup(struct dl_table *t, uint64_t addr,
			  struct dl_loc *loc)
{
	long i = LAST_LEQ(t->ranges, t->nranges, lo, addr), stop = i - 8;

	/* Ranges of one file do not overlap, except the ones of code that
	 * the linker discarded (relocated to 0): look a few back. */
	for (; i >= 0 && i > stop; i--) {
		struct dl_unit *u;

		if (addr >= t->ranges[i].hi)
			continue;
		u = &t->units[t->ranges[i].unit];
		if (!u->loaded)
			load_unit(t, u);
		if (unit_lookup(u, addr, loc))
			return true;
	}
	return false;
}

/* The DWARF that a memo held back, for an address it did not know; a
 * file that cannot be read leaves the names of the symbol table. */
static void open_later(struct dl_table *t)
{
	long long t0 = md_now_ns();

	if (open_dwarf(t, t->later) != 0)
		t->rest_read = true;
	free(t->later);
	t->later = NULL;
	t->build_ns += md_now_ns() - t0;
}

/* The table fills its units as addresses ask for them: dl_lookup is
 * const for its callers (the answers do not change), not inside. */
int dl_lookup(const struct dl_table *ct, uint64_t addr, struct dl_loc *loc)
{
	struct dl_table *t = (struct dl_table *)ct;
	uint64_t off;
	int ret;

	if (t->memo && dl_memo_find(t->memo, addr, loc, &ret))
		return ret;
	if (t->later)
		open_later(t);
	if (!t->dbg || !ranges_lookup(t, addr, loc)) {
		if (!t->rest_read)
			load_rest(t);
		unit_lookup(&t->rest, addr, loc);
	}
	if (!loc->func && t->syms &&
	    es_addr_to_name(t->syms, addr, &loc->func, &off) != 0)
		loc->func = NULL;
	ret = loc->func || loc->line ? 0 : -MD_E_NOSYM;
	if (t->memo)
		dl_memo_add(t->memo, addr, loc, ret);
	return ret;
}

/* ---- cache ---- */

struct dl_cache *dl_cache_new(bool memo)
{
	struct dl_cache *c = xcalloc(1, sizeof(*c));

	c->memo = memo;
	return c;
}

void dl_cache_free(struct dl_cache *c)
{
	struct dl_centry *e, *tmp;

	if (!c)
		return;
	HASH_ITER(hh, c->entries, e, tmp) {
		HASH_DEL(c->entries, e);
		dl_table_free(e->t);
		free(e->path);
		free(e);
	}
	free(c);
}

int dl_cache_get(struct dl_cache *c, const char *elf_path,
		 const struct es_image *syms, const struct dl_table **t)
{
	struct dl_centry *e;
	struct dl_table *nt;
	int ret;

	/* "[vdso]" (elfsym_maps.c): no file, no lines. */
	if (elf_path[0] != '/')
		return -MD_E_NOSYM;
	HASH_FIND_STR(c->entries, elf_path, e);
	if (!e) {
		ret = dl_table_open(elf_path, syms, c->memo, &nt);
		if (ret)
			return ret;
		e = xmalloc(sizeof(*e));
		e->path = xstrdup(elf_path);
		e->t = nt;
		HASH_ADD_KEYPTR(hh, c->entries, e->path, strlen(e->path), e);
	}
	*t = e->t;
	return 0;
}
