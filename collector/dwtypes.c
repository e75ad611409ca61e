/*
 * dwtypes.c - a DWARF type index per ELF file (libdwarf 20210528 API),
 * (the Open MPI type provider is in dwtypes_provider.c).
 */
#include "dwtypes.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "debugfile.h"
#include "md.h"

#define uthash_malloc(sz) xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#include <uthash.h>

struct dt_member {
	char *name;
	long offset;
};

struct dt_type {
	char *name;
	int size;
	struct dt_member *members;
	unsigned nmembers, cap;
};

/* A named definition: where it is, and its layout once asked for. */
struct dt_entry {
	char *name;
	Dwarf_Off off;
	struct dt_type *type;	/* resolved on first query */
	bool failed;		/* resolution failed: do not retry */
	UT_hash_handle hh;
};

struct dt_index {
	Dwarf_Debug dbg;
	char *path;		/* the file the DWARF is read from */
	char *source;
	struct dt_entry *plain;	/* typedefs and base types */
	struct dt_entry *tags;	/* struct, union and enum tags */
	unsigned ntypes, ncus;
	long long build_ns;
};

static const char *dw_msg(Dwarf_Error err)
{
	return err ? dwarf_errmsg(err) : "no entry";
}

/* ---- building the index: one pass, top-level DIEs of each unit ---- */

static struct dt_entry **table_for(struct dt_index *idx, Dwarf_Half tag)
{
	switch (tag) {
	case DW_TAG_typedef:
	case DW_TAG_base_type:
		return &idx->plain;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		return &idx->tags;
	default:
		return NULL;
	}
}

static void index_die(struct dt_index *idx, Dwarf_Die die)
{
	struct dt_entry **table, *e;
	Dwarf_Half tag;
	Dwarf_Bool decl = 0;
	Dwarf_Off off;
	char *name;

	if (dwarf_tag(die, &tag, NULL) != DW_DLV_OK)
		return;
	table = table_for(idx, tag);
	if (!table || dwarf_diename(die, &name, NULL) != DW_DLV_OK)
		return;
	/* Most units repeat the same header types: the first complete
	 * definition is kept, so a known name costs one hash probe. */
	HASH_FIND_STR(*table, name, e);
	if (e)
		return;
	if (dwarf_hasattr(die, DW_AT_declaration, &decl, NULL) == DW_DLV_OK &&
	    decl)
		return;
	if (dwarf_dieoffset(die, &off, NULL) != DW_DLV_OK)
		return;
	e = xcalloc(1, sizeof(*e));
	e->name = xstrdup(name);
	e->off = off;
	HASH_ADD_KEYPTR(hh, *table, e->name, strlen(e->name), e);
	idx->ntypes++;
}

static int index_cu(struct dt_index *idx)
{
	Dwarf_Die cu = NULL, die = NULL, next;
	Dwarf_Error err = NULL;
	int ret;

	ret = dwarf_siblingof_b(idx->dbg, NULL, true, &cu, &err);
	if (ret != DW_DLV_OK)
		goto fail;
	ret = dwarf_child(cu, &die, &err);
	while (ret == DW_DLV_OK) {
		index_die(idx, die);
		ret = dwarf_siblingof_b(idx->dbg, die, true, &next, &err);
		dwarf_dealloc_die(die);
		die = next;
	}
	dwarf_dealloc_die(cu);
	if (ret == DW_DLV_ERROR)
		goto fail;
	return 0;
fail:
	if (ret == DW_DLV_NO_ENTRY)
		return 0;
	md_error("%s: reading DWARF unit %u: %s", idx->path, idx->ncus,
		 dw_msg(err));
	return -MD_E_INPUT;
}

static int build_index(struct dt_index *idx)
{
	Dwarf_Unsigned hlen, typeoff, next_off;
	Dwarf_Half version, asize, lsize, esize, cutype;
	Dwarf_Off abbrev;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;
	int ret;

	for (;;) {
		ret = dwarf_next_cu_header_d(idx->dbg, true, &hlen, &version,
					     &abbrev, &asize, &lsize, &esize,
					     &sig, &typeoff, &next_off,
					     &cutype, &err);
		if (ret == DW_DLV_NO_ENTRY)
			return 0;
		if (ret != DW_DLV_OK) {
			md_error("%s: dwarf_next_cu_header_d after unit %u: %s",
				 idx->path, idx->ncus, dw_msg(err));
			return -MD_E_INPUT;
		}
		ret = index_cu(idx);
		if (ret)
			return ret;
		idx->ncus++;
	}
}

static int open_dwarf(const char *path, Dwarf_Debug *dbg)
{
	Dwarf_Error err = NULL;
	int ret;

	/* No true-path buffer: libdwarf must not follow .gnu_debuglink on
	 * its own; debugfile.c does that and says where it looked. */
	ret = dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY,
			      NULL, NULL, dbg, NULL, 0, NULL, &err);
	if (ret == DW_DLV_OK)
		return 0;
	md_error("dwarf_init_path(%s): %s", path, dw_msg(err));
	return -MD_E_INPUT;
}

