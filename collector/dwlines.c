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

struct dl_table {
	char *path;
	const struct es_image *syms;
	struct dl_str *strs;
	struct dl_row *rows;
	size_t nrows, rows_cap;
	struct dl_func *funcs;
	size_t nfuncs, funcs_cap;
	long long build_ns;
};

struct dl_centry {
	char *path;
	struct dl_table *t;
	UT_hash_handle hh;
};

struct dl_cache {
	struct dl_centry *entries;
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

static void add_row(struct dl_table *t, uint64_t addr, const char *file,
		    int line)
{
	if (t->nrows == t->rows_cap) {
		t->rows_cap = t->rows_cap ? 2 * t->rows_cap : 1024;
		t->rows = xrealloc(t->rows, t->rows_cap * sizeof(*t->rows));
	}
	t->rows[t->nrows].addr = addr;
	t->rows[t->nrows].file = file;
	t->rows[t->nrows].line = line;
	t->rows[t->nrows].order = (unsigned)t->nrows;
	t->nrows++;
}

static void add_func(struct dl_table *t, uint64_t lo, uint64_t hi,
		     const char *name)
{
	if (t->nfuncs == t->funcs_cap) {
		t->funcs_cap = t->funcs_cap ? 2 * t->funcs_cap : 256;
		t->funcs = xrealloc(t->funcs,
				    t->funcs_cap * sizeof(*t->funcs));
	}
	t->funcs[t->nfuncs].lo = lo;
	t->funcs[t->nfuncs].hi = hi;
	t->funcs[t->nfuncs].name = intern(t, name);
	t->nfuncs++;
}

/* ---- reading ---- */

static void read_line(struct dl_table *t, Dwarf_Debug dbg, Dwarf_Line l)
{
	Dwarf_Addr addr;
	Dwarf_Unsigned lineno = 0;
	Dwarf_Bool end = 0;
	char *file = NULL;

	if (dwarf_lineaddr(l, &addr, NULL) != DW_DLV_OK)
		return;
	dwarf_lineendsequence(l, &end, NULL);
	if (end) {
		add_row(t, addr, NULL, 0);
		return;
	}
	dwarf_lineno(l, &lineno, NULL);
	if (dwarf_linesrc(l, &file, NULL) != DW_DLV_OK)
		file = NULL;
	add_row(t, addr, file ? intern(t, file) : NULL, (int)lineno);
	if (file)
		dwarf_dealloc(dbg, file, DW_DLA_STRING);
}

static void read_lines(struct dl_table *t, Dwarf_Debug dbg, Dwarf_Die cu)
{
	Dwarf_Unsigned version;
	Dwarf_Small count;
	Dwarf_Line_Context ctx;
	Dwarf_Line *lines;
	Dwarf_Signed n, i;

	if (dwarf_srclines_b(cu, &version, &count, &ctx, NULL) != DW_DLV_OK)
		return;
	if (dwarf_srclines_from_linecontext(ctx, &lines, &n, NULL) ==
	    DW_DLV_OK)
		for (i = 0; i < n; i++)
			read_line(t, dbg, lines[i]);
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

static void read_func(struct dl_table *t, Dwarf_Debug dbg, Dwarf_Die die)
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
	if (hi > lo && func_name(dbg, die, &name))
		add_func(t, lo, hi, name);
}

static void read_cu(struct dl_table *t, Dwarf_Debug dbg)
{
	Dwarf_Die cu = NULL, die = NULL, next;
	Dwarf_Half tag;
	int ret;

	if (dwarf_siblingof_b(dbg, NULL, true, &cu, NULL) != DW_DLV_OK)
		return;
	read_lines(t, dbg, cu);
	ret = dwarf_child(cu, &die, NULL);
	while (ret == DW_DLV_OK) {
		if (dwarf_tag(die, &tag, NULL) == DW_DLV_OK &&
		    tag == DW_TAG_subprogram)
			read_func(t, dbg, die);
		ret = dwarf_siblingof_b(dbg, die, true, &next, NULL);
		dwarf_dealloc_die(die);
		die = next;
	}
	dwarf_dealloc_die(cu);
}

static int read_dwarf(struct dl_table *t, const char *path)
{
	Dwarf_Unsigned hlen, typeoff, next_off;
	Dwarf_Half version, asize, lsize, esize, cutype;
	Dwarf_Off abbrev;
	Dwarf_Sig8 sig;
	Dwarf_Debug dbg;
	Dwarf_Error err = NULL;
	int ret;

	if (dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY,
			    NULL, NULL, &dbg, NULL, 0, NULL, &err) !=
	    DW_DLV_OK) {
		md_error("dwarf_init_path(%s): %s", path,
			 err ? dwarf_errmsg(err) : "no DWARF");
		return -MD_E_INPUT;
	}
	while ((ret = dwarf_next_cu_header_d(dbg, true, &hlen, &version,
					     &abbrev, &asize, &lsize, &esize,
					     &sig, &typeoff, &next_off,
					     &cutype, &err)) == DW_DLV_OK)
		read_cu(t, dbg);
	if (ret == DW_DLV_ERROR)
		md_warn("%s: line tables read in part: %s", path,
			dwarf_errmsg(err));
	dwarf_finish(dbg, NULL);
	return 0;
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

int dl_table_open(const char *elf_path, const struct es_image *syms,
		  struct dl_table **out)
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
		ret = read_dwarf(t, elf_path);
	else if (df_find(elf_path, NULL, &dbg, &how) == 0)
		ret = read_dwarf(t, dbg);
	else
		ret = 0;	/* names from the symbol table only */
	free(dbg);
	free(how);
	if (ret) {
		dl_table_free(t);
		return ret;
	}
	if (t->nrows)
		qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_row);
	if (t->nfuncs)
		qsort(t->funcs, t->nfuncs, sizeof(*t->funcs), cmp_func);
	t->build_ns = md_now_ns() - t0;
	*out = t;
	return 0;
}

void dl_table_free(struct dl_table *t)
{
	struct dl_str *e, *tmp;

	if (!t)
		return;
	HASH_ITER(hh, t->strs, e, tmp) {
		HASH_DEL(t->strs, e);
		free(e->s);
		free(e);
	}
	free(t->rows);
	free(t->funcs);
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

static const char *dwarf_func(const struct dl_table *t, uint64_t addr)
{
	long i = LAST_LEQ(t->funcs, t->nfuncs, lo, addr), stop = i - 8;

	/* Ranges nest only for nested functions (a GNU extension): look a
	 * few back past ranges that end before addr. */
	for (; i >= 0 && i > stop; i--)
		if (addr < t->funcs[i].hi)
			return t->funcs[i].name;
	return NULL;
}

int dl_lookup(const struct dl_table *t, uint64_t addr, struct dl_loc *loc)
{
	long r = LAST_LEQ(t->rows, t->nrows, addr, addr);
	uint64_t off;

	loc->func = dwarf_func(t, addr);
	loc->file = NULL;
	loc->line = 0;
	if (r >= 0 && t->rows[r].line > 0) {
		loc->file = t->rows[r].file;
		loc->line = t->rows[r].line;
	}
	if (!loc->func && t->syms &&
	    es_addr_to_name(t->syms, addr, &loc->func, &off) != 0)
		loc->func = NULL;
	return loc->func || loc->line ? 0 : -MD_E_NOSYM;
}

/* ---- cache ---- */

struct dl_cache *dl_cache_new(void)
{
	return xcalloc(1, sizeof(struct dl_cache));
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

	HASH_FIND_STR(c->entries, elf_path, e);
	if (!e) {
		ret = dl_table_open(elf_path, syms, &nt);
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