static int index_file(const char *path, const char *source,
		      struct dt_index **out)
{
	struct dt_index *idx = xcalloc(1, sizeof(*idx));
	long long t0 = md_now_ns();
	int ret;

	idx->path = xstrdup(path);
	idx->source = xstrdup(source);
	ret = open_dwarf(path, &idx->dbg);
	if (!ret)
		ret = build_index(idx);
	if (ret) {
		dt_index_free(idx);
		return ret;
	}
	idx->build_ns = md_now_ns() - t0;
	*out = idx;
	return 0;
}

int dt_index_open(const char *elf_path, struct dt_index **out,
		  const char **source)
{
	char *dbg_path = NULL, *how = NULL, *own = NULL;
	int ret;

	*out = NULL;
	ret = df_has_debug_info(elf_path);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		own = xasprintf("DWARF of %s", elf_path);
		ret = index_file(elf_path, own, out);
	} else if (df_find(elf_path, NULL, &dbg_path, &how) == 0) {
		ret = index_file(dbg_path, how, out);
	} else {
		ret = -MD_E_NOTYPES;
	}
	free(own);
	free(dbg_path);
	free(how);
	if (!ret && source)
		*source = (*out)->source;
	return ret;
}

static void free_table(struct dt_entry **table)
{
	struct dt_entry *e, *tmp;
	unsigned i;

	HASH_ITER(hh, *table, e, tmp) {
		HASH_DEL(*table, e);
		if (e->type) {
			for (i = 0; i < e->type->nmembers; i++)
				free(e->type->members[i].name);
			free(e->type->members);
			free(e->type->name);
			free(e->type);
		}
		free(e->name);
		free(e);
	}
}

void dt_index_free(struct dt_index *idx)
{
	if (!idx)
		return;
	free_table(&idx->plain);
	free_table(&idx->tags);
	if (idx->dbg)
		dwarf_finish(idx->dbg, NULL);
	free(idx->path);
	free(idx->source);
	free(idx);
}

const char *dt_index_source(const struct dt_index *idx)
{
	return idx->source;
}

void dt_index_set_source(struct dt_index *idx, const char *source)
{
	free(idx->source);
	idx->source = xstrdup(source);
}

unsigned dt_index_ntypes(const struct dt_index *idx)
{
	return idx->ntypes;
}

long long dt_index_build_ns(const struct dt_index *idx)
{
	return idx->build_ns;
}

unsigned dt_index_ncus(const struct dt_index *idx)
{
	return idx->ncus;
}

/* ---- resolving a type on first query ---- */

static int die_at(struct dt_index *idx, Dwarf_Off off, Dwarf_Die *die)
{
	Dwarf_Error err = NULL;

	if (dwarf_offdie_b(idx->dbg, off, true, die, &err) == DW_DLV_OK)
		return 0;
	md_warn("%s: no DWARF entry at offset %#llx: %s", idx->path,
		(unsigned long long)off, dw_msg(err));
	return -MD_E_NOTYPES;
}

/* The DIE that DW_AT_type of die refers to. */
static int type_of(struct dt_index *idx, Dwarf_Die die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Off off;
	int ret;

	if (dwarf_attr(die, DW_AT_type, &attr, NULL) != DW_DLV_OK)
		return -MD_E_NOTYPES;	/* e.g. a typedef of void */
	ret = dwarf_global_formref(attr, &off, NULL);
	dwarf_dealloc_attribute(attr);
	if (ret != DW_DLV_OK)
		return -MD_E_NOTYPES;
	return die_at(idx, off, out);
}

static bool is_decl(Dwarf_Die die)
{
	Dwarf_Bool decl = 0;

	return dwarf_hasattr(die, DW_AT_declaration, &decl, NULL) ==
		       DW_DLV_OK && decl;
}

/* A declared-only struct replaced by the complete one of the same tag. */
static int complete(struct dt_index *idx, Dwarf_Die *die)
{
	struct dt_entry *e;
	char *name;

	if (!is_decl(*die))
		return 0;
	if (dwarf_diename(*die, &name, NULL) != DW_DLV_OK)
		return -MD_E_NOTYPES;
	HASH_FIND_STR(idx->tags, name, e);
	if (!e)
		return -MD_E_NOTYPES;
	dwarf_dealloc_die(*die);
	return die_at(idx, e->off, die);
}

/* Follow typedef, const and volatile to the type underneath, completed.
 * Consumes *die (it is replaced). */
static int peel(struct dt_index *idx, Dwarf_Die *die)
{
	Dwarf_Half tag;
	Dwarf_Die next;
	int depth, ret;

	for (depth = 0; depth < 32; depth++) {
		if (dwarf_tag(*die, &tag, NULL) != DW_DLV_OK)
			return -MD_E_NOTYPES;
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return complete(idx, die);
		ret = type_of(idx, *die, &next);
		if (ret)
			return ret;
		dwarf_dealloc_die(*die);
		*die = next;
	}
	return -MD_E_NOTYPES;
}

static long member_offset(Dwarf_Die die)
{
	Dwarf_Attribute attr;
	Dwarf_Unsigned v;
	int ret;

	/* Union members have no location: they all start at 0. */
	if (dwarf_attr(die, DW_AT_data_member_location, &attr, NULL) !=
	    DW_DLV_OK)
		return 0;
	ret = dwarf_formudata(attr, &v, NULL);
	dwarf_dealloc_attribute(attr);
	/* A location expression (DWARF 2 style) is not a constant; no
	 * compiler we meet emits one for C structs. */
	return ret == DW_DLV_OK ? (long)v : -1;
}

static void add_member(struct dt_type *t, const char *name, long off)
{
	if (t->nmembers == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->members = xrealloc(t->members,
				      t->cap * sizeof(*t->members));
	}
	t->members[t->nmembers].name = xstrdup(name);
	t->members[t->nmembers].offset = off;
	t->nmembers++;
}

static void read_members(struct dt_index *idx, Dwarf_Die parent, long base,
			 struct dt_type *t, int depth);

/* An anonymous struct/union member: its members are the parent's. */
static void anon_member(struct dt_index *idx, Dwarf_Die die, long off,
			struct dt_type *t, int depth)
{
	Dwarf_Die inner;
	Dwarf_Half tag;

	if (depth > 8 || type_of(idx, die, &inner) != 0)
		return;
	if (peel(idx, &inner) == 0 && dwarf_tag(inner, &tag, NULL) ==
	    DW_DLV_OK && (tag == DW_TAG_structure_type ||
			  tag == DW_TAG_union_type))
		read_members(idx, inner, off, t, depth + 1);
	dwarf_dealloc_die(inner);
}

static void read_members(struct dt_index *idx, Dwarf_Die parent, long base,
			 struct dt_type *t, int depth)
{
	Dwarf_Die die = NULL, next;
	Dwarf_Half tag;
	char *name;
	long off;
	int ret = dwarf_child(parent, &die, NULL);

	while (ret == DW_DLV_OK) {
		if (dwarf_tag(die, &tag, NULL) == DW_DLV_OK &&
		    tag == DW_TAG_member) {
			off = member_offset(die);
			if (off >= 0 && dwarf_diename(die, &name, NULL) ==
			    DW_DLV_OK)
				add_member(t, name, base + off);
			else if (off >= 0)
				anon_member(idx, die, base + off, t, depth);
		}
		ret = dwarf_siblingof_b(idx->dbg, die, true, &next, NULL);
		dwarf_dealloc_die(die);
		die = next;
	}
}

static int resolve(struct dt_index *idx, struct dt_entry *e)
{
	Dwarf_Unsigned size;
	Dwarf_Half tag;
	Dwarf_Die die;
	struct dt_type *t;
	int ret = die_at(idx, e->off, &die);

	if (ret)
		return ret;
	ret = peel(idx, &die);
	if (ret) {
		dwarf_dealloc_die(die);
		return ret;
	}
	t = xcalloc(1, sizeof(*t));
	t->name = xstrdup(e->name);
	t->size = dwarf_bytesize(die, &size, NULL) == DW_DLV_OK &&
				  size <= INT_MAX ? (int)size : -MD_E_NOTYPES;
	if (dwarf_tag(die, &tag, NULL) == DW_DLV_OK &&
	    (tag == DW_TAG_structure_type || tag == DW_TAG_union_type))
		read_members(idx, die, 0, t, 0);
	dwarf_dealloc_die(die);
	e->type = t;
	return 0;
}

int dt_find_type(struct dt_index *idx, const char *name,
		 const struct dt_type **type)
{
	struct dt_entry *e = NULL;

	*type = NULL;
	if (strncmp(name, "struct ", 7) == 0)
		HASH_FIND_STR(idx->tags, name + 7, e);
	else if (strncmp(name, "union ", 6) == 0)
		HASH_FIND_STR(idx->tags, name + 6, e);
	else {
		HASH_FIND_STR(idx->plain, name, e);
		if (!e)
			HASH_FIND_STR(idx->tags, name, e);
	}
	if (!e || e->failed)
		return -MD_E_NOTYPES;
	if (!e->type && resolve(idx, e) != 0) {
		e->failed = true;
		return -MD_E_NOTYPES;
	}
	*type = e->type;
	return 0;
}

const char *dt_type_name(const struct dt_type *type)
{
	return type->name;
}

int dt_sizeof(const struct dt_type *type)
{
	return type->size;
}

int dt_field_offset(const struct dt_type *type, const char *field)
{
	unsigned i;

	for (i = 0; i < type->nmembers; i++)
		if (strcmp(type->members[i].name, field) == 0)
			return (int)type->members[i].offset;
	return -MD_E_NOSYM;
}
